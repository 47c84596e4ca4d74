"""pg_test_fsync: ops/sec (and usecs/op) per wal_sync_method and write pattern (docs/formats.md §7).

The output is a few headed sections of result lines::

    Compare file sync methods using one 8kB write:
    (in wal_sync_method preference order, except fdatasync is Linux's default)
            open_datasync                     18113.786 ops/sec      55 usecs/op
            fsync_writethrough                              n/a

Variants (docs/formats.md §7 table): 9.1 ``N operations per test`` and no
``usecs/op``; 9.3+ ``N seconds per test``; the preference note on one or two
lines; 17+ quotes "wal_sync_method"; label and number widths change; ``n/a``
for an unsupported method and ``n/a*`` when the filesystem refuses O_DIRECT.
Sections are recognised by their heading (``SECTIONS``); a result line
outside a known section is an error, never guessed.
"""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import FASTEST_PER_S, LONGEST_US, Bound, TableBounds

SCHEMA = """
CREATE TABLE IF NOT EXISTS pg_test_fsync_results (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    section VARCHAR NOT NULL,   -- one_write | two_writes | open_sync_sizes | fsync_other_descriptor | non_sync_write
    section_no INTEGER,         -- 1-based order in the file
    section_title VARCHAR,      -- the heading as printed
    item_no INTEGER,            -- 1-based order within the section (wal_sync_method preference order)
    label VARCHAR NOT NULL,     -- as printed: 'open_datasync', '2 *  8kB open_sync writes', 'write, fsync, close'
    method VARCHAR,             -- wal_sync_method (sync sections), 'open_sync' (sizes), label otherwise
    write_count INTEGER,        -- writes per operation: 1 / 2 / 'N *' in the sizes section
    write_size_kb INTEGER,      -- size of one write
    ops_per_sec DOUBLE,         -- NULL when not available
    usecs_per_op DOUBLE,        -- NULL before 9.3 (not printed) or when not available
    status VARCHAR NOT NULL,    -- 'ok' | 'n/a' (method not supported) | 'n/a*' (O_DIRECT refused by the filesystem)
    line INTEGER
);
CREATE TABLE IF NOT EXISTS pg_test_fsync_info (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    seconds_per_test INTEGER,   -- 9.3+ '-s'
    operations_per_test INTEGER,-- 9.1/9.2 '-o'
    direct_io_note VARCHAR,     -- 'O_DIRECT supported on this platform ...' line
    wal_block_kb INTEGER,       -- XLOG_BLCKSZ as printed in the headings (8 by default)
    sections INTEGER,
    results INTEGER
);
"""

TABLES = ["pg_test_fsync_results", "pg_test_fsync_info"]

VIEWS = """
-- Every result, for tables: one row per (run, section, label).
CREATE OR REPLACE VIEW pg_test_fsync_ops AS
SELECT run_id, section, section_no, item_no, label, method, write_count, write_size_kb,
       ops_per_sec, usecs_per_op, status, source_id
FROM pg_test_fsync_results;

-- ops/sec per wal_sync_method (Windows study Table 5.3): one and two writes side by side.
CREATE OR REPLACE VIEW pg_test_fsync_methods AS
SELECT run_id, method,
       min(item_no) AS preference_no,
       max(ops_per_sec) FILTER (WHERE section = 'one_write') AS one_write_ops_per_sec,
       max(ops_per_sec) FILTER (WHERE section = 'two_writes') AS two_writes_ops_per_sec,
       max(usecs_per_op) FILTER (WHERE section = 'one_write') AS one_write_usecs_per_op,
       max(usecs_per_op) FILTER (WHERE section = 'two_writes') AS two_writes_usecs_per_op,
       string_agg(DISTINCT status, ',') AS status
FROM pg_test_fsync_results
WHERE section IN ('one_write', 'two_writes')
GROUP BY run_id, method;
"""

SYNC_METHODS = ["open_datasync", "fdatasync", "fsync", "fsync_writethrough", "open_sync"]

METRICS = [
    MetricDef(f"pg_test_fsync_{m}_ops_s",
              f"SELECT run_id, max(ops_per_sec) AS value FROM pg_test_fsync_results "
              f"WHERE section = 'one_write' AND method = '{m}' AND status = 'ok' GROUP BY run_id",
              "ops/s", True)
    for m in SYNC_METHODS
]

# (regex on the heading, section key). docs/formats.md §7; texts identical from 9.1 to 18.
SECTIONS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"^Compare file sync methods using one (?P<kb>\d+)kB write:\s*$", re.ASCII), "one_write"),
    (re.compile(r"^Compare file sync methods using two (?P<kb>\d+)kB writes:\s*$", re.ASCII), "two_writes"),
    (re.compile(r"^Compare open_sync with different write sizes:\s*$", re.ASCII), "open_sync_sizes"),
    (re.compile(r"^Test if fsync on non-write file descriptor is honou?red:\s*$", re.ASCII), "fsync_other_descriptor"),
    (re.compile(r"^Non-[Ss]ync'ed (?P<kb>\d+)kB writes:\s*$", re.ASCII), "non_sync_write"),
]
_OPS = re.compile(r"^\s+(?P<label>\S.*?)\s+(?P<ops>\d+(?:\.\d+)?) ops/sec"
                  r"(?:\s+(?P<us>\d+(?:\.\d+)?) usecs/op)?\s*$", re.ASCII)
