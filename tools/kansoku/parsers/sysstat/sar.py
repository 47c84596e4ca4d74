"""sysstat sar: ``sar`` text (``sar -A`` and its parts, live or ``-f``), ``sadf -d`` CSV,
``sadf -j`` JSON and binary ``sa`` data files (rendered with ``sadf -j`` when sysstat is installed).

Every format lands in the tall ``sys_metrics`` table with the same (activity, metric) names:
the sar/sadf -d header names (docs/formats.md §2.4, §2.5); sadf -j keys are mapped to them (§2.6).
The iostat and vmstat modules write into the same table; this module owns the schema and the
typed views ``cpu``, ``disk``, ``memory`` over all three tools, plus the run-window views and metrics.

Several renderings of the same data in one run (the corpus keeps sa.bin, sar_A.txt, sadf_d.csv and
sadf.json side by side) are all ingested as sources, but the views read ONE file per
(run, tool, activity): the lowest ``format_rank`` (sadf -j, then sadf -d, then sar text, then the
sa file through sadf) -- see ``sys_series_chosen``. sadf output is preferred because it carries full
dates and UTC; sar text only has times of day in the machine's local time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink

# -- activities ----------------------------------------------------------------------

# Header columns that name the item a row is about (docs/formats.md §2.4): they make the instance.
INSTANCE_COLS = {"CPU", "INTR", "DEV", "IFACE", "TTY", "FILESYSTEM", "MOUNTPOINT", "BUS", "FAN", "TEMP",
                 "IN", "DEVICE", "FCHOST", "BAT"}

# First metric column of a header -> activity name (sadf -j names, shortened).
SIGNATURES = {
    "%usr": "cpu", "%user": "cpu", "proc/s": "task", "pswpin/s": "swapping", "pgpgin/s": "paging",
    "tps": "io", "frmpg/s": "memory-rate", "kbmemfree": "memory", "kbswpfree": "swap", "kbhugfree": "hugepages",
    "dentunusd": "kernel", "runq-sz": "queue", "call/s": "net-nfs", "scall/s": "net-nfsd", "totsck": "net-sock",
    "irec/s": "net-ip", "ihdrerr/s": "net-eip", "imsg/s": "net-icmp", "ierr/s": "net-eicmp", "active/s": "net-tcp",
    "atmptf/s": "net-etcp", "idgm/s": "net-udp", "tcp6sck": "net-sock6", "irec6/s": "net-ip6",
    "ihdrer6/s": "net-eip6", "imsg6/s": "net-icmp6", "ierr6/s": "net-eicmp6", "idgm6/s": "net-udp6",
    "%scpu-10": "psi-cpu", "%sio-10": "psi-io", "%smem-10": "psi-mem", "MBfsfree": "filesystems",
}


def activity_of(cols: list[str]) -> str:
    inst = [c for c in cols if c in INSTANCE_COLS]
    metrics = [c for c in cols if c not in INSTANCE_COLS]
    first = metrics[0] if metrics else ""
    if "DEV" in inst:
        return "disk"
    if "IFACE" in inst:
        return "net-dev" if "rxpck/s" in metrics else "net-edev" if "rxerr/s" in metrics else f"net-{first}"
    if "INTR" in inst:
        return "intr"
    if "TTY" in inst:
        return "serial"
    if "FILESYSTEM" in inst or "MOUNTPOINT" in inst:
        return "filesystems"
    for k, a in (("FAN", "fan"), ("TEMP", "temp"), ("IN", "in"), ("BUS", "usb"), ("FCHOST", "fchost"),
                 ("BAT", "battery")):
        if k in inst:
            return a
    if "CPU" in inst:
        if first in ("%usr", "%user"):
            return "cpu"
        return {"MHz": "cpu-frequency", "wghMHz": "cpu-frequency", "total/s": "softnet",
                "intr/s": "intr"}.get(first, f"cpu-{first}")
    return SIGNATURES.get(first, f"other:{first}")


KNOWN_ACTIVITIES = set(SIGNATURES.values()) | {
    "disk", "net-dev", "net-edev", "intr", "serial", "filesystems", "fan", "temp", "in", "usb", "cpu",
    "cpu-frequency", "softnet", "fchost", "battery"}

# Activities whose values are strings (sar -m USB lists devices): not stored.
TEXT_ACTIVITIES = {"usb"}
# Columns holding text inside numeric activities (sar -m BAT 'status'): skipped.
TEXT_COLUMNS = {"status"}


def norm_instance(activity: str, inst: str | None) -> str | None:
    if inst is None:
        return None
    if activity in ("cpu", "softnet", "cpu-frequency") and inst in ("-1", "all"):
        return "all"
    return inst


# -- sar text ---------------------------------------------------------------------------

_AVG_LABEL = re.compile(r":$")


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
    lines, truncated = sm.read_text(path, "sar text output")
    col = sm.Collector("sar", "sar-text")
    tz, col.tz_basis = sm.local_tz(sink.run_start, sink)
    hint = sink.run_start.date() if isinstance(sink.run_start, datetime) else None
    day0: date | None = None
    clock = sm.DayClock(None, tz)
    header_secs: dict[tuple, int] = {}  # header -> time printed on it (the start of the first interval)
    since_boot_keys: set[tuple] = set()
    header: list[str] | None = None
    act = ""
    inst_idx: list[int] = []
    metric_idx: list[tuple[int, str]] = []
    state: dict[tuple, list[int]] = {}  # header -> [day offset, last seconds]
    sample_no: dict[tuple, int] = {}
    sample_count: dict[tuple, int] = {}
    warned_text = False
    bad_rows: list[int] = []
    saw_banner = False
    n = len(lines)
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        toks = line.split()
        m = sm.BANNER.match(line.strip())
        if m:
            d = sm.parse_date(m.group("date"), hint)
            if d is None:
                raise ParseError(path, lineno, "a date in the sar banner (%x in a known locale, or ISO)",
                                 m.group("date"))
            day0, saw_banner, header = d, True, None
            clock = sm.DayClock(d, tz)
            col.host = m.group("host")
            continue
        t = sm.parse_tod(toks)
        is_last = lineno == n
        if t is None:
            # 'Average:' and its translations ('Durchschn.:', 'Moyenne :', '平均値:'), 'Summary:'
            if _AVG_LABEL.search(toks[0]) or (len(toks) > 1 and toks[1] == ":"):
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
            clock = sm.DayClock(day0, tz)
        if rest[0] == "LINUX" and len(rest) > 1 and rest[1].startswith("RESTART"):
            cpus = re.search(r"\((\d+) CPU\)", line)
            ts = clock.at(("restart",), secs)
            col.add(ts, "restart", None, "cpu_count", float(cpus.group(1)) if cpus else None, line=lineno)
            header = None
            continue
        if rest[0] == "COM":
            continue
        values = [sm.num(x) for x in rest]
        if all(v is None for v in values):  # a header line: column names only
            header = rest
            clock.tick(tuple(header), secs)
            header_secs[tuple(header)] = secs
            act = activity_of(header)
            inst_idx = [i for i, c in enumerate(header) if c in INSTANCE_COLS]
            metric_idx = [(i, c) for i, c in enumerate(header) if c not in INSTANCE_COLS]
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
        key = tuple(header)
        ts = clock.at(key, secs)
        # 'sar -u 0' (interval 0): one sample stamped with the header's own time = averages since boot
        boot = header_secs.get(key) == secs and sample_count.get(key, -1) < 1
        if boot and key not in since_boot_keys:
            since_boot_keys.add(key)
            sink.warn(lineno, f"sample at the header's own time ({line.split()[0]}): figures since boot "
                              "(sar interval 0), stored flagged since_boot and left out of the views")
        inst = norm_instance(act, "/".join(rest[i] for i in inst_idx)) if inst_idx else None
        if (key, ts) not in sample_no:
            sample_no[(key, ts)] = sample_count[key] = sample_count.get(key, -1) + 1
        sn = sample_no[(key, ts)]
        for i, c in metric_idx:
            v = values[i]
            if v is None:
                if c in TEXT_COLUMNS:
                    continue
                if truncated and is_last:
                    break
                raise ParseError(path, lineno, f"a number in column {c!r}", rest[i])
            col.add(ts, act, inst, c, v, sample=sn, line=lineno, since_boot=boot)
    if bad_rows and len(bad_rows) * 2 > sum(1 for r in col.rows if r["metric"]) / max(1, len(header or [1])):
        raise ParseError(path, bad_rows[0], "rows with as many values as their header has columns", "mostly not")
    if not saw_banner and not col.rows:
        raise ParseError(path, None, "sar text output (banner 'Linux ... (N CPU)' and samples)", "no samples")
    col.fill_intervals()
    col.flush(sink)


# -- sadf -d ---------------------------------------------------------------------------

_SADF_TS = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})(?: (\S+))?$")


def sniff_sadf_csv(head: FileHead) -> bool:
    if head.is_binary:
        return False
    return any(l.startswith("# hostname;interval;timestamp;") for l in head.lines(5))


def _sadf_ts(tok: str, tz, tz_cache: dict, sink: Sink | None = None) -> datetime | None:
    if tok.isdigit():
        return datetime.fromtimestamp(int(tok), timezone.utc)  # sadf -U
    m = _SADF_TS.match(tok)
    if not m:
        return None
    d, h, mi, s, zone = m.groups()
    try:
        base = datetime.fromisoformat(f"{d}T{h}:{mi}:{s}")
    except ValueError:  # hour 53, month 13: the caller names the line
        return None
    if zone is None:
        return base.replace(tzinfo=tz)
    z = tz_cache.get(zone)
    if z is None:
        # sysstat prints tzname[0], the standard-time abbreviation, all year: resolve it against the
        # run's IANA zone (summer time right), never as a fixed offset
        z, guess = sm.zone_for_abbreviation(zone, sink)
        if z is None:
            z = tz
            if sink is not None:
                sink.warn(None, f"time zone abbreviation {zone!r} is not known: times taken in "
                                f"{getattr(tz, 'key', tz)} (a guess; set run.toml timezone)")
        elif guess and sink is not None:
            sink.warn(None, f"time zone abbreviation {zone!r} resolved as {getattr(z, 'key', z)} (a guess: "
                            "abbreviations are ambiguous; set run.toml timezone = \"Area/City\")")
        tz_cache[zone] = z
    return base.replace(tzinfo=z)


def _csv_segments(cols: list[str]) -> list[dict]:
    """Split a (possibly -h one-line) header into activity segments (docs/formats.md §2.5)."""
    if "idvendor" in cols:  # sar -m USB: text columns, one activity
        return [{"cols": cols, "repeated": False, "activity": "usb", "star": False}]
    segs: list[dict] = []
    cur: list[str] = []

    def close(repeated: bool):
        nonlocal cur
        if cur:
            # a non-repeated run may hold several activities (-dh): split where a known one starts
            if not repeated:
                start = 0
                for i, c in enumerate(cur):
                    if i > start and c in SIGNATURES and cur[start] not in INSTANCE_COLS:
                        segs.append({"cols": cur[start:i], "repeated": False})
                        start = i
                segs.append({"cols": cur[start:], "repeated": False})
            else:
                segs.append({"cols": cur, "repeated": True})
        cur = []

    for c in cols:
        if c.endswith("[...]"):
            cur.append(c[:-5])
            close(True)
        else:
            if c in INSTANCE_COLS and cur and any(x not in INSTANCE_COLS for x in cur):
                close(False)
            cur.append(c)
    close(False)
    for s in segs:
        s["activity"] = activity_of([c for c in s["cols"] if c != "CPU*"] if s["cols"][0] == "INTR"
                                    else s["cols"])
        s["star"] = "CPU*" in s["cols"]
    return segs


def _match_segments(segs: list[dict], vals: list[str], ncpu_hint: int | None) -> list[tuple[dict, list[str]]] | None:
    """Assign the values of a sadf -d(h) row to header segments (repeated groups have unknown counts)."""

    def ok(seg_cols: list[str], chunk: list[str]) -> bool:
        for c, v in zip(seg_cols, chunk):
            if c == "CPU":
                if not re.fullmatch(r"-?\d+|all", v):
                    return False
            elif c not in INSTANCE_COLS and sm.num(v) is None:
                return False
        return True

    def cols_for(seg: dict, width: int) -> list[str]:
        if not seg["star"]:
            return seg["cols"]
        base = [c for c in seg["cols"] if c != "CPU*"]
        k = width - len(base)
        names = ["all"] + [f"CPU{i}" for i in range(k - 1)]  # -P subsets cannot be told apart
        return base + names

    def rec(i: int, pos: int):
        if i == len(segs):
            return [] if pos == len(vals) else None
        seg = segs[i]
        if seg["star"]:
            base = len(seg["cols"]) - 1
            pref = [ncpu_hint + 1] if ncpu_hint else []
            widths = pref + [base + w for w in range(1, 257) if base + w not in pref]
            widths = [w if w > base else base + w for w in widths]
        else:
            widths = [len(seg["cols"])]
        for width in widths:
            if pos + width > len(vals):
                continue
            cols = cols_for(seg, width)
            if not seg["repeated"]:
                if ok(cols, vals[pos:pos + width]):
                    r = rec(i + 1, pos + width)
                    if r is not None:
                        return [(seg, cols, vals[pos:pos + width])] + r
                continue
            chunks = []
            p = pos
            while p + width <= len(vals) and ok(cols, vals[p:p + width]):
                chunks.append((seg, cols, vals[p:p + width]))
                p += width
                r = rec(i + 1, p)
                if r is not None:
                    return list(chunks) + r
        return None

    return rec(0, 0)


def parse_sadf_csv(path: Path, sink: Sink) -> None:
    lines, truncated = sm.read_text(path, "sadf -d output")
    col = sm.Collector("sar", "sadf-csv")
    tz, basis = sm.local_tz(sink.run_start, sink, warn=False)
    col.tz_basis = "sadf timestamps (UTC or named zone)"
    tz_cache: dict = {}
    segs: list[dict] | None = None
    simple = False
    sample_of: dict[tuple, int] = {}
    sample_count: dict[str, int] = {}
    n = len(lines)
    ncpu: int | None = None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        is_last = lineno == n
        if line.startswith("#"):
            if not line.startswith("# hostname;interval;timestamp;"):
                continue
            cols = line[2:].split(";")[3:]
            segs = _csv_segments(cols)
            simple = len(segs) == 1 and not segs[0]["repeated"] and not segs[0]["star"]
            if len(segs) == 1 and segs[0]["star"] and not segs[0]["repeated"]:
                simple = False
            continue
        parts = line.split(";")
        if len(parts) < 4:
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sadf -d row 'host;interval;timestamp;values...'", line)
        host, interval, tstok, vals = parts[0], parts[1], parts[2], parts[3:]
        col.host = host
        ts = _sadf_ts(tstok, tz, tz_cache, sink)
        if ts is None:
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sadf timestamp 'YYYY-MM-DD HH:MM:SS [UTC]' or epoch seconds", tstok)
        if tstok.isdigit() or len(tstok.split()) != 3 or tstok.split()[2] not in ("UTC", "GMT"):
            col.tz_basis = "sadf -U epoch seconds" if tstok.isdigit() else f"sadf timestamps ({basis} if no zone)"
        if vals[0].startswith("LINUX-RESTART"):
            m = re.search(r"\((\d+) CPU\)", vals[0])
            if m:
                ncpu = int(m.group(1))
            col.add(ts, "restart", None, "cpu_count", float(m.group(1)) if m else None, line=lineno)
            continue
        if vals[0].startswith("COM "):
            continue
        if segs is None:
            raise ParseError(path, lineno, "a '# hostname;interval;timestamp;...' header before the rows", line)
        try:
            iv = float(interval)
        except ValueError:
            raise ParseError(path, lineno, "the interval in seconds (2nd field)", interval) from None
        if len(segs) == 1 and segs[0]["activity"] in TEXT_ACTIVITIES:
            continue
        if simple:
            cols = segs[0]["cols"]
            if len(vals) != len(cols):
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                    continue
                raise ParseError(path, lineno, f"{len(cols)} values after the timestamp (header "
                                 f"{';'.join(cols[:5])}...)", line)
            assigned = [(segs[0], cols, vals)]
        elif len(segs) == 1 and segs[0]["star"] and not segs[0]["repeated"]:  # INTR;CPU* (sadf -d -I ALL)
            base = [c for c in segs[0]["cols"] if c != "CPU*"]
            k = len(vals) - len(base)
            assigned = [(segs[0], base + ["all"] + [f"CPU{i}" for i in range(k - 1)], vals)]
        else:
            assigned = _match_segments(segs, vals, ncpu)
            if assigned is None:
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                    continue
                raise ParseError(path, lineno, "values matching the sadf -d header's columns", line)
        for seg, cols, chunk in assigned:
            act = seg["activity"]
            if act in TEXT_ACTIVITIES:
                continue
            inst_vals = [v for c, v in zip(cols, chunk) if c in INSTANCE_COLS]
            inst = norm_instance(act, "/".join(inst_vals)) if inst_vals else None
            key = (act, ts)
            if key not in sample_of:
                sample_of[key] = sample_count[act] = sample_count.get(act, -1) + 1
            sn = sample_of[key]
            for c, v in zip(cols, chunk):
                if c in INSTANCE_COLS:
                    continue
                x = sm.num(v)
                if x is None:
                    if c in TEXT_COLUMNS:
                        continue
                    if truncated and is_last:
                        break
                    raise ParseError(path, lineno, f"a number in column {c!r}", v)
                col.add(ts, act, inst, c, x, interval_s=iv, sample=sn, line=lineno)
    if not col.rows:
        raise ParseError(path, None, "sadf -d rows under a '# hostname;interval;timestamp;...' header", "none")
    col.flush(sink)


# -- sadf -j ----------------------------------------------------------------------------

# JSON key -> sar header name, per activity (docs/formats.md §2.6). Default rule: '<x>-percent' -> '%<x>'.
_RATE = "/s"
JSON_ACTIVITY = {  # json key -> (activity, instance key, suffix rule)
    "cpu-load": ("cpu", "cpu", "pct"), "cpu-load-all": ("cpu", "cpu", "pct"),
    "process-and-context-switch": ("task", None, _RATE), "interrupts": ("intr", "intr", ""),
    "swap-pages": ("swapping", None, _RATE), "paging": ("paging", None, _RATE), "io": ("io", None, "io"),
    "memory": ("memory", None, "kb"), "hugepages": ("hugepages", None, "kb"), "kernel": ("kernel", None, ""),
    "queue": ("queue", None, ""), "serial": ("serial", "line", _RATE), "disk": ("disk", "disk-device", "disk"),
    "net-dev": ("net-dev", "iface", _RATE), "net-edev": ("net-edev", "iface", _RATE),
    "net-nfs": ("net-nfs", None, _RATE), "net-nfsd": ("net-nfsd", None, _RATE), "net-sock": ("net-sock", None, ""),
    "net-ip": ("net-ip", None, _RATE), "net-eip": ("net-eip", None, _RATE), "net-icmp": ("net-icmp", None, _RATE),
    "net-eicmp": ("net-eicmp", None, _RATE), "net-tcp": ("net-tcp", None, _RATE),
    "net-etcp": ("net-etcp", None, _RATE), "net-udp": ("net-udp", None, _RATE),
    "net-sock6": ("net-sock6", None, ""), "net-ip6": ("net-ip6", None, _RATE),
    "net-eip6": ("net-eip6", None, _RATE), "net-icmp6": ("net-icmp6", None, _RATE),
    "net-eicmp6": ("net-eicmp6", None, _RATE), "net-udp6": ("net-udp6", None, _RATE),
    "softnet": ("softnet", "cpu", "softnet"), "cpu-frequency": ("cpu-frequency", "number", "freq"),
    "filesystems": ("filesystems", "filesystem", ""), "fan-speed": ("fan", "number", ""),
    "temperature": ("temp", "number", ""), "voltage-input": ("in", "number", ""),
    "fchosts": ("fchost", "fchost", _RATE), "usb-devices": ("usb", None, ""), "battery": ("battery", "number", "bat"),
    "psi-cpu": ("psi-cpu", None, "psi"), "psi-io": ("psi-io", None, "psi"), "psi-mem": ("psi-mem", None, "psi"),
}
_KB_RENAME = {"active": "kbactive", "inactive": "kbinact"}
_PSI = {"cpu": "cpu", "io": "io", "mem": "mem"}
_DISK_RATE = {"rd_sec", "wr_sec", "dc_sec", "rkB", "wkB", "dkB"}
_SOFTNET_KEEP = {"blg_len"}


def _json_metric(rule: str, act: str, key: str) -> tuple[str, str]:
    """(activity, metric name) for a sadf -j key."""
    if key.endswith("-percent"):
        name = "%" + key[: -len("-percent")]
        if act == "memory" and key.startswith("swp"):
            return "swap", name
        return act, name
    if rule == "pct":
        return act, "%" + key
    if rule == _RATE:
        return act, key + "/s"
    if rule == "io":
        return act, key + "/s" if key in ("bread", "bwrtn", "bdscd") else key
    if rule == "kb":
        name = _KB_RENAME.get(key, "kb" + key)
        if act == "memory" and key.startswith("swp"):
            return "swap", name
        return act, name
    if rule == "disk":
        return act, key + "/s" if key in _DISK_RATE else key
    if rule == "softnet":
        return act, key if key in _SOFTNET_KEEP else key + "/s"
    if rule == "bat":
        return act, {"percent-capacity": "%cap", "variation": "cap/min"}.get(key, key)
    if rule == "freq":
        return act, "MHz" if key == "frequency" else key
    if rule == "psi":
        m = re.fullmatch(r"(some|full)_avg(\d*)", key)
        if m:
            kind = act.split("-")[1]
            return act, f"%{m.group(1)[0]}{kind}" + (f"-{m.group(2)}" if m.group(2) else "")
    return act, key


def sniff_sadf_json(head: FileHead) -> bool:
    if head.is_binary:
        return False
    t = head.text.lstrip()
    return t.startswith("{") and '"sysstat"' in t[:200] and ('"file-date"' in t or '"file-utc-time"' in t
                                                            or '"restarts"' in t or '"cpu-load' in t)


def load_json_salvaging(path: Path, sink: Sink, what: str) -> dict:
    """json.load, or -- for a document cut off mid-write (sadf/iostat interrupted, docs/formats.md §0.5) --
    the host header and every complete ``statistics`` record before the cut, with a warning."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(path, raw[: exc.start].count(b"\n") + 1, f"UTF-8 JSON ({what})", "undecodable bytes") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        at = text.find('"statistics"')
        if at < 0:
            raise ParseError(path, exc.lineno, f"a JSON document ({what})", exc.msg) from None
        head_txt = text[:at]
        host: dict[str, Any] = {}
        for k, v in re.findall(r'"([\w-]+)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)', head_txt):
            host[k] = json.loads(v)
        lb = text.index("[", at)
        dec = json.JSONDecoder()
        pos = lb + 1
        stats = []
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text) or text[pos] == "]":
                break
            try:
                obj, pos = dec.raw_decode(text, pos)
            except json.JSONDecodeError:
                break
            stats.append(obj)
        if not stats and text[pos:pos + 1] != "]":
            raise ParseError(path, exc.lineno, f"a JSON document ({what})", exc.msg) from None
        line = text[:pos].count("\n") + 1
        sink.warn(line, f"JSON document ends early ({exc.msg} at line {exc.lineno}); "
                        f"kept the {len(stats)} complete statistics records before it")
        host["statistics"] = stats
        doc = {"sysstat": {"hosts": [host]}}
    if not isinstance(doc, dict) or "sysstat" not in doc or not isinstance(doc["sysstat"], dict):
        raise ParseError(path, 1, f"a JSON document with a top-level 'sysstat' object ({what})",
                         str(list(doc)[:3]) if isinstance(doc, dict) else type(doc).__name__)
    return doc


