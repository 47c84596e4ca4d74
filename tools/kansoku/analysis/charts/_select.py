"""Helpers shared by the chart families' data: option checks, run selection, labels (both languages).

Run selection follows the tables' rules (analysis.py): the runs of a figure are those its
``where`` selects among runs with status 'ok' and a value of the item's first metric; a
condition (the runs sharing a value of the ``series`` factor) is shown by its representative
run, the one whose metric value is closest to the condition's aggregate (median by default),
or by all its runs (``runs = "all"``), or a single run is named (``run = "<run id>"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kansoku.analysis.tables import (
    aggregate,
    check_factor,
    factor_name,
    factor_sort_key,
    factor_value_label,
    runs_metric_groups,
    where_sql,
)
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report  # noqa: F401
from kansoku.store.db import Store

# Options every kind accepts (render.charts._draw.layout and the axis-title override).
COMMON_OPTIONS = {"x_log", "y_log", "x_title", "y_title", "height"}

# kind -> function (store, report, item) -> ChartData: the data of every chart kind (figures.KINDS).
KINDS: dict[str, Callable[..., ChartData]] = {}

# kind -> function (store, item) -> run ids the figure shows; figures.figure_runs asks it. A kind without one
# shows the runs of its metric's aggregate over x (and series).
RUNS_OF: dict[str, Callable[[Store, Item], list[str]]] = {}


def kind(name: str, runs: Callable[[Store, Item], list[str]] | None = None):
    """Registers a chart kind's data function and, with ``runs``, the runs a figure of the kind shows."""
    def deco(f):
        if name in KINDS:
            raise ValueError(f"chart kind {name!r} registered twice ({KINDS[name].__module__}, {f.__module__})")
        KINDS[name] = f
        if runs is not None:
            RUNS_OF[name] = runs
        return f
    return deco


def check_options(item: Item, allowed: set[str]) -> None:
    unknown = set(item.options) - allowed - COMMON_OPTIONS
    if unknown:
        raise item.error(f"chart {item.chart!r}: unknown option(s) {sorted(unknown)}; "
                         f"known: {sorted(allowed | COMMON_OPTIONS)} (docs/charts.md)")


def opt(item: Item, key: str, default: Any, types: type | tuple[type, ...], what: str) -> Any:
    """An option of the item, type-checked; errors name the spec file and the figure."""
    if key not in item.options:
        return default
    v = item.options[key]
    if isinstance(v, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise item.error(f"option {key} must be {what}, got {v!r}")
    if not isinstance(v, types):
        raise item.error(f"option {key} must be {what}, got {v!r}")
    return v


def opt_choice(item: Item, key: str, default: str, choices: tuple[str, ...]) -> str:
    v = item.options.get(key, default)
    if v not in choices:
        raise item.error(f"option {key} = {v!r} is not one of {list(choices)}")
    return v


def opt_int(item: Item, key: str, default: int, low: int = 1) -> int:
    v = opt(item, key, default, int, f"an integer >= {low}")
    if v < low:
        raise item.error(f"option {key} must be an integer >= {low}, got {v!r}")
    return v


def opt_str_list(item: Item, key: str) -> list[str] | None:
    v = item.options.get(key)
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in v):
        raise item.error(f"option {key} must be a string or a list of strings, got {v!r}")
    return [str(x) for x in v]


def chart(item: Item, data: dict[str, Any], words: dict[str, dict[str, Any]]) -> ChartData:
    """The computed chart, with the options the drawing reads (checked here: a bad one is a spec error)."""
    h = item.options.get("height")
    if h is not None and (isinstance(h, bool) or not isinstance(h, int) or not 200 <= h <= 3000):
        raise item.error(f"option height must be a number of pixels between 200 and 3000, got {h!r}")
    return ChartData(item.chart, dict(item.options), data, words)


# -- runs ------------------------------------------------------------------------------

def where_runs(store: Store, item: Item) -> list[str]:
    """Runs with status 'ok' that the item's ``where`` selects (whatever data they have)."""
    params: list[Any] = []
    cond = where_sql(item, store, params)
    return [r[0] for r in store.query(
        f"SELECT m.run_id FROM runs m WHERE m.status = 'ok' AND {cond} ORDER BY m.run_id", params)]


# A ``has_data`` query over a view that pivots every sample (``cpu_in_run``, ``disk_in_run``: a GROUP BY with
# ~25 FILTER aggregates of every ``sys_metrics`` row) -> (the view, the same runs asked of the samples
# themselves, without the pivot). ``runs_with_data`` asks the second unless the connection holds the view as
# a table already (a first build's, report/runs.py share_samples): the samples' query costs less than the
# pivot (docs/build-performance.md). The same runs: tests/test_has_data.py.
WITHOUT_PIVOT: dict[str, tuple[str, str]] = {}


def runs_with_data(store: Store, has_data: str) -> set[str]:
    """The runs ``has_data`` (SQL yielding run_id) yields, asked once per build and chart family (the store is
    opened read-only for a build; a figure asks it for its data and again for its runs)."""
    cache = store.__dict__.setdefault("_kansoku_analysis_cache", {})
    key = ("has_data", has_data)
    if key not in cache:
        sql = has_data
        if has_data in WITHOUT_PIVOT and not store.computed(WITHOUT_PIVOT[has_data][0]):
            sql = WITHOUT_PIVOT[has_data][1]
        cache[key] = frozenset(r[0] for r in store.query(sql))
    return set(cache[key])


