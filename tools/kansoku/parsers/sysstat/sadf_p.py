"""sadf -p output: one value per line, ``host<TAB>interval<TAB>timestamp<TAB>item<TAB>metric<TAB>value``
(docs/formats.md §2.5). The activity is not printed: a record is the run of lines with one timestamp and
one item, and a metric that starts a known activity (``SIGNATURES``) starts a new record."""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.numbers import is_digits, to_float
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.activities import SIGNATURES, TEXT_COLUMNS, activity_of, norm_instance
from kansoku.parsers.sysstat.sadf_csv import sadf_ts

_TS = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?: \S+)?$|^\d{9,11}$", re.ASCII)
_CPU_ITEM = re.compile(r"^cpu(\d+)$", re.ASCII)


def _is_line(line: str) -> bool:
    f = line.split("\t")
    return len(f) == 6 and bool(_TS.match(f[2])) and sm.num(f[5]) is not None and is_digits(f[1])


def sniff_sadf_p(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = [l for l in head.lines(30) if l.strip()]
    return len(lines) >= 2 and all(_is_line(l) for l in lines[:-1])


# The item column a sar header would print before these first metrics (sadf -p drops the header).
ITEM_COLUMN = {"tps": "DEV", "rd_sec/s": "DEV", "rkB/s": "DEV", "rxpck/s": "IFACE", "rxerr/s": "IFACE",
               "rcvin/s": "TTY", "MHz": "CPU", "wghMHz": "CPU", "total/s": "CPU", "intr/s": "INTR",
               "rpm": "FAN", "degC": "TEMP", "inV": "IN", "MBfsfree": "FILESYSTEM", "fch_rxf/s": "FCHOST",
               "%cap": "BAT"}


def _activity(item: str, metrics: list[str]) -> str:
    if item == "-":
        return activity_of(metrics)
    if item == "all" or _CPU_ITEM.match(item):
        return activity_of(["CPU"] + metrics)
    col = ITEM_COLUMN.get(metrics[0])
    if col is not None:
        return activity_of([col] + metrics)
    return SIGNATURES.get(metrics[0], activity_of(metrics))


def parse_sadf_p(path: Path, sink: Sink) -> None:
    lines, truncated = sm.read_text(path, "sadf -p output")
    col = sm.Collector("sar", "sadf-p")
    tz, basis = sm.local_tz(sink.run_start, sink)
    col.tz_basis = "sadf timestamps (UTC or named zone)"
    tz_cache: dict = {}
    record: list[tuple[int, str, float]] = []
    key: tuple | None = None
    samples: dict[str, int] = {}
    text_seen: set[str] = set()
    n = len(lines)

    def flush() -> None:
        if not record or key is None:
            return
        ts, iv, item = key
        metrics = [m for _, m, _ in record]
        act = _activity(item, metrics)
        inst = None if item == "-" else norm_instance(act, _CPU_ITEM.sub(r"\1", item))
        sn = samples.setdefault(f"{act}|{ts.isoformat()}", len(samples))
        for lineno, m, v in record:
            col.add(ts, act, inst, m, v, interval_s=iv, sample=sn, line=lineno)

    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) != 6 or not is_digits(f[1]):
            if truncated and lineno == n:
                sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sadf -p line 'host<TAB>interval<TAB>timestamp<TAB>item<TAB>metric"
                             "<TAB>value'", line)
        host, iv, tstok, item, metric, vtok = f
        col.host = host
        ts = sadf_ts(tstok, tz, tz_cache, sink)
        v = sm.num(vtok)
        if v is None and metric in TEXT_COLUMNS and ts is not None:  # sar -m BAT 'status Full': text, not a figure
            if metric not in text_seen:
                text_seen.add(metric)
                sink.warn(lineno, f"{item} {metric} {vtok!r} is text (sysstat prints it so): not stored")
            continue
        if ts is None or v is None:
            if truncated and lineno == n:
                sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sadf timestamp and a number", line)
        k = (ts, to_float(iv), item)
        if k != key or (record and metric in SIGNATURES) or any(m == metric for _, m, _ in record):
            flush()
            record, key = [], k
        record.append((lineno, metric, v))
    flush()
    if not col.n_values:
        raise ParseError(path, None, "sadf -p output with at least one value", "none")
    col.flush(sink)
