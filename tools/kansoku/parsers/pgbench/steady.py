"""Steady state of pgbench runs: warm-up, ramp-down, noise, drift and stalls of the per-second TPS.

No file format of its own: this module only declares views over ``pgbench_tps_per_second`` (the
per-second series from the per-transaction log, the aggregate log or the -P progress lines) and
the per-run metrics read from them. The SQL is ``tools/kansoku/store/steady.sql``; the rule and
its parameters are described in docs/steady-state.md and set here, in one place.
"""

from __future__ import annotations

from pathlib import Path

from kansoku.parsers.base import MetricDef, ParserModule

# The detection rule's parameters (docs/steady-state.md explains each one).
STEADY_PARAMS = {
    "band_fraction": 0.10,         # the band around the reference level: at least +-10 % of it ...
    "band_mads": 3,                # ... and at least 3 robust standard deviations (1.4826 x MAD)
    "consecutive": 3,              # samples in a row inside the band that start (end) the steady window
    "max_warmup_fraction": 0.5,    # a warm-up longer than half the run: no steady state found
    "max_rampdown_fraction": 0.25, # a ramp-down longer than a quarter of the run: no steady state found
    "min_samples": 6,              # shorter series: no detection (fallback window)
    "fallback_trim_fraction": 0.10,
    "fallback_trim_pct": 10,
    "stall_fraction": 0.5,         # a stall: a sample below half the steady window's median TPS ...
    "stall_mads": 4,               # ... and more than 4 robust standard deviations below it;
    "stall_floor_fraction": 0.2,   # below a fifth of the median (or zero) is a stall whatever the noise
    "drift_z": 2.576,              # Mann-Kendall trend test, two-sided 1 % level ...
    "drift_min_pct": 10,           # ... and a Theil-Sen change over the window of at least 10 % of the median
    "max_trend_points": 300,       # the trend is computed on at most this many bucket means
}

SQL_FILE = Path(__file__).resolve().parents[2] / "store" / "steady.sql"
VIEWS = SQL_FILE.read_text(encoding="utf-8").format(**STEADY_PARAMS)

_NOT_ABORTED = "run_id NOT IN (SELECT run_id FROM pgbench_aborted_runs WHERE run_id IS NOT NULL)"


def _metric(name: str, column: str, unit: str, higher: bool | None) -> MetricDef:
    """A column of pgbench_steady_state as a metric (its label: i18n metric_<name>)."""
    return MetricDef(name, f"SELECT run_id, {column} AS value FROM pgbench_steady_state WHERE {_NOT_ABORTED}",
                     unit, higher)


METRICS = [
    _metric("tps_steady", "tps_steady", "tps", True),
    _metric("tps_cv_pct", "tps_cv_pct", "%", False),
    _metric("warmup_s", "warmup_s", "s", False),
    _metric("rampdown_s", "rampdown_s", "s", False),
    _metric("stall_s", "stall_s", "s", False),
    _metric("tps_drift_pct", "tps_drift_pct", "%", None),
]

MODULE = ParserModule(name="pgbench_steady", formats=[], views=VIEWS, metrics=METRICS)

__all__ = ["MODULE", "STEADY_PARAMS"]
