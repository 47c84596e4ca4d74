"""Analysis: report spec items -> numbers, by SQL over the documented views.

Aggregation over repetitions (median, mean, min, max, single run), the number
of runs, a representative run (the run whose value is closest to the
aggregate; companion metrics are taken from it), and comparison with a
baseline (ratio, speed-up, change). No formatting for a language here beyond
the cell texts of the two languages, computed once for site and PDF alike.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from . import parsers
from .spec import LANGS, Baseline, Item, Report, Text
from .store.db import Store

_NUMERIC = re.compile(r"^-?\d+(\.\d+)?$")


@dataclass
class Group:
    """One aggregated value: a metric over the runs sharing some factor values."""

    keys: tuple[str, ...]
    value: float | None
    n: int
    run_ids: list[str]
    representative_run_id: str | None
    transcribed: bool


def factor_sort_key(report: Report | None, factor: str):
    order = (report.factor_order.get(factor) if report else None) or []

    def key(v: str):
        if v in order:
            return (0, order.index(v), 0.0, "")
        if _NUMERIC.match(v):
            return (1, 0, float(v), "")
        return (2, 0, 0.0, v)
    return key


def known_factors(store: Store) -> set[str]:
    return {r[0] for r in store.con.execute("SELECT DISTINCT factor FROM run_factors").fetchall()}


def known_metrics(store: Store) -> set[str]:
    names = set(parsers.metrics())
    names |= {r[0] for r in store.con.execute("SELECT DISTINCT metric FROM run_metrics").fetchall()}
    return names


def where_sql(item: Item, store: Store, params: list[Any]) -> str:
    """SQL conditions on m.run_id for the item's `where` filter: equal, in (list), range ({min, max})."""
    factors = known_factors(store)
    conds = []
    for factor, cond in item.where.items():
        if factor not in factors:
            raise item.error(f"where: unknown factor {factor!r}; the database has {sorted(factors)}")
        sub = "SELECT run_id FROM run_factors WHERE factor = ? AND "
        params.append(factor)
        if isinstance(cond, list):
            sub += "value IN (" + ", ".join("?" for _ in cond) + ")"
            params.extend(str(c) for c in cond)
        elif isinstance(cond, dict):
            bad = set(cond) - {"min", "max"}
            if bad:
                raise item.error(f"where {factor}: a range takes min and max, not {sorted(bad)}")
            parts = []
            if "min" in cond:
                parts.append("TRY_CAST(value AS DOUBLE) >= ?")
                params.append(float(cond["min"]))
            if "max" in cond:
                parts.append("TRY_CAST(value AS DOUBLE) <= ?")
                params.append(float(cond["max"]))
            sub += " AND ".join(parts)
        else:
            sub += "value = ?"
            params.append(str(cond).lower() if isinstance(cond, bool) else str(cond))
        conds.append(f"m.run_id IN ({sub})")
    return " AND ".join(conds) if conds else "TRUE"


