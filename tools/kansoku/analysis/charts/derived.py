"""Chart kinds over aggregated conditions (docs/charts.md): values normalised to a baseline condition
(``ratio``), two metrics on one chart with a left and a right axis (``two_metrics``), shares stacked per
condition (``stacked_shares``) and measured points beside a theoretical line (``theory``).

Every kind aggregates each metric over the runs of a condition as the line and bar charts do
(``analysis.tables.aggregate``: the figure's ``aggregate``, its ``where``, and per metric an optional
``where`` of its own, ``options.metric_where``: a metric transcribed from another table). The x axis is
the factor ``x`` in the report's order, as labels (a version is a label, never a number). The drawing is in
``render/charts/derived.py``.
"""

from __future__ import annotations

from typing import Any

from kansoku import words
from kansoku.analysis.charts import _select as c
from kansoku.analysis.tables import (
    Group,
    aggregate,
    factor_name,
    factor_sort_key,
    factor_value_label,
    format_value,
    metric_label,
)
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store


def _title(item: Item, key: str, lang: str, default: str) -> str:
    t = item.options.get(key)
    if isinstance(t, dict):
        return t.get(lang) or t.get("en") or t.get("ja") or default
    return t or default


def _text(item: Item, v: Any, key: str) -> dict[str, str] | None:
    """A bilingual option text ({ ja, en } or one string for both)."""
    if v is None:
        return None
    if isinstance(v, str):
        return {lang: v for lang in LANGS}
    if isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) and set(v) <= set(LANGS):
        return {lang: v.get(lang) or v.get("en") or v.get("ja") or "" for lang in LANGS}
    raise item.error(f"option {key} must be a text (a string or {{ ja = ..., en = ... }}), got {v!r}")


def _metric_where(item: Item, metric: str) -> dict[str, Any] | None:
    mw = item.options.get("metric_where")
    if mw is None:
        return None
    if not isinstance(mw, dict) or not all(isinstance(v, dict) for v in mw.values()):
        raise item.error("option metric_where must map a metric to its own where "
                         "(e.g. { tps = { published_table = \"fy2013-t4.5\" } }), "
                         f"got {mw!r}")
    unknown = set(mw) - set(item.metrics)
    if unknown:
        raise item.error(f"option metric_where names metric(s) {sorted(unknown)} the figure does not draw "
                         f"(metrics: {item.metrics})")
    return mw.get(metric)


def groups_of(store: Store, report: Report, item: Item, metric: str, series: str | None = None
              ) -> dict[tuple[str, ...], Group]:
    """The aggregate of ``metric`` per x value (and series value): {(x,) or (x, s): Group}."""
    if not item.x:
        raise item.error(f"chart {item.chart!r} needs x = \"<factor>\"")
    by = [item.x] + ([series] if series else [])
    gs = aggregate(store, item, metric, by, where=_metric_where(item, metric))
    if not gs:
        raise item.error(f"no runs match: metric {metric!r}, where {_metric_where(item, metric) or item.where}")
    return {g.keys: g for g in gs if g.value is not None}


def ordered(report: Report, factor: str, values) -> list[str]:
    return sorted(set(values), key=factor_sort_key(report, factor))


def _hover_runs(lang: str, g: Group) -> str:
    vals = list(g.run_values.values())
    s = (words.t(lang, "cell_spread", f"{min(vals):g}–{max(vals):g}", n=g.n) if len(vals) >= 2
         else words.t(lang, "chart_hover_runs", g.n))
    return s + (words.t(lang, "hover_transcribed") if g.transcribed else "")


def _x_words(report: Report, item: Item, xs: list[str], lang: str) -> dict[str, Any]:
    return {"x_labels": [factor_value_label(report, item.x, x, lang) for x in xs],
            "x_title": _title(item, "x_title", lang, factor_name(report, item.x, lang))}


def _runs(groups) -> list[str]:
    return sorted({r for g in groups for r in g.run_ids})


