"""psql ``\\timing`` output (docs/formats.md §10.2): a ``Time: 123.597 ms`` line after each statement (from
PostgreSQL 10 ``Time: 1104.236 ms (00:01.104)`` beyond a second; a decimal comma under some ``LC_NUMERIC``),
between the statements' own output, which is ignored. ``tools/collect`` echoes a marker before each statement
(``-- kansoku query=q1 repetition=1``) and sends the results to ``/dev/null``; without markers the statements
are ``#1``, ``#2``, … in order. psql prints a time for a statement the server refused too: one preceded by an
``ERROR:`` line is stored as ``failed``, without a time, and warned with its line.
"""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.queries.common import MARKER, MARKER_START, PSQL_ERROR
from kansoku.parsers.queries.tables import BOUNDS, TABLES

TIME = re.compile(r"^Time: (?P<ms>\d+(?:[.,]\d+)?) ms(?: \((?:\d+ d )?[\d:.,]+\))?\s*$", re.ASCII)
EXPECTED = "psql's 'Time: N.NNN ms' line (\\timing on)"


def sniff(head: FileHead) -> bool:
    if head.is_binary or "Time: " not in head.text:
        return False
    lines = head.text.split("\n")
    return any(TIME.match(l.rstrip("\r")) for l in lines[:2000]) and \
        ("Timing is on." in head.text or any(MARKER.match(l) for l in lines[:200]))


BATCH = 10_000  # statements handed to the sink at a time: memory stays flat in the file's length


def parse(path: Path, sink: Sink) -> None:
    """One line at a time, the statements handed to the sink a batch at a time (a long study's output, with
    its statements' rows, reaches gigabytes)."""
    statements: list[dict] = []
    count = 0
    marked = False  # a marker was seen: from then on every timed statement has its own
    marker: tuple[str, int, int] | None = None
    error: tuple[str, int] | None = None
    first_line: int | None = None
    last = 0

    def add(ms: float | None, lineno: int) -> None:
        nonlocal marker, error, first_line, count
        count += 1
        if marker is None and marked:
            raise ParseError(path, first_line or lineno, "a statement marker ('-- kansoku query=ID repetition=N') "
                             "before each timed statement, as before the others of this file",
                             f"a 'Time:' line at line {lineno} without one (a damaged marker?)")
        query, rep, at = marker if marker else (f"#{count}", 1, first_line or lineno)
        row = {"query": query, "repetition": rep, "statement_no": count, "mode": "timing", "line": at,
               "status": "failed" if error else "ok", "elapsed_ms": None if error else ms,
               "error": error[0] if error else None}
        if error:
            sink.warn(error[1], f"query {query} (repetition {rep}) failed on the server: {error[0][:120]}; "
                      "stored as failed, without a time")
        statements.append(row)
        if len(statements) >= BATCH:
            sink.add_rows("query_statements", statements)
            statements.clear()
        marker, error, first_line = None, None, None

    for lineno, line, cut in textfile.stream_lines(path, "psql \\timing output"):
        last = lineno
        if cut:
            sink.warn(lineno, "the last line is cut off (file ends without a newline); skipped")
            break
        m = MARKER.match(line)
        if m:
            if marker is not None:
                if error is None:
                    raise ParseError(path, marker[2], f"a 'Time:' line for query {marker[0]} before the next marker",
                                     f"the marker at line {lineno}")
                add(None, lineno)
            marker, first_line, marked = (m["query"], int(m["rep"]), lineno), None, True
            continue
        if line.startswith(MARKER_START):
            raise ParseError(path, lineno, "a statement marker '-- kansoku query=ID repetition=N'", line[:80])
        e = PSQL_ERROR.match(line)
        if e:
            error = error or (e["msg"].strip(), lineno)
            continue
        if line.startswith("Time:"):
            t = TIME.match(line)
            if not t:
                raise ParseError(path, lineno, EXPECTED, line[:80])
            add(float(t["ms"].replace(",", ".")), lineno)
            continue
        if line.strip() and line.strip() != "Timing is on." and first_line is None:
            first_line = lineno
    if marker is not None:
        if error is None:
            raise ParseError(path, marker[2], f"a 'Time:' line for query {marker[0]}", "the end of the file (cut short?)")
        add(None, last)
    if not count:
        raise ParseError(path, None, EXPECTED, "no timed statement")
    if statements:
        sink.add_rows("query_statements", statements)


FORMATS = [Format("query", "psql-timing", "psql \\timing output (Time: N ms per statement)", sniff, parse, priority=4)]

MODULE = ParserModule(name="query_timing", formats=FORMATS, tables=TABLES, bounds=BOUNDS)
