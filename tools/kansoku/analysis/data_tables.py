"""Tables whose rows are data, not a factor: ``rows = "functions"`` (the top functions of a profile, self and
total share with their spread over the runs) and ``rows = "queries"`` (elapsed time per query per condition,
the speed-up against a baseline condition, the plan node that dominates: FY2017 表 6.8–6.19). Both are
registered table kinds (``analysis/table_registry.py``), loaded with the others by ``analysis/table_kinds.py``.
The cells are the tables' own (``model.Cell``), so the site, the CSV and the PDF print them like any table.

Options (the table's ``options``): functions: ``top`` (default 10), ``profile`` (cpu, syscalls), ``rank_by``
(self, total); queries: none yet (the baseline is the table's ``baseline = { factor, value }``).
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from kansoku import words
from kansoku.analysis import noise
from kansoku.analysis.table_registry import table_kind
from kansoku.analysis.tables import (
    VERDICT_FLAGS,
    ComputedTable,
    both,
    check_factor,
    citations,
    factor_name,
    factor_sort_key,
    factor_value_label,
    fmt_number,
    where_sql,
)
from kansoku.model import Cell
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store


def _runs_by_condition(store: Store, report: Report, item: Item, has_data: str) -> list[tuple[str | None, list[str]]]:
    """The selected runs (status ok, ``where``, with data) grouped by the ``columns`` factor, in report order."""
    params: list[Any] = []
    cond = where_sql(item, store, params)
    runs = [r[0] for r in store.query(f"SELECT m.run_id FROM runs m WHERE m.status = 'ok' AND {cond} "
                                      f"AND m.run_id IN ({has_data}) ORDER BY m.run_id", params)]
    if not runs:
        raise item.error(f"no runs with data for rows = {item.rows!r} match where {item.where}")
    if not item.columns:
        return [(None, runs)]
    check_factor(store, item, item.columns, "columns")
    by: dict[str, list[str]] = {}
    for r, v in store.query("SELECT run_id, value FROM run_factors WHERE factor = ? "
                            "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [item.columns, runs]):
        by.setdefault(v, []).append(r)
    return [(v, sorted(by[v])) for v in sorted(by, key=factor_sort_key(report, item.columns))]


def _opt(item: Item, key: str, default: Any, choices: tuple | None = None) -> Any:
    v = item.options.get(key, default)
    if choices is not None and v not in choices:
        raise item.error(f"option {key} = {v!r} is not one of {list(choices)}")
    return v


def _cond_label(report: Report, item: Item, v: str | None, lang: str) -> str:
    """A condition as a column header: its label, or the factor's name and the value ("Clients 8")."""
    if v is None:
        return words.t(lang, "chart_profile_all_runs")
    label = factor_value_label(report, item.columns, v, lang)
    return label if item.columns in report.factor_labels else f"{factor_name(report, item.columns, lang)} {label}"


def _value_cell(values: dict[str, float], digits: int, coords: dict[str, str]) -> Cell:
    if not values:
        return Cell(words.both("cell_not_measured"), None, "value", coords=coords)
    med = statistics.median(values.values())
    rep = min(sorted(values), key=lambda r: abs(values[r] - med))
    return Cell({lang: fmt_number(med, digits) for lang in LANGS}, med, "value", sorted(values), rep,
                run_values=dict(values), coords=coords)


