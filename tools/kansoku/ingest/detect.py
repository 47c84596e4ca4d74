"""Content sniffing: which format is this file? Decided by content, never by name alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kansoku import parsers
from kansoku.parsers.base import Format

# Files that belong to the run layout itself, handled by runs.py, not by a parser.
RUN_METADATA = {"run.toml", "host.toml"}


@dataclass(frozen=True)
class Detection:
    path: Path
    format: Format | None
    reason: str  # why it was skipped, when format is None


def detect(path: Path) -> Detection:
    if path.name in RUN_METADATA:
        return Detection(path, None, "run metadata")
    try:
        head = parsers.read_head(path)
    except FileNotFoundError:  # listed by the walk, gone before it was read (a store's .wal inside the tree)
        return Detection(path, None, "vanished before it could be read")
    if head.size_bytes == 0:
        return Detection(path, None, "empty file")
    fmt = parsers.claim(head)
    if fmt is None:
        return Detection(path, None, "binary, unknown format" if head.is_binary else "not a known tool output")
    return Detection(path, fmt, "")
