"""Build the computed report: store + report spec -> :class:`~kansoku.report.model.ComputedReport`.

Everything the site and the PDF show is computed here, once: tables (``analysis.tables``), figures
(``analysis.figures``), the runs behind each item (provenance), the test-environment appendix, the page
structure (``report.structure``) and the cross-year view. The renderers take the result and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kansoku import words
from kansoku.analysis import figures
from kansoku.analysis.commands import command_blocks
from kansoku.analysis import tables as analysis
from kansoku.errors import KansokuError
from kansoku.render import charts
from kansoku.report.model import (Author, ChartData, Chapter, ComputedReport, Environment, Figure, MissingFigure, Provenance,
                                  ProvenanceGroup, ProvenanceRun, Revision, RunInfo, SourceFile, Table, Trends)
from kansoku.report.cache import ItemCache
from kansoku.report.methods import method_notes, transcribed_note
from kansoku.report.comparisons import compute_comparison
from kansoku.report.runs import run_pages
from kansoku.report.structure import report_pages
from kansoku.spec.model import LANGS, Item, Report, Text, text
from kansoku.store.db import Store

CONTENT = Path("content")
CONFIG = Path("config.toml")


# -- one report ---------------------------------------------------------------------------------------

def run_anchor(run_id: str) -> str:
    """A short, stable, HTML-safe id for a run (run ids hold '/', '=' and whatever a directory name holds)."""
    return "run-" + hashlib.sha1(run_id.encode("utf-8")).hexdigest()[:12]


def _text_dict(v: Any, where: str, report: Report) -> dict[str, str] | None:
    t = text(v, where, report.spec_file, required=False)
    return t.as_dict() if t else None


def compute_report(store: Store, report: Report, content_root: Path = CONTENT / "reports",
                   with_run_pages: bool = True, cache: ItemCache | None = None) -> ComputedReport:
    """Everything the site and the PDF show for one report, computed once (the run pages only for the site).
    With a ``cache``, a table or figure whose inputs have not changed since it was last computed is reused
    (report/cache.py)."""
    cache = cache or ItemCache(None)
    chapters = []
    run_ids: set[str] = set()
    for ch in report.chapters:
        out = Chapter(ch.id, ch.number, ch.title.as_dict(), order=[it.id for it in ch.items])
        chapter_runs: set[str] = set()
        for it in ch.items:
            if it.kind == "table":
                out.tables[it.id] = t = cache.get_or_compute(store, report, it,
                                                             lambda it=it: compute_table_model(store, report, it))
            else:
                out.figures[it.id] = t = cache.get_or_compute(store, report, it,
                                                              lambda it=it: compute_figure_model(store, report, it))
            run_ids.update(t.runs)
            chapter_runs.update(t.runs)
        out.commands = command_blocks(store, report, sorted(chapter_runs))
        out.missing_figures = [MissingFigure(
            number=m.number, label={lang: words.t(lang, "figure_label", m.number) for lang in LANGS},
            caption=m.caption.as_dict(), reason=words.both(f"figure_missing_{m.reason}"),
            note=m.note.as_dict() if m.note else None) for m in ch.missing_figures]
        chapters.append(out)
    compares = [compute_comparison(store, report, spec) for spec in report.compares]
    for c in compares:
        run_ids.update(c.runs)
    rep = report.raw.get("report", {})
    pages = report_pages(report, content_root)
    pdf_pages = report_pages(report, content_root, site=False)
    bodies = {p.id: p.generated_body(report) for p in pages}
    runs = runs_provenance(store, sorted(run_ids))
    for info in runs.values():  # factors as a reader reads them: the report's names and value labels
        info.factor_labels = {lang: [[analysis.factor_name(report, f, lang), analysis.factor_value_label(report, f, v, lang)]
                                     for f, v in info.factors.items()] for lang in LANGS}
    return ComputedReport(
        id=report.id, fiscal_year=report.fiscal_year, title=report.title.as_dict(),
        subtitle=report.subtitle.as_dict() if report.subtitle else None,
        organisation=report.organisation.as_dict(), revision=report.revision, copyright=report.copyright,
        license=_text_dict(rep.get("license"), "[report] license", report),
        revision_history=revision_history(report), authors=authors(report), themes=themes(report),
        publish_raw=bool(rep.get("publish_raw", False)), chapters=chapters,
        runs=runs, environment=environment(store, sorted(run_ids)),
        pages=pages, pdf_pages=pdf_pages, generated_bodies=bodies, content_dir=content_root / report.id,
        site_url=rep.get("site_url"), methods=method_notes(store, chapters, sorted(run_ids)),
        transcribed=transcribed_note(store, sorted(run_ids)), compares=compares,
        run_pages=run_pages(store, report, chapters, runs) if with_run_pages else {},
    )


def compute_table_model(store: Store, report: Report, item: Item) -> Table:
    """A table: its numbers (analysis.tables) and the runs behind it, grouped (provenance)."""
    t = analysis.compute_table(store, report, item)
    reps = {c.representative for row in t.rows for c in row if c.representative}
    return t.to_model(item_provenance(store, report, t.runs, reps))


def compute_figure_model(store: Store, report: Report, item: Item) -> Figure:
    """A figure: its data, drawn in each language, and the runs behind it, grouped (provenance)."""
    f = build_figure(store, report, item)
    f.provenance = item_provenance(store, report, f.runs, figure_representatives(store, item))
    return f


def build_figure(store: Store, report: Report, item: Item) -> Figure:
    """A figure: its data computed (analysis.figures), then drawn in each language (render.charts)."""
    f = figures.figure_data(store, report, item)
    f.figure = {lang: charts.draw(f.chart_data, lang) for lang in LANGS}
    return f


def revision_history(report: Report) -> list[Revision]:
    out = []
    for i, e in enumerate(report.raw.get("report", {}).get("revision_history", []) or []):
        out.append(Revision(str(e.get("revision", "")), str(e.get("date", "")),
                            _text_dict(e.get("changes"), f"[[report.revision_history]] #{i + 1} changes",
                                       report) or {"ja": "", "en": ""}))
    return out


def authors(report: Report) -> list[Author]:
    out = []
    for i, a in enumerate(report.raw.get("report", {}).get("author", []) or []):
        chapters = [str(c) for c in a.get("chapters", [])]
        titles = {c.id: c for c in report.chapters}
        out.append(Author(
            name=_text_dict(a.get("name"), f"[[report.author]] #{i + 1} name", report) or {"ja": "", "en": ""},
            affiliation=_text_dict(a.get("affiliation"), f"[[report.author]] #{i + 1} affiliation", report),
            chapters=[{"id": c, "number": titles[c].number if c in titles else None,
                       "title": titles[c].title.as_dict() if c in titles else {"ja": c, "en": c}}
                      for c in chapters],
        ))
    return out


def themes(report: Report) -> dict[str, list[str]]:
    raw = report.raw.get("report", {}).get("themes", []) or []
    out: dict[str, list[str]] = {lang: [] for lang in LANGS}
    for i, t in enumerate(raw):
        d = _text_dict(t, f"[report] themes #{i + 1}", report) or {}
        for lang in LANGS:
            if d.get(lang):
                out[lang].append(d[lang])
    return out


def runs_provenance(store: Store, run_ids: list[str]) -> dict[str, RunInfo]:
    if not run_ids:
        return {}
    out: dict[str, RunInfo] = {}
    for run_id, origin, status, start, citation, hostname in store.query(
        "SELECT run_id, origin, status, start_time::VARCHAR, citation, hostname FROM runs WHERE run_id IN "
            "(SELECT unnest(?::VARCHAR[])) ORDER BY run_id", [run_ids]):
        out[run_id] = RunInfo(run_id, origin, status, start, citation, hostname, run_anchor(run_id))
    for run_id, factor, value in store.query(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
            "ORDER BY run_id, factor", [run_ids]):
        if run_id in out:
            out[run_id].factors[factor] = value
    # raw files are published from the store's content-addressed copies (data/blobs), never from where the
    # runs were ingested: a published file always has the bytes its sha256 names
    from kansoku.store.db import RUN_TOML, blob_path

    kept = store.raw_files(run_ids)
    blobs = store.blobs
    for run_id, name, size, sha, tool, fmt, ver in store.query(
        "SELECT run_id, file_name, size_bytes, sha256, tool, format, tool_version FROM sources "
            "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, file_name", [run_ids]):
        if run_id in out:
            copy = blob_path(blobs, sha) if sha and (run_id, name) in kept else None
            out[run_id].sources.append(SourceFile(name, size, sha, tool, fmt, ver, human_size(size), copy))
    for (run_id, name), (sha, _) in kept.items():
        if name == RUN_TOML and run_id in out:
            out[run_id].run_toml = blob_path(blobs, sha)
            out[run_id].run_toml_sha256 = sha
    return out


def human_size(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def figure_representatives(store: Store, item: Item) -> set[str]:
    """Representative runs of a line/bar figure's points (the run closest to each aggregate)."""
    if not item.x:
        return set()
    try:
        groups = analysis.aggregate(store, item, item.metrics[0], [item.x] + ([item.series] if item.series else []))
    except Exception:  # a chart kind with its own grouping: no representative runs to show
        return set()
    return {g.representative_run_id for g in groups if g.representative_run_id}