def _runs_of_kind(store: Store, item: Item) -> list[str]:
    out: set[str] = set()
    for metric in item.metrics:
        series = item.series if (item.chart != "ratio" or len(item.metrics) == 1) else None
        try:
            gs = groups_of(store, None, item, metric, series)  # type: ignore[arg-type]
        except Exception:
            continue
        out |= {r for g in gs.values() for r in g.run_ids}
    return sorted(out)


# -- ratio -------------------------------------------------------------------------------------

RATIO_OPTIONS = {"baseline", "style", "metric_where", "digits", "values"}


@c.kind("ratio", runs=_runs_of_kind)
def ratio_chart(store: Store, report: Report, item: Item) -> ChartData:
    """Each value divided by the value of a baseline condition (the same series, or the same x), the
    baseline drawn at 1. Several metrics: one trace per metric (each divided by its own baseline)."""
    c.check_options(item, RATIO_OPTIONS)
    base = item.options.get("baseline")
    if not isinstance(base, dict) or set(base) != {"factor", "value"}:
        raise item.error("option baseline = { factor = \"<x or series factor>\", value = \"<its value>\" } "
                         f"is required, got {base!r}")
    bf, bv = base["factor"], str(base["value"])
    if bf not in (item.x, item.series):
        raise item.error(f"option baseline.factor must be the figure's x ({item.x!r}) or series ({item.series!r}) "
                         f"factor, got {bf!r}")
    style = c.opt_choice(item, "style", "bar", ("bar", "line"))
    digits = c.opt_int(item, "digits", 2, low=0)
    by_metric = len(item.metrics) > 1
    if by_metric and item.series:
        raise item.error("chart 'ratio' draws either several metrics or one metric with a series, not both")
    traces = []
    w: dict[str, dict[str, Any]] = {lang: {"names": [], "hover": []} for lang in LANGS}
    xs_all: list[str] = []
    for metric in item.metrics:
        gs = groups_of(store, report, item, metric, None if by_metric else item.series)
        xs_all += [k[0] for k in gs]
        series_vals = ordered(report, item.series, [k[1] for k in gs]) if item.series else [None]
        for sv in series_vals:
            key = (lambda x: (x, sv)) if item.series else (lambda x: (x,))
            xs = ordered(report, item.x, [k[0] for k in gs if (k[1] == sv if item.series else True)])
            tr: dict[str, Any] = {"x": [], "y": [], "value": [], "base": [], "value_text": [], "base_text": []}
            hovers: dict[str, list[str]] = {lang: [] for lang in LANGS}
            for x in xs:
                g = gs[key(x)]
                if bf == item.x:
                    b = gs.get(key(bv))
                else:
                    b = gs.get((x, bv))
                if b is None:
                    raise item.error(f"option baseline: no value of {metric!r} for {bf} = {bv!r}"
                                     + (f" ({item.x} = {x!r})" if bf != item.x else ""))
                if not b.value:
                    raise item.error(f"option baseline: the baseline value of {metric!r} is 0 (no ratio)")
                tr["x"].append(x)
                tr["y"].append(g.value / b.value)
                tr["value"].append(g.value)
                tr["base"].append(b.value)
                tr["value_text"].append(format_value(report, item, g, metric))
                tr["base_text"].append(format_value(report, item, b, metric))
                for lang in LANGS:
                    hovers[lang].append(_hover_runs(lang, g))
            traces.append(tr)
            for lang in LANGS:
                w[lang]["names"].append(metric_label(metric, lang, report=report) if by_metric
                                        else factor_value_label(report, item.series, sv, lang) if item.series
                                        else metric_label(metric, lang, report=report))
                w[lang]["hover"].append(hovers[lang])
    xs = ordered(report, item.x, xs_all)
    for lang in LANGS:
        w[lang].update(_x_words(report, item, xs, lang))
        for tr in traces:
            w[lang].setdefault("trace_x", []).append([factor_value_label(report, item.x, x, lang) for x in tr["x"]])
        base_label = factor_value_label(report, bf, bv, lang)
        what = metric_label(item.metrics[0], lang, report=report) if not by_metric else ""
        w[lang]["baseline"] = words.t(lang, "chart_ratio_baseline", base_label)
        w[lang]["y_title"] = _title(item, "y_title", lang, words.t(lang, "chart_ratio_axis", base_label, what=what).strip())
        w[lang]["ratio_name"] = words.t(lang, "chart_ratio_hover")
        w[lang]["value_name"] = words.t(lang, "chart_ratio_value")
        w[lang]["base_name"] = base_label
    return c.chart(item, {"style": style, "digits": digits, "traces": traces,
                          "values": bool(item.options.get("values", True))}, w)



