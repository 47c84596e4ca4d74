"""Run pages Hugo does not render again: a rebuild renders the run pages whose inputs changed, and takes the
others from the site it replaces.

A campaign's site is mostly run pages (one per run and language: nearly all of its pages),
and a rebuild after one new run changes a handful of them (the new run and the runs of its condition). Hugo
renders only part of a site with *segments* (``--renderSegments``, Hugo ≥ 0.124: it still reads every page
and data file, but writes only the pages of the named segments). So a build:

1. fingerprints every run page: the sha256 of its own generated files (``assets/runs/<report>/<anchor>.json``,
   ``content/reports/<report>/runs/<anchor>.<lang>.md`` and its series download ``static/csv/…/<anchor>.csv``), of its condition's shared data (the file its data
   names, ``assets/runs/<report>/conditions/<name>.json``: render/run_pages.py) and of the *context* every run
   page reads:
   Hugo itself (its binary), the configuration Hugo is given (``hugo.json``), every template and word
   (each mount of ``layouts``, ``i18n``, ``archetypes``, ``assets``), every other content page (paths and
   front matter: the titles and addresses of the pages a run page links; no run page shows another page's
   text, so prose edited renders no run page), the data files but the run pages' own and the
   reports', of each report only what a run page shows of it (``RUN_PAGE_REPORT_KEYS``: its table of
   contents, title, PDF links and footer), and kansoku's code version;
2. compares them with the fingerprints of the pages in the current output (``MANIFEST`` beside it, written
   only after a swap, removed before one: a manifest never describes a site it was not written for); a page
   whose fingerprint is unchanged and whose files are all in the output is *reused*;
3. Hugo renders every page but the reused run pages (segment ``rest``: every page but run pages; segment
   ``runs``: the run pages to render) into the fresh directory, and the reused pages' files are hard-linked
   from the current output into a directory of their own meanwhile, then moved into Hugo's (Hugo never
   writes into a site after its build; the swap replaces directories, never files).

The other pages of a report (its cover, chapters, data-sources parts, appendix) are taken from the current
output the same way while their fingerprint is unchanged (``_report_fingerprints``: the context above, the
report's whole data, its generated pages and data-sources assets, its run pages' front matter): a new run
changes the data of the reports that show it, and Hugo renders those reports' pages alone (on the example,
one report of six; segment ``rest`` then leaves out ``/reports/<id>`` and everything under it, and the files
under ``<lang>/reports/<id>/`` but its run pages are hard-linked). A report whose pages are rendered still takes
its data-sources parts but the first from the current output while their fingerprint is unchanged
(``_part_fingerprints``). The site's own pages (home, the reports' list, trends) are always rendered.

The result is the site a build from scratch writes, byte for byte (``tests/test_build_incremental.py``
builds both and compares every file); the fresh directory is still swapped in only when complete.
A run page template that starts reading another key of its report must add it to
``RUN_PAGE_REPORT_KEYS`` (that test fails otherwise when the key changes with a new run).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from kansoku.render.linking import is_listed, link_all, make_folder
from kansoku.render.page_data import SOURCES_PARTS_DIR, sources_part_id, sources_part_source
from kansoku.render.run_pages import generated_files, run_csv, run_page
from kansoku.resources import code_version

MANIFEST_SUFFIX = ".pages.json"  # .<out>.pages.json beside the output (not a .<out>.*-* scratch name)
# What a run page shows of its report (layouts/runs/single.html, report-toc.html, baseof.html's footer)
RUN_PAGE_REPORT_KEYS = ("id", "title", "path", "pages", "pdf", "copyright", "license", "transcribed")
# What a data-sources part but the first shows of its report (layouts/_default/sources.html): a run page's, whether
# its raw files are published and how many parts there are (the first part also shows the report's summary)
SOURCES_PART_REPORT_KEYS = RUN_PAGE_REPORT_KEYS + ("publish_raw", "sources_part_count", "sources_paths")
SAFE = re.compile(r"^[A-Za-z0-9_.-]+$")  # report ids and anchors that need no escaping in a Hugo glob
TEMPLATE_TARGETS = ("layouts", "i18n", "archetypes", "assets")
COND = re.compile(rb'"cond":"([A-Za-z0-9_.-]+)"')  # the name of a run page's condition file, in its data


def manifest_path(out: Path) -> Path:
    return out.parent / f".{out.name}{MANIFEST_SUFFIX}"


@dataclass
class RunPagePlan:
    out: Path
    fingerprints: dict[str, str] = field(default_factory=dict)  # "<report>/<anchor>" -> fingerprint
    reuse: set[str] = field(default_factory=set)                # taken from the current output
    render: set[str] = field(default_factory=set)               # rendered by Hugo
    langs: tuple[str, ...] = ()
    reports: dict[str, str] = field(default_factory=dict)       # report id -> fingerprint of its other pages
    reports_reuse: set[str] = field(default_factory=set)        # reports whose other pages are taken as they are
    parts: dict[str, str] = field(default_factory=dict)         # "<report>/<page>-<k>" -> fingerprint (data-sources
                                                                # parts 2..: _part_fingerprints)
    parts_reuse: set[str] = field(default_factory=set)          # ... taken from the current output
    runs_linked: set[str] = field(default_factory=set)          # reports whose pages look their run pages up
    csvs: set[str] = field(default_factory=set)                 # run pages with a series download (run_csv)
    batches: list[RenderBatch] = field(default_factory=list)    # run pages rendered after the rest (:func:`batch`)

    @property
    def batched(self) -> set[str]:
        """The run pages Hugo renders in batches, after the run that renders the rest of the site."""
        return {k for b in self.batches for k in b.keys}

    def hidden(self) -> list[str]:
        """The reports whose reused or batched run pages the run that renders the rest of the site neither reads
        nor writes (:func:`mounts`), nor copies their downloads: the build publishes those (:func:`link_reused`)."""
        batched = self.batched
        hide = {k.split("/")[0] for k in batched}
        if self.reuse and len(self.render - batched) <= HIDE_MAX:
            hide |= {k.split("/")[0] for k in self.reuse} - (self.runs_linked - self.reports_reuse)
        return sorted(hide)

    def segments(self) -> dict | None:
        """Hugo's segments config for this build, or None: render everything (nothing to reuse)."""
        if not self.reuse and not self.reports_reuse and not self.parts_reuse:
            return None
        excludes = [{"path": "/reports/*/runs/*"}]
        for rep in sorted(self.reports_reuse):  # a report's cover and every page under it (its run pages: above)
            excludes += [{"path": f"/reports/{rep}"}, {"path": f"/reports/{rep}/**"}]
        excludes += [{"path": "/" + sources_part_source(*part.split("/"))} for part in sorted(self.parts_reuse)]
        segs: dict = {"rest": {"includes": [{"path": "**"}], "excludes": excludes}}
        shown = self.render - self.batched
        if shown:
            segs["runs"] = _runs_segment(shown)
        return segs


