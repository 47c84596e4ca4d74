"""Query-study charts' data (docs/charts.md): elapsed time per query per condition, or the speed-up
against a baseline condition (FY2017 図 6.x). Drawn by render/charts/queries.py.

Data: ``query_times`` (parsers/queries): per run and query the plain timed run's time (else EXPLAIN ANALYZE's),
NULL when the statement failed. A condition is every run of a value of ``series``: the bar is the median over
its runs, the whisker their range; the hover names the plan node that dominates (``query_node_times``).
"""

from __future__ import annotations

import statistics

from kansoku import words
from kansoku.analysis.charts import _select as c
from kansoku.analysis.data_tables import query_key
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

HAS_DATA = "SELECT DISTINCT run_id FROM query_statements"


def _runs(store: Store, item: Item) -> list[str]:
    return sorted(r for p in c.picks(store, None, item, item.series, "all", has_data=HAS_DATA) for r in p.run_ids)


@c.kind("query_times", runs=_runs)
def query_times(store: Store, report: Report, item: Item) -> ChartData:
    """Grouped bars: one group per query, one bar per condition (``series``), the median elapsed time (ms) with
    the runs' range; with ``baseline = <a value of series>`` the speed-up (baseline / value) instead. A query
    that failed in a run has no bar for that condition (never a zero). Options: ``baseline``, ``queries`` (these,
    in this order)."""
    c.check_options(item, {"baseline", "queries", "run"})
    ps = c.picks(store, report, item, item.series, "all", has_data=HAS_DATA)
    runs = sorted(r for p in ps for r in p.run_ids)
    times: dict[str, dict[str, float | None]] = {}
    for r, q, ms, failed in store.query("SELECT run_id, query, elapsed_ms, failed FROM query_times "
                                        "WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [runs]):
        times.setdefault(q, {})[r] = None if failed else ms
    nodes: dict[tuple[str, str], str] = {}
    for r, q, node in store.query("SELECT run_id, query, node_type FROM query_node_times WHERE rank = 1 "
                                  "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [runs]):
        nodes[(r, q)] = node
    wanted = c.opt_str_list(item, "queries")
    if wanted:
        missing = [q for q in wanted if q not in times]
        if missing:
            raise item.error(f"option queries: {missing} not among the queries of these runs: {sorted(times)}")
        order = wanted
    else:
        order = sorted(times, key=_query_key)
    base = item.options.get("baseline")
    keys = [str(p.key) for p in ps]
    if base is not None and str(base) not in keys:
        raise item.error(f"option baseline must be a value of {item.series}: {keys}")

    def med(q: str, rs: list[str]) -> tuple[float | None, float | None, float | None]:
        vals = [times[q].get(r) for r in rs if r in times[q]]
        if not vals or any(v is None for v in vals):
            return None, None, None
        return statistics.median(vals), min(vals), max(vals)

    base_runs = next((p.run_ids for p in ps if str(p.key) == str(base)), None)
    bars, lows, highs, dom = [], [], [], []
    for p in ps:
        row, lo_row, hi_row, node_row = [], [], [], []
        for q in order:
            m, lo, hi = med(q, p.run_ids)
            if base_runs is not None:
                b = med(q, base_runs)[0]
                m, lo, hi = (b / m if b and m else None), (b / hi if b and hi else None), (b / lo if b and lo else None)
            row.append(m)
            lo_row.append(lo)
            hi_row.append(hi)
            ns = [nodes.get((r, q)) for r in p.run_ids if nodes.get((r, q))]
            node_row.append(max(set(ns), key=ns.count) if ns else None)
        bars.append(row)
        lows.append(lo_row)
        highs.append(hi_row)
        dom.append(node_row)
    w = {}
    for lang in LANGS:
        labels = c.run_labels(store, report, runs, lang)
        w[lang] = {"names": [c.pick_name(report, item, item.series, c.Pick(p.key, [p.run_ids[0]], None, 1),
                                         p.run_ids[0], lang, labels) if item.series else words.t(lang, "chart_profile_all_runs")
                             for p in ps],
                   "x_title": words.t(lang, "table_query"),
                   "y_title": words.t(lang, "chart_query_speedup" if base_runs is not None else "chart_query_elapsed"),
                   "node": words.t(lang, "table_dominant_node"), "runs": [len(p.run_ids) for p in ps]}
    return c.chart(item, {"order": order, "bars": bars, "low": lows, "high": highs, "nodes": dom,
                          "speedup": base_runs is not None}, w)


def _query_key(q: str):
    return query_key(q)
