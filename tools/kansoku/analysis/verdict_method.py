"""The parameters of the noise-aware verdict (``analysis/noise.py``), apart from its computation so that a
command's ``--help`` can state the defaults without loading numpy."""

from __future__ import annotations

from dataclasses import dataclass

ALPHA = 0.10
MIN_EFFECT = 0.02
MIN_RUNS = 3
BOOTSTRAP_RESAMPLES = 2000
INTERVAL_LEVEL = 0.95


@dataclass(frozen=True)
class Method:
    """The parameters of the verdict; stated in the report's methods note."""

    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT
    min_runs: int = MIN_RUNS
    resamples: int = BOOTSTRAP_RESAMPLES
    level: float = INTERVAL_LEVEL