@dataclass
class RenderBatch:
    """Run pages one Hugo run renders after the run that renders the rest of the site: ``keys``, whose anchors
    (``run-`` and hexadecimal digits: report/provenance.py run_anchor) start with one of ``prefixes``."""

    keys: set[str]
    prefixes: list[str]

    def mounts(self, gen: Path, given: list[dict]) -> list[dict]:
        """``given`` (hugo.json's mounts) but that the generated content holds no run page outside the batch's
        prefixes and no static file is copied (the build publishes the downloads: :func:`link_reused`)."""
        src = str((gen / "content").resolve())
        out: list[dict] = []
        for m in given:
            if m.get("target") == "static":
                out.append({**m, "files": ["! **"]})
            elif m.get("target") == "content" and m.get("source") == src and "files" not in m:
                out.append({**m, "files": ["! reports/*/runs/*"]})
                out.append({**m, "files": [f"reports/*/runs/{BATCH_PREFIX}{_either(self.prefixes)}*"]})
            else:
                out.append(m)
        return out

    def segments(self) -> dict:
        return {"runs": _runs_segment(self.keys)}


def _runs_segment(keys: set[str]) -> dict:
    paths = ",".join(f"/reports/{k.split('/')[0]}/runs/{k.split('/')[1]}" for k in sorted(keys))
    return {"includes": [{"path": "{" + paths + "}"}]}


