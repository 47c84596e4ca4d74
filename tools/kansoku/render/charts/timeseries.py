"""pgbench charts: per-second TPS over time, latency percentiles vs a factor (docs/charts.md).
Data and words: analysis/charts/timeseries.py."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.render.charts._draw import color, compact, draws, layout
from kansoku.report.model import ChartData


@draws("tps_over_time")
def tps_over_time(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        name = w["names"][i]
        hover = f"{name}<br>{w['source']}: {w['sources'][i]}<br>%{{x:.1f}} s: %{{y:.1f}} TPS<extra></extra>"
        col = color(i)
        fig.add_trace(go.Scatter(
            x=tr["x"], y=tr["tps"], name=name,
            mode="lines+markers" if d["markers"] else "lines", line=dict(color=col, width=2),
            marker=dict(size=5), legendgroup=f"g{i}", hovertemplate=hover))
        if d["latency"]:
            fig.add_trace(go.Scatter(
                x=tr["x"], y=tr["latency"], name=f"{name} {w['latency']}", yaxis="y2", mode="lines",
                line=dict(color=col, width=1.5, dash="dot"), legendgroup=f"g{i}",
                hovertemplate=f"{name}<br>%{{x:.1f}} s: %{{y:.2f}} ms<extra></extra>"))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    if d["latency"]:
        lay["yaxis2"] = dict(title=dict(text=w["y2_title"]),
                             overlaying="y", side="right", rangemode="tozero", showgrid=False, automargin=True)
        lay["margin"] = dict(lay["margin"], r=64)
    fig.update_layout(**lay)
    return compact(fig)


PERCENTILE_DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


@draws("latency_percentiles")
def latency_percentiles(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        si, mi = tr["series_index"], tr["metric_index"]
        fig.add_trace(go.Scatter(
            x=tr["x"] if d["numeric"] else w["x"][i], y=tr["y"], name=w["names"][i], mode="lines+markers",
            hovertext=tr["hover"],
            line=dict(color=color(mi), dash=PERCENTILE_DASHES[si % len(PERCENTILE_DASHES)]),
            marker=dict(symbol=["circle", "square", "diamond", "triangle-up"][si % 4])))
    fig.update_layout(**layout(chart.options, lang, w["x_title"], w["y_title"]))
    if d["numeric"]:
        fig.update_xaxes(tickmode="array", tickvals=[float(v) for v in d["x_vals"]], ticktext=list(d["x_vals"]))
    return compact(fig)
