"""Figures' data: what each chart kind draws, computed from the store (``kansoku.model.ChartData``).

Chart kinds are registered in ``KINDS``: a function (store, report, item) -> ChartData holding the
numbers and, per language, every label. ``render.charts`` draws the plotly figure of each language from
it (plotly.js draws them on the site, kaleido exports them to SVG for the PDF). line and bar are here;
the other kinds are in ``analysis/charts/`` (importing it registers them in the same ``KINDS``).
"""

from __future__ import annotations

from typing import Any

from kansoku import words
from kansoku.analysis.charts import KINDS, RUNS_OF, kind
from kansoku.analysis.tables import (
    aggregate,
    factor_name,
    factor_sort_key,
    factor_value_label,
    format_value,
    item_digits,
    metric_label,
    run_rows,
)
from kansoku.analysis.tables import citations as table_citations
from kansoku.model import ChartData, Figure
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store


def _num(v: str) -> Any:
    try:
        f = float(v)
        return int(f) if f.is_integer() else f
    except ValueError:
        return v


def _axis_title(item: Item, key: str, lang: str, default: str) -> str:
    t = item.options.get(key)
    if isinstance(t, dict):
        return words.pick(t, lang, default)
    return t or default


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
def line_chart(store: Store, report: Report, item: Item, bar: bool = False) -> ChartData:
    """One trace per value of ``series`` (or one), the aggregate of the first metric per value of ``x``."""
    series_vals, x_vals, by = _series_groups(store, report, item)
    # A factor whose values the spec orders explicitly (versions: 9.5, 9.6, 10) is categorical, not a scale.
    numeric_x = (all(isinstance(_num(x), (int, float)) for x in x_vals) and not bar
                 and item.x not in report.factor_order)
    spread = item.options.get("spread", "range")
    if spread not in ("range", "none"):
        raise item.error(f"options.spread: expected \"range\" (error bars from the runs' min to max, the default) "
                         f"or \"none\", found {spread!r}")
    digits = item_digits(report, item, item.metrics[0])
    digits = digits if isinstance(digits, int) else 2
    traces = []
    w: dict[str, dict] = {lang: {"names": [], "x": [], "hover": []} for lang in LANGS}
    for sv in series_vals:
        xvs, ys, ns, runs, trans, los, his, texts = [], [], [], [], [], [], [], []
        for xv in x_vals:
            g = by.get((xv, sv) if item.series else (xv,))
            if g is None:
                continue
            xvs.append(xv)
            ys.append(g.value)
            texts.append(format_value(report, item, g, item.metrics[0]))  # the hover prints the table's digits
            ns.append(g.n)
            runs.append(g.run_ids)
            trans.append(g.transcribed)
            vals = list(g.run_values.values())
            los.append(min(vals) if len(vals) >= 2 else None)  # the runs' range behind the aggregate
            his.append(max(vals) if len(vals) >= 2 else None)
        traces.append({"x": [_num(x) for x in xvs] if numeric_x else None, "y": ys, "n": ns, "runs": runs,
                       "transcribed": trans, "lo": los, "hi": his, "y_text": texts})
        for lang in LANGS:
            w[lang]["x"].append(None if numeric_x else [factor_value_label(report, item.x, x, lang) for x in xvs])
            w[lang]["hover"].append([(words.t(lang, "cell_spread", f"{lo:.{digits}f}–{hi:.{digits}f}", n=n) if lo is not None
                                      else words.t(lang, "chart_hover_runs", n))
                                     + (words.t(lang, "hover_transcribed") if t else "")
                                     for n, t, lo, hi in zip(ns, trans, los, his)])
            w[lang]["names"].append(factor_value_label(report, item.series, sv, lang) if item.series
                                    else metric_label(item.metrics[0], lang, report=report))
    for lang in LANGS:
        w[lang]["x_title"] = _axis_title(item, "x_title", lang, factor_name(report, item.x, lang))
        w[lang]["x_order"] = [factor_value_label(report, item.x, x, lang) for x in x_vals]  # category order
        w[lang]["series_title"] = factor_name(report, item.series, lang) if item.series else None
        w[lang]["y_title"] = _axis_title(item, "y_title", lang, metric_label(item.metrics[0], lang, report=report))
    return ChartData(item.chart, dict(item.options), {
        "bar": bar, "numeric_x": numeric_x, "x_ticks": [_num(x) for x in x_vals] if numeric_x else None,
        "traces": traces, "spread": spread == "range" and any(lo is not None for t in traces for lo in t["lo"])}, w)


@kind("bar")
def bar_chart(store: Store, report: Report, item: Item) -> ChartData:
    return line_chart(store, report, item, bar=True)


def chart_data(store: Store, report: Report, item: Item) -> ChartData:
    builder = KINDS.get(item.chart)
    if builder is None:
        raise item.error(f"unknown chart kind {item.chart!r}; known: {sorted(KINDS)}")
    return builder(store, report, item)


def figure_data(store: Store, report: Report, item: Item) -> Figure:
    """A figure computed: its ``chart_data`` (drawn by each renderer), runs and citations."""
    data = chart_data(store, report, item)
    runs = figure_runs(store, item)
    rows = run_rows(store)
    transcribed = any(rows[r][0] == "transcribed" for r in runs if r in rows)
    return Figure(
        id=item.id, number=item.number, chart=item.chart, label={lang: item.prefix(lang) for lang in LANGS},
        caption=item.caption.as_dict(), footnote=item.footnote.as_dict() if item.footnote else None,
        runs=runs, transcribed=transcribed, citations=citations(store, runs), chart_data=data,
    )


def figure_runs(store: Store, item: Item) -> list[str]:
    if item.chart in RUNS_OF:
        return RUNS_OF[item.chart](store, item)
    if item.x is None:
        return []
    try:
        groups = aggregate(store, item, item.metrics[0], [item.x] + ([item.series] if item.series else []))
    except Exception:
        return []
    return sorted({r for g in groups for r in g.run_ids})


def citations(store: Store, run_ids: list[str]) -> list[str]:
    return table_citations(store, run_ids)

