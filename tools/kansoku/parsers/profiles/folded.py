"""Folded stacks (docs/formats.md §9.2): one line per stack, frames root first joined by ``;``, then a space
and the count — the output of Brendan Gregg's ``stackcollapse-*`` scripts, ``perf script report
stackcollapse``, bpftrace/BCC ``profile -f``, async-profiler ``collapsed``, py-spy ``--format raw``::

    postgres;__libc_start_call_main;main;PostmasterMain;PostgresMain;exec_simple_query 12

The count is whatever the profiler counted (samples, or a weight such as perf's period in ns): stored as
printed in ``samples``. A line without a count (a stack cut short, or a list of stacks that were never
counted) is an error with its line, never a zero. The frames are kept as printed, ``[unknown]`` and raw
addresses included; folded files do not say which process a stack belongs to (many profilers put the
process name as the first frame), so ``process`` and ``pid`` are NULL.
"""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.profiles.common import Stacks, head_text, open_lines
from kansoku.parsers.profiles.tables import TABLES

LINE = re.compile(r"^(?P<stack>\S(?:.*\S)?)\s+(?P<count>\d+)$", re.ASCII)
_NUMBERISH = re.compile(r"\s(?P<count>-?[\d.,eE+-]+|nan|inf)$", re.I | re.ASCII)
EXPECTED = "a folded stack 'frame;frame;… COUNT' (frames root first, a whole count after the last space)"


def sniff(head: FileHead) -> bool:
    text = head_text(head)
    if not text or "\x00" in text:
        return False
    lines = [l for l in text.split("\n")[:200] if l.strip()]
    if len(lines) > 1 and not text.endswith("\n"):
        lines = lines[:-1]  # the head may end mid-line
    if not lines:
        return False
    # most lines a counted stack, (nearly) all stack-shaped: a line that lost its count is then the parse's
    # error with its line, not a reason to skip the file
    matched = []
    n = len(lines)
    stacky = n
    for l in lines:
        if LINE.match(l):
            matched.append(l)
        elif not (";" in l and l[:1] not in " #"):
            stacky -= 1
            if stacky < 0.9 * n:  # more than a tenth not stack-shaped: not folded stacks (stop reading)
                return False
    with_semicolon = sum(1 for l in matched if ";" in l)
    return len(matched) >= 0.5 * len(lines) and stacky >= 0.9 * len(lines) \
        and with_semicolon >= max(1, len(matched) // 2) and not any("\t" in l for l in lines[:20])


def parse(path: Path, sink: Sink) -> None:
    lines, compressed, cut = open_lines(path, "folded stacks")
    if lines and lines[-1] == "":
        lines.pop()
    stacks = Stacks()
    first = None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r").strip()
        if not line or line.startswith("#"):
            continue
        if cut and lineno == len(lines):
            sink.warn(lineno, "the last line is cut off (file ends without a newline); not stored")
            break
        m = LINE.match(line)
        if not m:
            n = _NUMBERISH.search(line)
            found = (f"count {n['count']!r} (counts are whole numbers ≥ 0)" if n else "no count") + f": {line[:100]}"
            raise ParseError(path, lineno, EXPECTED, found)
        frames = [f for f in m["stack"].split(";")]
        if any(not f.strip() for f in frames):
            raise ParseError(path, lineno, EXPECTED + " with no empty frame", line[:120])
        first = first or lineno
        stacks.add(None, None, [f.strip() for f in frames], int(m["count"]), None, lineno)
    if first is None:
        raise ParseError(path, None, EXPECTED, "no stack")
    stacks.store(sink, "folded-stacks", "cpu", compressed=compressed, event=None, first_line=first)


FORMATS = [Format("profile", "folded-stacks", "folded stacks, one line per stack with a count (stackcollapse)",
                  sniff, parse, priority=2)]

MODULE = ParserModule(name="profile_folded", formats=FORMATS, tables=TABLES)
