"""Analysis: report spec items -> numbers, by SQL over the documented views.

Aggregation over repetitions (median, mean, min, max, single run), the number
of runs, a representative run (the run whose value is closest to the
aggregate; companion metrics are taken from it), and comparison with a
baseline (ratio, speed-up, change; ``auto`` follows the metric's direction).
Values transcribed from published reports (origin 'transcribed') are queried
like measured ones and flagged in every cell they reach; where the spec names
the report's printed derived value, it is checked against the value computed
from the printed inputs, with the tolerance their printed precision implies
(interval arithmetic, see :func:`check_published`). No formatting for a
language here beyond the cell texts of the two languages, computed once for
site and PDF alike.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from kansoku import parsers, words
from kansoku.analysis import noise, steady
from kansoku.analysis.table_registry import kind_of, table_kind
from kansoku.model import Cell, CellNote, Column, HeaderCell, Provenance, RowGroup, Table
from kansoku.spec.model import LANGS, Baseline, Item, Report, Scope
from kansoku.store import selection
from kansoku.store.db import RUNS, Store
from kansoku.store.selection import scope_condition
from kansoku.values import stable

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
    # Rounding error bound of the value: 0 for measured data; for transcribed values half a
    # unit of the last printed digit (the largest over the group: median, mean, min and max
    # of values each known to ±h are known to ±h).
    half_unit: float = 0.0
    printed: str | None = None  # the number as printed, when the group is one transcribed value
    run_values: dict[str, float] = field(default_factory=dict)  # each run's own value


def factor_sort_key(report: Report | None, factor: str):
    order = (report.factor_order.get(factor) if report else None) or []

    def key(v: str):
        if v in order:
            return (0, order.index(v), 0.0, "")
        if _NUMERIC.match(v):
            return (1, 0, float(v), "")
        return (2, 0, 0.0, v)
    return key


def _cached(store: Store, name: str, compute):
    """Per-store cache (a build opens the store read-only, so these do not change under us)."""
    cache = store.__dict__.setdefault("_kansoku_analysis_cache", {})
    if name not in cache:
        cache[name] = compute()
    return cache[name]


def known_factors(store: Store) -> set[str]:
    return _cached(store, "factors", lambda: {
        r[0] for r in store.query("SELECT DISTINCT factor FROM run_factors")})


def known_metrics(store: Store) -> set[str]:
    """Metric names: those parsers define, and those named by data (transcribed values)."""
    def compute() -> set[str]:
        names = set(parsers.metrics())
        for mod in parsers.modules():
            if mod.metrics_sql:
                try:
                    names |= {r[0] for r in store.query(
                        f"SELECT DISTINCT metric FROM ({mod.metrics_sql})")}
                except Exception:  # an older database without the module's tables
                    pass
        return names
    return _cached(store, "metrics", compute)


_SELECTION = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)\[(?P<a>[^\]]+)\](?:\[(?P<b>[^\]]+)\])?$")
# Roles a per-host metric's [bracket] names without any data to say so; the roles of the store's runs
# (run_hosts.role) are added by known_roles (docs/spec.md, "Hosts and roles").
WELL_KNOWN_ROLES = {"server", "client", "standby", "primary"}
_roles_seen: set[str] = set()


def parse_metric(metric: str) -> tuple[str, str | None, str | None]:
    """A spec's metric name -> (metric, role, selection): 'cpu_idle_pct[server]' -> ('cpu_idle_pct', 'server',
    None); 'disk_read_kb_s[hdd]' -> (.., None, 'hdd'); 'disk_read_kb_s[server][hdd]' -> (.., 'server', 'hdd').
    A single bracket names a role when the metric is measured per host and the name is a role."""
    m = _SELECTION.match(metric)
    if not m:
        return metric, None, None
    base, a, b = m.group("base"), m.group("a").strip(), m.group("b")
    if b is not None:
        return base, a, b.strip()
    md = parsers.metrics().get(base)
    if md is not None and md.per_host and a in (WELL_KNOWN_ROLES | _roles_seen):
        return base, a, None
    return base, None, a


def split_metric(metric: str) -> tuple[str, str | None]:
    """'disk_read_kb_s[hdd]' -> ('disk_read_kb_s', 'hdd'); a plain name -> (name, None); a role is left out
    (see :func:`parse_metric`)."""
    base, _, sel = parse_metric(metric)
    return base, sel


def known_roles(store: Store) -> set[str]:
    """The roles of the store's hosts (run_hosts), with the well-known ones."""
    def compute() -> set[str]:
        try:
            roles = {r[0] for r in store.query("SELECT DISTINCT role FROM run_hosts WHERE role IS NOT NULL")}
        except Exception:  # a store made before hosts were kept
            roles = set()
        _roles_seen.update(roles)
        return roles | WELL_KNOWN_ROLES
    return _cached(store, "roles", compute)


def role_label(role: str, lang: str) -> str:
    """A role as a reader sees it: the words role_<name> (server, client, standby, primary), else the name."""
    key = f"role_{role}"
    return words.t(lang, key) if words.has(key, lang) else role


def selection_values(sel: str, groups: dict[str, list[str]] | None) -> list[str]:
    """'hdd+nvme0n1' -> the devices of group hdd (from the spec's [device_groups]) and nvme0n1."""
    out: list[str] = []
    for tok in re.split(r"[+,]", sel):
        tok = tok.strip()
        if tok:
            out.extend((groups or {}).get(tok, [tok]))
    return out


def check_metric(store: Store, item: Item, metric: str) -> None:
    """Unknown metrics and selections a metric does not take are spec errors naming the item; so are a
    per-host metric that several hosts of a run answer without a role chosen, and a role a run lacks."""
    known_roles(store)
    base, role, sel = parse_metric(metric)
    known = known_metrics(store)
    if base not in known:
        raise item.error(f"unknown metric {metric!r}; known metrics: {sorted(known)}")
    md = parsers.metrics().get(base)
    if role is not None and (md is None or not md.per_host):
        raise item.error(f"{metric}: metric {base!r} is not measured per host and takes no [role]")
    if md is not None and md.per_host:
        check_hosts(store, item, metric)
    if sel is not None:
        md = parsers.metrics().get(base)
        if md is None or md.selection_sql is None:
            takes = sorted(n for n, d in parsers.metrics().items() if d.selection_sql)
            raise item.error(f"metric {base!r} takes no [selection]; metrics that do: {takes}")
        for tok in (t.strip() for t in re.split(r"[+,]", sel) if t.strip()):  # a name without data: a typo
            msql, params = metric_values_sql(store, f"{base}[{tok}]", item.device_groups)
            if not store.query(f"SELECT count(*) FROM {msql} m WHERE m.value IS NOT NULL", params)[0][0]:
                what = "device group" if tok in item.device_groups else md.selection_of or "selection"
                raise item.error(f"{metric}: {what} {tok!r} matches no data in the database")


def metric_sql(metric: str, groups: dict[str, list[str]] | None = None) -> tuple[str, list[Any]]:
    """A subquery yielding run_id, value for one metric: the rows ``run_metrics`` has for it,
    read from the defining SQL directly (the union view would compute every metric).
    ``name[selection]`` computes the metric over the selected devices or CPUs. A metric measured per host
    yields ``run_id, host, role, value`` (one row per host; only the role's hosts when one is named):
    :func:`metric_values_sql` picks each run's host."""
    base, role, sel = parse_metric(metric)
    md = parsers.metrics().get(base)
    if md is not None and md.per_host:
        return _host_rows_sql(md, role, sel, groups)
    if sel is not None:
        md = parsers.metrics()[base]
        values = ", ".join("'" + v.replace("'", "''") + "'" for v in selection_values(sel, groups))
        return "(" + md.selection_sql.format(selection=f"({values})") + ")", []
    parts, params = [], []
    md = parsers.metrics().get(metric)
    if md is not None:
        parts.append(f"SELECT run_id, CAST(value AS DOUBLE) AS value FROM ({md.sql})")
    for mod in parsers.modules():
        if mod.metrics_sql:
            parts.append(f"SELECT run_id, CAST(value AS DOUBLE) AS value FROM ({mod.metrics_sql}) WHERE metric = ?")
            params.append(metric)
    return "(" + " UNION ALL ".join(parts) + ")", params


def _host_rows_sql(md, role: str | None, sel: str | None, groups) -> tuple[str, list[Any]]:
    """run_id, host, role, value of a per-host metric (the role's hosts only when one is named), with the
    metric's transcribed values (no host) when no selection is asked."""
    sql = md.sql
    if sel is not None:
        values = ", ".join("'" + v.replace("'", "''") + "'" for v in selection_values(sel, groups))
        sql = md.selection_sql.format(selection=f"({values})")
    parts = [f"SELECT run_id, host::VARCHAR AS host, role::VARCHAR AS role, CAST(value AS DOUBLE) AS value "
             f"FROM ({sql})" + (" WHERE role = ?" if role is not None else "")]
    params: list[Any] = [role] if role is not None else []
    if sel is None:  # transcribed values of the metric (no host): published tables
        parts += _published_parts(md.name, params)
    return "(" + " UNION ALL ".join(parts) + ")", params


