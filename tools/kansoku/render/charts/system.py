"""System charts over one run: stacked CPU usage with disk %util, per-CPU small multiples
(docs/charts.md). Data and words: analysis/charts/system.py."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from kansoku import words
from kansoku.model import ChartData
from kansoku.render.charts._draw import compact, draws, hover, layout, make_subplots, right_axis

CPU_COLORS = {"usr": "#1f4e79", "nice": "#9dc3e6", "sys": "#c55a11", "iowait": "#bf9000", "steal": "#7f7f7f",
              "irq": "#7030a0", "soft": "#c00000", "guest": "#548235", "gnice": "#a9d18e", "idle": "#d9d9d9"}


@draws("cpu_stacked")
def cpu_stacked(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for s in d["stack"]:
        col = s["column"]
        fig.add_trace(go.Scatter(
            x=d["x"], y=s["y"], name=f"%{col}", mode="lines", stackgroup="cpu",
            line=dict(width=0.5, color=CPU_COLORS[col]), fillcolor=CPU_COLORS[col],
            hovertemplate=hover(f"%{col}", [(w["x_title"], "%{x:.0f}"), (w["y_title"], "%{y:.1f}")])))
    dashes = ["solid", "dash", "dot", "dashdot"]
    for k, u in enumerate(d["util"]):
        dev = u["device"]
        fig.add_trace(go.Scatter(
            x=u["x"], y=u["y"], name=f"{dev} %util", yaxis="y2",
            mode="lines+markers", line=dict(color="#000000", width=2, dash=dashes[k % len(dashes)]),
            marker=dict(size=5), hovertemplate=hover(f"{dev} %util", [(w["x_title"], "%{x:.0f}"),
                                                                       (w["y2_title"], "%{y:.1f}")])))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    lay["yaxis"] = dict(lay["yaxis"], range=[0, 100], rangemode="normal")
    lay["legend"] = dict(lay["legend"], traceorder="normal")  # stacked areas: keep usr, sys, ... order
    if d["show_util"]:
        lay["yaxis2"] = right_axis(w["y2_title"], range=[0, 100])
        lay["margin"] = dict(lay["margin"], r=64)
    fig.update_layout(**lay)
    return compact(fig)


@draws("cpu_per_cpu")
def cpu_per_cpu(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    col, panels = d["column"], d["panels"]
    n = len(panels)
    ncols = d["columns_per_row"]
    nrows = math.ceil(n / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=[f"CPU {p['cpu']}" for p in panels],
                        vertical_spacing=min(0.12, 0.5 / max(nrows, 1)), horizontal_spacing=0.03)
    ymax = max((v for p in panels for v in p["y"] if v is not None), default=0.0)
    for k, p in enumerate(panels):
        cpu = p["cpu"]
        fig.add_trace(go.Scatter(
            x=p["x"], y=p["y"], name=f"CPU {cpu}", mode="lines",
            line=dict(color="#1f4e79", width=1.5), fill="tozeroy",
            fillcolor="rgba(31,78,121,0.25)", showlegend=False,
            hovertemplate=hover(f"CPU {cpu}", [(w["x_title"], "%{x:.0f}"), (f"%{col}", words.t(lang, "percent", "%{y:.1f}"))])),
            row=k // ncols + 1, col=k % ncols + 1)
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    base_x, base_y = lay.pop("xaxis"), lay.pop("yaxis")
    lay.pop("legend", None)
    lay.setdefault("height", max(380, 150 * nrows + 110))  # the site's chart box is at least 380 px
    lay["margin"] = dict(lay["margin"], t=36)
    fig.update_layout(**lay, showlegend=False)
    top = min(max(ymax * 1.1, 1.0), 100.0) if ymax <= 100 else ymax * 1.05
    fig.update_yaxes(range=[0, top], showgrid=True, gridcolor="#e5e5e5", zeroline=False)
    fig.update_xaxes(showgrid=True, gridcolor="#e5e5e5", zeroline=False)
    # axis titles once: x under the bottom row, y left of the first column
    for k in range(n):
        r, cc = k // ncols + 1, k % ncols + 1
        if r == nrows or k + ncols >= n:
            fig.update_xaxes(title_text=base_x["title"]["text"] if cc == 1 else None, row=r, col=cc)
        if cc == 1:
            fig.update_yaxes(title_text=base_y["title"]["text"], row=r, col=cc)
    fig.update_annotations(font=dict(size=12))
    return compact(fig)
