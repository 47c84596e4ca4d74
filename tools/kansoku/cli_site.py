"""The commands a team starts its own report with: ``kansoku docs`` (the manual installed with the package),
``kansoku init`` (a new site, from runs a starter report: app/starter.py), ``kansoku check`` (the build's
preflight, without building), ``kansoku info`` and ``kansoku list`` (what a store holds: store/inventory.py) and
``kansoku serve`` (a live preview: app/serve.py). Each parses its options before it loads DuckDB
(tests/test_cli_start.py)."""

from __future__ import annotations

import argparse
import datetime
import difflib
import functools
import json
import re
import sys
import tomllib
from pathlib import Path

from kansoku import resources, words
from kansoku.cli_options import (
    EPILOG,
    add_version,
    common_options,
    interruptible,
    prepare_command,
    print_error,
    print_waiting,
    print_warning,
    progress_lines,
    site_of,
    site_preflight,
    spec_options,
    store_options,
)
from kansoku.errors import KansokuError, RunError
from kansoku.words import LANGS

# -- kansoku docs ------------------------------------------------------------------------------------------


def _title(path: Path) -> str:
    """A document's first heading (a schema's title, a plan's description), for the list."""
    try:
        if path.suffix == ".json":
            return json.loads(path.read_text(encoding="utf-8")).get("title", "")
        if path.suffix == ".toml":
            text = path.read_text(encoding="utf-8")
            first = next((line.lstrip("# ") for line in text.splitlines() if line.startswith("# ")), "")
            text = str(tomllib.loads(text).get("description", "")) or \
                re.sub(r"^Example campaign, part \d+( \([^)]*\))?: ", "", first)
            return text if len(text) <= 90 else text[:89] + "…"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#") and not line.startswith("#:"):
                return line.lstrip("#").strip()
    except (OSError, ValueError):
        pass
    return ""


def manual() -> dict[str, list[Path]]:
    """The installed manual: the documents, the JSON schemas, the example campaign's plans."""
    return {"documents": sorted(resources.DOCS_DIR.glob("*.md")),
            "schemas": sorted(resources.DOCS_DIR.glob("*.schema.json")),
            "example plans": sorted(resources.EXAMPLES_DIR.glob("*.toml"))}


def find_doc(name: str) -> Path:
    """A document, schema or example plan by its name: ``spec``, ``spec.md``, ``collect-plan.schema.json``,
    ``profile`` or ``examples/profile.toml`` (an example plan; a file beside it too: ``examples/scripts/read.sql``)."""
    name = name.strip()
    rest = name.split("/", 1)[1] if name.startswith("examples/") else None
    candidates = ([resources.EXAMPLES_DIR / rest, resources.EXAMPLES_DIR / f"{rest}.toml"] if rest is not None else
                  [resources.DOCS_DIR / name, resources.DOCS_DIR / f"{name}.md", resources.DOCS_DIR / f"{name}.schema.json",
                   resources.EXAMPLES_DIR / name, resources.EXAMPLES_DIR / f"{name}.toml"])
    roots = (resources.DOCS_DIR.resolve(), resources.EXAMPLES_DIR.resolve())
    for c in candidates:  # (a name never reaches out of the manual: ../../etc/passwd is no document)
        if c.is_file() and any(c.resolve().is_relative_to(r) for r in roots):
            return c
    known = [p.stem if p.suffix == ".md" else p.name for p in manual()["documents"] + manual()["schemas"]]
    known += [f"examples/{p.stem}" for p in manual()["example plans"]]
    hint = difflib.get_close_matches(name, known, n=3)
    raise RunError(f"no document {name!r} in {resources.DOCS_DIR}" + (f"; did you mean {' or '.join(hint)}?" if hint
                                                                      else "; kansoku docs lists them"))


