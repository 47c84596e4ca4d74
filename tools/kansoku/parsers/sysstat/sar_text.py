"""sar text output (sar -A and its parts, live or -f, any locale): docs/formats.md §2.1-2.4."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.activities import (
    INSTANCE_COLS,
    KNOWN_ACTIVITIES,
    SIGNATURES,
    TEXT_ACTIVITIES,
    TEXT_COLUMNS,
    activity_of,
    norm_instance,
)

# -- sar text ---------------------------------------------------------------------------

def sniff_sar_text(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = [l for l in head.lines(60) if l.strip()]
    if not lines or not sm.BANNER.match(lines[0]):
        return False
    # a sar header: time of day then column names we know (iostat has 'avg-cpu:'/'Device', no time)
    for l in lines[1:40]:
        toks = l.split()
        t = sm.parse_tod(toks)
        if t is None:
            continue
        rest = toks[t[1]:]
        if rest and (rest[0] in INSTANCE_COLS or rest[0] in SIGNATURES or rest[:2] == ["LINUX", "RESTART"]
                     or any(c in SIGNATURES for c in rest[:3])):
            return True
    return False


def parse_sar_text(path: Path, sink: Sink) -> None:
    steps: list[tuple[int, int]] = []  # times that go back (see DayClock)
    lines, truncated = sm.read_text(path, "sar text output")
    col = sm.Collector("sar", "sar-text")
    tz, col.tz_basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    day0: date | None = None
    clock = sm.DayClock(None, tz, steps)
    # A header is known by its number (its first appearance): the clocks, samples and the collector's lists
    # of metric names are keyed by it, not by its tuple of column names (hashed again on every line).
    header_ids: dict[tuple[str, ...], int] = {}
    header_secs: dict[int, int] = {}  # header -> time printed on it (the start of the first interval)
    since_boot_keys: set[int] = set()
    sample_no: dict[tuple[int, datetime], int] = {}
    sample_count: dict[int, int] = {}
    header: list[str] | None = None
    hid = -1
    act = ""
    inst_idx: list[int] = []
    metric_idx: list[tuple[int, str]] = []
    # the row's values as one call: every column, or the metric columns of a header with instance columns
    pick_metrics = None
    names_id = -1
    warned_text = False
    bad_rows: list[int] = []
    saw_banner = False
    n = len(lines)
    parse_tod = sm.parse_tod
    for lineno, line in enumerate(lines, start=1):
        toks = line.split()
        if not toks:
            continue
        m = sm.BANNER.match(line.strip()) if "CPU)" in line else None  # the banner ends '(N CPU)'
        if m:
            day0, saw_banner, header, pick_metrics = _banner_date(path, lineno, m, hint), True, None, None
            clock = sm.DayClock(day0, tz, steps)
            col.host = m.group("host")
            continue
        t = parse_tod(toks)
        is_last = lineno == n
        if t is None:
            _untimed_line(path, sink, lineno, line, toks, truncated and is_last)
            continue
        secs, used = t
        rest = toks[used:]
        if not rest:
            continue
        if day0 is None:
            day0 = _day_without_banner(path, lineno, line, hint)
            clock = sm.DayClock(day0, tz, steps)
        r0 = rest[0]
        if r0 == "LINUX" and len(rest) > 1 and rest[1].startswith("RESTART"):
            _add_restart(col, clock, secs, line, lineno)
            header = pick_metrics = None
            continue
        if r0 == "COM":
            continue
        # The common row: as many values as its header has columns, every metric a plain number.
        vals = None
        if pick_metrics is not None and len(rest) == len(header):
            picked = pick_metrics(rest)
            joined = "".join(picked)
            # float() alone would read fullwidth digits and '1_0'; such a row takes the slow path and is refused
            if joined.isascii() and "_" not in joined:
                try:
                    vals = list(map(float, picked))
                except ValueError:
                    vals = None
        if vals is None:
            values = [sm.num(x) for x in rest]
            if all(v is None for v in values):  # a header line: column names only
                header = rest
                hid, act, inst_idx, metric_idx, names_id, pick_metrics = _read_header(
                    sink, lineno, header, secs, col, clock, header_ids, header_secs)
                continue
            if header is None:
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (sar killed?); skipped")
                    continue
                raise ParseError(path, lineno, "a sar header line (time, then column names) before the data", line)
            if act in TEXT_ACTIVITIES:
                if not warned_text:
                    sink.warn(lineno, f"sar activity {act!r} holds text, not numbers; not stored")
                    warned_text = True
                continue
            if len(rest) != len(header):
                _skip_misfit_row(sink, lineno, rest, header, bad_rows, truncated and is_last)
                continue
        ts = clock.at(hid, secs)
        # 'sar -u 0' (interval 0): one sample stamped with the header's own time = averages since boot
        boot = header_secs.get(hid) == secs and sample_count.get(hid, -1) < 1
        if boot and hid not in since_boot_keys:
            since_boot_keys.add(hid)
            sink.warn(lineno, f"sample at the header's own time ({line.split()[0]}): figures since boot "
                              "(sar interval 0), stored flagged since_boot and left out of the views")
        inst = norm_instance(act, "/".join([rest[i] for i in inst_idx])) if inst_idx else None
        sn = sample_no.get((hid, ts))
        if sn is None:
            sn = sample_no[(hid, ts)] = sample_count[hid] = sample_count.get(hid, -1) + 1
        if vals is None:  # the slow path: a value that is not a plain number
            vals, names = _row_values(path, lineno, rest, values, metric_idx, truncated and is_last)
            col.add_record(ts, act, inst, col.columns(names), vals, sample=sn, line=lineno, since_boot=boot)
        else:
            col.add_record(ts, act, inst, names_id, vals, sample=sn, line=lineno, since_boot=boot)
    _check_whole(path, col, header, bad_rows, saw_banner)
    if steps:
        sm.DayClock(None, sm.ZONE_UTC, steps).warn_steps_back(sink)
    col.fill_intervals()
    col.flush(sink)


def _banner_date(path: Path, lineno: int, m: re.Match, hint: date | None) -> date:
    """The day a sar banner line ('Linux ... (host) DATE _arch_ (N CPU)') prints."""
    d = sm.parse_date(m.group("date"), hint)
    if d is None:
        raise ParseError(path, lineno, "a date in the sar banner (%x in a known locale, or ISO)", m.group("date"))
    return d


def _day_without_banner(path: Path, lineno: int, line: str, hint: date | None) -> date:
    """The day of samples before any banner: the run's start date, or none to be had (an error)."""
    if hint is None:
        raise ParseError(path, lineno, "the sar banner line ('Linux ... (host) DATE _arch_ (N CPU)') "
                         "before the first sample, or a run.toml start date", line)
    return hint


