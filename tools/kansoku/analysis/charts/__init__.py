"""Chart kinds beyond line/bar: their data, one module per family (docs/charts.md).

Importing this package registers them in ``KINDS`` (``_select.KINDS``, which ``analysis.figures`` shares).
``RUNS_OF`` tells ``figures.figure_runs`` which runs a figure of these kinds shows. Their drawing is in
``render/charts/`` (same module names), which never reads the store.
"""

from kansoku.analysis.charts import activity, derived, disk, profiles, queries, syscalls, system, timeseries  # noqa: F401  (registration by import)
from kansoku.analysis.charts._select import RUNS_OF

__all__ = ["RUNS_OF"]