def item_provenance(store: Store, report: Any, run_ids: list[str], reps: set[str]) -> Provenance:
    """The runs behind a table or figure, grouped by their factors (all but ``rep``).

    Factors with the same value for every run are listed once (``common``); each group lists its
    repetitions, the representative one marked. Labels are the report's factor names and value labels.
    """
    if not run_ids:
        return Provenance()
    rows = store.query(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [run_ids])
    factors: dict[str, dict[str, str]] = {r: {} for r in run_ids}
    for run_id, f, v in rows:
        factors[run_id][f] = v
    names = sorted({f for fs in factors.values() for f in fs})
    rep_factor = "rep"
    common, varying = [], []
    for f in names:
        vals = {fs.get(f) for fs in factors.values()}
        if f == rep_factor:
            continue
        (common if len(vals) == 1 and None not in vals else varying).append(f)
    # varying factors in the report's usual order: those with a declared order first
    varying.sort(key=lambda f: (f not in report.factor_names, f))

    def lab(f: str, v: str | None) -> dict[str, str]:
        if v is None:
            return {lang: "—" for lang in LANGS}
        return {lang: analysis.factor_value_label(report, f, v, lang) for lang in LANGS}

    def fname(f: str) -> dict[str, str]:
        return {lang: analysis.factor_name(report, f, lang) for lang in LANGS}

    groups: dict[tuple, tuple[ProvenanceGroup, tuple]] = {}
    for run_id in run_ids:
        fs = factors[run_id]
        key = tuple(fs.get(f) for f in varying)
        g, _ = groups.setdefault(key, (ProvenanceGroup([lab(f, fs.get(f)) for f in varying], []), key))
        g.runs.append(ProvenanceRun(run_id, run_anchor(run_id), fs.get(rep_factor) or "·", run_id in reps))
    ordered = sorted(groups.values(), key=lambda gk: tuple(
        analysis.factor_sort_key(report, f)(v or "") for f, v in zip(varying, gk[1])))
    for g, _ in ordered:
        g.runs.sort(key=lambda r: analysis.factor_sort_key(None, rep_factor)(r.rep))
    return Provenance(
        common=[(fname(f), lab(f, factors[run_ids[0]].get(f))) for f in common],
        factors=[fname(f) for f in varying],
        groups=[g for g, _ in ordered],
        runs=len(run_ids),
    )


