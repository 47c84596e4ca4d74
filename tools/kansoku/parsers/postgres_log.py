"""PostgreSQL server log (stderr, csvlog or jsonlog): checkpoints and restartpoints (``log_checkpoints = on``).

A checkpoint writes two lines, from the checkpointer::

    2026-11-23 11:06:31.370 JST [32644] LOG:  checkpoint starting: wal
    2026-11-23 11:06:33.911 JST [32644] LOG:  checkpoint complete: wrote 1810 buffers (22.1%); 0 WAL file(s)
        added, 0 removed, 2 recycled; write=2.401 s, sync=0.101 s, total=2.541 s; sync files=12, longest=0.050 s,
        average=0.008 s; distance=32768 kB, estimate=32768 kB

(the second one is one line in the log). The ``complete`` wording grew clause by clause across versions;
``COMPLETE_VARIANTS`` lists every wording, each as its clauses in order, and a ``complete`` line that
matches none of them is reported as a warning naming the line (an unknown variant is never guessed).
Every other line of the log is ignored, whatever its encoding (a server writes each message in its
database's encoding); a line that is read holding a byte that is not UTF-8, or a NUL, is an error naming it.
The lines' time comes from ``log_line_prefix`` (``%m``, ``%t`` or ``%n``); a prefix without a time, or a time
zone abbreviation that is not in ``TZ_OFFSETS`` (ambiguous ones such as CST or IST are not), leaves the times
empty and says so once.

The same messages in a csvlog file (``log_destination = 'csvlog'``: time, severity and message are
columns 1, 12 and 14) or a jsonlog file (15+: ``timestamp``, ``error_severity``, ``message``) are read
the same way; line numbers are those of the record's first line. Localised logs (``lc_messages``
other than English) are not read: their checkpoint lines are translated.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator, TextIO

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.bounds import EARLIEST, LATEST, LONGEST_S, MOST, Bound, TableBounds

SCHEMA = """
CREATE TABLE IF NOT EXISTS pg_checkpoints (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    kind VARCHAR,               -- 'checkpoint' | 'restartpoint' (a standby's checkpoint)
    reason VARCHAR,             -- flags of the 'starting:' line: 'time', 'wal' ('xlog' before 10), 'immediate force wait', 'shutdown immediate', 'end-of-recovery', ...
    start_ts TIMESTAMPTZ,       -- time of the 'starting' line (else end_ts - total_s)
    end_ts TIMESTAMPTZ,         -- time of the 'complete' line; NULL when the log ends before it
    buffers_written BIGINT,     -- shared buffers written by the checkpoint
    buffers_pct DOUBLE,         -- ... as a percentage of shared_buffers
    slru_buffers_written BIGINT,-- SLRU buffers written (newest versions print it separately)
    wal_files_added INTEGER,    -- WAL ('transaction log' before 10) segment files added, removed, recycled
    wal_files_removed INTEGER,
    wal_files_recycled INTEGER,
    write_s DOUBLE,             -- seconds spent writing buffers (spread by checkpoint_completion_target)
    sync_s DOUBLE,              -- seconds spent in fsync of the written files
    total_s DOUBLE,             -- seconds from start to completion
    sync_files INTEGER,         -- files fsync-ed (9.1+)
    sync_longest_s DOUBLE,      -- the longest single fsync (9.1+)
    sync_average_s DOUBLE,      -- the average fsync (9.1+)
    distance_kb BIGINT,         -- WAL written since the previous checkpoint (9.5+)
    estimate_kb BIGINT,         -- the server's estimate of the distance to the next checkpoint (9.5+)
    lsn VARCHAR,                -- checkpoint LSN (versions after 15)
    redo_lsn VARCHAR,           -- its REDO LSN (versions after 15)
    variant VARCHAR,            -- which wording of the 'complete' line (COMPLETE_VARIANTS), NULL if none seen
    start_line INTEGER,         -- line numbers of the two lines in the log
    end_line INTEGER
);
"""

TABLES = ["pg_checkpoints"]

# -- line prefix: the time ---------------------------------------------------------------------------
# %m / %t: '2026-11-23 11:06:20.149 JST' / '2026-11-23 11:06:20 JST'; %n: '1700000000.149'.
_TS = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{2}:\d{2}:\d{2}(?:\.\d+)?) "
                 r"(?P<tz>[A-Za-z]{1,6}|[+-]\d{2}(?::?\d{2})?)\b", re.ASCII)
_EPOCH = re.compile(r"(?<![\d.])(?P<epoch>\d{10}\.\d{3})(?![\d.])", re.ASCII)

# Time zone abbreviations PostgreSQL prints for log_timezone, with their UTC offset (hours). Only
# abbreviations that mean one offset are listed: CST (US or China) and IST (India, Israel, Ireland)
# are ambiguous and left out on purpose; tz database zones without an abbreviation print a numeric
# offset ('+08'), read without a table.
TZ_OFFSETS = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 1, "BST": 1, "CET": 1, "CEST": 2, "MET": 1, "MEST": 2,
    "EET": 2, "EEST": 3, "MSK": 3, "PKT": 5, "HKT": 8, "AWST": 8, "JST": 9, "KST": 9, "ACST": 9.5,
    "ACDT": 10.5, "AEST": 10, "AEDT": 11, "NZST": 12, "NZDT": 13, "HST": -10, "AKST": -9, "AKDT": -8,
    "PST": -8, "PDT": -7, "MST": -7, "MDT": -6, "CDT": -5, "EST": -5, "EDT": -4, "AST": -4, "ADT": -3,
    "NST": -3.5, "NDT": -2.5,
}

# -- messages ----------------------------------------------------------------------------------------
_SEVERITY = r"(?:LOG|DEBUG[1-5]?|INFO|NOTICE|WARNING|ERROR|FATAL|PANIC|DETAIL|HINT|STATEMENT|CONTEXT|LOCATION)"
_MESSAGE = re.compile(rf"(?:^|\s)(?P<severity>{_SEVERITY}):  (?P<msg>.*)$", re.ASCII)
_STARTING = re.compile(r"^(?P<kind>checkpoint|restartpoint) starting:(?P<flags>.*)$", re.ASCII)
_COMPLETE = re.compile(r"^(?P<kind>checkpoint|restartpoint) complete: ", re.ASCII)
_VERSION = re.compile(r"starting PostgreSQL (\d+(?:\.\d+)*)", re.ASCII)
_NOT_TEXT = re.compile("[\x00\udc80-\udcff]", re.ASCII)  # a NUL byte, or a byte that is not UTF-8 (surrogateescape)

_N, _F, _S = r"(\d+)", r"(\d+(?:\.\d+)?)", r"(\d+\.\d{3}) s"
_LSN = r"([0-9A-F]+/[0-9A-F]+)"
# A clause of the 'complete' line: its pattern and the columns its groups fill, in order.
CLAUSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "buffers": (rf"wrote {_N} buffers \({_F}%\)", ("buffers_written", "buffers_pct")),
    "buffers_slru": (rf"wrote {_N} buffers \({_F}%\), wrote {_N} SLRU buffers",
                     ("buffers_written", "buffers_pct", "slru_buffers_written")),
    "xlog_files": (rf"{_N} transaction log file\(s\) added, {_N} removed, {_N} recycled",
                   ("wal_files_added", "wal_files_removed", "wal_files_recycled")),
    "wal_files": (rf"{_N} WAL file\(s\) added, {_N} removed, {_N} recycled",
                  ("wal_files_added", "wal_files_removed", "wal_files_recycled")),
    "times": (rf"write={_S}, sync={_S}, total={_S}", ("write_s", "sync_s", "total_s")),
    "sync_files": (rf"sync files={_N}, longest={_S}, average={_S}",
                   ("sync_files", "sync_longest_s", "sync_average_s")),
    "distance": (rf"distance={_N} kB, estimate={_N} kB", ("distance_kb", "estimate_kb")),
    "lsn": (rf"lsn={_LSN}, redo lsn={_LSN}", ("lsn", "redo_lsn")),
}

# Every wording of '<kind> complete: ...', newest first: (variant name, versions, clauses).
COMPLETE_VARIANTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("slru-lsn", "18+", ("buffers_slru", "wal_files", "times", "sync_files", "distance", "lsn")),
    ("lsn", "16-17", ("buffers", "wal_files", "times", "sync_files", "distance", "lsn")),
    ("wal", "10-15", ("buffers", "wal_files", "times", "sync_files", "distance")),
    ("xlog-distance", "9.5-9.6", ("buffers", "xlog_files", "times", "sync_files", "distance")),
    ("xlog-sync-files", "9.1-9.4", ("buffers", "xlog_files", "times", "sync_files")),
    ("xlog", "8.3-9.0", ("buffers", "xlog_files", "times")),
    ("restartpoint-8.4", "8.4-9.0 restartpoints", ("buffers", "times")),
]


def _compile(clauses: tuple[str, ...]) -> tuple[re.Pattern, tuple[str, ...]]:
    pattern = "; ".join(CLAUSES[c][0] for c in clauses)
    columns = tuple(col for c in clauses for col in CLAUSES[c][1])
    return re.compile(r"^(?:checkpoint|restartpoint) complete: " + pattern + r"\s*$", re.ASCII), columns


_COMPILED = [(name, *_compile(clauses)) for name, _versions, clauses in COMPLETE_VARIANTS]
_INT_COLUMNS = {"buffers_written", "slru_buffers_written", "wal_files_added", "wal_files_removed",
                "wal_files_recycled", "sync_files", "distance_kb", "estimate_kb"}
_TEXT_COLUMNS = {"lsn", "redo_lsn"}

# Messages only a PostgreSQL server writes, for recognising a server log by content.
_SERVER_MESSAGES = ("checkpoint starting:", "checkpoint complete:", "restartpoint starting:",
                    "database system is ready to accept", "database system was shut down",
                    "database system is shut down", "starting PostgreSQL", "listening on",
                    "received fast shutdown request", "received smart shutdown request",
                    "autovacuum launcher started", "redirecting log output")


def parse_complete(msg: str) -> tuple[str, dict] | None:
    """(variant, columns) of a '<kind> complete:' message, or None for an unknown wording."""
    for name, pattern, columns in _COMPILED:
        m = pattern.match(msg)
        if m:
            out: dict = {}
            for col, val in zip(columns, m.groups()):
                out[col] = int(val) if col in _INT_COLUMNS else val if col in _TEXT_COLUMNS else float(val)
            return name, out
    return None


def line_time(prefix: str) -> tuple[datetime | None, str | None]:
    """The time of a log line from its prefix: (time, None), or (None, why not)."""
    m = _TS.search(prefix)
    if m:
        tz = m.group("tz")
        if tz[0] in "+-":
            sign = -1 if tz[0] == "-" else 1
            digits = tz[1:].replace(":", "")
            hours = int(digits[:2]) + (int(digits[2:4]) / 60 if len(digits) > 2 else 0)
            offset = sign * hours
        elif tz.upper() in TZ_OFFSETS:
            offset = TZ_OFFSETS[tz.upper()]
        else:
            return None, (f"time zone {tz!r} of the line prefix is not one kansoku can place (ambiguous or "
                          f"unknown abbreviation); set log_timezone = 'UTC' or use %n in log_line_prefix")
        naive = datetime.fromisoformat(f"{m.group('date')} {m.group('time')}")
        return naive.replace(tzinfo=timezone(timedelta(hours=offset))).astimezone(timezone.utc), None
    m = _EPOCH.search(prefix)
    if m:
        return datetime.fromtimestamp(float(m.group("epoch")), tz=timezone.utc), None
    return None, "the line prefix has no time (log_line_prefix without %m, %t or %n): checkpoints have no times"


# -- the three log formats: each yields (line number, time prefix, severity, message) ------------------
# log_destination = stderr (the text above), csvlog (log_time is column 1, error_severity 12, message 14)
# and jsonlog (15+: "timestamp", "error_severity", "message").
Record = tuple[int, str, str, str]
_CSV_TIME, _CSV_SEVERITY, _CSV_MESSAGE = 0, 11, 13
_CSV_HEAD = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \S+,", re.ASCII)


def _stderr_records(fh: TextIO) -> Iterator[Record]:
    for no, raw in enumerate(fh, start=1):
        line = raw.rstrip("\n")
        m = _MESSAGE.search(line)
        if m:
            yield no, line[:m.start("severity")], m.group("severity"), m.group("msg")


def _csv_records(fh: TextIO) -> Iterator[Record]:
    reader = csv.reader(fh)
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a field beyond the csv module's limit, a quote left open
            raise ParseError(Path(getattr(fh, "name", "")), reader.line_num, "a csvlog record (the server's CSV "
                             "fields)", str(exc)) from None
        if len(row) > _CSV_MESSAGE:
            yield start, row[_CSV_TIME], row[_CSV_SEVERITY], row[_CSV_MESSAGE]
        start = reader.line_num + 1


def _json_records(fh: TextIO) -> Iterator[Record]:
    for no, raw in enumerate(fh, start=1):
        try:
            rec = json.loads(raw)
        except ValueError:
            continue  # not a record (a cut last line): ignored like any unknown line
        if isinstance(rec, dict) and isinstance(rec.get("message"), str):
            yield no, str(rec.get("timestamp", "")), str(rec.get("error_severity", "")), rec["message"]


def _is_server_record(severity: str, msg: str) -> bool:
    return bool(re.fullmatch(_SEVERITY, severity, flags=re.ASCII)) and any(msg.startswith(s) for s in _SERVER_MESSAGES)


def sniff(head: FileHead) -> bool:
    if head.is_binary:
        return False
    text = head.text  # a message is part of a line: a head holding none of them is not a server log
    if not any(s in text for s in _SERVER_MESSAGES):
        return False
    for line in head.lines(400):
        m = _MESSAGE.search(line)
        if m and any(m.group("msg").startswith(s) for s in _SERVER_MESSAGES):
            return True
    return False


def sniff_csv(head: FileHead) -> bool:
    lines = head.lines(400)
    if head.is_binary or not lines or not _CSV_HEAD.match(lines[0]):
        return False
    return any(_is_server_record(sev, msg) for _, _, sev, msg in _csv_records(io.StringIO("\n".join(lines[:-1]))))


def sniff_json(head: FileHead) -> bool:
    lines = head.lines(400)
    if head.is_binary or not lines or not lines[0].startswith('{"timestamp":'):
        return False
    return any(_is_server_record(sev, msg) for _, _, sev, msg in _json_records(io.StringIO("\n".join(lines[:-1]))))


def _parse_records(path: Path, sink: Sink, records: Callable[[TextIO], Iterator[Record]]) -> None:
    rows: list[dict] = []
    open_row: dict | None = None
    time_problem_told = False
    unknown = 0
    # a server writes each message in its database's encoding: bytes that are not UTF-8 are kept apart
    # (surrogates) and refused only on the lines read here
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
        for no, prefix, severity, msg in records(fh):
            version = _VERSION.search(msg) if severity == "LOG" else None
            start = _STARTING.match(msg)
            complete = None if start else _COMPLETE.match(msg)
            if not start and not complete and not version:
                continue
            bad = _NOT_TEXT.search(prefix + " " + msg)
            if bad:
                near = (prefix + " " + msg)[max(0, bad.start() - 30):bad.start() + 30]
                raise ParseError(path, no, "UTF-8 text in a checkpoint line or the server's version line",
                                 near.encode("utf-8", errors="surrogateescape").decode("utf-8", "backslashreplace"))
            if version:
                sink.set_tool_version(version.group(1))
            if not start and not complete:
                continue
            try:
                ts, why = line_time(prefix)
            except ValueError:  # month 13, hour 53: no clock printed it
                raise ParseError(path, no, "a date and time of the calendar in the line prefix",
                                 prefix.strip()[:60]) from None
            if why and not time_problem_told:
                sink.warn(no, why)
                time_problem_told = True
            if start:
                if open_row is not None:  # the previous one never completed (server stopped, log cut)
                    rows.append(open_row)
                open_row = {"kind": start.group("kind"), "reason": start.group("flags").strip() or None,
                            "start_ts": ts, "start_line": no}
                continue
            parsed = parse_complete(msg)
            if parsed is None:
                unknown += 1
                sink.warn(no, f"unknown wording of a '{complete.group('kind')} complete' line (not read): {msg[:120]}")
                continue
            variant, values = parsed
            row = open_row if open_row is not None and open_row["kind"] == complete.group("kind") else \
                {"kind": complete.group("kind"), "reason": None, "start_ts": None, "start_line": None}
            if open_row is not None and row is not open_row:
                rows.append(open_row)
            open_row = None
            row.update(values, end_ts=ts, end_line=no, variant=variant)
            if row["start_ts"] is None and ts is not None:  # the log began during this checkpoint
                row["start_ts"] = ts - timedelta(seconds=values["total_s"])
            rows.append(row)
    if open_row is not None:
        rows.append(open_row)
    if not rows and not unknown:
        sink.warn(None, "no checkpoint lines: log_checkpoints is off, or the log is localised (lc_messages)")
    sink.add_rows("pg_checkpoints", rows)


def parse(path: Path, sink: Sink) -> None:
    _parse_records(path, sink, _stderr_records)


def parse_csv(path: Path, sink: Sink) -> None:
    _parse_records(path, sink, _csv_records)


def parse_json(path: Path, sink: Sink) -> None:
    _parse_records(path, sink, _json_records)


# What a PostgreSQL server log can say of a checkpoint (parsers/bounds.py): times of a real clock, seconds and
# counts never negative, buffers written as a share of shared_buffers printed with one decimal.
BOUNDS = [
    # one server logs a checkpoint once: the same start and end twice is a log holding its lines twice
    TableBounds("pg_checkpoints", line="coalesce(start_line, end_line)", unique=("kind", "start_ts", "end_ts"),
                unique_what="checkpoint", bounds=(
        Bound("start_ts", EARLIEST, LATEST, "a log line's time"),
        Bound("end_ts", EARLIEST, LATEST, "a log line's time"),
        Bound("buffers_written", 0, MOST, "a count"),
        Bound("buffers_pct", 0, 100, "a share of shared_buffers"),
        Bound("write_s", 0, LONGEST_S, "seconds of a checkpoint"),
        Bound("sync_s", 0, LONGEST_S, "seconds of a checkpoint"),
        Bound("total_s", 0, LONGEST_S, "seconds of a checkpoint"),
        Bound("sync_longest_s", 0, LONGEST_S, "seconds of a checkpoint"),
        Bound("sync_average_s", 0, LONGEST_S, "seconds of a checkpoint"),
        Bound("distance_kb", 0, MOST, "kB of WAL"),
        Bound("estimate_kb", 0, MOST, "kB of WAL"),
    )),
]

MODULE = ParserModule(
    name="postgres_log",
    bounds=BOUNDS,
    formats=[
        Format(tool="postgres", name="postgres-log",
               description="PostgreSQL server log (stderr format): checkpoint and restartpoint lines",
               sniff=sniff, parse=parse, priority=1),
        Format(tool="postgres", name="postgres-csvlog",
               description="PostgreSQL server log (csvlog): checkpoint and restartpoint lines",
               sniff=sniff_csv, parse=parse_csv, priority=2),
        Format(tool="postgres", name="postgres-jsonlog",
               description="PostgreSQL server log (jsonlog, 15+): checkpoint and restartpoint lines",
               sniff=sniff_json, parse=parse_json, priority=2),
    ],
    schema=SCHEMA,
    tables=TABLES,
    host_columns={"pg_checkpoints": ("host", "role")},  # the host whose server log it is
)

__all__ = ["MODULE", "COMPLETE_VARIANTS", "parse_complete", "line_time"]
