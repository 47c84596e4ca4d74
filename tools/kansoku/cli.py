"""Command-line entry points: ``kansoku COMMAND`` (ingest, build, pdf, compare, collect, example; init, check,
info, serve, docs: cli_site.py), the same
commands as ``kansoku-COMMAND`` and as the checkout's ``tools/COMMAND`` (thin wrappers). Their shared options
are declared once (``cli_options``).

Exit codes: 0 success; 1 failure; 2 bad input (a file could not be parsed, run
metadata conflict); 3 bad report spec; 4 database busy; 5 a required external
program or font is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from kansoku.cli_compare import compare_main
from kansoku.cli_options import (
    EPILOG,
    EXIT_INTERRUPTED,
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
from kansoku.cli_site import check_main, docs_main, info_main, init_main, list_main, serve, serve_main
from kansoku.errors import KansokuError, for_terminal, names_to_quote
from kansoku.interrupts import sigint_held
from kansoku.words import LANGS

__all__ = ["main", "ingest_main", "build_main", "pdf_main", "compare_main", "collect_main", "example_main",
           "init_main", "check_main", "info_main", "list_main", "serve_main", "docs_main"]


def _progress(total_label: str, quiet: bool = False):
    def wrap(items):
        items = list(items)
        if quiet or not sys.stderr.isatty() or len(items) < 20:
            return items
        from tqdm import tqdm  # only when a progress bar is drawn

        return tqdm(items, desc=total_label, unit="file", file=sys.stderr, leave=False)
    return wrap


@interruptible
def ingest_main(argv: list[str] | None = None, prog: str = "kansoku ingest") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options()],
        description="Ingest run directories (pgbench, sar, iostat, vmstat, strace -c, fio, pg_test_fsync "
                    "outputs, recognised by content) into the kansoku DuckDB database. "
                    "All-or-nothing: if any file fails, nothing is stored.",
        epilog=EPILOG)
    ap.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="run directories or files")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="list every file with the format it was read as (or why it was skipped) and every warning")
    ap.add_argument("--keep-going", action="store_true",
                    help="store the files that parse even when others fail; list the failures and exit 2")
    ap.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                    help="processes parsing files at once (default: every core when there are many files; "
                         "1: one at a time)")
    args = ap.parse_args(argv)  # --help, --version and bad options exit here, before DuckDB is loaded
    prepare_command(args)
    # DuckDB's extension module must not be cut while it loads (a Ctrl-C there ends in nanobind's own
    # "Critical nanobind error" traceback): the Ctrl-C waits for the import, then ends the command as usual
    with sigint_held() as held:
        # after the options: --help loads no parser nor DuckDB
        from kansoku.ingest.pipeline import IngestSummary, Interrupted, ingest, stop_hasher
    if held:
        raise KeyboardInterrupt
    try:
        args.db = args.db or site_of(args).db
        report = ingest(args.paths, args.db, wait_s=args.wait, progress=_progress("ingest", args.quiet),
                        on_wait=print_waiting, keep_going=args.keep_going, jobs=args.jobs)
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
            from kansoku.model import encode  # (the computed report's records: an ingest needs them for --json only)

            print(json.dumps(encode(IngestSummary.of(report)), indent=2, ensure_ascii=False))
        elif args.quiet:
            _print_ingest_summary(report, False, quiet=True)
        else:
            _print_ingest_summary(report, args.verbose)
        stop_hasher()
    except KeyboardInterrupt:  # after the ingest returned: its outcome is known, say it (not just "interrupted")
        if report.committed:
            print(f"interrupted after the ingest had committed: {args.db} holds this ingest's files",
                  file=sys.stderr)
        else:
            print(f"interrupted: nothing was stored; {args.db} is as it was", file=sys.stderr)
        return EXIT_INTERRUPTED
    if report.ok and report.runs_seen == 0 and report.runs_transcribed == 0 and \
            not any(f.status in ("new", "replaced", "unchanged", "checked") for f in report.files):
        unusable = [f for f in report.files if f.status == "skipped" and f.format]
        names = names_to_quote(f.path for f in report.files)
        if unusable:  # recognised, but none could be used (a pg_stat snapshot with no time): say so, and why
            print_error(f"0 runs: of the {len(report.files)} files under {', '.join(map(str, args.paths))}, "
                 f"{len(unusable)} are known tool outputs that cannot be used: "
                 + "; ".join(f"{f.path}: {f.reason}" for f in unusable[:3]), names)
        else:
            print_error(f"0 runs: none of the {len(report.files)} files under {', '.join(map(str, args.paths))} is a "
                 "known tool output (tools/ingest -v says why each was skipped)", names)
        return 2
    return 0 if report.ok else 2


def _print_ingest_summary(report, verbose: bool, quiet: bool = False) -> None:
    """The summary on stdout (on stderr when a file failed); with ``quiet``, only the failures."""
    names = names_to_quote(f.path for f in report.files)

    def say(text: str, file) -> None:  # every name a file system gave, as the terminal may show it
        print(for_terminal(text, names), file=file)

    counts = report.counts()
    by_format = Counter()
    rows_by_format = Counter()
    checked_by_format = Counter()
    for f in report.files:
        if f.status in ("new", "replaced", "unchanged"):
            by_format[f.format] += 1
            rows_by_format[f.format] += f.rows
        elif f.status == "checked":
            checked_by_format[f.format] += 1
    warnings = [w for f in report.files for w in f.warnings]
    out = sys.stdout if report.ok else sys.stderr
    if (report.ok or report.committed) and not quiet:
        say(f"{report.db}: {counts.get('new', 0)} new, {counts.get('replaced', 0)} replaced, "
              f"{counts.get('unchanged', 0)} unchanged"
              + (f", {counts['checked']} checked (renderings of a sa file compared on a sample, not parsed)"
                 if counts.get('checked') else "")
              + (f", {counts['removed']} removed (no longer in their run's directory)" if counts.get('removed') else "")
              + f" files; {report.runs_seen} runs "
              f"({report.runs_new} new, {report.runs_updated} updated)"
              + (f", {report.runs_transcribed} transcribed runs stored" if report.runs_transcribed else ""), file=out)
        for fmt in sorted(set(by_format) | set(checked_by_format)):
            n = by_format.get(fmt, 0)
            say(f"  {fmt:<24} {n:>5} files {rows_by_format[fmt]:>10} rows"
                  + (f", {checked_by_format[fmt]} checked" if checked_by_format.get(fmt) else ""), file=out)
    skipped = [f for f in report.files if f.status == "skipped"]
    if skipped and not quiet:
        reasons = Counter(f.reason for f in skipped)
        say(f"  skipped {len(skipped)} files: " + ", ".join(f"{n} {r}" for r, n in reasons.most_common()), file=out)
        if verbose:
            for f in skipped:
                say(f"    {f.path}: {f.reason}", file=out)
    if warnings and not quiet:
        say(f"  {len(warnings)} warnings" + ("" if verbose else " (-v lists them)"), file=out)
        for w in warnings if verbose else warnings[:5]:
            say(f"    {w}", file=out)
    if verbose:
        for f in report.files:
            if f.status == "skipped":
                continue  # listed above with the reason
            what = (f"kept as {f.format}" if f.status == "checked" else f"read as {f.format}") if f.format else "not read"
            say(f"    {f.path}: {what}, {f.status}" + (f", {f.rows} rows" if f.rows else "")
                  + (f": {f.reason}" if f.reason else ""), file=out)
    if not report.ok and report.committed:
        say(f"error: {len(report.errors)} problem(s); --keep-going stored the rest in {report.db}; not stored:",
              file=sys.stderr)
        for e in report.errors:
            say(f"  {e}", file=sys.stderr)
    elif not report.ok:
        say(f"error: {len(report.errors)} file(s) could not be ingested; nothing was stored in {report.db}:",
              file=sys.stderr)
        for e in report.errors:
            say(f"  {e}", file=sys.stderr)


def memory_size(text: str) -> str:
    """--memory-limit: a size DuckDB reads (a number and KB, MB, GB or TB; KiB, MiB, GiB, TiB), as given."""
    size = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*[kmgt]i?b\s*", text, re.I)
    if not size or not float(size.group(1)) > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a size such as 500MB or 2GB")
    return text.strip()


@interruptible
def build_main(argv: list[str] | None = None, prog: str = "kansoku build") -> int:
    from kansoku.store.limits import BUILD_MEMORY_LIMIT  # not kansoku.store.db: --help needs no DuckDB

    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options(), spec_options()],
        description="Compute every report's tables and figures from the database (the site's data/reports/*.toml "
                    "specs) and build the bilingual site with Hugo.",
        epilog=EPILOG)
    ap.add_argument("--out", type=Path, default=None, help="output directory (default public/ in the site)")
    ap.add_argument("--generated", type=Path, default=None,
                    help="where the computed data for Hugo is written (default data/generated in the site)")
    ap.add_argument("--content", type=Path, default=None,
                    help="the reports' prose (Markdown, one file per language; default content/ in the site)")
    ap.add_argument("--pdf", nargs="?", const="all", default=None, metavar="REPORT[,REPORT]",
                    help="also write these reports' PDFs (every language; default: every report) into the site as "
                         "pdf/REPORT.LANG.pdf, linked from every page of the report")
    ap.add_argument("--memory-limit", type=memory_size, default=BUILD_MEMORY_LIMIT, metavar="SIZE",
                    help=f"DuckDB's memory while the reports are computed, e.g. 2GB (default {BUILD_MEMORY_LIMIT}; "
                         "what does not fit is spilled to disk)")
    ap.add_argument("--strict", action="store_true",
                    help="a number that a measured report's prose states as text, not through its data "
                         "({{< val … >}}), is an error (exit 3), not a warning")
    ap.add_argument("--serve", action="store_true", help="serve the built site on http://127.0.0.1:PORT/ as it "
                                                         "is (kansoku serve: a live preview while writing)")
    ap.add_argument("--port", type=int, default=1313, help="port for --serve (default 1313; 0: a free one)")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        site = site_of(args)
        db, out, specs = args.db or site.db, args.out or site.out, args.specs or site.specs
        generated, content = args.generated or site.generated, args.content or site.content
        # every spec problem at once (exit 3); a spec found clean by an earlier build is not checked against
        # the schema again while its text and the code are the same (render/hugo.py BUILD_CACHE)
        reports = site_preflight(args, site, specs, db, content, strict=args.strict,
                                 clean=generated / "build-cache" / "specs-checked.json")
        from kansoku.app import build_site  # after the preflight: a spec problem loads no renderer

        res = build_site(db, out, specs, generated=generated, content=content, wait_s=args.wait, reports=reports,
                         on_wait=print_waiting, config=site.config, site_root=site.root,
                         pdf=[p.strip() for p in args.pdf.split(",") if p.strip()] if args.pdf else None,
                         progress=progress_lines(args.quiet), memory_limit=args.memory_limit, in_child=True)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    if res.raw_at_link_limit:
        from kansoku import words

        print_warning(words.t("en", "warn_raw_at_link_limit", len(res.raw_at_link_limit),
                              copy=res.raw_at_link_limit[0]))
    if not args.quiet:
        print(f"built {out}/: {len(res.reports)} report(s) ({', '.join(res.reports)}), {res.tables} tables, "
              f"{res.figures} figures, {res.pages} pages" + (f", {len(res.pdfs)} PDFs" if res.pdfs else "")
              + f" in {res.seconds:.1f} s")
    if args.serve:
        return serve(out, args.port, args.quiet)
    return 0


@interruptible
def collect_main(argv: list[str] | None = None, prog: str = "kansoku collect") -> int:
    """Its own options (collect/command.py: -q among them); ``queries`` is the benchmark of a query study."""
    from kansoku.collect.command import main  # each collect command loads its own modules only

    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["queries"]:  # the benchmark of a query study: kansoku collect queries … (collect/queries.py)
        from kansoku.collect.queries import main as queries_main  # as above

        return queries_main(argv[1:], prog=f"{prog} queries")
    if argv[:1] == ["--version"]:
        ap = argparse.ArgumentParser(prog=prog)
        add_version(ap)
        ap.parse_args(argv)
    return main(argv, prog)


@interruptible
def pdf_main(argv: list[str] | None = None, prog: str = "kansoku pdf") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options(), spec_options()],
        description="Write a report as a PDF in one language, from the same sources as the site "
                    "(pandoc to typst, charts as SVG via kaleido and chromium).",
        epilog=EPILOG)
    ap.add_argument("report", help="report id (data/reports/REPORT.toml)")
    ap.add_argument("--lang", choices=[*LANGS, "all"], required=True,
                    help="language of the PDF; all: every language, sharing one computation and one chart export")
    ap.add_argument("--out", type=Path, default=None,
                    help="output file (default public/pdf/REPORT.LANG.pdf in the site); with --lang all, a directory")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        site = site_of(args)
        db, specs, content_root = args.db or site.db, args.specs or site.specs, site.content / "reports"
        site_preflight(args, site, specs, db, site.content, report_id=args.report)
        from kansoku.app import build_pdf, build_pdfs  # after the preflight (as build_main)

        on_wait, warn = print_waiting, print_warning
        progress = progress_lines(args.quiet)
        if args.lang == "all":
            results = build_pdfs(args.report, LANGS, db, out_dir=args.out or site.out / "pdf", spec_dir=specs,
                                 content_root=content_root, config=site.config, warn=warn, progress=progress,
                                 wait_s=args.wait, on_wait=on_wait)
        else:
            out = args.out or site.out / "pdf" / f"{args.report}.{args.lang}.pdf"
            results = [build_pdf(args.report, args.lang, db, out, specs, content_root=content_root,
                                 config=site.config, warn=warn, progress=progress, wait_s=args.wait,
                                 on_wait=on_wait)]
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    if not args.quiet:
        for res in results:
            print(f"wrote {res.path}: {res.pages} pages in {res.seconds:.1f} s")
    return 0


@interruptible
def example_main(argv: list[str] | None = None, prog: str = "kansoku example") -> int:
    """Ingest the bundled example measurements, build the site and every report's PDFs."""
    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options()],
        description="Build the example site from the measurements of a kansoku checkout (data/runs, "
                    "data/published): ingest into data/kansoku.duckdb, build public/ with Hugo, write "
                    "public/pdf/*.pdf; with --serve, serve public/ on http://127.0.0.1:PORT/.",
        epilog=EPILOG)
    ap.add_argument("--serve", action="store_true", help="serve the site after building it")
    ap.add_argument("--port", type=int, default=1313, help="port for --serve (default 1313)")
    ap.add_argument("--no-pdf", action="store_true", help="skip the PDFs")
    args = ap.parse_args(argv)
    prepare_command(args)
    try:
        site = site_of(args)
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    inputs = [str(p) for p in (site.root / "data" / "runs", site.root / "data" / "published") if p.is_dir()]
    if not inputs:
        print_error(f"{site.root} has no data/runs or data/published: the example is the campaign of a kansoku "
                    "checkout (--site DIR names one)")
        return 2
    shared = ["--site", str(site.root), "--wait", "60"] + (["-q"] if args.quiet else [])
    rc = ingest_main(inputs + shared)
    if rc != 0:
        return rc
    # every report's PDFs (the example's and the past reports') are built with the site, into it, and linked
    # from its pages
    rc = build_main(shared + ["--strict"] + ([] if args.no_pdf else ["--pdf"]))
    if rc != 0:
        return rc
    if args.serve:
        return serve(site.out, args.port, args.quiet)
    if not args.quiet:
        print(f"open {site.out / 'index.html'} via a web server, e.g. kansoku serve or kansoku example --serve")
    return 0


