"""pgbench charts: per-second TPS over time, latency percentiles vs a factor (docs/charts.md).
Data and words: analysis/charts/timeseries.py."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import color, compact, crowded, draws, esc, hover, layout, right_axis
from kansoku.render.charts.events import add_events


@draws("tps_over_time")
def tps_over_time(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        name = w["names"][i]
        tmpl = hover(name, [(w["source"], esc(w["sources"][i])), (w["x_title"], "%{x:.1f}"),
                            (w["y_title"], "%{y:,.1f}")])
        col = color(i)
        fig.add_trace(go.Scatter(
            x=tr["x"], y=tr["tps"], name=name,
            mode="lines+markers" if d["markers"] else "lines", line=dict(color=col, width=2),
            marker=dict(size=5), legendgroup=f"g{i}", hovertemplate=tmpl))
        if d["latency"]:
            fig.add_trace(go.Scatter(
                x=tr["x"], y=tr["latency"], name=f"{name} {w['latency']}", yaxis="y2", mode="lines",
                line=dict(color=col, width=1.5, dash="dot"), legendgroup=f"g{i}",
                hovertemplate=hover(name, [(w["x_title"], "%{x:.1f}"), (w["y2_title"], "%{y:.2f}")])))
    if d.get("events"):
        add_events(fig, d["events"], w["event_labels"], w["event_kinds"])
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    if d["latency"]:
        lay["yaxis2"] = right_axis(w["y2_title"], rangemode="tozero")
        lay["margin"] = dict(lay["margin"], r=64)
    fig.update_layout(**lay)
    return compact(fig)


PERCENTILE_DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


@draws("latency_percentiles")
def latency_percentiles(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    x_title, y_title = lay["xaxis"]["title"]["text"], lay["yaxis"]["title"]["text"]
    # ticks exactly at the measured values; categorical when they would collide ("1 2" read as "12")
    categorical = d["numeric"] and crowded([float(v) for v in d["x_vals"]])
    for i, tr in enumerate(d["traces"]):
        si, mi = tr["series_index"], tr["metric_index"]
        xs = tr["x"] if d["numeric"] else w["x"][i]
        if categorical:
            xs = [_tick(x) for x in xs]
        runs = (w.get("hover") or [None] * len(d["traces"]))[i] or tr["hover"]
        fig.add_trace(go.Scatter(
            x=xs, y=tr["y"], name=w["names"][i], mode="lines+markers",
            hovertext=runs, customdata=tr.get("y_text"),
            hovertemplate=hover(w["names"][i], [(x_title, "%{x}"),
                                                (y_title, "%{customdata}" if tr.get("y_text") else "%{y}")],
                                point_note=True),
            line=dict(color=color(mi), dash=PERCENTILE_DASHES[si % len(PERCENTILE_DASHES)]),
            marker=dict(symbol=["circle", "square", "diamond", "triangle-up"][si % 4])))
    fig.update_layout(**lay)
    if categorical:
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=[_tick(float(v)) for v in d["x_vals"]])
    elif d["numeric"]:
        fig.update_xaxes(tickmode="array", tickvals=[float(v) for v in d["x_vals"]], ticktext=list(d["x_vals"]))
    return compact(fig)


def _tick(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
