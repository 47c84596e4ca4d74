"""strace -c charts: top-N system calls by share of time per condition, and calls vs errors
(FY2017 図 4.4-4.6; docs/charts.md).

Data: ``strace_top_syscalls`` / ``strace_run_syscalls`` (strace.py): one row per (run, syscall),
'% time' as strace printed it. A condition (a value of ``series``, e.g. config or version) is
shown by its representative run (by the item's metric, e.g. strace_total_seconds), or every
run of the selection when there is no ``series``.
"""

from __future__ import annotations

import plotly.graph_objects as go

from kansoku.analysis.figures import compact, kind
from kansoku.spec.model import Item, Report
from kansoku.store.db import Store
from kansoku.render.charts import _common as c

STRACE_HAS_DATA = "SELECT DISTINCT run_id FROM strace_run_syscalls"


def _conditions(store: Store, report: Report | None, item: Item, lang: str | None = None
                ) -> list[tuple[str, str]]:
    """[(run_id, name)], one per condition (representative run) or per run when there is no series."""
    ps = c.picks(store, report, item, item.series, "representative" if item.series else "all",
                 has_data=STRACE_HAS_DATA)
    runs = [r for p in ps for r in p.run_ids]
    if lang is None:
        return [(r, r) for r in runs]
    labels = c.run_labels(store, report, runs, lang)
    return [(r, c.pick_name(report, item, item.series, p, r, lang, labels)) for p in ps for r in p.run_ids]


def _rows(store: Store, run_id: str) -> dict[str, dict]:
    rows = store.query_dicts(
        "SELECT syscall, time_pct, seconds, calls, errors, error_pct FROM strace_top_syscalls WHERE run_id = ? "
        "ORDER BY time_rank", [run_id])
    return {r["syscall"]: r for r in rows}


def _exclude(item: Item) -> set[str]:
    return set(c.opt_str_list(item, "exclude") or [])


@kind("syscalls_top")
def syscalls_top(store: Store, report: Report, item: Item, lang: str) -> dict:
    """Horizontal grouped bars: the top-N system calls by % time of each condition (their union),
    one bar per condition, largest on top."""
    c.check_options(item, {"top", "exclude", "run"})
    top = c.opt_int(item, "top", 10)
    excl = _exclude(item)
    conds = _conditions(store, report, item, lang)
    data = {r: _rows(store, r) for r, _ in conds}
    chosen: dict[str, float] = {}
    for r, _ in conds:
        ranked = [s for s in data[r] if s not in excl][:top]
        for s in ranked:
            chosen[s] = max(chosen.get(s, 0.0), data[r][s]["time_pct"] or 0.0)
    order = sorted(chosen, key=lambda s: (-chosen[s], s))
    fig = go.Figure()
    for i, (r, name) in enumerate(conds):
        xs, hover = [], []
        for s in order:
            d = data[r].get(s)
            xs.append(d["time_pct"] if d else None)
            hover.append(c.tr(lang, f"{s}: {d['time_pct']:.2f} %, {d['seconds']:.6f} 秒, {d['calls']} 回",
                              f"{s}: {d['time_pct']:.2f} %, {d['seconds']:.6f} s, {d['calls']} calls")
                         if d else c.tr(lang, f"{s}: 呼び出しなし", f"{s}: not called"))
        fig.add_trace(go.Bar(
            x=xs, y=order, name=name, orientation="h", marker=dict(color=c.color(i)), hovertext=hover,
            hoverinfo="text+name", text=[f"{x:.2f}" if x is not None else "" for x in xs],
            textposition="outside", cliponaxis=False))
    lay = c.layout(item, lang, c.tr(lang, "システムコール時間に占める割合 (%)", "Share of system-call time (%)"),
                   c.tr(lang, "システムコール", "System call"))
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    lay["xaxis"] = dict(lay["xaxis"], rangemode="tozero")
    lay.setdefault("height", max(320, 26 * len(order) * max(1, len(conds)) // 2 + 140))
    fig.update_layout(**lay, barmode="group", bargap=0.25)
    return compact(fig)


@kind("syscalls_calls_errors")
def syscalls_calls_errors(store: Store, report: Report, item: Item, lang: str) -> dict:
    """Calls and errors of chosen system calls (option ``syscalls``) or the top-N by calls, errors or
    time (``top``, ``rank_by``), per condition: horizontal bars, errors hatched."""
    c.check_options(item, {"syscalls", "top", "rank_by", "exclude", "run"})
    top = c.opt_int(item, "top", 8)
    rank_by = c.opt_choice(item, "rank_by", "calls", ("calls", "errors", "time"))
    wanted = c.opt_str_list(item, "syscalls")
    excl = _exclude(item)
    conds = _conditions(store, report, item, lang)
    data = {r: _rows(store, r) for r, _ in conds}
    if wanted:
        known = {s for d in data.values() for s in d}
        missing = [s for s in wanted if s not in known]
        if missing:
            raise item.error(f"option syscalls: {missing} not in the strace tables of runs {[r for r, _ in conds]}")
        order = wanted
    else:
        field = {"calls": "calls", "errors": "errors", "time": "time_pct"}[rank_by]
        best: dict[str, float] = {}
        for r, _ in conds:
            for s, d in data[r].items():
                if s not in excl:
                    best[s] = max(best.get(s, 0.0), float(d[field] or 0))
        order = sorted((s for s in best if best[s] > 0 or rank_by != "errors"), key=lambda s: (-best[s], s))[:top]
    fig = go.Figure()
    for i, (r, name) in enumerate(conds):
        col = c.color(i)
        for what in ("calls", "errors"):
            xs = [int(data[r][s][what] or 0) if s in data[r] else None for s in order]
            label = c.tr(lang, "呼び出し回数" if what == "calls" else "エラー回数", what)
            marker = dict(color=col) if what == "calls" else dict(
                color="rgba(255,255,255,0)", line=dict(color=col, width=1.5),
                pattern=dict(shape="/", fgcolor=col, solidity=0.45))
            fig.add_trace(go.Bar(
                x=xs, y=order, name=f"{name}: {label}", orientation="h", marker=marker, legendgroup=f"c{i}",
                text=[f"{x:,}" if x is not None else "" for x in xs], textposition="outside", cliponaxis=False,
                hovertemplate=f"{name}<br>%{{y}}: %{{x:,}} {label}<extra></extra>"))
    lay = c.layout(item, lang, c.tr(lang, "回数 (回)", "Count (calls)"), c.tr(lang, "システムコール", "System call"))
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    lay.setdefault("height", max(320, 14 * len(order) * 2 * max(1, len(conds)) + 150))
    fig.update_layout(**lay, barmode="group", bargap=0.2)
    return compact(fig)


def _runs(store: Store, item: Item) -> list[str]:
    return sorted(r for r, _ in _conditions(store, None, item))


c.RUNS_OF["syscalls_top"] = _runs
c.RUNS_OF["syscalls_calls_errors"] = _runs