@interruptible
def docs_main(argv: list[str] | None = None, prog: str = "kansoku docs") -> int:
    ap = argparse.ArgumentParser(
        prog=prog,
        description="The manual installed with kansoku: without NAME, where it is and what it holds (the documents, "
                    "the JSON schemas of a report spec and a campaign plan, the example campaign's plans: the worked "
                    "examples of scale-up, perf profile and query studies); with NAME, print that file.",
        epilog=f"the manual is in {resources.DOCS_DIR}; the example plans in {resources.EXAMPLES_DIR}. {EPILOG}")
    ap.add_argument("name", nargs="?", metavar="NAME",
                    help="a document (spec, collect, charts, ...), a schema (report-spec.schema.json) or an example "
                         "plan (examples/profile)")
    ap.add_argument("--path", action="store_true", help="print the file's path (or the manual's directory), not its text")
    add_version(ap)
    args = ap.parse_args(argv)
    prepare_command(args)
    if args.name is None:
        if args.path:
            print(resources.DOCS_DIR)
            return 0
        print(f"kansoku's manual: {resources.DOCS_DIR}")
        for what, paths in manual().items():
            print(f"\n{what}:")
            for p in paths:
                label = f"examples/{p.stem}" if what == "example plans" else (p.stem if p.suffix == ".md" else p.name)
                print(f"  {label:<28} {_title(p)}")
        print(f"\nkansoku docs NAME prints one (kansoku docs spec); --path prints where it is. The example plans, "
              f"their scripts and notes are in {resources.EXAMPLES_DIR}.")
        return 0
    try:
        path = find_doc(args.name)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    if args.path:
        print(path)
    else:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0


# -- kansoku init -----------------------------------------------------------------------------------------

ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# the sections of a chapter's page, in order
HEADINGS = ("prose_heading_purpose", "prose_heading_setup", "prose_heading_method", "prose_heading_results",
            "prose_heading_discussion")
GITIGNORE = """\
# written by kansoku: the store and its kept copies of the raw files, the generated data, the site
/data/kansoku.duckdb
/data/kansoku.duckdb.wal
/data/*.lock
/data/blobs/
/data/generated/
/public/
/.public.*
/.kansoku-scratch/
.hugo_build.lock
"""


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a TOML basic string is a JSON string


def _texts(by_lang: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{lang} = {_toml_str(t)}" for lang, t in by_lang.items()) + " }"


def chapter_body(lang: str, placed: dict[str, list[str]]) -> str:
    """A chapter page's sections, each with the blocks ``placed`` in it (by the key of its heading)."""
    return "".join(f"## {words.t(lang, key)}\n\n" + "".join(f"{b}\n\n" for b in placed.get(key, []))
                   for key in HEADINGS)