def aggregate(store: Store, item: Item, metric: str, group_by: list[str], aggregate: str | None = None) -> list[Group]:
    """Aggregate ``metric`` over the item's runs, grouped by the given factors."""
    agg = aggregate or item.aggregate
    if metric not in known_metrics(store):
        raise item.error(f"unknown metric {metric!r}; known metrics: {sorted(known_metrics(store))}")
    factors = known_factors(store)
    for g in group_by:
        if g not in factors:
            raise item.error(f"unknown factor {g!r}; the database has {sorted(factors)}")
    params: list[Any] = []
    joins = []
    cols = []
    for i, g in enumerate(group_by):
        joins.append(f"JOIN run_factors g{i} ON g{i}.run_id = m.run_id AND g{i}.factor = ?")
        params.append(g)
        cols.append(f"g{i}.value AS k{i}")
    params.append(metric)
    cond = where_sql(item, store, params)
    keys = ", ".join(f"k{i}" for i in range(len(group_by))) or "NULL"
    part = f"PARTITION BY {keys}" if group_by else ""
    sql_agg = {"median": "median", "mean": "avg", "min": "min", "max": "max", "single": "min"}[agg]
    sql = f"""
    WITH base AS (
        SELECT m.run_id, m.value, r.origin {''.join(', ' + c for c in cols)}
        FROM run_metrics m JOIN runs r ON r.run_id = m.run_id AND r.status = 'ok'
        {' '.join(joins)}
        WHERE m.metric = ? AND m.value IS NOT NULL AND NOT isnan(m.value) AND {cond}
    ), w AS (
        SELECT *, {sql_agg}(value) OVER ({part}) AS aggv FROM base
    )
    SELECT {keys}, any_value(aggv) AS value, count(*) AS n, list(run_id ORDER BY run_id) AS run_ids,
           first(run_id ORDER BY abs(value - aggv), run_id) AS representative_run_id,
           bool_or(origin = 'transcribed') AS transcribed
    FROM w GROUP BY ALL
    """
    rows = store.con.execute(sql, params).fetchall()
    out = []
    k = len(group_by)
    for r in rows:
        keys_t = tuple(r[:k]) if group_by else ()
        g = Group(keys_t, r[k + (0 if group_by else 1)], r[k + (1 if group_by else 2)],
                  r[k + (2 if group_by else 3)], r[k + (3 if group_by else 4)], bool(r[k + (4 if group_by else 5)]))
        if agg == "single" and g.n != 1:
            raise item.error(f"aggregate = 'single' but {g.n} runs match {dict(zip(group_by, keys_t))}: "
                             f"{g.run_ids[:4]}; narrow `where` or choose median/mean")
        out.append(g)
    return out


def run_metric(store: Store, run_id: str, metric: str) -> float | None:
    r = store.con.execute("SELECT value FROM run_metrics WHERE run_id = ? AND metric = ?", [run_id, metric]).fetchone()
    return None if r is None else r[0]


# -- formatting -----------------------------------------------------------------

def fmt_number(v: float | None, digits: int) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:.{digits}f}"


def compare(value: float | None, base: float | None, how: str) -> float | None:
    if value is None or base is None or base == 0 or (how == "speedup" and value == 0):
        return None
    if how == "ratio":
        return value / base
    if how == "speedup":
        return base / value
    return value / base - 1.0


def fmt_compare(x: float | None, fmt: str, digits: int, lang: str) -> str:
    if x is None:
        return "—"
    if fmt == "percent":
        return f"{x * 100:.{digits}f} %"
    if fmt == "times":
        return f"×{x:.{digits}f}"
    if fmt == "change":
        pct = x * 100
        mag = f"{abs(pct):.{digits}f}"
        if round(pct, digits) == 0:
            return f"{0:.{digits}f}%" if lang == "ja" else f"{0:.{digits}f} %"
        if pct < 0:
            return f"▲{mag}%" if lang == "ja" else f"\u2212{mag} %"
        return f"+{mag}%" if lang == "ja" else f"+{mag} %"
    return f"{x:.{digits}f}"


def metric_label(metric: str, lang: str, with_unit: bool = True) -> str:
    md = parsers.metrics().get(metric)
    if md is None:
        return metric
    label = md.label_ja if lang == "ja" else md.label_en
    if with_unit and md.unit and md.unit.lower() != label.lower():
        return f"{label} ({md.unit})"
    return label


def factor_value_label(report: Report, factor: str, value: str, lang: str) -> str:
    lab = report.factor_labels.get(factor, {}).get(value)
    return lab.get(lang) if lab else value


def factor_name(report: Report, factor: str, lang: str) -> str:
    t = report.factor_names.get(factor)
    return t.get(lang) if t else factor


# -- tables ---------------------------------------------------------------------

@dataclass
class Cell:
    text: dict[str, str]
    value: float | None = None
    kind: str = "value"  # 'factor' | 'value' | 'count' | 'compare'
    runs: list[str] = field(default_factory=list)
    representative: str | None = None
    flags: list[str] = field(default_factory=list)  # 'baseline', 'transcribed', 'mismatch'

    def as_json(self) -> dict:
        d: dict[str, Any] = {"t": self.text if self.text["ja"] != self.text["en"] else self.text["ja"], "k": self.kind}
        if self.value is not None:
            d["v"] = self.value
        if self.runs:
            d["runs"] = self.runs
        if self.representative:
            d["rep"] = self.representative
        if self.flags:
            d["flags"] = self.flags
        return d


