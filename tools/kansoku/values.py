"""One spelling of a factor value everywhere (ingest, parsers, specs, the build cache): 2, '2' and 2.0 agree."""

from __future__ import annotations

from typing import Any


def canon(v: Any) -> str:
    """Canonical string for a factor value: 2 and '2' and 2.0 agree."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)
