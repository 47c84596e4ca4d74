"""Plausibility bounds: what a tool can print, declared as one table per format next to its parser.

A parser stores what the file says; these tables say which values no version of the tool can print
(a negative TPS, a latency of 9.2e18 ms, a checkpoint dated 1900, NaN in an integer sum). After a file is
parsed, the ingest checks the rows it stored against its module's table (``check``): a value outside a
bound is a ParseError naming the file and the line (a table that keeps no line finds it in the file again by
the row's fields, or its parser refuses the row as it reads it: ``refuse_outside``), and nothing of the ingest
is stored. A value a tool really prints but that is unusual (``warn_above``) is stored as
printed with one warning per bound naming the first line.

``unique`` declares the columns that identify one row of a file: a repeat is a file holding its lines
twice (concatenated, appended twice), which would be counted twice; it is refused.

``TEXT`` declares, per format, the longest line the tool can print, and whether its content may repeat: before a
file is parsed (``check_text``) a longer line is refused with its line (a reader skipping it would lose the
lines it swallowed without a word), and so is a file whose second half repeats its first byte for byte (a log
appended to itself: every count doubled), whatever the format's tables declare.

The tables are data: ``docs/formats.md`` quotes them, and ``tests/test_bounds.py`` checks every bound of
every table both ways (a value just inside is stored, one outside is refused).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from kansoku.errors import ParseError

# Every wall-clock time a benchmark tool prints: after the first sysstat/pgbench release that could
# print it and before any machine this tool will meet (1970 is an epoch of 0, 1900 a broken clock).
EARLIEST = datetime(1995, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2100, 1, 1, tzinfo=timezone.utc)
EARLIEST_EPOCH_S = EARLIEST.timestamp()
LATEST_EPOCH_S = LATEST.timestamp()
# No benchmark lasts longer than this: a latency or duration beyond it is a damaged number.
LONGEST_S = 400 * 86400.0
LONGEST_MS = LONGEST_S * 1e3
LONGEST_US = LONGEST_S * 1e6
# A rate no machine reaches (transactions, I/Os or calls per second).
FASTEST_PER_S = 1e10
# Counts: anything a 64-bit counter holds is printable, but a count beyond this in one run is a damaged number.
MOST = 1e16


# The ends of the store's INTEGER and BIGINT columns: a count at or beyond its column's is a damaged number,
# refused where it is read (a row that keeps no line could not be named by the store's own check)
INTEGER_END, BIGINT_END = 2 ** 31, 2 ** 63

@dataclass(frozen=True)
class Bound:
    """One column's printable range (inclusive). ``low``/``high`` None: unbounded on that side, yet NaN and
    infinities are always refused. ``where``: SQL selecting the rows the bound applies to."""

    column: str
    low: float | datetime | None
    high: float | datetime | None
    why: str  # what the tool can print, in a few words (the error message quotes it)
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()  # the rows it applies to: ((column, (values...)), ...)
    warn_above: float | None = None  # stored as printed, warned, between warn_above and high


@dataclass(frozen=True)
class TableBounds:
    table: str
    bounds: tuple[Bound, ...] = ()
    line: str | None = "line"  # the column holding the row's line in the file, None when it keeps none
    at: str | None = None  # SQL naming a row for the message when it has no line
    unique: tuple[str, ...] = ()  # columns identifying one row of a file: a repeat is refused
    unique_what: str = ""  # what a repeated row is, for the message
    # a table keeping no line: the columns read from a line's whitespace-separated fields, by position, so that
    # a refused row's line is found by reading the file again (a refusal alone pays for it)
    fields: tuple[tuple[str, int], ...] = ()
    separator: str | None = None  # what separates those fields when not whitespace (fio's logs: ',')


def _range_sql(b: Bound, key: str = "") -> tuple[str, dict[str, Any]]:
    """SQL true for a value outside the bound (NaN and infinities included), and its parameters (named with
    ``key`` appended, so that several bounds share one statement)."""
    c = b.column
    params: dict[str, Any] = {}
    parts = []
    dated = isinstance(b.low, datetime) or isinstance(b.high, datetime)
    if not dated:  # NaN compares greater than every number in DuckDB; test it (and the infinities) explicitly
        parts.append(f"isnan({c}::DOUBLE) OR isinf({c}::DOUBLE)")
    if b.low is not None:
        parts.append(f"{c} < $lo{key}")
        params[f"lo{key}"] = b.low if dated else float(b.low)
    if b.high is not None:
        parts.append(f"{c} > $hi{key}")
        params[f"hi{key}"] = b.high if dated else float(b.high)
    return " OR ".join(parts) or "false", params


def where_sql(b: Bound) -> str:
    """SQL selecting the rows a bound applies to ('' for every row)."""
    return " AND ".join(f"{c} IN ({', '.join(repr(str(v)) for v in vs)})" for c, vs in b.where)


def _shown(v: Any) -> str:
    if isinstance(v, datetime):
        return v.isoformat()
    return repr(v)


def _expected(b: Bound) -> str:
    if b.low is not None and b.high is not None:
        rng = f"between {_shown(b.low)} and {_shown(b.high)}"
    elif b.low is not None:
        rng = f"at least {_shown(b.low)}"
    elif b.high is not None:
        rng = f"at most {_shown(b.high)}"
    else:
        rng = "a finite number"
    return f"{b.column} {rng} ({b.why})"


def check(sink, tables) -> None:
    """Check the rows the parser stored (``sink.own_rows``) against the bounds of the tables it wrote: one
    pass over a table's rows for all its bounds (a transaction log has millions), then the repeats.

    The pass only counts the rows outside each bound (comparisons, no per-row strings); the row named in
    the error (the first outside the bound, in line order) is looked up in a second statement, run only for
    a bound that has one. Building the row's description for every row would cost several times the counting pass."""
    written = getattr(sink, "tables", None)
    added = getattr(sink, "added_rows", None)
    for tb in tables:
        if written is not None and tb.table not in written:
            continue
        rows = added(tb.table) if added is not None else None
        if rows is not None and _inside(tb, rows):
            continue  # the rows the parser handed over, as stored: none outside, above a warning or repeated
        line = tb.line or "NULL::INTEGER"
        at = tb.at or "NULL::VARCHAR"
        columns, params, outside = [], {}, []
        for i, b in enumerate(tb.bounds):
            cond, p = _range_sql(b, str(i))
            params.update(p)
            applies = f"({where_sql(b)}) AND " if b.where else ""
            outside.append((f"{applies}{b.column} IS NOT NULL AND ({cond})", p))
            columns.append(f"count(*) FILTER (WHERE {outside[-1][0]})")
            if b.warn_above is not None:
                params[f"w{i}"] = float(b.warn_above)
                above = f"FILTER (WHERE {applies}{b.column} > $w{i})"
                columns += [f"count(*) {above}", f"min({line}) {above}", f"max({b.column}) {above}"]
        found = sink.own_rows(tb.table, f"SELECT {', '.join(columns)} FROM {{rows}}", params)[0] if columns else ()
        k = 0
        for b, (cond, p) in zip(tb.bounds, outside):
            n_bad = found[k]
            k += 1
            if n_bad:
                # the first row outside the bound (in line order, rows without a line last)
                keys = "".join(f", k{i} := {c}" for i, (c, _) in enumerate(tb.fields))
                bad = sink.own_rows(tb.table, f"SELECT arg_min(struct_pack(ln := {line}, at := ({at})::VARCHAR, "
                                              f"v := {b.column}{keys}), coalesce({line}, 9223372036854775807)) "
                                              f"FROM {{rows}} WHERE {cond}", p)[0][0]
                v = bad["v"]
                shown = _shown(v) if not isinstance(v, float) else repr(v)
                ln = bad["ln"]
                if ln is None and tb.fields:
                    ln = line_of(sink.path, [(pos, bad[f"k{i}"]) for i, (_, pos) in enumerate(tb.fields)],
                                 separator=tb.separator)
                raise ParseError(sink.path, ln, _expected(b) + (f" ({bad['at']})" if bad["at"] else ""), shown)
            if b.warn_above is not None:
                n, ln, top = found[k:k + 3]
                k += 3
                if n:
                    sink.warn(ln, f"{b.column} above {b.warn_above:g} in {n} row(s) (highest {top:g}; {b.why}): "
                                  "stored as printed")
        if tb.unique:
            cols = ", ".join(tb.unique)
            dup = sink.own_rows(tb.table, f"""
                SELECT {cols}, count(*) AS n, min({line}) AS first, max({line}) AS second FROM {{rows}}
                GROUP BY ALL HAVING count(*) > 1 ORDER BY first NULLS LAST, {cols} LIMIT 1""")
            if dup:
                *key, n, first, second = dup[0]
                named = ", ".join(f"{c} {v}" for c, v in zip(tb.unique, key))
                by_field = dict(tb.fields)
                if second is None and tb.fields and all(c in by_field for c in tb.unique if c != "thread"):
                    wanted = [(by_field[c], v) for c, v in zip(tb.unique, key) if c in by_field]
                    first = line_of(sink.path, wanted, separator=tb.separator)
                    second = line_of(sink.path, wanted, nth=2, separator=tb.separator)
                raise ParseError(sink.path, second,
                                 f"each {tb.unique_what or 'row'} once ({named} appears {n} times"
                                 + (f", first at line {first}" if first is not None and first != second else "")
                                 + "): the file holds its lines twice (appended or concatenated?); "
                                   "nothing of it is counted", named)


