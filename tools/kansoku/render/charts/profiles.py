"""Profile charts: a flame graph per condition (a plotly icicle, root at the bottom) and the differential view of
two conditions (docs/charts.md). Data and words: analysis/charts/profiles.py."""

from __future__ import annotations

import zlib

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kansoku.render.charts._draw import base_layout, compact, draws, esc, layout, room_for_categories

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


@draws("profile_diff")
def profile_diff(chart, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    rows = d["rows"]
    order = [r["function"] for r in rows]
    xs = [round(r["delta"], 3) for r in rows]
    colors = [VERDICT_COLORS.get(r["verdict"], "#a6a6a6") for r in rows]
    hover = [f"{esc(r['function'])}<br>{esc(w['a'])}: {r['a']:.2f} %<br>{esc(w['b'])}: {r['b']:.2f} %<br>"
             f"{r['delta']:+.2f}<br>{esc(v)}" for r, v in zip(rows, w["verdicts"])]
    fig = go.Figure(go.Bar(x=xs, y=order, orientation="h", marker=dict(color=colors), hovertext=hover,
                           hoverinfo="text", text=[f"{x:+.2f}" for x in xs], textposition="outside",
                           textfont=dict(size=11), cliponaxis=False, showlegend=False))
    # one legend entry per verdict that occurs, in the verdict language of the tables
    seen = []
    for r, v in zip(rows, w["verdicts"]):
        if r["verdict"] not in seen:
            seen.append(r["verdict"])
            fig.add_trace(go.Bar(x=[None], y=[order[0]] if order else [None], orientation="h", name=v,
                                 marker=dict(color=VERDICT_COLORS.get(r["verdict"], "#a6a6a6")), showlegend=True))
    # no y title: the category labels are function names, and the title fell on them in the PDF's rendering
    lay = layout(chart.options, lang, w["x_title"], "")
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    # room on both sides for the labels outside the bars (on the left they fell on the function names)
    lo, hi = min([0.0, *xs]), max([0.0, *xs])
    pad = 0.16 * (hi - lo or 1.0)
    lay["xaxis"] = dict(lay["xaxis"], zeroline=True, zerolinecolor="#7f7f7f",
                        range=[lo - pad if lo < 0 else lo, hi + pad if hi > 0 else hi], autorange=False)
    room_for_categories(lay, order)  # (its +44 px for a title is slack for the Japanese font's wider letters)
    # the x title is centred on the plot: a right margin keeps its end on the figure (the PDF cut it)
    lay["margin"] = dict(lay["margin"], r=max(lay["margin"].get("r", 24), 110))
    lay.setdefault("height", max(320, 26 * len(order) + 160))
    # overlay: the legend's empty traces must not take a slot each beside the bars (grouped, they thinned every
    # bar to a quarter of its row and its label to an unreadable size)
    fig.update_layout(**lay, bargap=0.3, barmode="overlay")
    return compact(fig)
