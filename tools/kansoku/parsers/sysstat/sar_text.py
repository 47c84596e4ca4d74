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
            d = sm.parse_date(m.group("date"), hint)
            if d is None:
                raise ParseError(path, lineno, "a date in the sar banner (%x in a known locale, or ISO)",
                                 m.group("date"))
            day0, saw_banner, header, pick_metrics = d, True, None, None
            clock = sm.DayClock(d, tz, steps)
            col.host = m.group("host")
            continue
        t = parse_tod(toks)
        is_last = lineno == n
        if t is None:
            # 'Average:' and its translations ('Durchschn.:', 'Moyenne :', '平均値:'), 'Summary:'
            if toks[0].endswith(":") or (len(toks) > 1 and toks[1] == ":"):
                continue
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (sar killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sar line starting with a time of day (or an Average: line)", line)
        secs, used = t
        rest = toks[used:]
        if not rest:
            continue
        if day0 is None:
            if hint is None:
                raise ParseError(path, lineno, "the sar banner line ('Linux ... (host) DATE _arch_ (N CPU)') "
                                 "before the first sample, or a run.toml start date", line)
            day0 = hint
            clock = sm.DayClock(day0, tz, steps)
        r0 = rest[0]
        if r0 == "LINUX" and len(rest) > 1 and rest[1].startswith("RESTART"):
            cpus = re.search(r"\((\d+) CPU\)", line, flags=re.ASCII)
            ts = clock.at(("restart",), secs)
            col.add(ts, "restart", None, "cpu_count", float(cpus.group(1)) if cpus else None, line=lineno)
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
                key = tuple(header)
                hid = header_ids.setdefault(key, len(header_ids))
                clock.tick(hid, secs)
                header_secs[hid] = secs
                act = activity_of(header)
                inst_idx = [i for i, c in enumerate(header) if c in INSTANCE_COLS]
                metric_idx = [(i, c) for i, c in enumerate(header) if c not in INSTANCE_COLS]
                names_id = col.columns([c for _, c in metric_idx])
                pick_metrics = None
                if metric_idx and act not in TEXT_ACTIVITIES:
                    pos = [i for i, _ in metric_idx]
                    pick_metrics = (lambda r: r) if not inst_idx else \
                        (lambda r, _p=pos: [r[i] for i in _p])
                if act not in KNOWN_ACTIVITIES:
                    sink.warn(lineno, f"sar activity with columns {' '.join(header[:4])} ... is not known to kansoku; "
                                      f"stored as activity {act!r}")
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
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (sar killed?); skipped")
                    continue
                bad_rows.append(lineno)
                if len(bad_rows) <= 3:
                    sink.warn(lineno, f"{len(rest)} values where the header '{' '.join(header[:3])} ...' has "
                                      f"{len(header)} columns; row skipped")
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
            vals, names = [], []
            for i, c in metric_idx:
                v = values[i]
                if v is None:
                    if c in TEXT_COLUMNS:
                        continue
                    if truncated and is_last:
                        break
                    raise ParseError(path, lineno, f"a number in column {c!r}", rest[i])
                vals.append(v)
                names.append(c)
            col.add_record(ts, act, inst, col.columns(names), vals, sample=sn, line=lineno, since_boot=boot)
        else:
            col.add_record(ts, act, inst, names_id, vals, sample=sn, line=lineno, since_boot=boot)
    if bad_rows and len(bad_rows) * 2 > len(col) / max(1, len(header or [1])):
        raise ParseError(path, bad_rows[0], "rows with as many values as their header has columns", "mostly not")
    if not saw_banner and not len(col):
        raise ParseError(path, None, "sar text output (banner 'Linux ... (N CPU)' and samples)", "no samples")
    if steps:
        sm.DayClock(None, sm.ZONE_UTC, steps).warn_steps_back(sink)
    col.fill_intervals()
    col.flush(sink)