def line_of(path: Path, wanted: list[tuple[int, Any]], nth: int = 1, separator: str | None = None) -> int | None:
    """The line of ``path`` (a gzip-compressed file read as its text) whose whitespace-separated fields (or
    fields split at ``separator``, their blanks stripped) hold each ``(position, value)`` of ``wanted``, the
    ``nth`` such line; None if there is none."""
    want = [(pos, str(v).encode()) for pos, v in wanted]
    width = max(pos for pos, _ in want) + 1
    sep = separator.encode() if separator is not None else None
    try:
        with open(path, "rb") as fh:
            compressed = fh.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if compressed else open(path, "rb")) as fh:
            for ln, raw in enumerate(fh, 1):
                got = raw.split(None, width) if sep is None else [f.strip() for f in raw.split(sep, width)]
                if len(got) >= width and all(got[pos] == v for pos, v in want):
                    nth -= 1
                    if not nth:
                        return ln
    except (OSError, EOFError):  # (a file that cannot be read again: the refusal names the row alone)
        pass
    return None


_NOT_FINITE = (float("inf"), float("-inf"))


def _inside(tb: TableBounds, rows: list[dict[str, Any]]) -> bool:
    """True when no row can be outside a bound of ``tb``, above its ``warn_above`` or a repeat of its ``unique``
    columns: a few small tables (a pgbench summary, its progress lines) are checked on the rows the parser gave,
    without a statement (planning one costs more than checking so few rows). Anything this cannot judge
    as the SQL would (a value that is not a number or time, NaN) counts as outside: the caller then runs the
    statements, which find and word the error or warning."""
    for b in tb.bounds:
        dated = isinstance(b.low, datetime) or isinstance(b.high, datetime)
        low, high, warn = b.low, b.high, b.warn_above
        for r in rows:
            v = r.get(b.column)
            if v is None:
                continue
            applies = True
            for c, values in b.where:
                w = r.get(c)
                if w is not None and type(w) is not str:
                    return False
                if w not in values and w not in map(str, values):  # (NULL IN (...) is not true: no bound)
                    applies = False
                    break
            if not applies:
                continue
            if dated:
                if type(v) is not datetime:
                    return False
                if v.tzinfo is None:  # the store's session zone is UTC
                    v = v.replace(tzinfo=timezone.utc)
            elif type(v) not in (int, float) or v != v or v in _NOT_FINITE:
                return False
            if (low is not None and v < low) or (high is not None and v > high) or (warn is not None and v > warn):
                return False
    if tb.unique:
        seen = set()
        for r in rows:
            key = tuple(r.get(c) for c in tb.unique)
            for v in key:
                if not (v is None or type(v) in (int, str) or (type(v) is float and v == v)):
                    return False  # NaN, a time (zones), anything whose equality SQL may see otherwise
            if key in seen:
                return False
            seen.add(key)
    return True


