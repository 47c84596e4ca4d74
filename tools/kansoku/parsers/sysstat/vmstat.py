"""vmstat (procps / procps-ng): the default report (plain, ``-t``, ``-w``, ``-a``, ``-S``, ``-n``,
repeated headers, translated headers, harness time-stamp prefixes) and the ``-d`` disk table.
See docs/formats.md §4.

Columns are named by POSITION (translated locales rename them: ``frei``, ``Cache``), canonical
names ``r b swpd free buff cache si so bi bo in cs us sy id wa st gu`` (``inact active`` with
``-a``). Rows go to ``sys_metrics`` under activities procs, memory, swapping, io, system, cpu
(views in sysstat.py). The FIRST LINE of the report is the average since boot: stored with
``since_boot = true`` and left out of the views (``vmstat -y`` cannot be told from the output and
loses its first real sample this way). ``-S k|m|M`` changes the memory unit without a trace in the
output: values are stored as printed and read as KiB by the ``memory`` view.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.sysstat import common as sm

CANON = ["r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo", "in", "cs",
         "us", "sy", "id", "wa", "st", "gu"]
ACTIVITY = {"r": "procs", "b": "procs", "swpd": "memory", "free": "memory", "buff": "memory",
            "cache": "memory", "inact": "memory", "active": "memory", "si": "swapping", "so": "swapping",
            "bi": "io", "bo": "io", "in": "system", "cs": "system", "us": "cpu", "sy": "cpu", "id": "cpu",
            "wa": "cpu", "st": "cpu", "gu": "cpu"}
_INACT = {"inact", "inakt", "inactif", "inattiva", "inactivo"}
DISK_COLS = ["reads_total", "reads_merged", "read_sectors", "read_ms", "writes_total", "writes_merged",
             "write_sectors", "write_ms", "io_cur", "io_s"]
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)


def _is_columns(toks: list[str]) -> bool:
    return len(toks) >= 16 and toks[0] == "r" and toks[1] == "b"


def _is_disk_columns(toks: list[str]) -> bool:
    return toks[:4] == ["total", "merged", "sectors", "ms"]


def sniff_vmstat(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines, _ = sm.strip_prefix(head.lines(30))
    for a, b in zip(lines, lines[1:]):
        ta, tb = a.split(), b.split()
        if ta and (ta[0].startswith("procs") or ta[0].startswith("--procs")) and _is_columns(tb):
            return True
        if ta and ta[0] == "disk-" and _is_disk_columns(tb):
            return True
    return False


def _activity_runs(col: sm.Collector, names: list[str]) -> list[tuple[str, int, int, int]]:
    """The header's columns cut where the activity changes: (activity, first, end, id of their names), so that
    a line is one record per run of columns (the values in the order printed)."""
    runs: list[tuple[str, int, int, int]] = []
    start = 0
    for i in range(1, len(names) + 1):
        if i == len(names) or ACTIVITY[names[i]] != ACTIVITY[names[start]]:
            runs.append((ACTIVITY[names[start]], start, i, col.columns(names[start:i])))
            start = i
    return runs


def parse_vmstat(path: Path, sink: Sink) -> None:
    raw, truncated = sm.read_text(path, "vmstat output")
    lines, stamps = sm.strip_prefix(raw)
    col = sm.Collector("vmstat", "vmstat-text")
    tz, basis = sm.local_tz(sink.run_start, sink)
    col.tz_basis = basis
    names: list[str] | None = None
    disk_mode = False
    has_tz = False
    file_tz = tz
    sample = -1
    first_data_seen = False
    groups = None  # (names, their activity runs)
    n = len(lines)
    for lineno, line in enumerate(lines, start=1):
        toks = line.split()
        is_last = lineno == n
        if not toks:
            continue
        if toks[0].startswith("procs") or toks[0].startswith("--procs") or toks[0] == "disk-":
            continue  # group line (labels may be translated: '----Zeitstempel----')
        if _is_columns(toks):
            disk_mode = False
            base = len(toks)
            has_tz = base >= 17 and toks[-1] not in ("wa", "st", "gu")  # -t: last header word = TZ
            ncols = base - (1 if has_tz else 0)
            if ncols not in (16, 17, 18):
                raise ParseError(path, lineno, "a vmstat header of 16, 17 or 18 columns (r b swpd free ...)", line)
            names = CANON[:ncols]
            if toks[4].lower() in _INACT or toks[4].lower().startswith("ina"):
                names = names[:4] + ["inact", "active"] + names[6:]
            if has_tz:
                zone = toks[-1]
                if zone in ("UTC", "GMT"):
                    file_tz, col.tz_basis = timezone.utc, "vmstat -t (UTC)"
                else:
                    file_tz, col.tz_basis = tz, f"vmstat -t zone {zone}: {basis}"
            continue
        if _is_disk_columns(toks):
            disk_mode, names = True, None
            has_tz = len(toks) == 11
            sample += 1
            continue
        if disk_mode:
            vals_t = toks[1:11]
            vals = [sm.num(x) for x in vals_t]
            if len(toks) < 11 or any(v is None for v in vals):
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (vmstat killed?); skipped")
                    continue
                raise ParseError(path, lineno, "a vmstat -d row: device and 10 counters", line)
            ts = _row_ts(toks[11:], stamps[lineno - 1], tz, tz)
            col.add_record(ts, "vmstat-disk", toks[0], col.columns(DISK_COLS), vals, sample=sample, line=lineno)
            continue
        if names is None:
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (vmstat killed?); skipped")
                continue
            raise ParseError(path, lineno, "a vmstat header ('procs ...' and 'r b swpd free ...') before the data",
                             line)
        want = len(names) + (2 if has_tz else 0)
        vals = [sm.num(x) for x in toks[:len(names)]]
        if len(toks) != want or any(v is None for v in vals):
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (vmstat killed?); skipped")
                continue
            raise ParseError(path, lineno, f"{len(names)} numbers" + (" and a date and time" if has_tz else ""),
                             line)
        ts = _row_ts(toks[len(names):], stamps[lineno - 1], file_tz, tz)
        if has_tz and ts is None:
            raise ParseError(path, lineno, "a 'YYYY-MM-DD HH:MM:SS' time stamp at the end (vmstat -t)", line)
        sample += 1
        boot = not first_data_seen
        first_data_seen = True
        if groups is None or groups[0] is not names:
            groups = (names, _activity_runs(col, names))
        for act, start, end, names_id in groups[1]:
            col.add_record(ts, act, None, names_id, vals[start:end], sample=sample, since_boot=boot, line=lineno)
    if not col.n_values:
        raise ParseError(path, max(1, n), "vmstat data lines under a 'r b swpd free ...' header", "none")
    if any(s is not None for s in stamps) and not has_tz:
        col.tz_basis = "harness line prefixes: " + basis
    col.fill_intervals()
    col.flush(sink)


def _row_ts(rest: list[str], stamp: str | None, file_tz, tz) -> datetime | None:
    if len(rest) == 2 and _DATE_TIME.match(rest[0]):
        try:
            return datetime.fromisoformat(f"{rest[0]}T{rest[1]}").replace(tzinfo=file_tz)
        except ValueError:
            return None
    if stamp is not None:
        return datetime.fromisoformat(stamp).replace(tzinfo=tz)
    return None


MODULE = ParserModule(
    name="vmstat",
    formats=[
        Format(tool="vmstat", name="vmstat-text", description="vmstat report (plain, -t, -w, -a, -S, -d)",
               sniff=sniff_vmstat, parse=parse_vmstat, priority=15),
    ],
    tables=sm.TABLES,
)