@table_kind("functions", claims=lambda item: item.rows == "functions", priority=30, checks_itself=True)
def top_functions(store: Store, report: Report, item: Item) -> ComputedTable:
    """One row per function (the ``top`` by median self share over the conditions), per condition two columns:
    self and total share of the samples (%), the median over the runs, each run's share kept for the spread."""
    unknown = set(item.options) - {"top", "profile", "rank_by"}
    if unknown:
        raise item.error(f"rows = \"functions\": unknown option(s) {sorted(unknown)}; known: profile, rank_by, top")
    top = _opt(item, "top", 10)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise item.error(f"option top must be an integer >= 1, got {top!r}")
    profile = _opt(item, "profile", "cpu", ("cpu", "syscalls"))
    rank_by = _opt(item, "rank_by", "self", ("self", "total"))
    conds = _runs_by_condition(store, report, item, f"SELECT run_id FROM profile_stacks WHERE profile = '{profile}'")
    all_runs = sorted(r for _, rs in conds for r in rs)
    shares: dict[str, dict[str, tuple[float, float]]] = {}
    for r, f, s, t in store.query("SELECT run_id, function, self_pct, total_pct FROM profile_functions "
                                  "WHERE profile = ? AND run_id IN (SELECT unnest(?::VARCHAR[]))", [profile, all_runs]):
        shares.setdefault(f, {})[r] = (float(s), float(t))
    k = 0 if rank_by == "self" else 1

    def score(f: str) -> float:
        return max(statistics.median([shares[f].get(r, (0.0, 0.0))[k] for r in rs]) for _, rs in conds)

    chosen = sorted(shares, key=lambda f: (-score(f), f))[:top]
    stub = words.both("table_function")
    header = [[{"text": stub, "colspan": 1, "rowspan": 2}]
              + [{"text": both(lambda l, v=v: _cond_label(report, item, v, l)), "colspan": 2, "rowspan": 1,
                  "kind": "value", "baseline": False} for v, _ in conds],
              [h for _ in conds for h in ({"text": words.both("table_self_pct"), "colspan": 1, "rowspan": 1,
                                           "kind": "value", "baseline": False},
                                          {"text": words.both("table_total_pct"), "colspan": 1, "rowspan": 1,
                                           "kind": "value", "baseline": False})]]
    columns = [{"text": stub, "kind": "factor", "baseline": False}]
    for v, _ in conds:
        for key in ("table_self_pct", "table_total_pct"):
            columns.append({"text": {l: f"{_cond_label(report, item, v, l)}: {words.t(l, key)}" for l in LANGS},
                            "kind": "value", "baseline": False})
    rows = []
    for f in chosen:
        cells = [Cell({l: f for l in LANGS}, kind="factor", flags=["unresolved"] if f.startswith("[") else [])]
        for v, rs in conds:
            for idx, what in ((0, "self"), (1, "total")):
                vals = {r: shares[f].get(r, (0.0, 0.0))[idx] for r in rs}
                cells.append(_value_cell(vals, 2, {"row": f, "column": str(v), "metric": f"profile_{what}_pct"}))
        rows.append(cells)
    return ComputedTable(item, header, columns, rows, all_runs, citations(store, all_runs))