def refuse_outside(path: Path, line: int | None | Callable[[str], int | None], tb: TableBounds,
                   row: dict[str, Any]) -> None:
    """``row`` of ``tb``'s table as its parser reads it, refused at ``line`` when a value is outside its bound,
    worded as ``check`` words it (``warn_above`` is left to ``check``): for a table that keeps no line, whose rows
    ``check`` could name none for. ``line`` may be a function of the refused column giving its line: a format
    whose row spans lines (a plan node) searches for it only when a value is refused."""
    for b in tb.bounds:
        if b.column in row and not _inside(TableBounds(tb.table, (replace(b, warn_above=None),)), [row]):
            raise ParseError(path, line(b.column) if callable(line) else line, _expected(b), _shown(row[b.column]))


@lru_cache(maxsize=None)
def for_format(format_name: str) -> tuple[TableBounds, ...]:
    """The bounds of the module that declares ``format_name``."""
    from kansoku import parsers  # the registry imports this module

    for m in parsers.modules():
        if any(f.name == format_name for f in m.formats):
            return tuple(m.bounds)
    return ()


# -- lines and appended copies (every format, before its parse) ---------------------------------------------


@dataclass(frozen=True)
class TextBounds:
    """What one line of a format can hold, in bytes (None: a binary format, no lines), and whether the tool may
    print the same content twice in one file (``repeats``: a script whose statements repeat)."""

    longest_line: int | None
    why: str
    repeats: bool = False


