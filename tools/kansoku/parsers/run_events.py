"""Events on a run's time axis (run start/end, steady window, stalls, checkpoints) and checkpoint metrics.

No file format of its own: views over what other modules store (``pgbench_steady_state``,
``pgbench_stalls`` from pgbench/steady.py, ``pg_checkpoints`` from postgres_log.py). The registry
loads modules in name order, so this one ('run_events') comes after both. The SQL is
``tools/kansoku/store/events.sql``; docs/steady-state.md describes the view.
"""

from __future__ import annotations

from pathlib import Path

from kansoku.parsers.base import MetricDef, ParserModule

SQL_FILE = Path(__file__).resolve().parents[1] / "store" / "events.sql"

METRICS = [
    MetricDef("checkpoints",
              "SELECT r.run_id, count(c.run_id) AS value FROM runs r LEFT JOIN run_checkpoints c USING (run_id) "
              "WHERE r.run_id IN (SELECT log_run.run_id FROM sources src JOIN runs log_run ON "
              "starts_with(log_run.run_dir || '/', regexp_replace(src.path, '/[^/]*$', '') || '/') "
              "WHERE src.format IN ('postgres-log', 'postgres-csvlog', 'postgres-jsonlog')) GROUP BY r.run_id",
              "checkpoints", None),
]

MODULE = ParserModule(name="run_events", formats=[], views=SQL_FILE.read_text(encoding="utf-8"), metrics=METRICS)

__all__ = ["MODULE"]
