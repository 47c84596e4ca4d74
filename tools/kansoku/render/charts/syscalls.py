"""strace -c charts: top-N system calls by share of time, calls vs errors (docs/charts.md).
Data and words: analysis/charts/syscalls.py."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import color, compact, draws, esc, layout, room_for_categories, room_for_labels


@draws("syscalls_top")
def syscalls_top(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    order = d["order"]
    fig = go.Figure()
    for i, xs in enumerate(d["bars"]):
        fig.add_trace(go.Bar(
            x=xs, y=order, name=w["names"][i], orientation="h", marker=dict(color=color(i)), hovertext=w["hover"][i],
            hoverinfo="text+name", text=[f"{x:.2f}" if x is not None else "" for x in xs],
            textposition="outside", cliponaxis=False))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    lay["xaxis"] = dict(lay["xaxis"], rangemode="tozero")
    room_for_categories(lay, order)
    lay.setdefault("height", max(320, 26 * len(order) * max(1, len(d["bars"])) // 2 + 140))
    fig.update_layout(**lay, barmode="group", bargap=0.25)
    room_for_labels(fig, "xaxis", [x for xs in d["bars"] for x in xs])
    return compact(fig)


@draws("syscalls_calls_errors")
def syscalls_calls_errors(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    order = d["order"]
    fig = go.Figure()
    for i, counts in enumerate(d["counts"]):
        col = color(i)
        name = w["names"][i]
        for what in ("calls", "errors"):
            xs = counts[what]
            label = w[what]
            marker = dict(color=col) if what == "calls" else dict(
                color="rgba(255,255,255,0)", line=dict(color=col, width=1.5),
                pattern=dict(shape="/", fgcolor=col, solidity=0.45))
            fig.add_trace(go.Bar(
                x=xs, y=order, name=f"{name}: {label}", orientation="h", marker=marker, legendgroup=f"c{i}",
                text=[f"{x:,}" if x is not None else "" for x in xs], textposition="outside", cliponaxis=False,
                hovertemplate=f"{esc(name)}<br>%{{y}}: %{{x:,}} {esc(label)}<extra></extra>"))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    lay.setdefault("height", max(320, 14 * len(order) * 2 * max(1, len(d["counts"])) + 150))
    room_for_categories(lay, order)
    fig.update_layout(**lay, barmode="group", bargap=0.2)
    room_for_labels(fig, "xaxis", [x for c in d["counts"] for what in ("calls", "errors") for x in c[what]],
                    share=0.22)  # "12,345,678" is a long label
    return compact(fig)