COMMANDS = {
    "ingest": (ingest_main, "load run directories into the database"),
    "build": (build_main, "compute the reports and build the site with Hugo"),
    "pdf": (pdf_main, "write a report as a PDF"),
    "compare": (compare_main, "compare two selections of runs condition by condition"),
    "collect": (collect_main, "measure benchmark runs (monitors, metadata, settings) into run directories"),
    "example": (example_main, "build the example site and PDFs from a checkout's bundled measurements"),
    "init": (init_main, "write a new site: config, a report spec, its prose pages, next steps"),
    "check": (check_main, "check the specs and prose against the store, without building (exit 3)"),
    "info": (info_main, "list what a store holds: campaigns, studies, factors, metrics, hosts, runs"),
    "list": (list_main, "list one part of what a store holds: runs, factors, metrics or hosts"),
    "serve": (serve_main, "a live preview on 127.0.0.1: Hugo's server, recomputing on a spec or store change"),
    "docs": (docs_main, "where the installed manual, schemas and example plans are; print one"),
}


def main(argv: list[str] | None = None) -> int:
    """``kansoku COMMAND [options]``: each command parses its own options (``kansoku COMMAND --help``)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]][0](argv[1:], prog=f"kansoku {argv[0]}")
    ap = argparse.ArgumentParser(
        prog="kansoku", description="PostgreSQL benchmark results to a bilingual Hugo site and PDF.",
        epilog="kansoku COMMAND --help lists a command's options. " + EPILOG)
    add_version(ap)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (_, help_) in COMMANDS.items():
        sub.add_parser(name, help=help_, add_help=False)
    ap.parse_args(argv)  # --help, --version, or an unknown command (argparse says which, exit 2)
    ap.print_usage(sys.stderr)
    print("kansoku: error: a COMMAND is required", file=sys.stderr)
    return 2
