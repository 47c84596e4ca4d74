"""What every command shares: its options (declared once, as argparse parent parsers), the site it works
on, its exit codes, ``--version``, ``-q`` and the progress lines of the slow steps."""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import time
import tomllib
from pathlib import Path
from typing import Iterable

from kansoku import resources
from kansoku.errors import RunError, for_terminal

EPILOG = "exit status: 0 ok, 1 failure, 2 bad input, 3 bad spec, 4 database busy, 5 missing program/font, " \
         f"130 interrupted. The manual: kansoku docs ({resources.DOCS_DIR})"
EXIT_INTERRUPTED = 130


def version() -> str:
    from importlib import metadata  # (loaded by --version alone: no small import for every start to pay)

    try:
        return metadata.version("kansoku")
    except metadata.PackageNotFoundError:  # run from a checkout without pip install
        with open(resources.SKELETON / "pyproject.toml", "rb") as fh:
            return tomllib.load(fh)["project"]["version"]


class VersionAction(argparse.Action):
    """--version: argparse's own, but the version is looked up when the option is given, not on every start."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} (kansoku) {version()}")
        parser.exit()


def add_version(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--version", action=VersionAction)


def common_options() -> argparse.ArgumentParser:
    """Every command: --site, -q, --version."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--site", type=Path, metavar="DIR",
                    help="the site: its specs (data/reports), prose (content), database and output (public) "
                         "(default: the first directory from the current one upward holding config.toml or "
                         "data/reports" + ("; else this checkout" if resources.CHECKOUT else "") + ")")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors and warnings")
    add_version(ap)
    return ap


def store_options(what: str = "database file") -> argparse.ArgumentParser:
    """Commands that open the store: --db, --wait."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--db", type=Path, default=None, help=f"{what} (default data/kansoku.duckdb in the site)")
    ap.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                    help="if another process holds the database (or another build writes the same output), wait "
                         "this long for it (default: stop at once)")
    return ap


def spec_options() -> argparse.ArgumentParser:
    """Commands that read report specs: --specs."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--specs", type=Path, default=None, help="report spec directory (default data/reports in the site)")
    return ap


def site_of(args: argparse.Namespace) -> resources.Site:
    """The site the command works on: --site, else found from the current directory upward, else (tools/*
    in a checkout) the checkout."""
    if getattr(args, "site", None):
        if not args.site.is_dir():
            raise RunError(f"--site {args.site}: not a directory")
        return resources.Site(args.site.resolve())
    try:
        return resources.Site(resources.find_site())
    except RunError:
        if resources.CHECKOUT is not None:
            return resources.Site(resources.CHECKOUT)
        raise


def prepare_command(args: argparse.Namespace) -> None:
    """User-given paths made absolute (the commands never change directory); output piped into `head` ends
    quietly, as with any Unix tool."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for key, value in vars(args).items():
        if isinstance(value, Path):
            setattr(args, key, value.resolve())
        elif isinstance(value, list) and value and all(isinstance(v, Path) for v in value):
            setattr(args, key, [v.resolve() for v in value])


def interruptible(main):
    """Ctrl-C ends a command with a one-line message and exit 130, never a traceback."""

    @functools.wraps(main)
    def wrapper(argv: list[str] | None = None, **kwargs) -> int:
        try:
            return main(argv, **kwargs)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
    return wrapper


def print_error(msg: str, names: Iterable[str] = ()) -> None:
    """``names``: file names the message may quote that hold a control character (errors.names_to_quote)."""
    print(f"error: {for_terminal(msg, names)}", file=sys.stderr)


def print_warning(msg: str, names: Iterable[str] = ()) -> None:
    print(f"warning: {for_terminal(msg, names)}", file=sys.stderr)


def print_waiting(msg: str) -> None:
    """What a command says on stderr while it waits for a store that another process holds (--wait)."""
    print(msg, file=sys.stderr)


def site_preflight(args: argparse.Namespace, site: resources.Site, specs: Path, db: Path, content: Path, **more):
    """The build's preflight over a site's specs and prose (kansoku build, pdf and check alike): every problem
    at once (exit 3), waiting --wait for the store, its waiting and its warnings on stderr. ``more``: the
    preflight's own (strict, clean, report_id). Returns the reports it checked."""
    from kansoku.app import preflight  # called after the options: --help, --version load no DuckDB

    return preflight(specs, db, content / "reports", content=content, config=site.config, site_root=site.root,
                     wait_s=args.wait, on_wait=print_waiting, warn=print_warning, **more)


def progress_lines(quiet: bool):
    """The steps of a slow command on stderr, each with the seconds since the command started (nothing with
    -q)."""
    if quiet:
        return None
    t0 = time.monotonic()

    def say(message: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f} s] {message}", file=sys.stderr, flush=True)
    return say
