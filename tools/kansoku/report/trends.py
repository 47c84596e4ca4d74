"""The cross-year view (config.toml ``[[params.trends]]``): one metric over the fiscal years of the reports,
measured and transcribed runs together, plotted only where the configuration declares them comparable.

A trend declares what is comparable: ``where`` (factors: study, workload, a client range, …) and ``scale``
(the pgbench scale factors allowed; a measured run's scale is the one its pgbench printed, a transcribed
run's the one its published table's ``[published.environment]`` states). A run outside them is not
plotted, and the page says what was compared.

Every point says what it stands on: the machine (cores, memory, storage: from the run's run.toml
``[machine]``, or from the transcribed table's ``[published.environment]``), the run length and number of
runs, and its origin (measured / transcribed, with the citation). Points from different machines are never
joined by a line: a line joins the years of one series on one machine, and each machine has its own marker.
Fiscal years that have a report but no comparable point are listed with the reason (``[[params.trends.missing]]
year, why`` in the configuration, or "no comparable runs").

A point is the peak: per (series, origin, machine, year) the highest median over the conditions of its runs
(a condition: every factor but rep and the bookkeeping factors). Medians and peaks are taken in SQL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kansoku import words
from kansoku.analysis import tables as analysis
from kansoku.errors import KansokuError
from kansoku.model import ChartData, ComputedReport, Figure, Trends
from kansoku.report import machines
from kansoku.report.methods import citation_text
from kansoku.report.provenance import item_provenance
from kansoku.spec.model import LANGS, Item, Report, Text, text
from kansoku.store.db import Store, run_metric_source

TREND_IGNORED_FACTORS = ("rep", "fiscal_year", "report", "published_table", "campaign", "duration_s", "threads")
TREND_HOVER_FACTORS = ("clients", "config", "checksums")
CONFIG_FILE = Path("config.toml")


def _pg_major(doc: dict) -> str | None:
    """'15' from [server] server_version / [versions] postgres ('postgres (PostgreSQL) 15.18 (Debian ...)')."""
    for v in ((doc.get("server") or {}).get("server_version"), (doc.get("versions") or {}).get("postgres")):
        if v:
            m = re.search(r"(\d+)(?:\.(\d+))?", str(v).split(")")[-1] if "(PostgreSQL)" in str(v) else str(v))
            if m:
                major = int(m.group(1))
                return f"{major}.{m.group(2)}" if major < 10 and m.group(2) else str(major)
    return None


def _both(v: Any) -> dict[str, str] | None:
    """A text of the configuration or a sidecar: a string, or one per language."""
    if v is None or v == "":
        return None
    if isinstance(v, dict):
        return {lang: words.pick(v, lang) for lang in LANGS}
    return {lang: str(v) for lang in LANGS}


def machine_of(doc: dict, origin: str) -> dict[str, Any]:
    """A run's machine: a key (equal keys: one machine) and its cores, memory and storage per language."""
    if origin == "transcribed":
        pub = doc.get("published") or {}
        env = pub.get("environment") or {}
        cit = pub.get("citation") or {}
        cores = env.get("cores")
        out = {"key": "published:" + str(env.get("machine") or json.dumps(cit.get("report"), ensure_ascii=False)),
               "cpu": _both(env.get("cpu")), "memory": _both(env.get("memory")), "storage": _both(env.get("storage")),
               "cores": {lang: words.t(lang, "trend_machine_cores", cores) for lang in LANGS} if cores else None}
        return out
    m = doc.get("machine") or {}
    n = m.get("nproc") or m.get("cpu_count")
    # described as a chapter's machines block describes it ("2 vCPUs (AMD EPYC)", "vda 256 GiB, virtio disk")
    desc = machines.describe(m)
    key = "|".join(str(x) for x in (m.get("hostname"), m.get("cpu_model"), n, m.get("mem_total_kib")))
    return {"key": "measured:" + key, "cpu": None, "cores": _both(desc["cpu"]) if n or m.get("cpu_model") else None,
            "memory": _both(desc["memory"]) if m.get("mem_total_kib") else None,
            "storage": _both(desc["storage"]) if m.get("disks") or m.get("filesystem") else None}


def _machine_label(mach: dict, lang: str) -> str:
    parts = [(mach.get(k) or {}).get(lang) for k in ("cores", "memory")]
    return ", ".join(p for p in parts if p) or words.t(lang, "trend_machine_unknown")


