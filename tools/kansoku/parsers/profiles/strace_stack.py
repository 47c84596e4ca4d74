"""``strace -k`` output (docs/formats.md §9.3): each system call followed by its user-space stack, leaf
first, one `` > OBJECT(SYMBOL+OFFSET) [0xADDRESS]`` line per frame::

    28043 sendto(7, "C\\0\\0\\0\\vCOMMIT\\0Z\\0\\0\\0\\5I", 18, 0, NULL, 0) = 18
     > /usr/lib/x86_64-linux-gnu/libc.so.6(send+0x19) [0x10ab59]
     > /usr/lib/postgresql/15/bin/postgres(secure_write+0x76) [0x344926]

Stored as a ``syscalls`` profile: one sample per completed call, the stack root first with the system call's
name as its leaf frame, the call's name as the event. A call split by another process (``<unfinished ...>``
then ``<... sendto resumed>``) is counted once, with the stack printed after its resumption. ``-f`` puts the
pid first; ``-t``/``-tt``/``-r`` times are skipped. A frame whose symbol strace could not find
(``postgres() [0x47231f]``, ``postgres(+0x1c2) […]``) is kept as ``[unknown] (postgres)``.
"""

from __future__ import annotations

import re
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.profiles.common import Stacks, frame_name, open_lines
from kansoku.parsers.profiles.tables import TABLES

_PREFIX = r"^(?:\[pid\s+(?P<pid2>\d+)\]\s+|(?P<pid>\d+)\s+)?(?:\d+:\d+:\d+(?:\.\d+)?\s+|\d+\.\d+\s+)?"
CALL = re.compile(_PREFIX + r"(?P<name>[a-z_][a-z0-9_]*)\(", re.ASCII)
RESUMED = re.compile(_PREFIX + r"<\.\.\. (?P<name>[a-z_][a-z0-9_]*) resumed>", re.ASCII)
OTHER = re.compile(_PREFIX + r"(?:\+\+\+ |--- |strace: |\?\?\?)", re.ASCII)
FRAME = re.compile(r"^ > (?P<obj>[^(\[]*?)(?:\((?P<sym>[^()]*)\))?(?:\s+\[(?P<addr>0x[0-9a-fA-F]+)\])?\s*$", re.ASCII)
EXPECTED = "a strace -k frame ' > OBJECT(SYMBOL+0xOFFSET) [0xADDRESS]' after a system call"


def sniff(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = head.text.split("\n")[:400]
    for a, b in zip(lines, lines[1:]):
        if b.startswith(" > ") and (CALL.match(a) or RESUMED.match(a)) and FRAME.match(b):
            return True
    return False


def _frame(m: re.Match) -> str:
    sym = (m["sym"] or "").strip()
    if not sym or sym.startswith("+"):
        obj = (m["obj"] or "").strip()
        if not obj and m["addr"]:
            return m["addr"].lower()
        return frame_name("", obj or None)
    return frame_name(sym, None)


def parse(path: Path, sink: Sink) -> None:
    lines, compressed, cut = open_lines(path, "strace -k output")
    if lines and lines[-1] == "":
        lines.pop()
    stacks = Stacks()
    cur: dict | None = None
    first = None
    other = 0
    in_signal = False  # a signal's delivery ('--- SIGCHLD …') has a stack too: not a system call, skipped

    def flush() -> None:
        nonlocal cur
        if cur is not None:
            stacks.add(None, cur["pid"], cur["frames"][::-1] + [cur["name"]], 1, None, cur["line"], cur["name"])
        cur = None

    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if cut and lineno == len(lines):
            sink.warn(lineno, "the last line is cut off (file ends without a newline); " +
                      ("its system call is not stored" if cur is not None or not line.startswith(" > ") else "skipped"))
            cur = None
            break
        if line.startswith(" > "):
            m = FRAME.match(line)
            if in_signal and m:
                continue
            if cur is None or not m:
                raise ParseError(path, lineno, EXPECTED, line.strip()[:120])
            cur["frames"].append(_frame(m))
            continue
        flush()
        in_signal = False
        if not line.strip():
            continue
        m = RESUMED.match(line) or CALL.match(line)
        if m:
            if line.rstrip().endswith("<unfinished ...>"):
                continue  # counted when it resumes
            pid = m["pid"] or m["pid2"]
            cur = {"pid": int(pid) if pid else None, "name": m["name"], "frames": [], "line": lineno}
            first = first or lineno
            continue
        in_signal = bool(OTHER.match(line))
        other += 1
    flush()
    if first is None:
        raise ParseError(path, None, "a system call line followed by its strace -k stack", "no system call")
    if other:
        sink.warn(None, f"{other} line(s) that are neither a system call nor a stack frame (signals, exits) ignored, and the stacks of signals")
    stacks.store(sink, "strace-stacks", "syscalls", compressed=compressed, event=None, first_line=first)


FORMATS = [Format("strace", "strace-stacks", "strace -k: system calls with their stacks", sniff, parse, priority=11)]

MODULE = ParserModule(name="profile_strace", formats=FORMATS, tables=TABLES)
