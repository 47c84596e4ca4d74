"""Profile charts: a flame graph per condition (a plotly icicle, root at the bottom) and the differential view of
two conditions (docs/charts.md). Data and words: analysis/charts/profiles.py."""

from __future__ import annotations

import zlib

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kansoku.render.charts._draw import base_layout, compact, draws, esc, layout

VERDICT_COLORS = {"higher": "#c00000", "lower": "#1f4e79", "within_noise": "#a6a6a6", "too_few_runs": "#d9d9d9"}


def flame_color(label: str) -> str:
    """Brendan Gregg's warm palette, by a stable hash of the frame (the same function keeps its colour across
    conditions); unresolved frames grey, the kernel's orange-brown."""
    if label.startswith("[") or label.startswith("0x"):
        return "#bdbdbd"
    h = zlib.crc32(label.encode("utf-8"))
    r, g, b = 205 + h % 50, 80 + (h >> 8) % 130, 40 + (h >> 16) % 45
    return f"rgb({r},{g},{b})"


@draws("flamegraph")
def flamegraph(chart, lang: str) -> dict:
    """One panel per condition, sharing the x axis (% of the samples); a frame is a bar from its left edge
    (``base``) as wide as its share, at the height of its depth. Bars only: the site's plotly.js bundle has no
    icicle, and box-zooming an axis range reads a narrow frame as well as an icicle's click would."""
    d, w = chart.data, chart.words[lang]
    n = len(d["trees"])
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=min(0.12, 0.5 / n),
                        subplot_titles=[f"{esc(name)} ({esc(runs)})" for name, runs in zip(w["names"], w["n_runs"])])
    for i, t in enumerate(d["trees"]):
        labels = [w["root"] if p < 0 else l for l, p in zip(t["labels"], t["parents"])]
        custom = [[esc(l), f"{v:.2f}", f"{s:.2f}"] for l, v, s in zip(labels, t["values"], t["self"])]
        fig.add_trace(go.Bar(
            x=t["values"], base=t["starts"], y=t["depth"], orientation="h", width=0.94,
            marker=dict(color=["#d9d9d9" if p < 0 else flame_color(l) for l, p in zip(t["labels"], t["parents"])],
                        line=dict(color="#ffffff", width=0.4)),
            text=labels, textposition="inside", insidetextanchor="start", textangle=0,
            textfont=dict(size=10, color="#1a1a1a"), customdata=custom, showlegend=False,
            hovertemplate="%{customdata[0]}<br>" + esc(w["total"]) + ": %{customdata[1]} %<br>" + esc(w["self"])
                          + ": %{customdata[2]} %<extra></extra>"), row=i + 1, col=1)
        depth = max(t["depth"]) if t["depth"] else 1
        fig.update_yaxes(range=[-0.6, depth + 0.6], showticklabels=False, showgrid=False, zeroline=False,
                         fixedrange=True, row=i + 1, col=1)
        fig.update_xaxes(range=[0, 100], showgrid=False, zeroline=False, row=i + 1, col=1)
    lay = base_layout(chart.options, "", "")
    lay.pop("xaxis"), lay.pop("yaxis")
    depths = sum(max(t["depth"]) + 1 if t["depth"] else 1 for t in d["trees"])
    lay.update(height=chart.options.get("height") or min(3000, 18 * depths + 70 * n + 60),
               uniformtext=dict(minsize=9, mode="hide"), bargap=0, margin=dict(l=8, r=8, t=36, b=36),
               plot_bgcolor="#ffffff")
    fig.update_layout(**lay)
    fig.update_annotations(x=0, xanchor="left", font=dict(size=13))  # panel titles: left, clear of the mode bar
    fig.update_xaxes(ticksuffix=" %", row=n, col=1)
    return compact(fig)


ROW_PX = 40  # a row of the difference chart: its label above a bar


def _short(name: str, keep: int = 44) -> str:
    """A function name as a row's label: a C++ signature can run past a phone's width (the hover has it whole)."""
    return name if len(name) <= keep else name[: keep - 1] + "…"


@draws("profile_diff")
def profile_diff(chart, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    rows = d["rows"]
    order = [r["function"] for r in rows]
    xs = [round(r["delta"], 3) for r in rows]
    colors = [VERDICT_COLORS.get(r["verdict"], "#a6a6a6") for r in rows]
    # the hover's lines are the template's own markup; the measured parts are customdata, which escape_plotly
    # escapes (as hovertext, its <br> was escaped too and printed as "<br>")
    custom = [[r["function"], f"{r['a']:.2f}", f"{r['b']:.2f}", f"{r['delta']:+.2f}", v] for r, v in zip(rows, w["verdicts"])]
    tmpl = ("%{customdata[0]}<br>" + esc(w["a"]) + ": %{customdata[1]} %<br>" + esc(w["b"]) + ": %{customdata[2]} %<br>"
            "%{customdata[3]}<br>%{customdata[4]}<extra></extra>")
    # each function's name and change is a label above its bar, inside the plot: as tick labels beside
    # the bars they took a desktop's left margin, which left a phone a plot ~120 px wide, and the values
    # outside the bars were cut at the figure's edge
    fig = go.Figure(go.Bar(x=xs, y=order, orientation="h", marker=dict(color=colors), customdata=custom,
                           hovertemplate=tmpl, showlegend=False))
    # one legend entry per verdict that occurs, in the verdict language of the tables
    seen = []
    for r, v in zip(rows, w["verdicts"]):
        if r["verdict"] not in seen:
            seen.append(r["verdict"])
            fig.add_trace(go.Bar(x=[None], y=[order[0]] if order else [None], orientation="h", name=v,
                                 marker=dict(color=VERDICT_COLORS.get(r["verdict"], "#a6a6a6")), showlegend=True))
    # no y title: the rows are named by their labels, and a title fell on them in the PDF's rendering
    # the x title in two lines, the measure first: in one it ran past a phone's width on both sides
    lay = layout(chart.options, lang, w["x_title"].replace(" (", "\n(", 1), "")
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category", showticklabels=False)
    lo, hi = min([0.0, *xs]), max([0.0, *xs])
    pad = 0.04 * (hi - lo or 1.0)
    lay["xaxis"] = dict(lay["xaxis"], zeroline=True, zerolinecolor="#7f7f7f",
                        range=[lo - pad if lo < 0 else lo, hi + pad if hi > 0 else hi], autorange=False)
    lay["annotations"] = [dict(x=0, xref="paper", xanchor="left", y=name, yref="y", yanchor="bottom", yshift=ROW_PX * 0.22,
                               text=f"{_short(name)}  {x:+.2f}", showarrow=False, font=dict(size=11), align="left")
                          for name, x in zip(order, xs)]
    lay["margin"] = dict(lay["margin"], l=16, r=16)
    lay.setdefault("height", ROW_PX * len(order) + lay["margin"].get("t", 40) + 140)
    # overlay: the legend's empty traces must not take a slot each beside the bars (grouped, they thinned every
    # bar to a quarter of its row and its label to an unreadable size)
    fig.update_layout(**lay, bargap=0.5, barmode="overlay")
    return compact(fig)