def _machine_long(mach: dict, lang: str) -> str:
    parts = [(mach.get(k) or {}).get(lang) for k in ("cpu", "cores", "memory", "storage")]
    return ", ".join(p for p in parts if p) or words.t(lang, "trend_machine_unknown")


# One point per (series, origin, machine, year): the peak over conditions of the median over a condition's
# runs (between equal peaks, the condition whose first run id sorts first).
TREND_POINTS_SQL = """
WITH tagged AS (
    SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::INTEGER[]) AS year, unnest(?::VARCHAR[]) AS sv,
           unnest(?::VARCHAR[]) AS mk
), vals AS (
    SELECT m.run_id, m.value, r.origin FROM {metric_rows} m JOIN runs r ON r.run_id = m.run_id
    WHERE m.metric = ? AND m.run_id IN (SELECT run_id FROM tagged)
      AND m.value IS NOT NULL AND NOT isnan(m.value)
    -- a metric several hosts of a run measured: the host of the campaign's default role (else the server)
    QUALIFY count(*) OVER (PARTITION BY m.run_id) = 1 OR m.role = coalesce(r.default_role, 'server')
), conds AS (
    SELECT run_id, string_agg(factor || '=' || value, chr(31) ORDER BY factor) AS cond_key,
           map(list(factor ORDER BY factor), list(value ORDER BY factor)) AS cond
    FROM run_factors
    WHERE run_id IN (SELECT run_id FROM tagged) AND factor NOT IN (SELECT unnest(?::VARCHAR[]))
    GROUP BY run_id
), cells AS (
    SELECT t.year, t.sv, t.mk, v.origin, coalesce(c.cond_key, '') AS cond_key, any_value(c.cond) AS cond,
           median(v.value) AS med, min(v.value) AS lo, max(v.value) AS hi, list(v.run_id ORDER BY v.run_id) AS runs
    FROM vals v JOIN tagged t ON t.run_id = v.run_id LEFT JOIN conds c ON c.run_id = v.run_id
    GROUP BY ALL
)
SELECT sv, origin, mk, year, med, lo, hi, runs, cond FROM cells
QUALIFY row_number() OVER (PARTITION BY sv, origin, mk, year ORDER BY med DESC, runs[1], cond_key) = 1
ORDER BY sv, origin, mk, year
"""


