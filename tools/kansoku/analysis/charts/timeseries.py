"""pgbench charts' data: per-second TPS over time, latency percentiles vs a factor (docs/charts.md).

Data: the ``pgbench_tps_per_second`` view (pgbench txlog parser), which takes each run's best
per-second source: the per-transaction log (-l, corrected for --sampling-rate), else the
aggregate log, else the -P progress lines; and the latency percentile metrics
(``latency_p50_ms`` ... from the per-transaction logs). Drawn by render/charts/timeseries.py.
"""

from __future__ import annotations

from kansoku import words
from kansoku.analysis import steady
from kansoku.analysis.charts import _select as c
from kansoku.analysis.tables import (
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

TPS_HAS_DATA = "SELECT DISTINCT run_id FROM pgbench_tps_per_second"
# the events drawn on a TPS-over-time chart (render/charts/events.py styles them)
EVENT_KINDS = ("checkpoint", "restartpoint", "checkpoint_stat", "stall", "steady_start", "steady_end", "run_end")


def _tps_picks(store: Store, report: Report | None, item: Item) -> list[c.Pick]:
    mode = c.opt_choice(item, "runs", "representative", ("representative", "all"))
    return c.picks(store, report, item, item.series, mode, has_data=TPS_HAS_DATA)


def tps_series_of(store: Store, run_ids: list[str], partial: bool = False) -> dict[str, list[tuple]]:
    """run -> (elapsed_s, tps, latency_avg_ms, series_source) of each run, in one query (the view computes its
    runs together). Unless ``partial``, intervals that reach outside the run's window (run.toml start/end) are
    left out: the per-transaction log is cut into wall-clock seconds, so its first and last seconds hold only
    part of a second of the run and would show as dips."""
    keep = "TRUE" if partial else (
        "(r.start_time IS NULL OR r.end_time IS NULL OR (s.elapsed_s - s.interval_s >= -0.001 "
        "AND s.elapsed_s <= epoch(r.end_time) - epoch(r.start_time) + 0.001))")
    out: dict[str, list[tuple]] = {}
    for run_id, *row in store.query(
            "SELECT s.run_id, s.elapsed_s, s.tps, s.latency_avg_ms, s.series_source FROM pgbench_tps_per_second s "
            f"LEFT JOIN runs r USING (run_id) WHERE s.run_id IN (SELECT unnest(?::VARCHAR[])) AND {keep} "
            "ORDER BY s.run_id, s.elapsed_s", [list(run_ids)]):
        out.setdefault(run_id, []).append(tuple(row))
    return out


@c.kind("tps_over_time", runs=lambda store, item: sorted(
    {r for p in _tps_picks(store, None, item) for r in p.run_ids}))
def tps_over_time(store: Store, report: Report, item: Item) -> ChartData:
    """Per-second TPS (and optionally mean latency on a second y axis) over seconds since the run's start."""
    c.check_options(item, {"runs", "run", "latency", "markers", "partial", "events"})
    latency = c.opt(item, "latency", False, bool, "true or false")
    show_events = c.opt(item, "events", None, bool, "true or false")
    partial = c.opt(item, "partial", False, bool, "true or false")
    markers = c.opt(item, "markers", True, bool, "true or false")
    picks = _tps_picks(store, report, item)
    all_runs = [r for p in picks for r in p.run_ids]
    labels = {lang: c.run_labels(store, report, all_runs, lang) for lang in LANGS}
    traces = []
    names: dict[str, list[str]] = {lang: [] for lang in LANGS}
    sources: dict[str, list[str]] = {lang: [] for lang in LANGS}
    series = tps_series_of(store, all_runs, partial)
    for p in picks:
        for run_id in p.run_ids:
            rows = series.get(run_id, [])
            traces.append({"run": run_id, "x": [round(r[0], 3) for r in rows], "tps": [r[1] for r in rows],
                           "latency": [r[2] for r in rows]})
            for lang in LANGS:
                names[lang].append(c.pick_name(report, item, item.series, p, run_id, lang, labels[lang]))
                src = rows[0][3] if rows else None
                key = f"chart_source_{src}"
                sources[lang].append((words.t(lang, key) if words.has(key, lang) else str(src)) if rows else "")
    # checkpoints, stalls, the steady window and the run's end (run_events); by default only for one run
    marks = []
    if show_events or (show_events is None and len(all_runs) == 1):
        marks = [e for evs in steady.events(store, all_runs).values() for e in evs if e.event in EVENT_KINDS]
    events = [{"kind": e.event, "at_s": round(e.at_s, 3),
               "until_s": None if e.until_s is None else round(e.until_s, 3)} for e in marks]
    return c.chart(item, {"traces": traces, "latency": latency, "markers": markers, "events": events}, {lang: {
        "event_labels": [e.label(lang) for e in marks],
        "event_kinds": {k: words.t(lang, f"event_{k}") for k in EVENT_KINDS},
        "names": names[lang], "sources": sources[lang], "source": words.t(lang, "chart_source"),
        "latency": words.t(lang, "chart_latency"), "x_title": words.t(lang, "chart_elapsed_s"),
        "y_title": words.t(lang, "chart_tps_axis"), "y2_title": words.t(lang, "chart_mean_latency_axis"),
    } for lang in LANGS})


@c.kind("latency_percentiles")
def latency_percentiles(store: Store, report: Report, item: Item) -> ChartData:
    """Latency percentiles (the item's metrics, e.g. latency_p50_ms .. latency_p99_ms) against ``x``
    (e.g. clients): one line per metric, and per value of ``series`` when given (line style)."""
    c.check_options(item, set())
    if not item.x:
        raise item.error("chart 'latency_percentiles' needs x = \"<factor>\" (e.g. x = \"clients\")")
    group_by = [item.x] + ([item.series] if item.series else [])
    xkey = factor_sort_key(report, item.x)
    series_vals: list[str | None] = [None]
    per_metric = {}
    for m in item.metrics:
        groups = aggregate(store, item, m, group_by)
        if not groups:
            raise item.error(f"no runs match: metric {m!r}, where {item.where}")
        per_metric[m] = {g.keys: g for g in groups}
    if item.series:
        series_vals = sorted({k[1] for d in per_metric.values() for k in d}, key=factor_sort_key(report, item.series))
    x_vals = sorted({k[0] for d in per_metric.values() for k in d}, key=xkey)
    numeric = all(_is_num(v) for v in x_vals)
    traces = []
    w: dict[str, dict] = {lang: {"names": [], "x": []} for lang in LANGS}
    for si, sv in enumerate(series_vals):
        for mi, m in enumerate(item.metrics):
            xvs, ys, texts, shown, ns = [], [], [], [], []
            for xv in x_vals:
                g = per_metric[m].get((xv, sv) if item.series else (xv,))
                if g is None:
                    continue
                xvs.append(xv)
                ys.append(g.value)
                texts.append(f"n={g.n}")
                shown.append(format_value(report, item, g, m))  # the hover prints the table's digits
                ns.append(g.n)
            traces.append({"series_index": si, "metric_index": mi, "x": [float(x) for x in xvs] if numeric else None,
                           "y": ys, "hover": texts, "y_text": shown})
            for lang in LANGS:
                name = metric_label(m, lang, with_unit=False, report=report)
                if item.series:
                    name = f"{name}, {factor_value_label(report, item.series, sv, lang)}"
                w[lang]["names"].append(name)
                w[lang].setdefault("hover", []).append([words.t(lang, "chart_hover_runs", n) for n in ns])
                w[lang]["x"].append(None if numeric else [factor_value_label(report, item.x, x, lang) for x in xvs])
    for lang in LANGS:
        w[lang]["x_title"] = factor_name(report, item.x, lang)
        w[lang]["y_title"] = words.t(lang, "chart_latency_axis")
    return c.chart(item, {"traces": traces, "numeric": numeric, "x_vals": x_vals}, w)


def _is_num(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False
