"""line and bar charts (docs/spec.md): one trace per series. Data and words: analysis/figures.py.

Ticks: a numeric x (client counts) gets its ticks exactly at the measured values; when those would collide
on a linear axis (1, 2, 4 … 32: "1 2" read as "12") the axis is categorical, evenly spaced in the
measured order. Hover: the series, then "axis name: value" for both axes, the value as the table prints
it (its digits and number format), then the runs' range and their number for aggregated points."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import base_layout, color, compact, crowded, draw_open, draws, hover, tick_labels


@draws("line", "bar")
def line_chart(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    numeric = d["numeric_x"]
    categorical = numeric and not opts.get("x_log") and crowded(d["x_ticks"] or [])
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        xs = tr["x"] if numeric else w["x"][i]
        if categorical:
            xs = [str(x) for x in xs]
        err = None
        if d.get("spread"):  # error bars from the runs' min to max (points of one run have none)
            err = dict(type="data", symmetric=False, thickness=1.2, width=4,
                       array=[None if hi is None else hi - y for y, hi in zip(tr["y"], tr["hi"])],
                       arrayminus=[None if lo is None else y - lo for y, lo in zip(tr["y"], tr["lo"])])
        name = w["names"][i]
        # y as the table prints it (customdata); older computed data without it: plotly's own number
        y_shown = "%{customdata}" if tr.get("y_text") else "%{y}"
        tmpl = hover(name, [(w["x_title"], "%{x}"), (w["y_title"], y_shown)], point_note=True)
        common = dict(x=xs, y=tr["y"], name=name, hovertext=w["hover"][i], customdata=tr.get("y_text"),
                      hovertemplate=tmpl, error_y=err, meta={"n": tr["n"]} if tr.get("n") else None)
        if d["bar"]:
            fig.add_trace(go.Bar(marker=dict(color=color(i)), **common))
        else:
            fig.add_trace(go.Scatter(mode="lines+markers", line=dict(color=color(i)), marker=dict(color=color(i)),
                                     **common))
        draw_open(fig.data[-1], tr.get("transcribed"), color(i))
    fig.update_layout(**base_layout(opts, w["x_title"], w["y_title"]))
    if w.get("series_title"):  # the legend names the factor its entries are values of (バージョン: 9.6, 10)
        fig.update_layout(legend_title_text=w["series_title"])
    if d["bar"]:
        fig.update_layout(barmode="group")
    if categorical:
        order = [str(x) for x in d["x_ticks"]]
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)
    elif not numeric:  # labels (versions 9.5, 9.6, 10; configurations): a category axis in the computed order,
        # never a number scale (plotly would read "9.5" and "10" as numbers and leave empty slots between)
        order = w.get("x_order") or [x for labels in w["x"] for x in labels]
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(dict.fromkeys(order)))
    else:  # a tick at each measured value; on a log axis close ones leave their label out
        fig.update_xaxes(tickmode="array", tickvals=d["x_ticks"],
                         ticktext=tick_labels(d["x_ticks"], log=bool(opts.get("x_log"))))
    return compact(fig)
