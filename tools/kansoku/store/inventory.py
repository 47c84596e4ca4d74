"""What a store holds, for ``kansoku info``: its runs (by origin and status), campaigns and their studies, every
factor with its values, every metric with its unit, direction and per-host forms (``cpu_idle_pct[server]``),
and the hosts of the runs by role: the names a spec, a plan or ``kansoku compare`` can use, without the DuckDB
command line."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kansoku import parsers
from kansoku.store.db import Store

DIRECTION = {True: "higher is better", False: "lower is better", None: "neither is better"}


def inventory(store: Store) -> dict[str, Any]:
    """A JSON-ready summary of the store. Metrics and hosts count the good runs (status 'ok') only, as every
    table and comparison does."""
    runs = [{"origin": o, "status": s, "runs": n} for o, s, n in store.query(
        "SELECT origin, status, count(*) FROM runs GROUP BY ALL ORDER BY origin, status")]
    factors: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for factor, value, n in store.query(
            "SELECT factor, value, count(DISTINCT run_id) FROM run_factors GROUP BY ALL ORDER BY factor, value"):
        factors[factor].append({"value": value, "runs": n})
    for values in factors.values():  # numbers in numeric order (1, 2, 4, 16), words in text order
        values.sort(key=lambda v: _natural(v["value"]))
    campaigns: dict[str, dict[str, Any]] = {}
    for campaign, study, n in store.query("""
            SELECT c.value, s.value, count(DISTINCT c.run_id) FROM run_factors c
            LEFT JOIN run_factors s ON s.run_id = c.run_id AND s.factor = 'study'
            WHERE c.factor = 'campaign' GROUP BY ALL ORDER BY 1, 2"""):
        entry = campaigns.setdefault(campaign, {"campaign": campaign, "runs": 0, "studies": []})
        entry["runs"] += n
        if study is not None:
            entry["studies"].append({"study": study, "runs": n})
    defs = parsers.metrics()
    metrics: dict[str, dict[str, Any]] = {}
    # per (metric, role), and per metric over every role (a run counted once): one pass over run_metrics
    rows = store.query("""
        WITH m AS MATERIALIZED (SELECT metric, unit, role, run_id FROM run_metrics
                                WHERE value IS NOT NULL AND run_id IN (SELECT run_id FROM runs WHERE status = 'ok'))
        SELECT metric, any_value(unit), role, GROUPING(role) AS whole, count(DISTINCT run_id) FROM m
        GROUP BY GROUPING SETS ((metric, role), (metric)) ORDER BY metric, whole DESC, role NULLS FIRST""")
    for metric, unit, role, whole, n in rows:
        md = defs.get(metric)
        if whole:
            metrics[metric] = {"metric": metric, "unit": unit or (md.unit if md else None), "runs": n,
                               "direction": DIRECTION[md.higher_is_better] if md else None,
                               "per_host": bool(md and md.per_host), "roles": []}
        elif role is not None:
            metrics[metric]["roles"].append({"form": f"{metric}[{role}]", "role": role, "runs": n})
    hosts = [{"role": role, "host": host, "runs": n} for role, host, n in store.query(
        "SELECT role, host, count(DISTINCT run_id) FROM run_hosts GROUP BY ALL ORDER BY role, host NULLS FIRST")]
    return {"runs": runs, "campaigns": list(campaigns.values()),
            "factors": [{"factor": f, "values": v} for f, v in sorted(factors.items())],
            "metrics": list(metrics.values()), "hosts": hosts}


def _natural(value: str) -> tuple:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)