# A build rendering more run pages than this (of each language) renders them in batches of about this many,
# one Hugo run each, after the run that renders the rest of the site: Hugo holds every page it reads in memory
# (its heap, and its time under the memory it is given, grow with the pages), so a run over every run page of a
# large campaign would need memory in proportion to its runs (docs/build-performance.md, "Hugo's memory")
RENDER_BATCH = 10_000
BATCH_PREFIX = "run-"  # a batch is the anchors starting with some of the 256 two-digit prefixes after it
_BUCKET = re.compile(r"^run-([0-9a-f]{2})[0-9a-f]*$")


def batch(res: RunPagePlan) -> None:
    """Split the run pages to render into batches of about RENDER_BATCH when there are more: those of reports
    whose other pages do not look their run pages up (``runs_linked``: those are read by the run that renders
    the rest of the site, and rendered by it), cut along the first two digits of their anchors."""
    eligible = {k for k in res.render if k.split("/")[0] not in res.runs_linked}
    by_report: dict[str, list[str]] = {}
    for k in eligible:
        by_report.setdefault(k.split("/")[0], []).append(k)
    for rep, keys in by_report.items():  # a report's run pages are batched all or none
        if not SAFE.match(rep) or not all(_BUCKET.match(k.split("/")[1]) for k in keys):
            eligible -= set(keys)
    if len(eligible) <= RENDER_BATCH:
        return
    buckets: dict[str, set[str]] = {}
    for k in eligible:
        buckets.setdefault(_BUCKET.match(k.split("/")[1]).group(1), set()).add(k)
    n = math.ceil(len(eligible) / RENDER_BATCH)
    cur, so_far = RenderBatch(set(), []), 0
    for prefix in sorted(buckets):
        cur.keys |= buckets[prefix]
        cur.prefixes.append(prefix)
        so_far += len(buckets[prefix])
        if len(res.batches) < n - 1 and so_far >= len(eligible) * (len(res.batches) + 1) / n:
            res.batches.append(cur)
            cur = RenderBatch(set(), [])
    if cur.keys:
        res.batches.append(cur)


def page_files(key: str, langs: tuple[str, ...]) -> list[str]:
    rep, anchor = key.split("/")
    return [run_page(rep, anchor, lang) for lang in langs]


def front_matter(data: bytes) -> bytes:
    """The front matter of a content page (YAML ``---`` or TOML ``+++``; a JSON one: the whole page), without
    its text: what another page can read of it (title, address, parameters)."""
    for fence in (b"---", b"+++"):
        if data.startswith(fence):
            end = data.find(b"\n" + fence, len(fence))
            return data if end < 0 else data[:end + 1 + len(fence)]
    return data if data.lstrip().startswith(b"{") else b""


def _hash_tree(h, top: Path, skip=None, read=lambda data: data, skip_folders: tuple[str, ...] = ()) -> None:
    """Every file under ``top`` (but those ``skip`` names, and those under its folders ``skip_folders``, which are
    not walked: a report's run pages, thousands of files) into ``h``: its path and ``read`` of its bytes."""
    if not top.exists():
        h.update(b"-\0")
        return
    if top.is_file():
        h.update(top.name.encode() + b"\0" + read(top.read_bytes()) + b"\0")
        return
    rels = []  # (os.walk and strings: the generated content is ~2 files a run)
    for root, dirs, files in os.walk(top):
        sub = os.path.relpath(root, top)
        if sub == ".":
            dirs[:] = [d for d in dirs if d not in skip_folders]
        for name in files:
            rel = name if sub == "." else f"{sub}/{name}"
            if (skip is None or not skip(rel)) and os.path.isfile(os.path.join(root, name)):
                rels.append(rel)
    for rel in sorted(rels, key=lambda r: r.split("/")):
        with open(os.path.join(top, rel), "rb") as f:
            h.update(rel.encode() + b"\0" + read(f.read()) + b"\0")


