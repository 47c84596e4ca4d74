"""Queries of the steady-state and event views (steady.sql, events.sql): the only place they run.

The views themselves are declared by the parser registry (parsers/pgbench/steady.py and
parsers/run_events.py) so that the store creates them with the others; analysis/steady.py uses the
functions below.
"""

from __future__ import annotations

from typing import Any

from kansoku.store.db import RUNS, Store

STEADY_COLUMNS = (
    "run_id", "steady_found", "series_source", "samples", "warmup_samples", "rampdown_samples", "warmup_s",
    "rampdown_s", "steady_start_s", "steady_end_s", "steady_s", "tps_steady", "tps_steady_median",
    "tps_steady_min", "tps_cv_pct", "stall_below_tps", "stall_s", "zero_s", "tps_slope_per_s", "tps_drift_pct", "trend_z",
    "drifts", "stalls", "flags")
EVENT_COLUMNS = ("run_id", "event", "at_s", "until_s", "reason", "value", "unit")


def _rows(store: Store, sql: str, params: list[Any], columns: tuple[str, ...]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row)) for row in store.con.execute(sql, params).fetchall()]


def steady_state(store: Store, run_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """One dict per run with a per-second TPS series (columns of ``pgbench_steady_state``)."""
    if run_ids is None:  # every run's: a build keeps them by run and computes a new run's alone (Store.per_run)
        rows = store.per_run(f"SELECT {', '.join('m.' + c for c in STEADY_COLUMNS)} FROM pgbench_steady_state m "
                             f"WHERE {RUNS} ORDER BY m.run_id")
        return [dict(zip(STEADY_COLUMNS, row)) for row in rows]
    return _rows(store, f"SELECT {', '.join(STEADY_COLUMNS)} FROM pgbench_steady_state "
                 "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id", [list(run_ids)], STEADY_COLUMNS)


def run_events(store: Store, run_ids: list[str], constant: bool = False) -> list[dict[str, Any]]:
    """The events of the given runs (columns of ``run_events``), by run and time. ``constant``: the runs are
    written into the statement as a list of SQL string literals, which DuckDB pushes down through the view's
    branches to the tables (a parameter list is joined after every run's events are computed): for a few runs
    of a large store (a rebuild after new runs)."""
    if constant:
        lits = ", ".join("'" + r.replace("'", "''") + "'" for r in run_ids) or "NULL"
        where, params = f"WHERE run_id IN ({lits})", []
    else:
        where, params = "WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [list(run_ids)]
    return _rows(store, f"SELECT {', '.join(EVENT_COLUMNS)} FROM run_events {where} ORDER BY run_id, at_s, event",
                 params, EVENT_COLUMNS)

