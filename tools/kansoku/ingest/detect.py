"""Content sniffing: which format is this file? Decided by content, never by name alone."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from kansoku import parsers
from kansoku.parsers.base import Format

# Files that belong to the run layout itself, handled by runs.py, not by a parser.
RUN_METADATA = {"run.toml", "host.toml"}
RUN_METADATA_BYTES = 1 << 20  # a run.toml or host.toml larger than this is refused (tools/collect writes a few kB)


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
    for mended in head.mended if fmt is None else ():  # a text output with a damaged byte: its parser names the line
        fmt = parsers.claim(mended)
        if fmt is not None:
            break
    if fmt is None:
        return Detection(path, None, "binary, unknown format" if head.is_binary else "not a known tool output")
    return Detection(path, fmt, "")


def listed_scripts(run_dir: Path, cache: dict[Path, frozenset[str]]) -> frozenset[str]:
    """The file names a run's run.toml gives as the benchmark's scripts (``[commands] scripts``, written by
    tools/collect when it copies the command's ``-f`` files into the run). Unreadable or oversized: none (the
    run's description is checked, and refused with its reason, when the run is read)."""
    if run_dir not in cache:
        names: frozenset[str] = frozenset()
        meta = run_dir / "run.toml"
        try:
            if meta.is_file() and meta.stat().st_size <= RUN_METADATA_BYTES:
                scripts = tomllib.loads(meta.read_text(encoding="utf-8")).get("commands", {}).get("scripts", [])
                names = frozenset(x for x in scripts if isinstance(x, str)) if isinstance(scripts, list) else names
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            pass
        cache[run_dir] = names
    return cache[run_dir]


def detect_in_run(path: Path, run_dir: Path, cache: dict[Path, frozenset[str]] | None = None) -> Detection:
    """The format ingest gives a file of a run directory: by its content, or a script of SQL only that the run's
    run.toml names (``cache``: the names read per run directory, shared across calls)."""
    d = detect(path)
    if d.format is None and d.reason != "run metadata" and path.name in listed_scripts(run_dir, {} if cache is None else cache):
        return Detection(path, parsers.format_named("pgbench-script-sql"), "")
    return d
