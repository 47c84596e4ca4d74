"""Chart drawing: plotly figures from computed chart data (``kansoku.model.ChartData``), one module per
family (docs/charts.md). No store and no words here: the data and every label were computed by
``analysis/figures.py`` and ``analysis/charts/``. Importing this package registers every kind in ``DRAW``.
"""

from kansoku.render.charts import (  # noqa: F401
    activity,
    derived,
    disk,
    lines,
    profiles,
    queries,
    syscalls,
    system,
    timeseries,
    trends,
)
from kansoku.render.charts._draw import DOWNLOADS, DRAW, draw, draw_print, escape_plotly

__all__ = ["DOWNLOADS", "DRAW", "draw", "draw_print", "escape_plotly"]
