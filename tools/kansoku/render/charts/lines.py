"""line and bar charts (docs/spec.md): one trace per series. Data and words: analysis/figures.py."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.render.charts._draw import base_layout, compact, draws
from kansoku.report.model import ChartData


@draws("line", "bar")
def line_chart(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        xs = tr["x"] if d["numeric_x"] else w["x"][i]
        err = None
        if d.get("spread"):  # error bars from the runs' min to max (points of one run have none)
            err = dict(type="data", symmetric=False, thickness=1.2, width=4,
                       array=[None if hi is None else hi - y for y, hi in zip(tr["y"], tr["hi"])],
                       arrayminus=[None if lo is None else y - lo for y, lo in zip(tr["y"], tr["lo"])])
        if d["bar"]:
            fig.add_trace(go.Bar(x=xs, y=tr["y"], name=w["names"][i], hovertext=w["hover"][i], error_y=err))
        else:
            fig.add_trace(go.Scatter(x=xs, y=tr["y"], name=w["names"][i], mode="lines+markers",
                                     hovertext=w["hover"][i], error_y=err))
    fig.update_layout(**base_layout(opts, w["x_title"], w["y_title"]))
    if d["bar"]:
        fig.update_layout(barmode="group")
    if d["numeric_x"] and not opts.get("x_log"):
        fig.update_xaxes(tickmode="array", tickvals=d["x_ticks"])
    if d["numeric_x"] and opts.get("x_log"):
        fig.update_xaxes(tickvals=d["x_ticks"])
    return compact(fig)
