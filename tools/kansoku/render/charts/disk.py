"""Disk baseline charts: fio bandwidth per pattern and device, pg_test_fsync ops/sec per method
(docs/charts.md). Data and words: analysis/charts/disk.py."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import (
    LABEL_META,
    color,
    compact,
    draws,
    esc,
    layout,
    room_for_categories,
    room_for_labels,
)


@draws("fio_bandwidth")
def fio_bandwidth(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, b in enumerate(d["bars"]):
        err = None
        if b.get("lo") and any(n > 1 for n in b.get("n", [])):  # the runs' min to max (a bar of one run: none)
            err = dict(type="data", symmetric=False, thickness=1.2, width=4,
                       array=[hi - y if n > 1 else None for y, hi, n in zip(b["y"], b["hi"], b["n"])],
                       arrayminus=[y - lo if n > 1 else None for y, lo, n in zip(b["y"], b["lo"], b["n"])])
        group = dict(offsetgroup=str(i), legendgroup=str(i))
        fig.add_trace(go.Bar(x=w["x"][i], y=b["y"], name=w["names"][i], marker=dict(color=color(i)), **group,
                             text=None if err else b["text"], textposition="outside", cliponaxis=False,
                             hovertext=w["hover"][i], hoverinfo="text+name", error_y=err,
                             meta={"n": b["n"]} if b.get("n") else None))
        if err:
            # the value above its whisker: a whisker runs from the runs' min to their max, through a label inside
            # the bar's top or above it; a clear bar in the same place (offsetgroup) reaching the whisker's top
            # carries it, hidden from the hover and the legend
            tops = [hi if n > 1 and hi is not None else y for y, hi, n in zip(b["y"], b["hi"], b["n"])]
            fig.add_trace(go.Bar(x=w["x"][i], y=tops, name=w["names"][i], **group, showlegend=False,
                                 marker=dict(color="rgba(0,0,0,0)"), text=b["text"], textposition="outside",
                                 cliponaxis=False, hoverinfo="skip", meta=LABEL_META))
    lay = layout(chart.options, lang, w["x_title"], w["y_title"])
    lay["xaxis"] = dict(lay["xaxis"], type="category", showgrid=False)
    fig.update_layout(**lay, barmode="group", bargap=0.3, showlegend=True)  # name the device even if alone
    room_for_labels(fig, "yaxis", [y for b in d["bars"] for y in (b.get("hi") or b["y"])])
    return compact(fig)


@draws("fsync_methods")
def fsync_methods(chart: ChartData, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    fig = go.Figure()
    for i, b in enumerate(d["bars"]):
        name = w["names"][i]
        fig.add_trace(go.Bar(x=b["x"], y=b["y"], name=name, orientation="h", marker=dict(color=color(i)),
                             text=b["text"], textposition="outside", cliponaxis=False,
                             hovertemplate=f"{esc(name)}<br>%{{y}}: %{{text}} ops/s<extra></extra>"))
    if w.get("unusable"):  # named in the legend, drawing nothing
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=dict(opacity=0), name=w["unusable"],
                                 hoverinfo="skip"))
    # no axis title beside the method names (they say what they are): a phone keeps its plot area
    lay = layout(chart.options, lang, w["x_title"], "")
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    lay.setdefault("height", max(320, 22 * len(d["labels"]) * max(1, len(d["bars"])) + 140))
    room_for_categories(lay, [str(x) for x in d["labels"]], title=False)
    fig.update_layout(**lay, barmode="group", bargap=0.25)
    room_for_labels(fig, "xaxis", [x for b in d["bars"] for x in b["x"]], share=0.22)
    return compact(fig)