def parse_sadf_json(path: Path, sink: Sink, fmt: str = "sadf-json", doc: dict | None = None) -> None:
    if doc is None:
        doc = load_json_salvaging(path, sink, "sadf -j output")
    col = sm.Collector("sar", fmt)
    tz, basis = sm.local_tz(sink.run_start, sink, warn=False)
    col.tz_basis = "sadf -j timestamps (UTC)"
    unknown: set[str] = set()
    for host in doc["sysstat"].get("hosts", []):
        col.host = host.get("nodename")
        host_tz = timezone.utc
        for sample, st in enumerate(host.get("statistics", [])):
            ts_obj = st.get("timestamp")
            if not isinstance(ts_obj, dict) or "date" not in ts_obj or "time" not in ts_obj:
                raise ParseError(path, None, f"a 'timestamp' object with date and time in statistics record {sample + 1}",
                                 json.dumps(ts_obj)[:60])
            tzname = ts_obj.get("tz")
            z = host_tz
            if tzname and tzname not in ("UTC", "GMT"):
                try:
                    from zoneinfo import ZoneInfo

                    z = ZoneInfo(tzname)
                except Exception:
                    z = tz
                    col.tz_basis = f"sadf -j zone {tzname!r} unknown: {basis}"
            elif not tzname and not ts_obj.get("utc", 1):
                z = tz
                col.tz_basis = f"sadf -j local time: {basis}"
            ts = datetime.fromisoformat(f"{ts_obj['date']}T{ts_obj['time']}").replace(tzinfo=z)
            iv = ts_obj.get("interval")
            for key, val in st.items():
                if key == "timestamp":
                    continue
                _json_activity(col, key, val, ts, iv, sample, unknown)
        for r in host.get("restarts", []) or []:
            b = r.get("boot", {}) if isinstance(r, dict) else {}
            if "date" in b and "time" in b:
                ts = datetime.fromisoformat(f"{b['date']}T{b['time']}").replace(tzinfo=host_tz)
                col.add(ts, "restart", None, "cpu_count", b.get("cpu_count"))
    for k in sorted(unknown):
        sink.warn(None, f"sadf -j activity {k!r} is not known to kansoku; stored under that name")
    if not col.rows:
        sink.warn(None, "no statistics records in the document")
    col.flush(sink)