def _run_facts(store: Store, run_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Scale and run length that pgbench printed, per measured run."""
    out: dict[str, dict[str, Any]] = {}
    for run_id, scale, dur in store.query(
            "SELECT run_id, max(scaling_factor), max(duration_s) FROM pgbench_summary "
            "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY run_id", [run_ids]):
        out[run_id] = {"scale": scale, "duration_s": dur}
    return out


def _fmt(v: float) -> str:
    return f"{v:,.1f}" if v < 1e5 else f"{v:,.0f}"


def _factor_text(f: str, values: list, lang: str, labels: SimpleNamespace) -> str:
    """A factor and its values as a reader reads them (i18n trend_factor_<f>, each value's label as the
    reports give it: ``factor_words``), never key=value."""
    shown = words.t(lang, "env_values_separator").join(analysis.factor_value_label(labels, f, str(v), lang)
                                                        for v in values)
    if words.has(f"trend_factor_{f}", lang):
        return words.t(lang, f"trend_factor_{f}", shown)
    return f"{analysis.factor_name(labels, f, lang)}: {shown}"


def _conditions_text(spec: dict, lang: str, labels: SimpleNamespace) -> str:
    parts = []
    for f, cond in (spec.get("where") or {}).items():
        if isinstance(cond, list):
            parts.append(_factor_text(f, cond, lang, labels))
        elif isinstance(cond, dict):
            parts.append(_factor_text(f, [f"{cond.get('min', '')}–{cond.get('max', '')}"], lang, labels))
        else:
            parts.append(_factor_text(f, [cond], lang, labels))
    if spec.get("scale"):
        parts.append(words.t(lang, "trend_scale", ", ".join(str(s) for s in spec["scale"])))
    return "; ".join(parts) or words.t(lang, "trend_everything")


def compute_trend(store: Store, n: int, spec: dict, fy_of_report: dict[str, int], years_of_run: dict[str, set[int]],
                  report_years: dict[int, list[str]], labels: SimpleNamespace | None = None) -> Figure:
    sid = str(spec.get("id", f"trend-{n}"))
    labels = labels or factor_words([])
    metric = spec["metric"]
    where_src = CONFIG_FILE
    title = text(spec.get("title"), f"[[params.trends]] {sid} title", where_src) or Text.of(words.same(sid))
    item = Item(kind="figure", id=sid, number=str(n), caption=title, spec_file=where_src,
                chapter_id="trends", metrics=[metric], where=dict(spec.get("where", {})),
                options=dict(spec.get("options", {})))
    params: list[Any] = [metric]
    try:
        cond = analysis.where_sql(item, store, params)
    except KansokuError:
        cond = None
    # the rows of run_metrics of this metric, from its branches alone (planning the view's ~60 branches cost
    # most of a trend's CPU): the same rows
    metric_rows = run_metric_source([metric])
    rows = [] if cond is None else store.query(
        f"SELECT m.run_id, r.run_toml::VARCHAR, r.origin FROM {metric_rows} m "
        f"JOIN runs r ON r.run_id = m.run_id AND r.status = 'ok' "
        f"WHERE m.metric = ? AND m.value IS NOT NULL AND NOT isnan(m.value) AND {cond}", params)
    ids = [r[0] for r in rows]
    facs: dict[str, dict[str, str]] = {}
    if ids:
        for run_id, f, v in store.query(
                "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids]):
            facs.setdefault(run_id, {})[f] = v
    facts = _run_facts(store, ids) if ids else {}
    scales = {str(s) for s in spec.get("scale") or []}
    series_f = spec.get("series")
    tag_runs: list[str] = []
    tag_years: list[int] = []
    tag_series: list[str] = []
    tag_machines: list[str] = []
    machines: dict[str, dict] = {}
    run_info: dict[str, dict] = {}
    for run_id, rt, origin in rows:  # each run's fiscal year(s), series value, machine, scale, length
        fs = facs.get(run_id, {})
        doc = json.loads(rt) if rt else {}
        env = ((doc.get("published") or {}).get("environment") or {}) if origin == "transcribed" else {}
        scale = fs.get("scale") or env.get("scale") or (facts.get(run_id) or {}).get("scale")
        if scales and (scale is None or str(scale) not in scales):
            continue  # not declared comparable
        if fs.get("fiscal_year", "").isdigit():
            years = {int(fs["fiscal_year"])}
        elif fs.get("report") in fy_of_report:
            years = {fy_of_report[fs["report"]]}
        else:
            years = years_of_run.get(run_id, set())
        sv = fs.get(series_f) if series_f else ""
        if sv is None and series_f == "version":
            sv = _pg_major(doc)
        if sv is None:
            continue
        mach = machine_of(doc, origin)
        machines.setdefault(mach["key"], mach)
        dur = fs.get("duration_s") or env.get("duration_s") or (facts.get(run_id) or {}).get("duration_s")
        try:
            dur = float(dur) if dur is not None else None
        except ValueError:
            dur = None
        run_info[run_id] = {"scale": scale, "duration_s": dur,
                            "citation": (doc.get("published") or {}).get("citation"), "runs": env.get("runs")}
        for y in sorted(years):
            tag_runs.append(run_id)
            tag_years.append(y)
            tag_series.append(sv)
            tag_machines.append(mach["key"])
    ignored = list(TREND_IGNORED_FACTORS) + ([series_f] if series_f else [])
    points = []
    if tag_runs:
        for sv, origin, mk, y, med, lo, hi, runs, cond_map in store.query(
                TREND_POINTS_SQL.replace("{metric_rows}", metric_rows),
                [tag_runs, tag_years, tag_series, tag_machines, metric, ignored]):
            points.append({"series": sv, "origin": origin, "machine": mk, "year": y, "value": med, "lo": lo,
                           "hi": hi, "runs": list(runs), "cond": dict(cond_map or {})})
    sort_v = analysis.factor_sort_key(None, "v")
    points.sort(key=lambda p: (p["year"], sort_v(p["series"]), p["origin"], p["machine"]))
    machine_order = sorted({p["machine"] for p in points},
                           key=lambda k: (min(p["year"] for p in points if p["machine"] == k), k))
    series_order = sorted({p["series"] for p in points}, key=sort_v)
    y_title = text(spec.get("y_title"), "y_title", where_src) if spec.get("y_title") else None
    missing = _missing_years(spec, points, report_years)

    def series_name(sv: str, lang: str) -> str:
        return words.t(lang, f"trend_series_{series_f}", sv) if series_f and f"trend_series_{series_f}" in words.keys() \
            else sv

    def length(p: dict, lang: str) -> str:
        durs = sorted({run_info[r]["duration_s"] for r in p["runs"] if run_info[r]["duration_s"] is not None})
        dur = "/".join(f"{float(d):g}" for d in durs) if durs else "?"
        n_runs = len(p["runs"])
        if p["origin"] == "transcribed":  # one printed value per condition: the runs it summarises
            stated = {run_info[r]["runs"] for r in p["runs"] if run_info[r]["runs"]}
            n_runs = max(stated) if stated else None
        return words.t(lang, "trend_length", dur, runs=n_runs if n_runs is not None else "?")

    def origin_text(p: dict, lang: str) -> str:
        if p["origin"] != "transcribed":
            return words.t(lang, "trend_origin_measured")
        cit = next((run_info[r]["citation"] for r in p["runs"] if run_info[r]["citation"]), None) or {}
        return words.t(lang, "trend_origin_transcribed", citation_text(cit, lang))

    def condition(p: dict, lang: str = "en") -> str:  # factors with their labels, never key=value
        return ", ".join(_factor_text(f, [p["cond"][f]], lang, labels) for f in TREND_HOVER_FACTORS if f in p["cond"])

    # the chart: one trace per (series, origin, machine); points of one year side by side, never on top
    per_year: dict[int, list[int]] = {}
    for i, p in enumerate(points):
        per_year.setdefault(p["year"], []).append(i)
    offsets = {}
    for y, idx in per_year.items():
        k = len(idx)
        for j, i in enumerate(idx):
            offsets[i] = (j - (k - 1) / 2) * min(0.3, 0.8 / k)
    traces = []
    for sv in series_order:
        for origin in ("measured", "transcribed"):
            for mk in machine_order:
                idx = [i for i, p in enumerate(points) if (p["series"], p["origin"], p["machine"]) == (sv, origin, mk)]
                if idx:
                    traces.append({"series": sv, "series_index": series_order.index(sv), "origin": origin,
                                   "machine_index": machine_order.index(mk),
                                   "x": [points[i]["year"] + offsets[i] for i in idx],
                                   "y": [points[i]["value"] for i in idx],
                                   "lo": [points[i]["lo"] for i in idx], "hi": [points[i]["hi"] for i in idx]})
    trace_words = {}
    table_rows = {}
    for lang in LANGS:
        names, hovers = [], []
        for tr in traces:
            mach = machines[machine_order[tr["machine_index"]]]
            name = f"{series_name(tr['series'], lang)} · {_machine_label(mach, lang)}"
            if tr["origin"] == "transcribed":
                name += words.t(lang, "trend_transcribed_suffix")
            names.append(name)
            hov = []
            for p in points:
                if (p["series"], p["origin"], machine_order.index(p["machine"])) == (tr["series"], tr["origin"],
                                                                                     tr["machine_index"]):
                    hov.append([series_name(p["series"], lang),
                                f"{words.t(lang, 'trend_axis_fiscal_year')}: {p['year']}",
                                f"{analysis.metric_label(metric, lang)}: {_fmt(p['value'])}"
                                + (f" ({condition(p, lang)})" if condition(p, lang) else ""),
                                f"{words.t(lang, 'trend_col_machine')}: {_machine_long(machines[p['machine']], lang)}",
                                f"{words.t(lang, 'trend_col_length')}: {length(p, lang)}",
                                f"{words.t(lang, 'trend_col_origin')}: {origin_text(p, lang)}"])
            hovers.append(hov)
        trace_words[lang] = {"names": names, "hover": hovers, "x_title": words.t(lang, "trend_axis_fiscal_year"),
                             "y_title": y_title.get(lang) if y_title else analysis.metric_label(metric, lang)}
        table_rows[lang] = [[str(p["year"]), series_name(p["series"], lang), _fmt(p["value"]),
                             f"{_fmt(p['lo'])}–{_fmt(p['hi'])}" if len(p["runs"]) > 1 else "—", condition(p, lang),
                             _machine_long(machines[p["machine"]], lang), length(p, lang), origin_text(p, lang)]
                            for p in points]
    # the download: the same rows with the numbers as exact decimals and the runs' min, max and count
    csv_rows = {lang: [[str(p["year"]), series_name(p["series"], lang), f"{p['value']:.12g}", f"{p['lo']:.12g}",
                        f"{p['hi']:.12g}", str(len(p["runs"])), condition(p), _machine_long(machines[p["machine"]], lang),
                        length(p, lang), origin_text(p, lang)] for p in points] for lang in LANGS}
    years = sorted({p["year"] for p in points} | {m["year"] for m in missing})
    chart = ChartData("trend", dict(item.options), {"traces": traces, "years": years}, trace_words)
    all_runs = sorted({r for p in points for r in p["runs"]})
    fig = Figure(
        id=sid, number=f"T.{n}", chart="line", label=words.both("figure_label", f"T.{n}"),
        caption=title.as_dict(), footnote=None, runs=all_runs, points=len(points),
        provenance=item_provenance(store, labels, all_runs, set()), chart_data=chart)
    fig.trend = {
        "compared": {lang: words.t(lang, "trend_compared", _conditions_text(spec, lang, labels)) for lang in LANGS},
        "columns": {lang: [words.t(lang, f"trend_col_{c}") for c in TREND_COLUMNS] for lang in LANGS},
        "rows": table_rows,
        "csv_columns": {lang: [words.t(lang, f"trend_col_{c}") for c in TREND_CSV_COLUMNS] for lang in LANGS},
        "csv_rows": csv_rows,
        "missing": [{"year": m["year"], "why": m["why"]} for m in missing],
        "machines": len(machine_order),
    }
    return fig


TREND_COLUMNS = ("year", "series", "value", "range", "condition", "machine", "length", "origin")
TREND_CSV_COLUMNS = ("year", "series", "value", "min", "max", "n", "condition", "machine", "length", "origin")


def _missing_years(spec: dict, points: list[dict], report_years: dict[int, list[str]]) -> list[dict]:
    """Years with a report (or declared in the configuration) but no comparable point, with the reason."""
    have = {p["year"] for p in points}
    declared = {}
    for m in spec.get("missing") or []:
        if isinstance(m, dict) and str(m.get("year", "")).isdigit():
            declared[int(m["year"])] = _both(m.get("why"))
    out = []
    for y in sorted((set(report_years) | set(declared)) - have):
        out.append({"year": y, "why": declared.get(y) or words.both("trend_no_comparable_runs")})
    return out


def trend_specs(config: dict) -> list[dict]:
    """[[params.trends]] of config.toml: id, metric, where, series (factor), title, y_title."""
    return list(config.get("params", {}).get("trends", []) or [])


def compute_trends(store: Store, reports: list[Report], computed: list[ComputedReport], specs: list[dict]) -> Trends:
    """The cross-year figures. A run's fiscal year: its ``fiscal_year`` factor; else its ``report`` factor (a
    report id); else the fiscal year of every report whose tables and figures use it. The series factor (e.g.
    version) comes from the run's factors; for ``version`` a run without that factor uses the PostgreSQL
    version it captured."""
    fy_of_report = {r.id: r.fiscal_year for r in reports}
    report_years: dict[int, list[str]] = {}
    for r in reports:
        report_years.setdefault(r.fiscal_year, []).append(r.id)
    years_of_run: dict[str, set[int]] = {}
    for rep in computed:
        for run_id in rep.runs:
            years_of_run.setdefault(run_id, set()).add(rep.fiscal_year)
    out = Trends(title=words.both("trends_page_title"))
    labels = factor_words(reports)
    for n, spec in enumerate(specs, start=1):
        out.figures.append(compute_trend(store, n, spec, fy_of_report, years_of_run, report_years, labels))
    return out


def factor_words(reports: list[Report]) -> SimpleNamespace:
    """The factor names, value labels and orders of every report, as one report would give them: the
    cross-year view belongs to no report, yet its runs' factors are named as the reports name them (the
    first report naming a factor or a value wins)."""
    names: dict = {}
    value_labels: dict = {}
    order: dict = {}
    for r in reports:
        for f, t in r.factor_names.items():
            names.setdefault(f, t)
        for f, vals in r.factor_labels.items():
            for v, t in vals.items():
                value_labels.setdefault(f, {}).setdefault(v, t)
        for f, o in r.factor_order.items():
            order.setdefault(f, o)
    return SimpleNamespace(factor_names=names, factor_labels=value_labels, factor_order=order)
