"""fio per-I/O or averaged logs: ``--write_bw_log``, ``--write_lat_log`` (lat, clat, slat),
``--write_iops_log`` (docs/formats.md §6.5).

Each line is ``time_ms, value, direction, bs, offset[, priority]`` (direction 0 read, 1 write, 2 trim;
``bs`` and ``offset`` are 0 in averaged logs, ``--log_avg_msec``). What the value is (bandwidth KiB/s,
latency, IOPS) is not in the content: fio says it only in the file name (``NAME_bw.1.log``,
``NAME_clat.1.log``), so the kind is taken from the name and a log whose name does not say it is stored with
kind 'unknown' and a warning. Latencies are in ns from fio 3.0 on (µs before): the unit comes from the run's
fio version (run.toml [versions] fio) when known, else ns with a warning. Big logs are read by DuckDB.
"""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.bounds import FASTEST_PER_S, LONGEST_MS, LONGEST_S, LONGEST_US, Bound, TableBounds

SCHEMA = """
-- One row per line of a fio --write_*_log file.
CREATE TABLE IF NOT EXISTS fio_log (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    kind VARCHAR NOT NULL,          -- 'bw' | 'lat' | 'clat' | 'slat' | 'iops' | 'unknown' (from the file name)
    unit VARCHAR,                   -- 'KiB/s' (bw), 'ns' or 'us' (latencies: fio >= 3.0 writes ns), 'IOPS'
    job_index INTEGER,              -- N of NAME_kind.N.log (the job's number)
    time_ms BIGINT NOT NULL,        -- ms since the job started
    value BIGINT NOT NULL,
    direction VARCHAR NOT NULL,     -- 'read' | 'write' | 'trim'
    bs BIGINT,                      -- block size of the I/O (0 in averaged logs)
    "offset" BIGINT,                -- offset of the I/O (0 in averaged logs)
    prio INTEGER                    -- I/O priority (6th field, fio 3.2x+ with cmdprio), NULL before
);
"""

_LINE = re.compile(r"^\d+, \d+, [012], \d+, \d+(?:, \d+)?$", re.ASCII)
_NAME = re.compile(r"_(bw|lat|clat|slat|iops)\.(\d+)\.log$", re.ASCII)
_UNIT = {"bw": "KiB/s", "iops": "IOPS"}


def sniff_fio_log(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = head.lines(20)
    if len(lines) > 1 and not head.text.endswith("\n"):
        lines = lines[:-1]  # the sniff window may cut the last line
    return bool(lines) and all(_LINE.match(l) for l in lines)


def _latency_unit(sink: Sink) -> tuple[str, bool]:
    meta = getattr(sink, "run_meta", None) or {}
    v = meta.get("versions", {}).get("fio") if isinstance(meta.get("versions"), dict) else None
    m = re.search(r"fio-(\d+)\.", v, flags=re.ASCII) if isinstance(v, str) else None
    if m:
        return ("ns" if int(m.group(1)) >= 3 else "us"), False
    return "ns", True


_COLUMNS = "{'time_ms': 'BIGINT', 'value': 'BIGINT', 'ddir': 'INTEGER', 'bs': 'BIGINT', 'off': 'BIGINT', 'prio': 'INTEGER'}"


def parse_fio_log(path: Path, sink: Sink) -> None:
    what = "a fio log line 'time_ms, value, direction (0/1/2), bs, offset[, prio]'"
    textfile.refuse_control_bytes(path, what)
    m = _NAME.search(path.name)
    kind, job = (m.group(1), int(m.group(2))) if m else ("unknown", None)
    if m is None:
        sink.warn(None, "fio log whose name does not say what it holds (NAME_bw|lat|clat|slat|iops.N.log): "
                        "stored with kind 'unknown'")
    unit = _UNIT.get(kind)
    if kind in ("lat", "clat", "slat"):
        unit, guessed = _latency_unit(sink)
        if guessed:
            sink.warn(None, "fio version unknown (run.toml [versions] fio): latencies taken as ns (fio >= 3.0)")
    reader = (f"read_csv($path, delim=',', header=false, auto_detect=false, columns={_COLUMNS}, "
              "null_padding=true, ignore_errors=true, new_line='\\n')")
    n = sink.load_sql("fio_log",
                      f"""SELECT $source_id AS source_id, $run_id AS run_id, $kind AS kind, $unit AS unit,
                                 $job::INTEGER AS job_index, time_ms, value,
                                 CASE ddir WHEN 0 THEN 'read' WHEN 1 THEN 'write' WHEN 2 THEN 'trim' END AS direction,
                                 bs, off AS "offset", prio
                          FROM {reader} WHERE ddir IN (0, 1, 2) AND time_ms >= 0 AND value >= 0""",
                      {"path": str(path), "kind": kind, "unit": unit, "job": job})
    lines = sink.newline_count()
    if n < lines:
        bad = sink.csv_rejects(reader.replace("ignore_errors=true", "ignore_errors=true, store_rejects=true"),
                               {"path": str(path)})
        if bad:
            line, _, text, message = bad[0]
            raise ParseError(path, line, f"{what} ({message})", text)
        first = _first_bad_line(path)
        raise ParseError(path, first[0], what, first[1])
    if n == 0:
        raise ParseError(path, None, what, "no lines")


def _first_bad_line(path: Path) -> tuple[int | None, str | None]:
    """Error path: the first line with a direction other than 0/1/2 or a negative number."""
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, start=1):
            line = raw.decode(errors="replace").rstrip("\n")
            if not _LINE.match(line):
                return i, line
    return None, None


# What fio's logs can hold (parsers/bounds.py): ms since the job started and a value per kind, within a run.
BOUNDS = [
    # (no line is stored: a refused row's is found in the file again by its time and value)
    TableBounds("fio_log", line=None, at="'time ' || time_ms || ' ms'",
                fields=(("time_ms", 0), ("value", 1)), separator=",", bounds=(
        Bound("time_ms", 0, LONGEST_MS, "ms since the job started"),
        Bound("value", 0, LONGEST_S * 1e9, "a latency in ns", where=(("unit", ("ns",)),)),
        Bound("value", 0, LONGEST_US, "a latency in µs", where=(("unit", ("us",)),)),
        Bound("value", 0, FASTEST_PER_S, "KiB or I/Os per second", where=(("kind", ("bw", "iops")),)),
    )),
]

MODULE = ParserModule(
    name="fio_log",
    bounds=BOUNDS,
    formats=[Format("fio", "fio-log", "fio --write_bw_log / --write_lat_log / --write_iops_log (one file per job "
                    "and kind)", sniff_fio_log, parse_fio_log, priority=6)],
    schema=SCHEMA,
    tables=["fio_log"],
)