def _reports_data(folder: Path) -> dict[str, tuple[bytes, dict]]:
    """Each report's page data under ``folder`` (``data/reports``): report id -> its bytes and its JSON, read once
    by the plan for every fingerprint made of it."""
    if not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.glob("*.json")):
        text = p.read_bytes()
        out[p.stem] = (text, json.loads(text))
    return out


def _context(gen: Path, hugo_json: Path, hugo_bin: str, reports: dict[str, tuple[bytes, dict]] | None = None) -> str:
    """The sha256 of everything a run page reads besides its own files (see the module's docstring).
    ``reports``: the reports' page data (:func:`_reports_data`), when the caller has read it."""
    h = hashlib.sha256()
    st = Path(hugo_bin).resolve().stat()
    h.update(f"{Path(hugo_bin).resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{code_version()}\0".encode())
    text = hugo_json.read_bytes()
    h.update(text + b"\0")
    cfg = json.loads(text)
    # the run pages' own files, and the data-sources page's parts: no run page reads them (a run page links
    # to its part by the anchor in its own data); a 1,001st run adds a part and would render every run page
    run_md = re.compile(rf"^reports/[^/]+/(?:runs|{re.escape(SOURCES_PARTS_DIR)})/[^/]+$")
    for m in cfg.get("module", {}).get("mounts", []):
        src, target = Path(m["source"]), m["target"]
        h.update(f"mount\0{src}\0{target}\0".encode())
        if target in TEMPLATE_TARGETS:
            # the run pages' data, and the data-sources page's parts (no run page reads them)
            own = target == "assets" and src.resolve() == (gen / "assets").resolve()
            _hash_tree(h, src, skip_folders=("runs", "sources") if own else ())
        elif target == "content":  # a run page reads other pages' titles and addresses, never their text
            _hash_tree(h, src, skip=lambda rel: bool(run_md.match(rel)), read=front_matter)
        elif target == "data":
            _hash_tree(h, src, skip_folders=("runs", "reports"))
            mounted = reports if reports is not None and src.resolve() == (gen / "data").resolve() \
                else _reports_data(src / "reports")
            for rep, (_, d) in mounted.items():
                sub = {k: d.get(k) for k in RUN_PAGE_REPORT_KEYS}
                h.update(f"{rep}.json".encode() + b"\0" + json.dumps(sub, sort_keys=True).encode() + b"\0")
    return h.hexdigest()


