"""sysstat mpstat: text output (plain, ``-P``, ``-A`` with its NODE, interrupt and softirq sections,
``-I``) and ``-o JSON``. See docs/formats.md §2.8.

mpstat text looks like sar text (same banner, time of day, CPU column), so both are told apart by the
header (the table below): mpstat prints ``%irq %soft`` before ``%steal`` (sar -u ALL after), a ``NODE``
column, ``CPU intr/s``, ``CPU HI/s ...`` (softirqs) and per-interrupt ``CPU 24/s ...`` columns.

Rows land in ``sys_metrics`` with tool ``mpstat`` and the sar names, so the ``cpu`` views (per-CPU
%soft: ``cpu_soft_pct[0+1]``) read them when a run has no sar data (see ``cpu_in_run_mean``).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.sadf_json import record_lines

# Header of a block -> activity, first match wins (sysstat 8 to 12). Each entry: (activity, test on the
# header's column names after the time of day).
_SOFTIRQ = {"HI/s", "TIMER/s", "NET_TX/s", "NET_RX/s", "BLOCK/s", "SCHED/s", "RCU/s", "TASKLET/s"}
_IRQ_COL = re.compile(r"^(?:i?\d+|NMI|LOC|SPU|PMI|IWI|RTR|RES|CAL|TLB|TRM|THR|DFR|MCE|MCP|HYP|ERR|MIS|PIN|NPI|PIW"
                      r"|[A-Z]{2,4})/s$", re.ASCII)
HEADER_TABLE: list[tuple[str, object]] = [
    ("cpu-node", lambda c: c[:1] == ["NODE"] and any(x in c for x in ("%usr", "%user"))),
    ("cpu", lambda c: c[:1] == ["CPU"] and any(x in c for x in ("%usr", "%user"))),
    ("intr", lambda c: c[:1] == ["CPU"] and c[1:] == ["intr/s"]),
    ("softirq", lambda c: c[:1] == ["CPU"] and len(set(c[1:]) & _SOFTIRQ) >= 2),
    ("intr-irq", lambda c: c[:1] == ["CPU"] and len(c) > 1 and all(_IRQ_COL.match(x) for x in c[1:])),
]


def block_activity(cols: list[str]) -> str | None:
    for act, test in HEADER_TABLE:
        if test(cols):  # type: ignore[operator]
            return act
    return None


def is_mpstat_header(cols: list[str]) -> bool:
    """A header only mpstat prints (sar's CPU headers put %steal before %irq, or have no %irq)."""
    if cols[:1] == ["NODE"]:
        return True
    if cols[:1] != ["CPU"]:
        return False
    if "%irq" in cols and "%steal" in cols:
        return cols.index("%irq") < cols.index("%steal")
    if "%user" in cols and "intr/s" in cols:  # sysstat 8: mpstat put intr/s in the CPU block
        return True
    return block_activity(cols) in ("intr", "softirq") or (
        block_activity(cols) == "intr-irq" and not any(x.startswith("i") for x in cols[1:]))


def sniff_mpstat_text(head: FileHead) -> bool:
    return sm.sniff_sysstat_text(head, is_mpstat_header, banner_lines=80, scan_lines=60)


def parse_mpstat_text(path: Path, sink: Sink) -> None:
    steps: list[tuple[int, int]] = []  # times that go back (see DayClock)
    lines, truncated = sm.read_text(path, "mpstat output")
    col = sm.Collector("mpstat", "mpstat-text")
    tz, col.tz_basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    clock: sm.DayClock | None = None
    header: list[str] | None = None
    act: str | None = None
    header_secs: dict[tuple, int] = {}
    sample_no: dict[tuple, int] = {}
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
                raise ParseError(path, lineno, "a date in the mpstat banner", m.group("date"))
            clock, header = sm.DayClock(d, tz, steps), None
            col.host = m.group("host")
            continue
        is_last = lineno == n
        t = sm.parse_tod(toks)
        if t is None:
            if toks[0].endswith(":") or (len(toks) > 1 and toks[1] == ":"):
                continue  # Average: (and its translations)
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (mpstat killed?); skipped")
                continue
            raise ParseError(path, lineno, "an mpstat line starting with a time of day (or Average:)", line)
        if clock is None:
            raise ParseError(path, lineno, "the mpstat banner 'Linux ... (host) DATE _arch_ (N CPU)' first", line)
        secs, used = t
        rest = toks[used:]
        values = [sm.num(x) for x in rest[1:]]
        if rest and rest[0] in ("CPU", "NODE"):
            header = rest
            act = block_activity(rest)
            if act is None:
                sink.warn(lineno, f"mpstat block with columns {' '.join(rest[:4])} ... is not known to kansoku; "
                                  "skipped")
            clock.tick(tuple(rest), secs)
            header_secs[tuple(rest)] = secs
            continue
        if header is None:
            raise ParseError(path, lineno, "an mpstat header line (time, CPU or NODE, column names) before data", line)
        if act is None:
            continue
        if len(rest) != len(header) or any(v is None for v in values):
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (mpstat killed?); skipped")
                continue
            raise ParseError(path, lineno, f"a CPU number and {len(header) - 1} numbers under "
                             f"'{' '.join(header[:4])} ...'", line)
        key = tuple(header)
        ts = clock.at(key, secs)
        boot = header_secs.get(key) == secs and sample_no.get(key, 0) == 0
        if boot and not boot_warned:
            boot_warned = True
            sink.warn(lineno, "sample at the header's own time: mpstat without an interval prints averages "
                              "since boot; stored flagged since_boot and left out of the views")
        if not boot:
            sample_no[key] = sample_no.get(key, 0) + 1
        inst = "all" if rest[0] in ("all", "-1") else rest[0]
        for c, v in zip(header[1:], values):
            col.add(ts, act, inst, c, v, sample=sample_no.get(key, 0), since_boot=boot, line=lineno)
    if not col.n_values:
        raise ParseError(path, None, "mpstat output with at least one sample", "none")
    if steps:
        sm.DayClock(None, sm.ZONE_UTC, steps).warn_steps_back(sink)
    col.fill_intervals()
    col.flush(sink)


# -- JSON -------------------------------------------------------------------------------

# mpstat -o JSON keys -> (activity, instance key, key -> sar column name)
JSON_BLOCKS = {
    "cpu-load": ("cpu", "cpu"), "node-load": ("cpu-node", "node"),
    "sum-interrupts": ("intr", "cpu"), "individual-interrupts": ("intr-irq", "cpu"),
    "soft-interrupts": ("softirq", "cpu"),
}


def sniff_mpstat_json(head: FileHead) -> bool:
    if head.is_binary:
        return False
    t = head.text.lstrip()
    # sadf -j has a "timestamp" object and "file-date"; mpstat a "timestamp" string and a "date"
    return (t.startswith("{") and '"sysstat"' in t[:200] and '"file-date"' not in t
            and re.search(r'"timestamp":\s*"', t, flags=re.ASCII) is not None
            and any(f'"{k}"' in t for k in JSON_BLOCKS))


_DATE_KEY = re.compile(r'"date"\s*:', re.ASCII)


def parse_mpstat_json(path: Path, sink: Sink) -> None:
    steps: list[tuple[int, int]] = []  # times that go back (see DayClock)
    text = textfile.decode_text(path, path.read_bytes(), "mpstat -o JSON")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise ParseError(path, line, "complete mpstat -o JSON", str(exc).split(":")[0]) from None
    col = sm.Collector("mpstat", "mpstat-json")
    lines, record = record_lines(text), 0  # each statistics record's line, every host's
    tz, col.tz_basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    hosts = doc.get("sysstat", {}).get("hosts") if isinstance(doc, dict) else None
    if not isinstance(hosts, list):
        raise ParseError(path, None, "a {\"sysstat\": {\"hosts\": [...]}} document", "another structure")
    for h, host in enumerate(hosts):
        if not isinstance(host, dict):
            raise ParseError(path, None, "a host object in sysstat.hosts", type(host).__name__)
        col.host = host.get("nodename")
        d: date | None = sm.parse_date(str(host.get("date", "")), hint)
        if d is None:
            dates = [text.count("\n", 0, m.start()) + 1 for m in _DATE_KEY.finditer(text)]  # one per host
            raise ParseError(path, dates[h] if len(dates) == len(hosts) else None, "a date in the host's \"date\"",
                             str(host.get("date")))
        clock = sm.DayClock(d, tz, steps)
        for i, st in enumerate(host.get("statistics") or []):
            t = sm.parse_tod(str(st.get("timestamp", "")).split()) if isinstance(st, dict) else None
            if t is None:
                raise ParseError(path, None, f"a \"timestamp\" time of day in statistics[{i}]",
                                 str(st)[:40])
            ts = clock.at("json", t[0])
            line = lines[record] if record < len(lines) else None
            record += 1
            for key, (act, inst_key) in JSON_BLOCKS.items():
                for item in st.get(key) or []:
                    if not isinstance(item, dict):
                        continue
                    inst = str(item.get(inst_key, "all"))
                    for k, v in item.items():
                        if k == inst_key:
                            continue
                        if isinstance(v, list):  # individual-interrupts: {"cpu": "0", "intr": [{"name", "value"}]}
                            for iv in v:
                                if isinstance(iv, dict) and isinstance(iv.get("value"), (int, float)):
                                    col.add(ts, act, inst, f"{iv.get('name')}/s", float(iv["value"]), sample=i,
                                            line=line)
                            continue
                        if isinstance(v, bool) or not isinstance(v, (int, float)):
                            continue
                        name = f"%{k}" if act in ("cpu", "cpu-node") else (f"{k}/s" if act != "intr" else "intr/s")
                        col.add(ts, act, inst, name, float(v), sample=i, line=line)
    if not col.n_values:
        raise ParseError(path, None, "mpstat -o JSON with at least one sample", "none")
    if steps:
        sm.DayClock(None, sm.ZONE_UTC, steps).warn_steps_back(sink)
    col.fill_intervals()
    col.flush(sink)


MODULE = ParserModule(
    name="sysstat-mpstat",
    formats=[
        Format(tool="mpstat", name="mpstat-text", description="mpstat text (plain, -P, -A with NODE, -I)",
               sniff=sniff_mpstat_text, parse=parse_mpstat_text, priority=17),
        Format(tool="mpstat", name="mpstat-json", description="mpstat -o JSON",
               sniff=sniff_mpstat_json, parse=parse_mpstat_json, priority=25),
    ],
)
