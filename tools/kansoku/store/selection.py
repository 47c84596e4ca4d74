"""Per-run metric values of a selection of runs: the store side of tools/compare.

A selection is a set of factor constraints (``{"config": ["checksums-on"]}``): a run belongs to it when,
for every constrained factor, its value is one of the listed ones. Only good runs count (``status =
'ok'``); measured and transcribed runs alike (their origin is returned so a comparison can say so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kansoku.store.db import Store


@dataclass(frozen=True)
class RunValue:
    run_id: str
    metric: str
    value: float
    unit: str | None
    origin: str
    factors: dict[str, str]


def metric_values(store: Store, selection: dict[str, list[str]], metrics: list[str] | None = None) -> list[RunValue]:
    """Every (run, metric) value of the selected good runs, with each run's factors."""
    params: list[Any] = []
    conds = ["r.status = 'ok'", "m.value IS NOT NULL", "isfinite(m.value)"]
    for factor, values in sorted(selection.items()):
        conds.append("EXISTS (SELECT 1 FROM run_factors f WHERE f.run_id = r.run_id AND f.factor = ? "
                     f"AND f.value IN ({', '.join('?' for _ in values)}))")
        params += [factor, *values]
    if metrics:
        conds.append(f"m.metric IN ({', '.join('?' for _ in metrics)})")
        params += metrics
    sql = f"""
        SELECT m.run_id, m.metric, m.value, m.unit, r.origin,
               (SELECT map(list(f.factor ORDER BY f.factor), list(f.value ORDER BY f.factor))
                FROM run_factors f WHERE f.run_id = r.run_id) AS factors
        FROM run_metrics m JOIN runs r ON r.run_id = m.run_id
        WHERE {' AND '.join(conds)}
        ORDER BY m.metric, m.run_id"""
    out = []
    for run_id, metric, value, unit, origin, factors in store.con.execute(sql, params).fetchall():
        # 12 significant digits (the rule of the report's downloads): a metric that DuckDB sums in parallel
        # (sysstat averages) can differ in its last bit between two queries of the same data, and the
        # terminal and the report must print, and test, the same numbers
        out.append(RunValue(run_id, metric, float(f"{float(value):.12g}"), unit, origin, dict(factors or {})))
    return out


def factor_values(store: Store) -> dict[str, set[str]]:
    """Every factor and its values in the store (to name a selection's mistakes)."""
    out: dict[str, set[str]] = {}
    for factor, value in store.con.execute("SELECT DISTINCT factor, value FROM run_factors").fetchall():
        out.setdefault(factor, set()).add(value)
    return out
