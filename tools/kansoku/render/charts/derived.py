"""Drawing of ratio, two_metrics, stacked_shares and theory charts (data: analysis/charts/derived.py).

The x axis of the first three is categorical, in the computed order (versions and configurations are
labels, never numbers); ``theory`` has a numeric x (the theoretical line is a function of it)."""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.model import ChartData
from kansoku.render.charts._draw import color, compact, draw_open, draws, hover, layout, right_axis


def _category_x(fig: go.Figure, order: list[str]) -> None:
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(dict.fromkeys(order)))


@draws("ratio")
def ratio_chart(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    dg = d["digits"]
    for i, tr in enumerate(d["traces"]):
        name = w["names"][i]
        text = [f"{y:.{dg}f}" for y in tr["y"]]
        custom = [[t, v, b, h] for t, v, b, h in zip(text, tr["value_text"], tr["base_text"], w["hover"][i])]
        tmpl = hover(name, [(w["x_title"], "%{x}"), (w["ratio_name"], "%{customdata[0]}"),
                            (w["value_name"], "%{customdata[1]}"), (w["base_name"], "%{customdata[2]}")]
                     ).replace("<extra></extra>", "<br>%{customdata[3]}<extra></extra>")
        common = dict(x=w["trace_x"][i], y=tr["y"], name=name, customdata=custom, hovertemplate=tmpl,
                      marker=dict(color=color(i)))
        if d["style"] == "bar":
            fig.add_trace(go.Bar(text=text if d.get("values", True) else None, textposition="outside",
                                 cliponaxis=False, **common))
        else:
            fig.add_trace(go.Scatter(mode="lines+markers+text" if d.get("values", True) else "lines+markers",
                                     text=text, textposition="top center", line=dict(color=color(i)), **common))
    fig.update_layout(**layout(opts, lang, w["x_title"], w["y_title"]))
    if d["style"] == "bar":
        fig.update_layout(barmode="group")
    # the baseline at 1: a dashed line across the plot, named in the legend
    fig.add_trace(go.Scatter(x=[w["x_labels"][0], w["x_labels"][-1]], y=[1, 1], mode="lines", name=w["baseline"],
                             line=dict(color="#7f7f7f", dash="dash", width=1.5), hoverinfo="skip"))
    _category_x(fig, w["x_labels"])
    return compact(fig)


@draws("two_metrics")
def two_metrics_chart(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    for i, tr in enumerate(d["traces"]):
        name = w["names"][i]
        tmpl = hover(name, [(w["x_title"], "%{x}"), (w["y_title"] if tr["axis"] == "y" else w["y2_title"],
                                                      "%{customdata}")], point_note=True)
        common = dict(x=w["trace_x"][i], y=tr["y"], name=name, customdata=tr["y_text"], hovertext=w["hover"][i],
                      hovertemplate=tmpl, yaxis=tr["axis"])
        if tr["style"] == "bar":
            fig.add_trace(go.Bar(marker=dict(color=color(i), opacity=0.85 if tr["axis"] == "y" else 0.5), **common))
        else:
            fig.add_trace(go.Scatter(mode="lines+markers", line=dict(color=color(i), dash="solid" if tr["axis"] == "y"
                                                                     else "dot"),
                                     marker=dict(symbol="circle" if tr["axis"] == "y" else "diamond", size=9), **common))
        draw_open(fig.data[-1], tr.get("transcribed"), color(i))
    lay = layout(opts, lang, w["x_title"], w["y_title"])
    lay["yaxis2"] = right_axis(w["y2_title"], type="log" if opts.get("y2_log") else "-",
                               rangemode="tozero" if not opts.get("y2_log") else "normal")
    lay["margin"] = dict(lay["margin"], r=64)
    fig.update_layout(**lay, barmode="group")
    _category_x(fig, w["x_labels"])
    return compact(fig)


@draws("stacked_shares")
def stacked_shares_chart(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    for i, seg in enumerate(d["segments"]):
        name = w["names"][i]
        tmpl = hover(name, [(w["x_title"], "%{x}"), (w["y_title"], "%{customdata}")], point_note=True)
        fig.add_trace(go.Bar(x=w["x_labels"], y=seg["y"], name=name, customdata=seg["y_text"],
                             hovertext=w["hover"][i], hovertemplate=tmpl,
                             marker=dict(color="#d9d9d9" if seg.get("rest") else color(i))))
        draw_open(fig.data[-1], seg.get("transcribed"), color(i))
    fig.update_layout(**layout(opts, lang, w["x_title"], w["y_title"]), barmode="stack")
    fig.update_yaxes(range=[0, d["total"] * 1.02])
    _category_x(fig, w["x_labels"])
    return compact(fig)


@draws("theory")
def theory_chart(chart: ChartData, lang: str) -> dict:
    d, w, opts = chart.data, chart.words[lang], chart.options
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=d["line"]["x"], y=d["line"]["y"], mode="lines", name=w["theory"],
                             line=dict(color="#7f7f7f", dash="dash", width=2),
                             hovertemplate=hover(w["theory"], [(w["x_title"], "%{x}"), (w["y_title"], "%{y:.1f}")])))
    for i, p in enumerate(d["points"]):
        name = w["names"][i]
        tmpl = hover(name, [(w["x_title"], "%{x}"), (w["y_title"], "%{customdata}")], point_note=True)
        fig.add_trace(go.Scatter(x=p["x"], y=p["y"], mode="markers", name=name, customdata=p["y_text"],
                                 hovertext=w["hover"][i], hovertemplate=tmpl,
                                 marker=dict(color=color(i), size=11, symbol="circle")))
        draw_open(fig.data[-1], p.get("transcribed"), color(i))
    fig.update_layout(**layout(opts, lang, w["x_title"], w["y_title"]))
    return compact(fig)
