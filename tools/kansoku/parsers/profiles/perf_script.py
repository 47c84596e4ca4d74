"""``perf script`` output of ``perf record -g`` (docs/formats.md §9.1), plain or gzip-compressed.

A sample is a header line and its call chain, leaf first, one frame per indented line, ended by a blank line::

    postgres  9915 [001]   286.439573:   20408163 cpu-clock:
    	          167adf __strlen_evex+0x1f (/usr/lib/x86_64-linux-gnu/libc.so.6)
    	          47231f [unknown] (/usr/lib/postgresql/15/bin/postgres)

What varies: ``PID/TID`` or one number (the tid), ``[CPU]`` only when recorded system-wide (or ``-C``), the
period only when perf prints it, the event's modifiers (``cycles:P``, ``cpu-clock:ppp``), symbol offsets
(Linux 4.8+), ``--header`` comment lines (``#``), a sample without a call chain (recorded without ``-g``:
its one frame on the header line). Frames perf could not resolve are kept (``[unknown] (postgres)``, raw
addresses). Only the file's first event is stored, the samples of other events are counted and warned (two
events summed would be a meaningless profile). A last sample cut off by a killed ``perf script`` is dropped
with a warning; a gzip stream cut short is an error.
"""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.profiles.common import Stacks, frame_name, head_text, open_lines
from kansoku.parsers.profiles.tables import TABLES

HEADER = re.compile(
    r"^(?P<comm>\S.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+(?:\[(?P<cpu>\d+)\]\s+)?"
    r"(?:(?P<time>\d+\.\d+):\s+)?(?:(?P<period>\d+)\s+)?(?P<event>[A-Za-z][\w.:/-]*?):(?=\s|$)\s*(?P<rest>.*)$")
FRAME = re.compile(r"^\s+(?P<addr>[0-9a-fA-F]+)(?:\s+(?P<sym>.*?))?(?:\s+\((?P<dso>[^()]*(?:\([^()]*\))?[^()]*)\))?\s*$")
EXPECTED_HEADER = "a perf script sample line 'COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT:'"
EXPECTED_FRAME = "a call-chain frame 'ADDRESS SYMBOL (OBJECT)'"


def sniff(head: FileHead) -> bool:
    text = head_text(head)
    if not text:
        return False
    lines = [l for l in text.split("\n")[:400] if not l.startswith("#")]
    for i, line in enumerate(lines[:-1]):
        if not line.strip():
            continue
        m = HEADER.match(line)
        if not m:
            return False
        nxt = lines[i + 1]
        return bool(FRAME.match(nxt) and nxt[:1] in " \t") or (not nxt.strip() and bool(FRAME.match(" " + m["rest"])))
    return False


def _frame(m: re.Match) -> str:
    sym, dso = m["sym"] or "", m["dso"]
    if not sym and not dso:
        return "0x" + m["addr"].lower()  # a raw address: nothing to name it by
    return frame_name(sym, dso)


def parse(path: Path, sink: Sink) -> None:
    lines, compressed, cut = open_lines(path, "perf script output")
    if lines and lines[-1] == "":
        lines.pop()
    stacks = Stacks()
    event: str | None = None
    skipped: dict[str, int] = {}
    times: list[float] = []
    cur: dict | None = None
    first_line = None

    def flush() -> None:
        nonlocal cur
        if cur is None:
            return
        if cur["event"] == event:
            frames = cur["frames"][::-1] or [frame_name("", None)]
            stacks.add(cur["comm"], cur["pid"], frames, 1, cur["period"], cur["line"])
        else:
            skipped[cur["event"]] = skipped.get(cur["event"], 0) + 1
        cur = None

    last = len(lines)
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if cut and lineno == last:
            if cur is not None:
                sink.warn(lineno, f"the last sample (line {cur['line']}) is cut off (file ends without a newline); "
                          "not stored")
                cur = None
            else:
                sink.warn(lineno, "the last line is cut off (file ends without a newline); skipped")
            break
        if line.startswith("#"):
            continue
        if not line.strip():
            flush()
            continue
        if line[0] not in " \t":
            flush()
            m = HEADER.match(line)
            if not m:
                raise ParseError(path, lineno, EXPECTED_HEADER, line[:120])
            ev = m["event"]
            if event is None:
                event, first_line = ev, lineno
            pid = int(m["pid"])
            period = int(m["period"]) if m["period"] else None
            cur = {"comm": m["comm"].strip(), "pid": pid, "period": period, "event": ev, "line": lineno,
                   "frames": []}
            if m["time"] and ev == event:
                times.append(float(m["time"]))
            rest = m["rest"].strip()
            if rest and ev == event:
                fm = FRAME.match(" " + rest)
                if fm and fm["sym"]:  # recorded without -g: the sampled ip on the header line
                    cur["frames"].append(_frame(fm))
            continue
        if cur is None:
            raise ParseError(path, lineno, EXPECTED_HEADER + " before its call chain", line.strip()[:120])
        m = FRAME.match(line)
        if not m:
            raise ParseError(path, lineno, EXPECTED_FRAME, line.strip()[:120])
        cur["frames"].append(_frame(m))
    flush()
    if event is None:
        raise ParseError(path, None, EXPECTED_HEADER, "no sample")
    if skipped:
        sink.warn(None, f"samples of other events not stored (a profile holds one event; kept {event!r}): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
    if stacks.unresolved_samples:
        sink.warn(None, f"{stacks.unresolved_samples} of {stacks.samples} samples have frames perf could not "
                  "resolve (kept as '[unknown]'; install debug symbols for names)")
    stacks.store(sink, "perf-script", "cpu", compressed=compressed, event=event, first_line=first_line,
                 extra={"first_time": min(times) if times else None, "last_time": max(times) if times else None,
                        "skipped_samples": sum(skipped.values())})


FORMATS = [Format("perf", "perf-script", "perf script output of perf record -g (plain or gzip)", sniff, parse,
                  priority=10)]

MODULE = ParserModule(name="profile_perf", formats=FORMATS, tables=TABLES)