def _untimed_line(path: Path, sink: Sink, lineno: int, line: str, toks: list[str], cut_last: bool) -> None:
    """A line without a time of day: an average or summary line (skipped), the last line cut off (a warning),
    or an error."""
    # 'Average:' and its translations ('Durchschn.:', 'Moyenne :', '平均値:'), 'Summary:'
    if toks[0].endswith(":") or (len(toks) > 1 and toks[1] == ":"):
        return
    if cut_last:
        sink.warn(lineno, "last line is cut off (sar killed?); skipped")
        return
    raise ParseError(path, lineno, "a sar line starting with a time of day (or an Average: line)", line)


def _add_restart(col: sm.Collector, clock: sm.DayClock, secs: int, line: str, lineno: int) -> None:
    """A 'LINUX RESTART (N CPU)' line: a restart record holding the CPU count it prints."""
    cpus = re.search(r"\((\d+) CPU\)", line, flags=re.ASCII)
    ts = clock.at(("restart",), secs)
    col.add(ts, "restart", None, "cpu_count", float(cpus.group(1)) if cpus else None, line=lineno)


def _read_header(sink: Sink, lineno: int, header: list[str], secs: int, col: sm.Collector, clock: sm.DayClock,
                 header_ids: dict[tuple[str, ...], int], header_secs: dict[int, int]):
    """A header line (time, then column names): its number, activity, instance and metric columns, the id of its
    list of metric names and how its rows' metric values are picked (None: by the slow path)."""
    hid = header_ids.setdefault(tuple(header), len(header_ids))
    clock.tick(hid, secs)
    header_secs[hid] = secs
    act = activity_of(header)
    inst_idx = [i for i, c in enumerate(header) if c in INSTANCE_COLS]
    metric_idx = [(i, c) for i, c in enumerate(header) if c not in INSTANCE_COLS]
    names_id = col.columns([c for _, c in metric_idx])
    pick_metrics = None
    if metric_idx and act not in TEXT_ACTIVITIES:
        pos = [i for i, _ in metric_idx]
        pick_metrics = (lambda r: r) if not inst_idx else (lambda r, _p=pos: [r[i] for i in _p])
    if act not in KNOWN_ACTIVITIES:
        sink.warn(lineno, f"sar activity with columns {' '.join(header[:4])} ... is not known to kansoku; "
                          f"stored as activity {act!r}")
    return hid, act, inst_idx, metric_idx, names_id, pick_metrics


def _skip_misfit_row(sink: Sink, lineno: int, rest: list[str], header: list[str], bad_rows: list[int],
                     cut_last: bool) -> None:
    """A row with more or fewer values than its header has columns: skipped, the first three with a warning."""
    if cut_last:
        sink.warn(lineno, "last line is cut off (sar killed?); skipped")
        return
    bad_rows.append(lineno)
    if len(bad_rows) <= 3:
        sink.warn(lineno, f"{len(rest)} values where the header '{' '.join(header[:3])} ...' has "
                          f"{len(header)} columns; row skipped")


def _row_values(path: Path, lineno: int, rest: list[str], values: list, metric_idx: list[tuple[int, str]],
                cut_last: bool) -> tuple[list[float], list[str]]:
    """A row that holds a value that is not a plain number: its numbers and their column names (a text column
    left out; a value that is not a number is an error unless the row is the last line, cut off)."""
    vals, names = [], []
    for i, c in metric_idx:
        v = values[i]
        if v is None:
            if c in TEXT_COLUMNS:
                continue
            if cut_last:
                break
            raise ParseError(path, lineno, f"a number in column {c!r}", rest[i])
        vals.append(v)
        names.append(c)
    return vals, names


def _check_whole(path: Path, col: sm.Collector, header: list[str] | None, bad_rows: list[int],
                 saw_banner: bool) -> None:
    """The file as a whole: mostly rows that do not fit their header, or no banner and no samples, is refused."""
    if bad_rows and len(bad_rows) * 2 > len(col) / max(1, len(header or [1])):
        raise ParseError(path, bad_rows[0], "rows with as many values as their header has columns", "mostly not")
    if not saw_banner and not len(col):
        raise ParseError(path, None, "sar text output (banner 'Linux ... (N CPU)' and samples)", "no samples")
