"""Query-study charts: elapsed time (or speed-up) per query per condition (docs/charts.md).
Data and words: analysis/charts/queries.py."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.render.charts._draw import color, compact, draws, esc, layout, room_for_labels


@draws("query_times")
def query_times(chart, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, ys in enumerate(d["bars"]):
        lo, hi = d["low"][i], d["high"][i]
        fmt = "×{:.2f}" if d["speedup"] else "{:.1f}"
        fig.add_trace(go.Bar(
            x=d["order"], y=ys, name=w["names"][i], marker=dict(color=color(i)),
            error_y=dict(type="data", symmetric=False, array=[(h - y) if y is not None and h is not None else 0
                                                              for y, h in zip(ys, hi)],
                         arrayminus=[(y - l) if y is not None and l is not None else 0 for y, l in zip(ys, lo)],
                         thickness=1, width=3, color="#404040"),
            text=[fmt.format(y) if y is not None else "" for y in ys], textposition="outside", cliponaxis=False,
            hovertext=[f"{esc(w['names'][i])}<br>{esc(q)}: {fmt.format(y) if y is not None else '—'}"
                       + (f"<br>{esc(w['node'])}: {esc(n)}" if n else "") for q, y, n in zip(d["order"], ys, d["nodes"][i])],
            hoverinfo="text"))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    lay["xaxis"] = dict(lay["xaxis"], type="category", showgrid=False)
    fig.update_layout(**lay, barmode="group", bargap=0.25)
    if d["speedup"]:
        fig.add_hline(y=1, line=dict(color="#7f7f7f", width=1, dash="dot"))
    room_for_labels(fig, "yaxis", [y for ys in d["bars"] for y in ys if y is not None])
    return compact(fig)