@dataclass
class Pick:
    """The run(s) shown for one condition: key = the series factor's value (None: no series)."""

    key: str | None
    run_ids: list[str]
    representative: str | None
    n: int


def picks(store: Store, report: Report, item: Item, factor: str | None, mode: str = "representative",
          has_data: str | None = None) -> list[Pick]:
    """One Pick per value of ``factor`` (or one for all runs), in the report's factor order.

    ``mode`` 'representative' keeps the representative run of each condition (by the item's first
    metric and aggregate), 'all' keeps every run. An explicit ``run`` option overrides both.
    ``has_data``: SQL yielding run_id of runs that have the data the chart draws; others are left out
    before the representative is chosen.
    """
    explicit = item.options.get("run")
    if explicit is not None:
        if not isinstance(explicit, str):
            raise item.error(f"option run must be a run id (string), got {explicit!r}")
        ok = store.query("SELECT count(*) FROM runs WHERE run_id = ?", [explicit])[0][0]
        if not ok:
            raise item.error(f"option run: no run {explicit!r} in the database")
        if has_data and explicit not in runs_with_data(store, has_data):
            raise item.error(f"option run: run {explicit!r} has no data for chart {item.chart!r}")
        return [Pick(None, [explicit], explicit, 1)]
    if factor:
        check_factor(store, item, factor, "series")
    where = None
    if has_data:
        runs = runs_with_data(store, has_data)
        selected = [r for r in where_runs(store, item) if r in runs]
        if not selected:
            raise item.error(f"no runs with data for chart {item.chart!r} match where {item.where}")
        where = {**item.where, "__runs__": selected}
    groups = _aggregate(store, item, [factor] if factor else [], where)
    if not groups:
        raise item.error(f"no runs match: metric {item.metrics[0]!r}, where {item.where}")
    key = factor_sort_key(report, factor) if factor else (lambda v: v)
    out = []
    for g in sorted(groups, key=lambda g: key(g.keys[0]) if factor else 0):
        runs = list(g.run_ids) if mode == "all" else [g.representative_run_id]
        out.append(Pick(g.keys[0] if factor else None, runs, g.representative_run_id, g.n))
    return out


def _aggregate(store: Store, item: Item, group_by: list[str], where: dict | None):
    """analysis.aggregate restricted to a list of runs (``__runs__`` in where, as a run_id filter)."""
    if where is None or "__runs__" not in where:
        return aggregate(store, item, item.metrics[0], group_by)
    runs = where.pop("__runs__")
    # where_sql only knows factors: aggregate over the item's runs, then keep the runs with data;
    # the aggregate stays that of the whole condition, the representative is chosen among them.
    groups = aggregate(store, item, item.metrics[0], group_by, where=where)
    keep = set(runs)
    out = []
    for g in groups:
        rs = [r for r in g.run_ids if r in keep]
        if not rs:
            continue
        if g.representative_run_id not in keep:  # choose again among the runs with data
            rep = _closest(store, item, rs, g.value)
            g.representative_run_id = rep
        g.run_ids, g.n = rs, len(rs)
        out.append(g)
    return out


def _closest(store: Store, item: Item, runs: list[str], value: float | None) -> str:
    vals = runs_metric_groups(store, runs, item.metrics[0], item.device_groups)
    if value is None or not vals:
        return sorted(runs)[0]
    return min(sorted(vals), key=lambda r: abs((vals[r].value or 0.0) - value))


def run_factors(store: Store, run_ids: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {r: {} for r in run_ids}
    for run_id, f, v in store.query(
            "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]):
        out[run_id][f] = v
    return out


def run_labels(store: Store, report: Report, run_ids: list[str], lang: str,
               skip: tuple[str, ...] = ("campaign",)) -> dict[str, str]:
    """Short labels that tell the runs apart: the factors whose values differ between them."""
    fs = run_factors(store, run_ids)
    names = sorted({f for d in fs.values() for f in d} - set(skip))
    varying = [f for f in names if len({d.get(f) for d in fs.values()}) > 1]
    varying.sort(key=lambda f: (f not in report.factor_names, f == "rep", f))
    out = {}
    for r in run_ids:
        parts = []
        for f in varying:
            v = fs[r].get(f)
            if v is None:
                continue
            parts.append(f"{factor_name(report, f, lang)} {factor_value_label(report, f, v, lang)}"
                         if f not in report.factor_labels else factor_value_label(report, f, v, lang))
        out[r] = ", ".join(parts) or r
    return out


def pick_name(report: Report, item: Item, factor: str | None, p: Pick, run_id: str, lang: str,
              labels: dict[str, str]) -> str:
    if factor is None:
        return labels.get(run_id, run_id)
    name = factor_value_label(report, factor, p.key, lang)
    if factor not in report.factor_labels:
        name = f"{factor_name(report, factor, lang)} {name}"
    if len(p.run_ids) > 1:
        name = f"{name} ({labels.get(run_id, run_id)})"
    return name
