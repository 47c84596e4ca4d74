"""sysstat pidstat: per-process text output (``-u``, ``-r``, ``-d``, ``-w``, ``-t``, ``-l``), sysstat 8 to 12.
See docs/formats.md §2.9.

pidstat looks like sar text (banner, time of day) but its header names a process (``PID`` and a last
``Command`` column); rows go to their own tall table ``pidstat`` (one row per sample, process, metric).
``proc_cpu_pct`` is the run's mean total %CPU of the processes (``proc_cpu_pct[postgres]``: of the
processes whose command is ``postgres``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import EARLIEST, LATEST, Bound, TableBounds
from kansoku.parsers.numbers import is_digits
from kansoku.parsers.sysstat import common as sm

SCHEMA = """
-- One row per (sample, process or thread, metric) of pidstat text output.
CREATE TABLE IF NOT EXISTS pidstat (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    ts TIMESTAMPTZ,                 -- end of the sample interval
    sample INTEGER,                 -- 0-based sample number within the file
    since_boot BOOLEAN NOT NULL,    -- pidstat without an interval: averages since each process started
    uid VARCHAR,                    -- UID (or USER with -U); NULL in sysstat 8 output
    pid BIGINT,                     -- PID, or TGID with -t
    tid BIGINT,                     -- TID with -t (NULL on the process's own row)
    command VARCHAR NOT NULL,       -- Command as printed (with -l the whole command line; '|__' thread prefix removed)
    metric VARCHAR NOT NULL,        -- the column name as printed: '%usr', '%system', '%CPU', 'kB_rd/s', 'RSS', ...
    value DOUBLE,
    line INTEGER                    -- line in the file
);
"""

# Columns naming the process a row is about; everything between them and Command is a metric.
ID_COLUMNS = {"UID", "USER", "PID", "TGID", "TID"}


def _header(cols: list[str]) -> bool:
    return len(cols) >= 3 and cols[-1] == "Command" and any(c in ("PID", "TGID") for c in cols)


def sniff_pidstat_text(head: FileHead) -> bool:
    return sm.sniff_sysstat_text(head, _header, banner_lines=60, scan_lines=40)


def _int(tok: str) -> int | None:
    return int(tok) if is_digits(tok) and len(tok) < 19 else None


def parse_pidstat_text(path: Path, sink: Sink) -> None:
    steps: list[tuple[int, int]] = []  # times that go back (see DayClock)
    lines, truncated = sm.read_text(path, "pidstat output")
    tz, basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    clock: sm.DayClock | None = None
    header: list[str] | None = None
    header_secs: dict[tuple, int] = {}
    samples: dict[Any, int] = {}
    rows: list[dict[str, Any]] = []
    boot_warned = False
    n = len(lines)
    for lineno, line in enumerate(lines, start=1):
        toks = line.split()
        if not toks:
            continue
        m = sm.BANNER.match(line.strip())
        if m:
            d = sm.parse_date(m.group("date"), hint)
            if d is None:
                raise ParseError(path, lineno, "a date in the pidstat banner", m.group("date"))
            clock, header = sm.DayClock(d, tz, steps), None
            continue
        is_last = lineno == n
        t = sm.parse_tod(toks)
        if t is None:
            if toks[0].endswith(":") or (len(toks) > 1 and toks[1] == ":"):
                continue  # Average:
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (pidstat killed?); skipped")
                continue
            raise ParseError(path, lineno, "a pidstat line starting with a time of day (or Average:)", line)
        if clock is None:
            raise ParseError(path, lineno, "the pidstat banner 'Linux ... (host) DATE _arch_ (N CPU)' first", line)
        secs, used = t
        rest = toks[used:]
        if _header(rest):
            header = rest
            clock.tick(tuple(rest), secs)
            header_secs[tuple(rest)] = secs
            continue
        if header is None:
            raise ParseError(path, lineno, "a pidstat header (time, UID PID ... Command) before the data", line)
        nfix = len(header) - 1  # every column but Command is one token; Command takes the rest (-l)
        if len(rest) < len(header):
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (pidstat killed?); skipped")
                continue
            raise ParseError(path, lineno, f"{len(header)} columns under '{' '.join(header[:4])} ...'", line)
        cells = dict(zip(header[:nfix], rest[:nfix]))
        command = " ".join(rest[nfix:]).removeprefix("|__")
        key = tuple(header)
        ts = clock.at(key, secs)
        boot = header_secs.get(key) == secs and samples.get(key) is None
        if boot and not boot_warned:
            boot_warned = True
            sink.warn(lineno, "sample at the header's own time: pidstat without an interval prints averages "
                              "since each process started; stored flagged since_boot")
        sn = samples.setdefault((key, ts), len([k for k in samples if k[0] == key]) if not boot else 0)
        pid_tok = cells.get("TGID", cells.get("PID", "-"))
        tid_tok = cells.get("TID", "-")
        pid = _int(pid_tok) if pid_tok != "-" else None
        tid = _int(tid_tok) if tid_tok != "-" else None
        if (pid_tok != "-" and pid is None) or (tid_tok != "-" and tid is None):
            raise ParseError(path, lineno, "a process id (PID/TGID/TID) of at most 18 digits", pid_tok)
        if pid is None and "TID" in cells:
            pid = rows[-1]["pid"] if rows else None  # a thread row of -t: '-' under TGID
        for c, tok in cells.items():
            if c in ID_COLUMNS:
                continue
            v = sm.num(tok)
            if v is None:
                if c == "CPU" and tok == "-":
                    continue
                raise ParseError(path, lineno, f"a number in column {c!r}", tok)
            rows.append({"ts": ts, "sample": sn, "since_boot": boot, "uid": cells.get("UID", cells.get("USER")),
                         "pid": pid, "tid": tid, "command": command, "metric": c, "value": v, "line": lineno})
    if not rows:
        raise ParseError(path, None, "pidstat output with at least one process row", "none")
    for r in rows:
        v = r["value"]
        if v != v or v in (float("inf"), float("-inf")) or v < 0 or v > 1e15:
            raise ParseError(path, r["line"], f"a finite non-negative number for {r['metric']!r}", repr(v))
    if basis.startswith("GUESS"):
        sink.warn(None, f"times are a guess ({basis}): add timezone = \"Area/City\" to run.toml [machine]")
    if steps:
        sm.DayClock(None, sm.ZONE_UTC, steps).warn_steps_back(sink)
    sink.add_rows("pidstat", rows)


_IN_RUN = ("JOIN runs r ON r.run_id = p.run_id WHERE NOT p.since_boot AND p.metric = '%CPU' "
           "AND p.ts BETWEEN r.start_time AND r.end_time + INTERVAL 1 SECOND")
_PROC_SQL = f"""
WITH samples AS (SELECT DISTINCT p.run_id, p.host, p.role, p.source_id, p.ts FROM pidstat p {_IN_RUN}),
     sums AS (SELECT p.run_id, p.source_id, p.ts, sum(p.value) AS v FROM pidstat p {_IN_RUN} {{cond}} GROUP BY ALL)
SELECT s.run_id, s.host, s.role, avg(coalesce(x.v, 0)) AS value
FROM samples s LEFT JOIN sums x USING (run_id, source_id, ts) GROUP BY s.run_id, s.host, s.role
"""

METRICS = [
    MetricDef("proc_cpu_pct", _PROC_SQL.replace("{cond}", ""), "%", None, per_host=True,
              selection_sql=_PROC_SQL.replace("{cond}", "AND p.command IN {selection}"), selection_of="command"),
]

# What pidstat prints (parsers/bounds.py): counts, rates, sizes and shares, never negative (%CPU of a
# multi-threaded process passes 100: no upper bound); sample times of a real clock.
BOUNDS = [
    TableBounds("pidstat", bounds=(
        Bound("value", 0, None, "a count, rate, size or share"),
        Bound("ts", EARLIEST, LATEST, "a sample time"),
    )),
]

MODULE = ParserModule(
    name="sysstat-pidstat",
    bounds=BOUNDS,
    formats=[
        Format(tool="pidstat", name="pidstat-text", description="pidstat text (-u, -r, -d, -w, -t, -l)",
               sniff=sniff_pidstat_text, parse=parse_pidstat_text, priority=17),
    ],
    schema=SCHEMA,
    tables=["pidstat"],
    metrics=METRICS,
    host_columns={"pidstat": ("host", "role")},
)
