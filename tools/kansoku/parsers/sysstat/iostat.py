"""iostat (sysstat): text reports (``-c``, ``-d``, ``-x``, ``-xs``, ``-k``/``-m``, ``-p``, ``-h``/``--pretty``,
with and without ``-t`` in every timestamp format incl. ``S_TIME_FORMAT=ISO``, harness time-stamp
prefixes) and ``-o JSON``. See docs/formats.md §3.

Rows go to ``sys_metrics`` (schema and typed views in sysstat.py): activity ``cpu`` (instance 'all',
metrics as printed: ``%user``, ``%system``, ...) and ``disk`` (instance = device, metrics = header names
of that version: ``rkB/s``, ``rsec/s``, ``Blk_read/s``, ``aqu-sz``/``avgqu-sz`` ...; the ``disk`` view
converts units). The FIRST REPORT covers the time since boot: it is stored with ``since_boot = true``
and left out of every view -- unless the file was written with ``iostat -y`` (seen as two blank lines
after the banner instead of one, sysstat 12.6.1 captures).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.sadf_json import load_json_salvaging, statistics_lines

_ISO_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})([+-]\d{2}:?\d{2}|Z)?$", re.ASCII)
_DEVICE_HDR = re.compile(r"^Device:?$", re.ASCII)
# avg-cpu keys of the JSON output -> text column names
_CPU_JSON = {"user": "%user", "nice": "%nice", "system": "%system", "iowait": "%iowait", "steal": "%steal",
             "idle": "%idle"}
_DISK_JSON = {"util": "%util", "rrqm": "%rrqm", "wrqm": "%wrqm", "drqm": "%drqm"}


def _is_device_header(toks: list[str]) -> bool:
    return bool(toks) and (bool(_DEVICE_HDR.match(toks[0])) or (toks[-1] == "Device" and len(toks) > 2))


def sniff_iostat_text(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines, _ = sm.strip_prefix(head.lines(80))
    nonempty = [l for l in lines if l.strip()]
    if not nonempty or not sm.BANNER.match(nonempty[0].strip()):
        return False
    return any(l.startswith("avg-cpu:") or _is_device_header(l.split()) for l in nonempty[1:40])


def _parse_ts_line(toks: list[str], hint, tz) -> datetime | None:
    """The -t line before each report: '%x %X' in the locale, or ISO '%FT%T%z' (docs/formats.md §2.2)."""
    if len(toks) == 1:
        m = _ISO_TS.match(toks[0])
        if m:
            off = m.group(3) or "+00:00"
            if off == "Z":
                off = "+00:00"
            elif ":" not in off:
                off = off[:3] + ":" + off[3:]
            return datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{off}")
        return None
    d = sm.parse_date(toks[0], hint)
    if d is None:
        return None
    t = sm.parse_tod(toks[1:])
    if t is None or t[1] != len(toks) - 1:
        return None
    return sm.combine(d, t[0], tz)


def parse_iostat_text(path: Path, sink: Sink) -> None:
    raw_lines, truncated = sm.read_text(path, "iostat output")
    lines, stamps = sm.strip_prefix(raw_lines)
    col = sm.Collector("iostat", "iostat-text")
    tz, col.tz_basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    n = len(lines)
    report = -1
    has_cpu = has_dev = False
    ts: datetime | None = None
    ts_pending = False
    cpu_hdr: list[str] | None = None
    dev_hdr: list[str] | None = None
    dev_name_last = False
    in_devices = False
    banner_seen = False
    blank_after_banner = 0
    skip_first = False  # iostat -y
    expect_cpu_values = False
    used_prefix_ts = [False]

    def new_report(lineno: int) -> None:
        nonlocal report, has_cpu, has_dev, ts, ts_pending
        report += 1
        has_cpu = has_dev = False
        if not ts_pending:
            ts = None
            st = stamps[lineno - 1]
            if st is not None:
                ts = datetime.fromisoformat(st).replace(tzinfo=tz)
                used_prefix_ts[0] = True
        ts_pending = False

    for lineno, line in enumerate(lines, start=1):
        toks = line.split()
        is_last = lineno == n
        if not toks:
            in_devices = False
            if banner_seen and report < 0:
                blank_after_banner += 1
            continue
        if not banner_seen:
            m = sm.BANNER.match(line.strip())
            if not m:
                raise ParseError(path, lineno, "the iostat banner 'Linux ... (host) DATE _arch_ (N CPU)'", line)
            banner_seen = True
            col.host = m.group("host")
            d = sm.parse_date(m.group("date"), hint)
            hint = d or hint
            continue
        if report < 0 and blank_after_banner >= 2:
            skip_first = True  # -y: the since-boot report was not printed (an empty line stands for it)
        if sm.BANNER.match(line.strip()):
            continue  # a second run appended to the same file
        t = _parse_ts_line(toks, hint, tz)
        if t is not None:
            new_report(lineno)
            ts, ts_pending = t, True
            col.tz_basis = "iostat -t ISO time with offset" if "T" in toks[0] else col.tz_basis
            in_devices = False
            continue
        if toks[0] == "avg-cpu:":
            if report < 0 or has_cpu or has_dev:
                if not (ts_pending and not has_cpu and not has_dev):
                    new_report(lineno)
            ts_pending = False
            cpu_hdr = toks[1:]
            expect_cpu_values = True
            in_devices = False
            continue
        if expect_cpu_values:
            expect_cpu_values = False
            vals = [sm.num(x) for x in toks]
            if len(vals) != len(cpu_hdr or []) or any(v is None for v in vals):
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (iostat killed?); skipped")
                    continue
                raise ParseError(path, lineno, f"{len(cpu_hdr or [])} numbers under 'avg-cpu: "
                                 f"{' '.join(cpu_hdr or [])}'", line)
            has_cpu = True
            boot = report == 0 and not skip_first
            col.add_record(ts, "cpu", "all", col.columns(cpu_hdr), vals, sample=report, since_boot=boot, line=lineno)
            continue
        if _is_device_header(toks):
            if report < 0 or has_dev:
                if not (ts_pending and not has_dev):
                    new_report(lineno)
            ts_pending = False
            dev_name_last = not _DEVICE_HDR.match(toks[0])
            dev_hdr = toks[:-1] if dev_name_last else toks[1:]
            in_devices = True
            continue
        if in_devices and dev_hdr is not None:
            name, vals_t = (toks[-1], toks[:-1]) if dev_name_last else (toks[0], toks[1:])
            vals = [sm.num(x) for x in vals_t]
            if len(vals) != len(dev_hdr) or any(v is None for v in vals):
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (iostat killed?); skipped")
                    continue
                raise ParseError(path, lineno, f"a device name and {len(dev_hdr)} numbers under "
                                 f"'{' '.join(dev_hdr[:6])} ...'", line)
            has_dev = True
            if not dev_name_last and line[:1] == " ":
                col.groups.add(name)  # iostat -g: the group's total row is printed indented
            boot = report == 0 and not skip_first
            col.add_record(ts, "disk", name, col.columns(dev_hdr), vals, sample=report, since_boot=boot, line=lineno)
            continue
        if truncated and is_last:
            sink.warn(lineno, "last line is cut off (iostat killed?); skipped")
            continue
        raise ParseError(path, lineno, "an iostat line (time stamp, 'avg-cpu:', device header or device row)", line)
    if report < 0:
        raise ParseError(path, None, "at least one iostat report after the banner", "none")
    if used_prefix_ts[0]:
        col.tz_basis = "harness line prefixes: " + (col.tz_basis or "")
    col.fill_intervals()
    col.flush(sink)


# -- JSON ------------------------------------------------------------------------------


def sniff_iostat_json(head: FileHead) -> bool:
    if head.is_binary:
        return False
    t = head.text.lstrip()
    return t.startswith("{") and '"sysstat"' in t[:200] and ('"avg-cpu"' in t or '"disk_device"' in t)


def parse_iostat_json(path: Path, sink: Sink) -> None:
    doc, text = load_json_salvaging(path, sink, "iostat -o JSON output")
    col = sm.Collector("iostat", "iostat-json")
    lines, record = statistics_lines(text, doc), 0  # each statistics record's line, every host's
    stamped = None  # whether the file's records have a timestamp (iostat -t): the first record decides
    tz, col.tz_basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    for host in doc["sysstat"].get("hosts", []):
        col.host = host.get("nodename")
        d0 = sm.parse_date(str(host.get("date", "")), hint)
        for i, st in enumerate(host.get("statistics", [])):
            line = lines[record] if record < len(lines) else None
            record += 1
            if not isinstance(st, dict):
                raise ParseError(path, line, f"an object in 'statistics' (record {i + 1})", type(st).__name__)
            if stamped is None:
                stamped = "timestamp" in st
            elif stamped != ("timestamp" in st):  # a record's time lost, or records of two iostat runs
                raise ParseError(path, line, f"a \"timestamp\" in statistics record {i + 1}, as in the file's first "
                                 "record (iostat -t prints one in every record)" if stamped else
                                 f"statistics record {i + 1} without a \"timestamp\", as the file's first record "
                                 "(iostat without -t prints none)",
                                 "none" if stamped else str(st["timestamp"])[:40])
            ts = None
            if "timestamp" in st:
                ts = _parse_ts_line(str(st["timestamp"]).split(), d0 or hint, tz)
                if ts is None:
                    raise ParseError(path, line, f"an iostat timestamp in statistics record {i + 1}",
                                     str(st["timestamp"]))
                if "T" in str(st["timestamp"]):
                    col.tz_basis = "iostat ISO time with offset"
            boot = i == 0
            for k, v in (st.get("avg-cpu") or {}).items():
                if isinstance(v, (int, float)):
                    col.add(ts, "cpu", "all", _CPU_JSON.get(k, k), float(v), sample=i, since_boot=boot, line=line)
            for dev in st.get("disk") or []:
                name = dev.get("disk_device")
                for k, v in dev.items():
                    if k != "disk_device" and isinstance(v, (int, float)) and not isinstance(v, bool):
                        col.add(ts, "disk", name, _DISK_JSON.get(k, k), float(v), sample=i, since_boot=boot,
                                line=line)
    col.fill_intervals()
    col.flush(sink)


MODULE = ParserModule(
    name="iostat",
    formats=[
        Format(tool="iostat", name="iostat-text", description="iostat text reports (-c/-d/-x, -k/-m, -t, -p, -h)",
               sniff=sniff_iostat_text, parse=parse_iostat_text, priority=15),
        Format(tool="iostat", name="iostat-json", description="iostat -o JSON",
               sniff=sniff_iostat_json, parse=parse_iostat_json, priority=20),
    ],
    tables=sm.TABLES,
)