def _json_activity(col, key: str, val: Any, ts, iv, sample: int, unknown: set) -> None:
    if key in ("network", "power-management", "psi") and isinstance(val, dict):
        for k2, v2 in val.items():
            _json_activity(col, k2, v2, ts, iv, sample, unknown)
        return
    spec = JSON_ACTIVITY.get(key)
    if spec is None:
        unknown.add(key)
        spec = (key, None, "")
    act, inst_key, rule = spec
    if act in TEXT_ACTIVITIES:
        return
    items = val if isinstance(val, list) else [val]
    for item in items:
        if not isinstance(item, dict):
            continue
        inst = None
        if inst_key is None:
            for cand in ("cpu", "iface", "disk-device", "filesystem", "number", "intr", "line"):
                if cand in item and isinstance(item[cand], (str, int)):
                    inst_key = cand
                    break
        if inst_key is not None and inst_key in item:
            inst = norm_instance(act, str(item[inst_key]))
        flat: list[tuple[str, Any]] = []
        for k, v in item.items():
            if k == inst_key:
                continue
            if isinstance(v, dict):  # io: io-reads {rtps, bread}, ...
                flat.extend(v.items())
            else:
                flat.append((k, v))
        for k, v in flat:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            a, name = _json_metric(rule, act, k)
            col.add(ts, a, inst, name, float(v), interval_s=iv, sample=sample)