def init_files(report: str, campaigns: list[str], chapter: str, year: int, starter: list | None = None
               ) -> dict[str, str]:
    """The files of a new site, by path relative to it. ``starter``: the chapters of a starter report
    (``app/starter.py``, from the runs of the store) in place of the one empty chapter."""
    same = {lang: report for lang in words.LANGS}
    scope = f"""
# The runs the report speaks for (docs/spec.md, "Report scope"): runs whose `campaign` factor is one of these,
# i.e. ingested from a directory campaign=<name>/ (or a plan whose [factors] has campaign = ["<name>"]).
[report.scope]
campaigns = [{", ".join(_toml_str(c) for c in campaigns)}]
""" if campaigns else ""
    spec = f"""#:schema {resources.SPEC_SCHEMA}
# The report spec: every key is in `kansoku docs spec` ({resources.doc('spec.md')}), every chart kind in
# `kansoku docs charts`. `kansoku check` lists every problem (with its line) without building.
[report]
id = {_toml_str(report)}
fiscal_year = {year}
title = {_texts(same)}
organisation = {_texts({lang: "TODO" for lang in words.LANGS})}
revision = "0.1"
{scope}
[[chapter]]
id = {_toml_str(chapter)}
title = {_texts({lang: chapter for lang in words.LANGS})}

# A table and a figure, once runs are ingested (`kansoku info` lists the factors, their values and the metrics):
#
# [[chapter.table]]
# id = "tps"
# caption = {{ ja = "…", en = "…" }}
# metric = "tps"
# where = {{ campaign = {_toml_str(campaigns[0])}, study = "scaleup" }}
# rows = "clients"
# columns = "config"
#
# [[chapter.figure]]
# id = "tps"
# caption = {{ ja = "…", en = "…" }}
# chart = "line"
# metric = "tps"
# where = {{ campaign = {_toml_str(campaigns[0])}, study = "scaleup" }}
# x = "clients"
# series = "config"
"""
    if starter:
        from kansoku.app import starter as starter_spec  # after the options: the starter loads DuckDB

        spec = spec.split("\n[[chapter]]\n", 1)[0] + "\n# A first draft from the runs of the store (`kansoku list factors` lists their values, " \
            "`kansoku list metrics` the metrics):\n# each chapter a study, its table and figure over the factor with the most values.\n\n" \
            + starter_spec.spec_chapters(starter)
    config = """\
# This site's Hugo configuration, laid over kansoku's own (kansoku docs ARCHITECTURE: resources.py).
baseURL = "/"
"""
    files = {"config.toml": config, f"data/reports/{report}.toml": spec, ".gitignore": GITIGNORE}
    for lang in words.LANGS:
        files[f"content/_index.{lang}.md"] = f"---\ntitle: {_toml_str(words.t(lang, 'site_title'))}\n---\n"
        files[f"content/reports/_index.{lang}.md"] = f"---\ntitle: {_toml_str(words.t(lang, 'reports'))}\n---\n"
        files[f"content/reports/{report}/_index.{lang}.md"] = (
            f"---\ntitle: {_toml_str(report)}\nreport: {_toml_str(report)}\nfiscal_year: {year}\n---\n")
        if not starter:
            body = chapter_body(lang, {})
            files[f"content/reports/{report}/{chapter}.{lang}.md"] = (
                f"---\ntitle: {_toml_str(chapter)}\nreport: {_toml_str(report)}\nchapter: {_toml_str(chapter)}\n"
                f"chapter_number: 1\nweight: 1\n---\n{body}")
        for n, ch in enumerate(starter or [], 1):
            body = chapter_body(lang, starter_spec.chapter_blocks(ch))
            files[f"content/reports/{report}/{ch.id}.{lang}.md"] = (
                f"---\ntitle: {_toml_str(ch.id)}\nreport: {_toml_str(report)}\nchapter: {_toml_str(ch.id)}\n"
                f"chapter_number: {n}\nweight: {n}\n---\n{body}")
    files["README.md"] = f"""\
# {report}

A kansoku site (`kansoku docs` prints where the manual is). Next steps, from this directory:

1. Measure runs into `runs/campaign={campaigns[0]}/`: `kansoku collect --plan PLAN.toml` (a plan's format:
   `kansoku docs collect`; worked examples of scale-up, perf profile and query studies: `kansoku docs`
   lists them as `examples/…`), or copy existing run directories there.
2. `kansoku ingest runs/` loads them into `data/kansoku.duckdb`; `kansoku info` lists what the store holds:
   campaigns, studies, factors and their values, metrics with their units and per-host forms, hosts
   (`kansoku list runs|factors|metrics|hosts`: one part, a line each).
3. Declare tables and figures in `data/reports/{report}.toml` (`kansoku docs spec`, `kansoku docs charts`)
   and write the prose in `content/reports/{report}/{chapter}.<lang>.md`, placing `{{{{< tbl "id" >}}}}`,
   `{{{{< fig "id" >}}}}` and `{{{{< commands >}}}}` (in the method section).
4. `kansoku check` lists every problem of the specs and prose against the store (exit 3), without building.
5. `kansoku serve` previews the site live on http://127.0.0.1:1313/ while you write (a prose edit is shown
   when saved, a spec edit is recomputed); `kansoku build` writes `public/`; `kansoku pdf {report} --lang all`
   writes the PDFs.
"""
    return files


