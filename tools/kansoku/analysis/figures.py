"""Figures: plotly figure JSON (one per language) from analysis results.

Chart kinds are registered in ``KINDS``: a function (store, report, item, lang)
-> plotly figure dict. Figures are built with plotly.graph_objects (validated)
and stripped to compact JSON; plotly.js draws them on the site and kaleido
exports them to SVG for the PDF.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import plotly.graph_objects as go

from kansoku import words
from kansoku.analysis import tables as analysis
from kansoku.analysis.tables import aggregate, factor_name, factor_sort_key, factor_value_label, metric_label
from kansoku.report.model import Figure
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

FONT_FAMILY = "IPAexGothic, 'Noto Sans CJK JP', 'Hiragino Sans', 'Yu Gothic', Meiryo, sans-serif"
COLORS = ["#1f4e79", "#c55a11", "#548235", "#7030a0", "#bf9000", "#2e75b6", "#c00000", "#7f7f7f"]

FigureBuilder = Callable[[Store, Report, Item, str], dict]
KINDS: dict[str, FigureBuilder] = {}


def kind(name: str):
    def deco(f: FigureBuilder) -> FigureBuilder:
        KINDS[name] = f
        return f
    return deco


def base_layout(item: Item, lang: str, x_title: str, y_title: str) -> dict:
    opts = item.options
    return dict(
        template="none",
        font=dict(family=FONT_FAMILY, size=13),
        margin=dict(l=64, r=16, t=16, b=56),
        colorway=COLORS,
        hovermode="closest",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
        xaxis=dict(title=dict(text=x_title), type="log" if opts.get("x_log") else "-",
                   showgrid=True, gridcolor="#e5e5e5", zeroline=False, automargin=True),
        yaxis=dict(title=dict(text=y_title), type="log" if opts.get("y_log") else "-",
                   showgrid=True, gridcolor="#e5e5e5", rangemode="tozero" if not opts.get("y_log") else "normal",
                   automargin=True),
    )


def _axis_title(item: Item, key: str, lang: str, default: str) -> str:
    t = item.options.get(key)
    if isinstance(t, dict):
        return t.get(lang) or t.get("en") or t.get("ja") or default
    return t or default


def _num(v: str) -> Any:
    try:
        f = float(v)
        return int(f) if f.is_integer() else f
    except ValueError:
        return v


def _series_groups(store: Store, report: Report, item: Item):
    if not item.x:
        raise item.error("a line or bar chart needs x = \"<factor>\"")
    group_by = [item.x] + ([item.series] if item.series else [])
    groups = aggregate(store, item, item.metrics[0], group_by)
    if not groups:
        raise item.error(f"no runs match: metric {item.metrics[0]!r}, where {item.where}")
    series_vals = sorted({g.keys[1] for g in groups}, key=factor_sort_key(report, item.series)) if item.series else [None]
    x_vals = sorted({g.keys[0] for g in groups}, key=factor_sort_key(report, item.x))
    by = {g.keys: g for g in groups}
    return series_vals, x_vals, by


@kind("line")
def line_chart(store: Store, report: Report, item: Item, lang: str, bar: bool = False) -> dict:
    series_vals, x_vals, by = _series_groups(store, report, item)
    fig = go.Figure()
    # A factor whose values the spec orders explicitly (versions: 9.5, 9.6, 10) is categorical, not a scale.
    numeric_x = (all(isinstance(_num(x), (int, float)) for x in x_vals) and not bar
                 and item.x not in report.factor_order)
    for sv in series_vals:
        xs, ys, texts = [], [], []
        for xv in x_vals:
            g = by.get((xv, sv) if item.series else (xv,))
            if g is None:
                continue
            xs.append(_num(xv) if numeric_x else factor_value_label(report, item.x, xv, lang))
            ys.append(g.value)
            texts.append(f"n={g.n}" + (words.t(lang, "hover_transcribed") if g.transcribed else ""))
        name = factor_value_label(report, item.series, sv, lang) if item.series else metric_label(item.metrics[0], lang, report=report)
        if bar:
            fig.add_trace(go.Bar(x=xs, y=ys, name=name, hovertext=texts))
        else:
            fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines+markers", hovertext=texts))
    x_title = _axis_title(item, "x_title", lang, factor_name(report, item.x, lang))
    y_title = _axis_title(item, "y_title", lang, metric_label(item.metrics[0], lang, report=report))
    fig.update_layout(**base_layout(item, lang, x_title, y_title))
    if bar:
        fig.update_layout(barmode="group")
    if numeric_x and not item.options.get("x_log"):
        fig.update_xaxes(tickmode="array", tickvals=[_num(x) for x in x_vals])
    if numeric_x and item.options.get("x_log"):
        fig.update_xaxes(tickvals=[_num(x) for x in x_vals])
    return compact(fig)


@kind("bar")
def bar_chart(store: Store, report: Report, item: Item, lang: str) -> dict:
    return line_chart(store, report, item, lang, bar=True)


def compact(fig: go.Figure) -> dict:
    d = fig.to_plotly_json()
    layout = d.get("layout", {})
    layout.pop("template", None)
    return {"data": d.get("data", []), "layout": layout}


def build_figure(store: Store, report: Report, item: Item) -> Figure:
    builder = KINDS.get(item.chart)
    if builder is None:
        raise item.error(f"unknown chart kind {item.chart!r}; known: {sorted(KINDS)}")
    figs = {lang: builder(store, report, item, lang) for lang in LANGS}
    runs = figure_runs(store, item)
    transcribed = bool(runs) and bool(store.query(
        "SELECT bool_or(origin = 'transcribed') FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
        [runs])[0][0])
    return Figure(
        id=item.id, number=item.number, chart=item.chart, label={lang: item.prefix(lang) for lang in LANGS},
        caption=item.caption.as_dict(), footnote=item.footnote.as_dict() if item.footnote else None,
        figure=figs, runs=runs, transcribed=transcribed, citations=analysis.citations(store, runs),
    )


def figure_runs(store: Store, item: Item) -> list[str]:
    from kansoku.render.charts import RUNS_OF  # chart kinds with their own run selection (charts/)

    if item.chart in RUNS_OF:
        return RUNS_OF[item.chart](store, item)
    if item.x is None:
        return []
    try:
        groups = aggregate(store, item, item.metrics[0], [item.x] + ([item.series] if item.series else []))
    except Exception:
        return []
    return sorted({r for g in groups for r in g.run_ids})


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=_default)


def _default(o: Any):
    import numpy as np  # plotly may hand numpy arrays back

    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o).__name__)


from kansoku.render import charts  # noqa: E402,F401  registers the chart kinds
