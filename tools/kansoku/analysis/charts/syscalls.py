"""strace -c charts' data: top-N system calls by share of time per condition, and calls vs errors
(FY2017 図 4.4-4.6; docs/charts.md). Drawn by render/charts/syscalls.py.

Data: ``strace_top_syscalls`` / ``strace_run_syscalls`` (strace parser): one row per (run, syscall),
'% time' as strace printed it. A condition (a value of ``series``, e.g. config or version) is
shown by its representative run (by the item's metric, e.g. strace_total_seconds), or every
run of the selection when there is no ``series``.
"""

from __future__ import annotations

from kansoku import words
from kansoku.analysis.charts import _select as c
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

STRACE_HAS_DATA = "SELECT DISTINCT run_id FROM strace_run_syscalls"


def _conditions(store: Store, report: Report | None, item: Item) -> tuple[list[str], dict[str, list[str]]]:
    """Run ids, one per condition (representative run) or per run when there is no series, and their
    names per language."""
    ps = c.picks(store, report, item, item.series, "representative" if item.series else "all",
                 has_data=STRACE_HAS_DATA)
    runs = [r for p in ps for r in p.run_ids]
    if report is None:
        return runs, {}
    names = {}
    for lang in LANGS:
        labels = c.run_labels(store, report, runs, lang)
        names[lang] = [c.pick_name(report, item, item.series, p, r, lang, labels) for p in ps for r in p.run_ids]
    return runs, names


def _rows(store: Store, run_id: str) -> dict[str, dict]:
    rows = store.query_dicts(
        "SELECT syscall, time_pct, seconds, calls, errors, error_pct FROM strace_top_syscalls WHERE run_id = ? "
        "ORDER BY time_rank", [run_id])
    return {r["syscall"]: r for r in rows}


def _exclude(item: Item) -> set[str]:
    return set(c.opt_str_list(item, "exclude") or [])


def _runs(store: Store, item: Item) -> list[str]:
    return sorted(_conditions(store, None, item)[0])


@c.kind("syscalls_top", runs=_runs)
def syscalls_top(store: Store, report: Report, item: Item) -> ChartData:
    """Horizontal grouped bars: the top-N system calls by % time of each condition (their union),
    one bar per condition, largest on top."""
    c.check_options(item, {"top", "exclude", "run"})
    top = c.opt_int(item, "top", 10)
    excl = _exclude(item)
    runs, names = _conditions(store, report, item)
    data = {r: _rows(store, r) for r in runs}
    chosen: dict[str, float] = {}
    for r in runs:
        ranked = [s for s in data[r] if s not in excl][:top]
        for s in ranked:
            chosen[s] = max(chosen.get(s, 0.0), data[r][s]["time_pct"] or 0.0)
    order = sorted(chosen, key=lambda s: (-chosen[s], s))
    bars = [[data[r][s]["time_pct"] if s in data[r] else None for s in order] for r in runs]
    w = {}
    for lang in LANGS:
        hover = []
        for r in runs:
            hv = []
            for s in order:
                d = data[r].get(s)
                hv.append(f"{s}: " + words.t(lang, "percent", f"{d['time_pct']:.2f}") + ", " + words.t(lang, "chart_seconds", f"{d['seconds']:.6f}")
                          + ", " + words.t(lang, "chart_calls", d["calls"]) if d
                          else f"{s}: " + words.t(lang, "chart_not_called"))
            hover.append(hv)
        w[lang] = {"names": names[lang], "hover": hover, "x_title": words.t(lang, "chart_syscall_time_share"),
                   "y_title": words.t(lang, "chart_syscall")}
    return c.chart(item, {"order": order, "bars": bars}, w)


@c.kind("syscalls_calls_errors", runs=_runs)
def syscalls_calls_errors(store: Store, report: Report, item: Item) -> ChartData:
    """Calls and errors of chosen system calls (option ``syscalls``) or the top-N by calls, errors or
    time (``top``, ``rank_by``), per condition: horizontal bars, errors hatched."""
    c.check_options(item, {"syscalls", "top", "rank_by", "exclude", "run"})
    top = c.opt_int(item, "top", 8)
    rank_by = c.opt_choice(item, "rank_by", "calls", ("calls", "errors", "time"))
    wanted = c.opt_str_list(item, "syscalls")
    excl = _exclude(item)
    runs, names = _conditions(store, report, item)
    data = {r: _rows(store, r) for r in runs}
    if wanted:
        known = {s for d in data.values() for s in d}
        missing = [s for s in wanted if s not in known]
        if missing:
            raise item.error(f"option syscalls: {missing} not in the strace tables of runs {runs}")
        order = wanted
    else:
        field = {"calls": "calls", "errors": "errors", "time": "time_pct"}[rank_by]
        best: dict[str, float] = {}
        for r in runs:
            for s, d in data[r].items():
                if s not in excl:
                    best[s] = max(best.get(s, 0.0), float(d[field] or 0))
        order = sorted((s for s in best if best[s] > 0 or rank_by != "errors"), key=lambda s: (-best[s], s))[:top]
    counts = [{what: [int(data[r][s][what] or 0) if s in data[r] else None for s in order]
               for what in ("calls", "errors")} for r in runs]
    return c.chart(item, {"order": order, "counts": counts}, {lang: {
        "names": names[lang], "calls": words.t(lang, "chart_calls_label"), "errors": words.t(lang, "chart_errors_label"),
        "x_title": words.t(lang, "chart_count_axis"), "y_title": words.t(lang, "chart_syscall"),
    } for lang in LANGS})
