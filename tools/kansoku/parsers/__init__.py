"""Parser registry: every module in this package that defines ``MODULE`` is loaded.

Adding a tool family = adding one module here; nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .base import FileHead, Format, MetricDef, ParserModule


@lru_cache(maxsize=1)
def modules() -> tuple[ParserModule, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "base":
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        pm = getattr(mod, "MODULE", None)
        if isinstance(pm, ParserModule):
            found.append(pm)
    return tuple(found)


def formats() -> list[Format]:
    return [f for m in modules() for f in m.formats]


def metrics() -> dict[str, MetricDef]:
    out: dict[str, MetricDef] = {}
    for m in modules():
        for md in m.metrics:
            if md.name in out:
                raise RuntimeError(f"metric {md.name!r} defined twice")
            out[md.name] = md
    return out


__all__ = ["FileHead", "Format", "MetricDef", "ParserModule", "modules", "formats", "metrics"]
