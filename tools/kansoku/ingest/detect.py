"""Content sniffing: which format is this file? Decided by content, never by name alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kansoku import parsers
from kansoku.parsers.base import SNIFF_BYTES, FileHead, Format

# Files that belong to the run layout itself, handled by runs.py, not by a parser.
RUN_METADATA = {"run.toml", "host.toml"}


@dataclass(frozen=True)
class Detection:
    path: Path
    format: Format | None
    reason: str  # why it was skipped, when format is None


def read_head(path: Path) -> FileHead:
    with open(path, "rb") as fh:
        raw = fh.read(SNIFF_BYTES)
    return FileHead(path=path, raw=raw, size_bytes=path.stat().st_size)


def detect(path: Path) -> Detection:
    if path.name in RUN_METADATA:
        return Detection(path, None, "run metadata")
    head = read_head(path)
    if head.size_bytes == 0:
        return Detection(path, None, "empty file")
    claims = [f for f in parsers.formats() if _safe_sniff(f, head)]
    if not claims:
        return Detection(path, None, "binary, unknown format" if head.is_binary else "not a known tool output")
    claims.sort(key=lambda f: -f.priority)
    return Detection(path, claims[0], "")


def _safe_sniff(fmt: Format, head: FileHead) -> bool:
    try:
        return bool(fmt.sniff(head))
    except Exception:  # a sniffer must never break detection of other formats
        return False
