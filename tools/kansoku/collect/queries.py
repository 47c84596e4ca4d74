"""Query studies: time a list of SQL statements one by one, as the benchmark of a run.

``tools/collect queries --conninfo CONNSTR [--mode explain,timing] [--repeat N] [--set NAME=VALUE]… FILE.sql``
runs in the run directory (it is the command ``tools/collect`` measures, so the monitors, ``run.toml`` and the
profile surround it) and writes, each for ingest to read by content (docs/formats.md §10):

``queries-explain.txt``  every statement under ``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` (psql -At)
``queries-timing.txt``   every statement run plainly with ``\\timing on``, its rows sent to /dev/null
``queries.sql``          the statement list as run (a copy)

Each statement is preceded by the marker ``-- kansoku query=ID repetition=N`` (psql's ``\\echo``), so a time is
never attached to the wrong statement. The list: statements end with ``;`` at the end of a line; a comment
``-- query: ID`` before a statement names it (else ``q1``, ``q2``, … by position). ``--set`` settings are applied
with ``SET`` at the start of each session (``--set max_parallel_workers_per_gather=2``). psql's errors go into
the same file, in order (``psql:FILE:LINE: ERROR: …``); a statement the server refuses does not stop the others,
but the command exits 3 so the run is recorded as failed, and ingest stores the statement as failed with its
line. ``--order random --seed N`` shuffles the statements within each repetition (reproducibly).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from kansoku.errors import ParseError, for_terminal, names_to_quote
from kansoku.parsers import textfile
from kansoku.parsers.queries.statement_list import MAX_BYTES, Statement, statements
from kansoku.parsers.queries.statement_list import QueryListError as ListError

EXPLAIN = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "
_SETTING = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.]*)=(?P<value>.*)$")


class QueryListError(Exception):
    pass


def read_list(path: Path) -> list[Statement]:
    """The statements of a query list, with their names and first lines (the one reading of a list:
    parsers/queries/statement_list.py, which ingest uses too); errors name the file and line."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:  # ingest would not read it back as the run's list
            with open(path, "rb") as fh:
                line = fh.read(MAX_BYTES).count(b"\n") + 1  # the line holding the first byte past the limit
            raise QueryListError(f"{path}:{line}: expected a query list of at most {MAX_BYTES >> 20} MiB, found "
                                 f"{size:,} bytes, the limit passed on line {line}")
        text = textfile.read_text(path, "query list")
    except OSError as exc:
        raise QueryListError(f"{path}: cannot read the query list ({exc.strerror or exc})") from None
    except ParseError as exc:
        raise QueryListError(str(exc)) from None
    try:
        return statements(text)
    except ListError as exc:
        raise QueryListError(f"{path}:{exc.line}: {exc}" if exc.line else f"{path}: {exc}") from None


def script(statements: list[Statement], mode: str, repeat: int, settings: list[tuple[str, str]],
           order: str, seed: int) -> tuple[str, dict[int, int]]:
    """The psql script of one mode: settings, then every statement of every repetition after its marker; and
    for each script line that holds a statement, the statement's line in the query list."""
    lines = ["\\set ON_ERROR_STOP 0"]
    # an escape string: psql reads it the same whether the server's standard_conforming_strings is on or off
    lines += [f"SET {n} = E'{v.replace(chr(92), chr(92) * 2).replace(chr(39), chr(39) * 2)}';" for n, v in settings]
    if mode == "timing":
        lines.append("\\timing on")
    rng = random.Random(seed)
    where: dict[int, int] = {}
    for rep in range(1, repeat + 1):
        todo = list(statements)
        if order == "random":
            rng.shuffle(todo)
        for s in todo:
            lines.append(f"\\echo '-- kansoku query={s.id} repetition={rep}'")
            if mode == "timing":
                lines.append("\\o /dev/null")
            first = len(lines) + 1  # the statement's first line in the script (1-based)
            lines.extend(((EXPLAIN if mode == "explain" else "") + s.sql).split("\n"))
            for k in range(s.sql.count("\n") + 1):
                where[first + k] = s.line + k
            if mode == "timing":
                lines.append("\\o")
    return "\n".join(lines) + "\n", where


def run_mode(conninfo: str, text: str, where: dict[int, int], out: Path, timeout: float | None) -> int:
    """Run one psql session, its script on stdin (no scratch file a kill -9 could leave); stdout and stderr into
    ``out`` in order. Returns the number of server errors (and 1 for a session stopped at ``timeout``)."""
    stopped = 0
    argv = ["psql", "-X", "-q", "-d", conninfo, "-f", "-"]
    if out.name.endswith("explain.txt"):
        argv[3:3] = ["-A", "-t"]
    with open(out, "wb") as fh:
        try:
            subprocess.run(argv, input=text.encode(), stdout=fh, stderr=subprocess.STDOUT, timeout=timeout,
                           check=False)
        except subprocess.TimeoutExpired:  # psql is killed; what it wrote stays, the run is failed
            print(f"error: {out}: the session stopped after {timeout:g} s (--timeout)", file=sys.stderr)
            stopped = 1
    body = out.read_text(errors="replace")
    # errors name the kept copy of the list and the statement's line in it, not the script psql read
    body = re.sub(r"^psql:<stdin>:(\d+):",
                  lambda m: f"psql:queries.sql:{where.get(int(m.group(1)), m.group(1))}:", body, flags=re.M)
    out.write_text(body)
    return stopped + len(re.findall(r"^psql:[^\n]*: (?:ERROR|FATAL):", body, flags=re.M))


def main(argv: list[str] | None = None, prog: str = "kansoku collect queries") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("queries", type=Path, help="the statement list (statements end with ';'; '-- query: ID' names one)")
    ap.add_argument("--conninfo", required=True, help="libpq connection string of the server under test")
    ap.add_argument("--mode", default="timing,explain",
                    help="comma-separated: timing (a plain run, psql \\timing) and/or explain (EXPLAIN ANALYZE, "
                         "BUFFERS, FORMAT JSON); default both, timing first")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions of the whole list within the run")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting for the sessions")
    ap.add_argument("--order", choices=["listed", "random"], default="listed")
    ap.add_argument("--seed", type=int, default=1, help="with --order random")
    ap.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="stop a session after this long")
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    bad = [m for m in modes if m not in ("timing", "explain")]
    if bad or not modes:
        ap.error(f"--mode: timing and/or explain, not {','.join(bad) or 'nothing'}")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    settings = []
    for s in args.set:
        m = _SETTING.match(s)
        if not m:
            ap.error(f"--set {s!r}: expected NAME=VALUE")
        settings.append((m["name"], m["value"]))
    if shutil.which("psql") is None:
        print("error: psql not found in PATH (Debian: apt-get install postgresql-client)", file=sys.stderr)
        return 5
    try:
        statements = read_list(args.queries)
    except QueryListError as exc:
        print(f"error: {for_terminal(str(exc), names_to_quote([args.queries]))}", file=sys.stderr)
        return 2
    shutil.copyfile(args.queries, "queries.sql") if args.queries.resolve() != Path("queries.sql").resolve() else None
    failed = 0
    for mode in modes:
        out = Path(f"queries-{mode}.txt")
        text, where = script(statements, mode, args.repeat, settings, args.order, args.seed)
        n = run_mode(args.conninfo, text, where, out, args.timeout)
        print(f"queries: {mode}: {len(statements)} statement(s) x {args.repeat}, {n} failed -> {out}", flush=True)
        failed += n
    if failed:
        print(f"error: {failed} statement(s) failed on the server (see queries-*.txt)", file=sys.stderr)
        return 3
    return 0
