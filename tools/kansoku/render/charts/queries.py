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
        # the baseline's bars are ×1.00 by definition: no label (the dotted line at 1 says it)
        baseline = d["speedup"] and all(y is None or abs(y - 1) < 1e-9 for y in ys)
        fig.add_trace(go.Bar(
            x=d["order"], y=ys, name=w["names"][i], marker=dict(color=color(i)),
            error_y=dict(type="data", symmetric=False, array=[(h - y) if y is not None and h is not None else 0
                                                              for y, h in zip(ys, hi)],
                         arrayminus=[(y - l) if y is not None and l is not None else 0 for y, l in zip(ys, lo)],
                         thickness=1, width=3, color="#404040"),
            # labels inside the bars, at their base: on top they fell on the range bars and on each other
            text=[fmt.format(y) if y is not None and not baseline else "" for y in ys], textposition="inside",
            insidetextanchor="start", textangle=0, textfont=dict(size=11), cliponaxis=False,
            # the hover's lines are the template's own markup; the measured parts are customdata, which
            # escape_plotly escapes (as hovertext, its <br> was escaped too and printed as "<br>")
            customdata=[[fmt.format(y) if y is not None else "—", n or ""] for y, n in zip(ys, d["nodes"][i])],
            hovertemplate=[f"{esc(w['names'][i])}<br>%{{x}}: %{{customdata[0]}}"
                           + (f"<br>{esc(w['node'])}: %{{customdata[1]}}" if n else "") + "<extra></extra>"
                           for n in d["nodes"][i]]))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    lay["xaxis"] = dict(lay["xaxis"], type="category", showgrid=False)
    fig.update_layout(**lay, barmode="group", bargap=0.25, uniformtext=dict(minsize=8, mode="hide"))
    if d["speedup"]:
        fig.add_hline(y=1, line=dict(color="#7f7f7f", width=1, dash="dot"))
    room_for_labels(fig, "yaxis", [h for hs in d["high"] for h in hs if h is not None]
                    or [y for ys in d["bars"] for y in ys if y is not None], share=0.05)
    return compact(fig)