@interruptible
def init_main(argv: list[str] | None = None, prog: str = "kansoku init") -> int:
    ap = argparse.ArgumentParser(
        prog=prog,
        description="Write a new site in DIR: config.toml, a report spec data/reports/REPORT.toml (its #:schema line "
                    "naming the installed schema, its [report.scope] the campaigns), content/reports/REPORT/ with "
                    "the report's page and one chapter page per language (sections Purpose, Setup, Method, Results, "
                    "Discussion), a .gitignore and a README of the next steps. Given RUNS, they are ingested into "
                    "the site's store first and the spec is a starter report that builds at once: a chapter per "
                    "study, a TPS table and a figure over the factor with the most values (its first value the "
                    "baseline), beside the server's CPU %idle where the runs have a host of role server, and the "
                    "chapter pages placing them. Nothing existing is overwritten.",
        epilog=EPILOG)
    ap.add_argument("dir", type=Path, metavar="DIR", help="the new site's directory (created; may exist if empty of "
                                                          "these files)")
    ap.add_argument("runs", type=Path, nargs="*", metavar="RUNS",
                    help="run directories (or a campaign's directory) to ingest into DIR/data/kansoku.duckdb and "
                         "write the starter report from")
    ap.add_argument("--report", metavar="ID", help="the report's id (default: DIR's name)")
    ap.add_argument("--campaign", action="append", metavar="NAME",
                    help="a campaign the report speaks for ([report.scope] campaigns; repeatable; default: the "
                         "campaigns of RUNS, else the report's id)")
    ap.add_argument("--chapter", default="study", metavar="ID",
                    help="the first chapter's id, without RUNS (default: study)")
    ap.add_argument("--year", type=int, default=datetime.date.today().year, help="fiscal_year (default: this year)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    add_version(ap)
    args = ap.parse_args(argv)
    prepare_command(args)
    report = args.report or args.dir.name
    campaigns = args.campaign or ([] if args.runs else [report])
    bad = [f"{what} {v!r}" for what, v in [("report", report), ("chapter", args.chapter),
                                             *(("campaign", c) for c in campaigns)] if not ID.match(v)]
    if bad:
        print_error(f"{', '.join(bad)}: an id is letters, digits, '_', '.' and '-', starting with a letter or digit"
                    + ("" if args.report else " (--report ID names the report)"))
        return 2
    # the report's own files must be new; the site's (config.toml, README.md, home pages) are kept when there,
    # so that kansoku init --report ID adds a report to a site
    own = [f"data/reports/{report}.toml", f"content/reports/{report}"]
    there = [p for p in own if (args.dir / p).exists()]
    if there:
        print_error(f"{args.dir} already holds {', '.join(there)}: kansoku init overwrites nothing (another DIR, "
                    "or --report ID for another report)")
        return 2
    missing = [str(p) for p in args.runs if not p.exists()]
    if missing:
        print_error(f"no such run directory: {', '.join(missing)}")
        return 2
    starter = None
    if args.runs:
        try:
            starter, campaigns = _starter(args.dir, args.runs, campaigns, args.quiet)
        except KansokuError as exc:
            print_error(str(exc))
            return exc.exit_code
        if starter is None:
            return 2
        if not starter:
            print_warning("the runs hold no campaign's measured runs: the spec has one empty chapter "
                          "(kansoku list factors lists what the store holds)")
            campaigns = campaigns or [report]
    files = init_files(report, campaigns, args.chapter, args.year, starter=starter)
    files = {rel: text for rel, text in files.items() if not (args.dir / rel).exists()}
    for rel, text in files.items():
        path = args.dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if not args.quiet:
        chapters = f", chapters {[c.id for c in starter]}" if starter else ""
        print(f"wrote the site {args.dir}: report {report!r} (data/reports/{report}.toml, content/reports/{report}/), "
              f"campaigns {campaigns}{chapters}; next steps in {args.dir / 'README.md'}")
    return 0


def _starter(site: Path, runs: list[Path], campaigns: list[str], quiet: bool):
    """RUNS ingested into the site's store, and the chapters of a starter report from it (app/starter.py),
    within ``campaigns`` when given (else every campaign of the store, returned). None: the ingest failed (it
    said why)."""
    from kansoku.ingest.pipeline import Interrupted, ingest  # after the options: --help loads no DuckDB

    db = resources.Site(site).db
    db.parent.mkdir(parents=True, exist_ok=True)
    try:
        report = ingest(runs, db, on_wait=print_waiting)
    except Interrupted:  # (the site's files are not written yet)
        raise KeyboardInterrupt from None
    if not report.ok:
        print_error(f"{len(report.errors)} file(s) could not be ingested; nothing was stored in {db}:\n  "
                    + "\n  ".join(map(str, report.errors)))
        return None, campaigns
    if not report.runs_seen:
        print_error(f"0 runs: no known tool output under {', '.join(map(str, runs))} (kansoku ingest -v RUNS "
                    "says why each file was skipped)")
        return None, campaigns
    if not quiet:
        print(f"ingested {report.runs_seen} runs ({len(report.files)} files) into {db}")
    from kansoku.app.starter import chapters  # as above
    from kansoku.store.db import open_store  # DuckDB, after the options

    store = open_store(db, read_only=True)
    try:
        found = [c for c in chapters(store) if not campaigns or c.where["campaign"] in campaigns]
    finally:
        store.close()
    return found, campaigns or list(dict.fromkeys(c.where["campaign"] for c in found))


# -- kansoku check ----------------------------------------------------------------------------------------

@interruptible
def check_main(argv: list[str] | None = None, prog: str = "kansoku check") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options(), spec_options()],
        description="Check every report spec and prose page of the site against the schema, the parsers and the "
                    "store, as a build does first, without computing or building anything: every problem at once, "
                    "each with its file and line (exit 3).",
        epilog=EPILOG)
    ap.add_argument("--content", type=Path, default=None, help="the reports' prose (default content/ in the site)")
    ap.add_argument("--strict", action="store_true",
                    help="a number a measured report's prose states as text, not through its data, is a problem")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        site = site_of(args)
        db, specs, content = args.db or site.db, args.specs or site.specs, args.content or site.content
        if not specs.is_dir():
            raise RunError(f"{specs}: no report specs (kansoku init DIR writes a site)")
        reports = site_preflight(args, site, specs, db, content, strict=args.strict)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    if not db.exists():
        print_warning(f"no store at {db}: the names of metrics, factors and values were not checked against "
                      "data (kansoku ingest RUNS first)")
    if not args.quiet:
        print(f"checked {len(reports)} report(s) ({', '.join(r.id for r in reports)}): no problem")
    return 0