# -- sa binary ----------------------------------------------------------------------------

SA_MAGIC = (b"\x96\xd5", b"\xd5\x96")  # SYSSTAT_MAGIC 0xd596, either byte order


def sniff_sa_binary(head: FileHead) -> bool:
    return head.raw[:2] in SA_MAGIC and head.size_bytes >= 64


def _readable_rendering_beside(path: Path) -> Path | None:
    """A sar text / sadf -d / sadf -j file in the same directory (detected by content), or None."""
    from kansoku.ingest.detect import detect

    for p in sorted(path.parent.iterdir()):
        if p == path or not p.is_file():
            continue
        d = detect(p)
        if d.format is not None and d.format.name in ("sadf-json", "sadf-csv", "sar-text"):
            return p
    return None


def parse_sa_binary(path: Path, sink: Sink) -> None:
    sadf = shutil.which("sadf")
    if sadf is None:
        sink.warn(None, "binary sa file not read: 'sadf' is not installed (apt-get install sysstat, or "
                        "dnf install sysstat); render it with 'sadf -j FILE -- -A > sadf.json' elsewhere")
        return
    try:
        proc = subprocess.run([sadf, "-j", str(path), "--", "-A"], capture_output=True, text=True, timeout=120,
                              env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    except subprocess.TimeoutExpired:
        raise ParseError(path, None, "sadf -j to finish within 120 s", "timeout") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        # sadf's own words, without the file name it repeats and its conversion hint (given below)
        said = [l.strip() for l in proc.stderr.splitlines() if l.strip() and str(path) not in l
                and not l.startswith(("Try to convert", "You should then"))]
        msg = "; ".join(said)
        readable = _readable_rendering_beside(path)
        if readable is not None:
            # the same data rendered as text beside the sa file (sar -A / sadf -d / sadf -j of it): that
            # file is read instead; an old binary format must not stop the run
            sink.warn(None, f"sa file not readable by the installed sadf (sadf says: {msg or proc.returncode}); "
                            f"the run's {readable.name} holds the same data and is used instead")
            return
        ver = subprocess.run([sadf, "-V"], capture_output=True, text=True).stdout.split("\n")[0].strip() or \
            subprocess.run([sadf, "-V"], capture_output=True, text=True).stderr.split("\n")[0].strip()
        raise ParseError(path, None, f"a sa data file the installed sadf ({ver}) can read; sadf says: "
                         f"{msg or f'exit status {proc.returncode}'}. Convert it with 'sadf -c OLDFILE > NEWFILE', "
                         "render it with the sysstat that wrote it (sar -A -f / sadf -d), or keep that rendering "
                         "beside it (it is then used instead)", "an sa file this sadf cannot read")
    m = re.search(r"File created by sar/sadc from sysstat version (\S+)",
                  subprocess.run([sadf, "-H", str(path)], capture_output=True, text=True,
                                 env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}).stdout)
    if m:
        sink.set_tool_version(m.group(1))
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise ParseError(path, None, "sadf -j to print JSON", f"{exc.msg} at line {exc.lineno}") from None
    parse_sadf_json(path, sink, fmt="sa-binary", doc=doc)