def plan(gen: Path, out: Path, hugo_json: Path, hugo_bin: str, langs: tuple[str, ...],
         keys: dict[str, dict[str, str]] | None = None) -> RunPagePlan:
    """Fingerprint every run page under ``gen`` and decide which ones the current output ``out`` can give.
    ``keys``: what the build wrote of the run pages (render/hugo.py run_page_keys): a page whose every file was
    made from a key is fingerprinted by those keys (its files are what the key makes: report/cache.py), not by
    reading them; any other page, by its files' bytes."""
    made = (keys or {}).get("files") or {}
    conds = (keys or {}).get("conds") or {}
    res = RunPagePlan(out=out, langs=tuple(langs))
    runs = gen / "assets" / "runs"
    if not runs.is_dir():
        return res
    reports = _reports_data(gen / "data" / "reports")  # (read once: the context and both fingerprints use it)
    context = _context(gen, hugo_json, hugo_bin, reports)
    own_runs: dict = {}  # report -> the sha256 of its run pages' front matter (which pages exist)
    # a condition's file (render/run_pages.py condition_json): read and hashed once, its digest in each of its
    # pages' fingerprints (not its bytes hashed again for each of its pages)
    shared: dict[str, bytes] = {}
    # (strings and os: two files read for each of thousands of pages, a pathlib object each cost more)
    runs_s, pages_s = os.fspath(runs), os.path.join(gen, "content", "reports")
    for rep in sorted(os.listdir(runs_s)):
        folder = os.path.join(runs_s, rep)
        if not os.path.isdir(folder):
            continue
        for name in sorted(n for n in os.listdir(folder) if n.endswith(".json")):
            anchor = name[:-5]
            if _by_keys(res, context, rep, anchor, made, conds, own_runs, langs, shared, gen):
                continue
            text = _read(os.path.join(folder, name))
            if text is None:
                continue
            h = hashlib.sha256(context.encode() + b"\0" + text)
            cond = COND.search(text)
            if cond is not None:
                path = os.path.join(folder, "conditions", cond.group(1).decode() + ".json")
                if path not in shared:
                    got = _read(path)
                    shared[path] = hashlib.sha256(got).digest() if got is not None else b"-"
                h.update(b"\0" + shared[path])
            csv = _read(os.path.join(gen, "static", run_csv(rep, anchor)))  # its download, published with it
            h.update(b"\0" + (hashlib.sha256(csv).digest() if csv is not None else b"-"))
            if csv is not None:
                res.csvs.add(f"{rep}/{anchor}")
            mine = own_runs.setdefault(rep, hashlib.sha256())
            mine.update(anchor.encode() + b"\0")
            for lang in langs:
                text = _read(os.path.join(pages_s, rep, "runs", f"{anchor}.{lang}.md"))
                text = b"-" if text is None else text
                h.update(b"\0" + text)
                mine.update(text + b"\0")
            res.fingerprints[f"{rep}/{anchor}"] = h.hexdigest()
    mounted = json.loads(hugo_json.read_bytes()).get("module", {}).get("mounts", [])
    prose = [Path(m["source"]) for m in mounted if m["target"] == "content"]
    res.reports = _report_fingerprints(gen, context, own_runs, res.runs_linked, prose, reports)
    try:
        old = json.loads(manifest_path(out).read_text(encoding="utf-8"))
        if old.get("out") != str(out.resolve()):
            old = {}
    except (OSError, ValueError):
        old = {}
    before = old.get("pages") or {}
    reports_before = old.get("reports") or {}
    for rep, fp in res.reports.items():
        if reports_before.get(rep) == fp and SAFE.match(rep) and all(
                (out / lang / "reports" / rep / "index.html").is_file() for lang in res.langs):
            res.reports_reuse.add(rep)
    res.parts = _part_fingerprints(gen, context, reports)
    parts_before = old.get("parts") or {}
    for part, fp in res.parts.items():
        if (part.split("/")[0] not in res.reports_reuse and parts_before.get(part) == fp
                and all(SAFE.match(x) for x in part.split("/"))
                and all((out / lang / "reports" / part / "index.html").is_file() for lang in res.langs)):
            res.parts_reuse.add(part)
    out_s = os.fspath(out)
    listed: dict[str, set[str] | None] = {}  # (a run page's files are in a few folders: each listed once)
    for key, fp in res.fingerprints.items():
        rep, anchor = key.split("/")
        usable = (before.get(key) == fp and SAFE.match(rep) and SAFE.match(anchor)
                  and all(is_listed(out_s, f, listed) for f in page_files(key, res.langs))
                  and (key not in res.csvs or is_listed(out_s, run_csv(rep, anchor), listed)))
        (res.reuse if usable else res.render).add(key)
    if any(not (SAFE.match(k.split("/")[0]) and SAFE.match(k.split("/")[1])) for k in res.render):
        res.render |= res.reuse  # a path Hugo's glob cannot name as it is: render everything
        res.reuse = set()
        res.reports_reuse = set()
        res.parts_reuse = set()
    batch(res)
    return res