# -- the test-environment appendix ---------------------------------------------------------------------

# What the appendix reads: runs.run_toml (run.toml as JSON, written by tools/collect or by hand) of the
# report's measured runs. [machine]: hardware and OS; [versions]: one line per tool; [server]: PostgreSQL
# settings as captured with the run. Shown settings: those [server].non_default names (pg_settings
# source <> 'default', written by tools/collect) plus any setting whose value differs between runs;
# without a non_default list, every captured setting. Keys below are not settings.
SERVER_META = {"conninfo", "version", "server_version", "config", "database", "non_default", "capture_error"}
SETTING_NOISE = {"application_name"}  # set by the collector's own connection
# [machine] keys in the order shown; their labels are the words env_field_<key>.
MACHINE_FIELDS = ["hostname", "cpu_model", "cpu_count", "nproc", "mem_total_kib", "swap_total_kib", "os", "kernel",
                  "virtualization", "filesystem", "disks"]


def _machine_value(key: str, v: Any) -> dict[str, str] | str:
    if key in ("mem_total_kib", "swap_total_kib") and isinstance(v, (int, float)):
        return human_size(int(v) * 1024)
    if key == "filesystem" and isinstance(v, dict):
        parts = [str(v.get("device", "")), str(v.get("fstype", ""))]
        s = " ".join(p for p in parts if p)
        if v.get("mount"):
            s += f" ({v['mount']})"
        return s
    if key == "disks" and isinstance(v, dict):
        items = []
        for name, d in sorted(v.items()):
            if not isinstance(d, dict):
                items.append({lang: f"{name}: {d}" for lang in LANGS})
                continue
            size = human_size(d.get("size_bytes")) if d.get("size_bytes") is not None else ""
            rot = d.get("rotational")
            kind = {True: words.both("env_disk_rotational"), False: words.both("env_disk_non_rotational")}
            items.append({lang: ", ".join(x for x in (f"{name}: {size}".rstrip(": "),
                                                     kind[rot][lang] if rot in kind else "") if x)
                          for lang in LANGS})
        return {lang: "; ".join(i[lang] for i in items) for lang in LANGS}
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return str(v)


