"""What a store holds, for ``kansoku info``, ``kansoku list`` and the starter spec of ``kansoku init DIR RUNS``:
its runs (by origin and status), campaigns and their studies, every factor with its values, every metric with
its unit, direction and per-host forms (``cpu_idle_pct[server]``), the hosts of the runs by role, and the
machines they ran on: the names a spec, a plan or ``kansoku compare`` can use, without the DuckDB command line.
Every part may be narrowed to the runs of some factor values (a campaign's study)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kansoku import parsers
from kansoku.store.db import Store

DIRECTION = {True: "higher is better", False: "lower is better", None: "neither is better"}
PARTS = ("runs", "campaigns", "factors", "metrics", "hosts", "machines")


def inventory(store: Store, where: dict[str, str] | None = None,
              parts: tuple[str, ...] = PARTS) -> dict[str, Any]:
    """A JSON-ready summary of the store (``parts`` of it), of the runs whose factors have the values of
    ``where`` (every run when None). Metrics, hosts and machines count the good runs (status 'ok') only, as
    every table and comparison does."""
    # the runs in view: one condition every query below adds (factor = value for each pair of ``where``)
    cond = " AND ".join("run_id IN (SELECT run_id FROM run_factors WHERE factor = ? AND value = ?)"
                        for _ in (where or {})) or "true"
    params = [x for kv in (where or {}).items() for x in kv]
    sel = f"(SELECT run_id FROM runs WHERE {cond})"
    ok = f"(SELECT run_id FROM runs WHERE status = 'ok' AND {cond})"
    out: dict[str, Any] = {}
    if "runs" in parts:
        out["runs"] = [{"origin": o, "status": s, "runs": n} for o, s, n in store.query(
            f"SELECT origin, status, count(*) FROM runs WHERE run_id IN {sel} GROUP BY ALL ORDER BY origin, status",
            params)]
    if "run_list" in parts:  # every run, one entry each (not in ``PARTS``: a store may hold 100,000)
        out["run_list"] = [{"run": r, "origin": o, "status": st, "start": start, "factors": dict(fs or [])}
                           for r, o, st, start, fs in store.query(f"""
            SELECT r.run_id, r.origin, r.status, strftime(r.start_time AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ'),
                   (SELECT list([f.factor, f.value] ORDER BY f.factor) FROM run_factors f WHERE f.run_id = r.run_id)
            FROM runs r WHERE r.run_id IN {sel} ORDER BY r.run_id""", params)]
    if "factors" in parts:
        factors: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for factor, value, n in store.query(
                f"SELECT factor, value, count(DISTINCT run_id) FROM run_factors WHERE run_id IN {sel} "
                "GROUP BY ALL ORDER BY factor, value", params):
            factors[factor].append({"value": value, "runs": n})
        for values in factors.values():  # numbers in numeric order (1, 2, 4, 16), words in text order
            values.sort(key=lambda v: _natural(v["value"]))
        out["factors"] = [{"factor": f, "values": v} for f, v in sorted(factors.items())]
    if "campaigns" in parts:
        campaigns: dict[str, dict[str, Any]] = {}
        for campaign, study, n in store.query(f"""
                SELECT c.value, s.value, count(DISTINCT c.run_id) FROM run_factors c
                LEFT JOIN run_factors s ON s.run_id = c.run_id AND s.factor = 'study'
                WHERE c.factor = 'campaign' AND c.run_id IN {sel} GROUP BY ALL ORDER BY 1, 2""", params):
            entry = campaigns.setdefault(campaign, {"campaign": campaign, "runs": 0, "studies": []})
            entry["runs"] += n
            if study is not None:
                entry["studies"].append({"study": study, "runs": n})
        out["campaigns"] = list(campaigns.values())
    if "metrics" in parts:
        defs = parsers.metrics()
        metrics: dict[str, dict[str, Any]] = {}
        # per (metric, role), and per metric over every role (a run counted once): one pass over run_metrics
        rows = store.query(f"""
            WITH m AS MATERIALIZED (SELECT metric, unit, role, run_id FROM run_metrics
                                    WHERE value IS NOT NULL AND run_id IN {ok})
            SELECT metric, any_value(unit), role, GROUPING(role) AS whole, count(DISTINCT run_id) FROM m
            GROUP BY GROUPING SETS ((metric, role), (metric)) ORDER BY metric, whole DESC, role NULLS FIRST""",
                           params)
        for metric, unit, role, whole, n in rows:
            md = defs.get(metric)
            if whole:
                metrics[metric] = {"metric": metric, "unit": unit or (md.unit if md else None), "runs": n,
                                   "direction": DIRECTION[md.higher_is_better] if md else None,
                                   "per_host": bool(md and md.per_host), "roles": []}
            elif role is not None:
                metrics[metric]["roles"].append({"form": f"{metric}[{role}]", "role": role, "runs": n})
        out["metrics"] = list(metrics.values())
    if "hosts" in parts:
        out["hosts"] = [{"role": role, "host": host, "runs": n} for role, host, n in store.query(
            f"SELECT role, host, count(DISTINCT run_id) FROM run_hosts WHERE run_id IN {ok} "
            "GROUP BY ALL ORDER BY role, host NULLS FIRST", params)]
    if "machines" in parts:
        # a run's machines: its hosts' (role, machine) pairs, as a table or figure tells machines apart
        # (report/machines.py); runs that ran alike counted together
        out["machines"] = [{"machines": [{"role": r, "machine": m} for r, m in pairs], "runs": n}
                           for pairs, n in store.query(f"""
            WITH s AS (SELECT run_id, list(DISTINCT [role, machine_id] ORDER BY [role, machine_id]) AS pairs
                       FROM run_hosts WHERE machine_id IS NOT NULL AND run_id IN {ok} GROUP BY run_id)
            SELECT pairs, count(*) FROM s GROUP BY pairs ORDER BY count(*) DESC, pairs""", params)]
    return out


def _natural(value: str) -> tuple:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)
