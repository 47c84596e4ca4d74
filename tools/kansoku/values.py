"""One spelling of a factor value everywhere (ingest, parsers, specs, the build cache): 2, '2' and 2.0 agree;
one value of a measured number from one store, build after build (:func:`stable`)."""

from __future__ import annotations

import math
from typing import Any


def canon(v: Any) -> str:
    """Canonical string for a factor value: 2 and '2' and 2.0 agree."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def stable(v: float | None) -> float | None:
    """A per-run metric to 12 significant digits. DuckDB's parallel sums may differ in the last bits from one
    query to the next (a mean lag of 0.8334090909090909 or ...08), and a build must write the same bytes
    from the same store (the incremental build and bench/same_output.py rely on it)."""
    if v is None or v == 0 or not math.isfinite(v):
        return v
    return float(f"{v:.12g}")
