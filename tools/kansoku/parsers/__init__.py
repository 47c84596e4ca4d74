"""Parser registry: every module in this package (and its per-family subpackages) that defines
``MODULE`` is loaded.

Adding a format = adding one module here (or in its family's folder): its formats, tables, views, metrics,
bounds and the tables whose rows carry their file's host (``ParserModule``). Outside it only the words a
reader sees: each metric's label in every ``i18n/<lang>.toml`` (``[metric_<name>]``), which a command using
the metric asks for by name (``words.metric_label``) and a test checks for every registered metric.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from functools import lru_cache, wraps
from pathlib import Path
from typing import Callable

from kansoku.errors import KansokuError, ParseError
from kansoku.parsers import bounds
from kansoku.parsers.base import HOST_COLUMNS, SNIFF_BYTES, FileHead, Format, MetricDef, ParserModule, Sink


@lru_cache(maxsize=1)
def modules() -> tuple[ParserModule, ...]:
    found = []
    names = [info.name for info in pkgutil.walk_packages(__path__, prefix=f"{__name__}.") if not info.ispkg]
    for name in sorted(names):
        leaf = name.rsplit(".", 1)[1]
        if leaf.startswith("_") or leaf in ("base", "common"):
            continue
        mod = importlib.import_module(name)
        pm = getattr(mod, "MODULE", None)
        if isinstance(pm, ParserModule):
            pm.formats = [dataclasses.replace(f, parse=guarded(f.name, f.parse)) for f in pm.formats]
            found.append(pm)
    # ordered by family name: among formats of equal priority, detection prefers the earlier family
    return tuple(sorted(found, key=lambda m: m.name))


_LINE_IN_MESSAGE = re.compile(r"(?:Line|line)[: ]+(\d+)", re.ASCII)


def guarded(name: str, parse: Callable[[Path, Sink], None]) -> Callable[[Path, Sink], None]:
    """Every failure of a parser reaches the user as a ParseError naming the file (and the line when the
    error says it): a damaged input the parser did not foresee (a number beyond 64 bits, a byte that
    breaks DuckDB's CSV reader) must never end in a traceback. Parsers raise ParseError themselves with
    what they expected; this is the net under them."""

    @wraps(parse)
    def run(path: Path, sink: Sink) -> None:
        try:
            bounds.check_text(path, name)  # what no parser should have to meet: a line too long, a doubled file
            parse(path, sink)
        except KansokuError:
            raise
        except RecursionError:
            raise ParseError(path, None, f"a {name} file", "nesting too deep") from None
        except (MemoryError, KeyboardInterrupt):
            raise
        except RuntimeError as exc:
            if "Query interrupted" in str(exc):  # DuckDB's form of a Ctrl-C during the parser's statement: the
                raise KeyboardInterrupt from None  # user's interrupt, never "a damaged file" (nor swallowed)
            raise _damaged(name, path, exc) from None
        except Exception as exc:  # noqa: BLE001 -- the net: anything else is a damaged input
            raise _damaged(name, path, exc) from None

    return run


def _damaged(name: str, path: Path, exc: BaseException) -> ParseError:
    text = " ".join(str(exc).split())
    m = _LINE_IN_MESSAGE.search(text)
    return ParseError(path, int(m.group(1)) if m else None, f"a valid {name} file",
                      f"{type(exc).__name__}: {text[:120]}")


def formats() -> list[Format]:
    return [f for m in modules() for f in m.formats]


@lru_cache(maxsize=1)
def _by_priority() -> tuple[Format, ...]:
    """Every format, highest priority first (a stable sort: among equal priorities, the order of formats())."""
    return tuple(sorted(formats(), key=lambda f: -f.priority))


def claim(head: FileHead) -> Format | None:
    """The format of a file by its head: the highest-priority format whose sniffer claims it (None: none does).
    The sniffers are asked in that order and the first that claims the file wins: the same answer as asking
    every sniffer and sorting the claims (stably) by priority, without asking the others (the ingest's main
    process sniffs every file, and asked all 35 sniffers of each)."""
    for f in _by_priority():
        if _safe_sniff(f, head):
            return f
    return None


def format_named(name: str) -> Format:
    """The format of this name (KeyError: none); for a format the ingest gives by what a run says of a file."""
    for f in formats():
        if f.name == name:
            return f
    raise KeyError(name)


def _safe_sniff(fmt: Format, head: FileHead) -> bool:
    try:
        return bool(fmt.sniff(head))
    except Exception:  # a sniffer must never break detection of other formats
        return False


def read_head(path: Path) -> FileHead:
    """The first SNIFF_BYTES of a file, for the sniffers."""
    with open(path, "rb") as fh:
        raw = fh.read(SNIFF_BYTES)
    return FileHead(path=path, raw=raw, size_bytes=path.stat().st_size)


def metrics() -> dict[str, MetricDef]:
    out: dict[str, MetricDef] = {}
    for m in modules():
        for md in m.metrics:
            if md.name in out:
                raise RuntimeError(f"metric {md.name!r} defined twice")
            out[md.name] = md
    return out


def whole_views() -> dict[str, str]:
    """View name -> the SELECT that computes all its rows for less (ParserModule.whole_views)."""
    return {name: sql for m in modules() for name, sql in m.whole_views.items()}


@lru_cache(maxsize=1)
def host_columns() -> dict[str, tuple[str, ...]]:
    """Table -> the columns naming its rows' file's host and role (ParserModule.host_columns)."""
    return {table: cols for m in modules() for table, cols in m.host_columns.items()}


def host_columns_ddl() -> str:
    """The statements giving every declared table its host columns, each with its meaning (docs/database.md)."""
    return "".join(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {c} VARCHAR;  -- {HOST_COLUMNS[c]}\n"
                   for table, cols in host_columns().items() for c in cols)


def catalogue() -> list[MetricDef]:
    """The metric catalogue, the one place every reader of a metric asks: each metric's unit, direction
    (``MetricDef.direction``: higher / lower is better, or neither) and label (words from i18n/), in name
    order. docs/database.md prints it; verdicts (analysis/noise.py) and the order of compare rows use it."""
    return [m for _, m in sorted(metrics().items())]


__all__ = ["FileHead", "Format", "MetricDef", "ParserModule", "modules", "formats", "metrics", "catalogue", "whole_views", "host_columns",
           "host_columns_ddl", "claim", "read_head"]