@dataclass
class ComputedTable:
    item: Item
    header: list[list[dict]]  # rows of {text: {ja,en}, colspan, rowspan, kind}
    columns: list[dict]       # leaf columns: {text, kind, baseline}
    rows: list[list[Cell]]
    runs: list[str]

    def as_json(self) -> dict:
        it = self.item
        return {
            "id": it.id, "number": it.number, "kind": "table",
            "label": {lang: it.prefix(lang) for lang in LANGS},
            "caption": it.caption.as_dict(),
            "footnote": it.footnote.as_dict() if it.footnote else None,
            "header": self.header, "columns": self.columns,
            "rows": [[c.as_json() for c in row] for row in self.rows],
            "runs": self.runs,
        }

    def csv(self, lang: str) -> str:
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([c["text"][lang] for c in self.columns])
        for row in self.rows:
            w.writerow([c.text[lang] if c.value is None or c.kind == "factor" else repr_num(c.value) for c in row])
        return buf.getvalue()


def repr_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def both(f) -> dict[str, str]:
    return {lang: f(lang) for lang in LANGS}


def compute_table(store: Store, report: Report, item: Item) -> ComputedTable:
    rows_f = item.rows
    cols_f = item.columns
    group_by = [rows_f] + ([cols_f] if cols_f else [])
    first = item.metrics[0]
    main = aggregate(store, item, first, group_by)
    if not main:
        raise item.error(f"no runs match: metric {first!r}, where {item.where}")
    by_key = {g.keys: g for g in main}
    row_vals = sorted({g.keys[0] for g in main}, key=factor_sort_key(report, rows_f))
    col_vals = sorted({g.keys[1] for g in main}, key=factor_sort_key(report, cols_f)) if cols_f else [None]

    companions: dict[str, dict[tuple, Group]] = {}
    for m in item.metrics[1:]:
        if item.companions == "aggregate":
            companions[m] = {g.keys: g for g in aggregate(store, item, m, group_by)}
        else:
            companions[m] = {}
            if m not in known_metrics(store):
                raise item.error(f"unknown metric {m!r}")

    b = item.baseline
    b_metric = (b.metric or first) if b else first
    if b and b.metric and b.metric not in item.metrics:
        raise item.error(f"baseline metric {b.metric!r} is not one of the table's metrics {item.metrics}")
    if b and b.factor is not None:
        if b.factor == cols_f:
            if b.value not in col_vals:
                raise item.error(f"baseline {b.factor} = {b.value!r} has no data; values: {col_vals}")
        elif b.factor == rows_f:
            if b.value not in row_vals:
                raise item.error(f"baseline {b.factor} = {b.value!r} has no data; values: {row_vals}")
        else:
            raise item.error(f"baseline factor {b.factor!r} must be the rows ({rows_f!r}) or columns ({cols_f!r}) factor")

    def digits(metric: str) -> int:
        return int(item.digits.get(metric, item.digits.get("default", 2)))

    def value_of(metric: str, key: tuple) -> tuple[float | None, Group | None]:
        g = by_key.get(key)
        if metric == first:
            return (g.value if g else None), g
        if item.companions == "aggregate":
            cg = companions[metric].get(key)
            return (cg.value if cg else None), cg
        if g is None or g.representative_run_id is None:
            return None, None
        return run_metric(store, g.representative_run_id, metric), g

    # leaf columns and header
    columns: list[dict] = [{"text": both(lambda l: factor_name(report, rows_f, l)), "kind": "factor", "baseline": False}]
    header_top: list[dict] = [{"text": columns[0]["text"], "colspan": 1, "rowspan": 2 if cols_f else 1}]
    header_leaf: list[dict] = []
    plan: list[tuple[str, Any, str]] = []  # (kind, col_value, metric)
    for cv in col_vals:
        leafs = []
        for m in item.metrics:
            leafs.append(("value", cv, m))
            if item.count and m == first:
                leafs.append(("count", cv, m))
        is_base_col = b is not None and b.factor == cols_f and cv == b.value
        if b is not None and not is_base_col:
            leafs.append(("compare", cv, b_metric))
        for kind, _, m in leafs:
            if kind == "value":
                t = both(lambda l, m=m: metric_label(m, l))
            elif kind == "count":
                t = {"ja": "回数", "en": "runs"}
            else:
                t = both(lambda l: compare_label(report, b, l, item))
            col = {"text": t, "kind": kind, "baseline": is_base_col}
            if cols_f:  # leaf text for CSV: "TPS (checksums off)"
                col["text"] = {l: f"{t[l]} ({factor_value_label(report, cols_f, cv, l)})" for l in LANGS}
            columns.append(col)
            header_leaf.append({"text": t, "colspan": 1, "rowspan": 1, "kind": kind, "baseline": is_base_col})
        if cols_f:
            header_top.append({"text": both(lambda l, cv=cv: factor_value_label(report, cols_f, cv, l)),
                               "colspan": len(leafs), "rowspan": 1, "baseline": is_base_col})
        plan.extend(leafs)
    header = [header_top, header_leaf] if cols_f else [header_top[:1] + header_leaf]

    rows_out: list[list[Cell]] = []
    first_row_vals: dict[Any, float | None] = {}
    all_runs: set[str] = set()
    for ri, rv in enumerate(row_vals):
        cells = [Cell(both(lambda l, rv=rv: factor_value_label(report, rows_f, rv, l)), kind="factor",
                      flags=["baseline"] if b and b.factor == rows_f and rv == b.value else [])]
        for kind, cv, m in plan:
            key = (rv, cv) if cols_f else (rv,)
            v, g = value_of(m, key)
            flags = ["transcribed"] if g and g.transcribed else []
            if kind == "value":
                if g:
                    all_runs.update(g.run_ids)
                cells.append(Cell(both(lambda l, v=v, m=m: fmt_number(v, digits(m))), v, "value",
                                  g.run_ids if g else [], g.representative_run_id if g else None, flags))
            elif kind == "count":
                cells.append(Cell(both(lambda l, g=g: str(g.n) if g else "—"), float(g.n) if g else None, "count"))
            else:
                base = _baseline_value(b, m, rv, cv, value_of, cols_f, rows_f, first_row_vals, ri)
                x = compare(v, base, b.compare)
                cells.append(Cell(both(lambda l, x=x: fmt_compare(x, b.format, b.digits, l)), x, "compare",
                                  flags=flags))
            if ri == 0:
                first_row_vals[(cv, m)] = v
        rows_out.append(cells)
    return ComputedTable(item, header, columns, rows_out, sorted(all_runs))


def _baseline_value(b: Baseline, metric, rv, cv, value_of, cols_f, rows_f, first_row_vals, ri):
    if b.fixed is not None:
        return float(b.fixed)
    if b.first_row:
        return first_row_vals.get((cv, metric)) if ri > 0 else value_of(metric, (rv, cv) if cols_f else (rv,))[0]
    if b.factor == cols_f:
        return value_of(metric, (rv, b.value))[0]
    return value_of(metric, (b.value, cv) if cols_f else (b.value,))[0]


def compare_label(report: Report, b: Baseline, lang: str, item: Item) -> str:
    if b.label:
        return b.label.get(lang)
    if b.factor:
        ref = factor_value_label(report, b.factor, b.value, lang)
    elif b.first_row:
        ref = "先頭行" if lang == "ja" else "first row"
    else:
        ref = fmt_number(b.fixed, 2)
    names = {
        ("ratio", "ja"): f"{ref} 比", ("ratio", "en"): f"ratio to {ref}",
        ("speedup", "ja"): f"{ref} からの高速化", ("speedup", "en"): f"speed-up over {ref}",
        ("change", "ja"): f"{ref} からの変化", ("change", "en"): f"change from {ref}",
    }
    return names[(b.compare, lang)]