def _by_keys(res: RunPagePlan, context: str, rep: str, anchor: str, made: dict[str, str], conds: dict[str, str],
             own_runs: dict, langs: tuple[str, ...], shared: dict[str, bytes], gen: Path) -> bool:
    """The page's fingerprint from the key its own files were made from (:func:`plan`'s ``keys``) and the bytes
    of its condition's file (one a condition: read once, ``shared``); False when one of its files was not made
    from a key."""
    data, series_csv, mds = generated_files(rep, anchor)
    key = made.get(data)
    cond = conds.get(f"{rep}/{anchor}")
    if not key or not cond or any(made.get(mds.get(lang)) != key for lang in langs):
        return False
    path = os.path.join(gen, cond)
    if path not in shared:
        got = _read(path)
        shared[path] = hashlib.sha256(got).digest() if got is not None else b"-"
    csv = made.get(series_csv)  # (a page with series: its download made with it)
    h = hashlib.sha256(f"{context}\0keys\0{key}\0{csv or '-'}\0".encode() + shared[path])
    if csv:
        res.csvs.add(f"{rep}/{anchor}")
    mine = own_runs.setdefault(rep, hashlib.sha256())
    mine.update(f"{anchor}\0keys\0{key}\0".encode())
    res.fingerprints[f"{rep}/{anchor}"] = h.hexdigest()
    return True