# -- kansoku info -----------------------------------------------------------------------------------------

def _values_text(values: list[dict], limit: int = 12) -> str:
    shown = ", ".join(f"{v['value']} ({v['runs']})" for v in values[:limit])
    return shown + (f", … {len(values) - limit} more" if len(values) > limit else "")


def print_inventory(inv: dict, out=sys.stdout) -> None:
    def p(line: str = "") -> None:
        print(line, file=out)

    p("runs: " + (", ".join(f"{r['runs']} {r['origin']} {r['status']}" for r in inv["runs"]) or "none"))
    p("\ncampaigns (runs):")
    for c in inv["campaigns"]:
        studies = ", ".join(f"{s['study']} ({s['runs']})" for s in c["studies"])
        p(f"  {c['campaign']} ({c['runs']})" + (f": studies {studies}" if studies else ""))
    if not inv["campaigns"]:
        p("  none (a run's campaign is its campaign=NAME directory or plan factor)")
    p("\nfactors: values (runs)")
    for f in inv["factors"]:
        p(f"  {f['factor']}: {_values_text(f['values'])}")
    p("\nmetrics: unit, direction, runs; per-host forms (a metric measured on several hosts of a run is named "
      "with the host's role)")
    for m in inv["metrics"]:
        line = f"  {m['metric']} [{m['unit'] or '—'}], {m['direction'] or 'transcribed'}, {m['runs']} runs"
        if m["roles"]:
            line += "; " + ", ".join(f"{r['form']} ({r['runs']})" for r in m["roles"])
        p(line)
    p("\nhosts: role, host (runs)")
    for h in inv["hosts"]:
        p(f"  {h['role']}: {h['host'] or '(the run’s own host)'} ({h['runs']})")
    if not inv["hosts"]:
        p("  none recorded (runs of one host)")


def _read_inventory(args: argparse.Namespace, parts: tuple[str, ...] | None = None) -> tuple[Path, dict]:
    """The store's inventory (store/inventory.py), read-only, for ``kansoku info`` and ``kansoku list``."""
    db = args.db or site_of(args).db
    if not db.exists():
        raise RunError(f"no store at {db} (kansoku ingest RUNS makes it)")
    from kansoku.store.db import open_store  # DuckDB, after the options
    from kansoku.store.inventory import PARTS, inventory  # as open_store

    store = open_store(db, read_only=True, wait_s=args.wait, on_wait=print_waiting)
    try:
        return db, inventory(store, parts=parts or PARTS)
    finally:
        store.close()


@interruptible
def info_main(argv: list[str] | None = None, prog: str = "kansoku info") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options()],
        description="What a store holds: its runs, campaigns and their studies, every factor with its values, every "
                    "metric with its unit, direction and per-host forms (cpu_idle_pct[server]), the hosts by role, "
                    "each with its number of runs: the names a spec, a plan or kansoku compare can use.",
        epilog=EPILOG)
    ap.add_argument("--json", action="store_true", help="print it as JSON")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        db, inv = _read_inventory(args)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    if args.json:
        print(json.dumps({"db": str(db), **inv}, ensure_ascii=False, indent=1))
    else:
        print(f"{db}:")
        print_inventory(inv)
    return 0


# -- kansoku list -----------------------------------------------------------------------------------------

LISTS = {"runs": "every run: its id, origin, status, start and factors",
         "factors": "every factor with its values and their runs",
         "metrics": "every metric with its unit, direction, runs and per-host forms (cpu_idle_pct[server])",
         "hosts": "the hosts of the runs by role"}