NUMBERS = TextBounds(4 << 10, "a line of a few numbers")
REPORT = TextBounds(1 << 20, "a line of a tool's report")
# Lines that carry statement text, strings or symbol names the tool prints whole; kept well below DuckDB's
# largest JSON object (16 MB), through which every row is stored.
STATEMENTS = TextBounds(8 << 20, "a line holding statement text, strings or symbol names")
BINARY = TextBounds(None, "a binary file")

TEXT: dict[str, TextBounds] = {
    "pgbench-txlog": NUMBERS, "pgbench-aggregate": NUMBERS,
    "pgbench-stdout": STATEMENTS, "pgbench-init": REPORT,
    "pgbench-script": TextBounds(STATEMENTS.longest_line, STATEMENTS.why, repeats=True),
    "pgbench-script-sql": TextBounds(STATEMENTS.longest_line, STATEMENTS.why, repeats=True),
    "query-list": STATEMENTS,
    "postgres-log": STATEMENTS, "postgres-csvlog": STATEMENTS, "postgres-jsonlog": STATEMENTS,
    "pg-stat-csv": STATEMENTS, "pg-stat-replication-csv": REPORT, "pg_test_fsync": REPORT,
    "fio-json": REPORT, "fio-text": REPORT, "fio-log": NUMBERS,
    "perf-script": STATEMENTS, "folded-stacks": STATEMENTS, "strace-stacks": STATEMENTS,
    "strace-summary": REPORT, "strace-messages": TextBounds(STATEMENTS.longest_line, STATEMENTS.why, repeats=True),
    "explain-json": STATEMENTS, "psql-timing": STATEMENTS,
    "published-table": REPORT, "published-csv": REPORT,
    "sa-binary": BINARY, "sadf-json": REPORT, "sadf-csv": REPORT, "sadf-xml": REPORT, "sadf-p": REPORT,
    "sar-text": REPORT, "iostat-text": REPORT, "iostat-json": REPORT, "mpstat-text": REPORT, "mpstat-json": REPORT,
    "pidstat-text": REPORT, "vmstat-text": REPORT,
}
_CHUNK = 1 << 20