# -- views ---------------------------------------------------------------------------------

# A CPU/disk device is virtual when it is a loop, zram, ram disk, device-mapper or md device;
# a partition (sda1, nvme0n1p1) would double-count its disk: both are left out of the sums.
VIEWS = r"""
CREATE OR REPLACE VIEW sys_series_chosen AS
SELECT * EXCLUDE (choice) FROM (
  SELECT s.*, row_number() OVER (PARTITION BY coalesce(s.run_id, s.source_id), s.tool, s.activity
                                 ORDER BY s.format_rank, s.samples DESC, s.source_id) AS choice
  FROM sys_series s) WHERE choice = 1;

-- The authoritative samples: one file per (run, tool, activity), since-boot samples excluded.
CREATE OR REPLACE VIEW sys_metrics_auth AS
SELECT m.* FROM sys_metrics m
WHERE NOT m.since_boot
  AND (m.source_id, m.activity) IN (SELECT (source_id, activity) FROM sys_series_chosen);

CREATE OR REPLACE VIEW cpu AS
SELECT m.run_id, m.source_id, m.tool, m.format, m.ts, m.interval_s, m.sample,
       epoch(m.ts) - epoch(r.start_time) AS t_s,
       coalesce(m.instance, 'all') AS cpu,
       max(m.value) FILTER (WHERE m.metric IN ('%usr', '%user', 'us')) AS usr_pct,
       max(m.value) FILTER (WHERE m.metric = '%nice') AS nice_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%sys', '%system', 'sy')) AS sys_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%iowait', 'wa')) AS iowait_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%steal', 'st')) AS steal_pct,
       max(m.value) FILTER (WHERE m.metric = '%irq') AS irq_pct,
       max(m.value) FILTER (WHERE m.metric = '%soft') AS soft_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%guest', 'gu')) AS guest_pct,
       max(m.value) FILTER (WHERE m.metric = '%gnice') AS gnice_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%idle', 'id')) AS idle_pct
FROM sys_metrics_auth m LEFT JOIN runs r ON r.run_id = m.run_id
WHERE m.activity = 'cpu'
GROUP BY ALL;

CREATE OR REPLACE VIEW disk AS
SELECT m.run_id, m.source_id, m.tool, m.format, m.ts, m.interval_s, m.sample,
       epoch(m.ts) - epoch(r.start_time) AS t_s,
       m.instance AS device,
       any_value(dv.device_class) AS device_class,
       coalesce(any_value(dv.device_class) IN ('virtual', 'group'),
                regexp_matches(m.instance, '^(loop|zram|ram|dm-|md)\d')) AS is_virtual,
       coalesce(any_value(dv.device_class) = 'partition',
                regexp_matches(m.instance, '^((sd|vd|xvd|hd)[a-z]+\d+|(nvme\d+n\d+|mmcblk\d+)p\d+)$')) AS is_partition,
       coalesce(max(m.value) FILTER (WHERE m.metric IN ('rkB/s', 'kB_read/s')),
                max(m.value) FILTER (WHERE m.metric IN ('rMB/s', 'MB_read/s')) * 1024,
                max(m.value) FILTER (WHERE m.metric IN ('rd_sec/s', 'rsec/s', 'Blk_read/s')) / 2) AS read_kb_s,
       coalesce(max(m.value) FILTER (WHERE m.metric IN ('wkB/s', 'kB_wrtn/s')),
                max(m.value) FILTER (WHERE m.metric IN ('wMB/s', 'MB_wrtn/s')) * 1024,
                max(m.value) FILTER (WHERE m.metric IN ('wr_sec/s', 'wsec/s', 'Blk_wrtn/s')) / 2) AS write_kb_s,
       coalesce(max(m.value) FILTER (WHERE m.metric IN ('dkB/s', 'kB_dscd/s')),
                max(m.value) FILTER (WHERE m.metric IN ('dMB/s', 'MB_dscd/s')) * 1024,
                max(m.value) FILTER (WHERE m.metric IN ('dc_sec/s', 'dsec/s', 'Blk_dscd/s')) / 2) AS discard_kb_s,
       coalesce(max(m.value) FILTER (WHERE m.metric = 'tps'),
                max(m.value) FILTER (WHERE m.metric = 'r/s') + max(m.value) FILTER (WHERE m.metric = 'w/s')
                + coalesce(max(m.value) FILTER (WHERE m.metric = 'd/s'), 0)) AS tps,
       max(m.value) FILTER (WHERE m.metric = 'r/s') AS reads_s,
       max(m.value) FILTER (WHERE m.metric = 'w/s') AS writes_s,
       max(m.value) FILTER (WHERE m.metric IN ('%util', 'util')) AS util_pct,
       max(m.value) FILTER (WHERE m.metric = 'await') AS await_ms,
       max(m.value) FILTER (WHERE m.metric = 'r_await') AS r_await_ms,
       max(m.value) FILTER (WHERE m.metric = 'w_await') AS w_await_ms,
       max(m.value) FILTER (WHERE m.metric IN ('aqu-sz', 'avgqu-sz')) AS aqu_sz,
       max(m.value) FILTER (WHERE m.metric = 'svctm') AS svctm_ms
FROM sys_metrics_auth m LEFT JOIN runs r ON r.run_id = m.run_id
     LEFT JOIN sys_devices dv ON dv.source_id = m.source_id AND dv.device = m.instance
WHERE m.activity = 'disk'
GROUP BY m.run_id, m.source_id, m.tool, m.format, m.ts, m.interval_s, m.sample, t_s, m.instance;

-- sar -r/-S (kB) and vmstat (KiB by default: vmstat -S changes the unit and cannot be seen in the
-- output, docs/formats.md §4; such files are stored as printed).
CREATE OR REPLACE VIEW memory AS
SELECT m.run_id, m.source_id, m.tool, m.format, m.ts, m.interval_s, m.sample,
       epoch(m.ts) - epoch(r.start_time) AS t_s,
       max(m.value) FILTER (WHERE m.metric IN ('kbmemfree', 'free')) AS mem_free_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbavail') AS mem_avail_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbmemused') AS mem_used_kb,
       max(m.value) FILTER (WHERE m.metric = '%memused') AS mem_used_pct,
       max(m.value) FILTER (WHERE m.metric IN ('kbbuffers', 'buff')) AS buffers_kb,
       max(m.value) FILTER (WHERE m.metric IN ('kbcached', 'cache')) AS cached_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbcommit') AS commit_kb,
       max(m.value) FILTER (WHERE m.metric = '%commit') AS commit_pct,
       max(m.value) FILTER (WHERE m.metric IN ('kbactive', 'active')) AS active_kb,
       max(m.value) FILTER (WHERE m.metric IN ('kbinact', 'inact')) AS inactive_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbdirty') AS dirty_kb,
       max(m.value) FILTER (WHERE m.metric IN ('kbswpused', 'swpd')) AS swap_used_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbswpfree') AS swap_free_kb
FROM sys_metrics_auth m LEFT JOIN runs r ON r.run_id = m.run_id
WHERE m.activity IN ('memory', 'swap')
GROUP BY ALL;

-- Cut to the run window (run.toml start/end): a sample counts when the middle of the interval it
-- covers lies inside [start, end].
CREATE OR REPLACE VIEW cpu_in_run AS
SELECT c.* FROM cpu c JOIN runs r ON r.run_id = c.run_id
WHERE epoch(c.ts) - coalesce(c.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time);

CREATE OR REPLACE VIEW disk_in_run AS
SELECT d.* FROM disk d JOIN runs r ON r.run_id = d.run_id
WHERE epoch(d.ts) - coalesce(d.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time);

CREATE OR REPLACE VIEW memory_in_run AS
SELECT x.* FROM memory x JOIN runs r ON r.run_id = x.run_id
WHERE epoch(x.ts) - coalesce(x.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time);

-- Per run, the best tool for CPU numbers: sar (has %soft, per CPU) > mpstat (the same, per CPU) > iostat
-- > vmstat (integers).
CREATE OR REPLACE VIEW cpu_in_run_mean AS
WITH ranked AS (
  SELECT c.*, dense_rank() OVER (PARTITION BY run_id
      ORDER BY CASE tool WHEN 'sar' THEN 1 WHEN 'mpstat' THEN 2 WHEN 'iostat' THEN 3 ELSE 4 END) AS tool_rank
  FROM cpu_in_run c)
SELECT run_id, tool, cpu, count(*) AS samples,
       avg(usr_pct) AS usr_pct, avg(nice_pct) AS nice_pct, avg(sys_pct) AS sys_pct,
       avg(iowait_pct) AS iowait_pct, avg(steal_pct) AS steal_pct, avg(irq_pct) AS irq_pct,
       avg(soft_pct) AS soft_pct, avg(idle_pct) AS idle_pct
FROM ranked WHERE tool_rank = 1 GROUP BY run_id, tool, cpu;

CREATE OR REPLACE VIEW disk_in_run_mean AS
WITH ranked AS (
  SELECT d.*, dense_rank() OVER (PARTITION BY run_id
      ORDER BY CASE tool WHEN 'sar' THEN 1 ELSE 2 END) AS tool_rank
  FROM disk_in_run d)
SELECT run_id, device, tool, any_value(device_class) AS device_class,
       bool_or(is_virtual) AS is_virtual, bool_or(is_partition) AS is_partition,
       count(*) AS samples, avg(read_kb_s) AS read_kb_s, avg(write_kb_s) AS write_kb_s,
       avg(discard_kb_s) AS discard_kb_s, avg(tps) AS tps, avg(util_pct) AS util_pct,
       avg(await_ms) AS await_ms, avg(aqu_sz) AS aqu_sz
FROM ranked WHERE tool_rank = 1 GROUP BY run_id, device, tool;

-- Clocks: each file's first/last sample against the run window (and against sar in the same run).
CREATE OR REPLACE VIEW sys_source_clock AS
WITH per_source AS (
  SELECT source_id, run_id, tool, format, any_value(tz_basis) AS tz_basis, min(first_ts) AS first_ts,
         max(last_ts) AS last_ts, max(samples) AS samples, max(interval_s) AS interval_s,
         max(since_boot_excluded) AS since_boot_excluded
  FROM sys_series WHERE activity <> 'restart' GROUP BY ALL)
SELECT p.*, r.start_time, r.end_time,
       epoch(p.first_ts) - epoch(r.start_time) AS first_minus_start_s,
       epoch(p.last_ts) - epoch(r.end_time) AS last_minus_end_s,
       epoch(p.first_ts) - epoch(min(p.first_ts) FILTER (WHERE p.tool = 'sar')
                                 OVER (PARTITION BY p.run_id)) AS first_minus_sar_first_s
FROM per_source p LEFT JOIN runs r ON r.run_id = p.run_id;
"""