def print_list(what: str, inv: dict, out=sys.stdout) -> None:
    """One line per entry, the name first (for grep and cut)."""
    def p(line: str) -> None:
        print(line, file=out)

    if what == "runs":
        for r in inv["run_list"]:
            p(f"{r['run']}\t{r['origin']}\t{r['status']}\t{r['start'] or '—'}\t"
              + " ".join(f"{k}={v}" for k, v in r["factors"].items()))
    elif what == "factors":
        for f in inv["factors"]:
            p(f"{f['factor']}\t{_values_text(f['values'], limit=10**9)}")
    elif what == "metrics":
        for m in inv["metrics"]:
            p(f"{m['metric']}\t{m['unit'] or '—'}\t{m['direction'] or 'transcribed'}\t{m['runs']} runs")
            for r in m["roles"]:
                p(f"{r['form']}\t{m['unit'] or '—'}\t{m['direction'] or 'transcribed'}\t{r['runs']} runs")
    elif what == "hosts":
        for h in inv["hosts"]:
            p(f"{h['role']}\t{h['host'] or '(the run’s own host)'}\t{h['runs']} runs")


@interruptible
def list_main(argv: list[str] | None = None, prog: str = "kansoku list") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options()],
        description="One part of what a store holds, one entry a line (tab-separated, the name first): "
                    + "; ".join(f"{k}: {v}" for k, v in LISTS.items())
                    + ". The same inventory as kansoku info, which prints every part.",
        epilog=EPILOG)
    ap.add_argument("what", choices=list(LISTS), metavar="{" + ",".join(LISTS) + "}", help="what to list")
    ap.add_argument("--json", action="store_true", help="print it as JSON")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        part = "run_list" if args.what == "runs" else args.what
        _, inv = _read_inventory(args, parts=(part,))
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    if args.json:
        print(json.dumps(inv[part], ensure_ascii=False, indent=1))
    else:
        print_list(args.what, inv)
    return 0


# -- kansoku serve ----------------------------------------------------------------------------------------

def serve(out: Path, port: int, quiet: bool = False) -> int:
    """Serve the built site ``out`` as it is (kansoku build --serve, kansoku example --serve) on http://127.0.0.1:PORT/ until Ctrl-C (port 0: a free one, printed)."""
    import http.server  # only kansoku serve and --serve start a server

    if not (out / "index.html").is_file():
        print_error(f"{out} holds no built site (kansoku build writes it; kansoku build --serve builds and serves)")
        return 2

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 (http.server's name)
            if not quiet:
                super().log_message(format, *args)

    handler = functools.partial(Quiet, directory=str(out))
    try:
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        print_error(f"cannot serve on 127.0.0.1:{port}: {exc.strerror} (--port N chooses another)")
        return 2
    with httpd:
        print(f"serving {out} on http://127.0.0.1:{httpd.server_address[1]}/{LANGS[0]}/ (Ctrl-C to stop)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


@interruptible
def serve_main(argv: list[str] | None = None, prog: str = "kansoku serve") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options(), spec_options()],
        description="A live preview while a report is written: the reports are computed as by kansoku build, then "
                    "Hugo's own server serves the site on http://127.0.0.1:PORT/ from memory. A prose edit under "
                    "content/ is rendered at once and the browser reloads; a change of a spec (data/reports/*.toml), "
                    "of config.toml or of the store (kansoku ingest meanwhile) recomputes the reports first, once an "
                    "ingest still writing the store is done (--wait: how long the first computation waits). A problem "
                    "is printed here (Hugo's own also on the page) and the server goes on with the last good data. "
                    "Ctrl-C stops it. (kansoku build --serve serves the built public/ as it is published.)",
        epilog=EPILOG)
    ap.add_argument("--port", type=int, default=1313, help="port (default 1313; 0: a free one)")
    ap.add_argument("--content", type=Path, default=None, help="the reports' prose (default content/ in the site)")
    ap.add_argument("--strict", action="store_true",
                    help="a number a measured report's prose states as text, not through its data, is a problem")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        site = site_of(args)
        db, specs, content = args.db or site.db, args.specs or site.specs, args.content or site.content
        if not specs.is_dir():
            raise RunError(f"{specs}: no report specs (kansoku init DIR writes a site)")
        if not db.exists():
            raise RunError(f"no store at {db} (kansoku ingest RUNS makes it; kansoku init DIR RUNS writes a site "
                           "from runs)")
        from kansoku.app.serve import LiveSite, free_port, serve_live  # after the options: --help loads no builder
        live = LiveSite(site.root, db, specs, content, site.generated, site.config,
                        args.port or free_port(), wait_s=args.wait, quiet=args.quiet, strict=args.strict,
                        out=lambda line: print(line, flush=True), err=print_error, warn=print_warning,
                        on_wait=print_waiting, progress=progress_lines(args.quiet))
        return serve_live(live, LANGS)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
