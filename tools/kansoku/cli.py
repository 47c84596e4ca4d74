"""Command-line entry points: tools/ingest, tools/build, tools/pdf, tools/collect.

Exit codes: 0 success; 1 failure; 2 bad input (a file could not be parsed, run
metadata conflict); 3 bad report spec; 4 database busy; 5 a required external
program or font is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kansoku.errors import KansokuError

REPO = Path(__file__).resolve().parents[2]


def prepare_command(args: argparse.Namespace) -> None:
    """Make user-given paths absolute, then work from the repository root, so that the
    commands behave the same from any directory (specs, content and config are found).
    Also: output piped into `head` ends quietly, as with any Unix tool."""
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for key, value in vars(args).items():
        if isinstance(value, Path):
            setattr(args, key, value.resolve())
        elif isinstance(value, list) and value and all(isinstance(v, Path) for v in value):
            setattr(args, key, [v.resolve() for v in value])
    os.chdir(REPO)


EPILOG = "exit status: 0 ok, 1 failure, 2 bad input, 3 bad spec, 4 database busy, 5 missing program/font, " \
         "130 interrupted"
EXIT_INTERRUPTED = 130


def _version(ap: argparse.ArgumentParser) -> None:
    from importlib import metadata

    try:
        version = metadata.version("kansoku")
    except metadata.PackageNotFoundError:  # run from a checkout without pip install
        import tomllib

        with open(REPO / "pyproject.toml", "rb") as fh:
            version = tomllib.load(fh)["project"]["version"]
    ap.add_argument("--version", action="version", version=f"%(prog)s (kansoku) {version}")


def interruptible(main):
    """Ctrl-C ends a command with a one-line message and exit 130, never a traceback."""
    import functools

    @functools.wraps(main)
    def wrapper(argv: list[str] | None = None) -> int:
        try:
            return main(argv)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
    return wrapper


def print_error(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr)


def _progress(total_label: str):
    def wrap(items):
        items = list(items)
        if not sys.stderr.isatty() or len(items) < 20:
            return items
        from tqdm import tqdm

        return tqdm(items, desc=total_label, unit="file", file=sys.stderr, leave=False)
    return wrap


@interruptible
def ingest_main(argv: list[str] | None = None) -> int:
    from kansoku.interrupts import sigint_held

    # DuckDB's extension module must not be cut while it loads (a Ctrl-C there ends in nanobind's own
    # "Critical nanobind error" traceback): the Ctrl-C waits for the import, then ends the command as usual
    with sigint_held() as held:
        from kansoku.ingest.pipeline import Interrupted, ingest
        from kansoku.store.db import DEFAULT_DB
    if held:
        raise KeyboardInterrupt

    ap = argparse.ArgumentParser(
        prog="tools/ingest",
        description="Ingest run directories (pgbench, sar, iostat, vmstat, strace -c, fio, pg_test_fsync "
                    "outputs, recognised by content) into the kansoku DuckDB database. "
                    "All-or-nothing: if any file fails, nothing is stored.",
        epilog=EPILOG)
    ap.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="run directories or files")
    ap.add_argument("--db", type=Path, default=REPO / DEFAULT_DB, help=f"database file (default {DEFAULT_DB} in the repository)")
    ap.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                    help="if another process holds the database, wait this long for it (default: stop at once)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="list every file with the format it was read as (or why it was skipped) and every warning")
    ap.add_argument("--keep-going", action="store_true",
                    help="store the files that parse even when others fail; list the failures and exit 2")
    ap.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                    help="processes parsing files at once (default: every core when there are many files; "
                         "1: one at a time)")
    _version(ap)
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        report = ingest(args.paths, args.db, wait_s=args.wait, progress=_progress("ingest"),
                        on_wait=lambda m: print(m, file=sys.stderr), keep_going=args.keep_going, jobs=args.jobs)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    except Interrupted as exc:
        if exc.committed:
            print(f"interrupted after the ingest had committed: {args.db} holds this ingest's files",
                  file=sys.stderr)
        else:
            print(f"interrupted: nothing was stored; {args.db} is as it was", file=sys.stderr)
        return EXIT_INTERRUPTED
    try:
        if args.json:
            print(report.to_json())
        else:
            _print_ingest_summary(report, args.verbose)
    except KeyboardInterrupt:  # after the ingest returned: its outcome is known, say it (not just "interrupted")
        if report.committed:
            print(f"interrupted after the ingest had committed: {args.db} holds this ingest's files",
                  file=sys.stderr)
        else:
            print(f"interrupted: nothing was stored; {args.db} is as it was", file=sys.stderr)
        return EXIT_INTERRUPTED
    if report.ok and report.runs_seen == 0 and report.runs_transcribed == 0 and \
            not any(f.status in ("new", "replaced", "unchanged") for f in report.files):
        unusable = [f for f in report.files if f.status == "skipped" and f.format]
        if unusable:  # recognised, but none could be used (a pg_stat snapshot with no time): say so, and why
            print_error(f"0 runs: of the {len(report.files)} files under {', '.join(map(str, args.paths))}, "
                 f"{len(unusable)} are known tool outputs that cannot be used: "
                 + "; ".join(f"{f.path}: {f.reason}" for f in unusable[:3]))
        else:
            print_error(f"0 runs: none of the {len(report.files)} files under {', '.join(map(str, args.paths))} is a "
                 "known tool output (tools/ingest -v says why each was skipped)")
        return 2
    return 0 if report.ok else 2


def _print_ingest_summary(report, verbose: bool) -> None:
    from collections import Counter

    counts = report.counts()
    by_format = Counter()
    rows_by_format = Counter()
    for f in report.files:
        if f.status in ("new", "replaced", "unchanged"):
            by_format[f.format] += 1
            rows_by_format[f.format] += f.rows
    warnings = [w for f in report.files for w in f.warnings]
    out = sys.stdout if report.ok else sys.stderr
    if report.ok or report.committed:
        print(f"{report.db}: {counts.get('new', 0)} new, {counts.get('replaced', 0)} replaced, "
              f"{counts.get('unchanged', 0)} unchanged"
              + (f", {counts['removed']} removed (no longer in their run's directory)" if counts.get('removed') else "")
              + f" files; {report.runs_seen} runs "
              f"({report.runs_new} new, {report.runs_updated} updated)"
              + (f", {report.runs_transcribed} transcribed runs stored" if report.runs_transcribed else ""), file=out)
        for fmt, n in sorted(by_format.items()):
            print(f"  {fmt:<24} {n:>5} files {rows_by_format[fmt]:>10} rows", file=out)
    skipped = [f for f in report.files if f.status == "skipped"]
    if skipped:
        reasons = Counter(f.reason for f in skipped)
        print(f"  skipped {len(skipped)} files: " + ", ".join(f"{n} {r}" for r, n in reasons.most_common()), file=out)
        if verbose:
            for f in skipped:
                print(f"    {f.path}: {f.reason}", file=out)
    if warnings:
        print(f"  {len(warnings)} warnings" + ("" if verbose else " (-v lists them)"), file=out)
        for w in warnings if verbose else warnings[:5]:
            print(f"    {w}", file=out)
    if verbose:
        for f in report.files:
            if f.status == "skipped":
                continue  # listed above with the reason
            what = f"read as {f.format}" if f.format else "not read"
            print(f"    {f.path}: {what}, {f.status}" + (f", {f.rows} rows" if f.rows else "")
                  + (f": {f.reason}" if f.reason and f.status == "failed" else ""), file=out)
    if not report.ok and report.committed:
        print(f"error: {len(report.errors)} problem(s); --keep-going stored the rest in {report.db}; not stored:",
              file=sys.stderr)
        for e in report.errors:
            print(f"  {e}", file=sys.stderr)
    elif not report.ok:
        print(f"error: {len(report.errors)} file(s) could not be ingested; nothing was stored in {report.db}:",
              file=sys.stderr)
        for e in report.errors:
            print(f"  {e}", file=sys.stderr)


@interruptible
def build_main(argv: list[str] | None = None) -> int:
    from kansoku.app import build_site, preflight
    from kansoku.store.db import DEFAULT_DB

    ap = argparse.ArgumentParser(
        prog="tools/build",
        description="Compute every report's tables and figures from the database (data/reports/*.toml specs) "
                    "and build the bilingual site with Hugo.",
        epilog=EPILOG)
    ap.add_argument("--db", type=Path, default=REPO / DEFAULT_DB, help=f"database file (default {DEFAULT_DB} in the repository)")
    ap.add_argument("--out", type=Path, default=REPO / "public", help="output directory (default public/ in the repository)")
    ap.add_argument("--specs", type=Path, default=REPO / "data/reports", help="report spec directory (default data/reports)")
    ap.add_argument("--generated", type=Path, default=REPO / "data/generated",
                    help="where the computed data for Hugo is written (default data/generated)")
    ap.add_argument("--content", type=Path, default=REPO / "content",
                    help="the reports' prose (Markdown, ja and en; default content/ in the repository)")
    ap.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                    help="if another build writes the same output, or a process holds the database, wait this "
                         "long for it (default: stop at once)")
    ap.add_argument("--pdf", nargs="?", const="all", default=None, metavar="REPORT[,REPORT]",
                    help="also write these reports' PDFs (ja and en; default: every report) into the site as "
                         "pdf/REPORT.LANG.pdf, linked from every page of the report")
    _version(ap)
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        preflight(args.specs, args.db, args.content / "reports")  # every spec problem at once (exit 3)
        res = build_site(args.db, args.out, args.specs, generated=args.generated, content=args.content, wait_s=args.wait,
                    on_wait=lambda m: print(m, file=sys.stderr),
                    pdf=[p.strip() for p in args.pdf.split(",") if p.strip()] if args.pdf else None)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    print(f"built {args.out}/: {len(res.reports)} report(s) ({', '.join(res.reports)}), {res.tables} tables, "
          f"{res.figures} figures, {res.pages} pages" + (f", {len(res.pdfs)} PDFs" if res.pdfs else "")
          + f" in {res.seconds:.1f} s")
    return 0


@interruptible
def collect_main(argv: list[str] | None = None) -> int:
    from kansoku.collect.command import main

    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["queries"]:  # the benchmark of a query study: tools/collect queries … (collect/queries.py)
        from kansoku.collect.queries import main as queries_main

        return queries_main(argv[1:])
    if argv[:1] == ["--version"]:
        ap = argparse.ArgumentParser(prog="tools/collect")
        _version(ap)
        ap.parse_args(argv)
    return main(argv)


@interruptible
def pdf_main(argv: list[str] | None = None) -> int:
    from kansoku.app import build_pdf, build_pdfs, preflight
    from kansoku.store.db import DEFAULT_DB
    from kansoku.words import LANGS

    ap = argparse.ArgumentParser(
        prog="tools/pdf",
        description="Write a report as a PDF in one language, from the same sources as the site "
                    "(pandoc to typst, charts as SVG via kaleido and chromium).",
        epilog=EPILOG)
    ap.add_argument("report", help="report id (data/reports/REPORT.toml)")
    ap.add_argument("--lang", choices=[*LANGS, "all"], required=True,
                    help="language of the PDF; all: every language, sharing one computation and one chart export")
    ap.add_argument("--db", type=Path, default=REPO / DEFAULT_DB, help=f"database file (default {DEFAULT_DB} in the repository)")
    ap.add_argument("--out", type=Path, default=None, help="output file (default public/pdf/REPORT.LANG.pdf); with --lang all, a directory")
    ap.add_argument("--specs", type=Path, default=REPO / "data/reports", help="report spec directory (default data/reports)")
    _version(ap)
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        preflight(args.specs, args.db, REPO / "content" / "reports", report_id=args.report)

        def warn(message: str) -> None:
            print(f"warning: {message}", file=sys.stderr)

        if args.lang == "all":
            results = build_pdfs(args.report, LANGS, args.db, out_dir=args.out, spec_dir=args.specs,
                                 config=REPO / "config.toml", warn=warn)
        else:
            results = [build_pdf(args.report, args.lang, args.db, args.out, args.specs, config=REPO / "config.toml",
                                 warn=warn)]
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    for res in results:
        print(f"wrote {res.path}: {res.pages} pages in {res.seconds:.1f} s")
    return 0


@interruptible
def example_main(argv: list[str] | None = None) -> int:
    """Ingest the bundled example measurements, build the site and the example PDFs."""
    ap = argparse.ArgumentParser(
        prog="tools/example",
        description="Build the example site from the bundled measurements (data/runs, data/published): "
                    "ingest into data/kansoku.duckdb, build public/ with Hugo, write public/pdf/*.pdf; "
                    "with --serve, serve public/ on http://127.0.0.1:PORT/.",
        epilog=EPILOG)
    ap.add_argument("--serve", action="store_true", help="serve the site after building it")
    ap.add_argument("--port", type=int, default=1313, help="port for --serve (default 1313)")
    ap.add_argument("--no-pdf", action="store_true", help="skip the PDFs")
    _version(ap)
    args = ap.parse_args(argv)
    prepare_command(args)
    inputs = [str(p) for p in (REPO / "data" / "runs", REPO / "data" / "published") if p.is_dir()]
    rc = ingest_main(inputs + ["--wait", "60"])
    if rc != 0:
        return rc
    # the example's PDFs are built with the site, into it, and linked from its pages
    rc = build_main(["--wait", "60"] + ([] if args.no_pdf else ["--pdf", "example"]))
    if rc != 0:
        return rc
    print(f"open {REPO / 'public' / 'index.html'} via a web server, e.g. tools/example --serve")
    if args.serve:
        import functools
        import http.server

        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(REPO / "public"))
        with http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler) as httpd:
            print(f"serving http://127.0.0.1:{args.port}/ja/ (Ctrl-C to stop)")
            try:
                httpd.serve_forever()
            except KeyboardInterrupt:
                pass
    return 0