def _read(path: str) -> bytes | None:
    """The bytes of the file ``path``; None when it is not a file."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _report_fingerprints(gen: Path, context: str, own_runs: dict, linked: set[str],
                         prose: list[Path], reports: dict[str, tuple[bytes, dict]]) -> dict[str, str]:
    """Report id -> the sha256 of what its pages but its run pages read (its cover, chapters, data-sources
    parts, appendix, ...): the run pages' context (templates, words, configuration, every other content page's
    front matter, what each report shows on every page), its pages' whole text in each content folder of
    ``prose`` (the writer's and the generated), its whole data (``data/reports/<id>.json``), its generated pages
    (the run pages' front matter among them: a page links a run's page when it exists) and the data-sources
    parts' assets (``assets/sources/<id>/``). A rebuild after a new run renders the pages of the reports whose
    data changed and takes the others' from the current output. ``linked`` gets the reports with comparisons
    (their tables link a run's page when Hugo finds it: layouts/shortcodes/compare.html)."""
    out: dict[str, str] = {}
    for rep, (text, d) in reports.items():
        h = hashlib.sha256(f"{context}\0report\0{rep}\0".encode() + text + b"\0")
        h.update((own_runs[rep].hexdigest() if rep in own_runs else "-").encode() + b"\0")
        if d.get("compares"):
            linked.add(rep)
        for root in prose:
            _hash_tree(h, root / "reports" / rep, skip_folders=("runs",))  # (run pages: above)
        _hash_tree(h, gen / "assets" / "sources" / rep)
        out[rep] = h.hexdigest()
    return out


def _part_fingerprints(gen: Path, context: str, reports: dict[str, tuple[bytes, dict]]) -> dict[str, str]:
    """"<report>/<page>-<k>" -> the sha256 of what a data-sources part but the first reads: the run pages'
    context, of its report only ``SOURCES_PART_REPORT_KEYS``, its generated page in each language and its runs'
    asset (``assets/sources/<report>/<k>.json``). A spec item edited changes none of them: the parts are taken
    from the current output while Hugo renders the report's other pages."""
    out: dict[str, str] = {}
    for rep, (_, d) in reports.items():
        count = d.get("sources_part_count") or 0
        src = next((p.get("id") for p in d.get("pages") or [] if p.get("kind") == "sources"), None)
        if src is None or count < 2:
            continue
        sub = json.dumps({k: d.get(k) for k in SOURCES_PART_REPORT_KEYS}, sort_keys=True)
        for k in range(2, count + 1):
            h = hashlib.sha256(f"{context}\0part\0{rep}\0{k}\0{sub}\0".encode())
            part = sources_part_id(src, k)
            source = gen / "content" / sources_part_source(rep, part)
            for lang_page in sorted(source.parent.glob(f"{source.name}.*.md")):
                h.update(lang_page.name.encode() + b"\0" + lang_page.read_bytes() + b"\0")
            asset = _read(os.fspath(gen / "assets" / "sources" / rep / f"{k}.json"))
            h.update(b"-" if asset is None else hashlib.sha256(asset).digest())
            out[f"{rep}/{part}"] = h.hexdigest()
    return out


# More run pages to render than this: Hugo reads every run page as before (a pattern a page to match each file
# against would cost it more than reading them)
HIDE_MAX = 1000


def mounts(plan_: RunPagePlan, gen: Path, given: list[dict]) -> list[dict]:
    """The mounts Hugo is given for this build: ``given`` (hugo.json's), but that the generated content leaves
    out the run pages taken from the current output. Segments choose what Hugo writes, not what it reads: it
    parses every page of its content into its page tree (a campaign's site is mostly run pages) to render a few.
    No page but a run page reads another run page, except a comparison's table (it links a run's page when
    Hugo finds it): the run pages of a report with comparisons whose pages are rendered stay mounted."""
    hide = plan_.hidden()
    if not hide:
        return given
    src = str((gen / "content").resolve())
    static = str((gen / "static").resolve())
    out: list[dict] = []
    for m in given:
        if m.get("target") == "static" and m.get("source") == static and "files" not in m:
            out.append({**m, "files": [f"! {run_csv(rep, '*')}" for rep in hide]})  # (link_reused)
            continue
        if m.get("target") != "content" or m.get("source") != src or "files" in m:
            out.append(m)
            continue
        out.append({**m, "files": [f"! reports/{rep}/runs/*" for rep in hide]})
        shown: dict[str, list[str]] = {}
        for key in sorted(plan_.render - plan_.batched):
            rep, anchor = key.split("/")
            if rep in hide:
                shown.setdefault(rep, []).append(anchor)
        if shown:
            out.append({**m, "files": [f"reports/{rep}/runs/{_either(anchors)}.*.md"
                                       for rep, anchors in shown.items()]})
    return out


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else "{" + ",".join(names) + "}"


def link_reused(plan_: RunPagePlan, new: Path, gen: Path) -> int:
    """Hard-link the reused run pages' files from the current output into ``new`` (copied across file
    systems); of the reports Hugo does not copy the series downloads of (:meth:`RunPagePlan.hidden`), those
    of the pages reused linked so too, those of the pages rendered copied from ``gen`` (whose files are
    rewritten in place: never linked). Returns the number of HTML pages linked."""
    made: set[str] = set()  # (os.walk and strings: a folder of one file per page)
    hidden = set(plan_.hidden())
    out = os.fspath(plan_.out)
    csvs = [(key, run_csv(*key.split("/"))) for key in sorted(plan_.csvs) if key.split("/")[0] in hidden]
    link_all(out, os.fspath(new), [rel for key, rel in csvs if key in plan_.reuse], made)
    for key, rel in csvs:
        if key not in plan_.reuse:
            target = os.path.join(new, rel)
            make_folder(target, made)
            shutil.copyfile(os.path.join(gen, "static", rel), target)
    n = link_all(out, os.fspath(new), [rel for key in sorted(plan_.reuse) for rel in page_files(key, plan_.langs)],
                 made)
    folders = [(f"{lang}/reports/{part}", False) for part in sorted(plan_.parts_reuse) for lang in plan_.langs]
    folders += [(f"{lang}/reports/{rep}", True) for rep in sorted(plan_.reports_reuse) for lang in plan_.langs]
    for d, report in folders:  # a data-sources part's folder, a report's (but its run pages)
        src_dir = os.path.join(out, d)
        for root, dirs, files in os.walk(src_dir):
            dirs.sort()
            if report and root == src_dir and "runs" in dirs:
                dirs.remove("runs")  # a report's run pages are reused (or rendered) one by one
            rel_root = os.path.relpath(root, out)
            link_all(out, os.fspath(new), [f"{rel_root}/{name}" for name in sorted(files)], made)
            n += sum(name.endswith(".html") for name in files)
    return n


def forget(out: Path) -> None:
    """Before a swap: the output is about to change, its manifest no longer describes it."""
    manifest_path(out).unlink(missing_ok=True)


def remember(plan_: RunPagePlan) -> None:
    """After a swap: the fingerprints of the pages the output now holds."""
    path = manifest_path(plan_.out)
    for stale in path.parent.glob(path.name + ".tmp*"):  # a killed build's (the caller holds the output lock)
        stale.unlink(missing_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"out": str(plan_.out.resolve()), "pages": plan_.fingerprints,
                               "reports": plan_.reports, "parts": plan_.parts}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
