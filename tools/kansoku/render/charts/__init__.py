"""Chart kinds beyond line/bar, one module per family (docs/charts.md).

Importing this package registers them in ``figures.KINDS`` (figures.py imports it last).
``RUNS_OF`` tells ``figures.figure_runs`` which runs a figure of these kinds shows.
"""

from kansoku.render.charts import disk

from kansoku.render.charts import syscalls

from kansoku.render.charts import system

from kansoku.render.charts import timeseries  # noqa: F401  (registration by import)
from kansoku.render.charts._common import RUNS_OF

__all__ = ["RUNS_OF"]
