"""A report spec against the store: names of metrics, factors and factor values, chart kinds and device
groups that the parsers and the database do not know, with "did you mean" (``spec.validate``'s third
pass; ``app.preflight`` runs it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kansoku import parsers
from kansoku.analysis import figures, tables
from kansoku.spec.validate import Locator, Problem, did_you_mean, item_label, item_paths
from kansoku.store.selection import factor_values, metric_values, outside_scope, scope_condition


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list:
    return v if isinstance(v, list) else []


def store_problems(report, store, *, spec_file: Path | None = None, raw: dict | None = None) -> list[Problem]:
    """Names the spec uses that the parsers and the database do not know, and device groups that
    match no data of the item's runs. ``report`` is a loaded model (spec.model.Report), or None with
    ``spec_file`` and ``raw`` (a spec with schema problems: its names are checked all the same, so
    that one run lists everything; device groups need the model and wait for the next run)."""
    if report is not None:
        spec_file, raw = report.spec_file, report.raw
    check = _NameCheck(report, store, spec_file, raw)
    check.typos()
    compare_ok = check.compares()
    for p, kind, it in item_paths(raw):
        check.item(p, kind, it)
    if report is not None:
        for path, msg in revision_problems(report, store):
            check.add(path, msg)
    for k, c in enumerate(_l(raw.get("compare"))):
        if report is not None and report.scope.declared and k < len(report.compares):
            for msg in compare_scope_problems(report, store, report.compares[k]):
                check.add(("compare", k, "id"), msg)
        if report is not None and k < len(report.compares) and compare_ok[k]:
            for j, msg in compare_host_problems(report, store, report.compares[k], compare_ok[k]):
                check.add(("compare", k, "metrics", j), msg)
    return check.problems


class _NameCheck:
    """The names of one spec against what the parsers and the store know; ``problems`` in the order found."""

    def __init__(self, report, store, spec_file: Path, raw: dict):
        self.report, self.store, self.spec_file, self.raw = report, store, spec_file, raw
        self.loc = Locator(spec_file.read_text(encoding="utf-8"))
        self.problems: list[Problem] = []
        tables.known_roles(store)  # a per-host metric's [role] (cpu_idle_pct[server]) is told from a [selection]
        self.metrics = tables.known_metrics(store)
        self.factors = tables.known_factors(store)
        self.values = factor_values(store)
        self.defs = parsers.metrics()
        self.kinds = set(figures.KINDS)

    def add(self, path: tuple, message: str, item: dict | None = None, kind: str | None = None) -> None:
        self.problems.append(Problem(self.spec_file, self.loc.line(path), path, message, item_label(self.raw, path)))

    def metric(self, path: tuple, name: Any, it: dict, kind: str) -> None:
        if not isinstance(name, str):
            return
        base, sel = tables.split_metric(name)
        if base not in self.metrics:
            self.add(path, f"unknown metric {base!r}" + (did_you_mean(base, self.metrics) or
                                                         " (SELECT DISTINCT metric FROM run_metrics lists them)"),
                     it, kind)
            return
        if sel is None:
            return
        md = self.defs.get(base)
        if md is None or md.selection_sql is None:
            takes = sorted(n for n, d in self.defs.items() if d.selection_sql)
            self.add(path, f"metric {base!r} takes no [selection]; metrics that do: {takes}", it, kind)

    def compare_metric(self, path: tuple, name: str) -> None:
        """A [[compare]] metric: a metric, or a per-host metric with the role of one host
        (``cpu_idle_pct[server]``, as ``tools/compare --metric`` takes it); compare takes no [selection]."""
        base, role, sel = tables.parse_metric(name)
        if base not in self.metrics:
            self.add(path, f"unknown metric {base!r}" + (did_you_mean(base, self.metrics) or ""))
            return
        md = self.defs.get(base)
        if sel is not None:
            per_host = md is not None and md.per_host
            roles = sorted(tables.known_roles(self.store))
            self.add(path, f"{name}: a compare metric takes no [selection]" + (
                f"; [ROLE] names one host of a run, one of {roles}" if per_host else
                f"; metric {base!r} is not measured per host and takes no [role] either"))
        elif role is not None and (md is None or not md.per_host):
            self.add(path, f"{name}: metric {base!r} is not measured per host and takes no [role]")

    def factor(self, path: tuple, name: Any, it: dict | None, kind: str | None) -> bool:
        if isinstance(name, str) and name not in self.factors:
            self.add(path, f"unknown factor {name!r}" + (did_you_mean(name, self.factors) or
                                                         f"; the database has {sorted(self.factors)}"), it, kind)
            return False
        return isinstance(name, str)

    def value(self, path: tuple, factor: str, value: Any, it: dict, kind: str) -> bool:
        v = tables._canon(value)
        have = self.values.get(factor, set())
        if v not in have:
            shown = sorted(have, key=tables.factor_sort_key(self.report, factor))
            self.add(path, f"{factor} = {v!r} matches no run" + (did_you_mean(v, have) or
                                                                 f"; values of {factor}: {shown[:20]}"), it, kind)
            return False
        return True

    def typos(self) -> None:
        """[factors.X] and [metrics.X] may name what the database does not hold yet; only a name that is
        absent *and* very close to one it holds is taken for a typo. (Factor values are left alone:
        "hdd" and "ssd", "checksums-on" and "-off" are close and both legitimate.)"""
        for what, table, known in (("factor", "factors", self.factors), ("metric", "metrics", self.metrics)):
            for name in _d(self.raw.get(table)):
                if isinstance(name, str) and name not in known:
                    hint = did_you_mean(name, known, cutoff=0.8)
                    if hint:
                        self.add((table, name), f"no {what} {name!r} in the database{hint}")

    def compares(self) -> list[set[int]]:
        """Per [[compare]]: the indices of its metrics whose hosts can be checked on the data (its selections
        and the metric's name known), so that one run lists every problem."""
        compare_ok: list[set[int]] = []
        for k, c in enumerate(_l(self.raw.get("compare"))):
            c = _d(c)
            before = len(self.problems)
            for side in ("where", "a", "b"):
                for f, cond in _d(c.get(side)).items():
                    if not self.factor(("compare", k, side, f), f, None, None):
                        continue
                    for j, v in enumerate(cond if isinstance(cond, list) else [cond]):
                        self.value(("compare", k, side, f) + ((j,) if isinstance(cond, list) else ()), f, v, c,
                                   "compare")
            sel_ok, good = len(self.problems) == before, set()
            for j, m in enumerate(_l(c.get("metrics"))):
                if isinstance(m, str):
                    before = len(self.problems)
                    self.compare_metric(("compare", k, "metrics", j), m)
                    if sel_ok and len(self.problems) == before:
                        good.add(j)
            compare_ok.append(good)
        return compare_ok

    def item(self, p: tuple, kind: str, it: dict) -> None:
        """A table's or figure's names; with the model and a valid selection, its selection and scope too."""
        where_ok = self.where(p, kind, it)
        for role in ("rows", "columns", "x", "series", "row_groups"):
            if role == "rows" and it.get(role) in ("metrics", "functions", "queries"):  # rows that are not a factor
                continue
            self.factor(p + (role,), it.get(role), it, kind)
        for k, f in enumerate(_l(it.get("show_factors"))):
            self.factor(p + ("show_factors", k), f, it, kind)
        names = [(p + ("metric",), it["metric"])] if "metric" in it else []
        names += [(p + ("metrics", k), m) for k, m in enumerate(_l(it.get("metrics")))]
        for mp, m in names:
            self.metric(mp, m, it, kind)
        b = _d(it.get("baseline"))
        if "metric" in b:
            self.metric(p + ("baseline", "metric"), b["metric"], it, kind)
        if "published" in b:
            self.metric(p + ("baseline", "published"), b["published"], it, kind)
        if "factor" in b and self.factor(p + ("baseline", "factor"), b["factor"], it, kind) and "value" in b:
            self.value(p + ("baseline", "value"), b["factor"], b["value"], it, kind)
        if kind == "figure" and self.kinds:
            chart = it.get("chart", "line")
            if isinstance(chart, str) and chart not in self.kinds:
                self.add(p + ("chart",), f"unknown chart kind {chart!r}" + (
                    did_you_mean(chart, self.kinds) or f"; kinds: {sorted(self.kinds)}"), it, kind)
        if where_ok:
            for mp, msg in selection_problems(self.report, self.store, p, kind, it, names):
                self.add(mp, msg)
            for msg in scope_problems(self.report, self.store, kind, it):
                self.add(p + (("where",) if "where" in it else ("id",)), msg)

    def where(self, p: tuple, kind: str, it: dict) -> bool:
        """The factors and values of an item's ``where``; True: they are known and the model is loaded."""
        where_ok = self.report is not None
        for f, cond in _d(it.get("where")).items():
            if not self.factor(p + ("where", f), f, it, kind):
                where_ok = False
                continue
            if isinstance(cond, list):
                for k, c in enumerate(cond):
                    where_ok &= self.value(p + ("where", f, k), f, c, it, kind)
            elif not isinstance(cond, dict):
                where_ok &= self.value(p + ("where", f), f, cond, it, kind)
        return where_ok


def revision_problems(report, store) -> list[tuple[tuple, str]]:
    """The revision a measured report prints dated before the last run it speaks for: the cover would say the
    report was issued before its measurements were made."""
    if not (report.scope.campaigns or report.scope.run_prefixes):
        return []
    history = _l(report.raw.get("report", {}).get("revision_history"))
    at = next((i for i, h in enumerate(history) if isinstance(h, dict)
               and str(h.get("revision")) == str(report.revision)), None)
    if at is None or not history[at].get("date"):
        return []
    dated = str(history[at]["date"])[:10]
    params: list[Any] = []
    cond = scope_condition("r.run_id", report.scope, params)
    last = store.query(f"SELECT strftime(r.start_time, '%Y-%m-%d') AS day, r.run_id FROM runs r WHERE r.origin = "
                       f"'measured' AND r.start_time IS NOT NULL AND {cond} ORDER BY r.start_time DESC LIMIT 1", params)
    if not last or last[0][0] <= dated:
        return []
    day, run_id = last[0]
    return [(("report", "revision_history", at, "date"),
             f"revision {report.revision} is dated {dated}, before the last run the report speaks for ({day}, "
             f"{run_id}): date it on or after its measurements, or add a revision that names them")]


def compare_host_problems(report, store, compare, indices: set[int]) -> list[tuple[int, str]]:
    """A [[compare]] metric that the data cannot answer as named: a per-host metric that several hosts of a
    run answer with no role chosen, or a role a run lacks (what the build would stop at: analysis/compare.py
    ``by_host``), each with the metric's index in ``metrics`` (of those in ``indices``)."""
    from kansoku.analysis import compare as cmp  # (its verdicts load numpy: only for a spec with [[compare]])
    defs = parsers.metrics()
    out = []
    for j, name in enumerate(compare.metrics or []):
        if j not in indices:
            continue
        base = tables.parse_metric(name)[0]
        md = defs.get(base)
        if md is None or not md.per_host:
            continue
        sides = [metric_values(store, compare.selection(side), [base], report.scope) for side in ("a", "b")]
        try:
            cmp.by_host(*sides, [name], store, store)
        except cmp.MetricChoiceError as exc:
            out.append((j, str(exc).removeprefix("--metric ")))
    return out


def _outside_words(report, outside: list[tuple[str, str, int]]) -> str:
    declared = {k: list(v) for k, v in (("campaigns", report.scope.campaigns),
                                        ("run_prefixes", report.scope.run_prefixes),
                                        ("transcribed", report.scope.transcribed)) if v}
    runs = sum(n for _, _, n in outside)
    named = ", ".join(f"{kind} {name!r} ({n} run{'s' if n > 1 else ''})" for kind, name, n in outside)
    scope = ", ".join(f"{k} = {v}" for k, v in declared.items())
    return f"reaches {runs} run{'s' if runs > 1 else ''} outside the report's scope ([report.scope] {scope}): {named}"


def scope_problems(report, store, kind: str, it: dict) -> list[str]:
    """A selection that reaches runs its report does not speak for, and does not name them."""
    try:
        item = report.item(it["id"], kind)
    except KeyError:
        return []
    outside = tables.outside_scope(store, item)
    if not outside:
        return []
    return [f"where {_outside_words(report, outside)}; narrow where (e.g. its campaign or published_table), "
            "or name the other campaign in where to take its runs in on purpose"]


def compare_scope_problems(report, store, compare) -> list[str]:
    """A [[compare]] side that selects runs its report does not speak for, without naming them."""
    out = []
    for side in ("a", "b"):
        sel = compare.selection(side)
        params: list[Any] = []
        conds = ["TRUE"]
        for factor, values_of in sorted(sel.items()):
            conds.append("r.run_id IN (SELECT run_id FROM run_factors WHERE factor = ? AND value IN ("
                         + ", ".join("?" for _ in values_of) + "))")
            params += [factor, *values_of]
        outside = outside_scope(store, f"SELECT r.run_id FROM runs r WHERE {' AND '.join(conds)}", params,
                                report.scope, campaigns=tuple(sel.get("campaign", ())),
                                published_tables=tuple(sel.get("published_table", ())))
        if outside:
            out.append(f"compare {compare.id!r} side {side} {_outside_words(report, outside)}; add the report's "
                       "campaign to its where, or name the other campaign on that side on purpose")
    return out


def selection_problems(report, store, p: tuple, kind: str, it: dict, names) -> list[tuple[tuple, str]]:
    """A device group (or device, or CPU) that matches no data of the item's runs is an error: the
    table would otherwise show an empty cell for every run."""
    try:
        item = report.item(it["id"], kind)
    except KeyError:
        return []
    out = []
    groups = report.raw.get("device_groups") or {}
    for mp, m in names:
        if not isinstance(m, str):
            continue
        base, sel = tables.split_metric(m)
        md = parsers.metrics().get(base)
        if sel is None or md is None or md.selection_sql is None:
            continue
        for tok in [t.strip() for t in re.split(r"[+,]", sel) if t.strip()]:
            params: list[Any] = []
            msql, mparams = tables.metric_sql(f"{base}[{tok}]", groups)
            cond = tables.where_sql(item, store, params)
            n = store.query(f"SELECT count(*) FROM {msql} m WHERE m.value IS NOT NULL AND {cond}",
                            mparams + params)[0][0]
            if n:
                continue
            what = md.selection_of or "instance"
            if tok in groups:
                msg = f"device group {tok!r} = {groups[tok]} matches no data of this {kind}'s runs"
            else:
                msg = f"{what} {tok!r} matches no data of this {kind}'s runs" + (
                    did_you_mean(tok, groups) if groups else "")
            out.append((mp, f"{m}: {msg}"))
    return out