@table_kind("queries", claims=lambda item: item.rows == "queries", priority=30, checks_itself=True)
def query_times(store: Store, report: Report, item: Item) -> ComputedTable:
    """One row per query, per condition (``columns``) the elapsed time in ms (median over the runs; the plain
    timed run when there is one, else EXPLAIN ANALYZE's execution time), with ``baseline = { factor =
    <columns>, value = … }`` the speed-up against the baseline condition (baseline / value, its verdict from
    the runs), and last, when its runs have plans (EXPLAIN ANALYZE), the plan node with the most self time in
    the last condition. A failed statement is "failed", never a time."""
    if set(item.options):
        raise item.error(f"rows = \"queries\": unknown option(s) {sorted(item.options)}")
    conds = _runs_by_condition(store, report, item, "SELECT run_id FROM query_statements")
    all_runs = sorted(r for _, rs in conds for r in rs)
    times: dict[str, dict[str, float | None]] = {}
    dominant: dict[str, dict[str, str]] = {}
    for r, q, ms, failed in store.query("SELECT run_id, query, elapsed_ms, failed FROM query_times "
                                        "WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [all_runs]):
        times.setdefault(q, {})[r] = None if failed else ms
    for r, q, node in store.query("SELECT run_id, query, node_type FROM query_node_times WHERE rank = 1 "
                                  "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [all_runs]):
        dominant.setdefault(q, {})[r] = node
    b = item.baseline
    base_v = None
    if b is not None:
        if b.factor != item.columns or b.value is None:
            raise item.error('rows = "queries": baseline must be { factor = <the columns factor>, value = … }')
        base_v = str(b.value)
        if base_v not in {str(v) for v, _ in conds}:
            raise item.error(f"baseline {b.factor} = {b.value!r} has no query runs")
    base_runs = next((rs for v, rs in conds if str(v) == base_v), [])
    header_row = [{"text": words.both("table_query"), "colspan": 1, "rowspan": 1}]
    columns = [{"text": words.both("table_query"), "kind": "factor", "baseline": False}]
    plan: list[tuple[str, str | None, list[str]]] = []
    for v, rs in conds:
        plan.append(("value", v, rs))
        if base_v is not None and str(v) != base_v:
            plan.append(("compare", v, rs))
    if any(r in dominant.get(q, {}) for q in dominant for r in conds[-1][1]):  # (timed alone: no plans)
        plan.append(("node", conds[-1][0], conds[-1][1]))
    for what, v, _ in plan:
        label = both(lambda l, v=v: _cond_label(report, item, v, l))
        t = {"value": lambda l: f"{label[l]}: {words.t(l, 'table_elapsed_ms')}",
             "compare": lambda l: f"{label[l]}: {words.t(l, 'table_speedup')}",
             "node": lambda l: f"{label[l]}: {words.t(l, 'table_dominant_node')}"}[what]
        text = {l: t(l) for l in LANGS}
        columns.append({"text": text, "kind": {"node": "note"}.get(what, what), "baseline": str(v) == base_v and what == "value"})
        header_row.append({"text": text, "colspan": 1, "rowspan": 1, "kind": columns[-1]["kind"],
                           "baseline": columns[-1]["baseline"]})
    rows = []
    for q in sorted(times, key=query_key):
        cells = [Cell({l: q for l in LANGS}, kind="factor")]
        for what, v, rs in plan:
            coords = {"row": q, "column": str(v)}
            vals = {r: times[q][r] for r in rs if r in times[q]}
            if what == "node":
                nodes = [dominant.get(q, {}).get(r) for r in rs if dominant.get(q, {}).get(r)]
                node = max(set(nodes), key=nodes.count) if nodes else "—"
                cells.append(Cell({l: node for l in LANGS}, None, "note", coords=coords))
                continue
            if any(x is None for x in vals.values()):
                cells.append(Cell(words.both("table_query_failed"), None, "value", sorted(vals), flags=["failed"],
                                  coords=coords))
                continue
            if what == "value":
                cells.append(_value_cell({r: x for r, x in vals.items()}, 1, {**coords, "metric": "query_elapsed_ms"}))
                continue
            base = {r: times[q][r] for r in base_runs if r in times[q]}
            if not vals or not base or any(x is None for x in base.values()):
                cells.append(Cell(words.both("cell_not_measured"), None, "compare", coords=coords))
                continue
            bv, vv = list(base.values()), list(vals.values())
            speedup = statistics.median(bv) / statistics.median(vv) if statistics.median(vv) else None
            vd = noise.compare(vv, bv, higher_is_better=False)  # times: lower is better
            inv = (lambda x: 1 / x if x else None)
            cells.append(Cell({l: f"×{speedup:.2f}" if speedup else "—" for l in LANGS}, speedup, "compare",
                              sorted(vals), flags=[VERDICT_FLAGS[vd.kind]], coords=coords,
                              verdict={"kind": VERDICT_FLAGS[vd.kind], "p": vd.p_value, "lo": inv(vd.ratio_high),
                                       "hi": inv(vd.ratio_low), "n": [vd.n_value, vd.n_baseline]}))
        rows.append(cells)
    return ComputedTable(item, [header_row], columns, rows, all_runs, citations(store, all_runs))


def query_key(q: str):
    m = re.match(r"^([A-Za-z#]*)(\d+)$", q)
    return (m.group(1), int(m.group(2)), "") if m else (q, 0, q)