def _published_parts(metric: str, params: list[Any]) -> list[str]:
    """SELECTs of the values named by data (transcribed published values) of one metric, as per-host rows
    without a host."""
    parts = []
    for mod in parsers.modules():
        if mod.metrics_sql:
            parts.append(f"SELECT run_id, NULL::VARCHAR AS host, NULL::VARCHAR AS role, CAST(value AS DOUBLE) AS value "
                          f"FROM ({mod.metrics_sql}) WHERE metric = ?")
            params.append(metric)
    return parts


def metric_values_sql(store: Store, metric: str, groups: dict[str, list[str]] | None = None) -> tuple[str, list[Any]]:
    """Like :func:`metric_sql`, but the metric's defining query runs once per build: its (run_id, value)
    rows are kept (the store is opened read-only for a build) and handed back to DuckDB as two lists. A
    metric over a view that computes every run at once (the steady-state views) is then computed once,
    not once per table and figure that uses it."""
    ids, values = host_resolved(store, metric, groups)[:2]
    return "(SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::DOUBLE[]) AS value)", [ids, values]


def host_resolved(store: Store, metric: str, groups: dict[str, list[str]] | None = None):
    """(run ids, values, ambiguous, lacking) of one metric, computed once per build. A metric measured per
    host gives each run the value of its one host that answers (with the role named, that role's host;
    without, the run's only host with a value, or the host of the campaign's default_role). Runs where
    several hosts answer are ``ambiguous`` (run -> [(host, role)]), never averaged; runs with values but
    none from the named role are ``lacking`` (run -> [(host, role)] of the hosts it has)."""
    known_roles(store)
    key = ("metric_values", metric, repr(sorted((groups or {}).items())))
    cache = store.__dict__.setdefault("_kansoku_analysis_cache", {})
    if key in cache:
        return cache[key]
    base, role, _ = parse_metric(metric)
    md = parsers.metrics().get(base)
    if md is None or not md.per_host:
        msql, params = metric_sql(metric, groups)
        rows = store.per_run(f"SELECT m.run_id, m.value FROM {msql} m WHERE {RUNS} ORDER BY m.run_id", params)
        cache[key] = ([r[0] for r in rows], [stable(r[1]) for r in rows], {}, {})
        return cache[key]
    msql, params = _host_rows_sql(md, None, parse_metric(metric)[2], groups)
    # (a run's rows are its own: a build after one new run computes that run's alone, Store.per_run)
    rows = store.per_run(f"SELECT m.run_id, m.host, m.role, m.value FROM {msql} m "
                         f"WHERE m.value IS NOT NULL AND NOT isnan(m.value) AND {RUNS} ORDER BY m.run_id, m.host",
                         params)
    defaults = dict(store.query("SELECT run_id, default_role FROM runs WHERE default_role IS NOT NULL"))
    by_run: dict[str, list[tuple]] = {}
    for r in rows:
        by_run.setdefault(r[0], []).append(r)
    ids, values, ambiguous, lacking = [], [], {}, {}
    for run_id, rs in by_run.items():
        if role is not None:
            cand = [r for r in rs if r[2] == role or (r[1] is None and r[2] is None)]  # transcribed: no host
            if not cand:
                lacking[run_id] = sorted({(r[1], r[2]) for r in rs}, key=str)
                continue
        else:
            cand = rs
            if len({(r[1], r[2]) for r in cand}) > 1 and defaults.get(run_id):
                cand = [r for r in cand if r[2] == defaults[run_id]] or cand
        if len({(r[1], r[2]) for r in cand}) > 1:
            ambiguous[run_id] = sorted({(r[1], r[2]) for r in cand}, key=str)
            continue
        ids.append(run_id)
        values.append(stable(cand[0][3]))
    cache[key] = (ids, values, ambiguous, lacking)
    return cache[key]


def _hosts_text(hosts: list[tuple]) -> str:
    """'dbserver (server), pgclient (client)'."""
    return ", ".join(f"{h} ({r})" if h else f"the run's own host ({r})" for h, r in hosts)


def check_hosts(store: Store, item: Item, metric: str, where: dict[str, Any] | None = None) -> None:
    """Spec errors (exit 3) for a per-host metric over the item's runs: several hosts answer and no role is
    chosen (naming both hosts); the named role is missing from a run (naming the run and the role)."""
    base, role, _ = parse_metric(metric)
    _, _, ambiguous, lacking = host_resolved(store, metric, item.device_groups)
    params: list[Any] = []
    cond = where_sql(item, store, params, where)
    runs = [r[0] for r in store.query(f"SELECT m.run_id FROM runs m WHERE m.status = 'ok' AND {cond} "
                                      "ORDER BY m.run_id", params)]
    for run_id in runs:
        if run_id in ambiguous:
            hosts = ambiguous[run_id]
            roles = sorted({r for _, r in hosts if r})
            choose = " or ".join(f"{base}[{r}]" for r in roles) if len(roles) > 1 else \
                "one role per host (host.toml role)"
            raise item.error(
                f"{metric}: run {run_id!r} has this metric from {len(hosts)} hosts, {_hosts_text(hosts)}; a table "
                f"or figure never averages hosts: choose {choose}, or declare default_role in the campaign's "
                ".kansoku-campaign (docs/spec.md, \"Hosts and roles\")")
    if role is None:
        return
    have: dict[str, list[tuple]] = {}
    try:
        for run_id, host, r in store.query(
                "SELECT h.run_id, h.host, h.role FROM run_hosts h JOIN runs x USING (run_id) "
                "WHERE x.origin = 'measured' AND h.run_id IN (SELECT unnest(?::VARCHAR[]))", [runs]):
            have.setdefault(run_id, []).append((host, r))
    except Exception:  # a store made before hosts were kept: the values tell
        pass
    for run_id in runs:
        hosts = lacking.get(run_id) or ([] if run_id not in have or any(r == role for _, r in have[run_id])
                                        else have[run_id])
        if hosts:
            raise item.error(f"{metric}: run {run_id!r} has no host with role {role!r} (its hosts: "
                             f"{_hosts_text(hosts)}); name a role the run has, or lay its files out as "
                             "docs/ingest.md says (\"Hosts in a run\")")


