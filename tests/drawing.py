"""A figure computed (analysis.figures) and drawn in every language as the renderers draw it (render.charts)."""

from __future__ import annotations

from kansoku.analysis import figures
from kansoku.render import charts
from kansoku.words import LANGS


def drawn_figure(store, report, item):
    """The computed figure with ``.figure``: language -> plotly figure (what the site and the PDF draw)."""
    f = figures.figure_data(store, report, item)
    f.figure = {lang: charts.draw(f.chart_data, lang) for lang in LANGS}
    return f
