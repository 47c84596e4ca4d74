"""Drawing of disk_over_time and softirq_types charts (data: analysis/charts/activity.py)."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import color, compact, draws, hover, layout


@draws("disk_over_time")
def disk_over_time(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    devices = list(dict.fromkeys((ln["run"], ln["device"]) for ln in d["lines"]))
    for i, ln in enumerate(d["lines"]):
        name = w["names"][i]
        fig.add_trace(go.Scatter(
            x=ln["x"], y=ln["y"], mode="lines", name=name,
            line=dict(color=color(devices.index((ln["run"], ln["device"]))),
                      dash={"read": "solid", "write": "dot", "discard": "dash"}[ln["direction"]], width=1.8),
            hovertemplate=hover(name, [(w["x_title"], "%{x:.1f}"), (w["y_title"], "%{y:,.1f}")])))
    fig.update_layout(**layout(opts, lang, w["x_title"], w["y_title"]))
    return compact(fig)


@draws("softirq_types")
def softirq_types(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    if d["by"] == "type":
        for i, b in enumerate(d["bars"]):
            name = w["names"][i]
            fig.add_trace(go.Bar(x=d["categories"], y=b["y"], name=name, marker=dict(color=color(i)),
                                 hovertemplate=hover(name, [(w["x_title"], "%{x}"), (w["y_title"], "%{y:,.1f}")])))
        fig.update_layout(**layout(opts, lang, w["x_title"], w["y_title"]), barmode="group")
    else:
        for i, s in enumerate(d["segments"]):
            name = w["names"][i]
            fig.add_trace(go.Bar(x=d["categories"], y=s["y"], name=name, marker=dict(color=color(i)),
                                 hovertemplate=hover(name, [(w["x_title"], "%{x}"), (w["y_title"], "%{y:,.1f}")])))
        fig.update_layout(**layout(opts, lang, w["x_title"], w["y_title"]), barmode="stack")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=[str(x) for x in d["categories"]])
    return compact(fig)
