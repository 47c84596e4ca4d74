"""Chart kinds beyond line/bar, one module per family (docs/charts.md).

Importing this package registers them in ``figures.KINDS`` (figures.py imports it last).
``RUNS_OF`` tells ``figures.figure_runs`` which runs a figure of these kinds shows.
"""

from . import disk, syscalls, system, timeseries  # noqa: F401  (registration by import)
from ._common import RUNS_OF

__all__ = ["RUNS_OF"]
