"""The cross-year view's chart: one line per (series, origin), transcribed values dotted with open markers.
Data and words: report/build.py compute_trends."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.render.charts._draw import base_layout, compact, draws
from kansoku.report.model import ChartData


@draws("trend")
def trend(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, s in enumerate(d["series"]):
        transcribed = s["origin"] == "transcribed"
        fig.add_trace(go.Scatter(
            x=s["x"], y=s["y"], name=w["names"][i], mode="lines+markers",
            line=dict(dash="dot" if transcribed else "solid"),
            marker=dict(symbol="circle-open" if transcribed else "circle", size=9),
            hovertext=s["hover"]))
    fig.update_layout(**base_layout(chart.options, w["x_title"], w["y_title"]))
    fig.update_layout(showlegend=True)
    if chart.options.get("y_log"):
        fig.update_yaxes(dtick=1)  # one tick per power of ten, not 2..9 between them
    years = d["years"]
    fig.update_xaxes(tickmode="array", tickvals=years, ticktext=[str(y) for y in years])
    return compact(fig)
