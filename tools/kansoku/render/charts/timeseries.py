"""pgbench charts: per-second TPS over time, latency percentiles vs a factor (docs/charts.md).

Data: the ``pgbench_tps_per_second`` view (pgbench_log.py), which takes each run's best
per-second source: the per-transaction log (-l, corrected for --sampling-rate), else the
aggregate log, else the -P progress lines; and the latency percentile metrics
(``latency_p50_ms`` ... from the per-transaction logs).
"""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.analysis.tables import aggregate, factor_name, factor_sort_key, factor_value_label, metric_label
from kansoku.analysis.figures import compact, kind
from kansoku.spec.model import Item, Report
from kansoku.store.db import Store
from kansoku.render.charts import _common as c

SOURCE_LABELS = {
    "txlog": ("トランザクションログ (-l)", "per-transaction log (-l)"),
    "aggregate": ("集計ログ (--aggregate-interval)", "aggregate log (--aggregate-interval)"),
    "progress": ("進捗表示 (-P)", "progress lines (-P)"),
}
TPS_HAS_DATA = "SELECT DISTINCT run_id FROM pgbench_tps_per_second"


def _tps_picks(store: Store, report: Report | None, item: Item) -> list[c.Pick]:
    mode = c.opt_choice(item, "runs", "representative", ("representative", "all"))
    return c.picks(store, report, item, item.series, mode, has_data=TPS_HAS_DATA)


def tps_series(store: Store, run_id: str, partial: bool = False) -> list[tuple]:
    """(elapsed_s, tps, latency_avg_ms, series_source) of one run. Unless ``partial``, intervals that
    reach outside the run's window (run.toml start/end) are left out: the per-transaction log is cut
    into wall-clock seconds, so its first and last seconds hold only part of a second of the run and
    would show as dips."""
    keep = "TRUE" if partial else (
        "(r.start_time IS NULL OR r.end_time IS NULL OR (s.elapsed_s - s.interval_s >= -0.001 "
        "AND s.elapsed_s <= epoch(r.end_time) - epoch(r.start_time) + 0.001))")
    return store.query(
        "SELECT s.elapsed_s, s.tps, s.latency_avg_ms, s.series_source FROM pgbench_tps_per_second s "
        f"LEFT JOIN runs r USING (run_id) WHERE s.run_id = ? AND {keep} ORDER BY s.elapsed_s", [run_id])


@kind("tps_over_time")
def tps_over_time(store: Store, report: Report, item: Item, lang: str) -> dict:
    """Per-second TPS (and optionally mean latency on a second y axis) over seconds since the run's start."""
    c.check_options(item, {"runs", "run", "latency", "markers", "partial"})
    latency = c.opt(item, "latency", False, bool, "true or false")
    partial = c.opt(item, "partial", False, bool, "true or false")
    markers = c.opt(item, "markers", True, bool, "true or false")
    picks = _tps_picks(store, report, item)
    all_runs = [r for p in picks for r in p.run_ids]
    labels = c.run_labels(store, report, all_runs, lang)
    fig = go.Figure()
    i = 0
    for p in picks:
        for run_id in p.run_ids:
            rows = tps_series(store, run_id, partial)
            name = c.pick_name(report, item, item.series, p, run_id, lang, labels)
            src = SOURCE_LABELS.get(rows[0][3], (rows[0][3], rows[0][3]))[0 if lang == "ja" else 1] if rows else ""
            hover = f"{name}<br>{c.tr(lang, '出典', 'source')}: {src}<br>%{{x:.1f}} s: %{{y:.1f}} TPS<extra></extra>"
            col = c.color(i)
            fig.add_trace(go.Scatter(
                x=[round(r[0], 3) for r in rows], y=[r[1] for r in rows], name=name,
                mode="lines+markers" if markers else "lines", line=dict(color=col, width=2),
                marker=dict(size=5), legendgroup=f"g{i}", hovertemplate=hover))
            if latency:
                fig.add_trace(go.Scatter(
                    x=[round(r[0], 3) for r in rows], y=[r[2] for r in rows],
                    name=f"{name} {c.tr(lang, 'レイテンシ', 'latency')}", yaxis="y2", mode="lines",
                    line=dict(color=col, width=1.5, dash="dot"), legendgroup=f"g{i}",
                    hovertemplate=f"{name}<br>%{{x:.1f}} s: %{{y:.2f}} ms<extra></extra>"))
            i += 1
    lay = c.layout(item, lang, c.tr(lang, "実行開始からの経過時間 (秒)", "Time since the run's start (s)"),
                   c.tr(lang, "TPS (トランザクション/秒)", "TPS (transactions/s)"))
    if latency:
        lay["yaxis2"] = dict(title=dict(text=c.tr(lang, "平均レイテンシ (ms)", "Mean latency (ms)")),
                             overlaying="y", side="right", rangemode="tozero", showgrid=False, automargin=True)
        lay["margin"] = dict(lay["margin"], r=64)
    fig.update_layout(**lay)
    return compact(fig)


c.RUNS_OF["tps_over_time"] = lambda store, item: sorted({r for p in _tps_picks(store, None, item) for r in p.run_ids})


PERCENTILE_DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


@kind("latency_percentiles")
def latency_percentiles(store: Store, report: Report, item: Item, lang: str) -> dict:
    """Latency percentiles (the item's metrics, e.g. latency_p50_ms .. latency_p99_ms) against ``x``
    (e.g. clients): one line per metric, and per value of ``series`` when given (line style)."""
    c.check_options(item, set())
    if not item.x:
        raise item.error("chart 'latency_percentiles' needs x = \"<factor>\" (e.g. x = \"clients\")")
    group_by = [item.x] + ([item.series] if item.series else [])
    fig = go.Figure()
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
    for si, sv in enumerate(series_vals):
        for mi, m in enumerate(item.metrics):
            xs, ys, texts = [], [], []
            for xv in x_vals:
                g = per_metric[m].get((xv, sv) if item.series else (xv,))
                if g is None:
                    continue
                xs.append(float(xv) if numeric else factor_value_label(report, item.x, xv, lang))
                ys.append(g.value)
                texts.append(f"n={g.n}")
            name = metric_label(m, lang, with_unit=False, report=report)
            if item.series:
                name = f"{name}, {factor_value_label(report, item.series, sv, lang)}"
            fig.add_trace(go.Scatter(
                x=xs, y=ys, name=name, mode="lines+markers", hovertext=texts,
                line=dict(color=c.color(mi), dash=PERCENTILE_DASHES[si % len(PERCENTILE_DASHES)]),
                marker=dict(symbol=["circle", "square", "diamond", "triangle-up"][si % 4])))
    fig.update_layout(**c.layout(item, lang, factor_name(report, item.x, lang),
                                 c.tr(lang, "レイテンシ (ms)", "Latency (ms)")))
    if numeric:
        fig.update_xaxes(tickmode="array", tickvals=[float(v) for v in x_vals], ticktext=list(x_vals))
    return compact(fig)


def _is_num(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False