# -- two metrics, two axes ---------------------------------------------------------------------

TWO_OPTIONS = {"metric_where", "left", "right", "y2_title", "y2_log"}


@c.kind("two_metrics", runs=_runs_of_kind)
def two_metrics_chart(store: Store, report: Report, item: Item) -> ChartData:
    """The first metric on the left axis, the second on the right axis, over the same x (and series)."""
    c.check_options(item, TWO_OPTIONS)
    if len(item.metrics) != 2:
        raise item.error(f"chart 'two_metrics' needs metrics = [<left axis>, <right axis>], got {item.metrics}")
    left = c.opt_choice(item, "left", "bar", ("bar", "line"))
    right = c.opt_choice(item, "right", "line", ("bar", "line"))
    traces = []
    w: dict[str, dict[str, Any]] = {lang: {"names": [], "hover": [], "trace_x": []} for lang in LANGS}
    xs_all: list[str] = []
    for axis, metric in zip(("y", "y2"), item.metrics):
        gs = groups_of(store, report, item, metric, item.series)
        xs_all += [k[0] for k in gs]
        series_vals = ordered(report, item.series, [k[1] for k in gs]) if item.series else [None]
        for sv in series_vals:
            keys = [k for k in gs if (k[1] == sv if item.series else True)]
            xs = ordered(report, item.x, [k[0] for k in keys])
            gl = [gs[(x, sv) if item.series else (x,)] for x in xs]
            traces.append({"axis": axis, "style": left if axis == "y" else right, "x": xs,
                           "y": [g.value for g in gl], "y_text": [format_value(report, item, g, metric) for g in gl],
                           "transcribed": [g.transcribed for g in gl]})
            for lang in LANGS:
                name = metric_label(metric, lang, report=report)
                if item.series:
                    name = f"{name}: {factor_value_label(report, item.series, sv, lang)}"
                w[lang]["names"].append(name)
                w[lang]["hover"].append([_hover_runs(lang, g) for g in gl])
                w[lang]["trace_x"].append([factor_value_label(report, item.x, x, lang) for x in xs])
    xs = ordered(report, item.x, xs_all)
    for lang in LANGS:
        w[lang].update(_x_words(report, item, xs, lang))
        w[lang]["y_title"] = _title(item, "y_title", lang, metric_label(item.metrics[0], lang, report=report))
        w[lang]["y2_title"] = _title(item, "y2_title", lang, metric_label(item.metrics[1], lang, report=report))
    return c.chart(item, {"traces": traces}, w)


# -- stacked shares ----------------------------------------------------------------------------

STACK_OPTIONS = {"metric_where", "rest", "total", "digits"}


