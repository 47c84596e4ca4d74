"""Parser registry: every module in this package (and its per-family subpackages) that defines
``MODULE`` is loaded.

Adding a format = adding one module here (or in its family's folder); nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule


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
            found.append(pm)
    # ordered by family name: among formats of equal priority, detection prefers the earlier family
    return tuple(sorted(found, key=lambda m: m.name))


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
