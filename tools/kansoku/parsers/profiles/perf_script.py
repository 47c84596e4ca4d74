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
from kansoku.parsers.profiles.common import Stacks, frame_name, head_text
from kansoku.parsers.profiles.tables import TABLES
from kansoku.parsers.textfile import is_gzip, stream_lines

# The time and the period are taken as whatever stands in their place, then judged (TIME, PERIOD): a damaged one
# ('nan:', '-5') is an error with its line, never read as the event's name nor the line left unrecognised.
HEADER = re.compile(
    r"^(?P<comm>\S.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+(?:\[(?P<cpu>\d+)\]\s+)?"
    r"(?:(?P<time>[^\s:]+):\s+)?(?:(?P<period>\S+)\s+)?(?P<event>[A-Za-z][\w.:/-]*?):(?=\s|$)\s*(?P<rest>.*)$",
    re.ASCII)
TIME = re.compile(r"^\d+\.\d+$", re.ASCII)
PERIOD = re.compile(r"^\d+$", re.ASCII)
FRAME = re.compile(r"^\s+(?P<addr>[0-9a-fA-F]+)(?:\s+(?P<sym>.*?))?(?:\s+\((?P<dso>[^()]*(?:\([^()]*\))?[^()]*)\))?\s*$",
                   re.ASCII)
EXPECTED_HEADER = "a perf script sample line 'COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT:'"
EXPECTED_FRAME = "a call-chain frame 'ADDRESS SYMBOL (OBJECT)'"


def sniff(head: FileHead) -> bool:
    """Most sample lines of the head are headers followed by their call chain (a damaged one among them is left
    for the parse to name with its line)."""
    text = head_text(head)
    if not text:
        return False
    lines = [l for l in text.split("\n")[:400] if not l.startswith("#")]
    good = bad = 0
    for i, line in enumerate(lines[:-1]):
        if not line.strip() or line[:1] in " \t":
            continue
        m = HEADER.match(line)
        nxt = lines[i + 1]
        if m and ((FRAME.match(nxt) and nxt[:1] in " \t") or (not nxt.strip() and FRAME.match(" " + m["rest"]))):
            good += 1
        else:
            bad += 1
        if good + bad >= 20:
            break
    return good > 0 and good >= bad


def _frame(m: re.Match) -> str:
    sym, dso = m["sym"] or "", m["dso"]
    if not sym and not dso:
        return "0x" + m["addr"].lower()  # a raw address: nothing to name it by
    return frame_name(sym, dso)


def _header(path: Path, lineno: int, line: str) -> re.Match:
    m = HEADER.match(line)
    if not m:
        raise ParseError(path, lineno, EXPECTED_HEADER, line[:120])
    if m["time"] is not None and not TIME.match(m["time"]):
        raise ParseError(path, lineno, EXPECTED_HEADER + " with TIME in seconds ('286.439573')", m["time"][:40])
    if m["period"] is not None and not PERIOD.match(m["period"]):
        raise ParseError(path, lineno, EXPECTED_HEADER + " with PERIOD a count of events", m["period"][:40])
    return m


def parse(path: Path, sink: Sink) -> None:
    """One line at a time (a profile's text reaches gigabytes): only the stacks summed so far are held."""
    compressed = is_gzip(path)
    stacks = Stacks()
    event: str | None = None
    skipped: dict[str, int] = {}
    first_time = last_time = None
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

    for lineno, line, cut in stream_lines(path, "perf script output"):
        if cut:
            if not line:
                break
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
            m = _header(path, lineno, line)
            ev = m["event"]
            if event is None:
                event, first_line = ev, lineno
            pid = int(m["pid"])
            period = int(m["period"]) if m["period"] else None
            cur = {"comm": m["comm"].strip(), "pid": pid, "period": period, "event": ev, "line": lineno,
                   "frames": []}
            if m["time"] and ev == event:
                t = float(m["time"])
                first_time = t if first_time is None else min(first_time, t)
                last_time = t if last_time is None else max(last_time, t)
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
                 extra={"first_time": first_time, "last_time": last_time,
                        "skipped_samples": sum(skipped.values())})


FORMATS = [Format("perf", "perf-script", "perf script output of perf record -g (plain or gzip)", sniff, parse,
                  priority=10)]

MODULE = ParserModule(name="profile_perf", formats=FORMATS, tables=TABLES)