def check_text(path: Path, format_name: str) -> None:
    """Refuse, with its line, a line longer than the format's tools print, and a file whose second half repeats
    its first (appended to itself); a gzip-compressed file is judged by its text. One pass at ``find`` speed."""
    tb = TEXT.get(format_name, REPORT)
    if tb.longest_line is None:
        return
    with open(path, "rb") as fh:
        compressed = fh.read(2) == b"\x1f\x8b"

    def opened():
        return gzip.open(path, "rb") if compressed else open(path, "rb")

    if not tb.repeats and not compressed:
        _refuse_appended_copy(path, opened, path.stat().st_size)
    size = 0  # of the text: a compressed file's is known once the line check has read it

    def chunks(fh):
        nonlocal size
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            size += len(chunk)
            yield chunk

    try:
        with opened() as fh:
            at = _long_line_at(chunks(fh), tb.longest_line)
        if at is None and compressed and not tb.repeats:
            _refuse_appended_copy(path, opened, size)
    except (OSError, EOFError):  # a gzip stream cut short or damaged: the parser says so in its words
        return
    if at is None:
        return
    offset, length = at
    with opened() as fh:  # the error's line: counted again, only now (counting costs more than the search)
        line, done = 1, 0
        while done < offset and (chunk := fh.read(min(_CHUNK, offset - done))):
            line += chunk.count(b"\n")
            done += len(chunk)
    raise ParseError(path, line, f"lines of at most {tb.longest_line:,} bytes ({tb.why}); a longer line is damage "
                                 "(garbage written over the file, a missing line end) that a reader would skip "
                                 "with the lines it swallowed; nothing of the file is counted",
                     f"a line of {length} bytes")


def _long_line_at(chunks: Iterator[bytes], limit: int) -> tuple[int, str] | None:
    """(byte offset where a line longer than ``limit`` starts, its length as text), or None."""
    step = max(1, limit // 2)  # a line longer than ``limit`` holds a whole aligned block of ``step`` bytes
    run = 0  # bytes of the current line before this chunk
    offset = 0  # of this chunk in the stream
    for chunk in chunks:
        first = chunk.find(b"\n")
        if first < 0:
            run += len(chunk)
            if run > limit:
                return offset + len(chunk) - run, f"more than {limit:,}"
            offset += len(chunk)
            continue
        if run + first > limit:
            return offset - run, f"{run + first:,}"
        last = chunk.rfind(b"\n")
        if last - first - 1 > limit:  # lines wholly inside the chunk: aligned blocks, each searched for a newline
            p = first + 1
            while p + step <= last:
                if chunk.find(b"\n", p, p + step) >= 0:
                    p += step
                    continue
                start = chunk.rfind(b"\n", 0, p) + 1
                end = chunk.find(b"\n", p + step)
                if end - start > limit:
                    return offset + start, f"{end - start:,}"
                p = end + 1
        run = len(chunk) - last - 1
        offset += len(chunk)
    if run > limit:  # the last line, without its newline
        return offset - run, f"{run:,}"
    return None


def _refuse_appended_copy(path: Path, opened, size: int) -> None:
    """``opened()``: the file's text as a binary stream (decompressed: a log appended to itself, then gzipped,
    repeats in its text, not in its bytes); ``size``: the text's length."""
    half = size // 2
    if size % 2 or not half:
        return
    with opened() as a, opened() as b:
        b.seek(half)
        first = a.read(min(half, 4096))
        if first != b.read(len(first)):
            return  # (almost every file: one small read at its middle)
        a.seek(0)
        b.seek(half)
        newlines = 0
        done = 0
        while done < half:
            x, y = a.read(min(_CHUNK, half - done)), b.read(min(_CHUNK, half - done))
            if x != y or not x:
                return
            newlines += x.count(b"\n")
            done += len(x)
    if not newlines:
        return  # a single line: nothing to count twice
    raise ParseError(path, newlines + 1, "the tool's output once, but from this line on the file repeats its "
                                         f"first {newlines:,} lines byte for byte (a file appended to itself?); "
                                         "every count would be doubled: nothing of it is counted", None)

