"""Per-run metric values of a selection of runs: the store side of tools/compare.

A selection is a set of factor constraints (``{"config": ["checksums-on"]}``): a run belongs to it when,
for every constrained factor, its value is one of the listed ones. Only good runs count (``status =
'ok'``); measured and transcribed runs alike (their origin is returned so a comparison can say so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from kansoku.store.db import RUNS, Store, run_metric_source


@dataclass(frozen=True)
class RunValue:
    run_id: str
    metric: str
    value: float
    unit: str | None
    origin: str
    factors: dict[str, str]
    host: str | None = None  # a metric measured per host: the host and its role (one RunValue per host)
    role: str | None = None
    default_role: str | None = None  # the run's campaign's declared default role


class ScopeLike(Protocol):
    """What a report speaks for (spec.model.Scope): campaigns, run-id prefixes, published-table patterns."""

    campaigns: tuple[str, ...]
    run_prefixes: tuple[str, ...]
    transcribed: tuple[str, ...]


def scope_condition(run_id: str, scope: ScopeLike, params: list[Any], *, campaigns: tuple[str, ...] = (),
                    published_tables: tuple[str, ...] = ()) -> str:
    """SQL condition on the column ``run_id``: the run is one the scope speaks for, or one of the other
    campaigns or published tables an item names on purpose. The one spelling of a report's scope."""
    conds = []
    named = [*scope.campaigns, *campaigns]
    if named:
        conds.append(f"{run_id} IN (SELECT run_id FROM run_factors WHERE factor = 'campaign' "
                     f"AND value IN ({', '.join('?' for _ in named)}))")
        params += named
    for prefix in scope.run_prefixes:
        conds.append(f"starts_with({run_id}, ?)")
        params.append(prefix)
    patterns = [*scope.transcribed, *published_tables]
    if patterns:
        conds.append(f"{run_id} IN (SELECT run_id FROM run_factors WHERE factor = 'published_table' AND ("
                     + " OR ".join("value GLOB ?" for _ in patterns) + "))")
        params += patterns
    return "(" + " OR ".join(conds) + ")" if conds else "FALSE"


def outside_scope(store: Store, run_ids_sql: str, params: list[Any], scope: ScopeLike, *,
                  campaigns: tuple[str, ...] = (), published_tables: tuple[str, ...] = ()) -> list[tuple[str, str, int]]:
    """(kind, name, runs) of the runs of ``run_ids_sql`` (a SELECT of run ids) that ``scope`` does not
    speak for (nor the campaigns and published tables named beside it), by campaign (``campaign``),
    published table (``published table``) or first run-id segment (``runs``)."""
    own: list[Any] = []
    cond = scope_condition("r.run_id", scope, own, campaigns=campaigns, published_tables=published_tables)
    return [tuple(r) for r in store.query(f"""
        SELECT CASE WHEN t.value IS NOT NULL THEN 'published table' WHEN c.value IS NOT NULL THEN 'campaign'
                    ELSE 'runs' END AS kind,
               coalesce(t.value, c.value, split_part(r.run_id, '/', 1) || '/') AS name, count(*) AS n
        FROM runs r
        LEFT JOIN run_factors c ON c.run_id = r.run_id AND c.factor = 'campaign'
        LEFT JOIN run_factors t ON t.run_id = r.run_id AND t.factor = 'published_table'
        WHERE r.run_id IN ({run_ids_sql}) AND NOT {cond}
        GROUP BY ALL ORDER BY kind, name""", params + own)]