_NA = re.compile(r"^\s+(?P<label>\S.*?)\s+(?P<na>n/a\*?)\s*$", re.ASCII)
_SECONDS = re.compile(r"^(?P<n>\d+) seconds? per test\s*$", re.ASCII)
_OPERATIONS = re.compile(r"^(?P<n>\d+) operations per test\s*$", re.ASCII)
_SIZE_LABEL = re.compile(r"^(?:(?P<count>\d+) \*\s*)?(?P<kb>\d+)kB open_sync writes?$", re.ASCII)


def sniff(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = head.lines(80)
    has_heading = any(rx.match(l) for l in lines for rx, _ in SECTIONS[:2])
    has_result = any(_OPS.match(l) or _NA.match(l) for l in lines)
    return has_heading and has_result


def parse(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "pg_test_fsync output")
    lines = text.split("\n")
    truncated = bool(lines) and lines[-1] != ""
    if not truncated:
        lines.pop()
    info: dict = {}
    rows: list[dict] = []
    section: str | None = None
    section_title: str | None = None
    section_no = 0
    item_no = 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        m = _SECONDS.match(line)
        if m:
            info["seconds_per_test"] = int(m.group("n"))
            continue
        m = _OPERATIONS.match(line)
        if m:
            info["operations_per_test"] = int(m.group("n"))
            continue
        if "O_DIRECT" in line or "Direct I/O" in line:
            info.setdefault("direct_io_note", line.strip())
            continue
        heading = next(((rx.match(line), key) for rx, key in SECTIONS if rx.match(line)), None)
        if heading:
            m, section = heading
            section_title, section_no, item_no = line.strip(), section_no + 1, 0
            if m.groupdict().get("kb"):
                info.setdefault("wal_block_kb", int(m.group("kb")))
            continue
        m = _OPS.match(line) or _NA.match(line)
        if m and line[:1].isspace():
            if section is None:
                raise ParseError(path, lineno, "a pg_test_fsync section heading before the results "
                                 "('Compare file sync methods using one 8kB write:')", line.strip())
            item_no += 1
            label = re.sub(r"\s+", " ", m.group("label").strip(), flags=re.ASCII)
            row = {"section": section, "section_no": section_no, "section_title": section_title,
                   "item_no": item_no, "label": label, "method": label, "line": lineno}
            if "na" in m.groupdict() and m.group("na"):
                row["status"] = m.group("na")
            else:
                row["status"] = "ok"
                row["ops_per_sec"] = float(m.group("ops"))
                if m.group("us") is not None:
                    row["usecs_per_op"] = float(m.group("us"))
                    # both figures come from one measurement (usecs/op = 10^6 / ops/sec, printed rounded):
                    # a disagreement is a damaged number, which would otherwise be stored as plausible
                    ops = row["ops_per_sec"]
                    if ops > 0 and abs(row["usecs_per_op"] - 1e6 / ops) > max(1.0, 0.01 * row["usecs_per_op"]):
                        raise ParseError(path, lineno, "usecs/op equal to 1000000 / ops/sec (as pg_test_fsync "
                                         "computes it)", raw.strip())
            blk = info.get("wal_block_kb")
            if section in ("one_write", "two_writes"):
                row["write_count"] = 1 if section == "one_write" else 2
                row["write_size_kb"] = blk
            elif section == "open_sync_sizes":
                sm = _SIZE_LABEL.match(label)
                if not sm:
                    raise ParseError(path, lineno, "a write size label like '2 *  8kB open_sync writes'", label)
                row["method"] = "open_sync"
                row["write_size_kb"] = int(sm.group("kb"))
                if sm.group("count"):
                    row["write_count"] = int(sm.group("count"))
            elif section == "non_sync_write":
                row["write_count"], row["write_size_kb"] = 1, blk
            rows.append(row)
            continue
        if truncated and lineno == len(lines):
            sink.warn(lineno, f"last line is cut off (pg_test_fsync interrupted?); skipped: {line.strip()!r}")
            continue
        if line[:1].isspace() and section is not None and ("ops/sec" in line or "n/a" in line):
            raise ParseError(path, lineno, "a result line 'LABEL  NNN.NNN ops/sec  NNN usecs/op' or 'LABEL  n/a'",
                             line.strip())
        if section is None and not line.startswith(("(", "*")) and not rows:
            # text before the first section we do not know (another locale?)
            sink.warn(lineno, f"line not known to kansoku before the first section; ignored: {line.strip()!r}")
        # otherwise: the explanatory notes in parentheses and their continuation lines, footnotes
    if not rows:
        raise ParseError(path, None, "pg_test_fsync results ('... ops/sec ... usecs/op' lines)", "none")
    info["sections"] = section_no
    info["results"] = len(rows)
    sink.add_rows("pg_test_fsync_results", rows)
    sink.add_rows("pg_test_fsync_info", [info])


FORMATS = [
    Format("pg_test_fsync", "pg_test_fsync", "pg_test_fsync text output (9.1 .. 18)", sniff, parse, priority=5),
]

# What pg_test_fsync prints (parsers/bounds.py): operations per second and microseconds per operation.
BOUNDS = [
    TableBounds("pg_test_fsync_results", bounds=(
        Bound("ops_per_sec", 0, FASTEST_PER_S, "operations per second"),
        Bound("usecs_per_op", 0, LONGEST_US, "microseconds per operation"),
    )),
]

MODULE = ParserModule(bounds=BOUNDS, name="pg_test_fsync", formats=FORMATS, schema=SCHEMA, views=VIEWS, metrics=METRICS,
                      tables=TABLES)