@c.kind("stacked_shares", runs=_runs_of_kind)
def stacked_shares_chart(store: Store, report: Report, item: Item) -> ChartData:
    """One stacked bar per x value: each metric a segment, bottom first (CPU usr, sys, iowait, soft per
    client count); with ``rest``, the remainder to ``total`` (100 %) as a last, grey segment."""
    c.check_options(item, STACK_OPTIONS)
    total = item.options.get("total", 100)
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        raise item.error(f"option total must be a number, got {total!r}")
    rest = _text(item, item.options.get("rest"), "rest")
    digits = c.opt_int(item, "digits", 1, low=0)
    per_metric = {m: groups_of(store, report, item, m) for m in item.metrics}
    xs = ordered(report, item.x, [k[0] for gs in per_metric.values() for k in gs])
    segs = []
    w: dict[str, dict[str, Any]] = {lang: {"names": [], "hover": []} for lang in LANGS}
    for m, gs in per_metric.items():
        segs.append({"y": [gs[(x,)].value if (x,) in gs else None for x in xs],
                     "y_text": [format_value(report, item, gs[(x,)], m) if (x,) in gs else None for x in xs],
                     "transcribed": [(x,) in gs and gs[(x,)].transcribed for x in xs]})
        for lang in LANGS:
            w[lang]["names"].append(metric_label(m, lang, report=report))
            w[lang]["hover"].append([_hover_runs(lang, gs[(x,)]) if (x,) in gs else "" for x in xs])
    if rest:
        sums = [sum(s["y"][i] or 0 for s in segs) for i in range(len(xs))]
        if any(v > total * 1.005 for v in sums):
            raise item.error(f"option rest: the shares add up to more than total = {total} ({max(sums):g})")
        segs.append({"y": [max(total - v, 0.0) for v in sums], "y_text": [f"{max(total - v, 0.0):.{digits}f}" for v in sums],
                     "rest": True})
        for lang in LANGS:
            w[lang]["names"].append(rest[lang])
            w[lang]["hover"].append([words.t(lang, "chart_shares_rest", f"{total:g}")] * len(xs))
    for lang in LANGS:
        w[lang].update(_x_words(report, item, xs, lang))
        w[lang]["y_title"] = _title(item, "y_title", lang, words.t(lang, "chart_shares_axis"))
    return c.chart(item, {"x": xs, "segments": segs, "total": total}, w)


# -- theory beside measured --------------------------------------------------------------------

THEORY_OPTIONS = {"metric_where", "theory", "x_max"}


@c.kind("theory", runs=_runs_of_kind)
def theory_chart(store: Store, report: Report, item: Item) -> ChartData:
    """Measured points (each metric, markers) beside a theoretical line y = x / divisor (or slope · x)
    over the numeric x from 0 to ``x_max`` (default: the largest measured x)."""
    c.check_options(item, THEORY_OPTIONS)
    th = item.options.get("theory")
    if not isinstance(th, dict) or not ({"divisor", "slope"} & set(th)) or not set(th) <= {"divisor", "slope", "label"}:
        raise item.error("option theory = { divisor = <number> (y = x / divisor) or slope = <number>, "
                         f"label = {{ ja, en }} }} is required, got {th!r}")
    k = th.get("slope")
    if k is None:
        d = th["divisor"]
        if isinstance(d, bool) or not isinstance(d, (int, float)) or d == 0:
            raise item.error(f"option theory.divisor must be a non-zero number, got {d!r}")
        k = 1.0 / d
    label = _text(item, th.get("label"), "theory.label") or {lang: words.t(lang, "chart_theory") for lang in LANGS}
    points = []
    w: dict[str, dict[str, Any]] = {lang: {"names": [], "hover": []} for lang in LANGS}
    xmax = 0.0
    for m in item.metrics:
        gs = groups_of(store, report, item, m)
        xs = ordered(report, item.x, [k_[0] for k_ in gs])
        try:
            xv = [float(x) for x in xs]
        except ValueError:
            raise item.error(f"chart 'theory' needs a numeric x factor; {item.x!r} has {xs}") from None
        xmax = max([xmax] + xv)
        points.append({"x": xv, "y": [gs[(x,)].value for x in xs],
                       "y_text": [format_value(report, item, gs[(x,)], m) for x in xs],
                       "transcribed": [gs[(x,)].transcribed for x in xs]})
        for lang in LANGS:
            w[lang]["names"].append(metric_label(m, lang, report=report))
            w[lang]["hover"].append([_hover_runs(lang, gs[(x,)]) for x in xs])
    x_max = item.options.get("x_max", xmax)
    if isinstance(x_max, bool) or not isinstance(x_max, (int, float)) or x_max <= 0:
        raise item.error(f"option x_max must be a positive number, got {x_max!r}")
    n = 50
    line_x = [x_max * i / n for i in range(n + 1)]
    for lang in LANGS:
        w[lang]["theory"] = label[lang]
        w[lang]["x_title"] = _title(item, "x_title", lang, factor_name(report, item.x, lang))
        w[lang]["y_title"] = _title(item, "y_title", lang, metric_label(item.metrics[0], lang, report=report))
    return c.chart(item, {"points": points, "line": {"x": line_x, "y": [k * x for x in line_x]}}, w)