def metric_values(store: Store, selection: dict[str, list[str]], metrics: list[str] | None = None,
                  scope: ScopeLike | None = None) -> list[RunValue]:
    """Every (run, metric) value of the selected good runs, with each run's factors; within ``scope``
    (a report's, spec.model.Scope) where one is declared."""
    params: list[Any] = []
    conds = ["m.value IS NOT NULL", "isfinite(m.value)"]
    source = "run_metrics"
    if metrics:
        conds.append(f"m.metric IN ({', '.join('?' for _ in metrics)})")
        params += metrics
        source = run_metric_source(metrics)  # (not all ~60 branches: half of a comparison's CPU was planning)
    # each run's values (of every run: a build keeps them by run, Store.per_run, and computes a new run's alone),
    # then the selection's good runs
    values = store.per_run(
        f"SELECT m.run_id, m.metric, m.value, m.unit, m.host, m.role FROM {source} m "
        f"WHERE {' AND '.join(conds)} AND {RUNS} ORDER BY m.run_id, m.metric, m.host", params)
    params, conds = [], ["r.status = 'ok'"]
    for factor, values_of in sorted(selection.items()):
        conds.append("EXISTS (SELECT 1 FROM run_factors f WHERE f.run_id = r.run_id AND f.factor = ? "
                     f"AND f.value IN ({', '.join('?' for _ in values_of)}))")
        params += [factor, *values_of]
    if scope is not None and (scope.campaigns or scope.run_prefixes or scope.transcribed):
        conds.append(scope_condition("r.run_id", scope, params, campaigns=tuple(selection.get("campaign", ())),
                                     published_tables=tuple(selection.get("published_table", ()))))
    runs = {run_id: rest for run_id, *rest in store.con.execute(f"""
        SELECT r.run_id, r.origin,
               (SELECT map(list(f.factor ORDER BY f.factor), list(f.value ORDER BY f.factor))
                FROM run_factors f WHERE f.run_id = r.run_id) AS factors, r.default_role
        FROM runs r WHERE {' AND '.join(conds)}""", params).fetchall()}
    out = []
    # by metric, run and host (no host last), as ORDER BY m.metric, m.run_id, m.host
    for run_id, metric, value, unit, host, role in sorted(
            (v for v in values if v[0] in runs), key=lambda v: (v[1], v[0], v[4] is None, v[4] or "")):
        origin, factors, default_role = runs[run_id]
        # 12 significant digits (the rule of the report's downloads): a metric that DuckDB sums in parallel
        # (sysstat averages) can differ in its last bit between two queries of the same data, and the
        # terminal and the report must print, and test, the same numbers
        out.append(RunValue(run_id, metric, float(f"{float(value):.12g}"), unit, origin, dict(factors or {}),
                            host, role, default_role))
    return out


def run_environments(store: Store, run_ids: list[str]) -> dict[str, dict[str, Any]]:
    """run -> {'machine': {...}, 'versions': {...}, 'server': {...}, 'hosts': {host_dir: host.toml}} as
    captured with the run (run.toml, host.toml), for tools/compare's environment differences."""
    out: dict[str, dict[str, Any]] = {}
    for run_id, doc in store.con.execute(
            "SELECT run_id, run_toml::VARCHAR FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]).fetchall():
        d = json.loads(doc) if doc else {}
        out[run_id] = {k: d.get(k) for k in ("machine", "versions", "server") if isinstance(d.get(k), dict)}
        out[run_id]["role"] = None
    try:
        rows = store.con.execute(
            "SELECT run_id, host_dir, role, host_toml::VARCHAR FROM run_hosts WHERE run_id IN "
            "(SELECT unnest(?::VARCHAR[]))", [run_ids]).fetchall()
    except Exception:
        rows = []
    for run_id, host_dir, role, doc in rows:
        if not host_dir:
            out.setdefault(run_id, {})["role"] = role
            continue
        d = json.loads(doc) if doc else {}
        out.setdefault(run_id, {}).setdefault("hosts", {})[role] = {
            k: d.get(k) for k in ("machine", "versions", "server") if isinstance(d.get(k), dict)}
    return out


def factor_values(store: Store) -> dict[str, set[str]]:
    """Every factor and its values in the store (to name a selection's mistakes)."""
    out: dict[str, set[str]] = {}
    for factor, value in store.con.execute("SELECT DISTINCT factor, value FROM run_factors").fetchall():
        out.setdefault(factor, set()).add(value)
    return out
