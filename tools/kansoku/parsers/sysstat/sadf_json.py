"""sadf -j output (JSON, sysstat 10.0.3+), keys mapped to the sar column names: docs/formats.md §2.6."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.activities import TEXT_ACTIVITIES, norm_instance

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
        m = re.fullmatch(r"(some|full)_avg(\d*)", key, flags=re.ASCII)
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


def load_json_salvaging(path: Path, sink: Sink, what: str) -> tuple[dict, str]:
    """json.load, or -- for a document cut off mid-write (sadf/iostat interrupted, docs/formats.md §0.5) --
    the host header and every complete ``statistics`` record before the cut, with a warning; and the text read
    (for ``record_lines``)."""
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
        for m in re.finditer(r'"([\w-]+)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)', head_txt, flags=re.ASCII):
            try:
                host[m.group(1)] = json.loads(m.group(2))
            except json.JSONDecodeError as bad:  # a control character in a header string
                raise ParseError(path, head_txt[:m.start()].count("\n") + 1, f"a JSON document ({what})",
                                 bad.msg) from None
        lb = text.index("[", at)
        pos, stats = lb + 1, []
        for _, obj, pos in _array_items(text, lb + 1):
            stats.append(obj)
        pos = _skip_separators(text, pos)  # (where the document breaks)
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
    return doc, text


_RECORD = re.compile(r'"timestamp"\s*:', re.ASCII)


def record_lines(text: str) -> list[int]:
    """The line of each statistics record of a sysstat JSON document's ``text``, in order (hosts in order): where
    its "timestamp" key is (sadf -j, mpstat -o JSON and iostat -o JSON print one per record). A value refused in
    a record is then named by that line."""
    out, line, pos = [], 1, 0
    for m in _RECORD.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        out.append(line)
    return out


_STATISTICS = re.compile(r'"statistics"\s*:\s*\[', re.ASCII)


def _skip_separators(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n,":
        pos += 1
    return pos


def _array_items(text: str, pos: int):
    """(start, value, end) of each element of the JSON array whose elements begin at ``pos``, up to its "]" or
    the first element that does not decode (where a salvaged document was cut)."""
    dec = json.JSONDecoder()
    while True:
        pos = _skip_separators(text, pos)
        if pos >= len(text) or text[pos] == "]":
            return
        try:
            value, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            return
        yield pos, value, end
        pos = end


def statistics_lines(text: str, doc: dict) -> list[int]:
    """The line of each statistics record of ``doc`` (read from ``text``), every host's, in order: its "timestamp"
    key's when every record has one (``record_lines``), else the line where each record opens (iostat without
    ``-t`` prints no timestamp, a damaged record may have lost its own), each ``statistics`` array read again
    record by record. Empty when the text's records are not the document's (a lost record has no line)."""
    hosts = doc.get("sysstat", {}).get("hosts") if isinstance(doc.get("sysstat"), dict) else None
    records = sum(len(h["statistics"]) for h in hosts or [] if isinstance(h, dict)
                  and isinstance(h.get("statistics"), list))
    lines = record_lines(text)
    if len(lines) == records:
        return lines
    starts = [start for m in _STATISTICS.finditer(text) for start, _, _ in _array_items(text, m.end())]
    if len(starts) != records:
        return []
    out, line, at = [], 1, 0
    for pos in starts:
        line += text.count("\n", at, pos)
        at = pos
        out.append(line)
    return out


def parse_sadf_json(path: Path, sink: Sink, fmt: str = "sadf-json", doc: dict | None = None,
                    lines: list[int] | None = None) -> None:
    """A sadf -j file, or the document of another rendering (``doc``: sadf -x's, with ``lines``, the line of
    each statistics record, every host's, in order)."""
    if doc is None:
        doc, text = load_json_salvaging(path, sink, "sadf -j output")
        lines = statistics_lines(text, doc)
    lines = lines or []
    col = sm.Collector("sar", fmt)
    record = 0  # the document's statistics records, every host's
    tz, basis = sm.local_tz(sink.run_start, sink)
    col.tz_basis = "sadf -j timestamps (UTC)"
    unknown: set[str] = set()
    for host in doc["sysstat"].get("hosts", []):
        col.host = host.get("nodename")
        host_tz = timezone.utc
        for sample, st in enumerate(host.get("statistics", [])):
            line = lines[record] if record < len(lines) else None
            record += 1
            ts_obj = st.get("timestamp")
            if not isinstance(ts_obj, dict) or "date" not in ts_obj or "time" not in ts_obj:
                raise ParseError(path, line, f"a 'timestamp' object with date and time in statistics record {sample + 1}",
                                 json.dumps(ts_obj)[:60])
            tzname = ts_obj.get("tz")
            z = host_tz
            if tzname and tzname not in ("UTC", "GMT"):
                # an abbreviation (tzname[0], standard time all year): against the run's IANA zone
                z, guess = sm.zone_for_abbreviation(tzname, sink)
                if z is None:
                    z = tz
                    col.tz_basis = f"sadf -j zone {tzname!r} unknown: {basis}"
                elif guess:
                    col.tz_basis = f"GUESS: sadf -j zone {tzname!r} read as {getattr(z, 'key', z)}"
            elif not tzname and not ts_obj.get("utc", 1):
                z = tz
                col.tz_basis = f"sadf -j local time: {basis}"
            ts = _stamp(path, ts_obj.get("date"), ts_obj.get("time"), f"statistics record {sample + 1}",
                        line).replace(tzinfo=z)
            iv = ts_obj.get("interval")
            for key, val in st.items():
                if key == "timestamp":
                    continue
                _json_activity(col, key, val, ts, iv, sample, unknown, line)
        for r in host.get("restarts", []) or []:
            b = r.get("boot", {}) if isinstance(r, dict) else {}
            if "date" in b and "time" in b:
                ts = _stamp(path, b["date"], b["time"], "a restart's boot").replace(tzinfo=host_tz)
                col.add(ts, "restart", None, "cpu_count", b.get("cpu_count"))
    for k in sorted(unknown):
        sink.warn(None, f"sadf -j activity {k!r} is not known to kansoku; stored under that name")
    if not col.n_values:
        sink.warn(None, "no statistics records in the document")
    col.flush(sink)


def _stamp(path: Path, date: Any, time: Any, where: str, line: int | None = None) -> datetime:
    """A record's date and time as sadf prints them; anything else (a damaged digit, 'nan') names the record
    (and its ``line`` when known)."""
    try:
        return datetime.fromisoformat(f"{date}T{time}")
    except (TypeError, ValueError):
        raise ParseError(path, line, f"a date YYYY-MM-DD and a time HH:MM:SS ({where})", f"{date} {time}") from None


def _json_activity(col, key: str, val: Any, ts, iv, sample: int, unknown: set, line: int | None = None) -> None:
    if key in ("network", "power-management", "psi") and isinstance(val, dict):
        for k2, v2 in val.items():
            _json_activity(col, k2, v2, ts, iv, sample, unknown, line)
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
            col.add(ts, a, inst, name, float(v), interval_s=iv, sample=sample, line=line)