_REAL_DISKS = "NOT is_virtual AND NOT is_partition"


def _cpu_metric(name: str, col: str, hib: bool, ja: str, en: str) -> MetricDef:
    return MetricDef(name, f"SELECT run_id, {col} AS value FROM cpu_in_run_mean WHERE cpu = 'all'", "%", hib, ja, en,
                     selection_sql=f"SELECT run_id, avg({col}) AS value FROM cpu_in_run_mean "
                                   "WHERE cpu IN {selection} GROUP BY run_id",
                     selection_of="cpu")


METRICS = [
    _cpu_metric("cpu_idle_pct", "idle_pct", True, "CPU %idle 平均", "Mean CPU %idle"),
    _cpu_metric("cpu_usr_pct", "usr_pct", False, "CPU %usr 平均", "Mean CPU %usr"),
    _cpu_metric("cpu_sys_pct", "sys_pct", False, "CPU %sys 平均", "Mean CPU %sys"),
    _cpu_metric("cpu_iowait_pct", "iowait_pct", False, "CPU %iowait 平均", "Mean CPU %iowait"),
    _cpu_metric("cpu_soft_pct", "soft_pct", False, "CPU %soft 平均", "Mean CPU %soft"),
    MetricDef("disk_read_kb_s",
              f"SELECT run_id, sum(read_kb_s) AS value FROM disk_in_run_mean WHERE {_REAL_DISKS} GROUP BY run_id",
              "KB/s", True, "ディスク読み込み (全物理デバイス合計)", "Disk read, all physical devices",
              selection_sql="SELECT run_id, sum(read_kb_s) AS value FROM disk_in_run_mean "
                            "WHERE device IN {selection} GROUP BY run_id", selection_of="device"),
    MetricDef("disk_write_kb_s",
              f"SELECT run_id, sum(write_kb_s) AS value FROM disk_in_run_mean WHERE {_REAL_DISKS} GROUP BY run_id",
              "KB/s", True, "ディスク書き込み (全物理デバイス合計)", "Disk write, all physical devices",
              selection_sql="SELECT run_id, sum(write_kb_s) AS value FROM disk_in_run_mean "
                            "WHERE device IN {selection} GROUP BY run_id", selection_of="device"),
    MetricDef("disk_util_pct_max",
              f"SELECT run_id, max(util_pct) AS value FROM disk_in_run_mean WHERE {_REAL_DISKS} GROUP BY run_id",
              "%", False, "ディスク %util (最も忙しいデバイス)", "Disk %util, busiest device",
              selection_sql="SELECT run_id, max(util_pct) AS value FROM disk_in_run_mean "
                            "WHERE device IN {selection} GROUP BY run_id", selection_of="device"),
]

MODULE = ParserModule(
    name="sysstat",
    formats=[
        Format(tool="sar", name="sadf-json", description="sadf -j JSON (sysstat 10.0.3+)",
               sniff=sniff_sadf_json, parse=parse_sadf_json, priority=20),
        Format(tool="sar", name="sadf-csv", description="sadf -d / -dh CSV (';' separated)",
               sniff=sniff_sadf_csv, parse=parse_sadf_csv, priority=20),
        Format(tool="sar", name="sar-text", description="sar text output (sar -A and parts, live or -f)",
               sniff=sniff_sar_text, parse=parse_sar_text, priority=15),
        Format(tool="sar", name="sa-binary", description="sysstat binary data file (sa), read with sadf -j",
               sniff=sniff_sa_binary, parse=parse_sa_binary, priority=20),
    ],
    schema=sm.SCHEMA,
    views=VIEWS,
    tables=sm.TABLES,
    metrics=METRICS,
)