def environment(store: Store, run_ids: list[str]) -> Environment:
    """Hardware, software versions and PostgreSQL settings of the report's measured runs (see above)."""
    env = Environment()
    out: dict[str, Any] = {"runs": 0, "without_capture": 0, "machines": [], "machine_fields": [], "versions": [],
                           "settings": [], "settings_kind": "non_default"}
    if not run_ids:
        return env
    rows = store.query(
        "SELECT run_id, origin, run_toml::VARCHAR FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY run_id", [run_ids])
    factors: dict[str, dict[str, str]] = {}
    for run_id, f, v in store.query(
            "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]):
        factors.setdefault(run_id, {})[f] = v
    captured: dict[str, dict] = {}
    for run_id, origin, rt in rows:
        if origin != "measured":
            continue
        doc = json.loads(rt) if rt else {}
        if not any(isinstance(doc.get(k), dict) for k in ("machine", "versions", "server")):
            out["without_capture"] += 1
            continue
        captured[run_id] = doc
    out["runs"] = len(captured)
    if not captured:
        return Environment(**out)

    # machines: runs grouped by identical [machine] tables, one column per distinct machine
    machines: dict[str, dict] = {}
    for run_id, doc in captured.items():
        m = doc.get("machine") or {}
        if not m.get("hostname") and doc.get("hostname"):
            m = {**m, "hostname": doc["hostname"]}
        key = json.dumps(m, sort_keys=True, default=str)
        g = machines.setdefault(key, {"machine": m, "runs": 0, "ids": []})
        g["runs"] += 1
        g["ids"].append(run_id)
    keys = list(MACHINE_FIELDS)
    extra = sorted({k for g in machines.values() for k in g["machine"]} - set(keys))
    fields = [(k, words.both(f"env_field_{k}")) for k in MACHINE_FIELDS] + [(k, {"ja": k, "en": k}) for k in extra]
    present = [(k, lab) for k, lab in fields if any(k in g["machine"] for g in machines.values())]
    out["machine_fields"] = [lab for _, lab in present]
    for g in machines.values():
        vals = []
        for k, _ in present:
            v = g["machine"].get(k)
            vals.append("—" if v is None else _machine_value(k, v))
        out["machines"].append({"values": vals, "runs": g["runs"], "where": _distinguishing(
            g["ids"], list(captured), factors) if len(machines) > 1 else ""})

    # versions: every distinct value per tool, with its number of runs
    vers: dict[str, dict[str, int]] = {}
    for doc in captured.values():
        for tool, v in (doc.get("versions") or {}).items():
            d = vers.setdefault(tool, {})
            d[str(v)] = d.get(str(v), 0) + 1
    out["versions"] = [{"tool": t, "values": [{"value": v, "runs": n} for v, n in sorted(vals.items())]}
                       for t, vals in sorted(vers.items())]

    # settings: runs that captured no PostgreSQL server (fio, pg_test_fsync) are left out and named once;
    # the settings that differ between the others group their runs into configurations (one column each)
    servers = {r: (doc.get("server") or {}) for r, doc in captured.items()}
    no_server = [r for r, sv in servers.items() if not set(sv) - SERVER_META - SETTING_NOISE]
    if no_server and len(no_server) < len(servers):
        out["settings_without_server"] = {"runs": len(no_server),
                                          "where": _distinguishing(no_server, list(servers), factors)}
        servers = {r: sv for r, sv in servers.items() if r not in set(no_server)}
    listed = [set(s.get("non_default") or []) for s in servers.values() if s.get("non_default") is not None]
    all_keys = {k for s in servers.values() for k in s} - SERVER_META - SETTING_NOISE
    differing = {k for k in all_keys if len({str(s.get(k)) for s in servers.values()}) > 1}
    if listed:
        names = (set().union(*listed) | differing) & all_keys
    else:
        names = all_keys
        out["settings_kind"] = "captured"
    names -= SETTING_NOISE
    counts = _factor_counts(list(servers), factors)
    varying = sorted(names & differing, key=str.lower)
    for name in sorted(names - differing, key=str.lower):
        v = next(iter(servers.values())).get(name)
        out["settings"].append({"name": name, "values": [{"value": "—" if v is None else str(v),
                                                          "runs": len(servers), "where": ""}]})
    configs: dict[tuple, list[str]] = {}
    for r, sv in servers.items():
        configs.setdefault(tuple("—" if sv.get(n) is None else str(sv.get(n)) for n in varying), []).append(r)
    if varying:
        ordered = sorted(configs.items(), key=lambda kv: (_distinguishing(kv[1], list(servers), factors, counts), kv[0]))
        out["settings_configs"] = [{"runs": len(runs), "where": _distinguishing(runs, list(servers), factors, counts)}
                                   for _, runs in ordered]
        out["settings_varying"] = [{"name": n, "values": [key[i] for key, _ in ordered]}
                                   for i, n in enumerate(varying)]
    return Environment(**out)


def _distinguishing(runs: list[str], all_runs: list[str], factors: dict[str, dict[str, str]],
                    counts: dict[tuple[str, str], int] | None = None) -> str:
    """Factor values shared by these runs and by no other run ('config=checksums-on').

    ``runs`` are distinct runs of ``all_runs``; ``counts`` (the number of runs of ``all_runs`` with each
    factor value, :func:`_factor_counts`) may be given once for many calls: a value the runs share is held
    by no other run exactly when as many runs of ``all_runs`` hold it as there are ``runs``."""
    if counts is None:
        counts = _factor_counts(all_runs, factors)
    shared = None
    for r in runs:
        fs = set(factors.get(r, {}).items())
        shared = fs if shared is None else shared & fs
    picked = sorted(fv for fv in (shared or set()) if counts.get(fv, 0) == len(runs))
    return ", ".join(f"{f}={v}" for f, v in picked[:2])


def _factor_counts(all_runs: list[str], factors: dict[str, dict[str, str]]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for r in set(all_runs):
        for fv in factors.get(r, {}).items():
            counts[fv] = counts.get(fv, 0) + 1
    return counts


# -- the cross-year view -------------------------------------------------------------------------------

def load_config(config: Path = CONFIG) -> dict:
    with open(config, "rb") as fh:
        return tomllib.load(fh)


def trend_specs(config: dict) -> list[dict]:
    """[[params.trends]] of config.toml: id, metric, where, series (factor), title, y_title."""
    return list(config.get("params", {}).get("trends", []) or [])


def compute_trends(store: Store, reports: list[Report], computed: list[ComputedReport], specs: list[dict]) -> Trends:
    """The cross-year view: report/trends.py (comparable runs only, machine, run length and origin per point)."""
    from kansoku.report.trends import compute_trends as compute

    return compute(store, reports, computed, specs)


# -- every report of a site ------------------------------------------------------------------------------

def compute_site(db: Path, spec_dir: Path, content: Path = CONTENT, config: Path = CONFIG,
                 wait_s: float = 0.0, on_wait=None,
                 cache: ItemCache | None = None) -> tuple[list[ComputedReport], Trends]:
    """Every report of ``spec_dir`` and the cross-year view, from the store at ``db`` (read-only).
    ``cache``: reuse the tables and figures whose inputs did not change (report/cache.py)."""
    from kansoku.spec.model import load_all
    from kansoku.store.db import open_store

    reports = load_all(spec_dir)
    store = open_store(db, read_only=True, wait_s=wait_s, on_wait=on_wait)
    try:
        computed = [compute_report(store, r, content / "reports", cache=cache) for r in reports]
        trends = compute_trends(store, reports, computed, trend_specs(load_config(config)))
    finally:
        store.close()
    return computed, trends


def compute_one(db: Path, spec_file: Path, content_root: Path = CONTENT / "reports") -> ComputedReport:
    """One report (tools/pdf)."""
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    report = load_report(spec_file)
    store = open_store(db, read_only=True)
    try:
        return compute_report(store, report, content_root, with_run_pages=False)  # the PDF has no run pages
    finally:
        store.close()
