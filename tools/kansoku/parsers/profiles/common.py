"""What the profile formats share (docs/formats.md §9): the frame names they store and the aggregation of
samples by (process, pid, stack) before the rows reach the sink.

A stack is stored root first, frames joined by ``;`` (the folded-stack convention): a frame name that holds a
``;`` (rare: Java signatures) has it replaced by ``:``. Frames the profiler could not resolve are kept as
printed, never dropped: ``[unknown]`` (with its object file in ``profile_stacks.stack`` as
``[unknown] (libc.so.6)`` when the object is known) and raw addresses (``0x7f3a…``).
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.textfile import decode_text

UNKNOWN = "[unknown]"
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$", re.ASCII)
_RAW_ADDRESS = re.compile(r"^(?:0x)?[0-9a-fA-F]{6,16}$", re.ASCII)


def frame_name(symbol: str, dso: str | None) -> str:
    """The stored name of one frame: the symbol without its ``+0x…`` offset; an unresolved symbol as
    ``[unknown]`` followed by the object's base name when perf knew it."""
    sym = _OFFSET.sub("", symbol.strip()).replace(";", ":")
    if not sym or sym == UNKNOWN:
        obj = (dso or "").strip()
        if obj and obj != UNKNOWN:
            return f"{UNKNOWN} ({obj.rsplit('/', 1)[-1]})"
        return UNKNOWN
    return sym


# stackcollapse names an unresolved frame by its object: [postgres]
_MODULE_ONLY = re.compile(r"^\[[^\]]+\]$", re.ASCII)


def is_unresolved(frame: str) -> bool:
    return frame.startswith(UNKNOWN) or bool(_RAW_ADDRESS.match(frame) or _MODULE_ONLY.match(frame))


def head_text(head: FileHead) -> str:
    """The sniffed head as text; a gzip file's head is decompressed as far as the bytes read allow."""
    raw = head.raw
    if raw[:2] != b"\x1f\x8b":
        return head.text  # decoded once for every sniffer
    if raw[:2] == b"\x1f\x8b":
        d = __import__("zlib").decompressobj(16 + 15)
        try:
            raw = d.decompress(raw, 256 * 1024)
        except Exception:  # noqa: BLE001 -- a damaged gzip head: not ours to sniff
            return ""
    return raw.decode("utf-8", errors="replace")


def open_lines(path: Path, what: str):
    """The file's lines (text, without newline) and whether the file is gzip-compressed. A gzip stream cut
    short or damaged is an error naming the file and the last line read."""
    with open(path, "rb") as fh:
        compressed = fh.read(2) == b"\x1f\x8b"
    if not compressed:
        data = path.read_bytes()
        return decode_text(path, data, what).split("\n"), False, not data.endswith(b"\n") and bool(data)
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:
        raise ParseError(path, None, f"a complete gzip stream ({what})",
                         f"{type(exc).__name__}: {' '.join(str(exc).split())[:100]} (cut short?)") from None
    return decode_text(path, data, what).split("\n"), True, not data.endswith(b"\n") and bool(data)


@dataclass
class Stacks:
    """Samples summed by (process, pid, stack), in the order first seen."""

    rows: dict[tuple, dict] = field(default_factory=dict)
    samples: int = 0
    unresolved_samples: int = 0
    max_depth: int = 0

    def add(self, process: str | None, pid: int | None, frames_root_first: list[str], samples: int,
            weight: int | None, line: int, event: str | None = None) -> None:
        stack = ";".join(frames_root_first)
        key = (process, pid, stack, event)
        r = self.rows.get(key)
        if r is None:
            r = self.rows[key] = {"process": process, "pid": pid, "stack": stack,
                                  "leaf": frames_root_first[-1] if frames_root_first else None,
                                  "depth": len(frames_root_first), "samples": 0, "weight": None, "line": line}
            if event is not None:
                r["event"] = event
        r["samples"] += samples
        if weight is not None:
            r["weight"] = (r["weight"] or 0) + weight
        self.samples += samples
        self.max_depth = max(self.max_depth, len(frames_root_first))
        if any(is_unresolved(f) for f in frames_root_first):
            self.unresolved_samples += samples

    def store(self, sink: Sink, fmt: str, profile: str, *, compressed: bool, event: str | None,
              first_line: int | None, extra: dict | None = None) -> None:
        sink.add_rows("profile_stacks", ({"event": event, **r, "profile": profile} for r in self.rows.values()))
        sink.add_rows("profile_sources", [{
            "format": fmt, "profile": profile, "compressed": compressed, "event": event, "samples": self.samples,
            "stacks": len(self.rows), "unresolved_samples": self.unresolved_samples,
            "max_depth": self.max_depth, "first_line": first_line, **(extra or {}),
        }])
