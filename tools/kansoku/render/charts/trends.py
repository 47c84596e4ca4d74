"""The cross-year view's chart. Data and words: report/trends.py.

One trace per (series, origin, machine): a line joins only the years of one series measured on one machine,
so points of different machines are never joined; each machine has its own marker shape, each series its
own colour, transcribed values open markers on a dotted line. Points of one year sit side by side (the x
of each is its fiscal year plus a small offset), and a log axis gets 1-2-5 ticks in every decade."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import base_layout, color, compact, draws

SYMBOLS = ("circle", "square", "diamond", "triangle-up", "pentagon", "star", "hexagon", "cross")


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times each power of ten from below ``lo`` to above ``hi`` (at least three ticks)."""
    if lo <= 0 or hi <= 0:
        return []
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** e
            if lo / 2.5 <= v <= hi * 2.5:
                out.append(v)
    return out


def _tick_text(v: float) -> str:
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


@draws("trend")
def trend(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        transcribed = tr["origin"] == "transcribed"
        symbol = SYMBOLS[tr["machine_index"] % len(SYMBOLS)] + ("-open" if transcribed else "")
        fig.add_trace(go.Scatter(
            x=tr["x"], y=tr["y"], name=w["names"][i], mode="lines+markers" if len(tr["x"]) > 1 else "markers",
            line=dict(dash="dot" if transcribed else "solid", color=color(tr["series_index"])),
            marker=dict(symbol=symbol, size=11, color=color(tr["series_index"]), line=dict(width=2)),
            customdata=w["hover"][i],
            hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]}<br>%{customdata[2]}<br>%{customdata[3]}"
                          "<br>%{customdata[4]}<br>%{customdata[5]}<extra></extra>"))
    lay = base_layout(chart.options, w["x_title"], w["y_title"])
    # the legend below the plot: entries name version and machine and can be long
    lay["legend"] = dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0)
    lay["margin"] = dict(l=72, r=16, t=16, b=40)
    fig.update_layout(**lay)
    fig.update_layout(showlegend=True, height=chart.options.get("height") or 520)
    ys = [y for tr in d["traces"] for y in tr["y"] if y and y > 0]
    if chart.options.get("y_log") and ys:
        ticks = log_ticks(min(ys), max(ys))
        fig.update_yaxes(tickmode="array", tickvals=ticks, ticktext=[_tick_text(t) for t in ticks])
    years = d["years"]
    if years:
        # plotly's own autorange pads the markers by their size in pixels, at any width: a fixed range in
        # years left the side-by-side markers of the last year half outside the plot on a phone
        fig.update_xaxes(tickmode="array", tickvals=years, ticktext=[str(y) for y in years], autorange=True,
                         autorangeoptions=dict(include=[min(years) - 0.6, max(years) + 0.6]))
    return compact(fig)
