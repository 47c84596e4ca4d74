"""Chart kinds beyond line/bar: their data, one module per family (docs/charts.md).

Importing this package registers them (``@kind`` of ``_select``: ``KINDS``, the data of each kind, and
``RUNS_OF``, the runs a figure of the kind shows), which ``analysis.figures`` shares. Their drawing is in
``render/charts/`` (same module names), which never reads the store.
"""

from kansoku.analysis.charts import activity, derived, disk, profiles, queries, syscalls, system, timeseries  # noqa: F401  (registration by import)
from kansoku.analysis.charts._select import KINDS, RUNS_OF, kind

__all__ = ["KINDS", "RUNS_OF", "kind"]