def _has_published(store: Store) -> bool:
    return _cached(store, "has_published", lambda: bool(store.query(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'published_values'")[0][0]))


def check_factor(store: Store, item: Item, factor: str, role: str) -> None:
    factors = known_factors(store)
    if factor not in factors:
        raise item.error(f"{role}: unknown factor {factor!r}; the database has {sorted(factors)}")


def where_sql(item: Item, store: Store, params: list[Any], where: dict[str, Any] | None = None) -> str:
    """SQL conditions on m.run_id for the item's `where` filter: equal, in (list), range ({min, max})."""
    factors = known_factors(store)
    conds = []
    for factor, cond in (item.where if where is None else where).items():
        if factor not in factors:
            raise item.error(f"where: unknown factor {factor!r}; the database has {sorted(factors)}")
        sub = "SELECT run_id FROM run_factors WHERE factor = ? AND "
        params.append(factor)
        if isinstance(cond, list):
            sub += "value IN (" + ", ".join("?" for _ in cond) + ")"
            params.extend(_canon(c) for c in cond)
        elif isinstance(cond, dict):
            bad = set(cond) - {"min", "max"}
            if bad or not cond:
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
            params.append(_canon(cond))
        conds.append(f"m.run_id IN ({sub})")
    if item.scope.declared:
        conds.append(scope_sql(item, params))
    return " AND ".join(conds) if conds else "TRUE"


def named_outside(item: Item) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The campaigns and published tables the item's ``where`` names: taken in on purpose, in scope or not."""
    def names(factor: str) -> tuple[str, ...]:
        cond = item.where.get(factor)
        if cond is None or isinstance(cond, dict):
            return ()
        return tuple(_canon(c) for c in (cond if isinstance(cond, list) else [cond]))
    return names("campaign"), names("published_table")


def scope_sql(item: Item, params: list[Any]) -> str:
    """SQL condition on m.run_id: the runs of the item's report scope, and those its ``where`` names."""
    campaigns, published = named_outside(item)
    return scope_condition("m.run_id", item.scope, params, campaigns=campaigns, published_tables=published)


def outside_scope(store: Store, item: Item, *, named: bool = False) -> list[tuple[str, str, int]]:
    """(kind, name, runs) of the runs the item's ``where`` reaches outside its report's scope (nothing when
    the report declares none). Those it does not name are a spec error (``named=False``); those it names
    (``named_outside``) are taken in on purpose, and its note says so (``named=True``)."""
    if not item.scope.declared:
        return []
    params: list[Any] = []
    cond = where_sql(replace(item, scope=Scope()), store, params)
    everything = selection.outside_scope(store, f"SELECT m.run_id FROM runs m WHERE {cond}", params, item.scope)
    campaigns, published = named_outside(item)
    return [o for o in everything
            if ((o[0] == "campaign" and o[1] in campaigns) or (o[0] == "published table" and o[1] in published)) == named]


def _canon(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def aggregate(store: Store, item: Item, metric: str, group_by: list[str], aggregate: str | None = None,
              where: dict[str, Any] | None = None) -> list[Group]:
    """Aggregate ``metric`` over the item's runs (or those of ``where``), grouped by the given factors.

    A figure asks the same aggregate for its data, its runs and its representative runs: the query runs
    once per build (the store is opened read-only) and each caller gets its own copy of the groups."""
    key = ("aggregate", repr(item), metric, tuple(group_by), aggregate, repr(where))
    cache = store.__dict__.setdefault("_kansoku_analysis_cache", {})
    if key not in cache:
        cache[key] = _aggregate(store, item, metric, group_by, aggregate, where)
    return [replace(g, run_ids=list(g.run_ids), run_values=dict(g.run_values)) for g in cache[key]]


def _aggregate(store: Store, item: Item, metric: str, group_by: list[str], aggregate: str | None,
               where: dict[str, Any] | None) -> list[Group]:
    agg = aggregate or item.aggregate
    check_metric(store, item, metric)
    for g in group_by:
        check_factor(store, item, g, "grouping")
    params: list[Any] = []
    joins = []
    cols = []
    for i, g in enumerate(group_by):
        joins.append(f"JOIN run_factors g{i} ON g{i}.run_id = m.run_id AND g{i}.factor = ?")
        params.append(g)
        cols.append(f"g{i}.value AS k{i}")
    if _has_published(store):
        pub_cols = ", coalesce(pv.half_unit, 0.0) AS hu, pv.printed"
        pub_join = "LEFT JOIN published_values pv ON pv.transcribed_run_id = m.run_id AND pv.metric = ?"
        params.append(metric)
    else:
        pub_cols, pub_join = ", 0.0 AS hu, NULL::VARCHAR AS printed", ""
    msql, mparams = metric_values_sql(store, metric, item.device_groups)
    params = mparams + params
    cond = where_sql(item, store, params, where)
    keys = ", ".join(f"k{i}" for i in range(len(group_by))) or "NULL"
    part = f"PARTITION BY {keys}" if group_by else ""
    sql_agg = {"median": "median", "mean": "avg", "min": "min", "max": "max", "single": "min"}[agg]
    sql = f"""
    WITH base AS (
        SELECT m.run_id, m.value, r.origin {''.join(', ' + c for c in cols)} {pub_cols}
        FROM {msql} m JOIN runs r ON r.run_id = m.run_id AND r.status = 'ok'
        {' '.join(joins)}
        {pub_join}
        WHERE m.value IS NOT NULL AND NOT isnan(m.value) AND {cond}
    ), w AS (
        SELECT *, {sql_agg}(value) OVER ({part}) AS aggv FROM base
    )
    SELECT {keys}, any_value(aggv) AS value, count(*) AS n, list(run_id ORDER BY run_id) AS run_ids,
           first(run_id ORDER BY abs(value - aggv), run_id) AS representative_run_id,
           bool_or(origin = 'transcribed') AS transcribed, max(hu) AS half_unit,
           CASE WHEN count(*) = 1 THEN any_value(printed) END AS printed,
           map(list(run_id ORDER BY run_id), list(value ORDER BY run_id)) AS run_values,
           count(DISTINCT origin) AS origins
    FROM w GROUP BY ALL
    """
    rows = store.query(sql, params)
    out = []
    k = len(group_by)
    off = k if group_by else 1
    for r in rows:
        keys_t = tuple(r[:k]) if group_by else ()
        if r[off + 8] > 1:  # a transcribed number and a measured one are never one value
            raise item.error(f"the cell {dict(zip(group_by, keys_t))} mixes transcribed and measured runs "
                             f"({r[off + 2][:4]}…); narrow `where` (its campaign or published_table)")
        g = Group(keys_t, r[off], r[off + 1], r[off + 2], r[off + 3], bool(r[off + 4]), float(r[off + 5] or 0.0),
                  r[off + 6], dict(r[off + 7] or {}))
        if agg == "single" and g.n != 1:
            raise item.error(f"aggregate = 'single' but {g.n} runs match {dict(zip(group_by, keys_t))}: "
                             f"{g.run_ids[:4]}; narrow `where` or choose median/mean")
        out.append(g)
    return out


def runs_metric_groups(store: Store, run_ids: list[str], metric: str,
                       groups: dict[str, list[str]] | None = None) -> dict[str, Group]:
    """Each run's own value of a metric, as one-run Groups (companion metrics from representative runs),
    in one query."""
    if not run_ids:
        return {}
    msql, params = metric_values_sql(store, metric, groups)
    if _has_published(store):
        pub = ("LEFT JOIN published_values pv ON pv.transcribed_run_id = m.run_id AND pv.metric = ?", [metric],
               "coalesce(pv.half_unit, 0.0), pv.printed")
    else:
        pub = ("", [], "0.0, NULL")
    rows = store.query(
        f"SELECT m.run_id, m.value, r.origin, {pub[2]} FROM {msql} m JOIN runs r ON r.run_id = m.run_id {pub[0]} "
        f"WHERE m.run_id IN (SELECT unnest(?::VARCHAR[]))", params + pub[1] + [run_ids])
    return {rid: Group((), v, 1, [rid], rid, origin == "transcribed", float(hu), printed, {rid: v})
            for rid, v, origin, hu, printed in rows if v is not None}


# -- formatting -----------------------------------------------------------------

def round_text(v: float, digits: int) -> str:
    """``v`` rounded half away from zero to ``digits`` decimals, as printed reports (and
    spreadsheets) round: 86.25 -> '86.3' (Python's format would give '86.2'). The shortest
    repr of the float is rounded, so 0.125 is a tie and 1.0382 * 100 is 103.82.

    The float is first cut to 12 significant digits: a mean of samples printed with two decimals often
    lands on a decimal tie (33.865), which the sum's order makes 33.864999999999995 or 33.865000000000002;
    the same runs must print the same number in every build and in the site and the PDF."""
    if not math.isfinite(v):
        return str(v)
    d = Decimal(f"{float(v):.12g}").quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    if d == 0:
        d = abs(d)
    return f"{d:f}"


def fmt_number(v: float | None, digits: int) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return round_text(v, digits)


def sig_decimals(x: float, significant: int) -> int:
    """Decimals that show ``x`` with ``significant`` significant figures (never an exponent)."""
    if x == 0 or not math.isfinite(x):
        return max(significant - 1, 0)
    return max(significant - 1 - math.floor(math.log10(abs(x))), 0)


def compare(value: float | None, base: float | None, how: str) -> float | None:
    if value is None or base is None or base == 0 or (how == "speedup" and value == 0):
        return None
    if how == "ratio":
        return value / base
    if how == "speedup":
        return base / value
    return value / base - 1.0


def format_scale(fmt: str) -> float:
    """Printed units of a comparison format: percent and change are printed in percent."""
    return 100.0 if fmt in ("percent", "change") else 1.0


def fmt_compare(x: float | None, fmt: str, digits: int, lang: str, significant: int | None = None) -> str:
    if x is None:
        return "—"
    shown = x * format_scale(fmt)
    if significant:
        digits = sig_decimals(shown, significant)
    return fmt_printed(round_text(shown, digits), fmt, lang)


def fmt_printed(num: str, fmt: str, lang: str) -> str:
    """A number already in printed units and precision, dressed as the format prints it."""
    if fmt == "percent":
        return words.t(lang, "percent", num)
    if fmt == "times":
        return f"×{num}"
    if fmt == "change":
        neg = num.startswith("-")
        mag = num.lstrip("+-")
        if float(mag) == 0:
            return words.t(lang, "change_zero", mag)
        return words.t(lang, "change_down" if neg else "change_up", mag)
    return num


def metric_label(metric: str, lang: str, with_unit: bool = True, report: Report | None = None) -> str:
    info = report.metric_info.get(metric) if report else None
    base, role, sel = parse_metric(metric)
    md = parsers.metrics().get(base)
    if info and info.label:
        label = info.label.get(lang)
    elif md is not None:
        label = md.label(lang)
        if sel is not None or role is not None:  # "Disk read [hdd]", "CPU idle [server]"
            label = re.sub(r"\s*[(（].*?[)）]\s*$", "", label) + "".join(
                f" [{x}]" for x in (role_label(role, lang) if role else None, sel) if x)
    else:
        label = metric
    unit = metric_unit(metric, lang, report)
    if with_unit and unit and unit.lower() != label.lower() and f"({unit})" not in label:
        return f"{label} ({unit})"
    return label


def metric_unit(metric: str, lang: str, report: Report | None = None) -> str | None:
    """A metric's unit as a reader reads it ("ms", "%", "TPS"; a unit that is a word in the page's language),
    the spec's [metrics] over the catalogue; None when it has none."""
    info = report.metric_info.get(metric) if report else None
    md = parsers.metrics().get(parse_metric(metric)[0])
    unit = info.unit if info and info.unit is not None else (md.unit if md else None)
    if unit and words.has(f"unit_{unit}", lang):
        unit = words.t(lang, f"unit_{unit}")
    return unit or None


def higher_is_better(report: Report | None, metric: str) -> bool | None:
    info = report.metric_info.get(metric) if report else None
    if info and info.higher_is_better is not None:
        return info.higher_is_better
    md = parsers.metrics().get(split_metric(metric)[0])
    return md.higher_is_better if md else None


def direction(report: Report | None, metric: str) -> str | None:
    """higher / lower (is better) / neither, from the spec's [metrics] or the catalogue; None: unknown."""
    info = report.metric_info.get(metric) if report else None
    if info and info.higher_is_better is not None:
        return "higher" if info.higher_is_better else "lower"
    md = parsers.metrics().get(split_metric(metric)[0])
    return md.direction if md else None


def factor_value_label(report: Report, factor: str, value: str, lang: str) -> str:
    lab = report.factor_labels.get(factor, {}).get(value)
    if lab is None and factor == "study":  # a study unlabelled by the spec is what its chapter is about
        lab = report.study_titles.get(value)
    return lab.get(lang) if lab else value


def factor_text(report: Report, factor: str, value: str, lang: str) -> str:
    """A factor with its value as a reader reads them ("Clients: 8"), never in the factor syntax ``clients=8``."""
    return words.t(lang, "factor_value", name=factor_name(report, factor, lang),
                   value=factor_value_label(report, factor, value, lang))


def factor_name(report: Report, factor: str, lang: str) -> str:
    t = report.factor_names.get(factor)
    if t:
        return t.get(lang)
    # the factors every run has, named in the page's words ("campaign = …" was factor syntax to a reader)
    return words.t(lang, f"run_factor_{factor}") if words.has(f"run_factor_{factor}", lang) else factor


# -- checks -----------------------------------------------------------------------

@dataclass
class Check:
    """A published derived value checked against the one computed from the printed inputs."""

    published: float          # in printed units (99.93 for 99.93 %)
    printed: str | None
    published_half_unit: float
    computed: float           # in printed units
    low: float                # the computed value's interval, given the inputs' rounding
    high: float
    agrees: bool


def compare_interval(v: float, hv: float, b: float, hb: float, how: str) -> tuple[float, float]:
    """Interval of compare(v, b) when v and b are known to ±hv, ±hb (interval arithmetic).

    ratio, speed-up and change are monotone in each argument for positive inputs, so
    the extremes lie at the corners of the box [v±hv] × [b±hb]."""
    # only a denominator that may be 0 makes the interval unbounded (a printed 0.00 over a baseline is fine)
    den = (v - hv, v + hv) if how == "speedup" else (b - hb, b + hb)
    if den[0] * den[1] <= 0:
        return -math.inf, math.inf
    corners = []
    for vv in (v - hv, v + hv):
        for bb in (b - hb, b + hb):
            c = compare(vv, bb, how)
            if c is None:
                return -math.inf, math.inf
            corners.append(c)
    return min(corners), max(corners)


def check_published(v: float, hv: float, b: float, hb: float, how: str, fmt: str,
                    published: float, published_half_unit: float, printed: str | None = None) -> Check:
    """Does the printed derived value agree with the printed inputs?

    Each printed number stands for an interval (98.30 means [98.295, 98.305]); the
    derived value computed from the inputs' intervals is an interval too. The printed
    derived value agrees when its own rounding interval meets that interval. No
    tolerance beyond the printed precision (a relative 1e-12 absorbs binary floating point)."""
    scale = format_scale(fmt)
    lo, hi = compare_interval(v, hv, b, hb, how)
    lo, hi = lo * scale, hi * scale
    computed = compare(v, b, how) * scale
    eps = 1e-12 * max(1.0, abs(published))
    p_lo, p_hi = published - published_half_unit - eps, published + published_half_unit + eps
    agrees = p_lo <= hi and p_hi >= lo
    return Check(published, printed, published_half_unit, computed, lo, hi, agrees)


# -- tables ---------------------------------------------------------------------

@dataclass
class ComputedTable:
    item: Item
    header: list[list[dict]]  # rows of {text: {ja,en}, colspan, rowspan, kind}
    columns: list[dict]       # leaf columns: {text, kind, baseline}
    rows: list[list[Cell]]
    runs: list[str]
    citations: list[str] = field(default_factory=list)
    row_groups: list[RowGroup] = field(default_factory=list)
    row_group_name: dict[str, str] | None = None
    notes: list[CellNote] = field(default_factory=list)

    def checks(self) -> dict[str, int]:
        # a compare column, or a value cell with its comparison inline (baseline inline = true)
        flat = [c for row in self.rows for c in row if c.kind == "compare" or (c.kind == "value" and c.published)]
        return {"checked": sum("checked" in c.flags or "mismatch" in c.flags for c in flat),
                "mismatch": sum("mismatch" in c.flags for c in flat)}

    def aggregations(self) -> dict[int, str]:
        """How each value column's cells were made from their runs (``Column.aggregation``): the spec's
        aggregate (median, mean, min, max, single), ``representative`` (the value of the run closest to the
        first metric's aggregate, spec ``companions = "representative"``), ``sum`` (a sum of aggregates) or
        ``published`` (every value in it one transcribed value: as the original report printed it)."""
        out: dict[int, str] = {}
        for i, col in enumerate(self.columns):
            if col["kind"] != "value":
                continue
            cells = [row[i] for row in self.rows if i < len(row) and row[i].value is not None]
            if cells and all("transcribed" in c.flags and len(c.runs) == 1 for c in cells):
                out[i] = "published"
            else:
                out[i] = col.get("aggregation") or self.item.aggregate
        return out

    def to_model(self, provenance: Provenance | None = None) -> Table:
        it = self.item
        for row in self.rows:
            for c in row:
                if c.value is not None and c.kind not in ("factor", "factor-value"):
                    c.exact = exact_text(c.value)
                if c.kind == "value" and len(c.run_values) >= 2:
                    c.spread = spread_text(c)
                    # under the value: always printed with spec spread = "range", on the site behind a switch
                    c.range = range_text(c)
        marks = sorted({fl for row in self.rows for c in row for fl in c.flags
                        if fl in ("transcribed", "mismatch") or fl in VERDICT_FLAGS.values()})
        aggs = self.aggregations()
        agg_words = {i: words.both(f"column_agg_{a}") for i, a in aggs.items()}
        return Table(
            id=it.id, number=it.number, label={lang: it.prefix(lang) for lang in LANGS},
            caption=it.caption.as_dict(), footnote=it.footnote.as_dict() if it.footnote else None,
            header=[[HeaderCell(h["text"], h.get("colspan", 1), h.get("rowspan", 1), h.get("kind"), h.get("baseline"),
                                None if it.per_run else agg_words.get(h.get("col", -1)))
                     for h in hrow] for hrow in self.header],
            columns=[Column(c["text"], c["kind"], c["baseline"], aggs.get(i), agg_words.get(i))
                     for i, c in enumerate(self.columns)],
            rows=self.rows, runs=self.runs, citations=self.citations, checks=self.checks(), marks=marks,
            provenance=provenance or Provenance(), row_groups=self.row_groups, row_group_name=self.row_group_name,
            notes=self.notes, print_spread=it.raw.get("spread") == "range",
            method={lang: noise.method_note(lang) for lang in LANGS}
            if any(c.verdict for row in self.rows for c in row) else None)


def repr_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def exact_text(v: float) -> str:
    """A number for a download: 12 significant digits as a plain decimal, so that the binary noise of an
    aggregate (53.132999999999996) never reaches a file and two builds write the same bytes."""
    d = Decimal(f"{float(v):.12g}")
    if d == d.to_integral_value():
        return str(int(d))
    return f"{d.normalize():f}"


def both(f) -> dict[str, str]:
    return {lang: f(lang) for lang in LANGS}


def resolve_compare(report: Report, item: Item, b: Baseline, metric: str) -> str:
    if b.compare != "auto":
        return b.compare
    hib = higher_is_better(report, metric)
    if hib is None:
        raise item.error(f"baseline compare = 'auto' needs the direction of metric {metric!r}: "
                         f"set [metrics.{metric}] higher_is_better = true|false, or compare = ratio|speedup|change")
    return "ratio" if hib else "speedup"


NUMBER_FORMATS = ("plain", "thousands", "exponent")


def check_grammar(item: Item) -> None:
    """The table-grammar keys of an item (docs/spec.md "Table grammar"): types and names."""
    if not isinstance(item.per_run, bool):
        raise item.error(f"per_run must be true or false, got {item.per_run!r}")
    for k, v in item.number_format.items():
        if k != "default" and k not in item.metrics:
            raise item.error(f"number_format.{k}: not one of the table's metrics {item.metrics} (or default)")
        if v not in NUMBER_FORMATS:
            raise item.error(f"number_format.{k} = {v!r} is not one of {list(NUMBER_FORMATS)}")
    if item.baseline is not None and not isinstance(item.baseline.inline, bool):
        raise item.error(f"baseline inline must be true or false, got {item.baseline.inline!r}")
    if item.row_groups is not None:
        if not isinstance(item.row_groups, str):
            raise item.error(f"row_groups must be a factor name, got {item.row_groups!r}")
        if item.row_groups in (item.rows, item.columns):
            raise item.error(f"row_groups = {item.row_groups!r} is already the table's rows or columns")


def present(text: str, value: float | None, fmt: str, digits: int) -> str:
    """A number's printed text in a presentation: thousands separators (1,234.5) or exponent (2.04E-05).
    A text that is not a plain decimal (a dash, a value as printed in exponent form) is left as it is."""
    if fmt == "plain" or value is None or not _NUMERIC.match(text):
        return text
    if fmt == "thousands":
        return f"{Decimal(text):,f}"
    return f"{value:.{digits}E}"


def build_table(store: Store, report: Report, item: Item) -> ComputedTable:
    """A table built by the kind that claims it, without the notes ``table_kinds.compute_table`` adds."""
    kind = kind_of(item)
    if not kind.checks_itself:
        check_grammar(item)
    return kind.build(store, report, item)


def _add_note(t: ComputedTable, cell: Cell, text: dict[str, str], mark: str | None = None) -> CellNote:
    """A note on a cell: one note per distinct text in the table (a second cell with the same text gets
    the same mark), listed once under it."""
    note = next((n for n in t.notes if n.text == text), None)
    if note is None:
        used = {n.mark for n in t.notes}
        mark = mark or next(f"*{i}" for i in range(1, len(used) + 2) if f"*{i}" not in used)
        note = CellNote(mark, text)
        t.notes.append(note)
    if note not in cell.notes:
        cell.notes.append(note)
    return note


def apply_steady_notes(store: Store, t: ComputedTable) -> None:
    """Runs whose throughput drifts, stalls or never settles (analysis/steady.py) mark the aggregated cells
    that use them; each kind of note is listed once under the table."""
    cells = [c for row in t.rows for c in row if c.kind == "value" and (c.run_values or c.runs)]
    for idx, text in steady.table_notes(store, [list(c.run_values) or list(c.runs) for c in cells]):
        for i in idx:
            _add_note(t, cells[i], text)


def apply_coverage_notes(store: Store, t: ComputedTable) -> None:
    """A value whose metric is read from a monitor (``MetricDef.monitors``) that covers less of one of its runs'
    windows than the campaign's threshold (store view ``monitor_coverage``) keeps its value and gets a note
    saying which host's monitor covers how much of which run. Per run and host the monitor counted is the one
    the metric prefers among those present (sar before vmstat for CPU), as the metric's own views choose."""
    cells = []
    for row in t.rows:
        for c in row:
            if c.kind != "value" or not c.coords.get("metric"):
                continue
            base, role, _ = parse_metric(c.coords["metric"])
            md = parsers.metrics().get(base)
            if md is not None and md.monitors:
                cells.append((c, md.monitors, role, list(c.run_values) or list(c.runs)))
    runs = sorted({r for *_, rs in cells for r in rs})
    if not runs:
        return
    tools = sorted({tool for _, monitors, _, _ in cells for tool in monitors})
    # every run's coverage, asked once a build and kept by run (a run's coverage is its own rows': a build
    # after one new run computes that run's alone, Store.per_run); this table's runs taken from it
    memo = store.__dict__.setdefault("_kansoku_coverage", {})
    if tuple(tools) not in memo:
        try:
            memo[tuple(tools)] = store.per_run(
                "SELECT m.run_id, m.host, m.role, m.tool, max(m.coverage), arg_max(m.covered_s, m.coverage), "
                f"any_value(m.window_s), any_value(m.threshold) FROM monitor_coverage m WHERE {RUNS} "
                "AND m.tool IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL ORDER BY m.run_id, m.host", [tools])
        except Exception:  # a store made before coverage was kept: nothing to say
            memo[tuple(tools)] = []
    wanted = set(runs)
    by_run: dict[str, list[tuple]] = {}
    for r in memo[tuple(tools)]:
        if r[0] in wanted:
            by_run.setdefault(r[0], []).append(r[1:])
    for cell, monitors, role, cell_runs in cells:
        for run in cell_runs:
            best: dict[tuple, tuple] = {}  # (host, role) -> the preferred monitor's row
            for host, hrole, tool, coverage, covered, window, threshold in by_run.get(run, []):
                if (role is not None and hrole != role) or tool not in monitors:
                    continue
                prev = best.get((host, hrole))
                if prev is None or monitors.index(tool) < monitors.index(prev[0]):
                    best[(host, hrole)] = (tool, coverage, covered, window, threshold)
            for (host, hrole), (tool, coverage, covered, window, threshold) in sorted(best.items(), key=str):
                if coverage >= threshold:
                    continue
                text = {lang: words.t(lang, "coverage_cellnote", role=role_label(hrole or "", lang), tool=tool,
                                      covered=f"{covered:.0f}", window=f"{window:.0f}", run=run,
                                      pct=f"{coverage * 100:.0f}", threshold=f"{threshold * 100:g}")
                        for lang in LANGS}
                _add_note(t, cell, text)
                if "partial-coverage" not in cell.flags:
                    cell.flags.append("partial-coverage")


def apply_cell_notes(item: Item, t: ComputedTable) -> None:
    """``cell_notes = [{ row, column, metric, group, mark, note }]``: each note on the cells it names (every
    given key must match the cell's coordinates), marked ``*1``, ``*2``, … unless it gives its own mark."""
    notes = item.raw.get("cell_notes")
    if not isinstance(notes, list):
        raise item.error("cell_notes must be a list of { row, column, metric, group, mark, note }")
    for i, n in enumerate(notes, start=1):
        where = f"cell_notes[{i - 1}]"
        if not isinstance(n, dict) or "note" not in n:
            raise item.error(f"{where}: needs note = {{ ja, en }} and at least one of row, column, metric, group")
        bad = set(n) - {"row", "column", "metric", "group", "mark", "note"}
        if bad:
            raise item.error(f"{where}: unknown key(s) {sorted(bad)}")
        want = {k: _canon(v) for k, v in n.items() if k in ("row", "column", "metric", "group")}
        if not want:
            raise item.error(f"{where}: name the cells with row, column, metric and/or group")
        text_ = _text_or_error(item, n["note"], f"{where}.note")
        mark = str(n["mark"]) if "mark" in n else None
        hit = 0
        for row in t.rows:
            for c in row:
                if c.coords and c.kind != "factor" and all(c.coords.get(k) == v for k, v in want.items()):
                    _add_note(t, c, text_, mark)  # the same note on many cells: listed once
                    hit += 1
        if not hit:
            raise item.error(f"{where}: no cell of the table is at {want}")


@table_kind("plain", claims=lambda item: True, priority=0)
def _plain_table(store: Store, report: Report, item: Item) -> ComputedTable:
    t = _Plain(store, report, item)
    columns, header, plan = t.header()
    all_runs: set[str] = set()
    rows_out = [t.row(rv, plan, all_runs) for rv in t.row_vals]
    return ComputedTable(item, header, columns, rows_out, sorted(all_runs), citations(store, sorted(all_runs)))


class _Plain:
    """A table of one factor's values as rows (and another's as column groups): the groups of its metrics,
    its baseline's and its runs' read once, then its header and each row from them."""

    def __init__(self, store: Store, report: Report, item: Item):
        self.store, self.report, self.item = store, report, item
        self.rows_f, self.cols_f = item.rows, item.columns
        self.first = item.metrics[0]
        self._check_factors()
        self.group_by = [self.rows_f] + ([self.cols_f] if self.cols_f else [])
        self.main = aggregate(store, item, self.first, self.group_by)
        if not self.main:
            raise item.error(f"no runs match: metric {self.first!r}, where {item.where}")
        self.by_key = {g.keys: g for g in self.main}
        self.row_vals = sorted({g.keys[0] for g in self.main}, key=factor_sort_key(report, self.rows_f))
        self.col_vals = sorted({g.keys[1] for g in self.main}, key=factor_sort_key(report, self.cols_f)) \
            if self.cols_f else [None]
        self.b = item.baseline
        self.b_metric = (self.b.metric or self.first) if self.b else self.first
        self.how = resolve_compare(report, item, self.b, self.b_metric) if self.b else None
        self.inline = bool(self.b is not None and self.b.inline)
        self.companions = self._companions()
        self.outside = self._outside_baseline()
        self.published = self._published_baseline()
        # a value missing from a table of transcribed values was not printed; from measured ones, not measured
        self.missing_word = "cell_not_printed" if all(g.transcribed for g in self.main) else "cell_not_measured"
        self._read_runs()

    # -- the groups -----------------------------------------------------------------------------

    def _check_factors(self) -> None:
        store, item = self.store, self.item
        check_factor(store, item, self.rows_f, "rows")
        if self.cols_f:
            check_factor(store, item, self.cols_f, "columns")
        for f in item.show_factors:
            check_factor(store, item, f, "show_factors")

    def _companions(self) -> dict[str, dict[tuple, Group]]:
        """The other metrics' groups: aggregated as the first's, or the first's representative run's value."""
        store, item = self.store, self.item
        out: dict[str, dict[tuple, Group]] = {}
        for m in item.metrics[1:]:
            check_metric(store, item, m)
            if item.companions == "aggregate":
                out[m] = {g.keys: g for g in aggregate(store, item, m, self.group_by)}
        if item.companions != "aggregate":
            reps = sorted({g.representative_run_id for g in self.main if g.representative_run_id})
            for m in item.metrics[1:]:
                per_run = runs_metric_groups(store, reps, m, item.device_groups)
                out[m] = {g.keys: per_run[g.representative_run_id] for g in self.main
                          if g.representative_run_id in per_run}
        return out

    def _outside_baseline(self) -> dict[tuple, Group]:
        """The baseline's groups when its factor is neither the rows' nor the columns'."""
        store, item, b = self.store, self.item, self.b
        if not (b and b.factor is not None):
            return {}
        check_factor(store, item, b.factor, "baseline")
        if b.factor == self.cols_f:
            if b.value not in self.col_vals:
                raise item.error(f"baseline {b.factor} = {b.value!r} has no data; values: {self.col_vals}")
            return {}
        if b.factor == self.rows_f:
            if b.value not in self.row_vals:
                raise item.error(f"baseline {b.factor} = {b.value!r} has no data; values: {self.row_vals}")
            return {}
        where = {**item.where, b.factor: b.value}
        outside = {g.keys: g for g in aggregate(store, item, self.b_metric, self.group_by, where=where)}
        if not outside:
            raise item.error(f"baseline {b.factor} = {b.value!r} has no data for metric {self.b_metric!r} "
                             f"(where {where})")
        return outside

    def _published_baseline(self) -> dict[tuple, Group]:
        store, item, b = self.store, self.item, self.b
        if not (b and b.published):
            return {}
        known = known_metrics(store)
        if b.published not in known:
            raise item.error(f"baseline published: unknown metric {b.published!r}; known metrics: {sorted(known)}")
        published = {g.keys: g for g in aggregate(store, item, b.published, self.group_by)}
        if not published:
            raise item.error(f"baseline published: no values of metric {b.published!r} among the table's runs")
        return published

    def _read_runs(self) -> None:
        """Per-run columns: each run's own value of the first metric, in the order of the rep factor."""
        item = self.item
        self.max_runs = max((g.n for g in self.main), default=0) if item.per_run else 0
        self.per_run: dict[str, Group] = {}
        self.rep_of: dict[str, str] = {}
        if item.per_run:
            all_ids = sorted({r for g in self.main for r in g.run_ids})
            self.per_run = runs_metric_groups(self.store, all_ids, self.first, item.device_groups)
            self.rep_of = {r: v for r, v in self.store.query(
                "SELECT run_id, value FROM run_factors WHERE factor = 'rep' "
                "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [all_ids])}
        self.rep_key = factor_sort_key(self.report, "rep")

    def key_of(self, rv, cv) -> tuple:
        return (rv, cv) if self.cols_f else (rv,)

    def lookup(self, metric: str, key: tuple) -> Group | None:
        if metric == self.first:
            return self.by_key.get(key)
        return self.companions[metric].get(key)

    def baseline_group(self, rv, cv) -> Group | None:
        b = self.b
        if b.fixed is not None:
            return Group((), b.fixed, 0, [], None, False, 0.0)
        if b.first_row:
            return self.lookup(self.b_metric, self.key_of(self.row_vals[0], cv))
        if b.factor == self.cols_f:
            return self.lookup(self.b_metric, self.key_of(rv, b.value))
        if b.factor == self.rows_f:
            return self.lookup(self.b_metric, self.key_of(b.value, cv))
        return self.outside.get(self.key_of(rv, cv))

    def per_run_ids(self, g: Group) -> list[str]:
        return sorted(g.run_ids, key=lambda r: (self.rep_key(self.rep_of.get(r, "")), r))

    def fmt_value(self, g: Group | None, metric: str) -> str:
        if g is None:
            return "—"
        d = item_digits(self.report, self.item, metric)
        if d == "printed":
            return g.printed if g.printed is not None else fmt_number(g.value, 2)
        nf = self.item.number_format.get(metric, self.item.number_format.get("default", "plain"))
        return present(fmt_number(g.value, int(d)), g.value, nf, int(d))

    def is_base_col(self, cv) -> bool:
        b = self.b
        return b is not None and b.factor is not None and b.factor == self.cols_f and cv == b.value

    # -- the header -----------------------------------------------------------------------------

    def header(self) -> tuple[list[dict], list[list[dict]], list[tuple[str, Any, Any]]]:
        """(leaf columns, header rows, plan): the plan is each body column's (kind, column value, metric or run
        number)."""
        report, item, rows_f, cols_f = self.report, self.item, self.rows_f, self.cols_f
        columns: list[dict] = [{"text": both(lambda l: factor_name(report, rows_f, l)), "kind": "factor",
                                "baseline": False}]
        header_top: list[dict] = [{"text": columns[0]["text"], "colspan": 1, "rowspan": 2 if cols_f else 1}]
        header_leaf: list[dict] = []
        for f in item.show_factors:
            t = both(lambda l, f=f: factor_name(report, f, l))
            columns.append({"text": t, "kind": "factor-value", "baseline": False})
            header_top.append({"text": t, "colspan": 1, "rowspan": 2 if cols_f else 1, "kind": "factor-value"})
        plan: list[tuple[str, Any, Any]] = []
        for cv in self.col_vals:
            is_base_col = self.is_base_col(cv)
            if is_base_col and not self.b.show_baseline:
                continue
            leafs = self._leafs(cv, is_base_col)
            for kind, _, m in leafs:
                t = self._leaf_text(kind, m)
                col = {"text": t, "kind": kind, "baseline": is_base_col}
                if kind == "value":  # how its cells aggregate their runs (said in its header and its CSV)
                    col["aggregation"] = item.aggregate if m == self.first or item.companions == "aggregate" \
                        else "representative"
                if cols_f:  # leaf text for CSV: "TPS (checksums off)"
                    col["text"] = {l: f"{t[l]} ({factor_value_label(report, cols_f, cv, l)})" for l in LANGS}
                columns.append(col)
                header_leaf.append({"text": t, "colspan": 1, "rowspan": 1, "kind": kind, "baseline": is_base_col,
                                    "col": len(columns) - 1})
            if cols_f:
                header_top.append({"text": both(lambda l, cv=cv: factor_value_label(report, cols_f, cv, l)),
                                   "colspan": len(leafs), "rowspan": 1, "baseline": is_base_col})
            plan.extend(leafs)
        header = [header_top, header_leaf] if cols_f else [header_top + header_leaf]
        return columns, header, plan

    def _leafs(self, cv, is_base_col: bool) -> list[tuple[str, Any, Any]]:
        """The body columns under one column value."""
        item, b = self.item, self.b
        leafs: list[tuple[str, Any, Any]] = []
        for m in item.metrics:
            if item.per_run and m == self.first:
                leafs.extend(("run", cv, i) for i in range(self.max_runs))
            leafs.append(("value", cv, m))
            if item.count and m == self.first:
                leafs.append(("count", cv, m))
        if b is not None and not is_base_col:
            if not self.inline:  # inline: the comparison goes into the value's cell, "1,234 (▲12.3%)"
                leafs.append(("compare", cv, self.b_metric))
            if b.published and b.show_published:
                leafs.append(("published", cv, b.published))
        return leafs

    def _leaf_text(self, kind: str, m) -> dict[str, str]:
        report, item, b = self.report, self.item, self.b
        if kind == "run":
            return words.both("column_run_n", m + 1)
        if kind == "value" and item.per_run and m == self.first:
            return both(lambda l: words.t(l, f"aggregate_{item.aggregate}") if len(item.metrics) == 1 else
                        f"{metric_label(m, l, report=report)} ({words.t(l, f'aggregate_{item.aggregate}')})")
        if kind == "value":
            return both(lambda l: metric_label(m, l, report=report))
        if kind == "count":
            return words.both("column_runs")
        if kind == "compare":
            return both(lambda l: compare_label(report, b, l, item, self.how))
        return both(lambda l: b.published_label.get(l) if b.published_label else words.t(l, "column_as_published"))

    # -- the rows -------------------------------------------------------------------------------

    def row(self, rv, plan: list[tuple[str, Any, Any]], all_runs: set[str]) -> list[Cell]:
        """One row's cells; the runs of its value cells are added to ``all_runs``."""
        report, item, b = self.report, self.item, self.b
        is_base_row = b is not None and ((b.factor is not None and b.factor == self.rows_f and rv == b.value)
                                         or (b.first_row and rv == self.row_vals[0]))
        cells = [Cell(both(lambda l: item.row_labels[rv].get(l) if rv in item.row_labels
                           else factor_value_label(report, self.rows_f, rv, l)), kind="factor",
                      flags=["baseline"] if is_base_row else [])]
        cells.extend(self._shown_factors(rv))
        for kind, cv, m in plan:
            key = self.key_of(rv, cv)
            if kind == "run":
                cells.append(self._run_cell(key, m))
                continue
            g = self.lookup(m, key) if kind != "published" else self.published.get(key)
            if kind == "value":
                if g:
                    all_runs.update(g.run_ids)
                cells.append(self._value_cell(g, m, rv, cv, key, is_base_row))
            elif kind == "count":
                g0 = self.by_key.get(key)
                cells.append(Cell(both(lambda l, g0=g0: str(g0.n) if g0 else "—"), float(g0.n) if g0 else None,
                                  "count"))
            elif kind == "compare":
                cells.append(_compare_cell(report, item, b, self.how, g, self.baseline_group(rv, cv),
                                           self.published.get(key), is_base_row))
            else:
                cells.append(_published_cell(b, g, cells[-1]))
        for (kind, cv, m), c in zip(plan, cells[1 + len(item.show_factors):]):
            c.coords = {"row": rv, "metric": self.first if kind == "run" else m}
            if cv is not None:
                c.coords["column"] = cv
        return cells

    def _shown_factors(self, rv) -> list[Cell]:
        """The values of the ``show_factors`` among the row's runs."""
        report = self.report
        row_runs = sorted({r for cv in self.col_vals for r in (self.by_key[self.key_of(rv, cv)].run_ids
                                                               if self.key_of(rv, cv) in self.by_key else [])})
        out = []
        for f in self.item.show_factors:
            vals = sorted({v for (v,) in self.store.query(
                "SELECT DISTINCT value FROM run_factors WHERE factor = ? AND run_id IN (SELECT unnest(?::VARCHAR[]))",
                [f, row_runs])}, key=factor_sort_key(report, f))
            out.append(Cell(both(lambda l, f=f, vals=vals: " / ".join(factor_value_label(report, f, v, l)
                                                                        for v in vals) or "—"),
                            kind="factor-value"))
        return out

    def _run_cell(self, key: tuple, i: int) -> Cell:
        """The i-th repetition (by the rep factor) of the first metric's group."""
        g = self.by_key.get(key)
        ids = self.per_run_ids(g) if g else []
        rid = ids[i] if i < len(ids) else None
        rg = self.per_run.get(rid) if rid else None
        if rg is None:
            return Cell(words.both("cell_not_measured"), None, "run", [], None, ["not-measured"])
        return Cell(both(lambda l: self.fmt_value(rg, self.first)), rg.value, "run", [rid], rid,
                    ["transcribed"] if rg.transcribed else [])

    def _value_cell(self, g: Group | None, m: str, rv, cv, key: tuple, is_base_row: bool) -> Cell:
        flags = ["transcribed"] if g and g.transcribed else []
        cell = Cell(both(lambda l: self.fmt_value(g, m)), g.value if g else None, "value",
                    g.run_ids if g else [], g.representative_run_id if g else None, flags,
                    run_values=dict(g.run_values) if g else {})
        if g is None:  # a transcription that left the cell blank, or a condition never measured
            cell.text = words.both(self.missing_word)
            cell.flags = [self.missing_word.removeprefix("cell_").replace("_", "-")]
        if self.inline and m == self.b_metric and g is not None and not self.is_base_col(cv) and not is_base_row:
            cc = _compare_cell(self.report, self.item, self.b, self.how, g, self.baseline_group(rv, cv),
                               self.published.get(key), False)
            if cc.value is not None or "no-ratio" in cc.flags:
                cell.text = {l: f"{cell.text[l]} ({cc.text[l]})" for l in LANGS}
                cell.flags = cell.flags + [f for f in cc.flags if f not in cell.flags]
                cell.published = cc.published
        return cell


METRIC_ROWS = "metrics"  # rows = "metrics": one row per metric of the table


def item_digits(report: Report, item: Item, metric: str) -> int | str:
    if metric in item.digits:
        return item.digits[metric]
    info = report.metric_info.get(metric)
    if info and info.digits is not None:
        return info.digits
    return item.digits.get("default", 2)


def format_value(report: Report, item: Item, g: Group | None, metric: str) -> str:
    """A value as the table prints it: its metric's digits (or as printed) and number format."""
    if g is None:
        return "—"
    d = item_digits(report, item, metric)
    if d == "printed":
        return g.printed if g.printed is not None else fmt_number(g.value, 2)
    nf = item.number_format.get(metric, item.number_format.get("default", "plain"))
    return present(fmt_number(g.value, int(d)), g.value, nf, int(d))


@table_kind("metric-rows", claims=lambda item: item.rows == METRIC_ROWS, priority=10)
def _metric_rows_table(store: Store, report: Report, item: Item) -> ComputedTable:
    """Rows that are different metrics (FY2013 表 4.8: read and write KB/s): one row per metric of
    ``metrics``, one column per value of the ``columns`` factor; ``sum_column`` adds their sum; a
    ``baseline`` compares each cell (and the sum) with the same metric of the baseline."""
    cols_f = item.columns
    if not cols_f:
        raise item.error('rows = "metrics" needs columns = "<factor>"')
    check_factor(store, item, cols_f, "columns")
    for m in item.metrics:
        check_metric(store, item, m)
    b = item.baseline
    if b is not None and (b.first_row or b.published or b.factor == cols_f and b.inline):
        raise item.error('rows = "metrics": baseline must be a value of a factor (or fixed), without published')
    groups = {m: {g.keys[0]: g for g in aggregate(store, item, m, [cols_f])} for m in item.metrics}
    col_vals = sorted({cv for d in groups.values() for cv in d}, key=factor_sort_key(report, cols_f))
    if not col_vals:
        raise item.error(f"no runs match: metrics {item.metrics}, where {item.where}")
    outside: dict[str, dict[str, Group]] = {}
    if b is not None and b.factor is not None and b.factor != cols_f:
        check_factor(store, item, b.factor, "baseline")
        where = {**item.where, b.factor: b.value}
        outside = {m: {g.keys[0]: g for g in aggregate(store, item, m, [cols_f], where=where)} for m in item.metrics}
        if not any(outside.values()):
            raise item.error(f"baseline {b.factor} = {b.value!r} has no data (where {where})")
    sum_label = item.raw.get("sum_column")
    if sum_label is not None:
        sum_label = _text_or_error(item, sum_label, "sum_column")

    def base_of(m: str, cv: str | None) -> Group | None:
        if b is None:
            return None
        if b.fixed is not None:
            return Group((), b.fixed, 0, [], None, False, 0.0)
        if b.factor == cols_f:
            return groups[m].get(b.value)
        return outside[m].get(cv) if cv is not None else _sum_group(outside[m].values())

    stub = words.both("column_metric")
    plan: list[tuple[str, str | None]] = []
    for cv in col_vals:
        is_base_col = b is not None and b.factor == cols_f and cv == b.value
        plan.append(("value", cv))
        if b is not None and not is_base_col and not b.inline:
            plan.append(("compare", cv))
    if sum_label is not None:
        plan.append(("sum", None))
        if b is not None and b.factor != cols_f and not b.inline:
            plan.append(("compare", None))
    columns = [{"text": stub, "kind": "factor", "baseline": False}]
    for kind, cv in plan:
        if kind == "value":
            t = both(lambda l, cv=cv: factor_value_label(report, cols_f, cv, l))
        elif kind == "sum":
            t = sum_label
        else:
            ref = both(lambda l, cv=cv: factor_value_label(report, cols_f, cv, l) if cv is not None else sum_label[l])
            t = {l: f"{ref[l]}: {compare_label(report, b, l, item, resolve_compare(report, item, b, item.metrics[0]))}"
                 for l in LANGS}
        columns.append({"text": t, "kind": "value" if kind == "sum" else kind,
                        "baseline": b is not None and b.factor == cols_f and cv == b.value,
                        **({"aggregation": "sum" if kind == "sum" else item.aggregate}
                           if kind in ("value", "sum") else {})})
    header = [[{"text": c["text"], "colspan": 1, "rowspan": 1,
                **({"kind": c["kind"], "baseline": c["baseline"], "col": i} if i else {})}
               for i, c in enumerate(columns)]]
    rows: list[list[Cell]] = []
    all_runs: set[str] = set()
    for m in item.metrics:
        how = resolve_compare(report, item, b, m) if b is not None else None
        cells = [Cell(both(lambda l, m=m: metric_label(m, l, report=report)), kind="factor")]
        for kind, cv in plan:
            g = groups[m].get(cv) if cv is not None else _sum_group(groups[m].values())
            if kind in ("value", "sum"):
                if g is None:
                    cells.append(Cell(words.both("cell_not_measured"), None, "value"))
                    continue
                all_runs.update(g.run_ids)
                cell = Cell(both(lambda l, g=g, m=m: format_value(report, item, g, m)), g.value, "value",
                            g.run_ids, g.representative_run_id, ["transcribed"] if g.transcribed else [],
                            run_values=dict(g.run_values))
                is_base = b is not None and b.factor == cols_f and cv == b.value
                if b is not None and b.inline and not is_base:
                    cc = _compare_cell(report, item, b, how, g, base_of(m, cv), None, False)
                    if cc.value is not None or "no-ratio" in cc.flags:
                        cell.text = {l: f"{cell.text[l]} ({cc.text[l]})" for l in LANGS}
                        cell.flags = cell.flags + [f for f in cc.flags if f not in cell.flags]
                cells.append(cell)
            else:
                cells.append(_compare_cell(report, item, b, how, g, base_of(m, cv), None, False))
        for (kind, cv), c in zip(plan, cells[1:]):
            c.coords = {"row": m, "metric": m, "column": cv if cv is not None else "sum"}
        rows.append(cells)
    runs = sorted(all_runs)
    return ComputedTable(item, header, columns, rows, runs, citations(store, runs))


def _sum_group(groups) -> Group | None:
    """The sum of several aggregates (a derived column): its runs are all of theirs; transcribed values'
    rounding bounds add up."""
    gs = [g for g in groups if g is not None and g.value is not None]
    if not gs:
        return None
    runs = sorted({r for g in gs for r in g.run_ids})
    return Group((), sum(g.value for g in gs), len(runs), runs, None, any(g.transcribed for g in gs),
                 sum(g.half_unit for g in gs))


def _text_or_error(item: Item, v: Any, key: str) -> dict[str, str]:
    if isinstance(v, str):
        return words.same(v)
    if isinstance(v, dict) and set(v) <= set(LANGS) and v:
        return {l: str(v.get(l) or next(iter(v.values()))) for l in LANGS}
    raise item.error(f"{key} must be a string or {{ ja, en }}, got {v!r}")


@table_kind("grouped", claims=lambda item: bool(item.row_groups), priority=20)
def _grouped_table(store: Store, report: Report, item: Item) -> ComputedTable:
    """Several factors on rows: one block of rows per value of ``row_groups``, each computed like a table of
    its own (its baseline row, its checks) and labelled; the blocks share one header."""
    gf = item.row_groups
    check_factor(store, item, gf, "row_groups")
    values = sorted({g.keys[0] for g in aggregate(store, item, item.metrics[0], [gf])}, key=factor_sort_key(report, gf))
    listed = item.where.get(gf)
    if isinstance(listed, list):  # the blocks in the order the spec lists them in `where`
        order = [_canon(v) for v in listed]
        values.sort(key=lambda v: order.index(v) if v in order else len(order))
    if not values:
        raise item.error(f"no runs match: metric {item.metrics[0]!r}, where {item.where}")
    parts = [(v, build_table(store, report, replace(item, where={**item.where, gf: v}, row_groups=None)))
             for v in values]
    for v, t in parts:
        for row in t.rows:
            for c in row:
                if c.coords:
                    c.coords["group"] = v
    first = parts[0][1]
    rows: list[list[Cell]] = []
    groups: list[RowGroup] = []
    for v, t in parts:
        if [c["text"] for c in t.columns] != [c["text"] for c in first.columns]:
            raise item.error(f"row_groups: the block {gf} = {v!r} has other columns than {gf} = {parts[0][0]!r} "
                             f"({[c['text']['en'] for c in t.columns]} vs {[c['text']['en'] for c in first.columns]})")
        groups.append(RowGroup(both(lambda l, v=v: factor_value_label(report, gf, v, l)), len(rows), len(t.rows)))
        rows.extend(t.rows)
    runs = sorted({r for _, t in parts for r in t.runs})
    t = ComputedTable(item, first.header, first.columns, rows, runs, citations(store, runs), groups)
    t.row_group_name = both(lambda l: factor_name(report, gf, l))
    return t


# the noise-aware verdict of a comparison, as a cell flag (and the table's legend entry)
VERDICT_FLAGS = {"better": "better", "worse": "worse", "changed": "changed", "within_noise": "within-noise",
                 "too_few_runs": "too-few-runs", "no_ratio": "too-few-runs"}


def range_text(c: Cell) -> str:
    """The runs' min–max of an aggregated cell, with the decimals its value is printed with."""
    m = re.search(r"\.(\d+)", c.text.get("en", ""))
    d = len(m.group(1)) if m else 0
    vals = list(c.run_values.values())
    return f"{min(vals):.{d}f}–{max(vals):.{d}f}"


def spread_text(c: Cell) -> dict[str, str]:
    """The runs' range of an aggregated cell, with the decimals its value is printed with."""
    rng = range_text(c)
    return both(lambda l: words.t(l, "cell_spread", rng, n=len(c.run_values)))


def _compare_cell(report: Report, item: Item, b: Baseline, how: str, g: Group | None, bg: Group | None,
                  pub: Group | None, is_base_row: bool) -> Cell:
    v = g.value if g else None
    base = bg.value if bg else None
    x = compare(v, base, how)
    flags = []
    if base == 0 and v is not None:  # no ratio against 0: said so, never an infinite interval
        flags.append("no-ratio")
        if is_base_row:
            flags.append("baseline")
        return Cell(words.both("no_ratio_baseline_zero"), None, "compare", flags=flags)
    # no "transcribed" flag (†): the ratio is kansoku's computation, even from transcribed inputs
    if is_base_row:
        flags.append("baseline")
    hib = higher_is_better(report, b.metric or item.metrics[0])
    verdict = None
    known = direction(report, b.metric or item.metrics[0]) is not None  # neither: "changed", not better/worse
    # one printed number stands for runs whose values were never printed: no test can weigh it against
    # noise, and more runs cannot be had, so no verdict (not even "too few runs") is given
    printed_only = any(x_ and x_.transcribed and len(x_.run_values) < 2 for x_ in (g, bg))
    if x is not None and known and not is_base_row and g is not None and bg is not None and not printed_only:
        # better / worse only when the runs say the difference is beyond their noise (analysis/noise.py)
        vd = noise.compare(list(g.run_values.values()), list(bg.run_values.values()), hib)
        flags.append(VERDICT_FLAGS[vd.kind])
        verdict = {"kind": VERDICT_FLAGS[vd.kind], "p": vd.p_value, "lo": vd.ratio_low, "hi": vd.ratio_high,
                   "n": [vd.n_value, vd.n_baseline]}
    published = None
    if pub is not None and pub.value is not None:
        p_text = both(lambda l: fmt_printed(pub.printed, b.format, l) if pub.printed
                      else fmt_compare(pub.value / format_scale(b.format), b.format, b.digits, l, b.significant))
        published = {"v": pub.value / format_scale(b.format), "printed": pub.printed or repr_num(pub.value),
                     "t": p_text if len(set(p_text.values())) > 1 else p_text[LANGS[0]]}
        if v is not None and base is not None and x is not None:
            chk = check_published(v, g.half_unit, base, bg.half_unit, how, b.format, pub.value, pub.half_unit,
                                  pub.printed)
            bounded = math.isfinite(chk.low) and math.isfinite(chk.high)
            published.update({"computed": chk.computed, "interval": [chk.low, chk.high] if bounded else None,
                               "agrees": chk.agrees})
            flags.append("checked" if chk.agrees else "mismatch")
    return Cell(both(lambda l: fmt_compare(x, b.format, b.digits, l, b.significant)), x, "compare",
                flags=flags, published=published, verdict=verdict)


def _published_cell(b: Baseline, pub: Group | None, compare_cell: Cell) -> Cell:
    if pub is None or pub.value is None:
        return Cell(words.same("—"), None, "published")
    flags = ["transcribed"]
    if "mismatch" in compare_cell.flags:
        flags.append("mismatch")
    elif "checked" in compare_cell.flags:
        flags.append("checked")
    if "baseline" in compare_cell.flags:
        flags.append("baseline")
    p = compare_cell.published or {}
    t = p.get("t") or both(lambda l: fmt_compare(pub.value / format_scale(b.format), b.format, b.digits, l))
    return Cell(t if isinstance(t, dict) else words.same(t), pub.value / format_scale(b.format), "published",
                pub.run_ids, pub.representative_run_id, flags)


def run_rows(store: Store) -> dict[str, tuple[str, str, str | None]]:
    """run_id -> (origin, status, citation) of every run, read once per build (the store is read-only)."""
    return _cached(store, "run_rows", lambda: {
        r: (origin, status, citation)
        for r, origin, status, citation in store.query("SELECT run_id, origin, status, citation FROM runs")})


def citations(store: Store, run_ids: list[str]) -> list[str]:
    """The published sources (citations) of the transcribed runs among ``run_ids``, sorted."""
    if not run_ids:
        return []
    rows = run_rows(store)
    return sorted({rows[r][2] for r in set(run_ids) if r in rows and rows[r][0] == "transcribed"
                   and rows[r][2] is not None})


def compare_label(report: Report, b: Baseline, lang: str, item: Item, how: str | None = None) -> str:
    if b.label:
        return b.label.get(lang)
    how = how or (b.compare if b.compare != "auto" else "ratio")
    if b.factor:
        ref = factor_value_label(report, b.factor, b.value, lang)
    elif b.first_row:
        ref = words.t(lang, "baseline_first_row")
    else:
        ref = fmt_number(b.fixed, 2)
    return words.t(lang, f"compare_label_{how}", ref)
