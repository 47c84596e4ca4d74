"""sadf -x output (XML, DTD 2.x-3.x): the same records as sadf -j, as elements and attributes
(docs/formats.md §2.6). Turned into the sadf -j document shape and read by the same code, so both give
the same rows: list items are elements with attributes (``<cpu number="all" usr="…"/>``), scalars are
child texts (``<memfree>…</memfree>``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError, last_line
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.numbers import to_float
from kansoku.parsers.sysstat.sadf_json import parse_sadf_json

# Attributes naming the item, renamed to the sadf -j key (per element); they stay strings.
ITEM_ATTRS = {"cpu": {"number": "cpu"}, "disk-device": {"dev": "disk-device"}}
TEXT_ATTRS = {"number", "dev", "iface", "line", "intr", "cpu", "fsname", "mountp", "name", "fchost", "bus",
              "manufact", "product", "idvendor", "idprod", "device", "status"}
META_ATTRS = {"per", "unit"}


def sniff_sadf_xml(head: FileHead) -> bool:
    t = head.text.lstrip()
    return t.startswith("<?xml") and "<sysstat" in t[:2000] and "<sysdata-version>" in t


def _value(v: str) -> Any:
    try:
        return to_float(v)
    except ValueError:
        return v


def _attrs(el: ET.Element) -> dict[str, Any]:
    ren = ITEM_ATTRS.get(_tag(el), {})
    out: dict[str, Any] = {}
    for k, v in el.attrib.items():
        if k in META_ATTRS:
            continue
        out[ren.get(k, k)] = v if k in TEXT_ATTRS else _value(v)
    return out


def _tag(el: ET.Element) -> str:
    return el.tag.rsplit("}", 1)[-1]


def _activity(el: ET.Element) -> Any:
    kids = list(el)
    if not kids:
        return _attrs(el) if el.attrib else _value((el.text or "").strip())
    tags = [_tag(k) for k in kids]
    if len(set(tags)) == 1 and len(kids) > 1 or (len(kids) == 1 and kids[0].attrib and not list(kids[0])
                                                   and _tag(kids[0]) in ("cpu", "disk-device", "tty")):
        return [dict(_attrs(k), **{_tag(g): _activity(g) for g in k}) for k in kids]
    out: dict[str, Any] = _attrs(el)
    for k in kids:
        t = _tag(k)
        v = _activity(k)
        if t in out:
            out[t] = (out[t] if isinstance(out[t], list) else [out[t]]) + [v]
        else:
            out[t] = v
    return out


_TIMESTAMP = re.compile(r"<timestamp[\s/>]", re.ASCII)


def _timestamp_lines(text: str, records: int) -> list[int]:
    """The line of each ``<timestamp>`` element (a statistics record) of the document ``text``, in order, for
    ``records`` of them: where its tag opens, found by pattern; read by expat when the pattern finds another count
    (a tag inside a comment or CDATA section), so a refused value is named by its own record's line."""
    out, line, pos = [], 1, 0
    for m in _TIMESTAMP.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        out.append(line)
    if len(out) == records:
        return out
    out = []
    parser = xml.parsers.expat.ParserCreate()

    def start(name: str, attrs: dict) -> None:
        if name.rsplit(":", 1)[-1] == "timestamp":
            out.append(parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.Parse(text, True)
    return out if len(out) == records else []


def parse_sadf_xml(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "sadf -x output")
    entity = re.search(r"<!ENTITY", text[:4096], flags=re.ASCII)
    if entity:
        raise ParseError(path, text.count("\n", 0, entity.start()) + 1, "sadf -x XML (no entity declarations)",
                         "an <!ENTITY declaration")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ParseError(path, exc.position[0], "well-formed sadf -x XML", str(exc).split(":")[0]) from None
    hosts = []
    missing: list[tuple[int, int, str]] = []  # records without a date or time: (index, record, its attributes)
    records = 0  # every host's
    for host in root.iter():
        if _tag(host) != "host":
            continue
        stats = []
        for st in host.iter():
            if _tag(st) != "timestamp":
                continue
            a = st.attrib
            utc = a.get("utc", "1") or "1"  # sadf -x writes 0 or 1
            rec: dict[str, Any] = {"timestamp": {"date": a.get("date"), "time": a.get("time"),
                                                 "utc": int(utc) if utc in ("0", "1") else 1,
                                                 "interval": _value(a.get("interval", "")) or None}}
            if "tz" in a:
                rec["timestamp"]["tz"] = a["tz"]
            if rec["timestamp"]["date"] is None or rec["timestamp"]["time"] is None or utc not in ("0", "1"):
                missing.append((records, len(stats) + 1, str(dict(a))[:60]))
            records += 1
            for act in st:
                rec[_tag(act)] = _activity(act)
            stats.append(rec)
        hosts.append({"nodename": host.attrib.get("nodename"), "statistics": stats})
    if not hosts:
        raise ParseError(path, last_line(text), "a <host> element in the sadf -x document", "none")
    lines = _timestamp_lines(text, records)
    if missing:
        at, k, attrs = missing[0]
        raise ParseError(path, lines[at] if lines else None,
                         f'a <timestamp date=… time=… utc="0" or "1"> in statistics record {k}', attrs)
    parse_sadf_json(path, sink, fmt="sadf-xml", doc={"sysstat": {"hosts": hosts}}, lines=lines)
