"""The cross-year view (config.toml ``[[params.trends]]``): one metric over the fiscal years of the reports,
measured and transcribed runs together, plotted only where the configuration declares them comparable.

A trend declares what is comparable: ``where`` (factors: study, workload, a client range, …) and ``scale``
(the pgbench scale factors allowed; a measured run's scale is the one its pgbench printed, a transcribed
run's the one its published table's ``[published.environment]`` states). A run outside them is not
plotted, and the page says what was compared.

Every point says what it stands on: the machine (cores, memory, storage: from the run's run.toml
``[machine]``, or from the transcribed table's ``[published.environment]``), the run length and number of
runs, and its origin (measured / transcribed, with the citation). A measured run's machine is the one the
chapters name (ingest/runs.py machine_fingerprint: its inventory without its name, memory in whole GiB).
Points from different machines are never joined by a line: a line joins the years of one series on one
machine, and each machine has its own marker.
Fiscal years that have a report but no comparable point are listed with the reason (``[[params.trends.missing]]
year, why`` in the configuration, or "no comparable runs").

A point is the peak: per (series, origin, machine, year) the highest median over the conditions of its runs
(a condition: every factor but rep and the bookkeeping factors). Medians and peaks are taken in SQL.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kansoku import words
from kansoku.analysis import tables as analysis
from kansoku.errors import KansokuError
from kansoku.ingest.runs import machine_fingerprint
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
    """A run's machine: a key (equal keys: one machine; a measured run's is its fingerprint, the rule the
    chapters use) and its cores, memory, storage and kernel per language."""
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
    return {"key": f"measured:{machine_fingerprint(m)}", "cpu": None,
            "cores": _both(desc["cpu"]) if n or m.get("cpu_model") else None,
            "memory": _both(desc["memory"]) if m.get("mem_total_kib") else None,
            "storage": _both(desc["storage"]) if m.get("disks") or m.get("filesystem") else None,
            "kernel": _kernel(m.get("kernel"))}


def _kernel(v: Any) -> dict[str, str] | None:
    """'Linux 6.18.44-fc-v669 #1 SMP …' -> 'kernel 6.18.44-fc-v669' (its release, as uname -r prints it)."""
    parts = str(v or "").split()
    return {lang: words.t(lang, "trend_machine_kernel", parts[1]) for lang in LANGS} if len(parts) > 1 else None


# A machine's label in the legend: its cores and memory; where two machines' labels are alike, their cores
# and what tells them apart instead of the memory they share (a phone's legend has room for one more field).
LABEL_FIELDS = ("cores", "memory")
LABEL_TELLING = ("kernel", "storage", "cpu")


def machine_labels(machs: dict[str, dict], lang: str) -> dict[str, str]:
    """key -> the legend's label of each machine: no two machines share one where their descriptions differ."""
    def labels(keys, fields) -> dict[str, str]:
        return {k: ", ".join(p for p in ((machs[k].get(f) or {}).get(lang) for f in fields) if p)
                or words.t(lang, "trend_machine_unknown") for k in keys}

    out = labels(machs, LABEL_FIELDS)
    for shared in {v for v in out.values() if list(out.values()).count(v) > 1}:
        alike = [k for k, v in out.items() if v == shared]
        for fields in [("cores", t) for t in LABEL_TELLING] + [("cpu", "cores", "memory", "storage", "kernel")]:
            told = labels(alike, fields)
            if len(set(told.values())) == len(told):
                break
        out.update(told)
    return out


def _machine_long(mach: dict, lang: str) -> str:
    parts = [(mach.get(k) or {}).get(lang) for k in ("cpu", "cores", "memory", "storage", "kernel")]
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


@dataclass
class TrendRuns:
    """The comparable runs of a trend, each tagged once per fiscal year it belongs to (the parallel lists
    TREND_POINTS_SQL reads), with their machines and what each point says of its runs."""

    runs: list[str] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    series: list[str] = field(default_factory=list)
    machine_keys: list[str] = field(default_factory=list)
    machines: dict[str, dict] = field(default_factory=dict)
    info: dict[str, dict] = field(default_factory=dict)  # run -> scale, run length, citation, runs stated


def compute_trend(store: Store, n: int, spec: dict, fy_of_report: dict[str, int], years_of_run: dict[str, set[int]],
                  report_years: dict[int, list[str]], labels: SimpleNamespace | None = None) -> Figure:
    """One trend figure: its comparable runs, their points, the chart's traces, and the words of the chart,
    the table and the download."""
    labels = labels or factor_words([])
    item, title = _trend_item(n, spec)
    metric = spec["metric"]
    metric_rows = run_metric_source([metric])
    tagged = _tag_runs(store, spec, _metric_runs(store, item, metric_rows), fy_of_report, years_of_run)
    points = _trend_points(store, tagged, metric, metric_rows, spec.get("series"))
    missing = _missing_years(spec, points, report_years)
    traces, machine_order = _traces(points)
    texts = TrendTexts(spec, metric, labels, tagged)
    chart_words = {lang: texts.chart_words(traces, machine_order, points, lang) for lang in LANGS}
    years = sorted({p["year"] for p in points} | {m["year"] for m in missing})
    chart = ChartData("trend", dict(item.options), {"traces": traces, "years": years}, chart_words)
    all_runs = sorted({r for p in points for r in p["runs"]})
    fig = Figure(
        id=item.id, number=f"T.{n}", chart="line", label=words.both("figure_label", f"T.{n}"),
        caption=title.as_dict(), footnote=None, runs=all_runs, points=len(points),
        provenance=item_provenance(store, labels, all_runs, set()), chart_data=chart)
    fig.trend = {
        "compared": {lang: words.t(lang, "trend_compared", _conditions_text(spec, lang, labels)) for lang in LANGS},
        "columns": {lang: [words.t(lang, f"trend_col_{c}") for c in TREND_COLUMNS] for lang in LANGS},
        "rows": {lang: [texts.table_row(p, lang) for p in points] for lang in LANGS},
        "csv_columns": {lang: [words.t(lang, f"trend_col_{c}") for c in TREND_CSV_COLUMNS] for lang in LANGS},
        "csv_rows": {lang: [texts.csv_row(p, lang) for p in points] for lang in LANGS},
        "missing": [{"year": m["year"], "why": m["why"]} for m in missing],
        "machines": len(machine_order),
    }
    return fig


def _trend_item(n: int, spec: dict) -> tuple[Item, Text]:
    """The trend as an item of the configuration (its where, options and title) and its title."""
    sid = str(spec.get("id", f"trend-{n}"))
    title = text(spec.get("title"), f"[[params.trends]] {sid} title", CONFIG_FILE) or Text.of(words.same(sid))
    item = Item(kind="figure", id=sid, number=str(n), caption=title, spec_file=CONFIG_FILE,
                chapter_id="trends", metrics=[spec["metric"]], where=dict(spec.get("where", {})),
                options=dict(spec.get("options", {})))
    return item, title


def _metric_runs(store: Store, item: Item, metric_rows: str) -> list[tuple[str, str | None, str]]:
    """(run, run.toml as JSON, origin) of the ok runs with a value of the metric that match ``where``; none
    when ``where`` names what the store does not hold. ``metric_rows``: the metric's own branches of
    run_metrics (planning the view's every branch would cost most of a trend's time), the same rows."""
    params: list[Any] = [item.metrics[0]]
    try:
        cond = analysis.where_sql(item, store, params)
    except KansokuError:
        return []
    return store.query(
        f"SELECT m.run_id, r.run_toml::VARCHAR, r.origin FROM {metric_rows} m "
        f"JOIN runs r ON r.run_id = m.run_id AND r.status = 'ok' "
        f"WHERE m.metric = ? AND m.value IS NOT NULL AND NOT isnan(m.value) AND {cond}", params)


def _tag_runs(store: Store, spec: dict, rows: list, fy_of_report: dict[str, int],
              years_of_run: dict[str, set[int]]) -> TrendRuns:
    """Each comparable run's fiscal year(s), series value, machine, scale and length; a run outside the
    declared scales, or without a series value, is left out."""
    ids = [r[0] for r in rows]
    facs: dict[str, dict[str, str]] = {}
    if ids:
        for run_id, f, v in store.query(
                "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids]):
            facs.setdefault(run_id, {})[f] = v
    facts = _run_facts(store, ids) if ids else {}
    scales = {str(s) for s in spec.get("scale") or []}
    series_f = spec.get("series")
    out = TrendRuns()
    for run_id, rt, origin in rows:
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
        out.machines.setdefault(mach["key"], mach)
        out.info[run_id] = {"scale": scale, "duration_s": _seconds(fs.get("duration_s") or env.get("duration_s")
                                                                   or (facts.get(run_id) or {}).get("duration_s")),
                            "citation": (doc.get("published") or {}).get("citation"), "runs": env.get("runs")}
        for y in sorted(years):
            out.runs.append(run_id)
            out.years.append(y)
            out.series.append(sv)
            out.machine_keys.append(mach["key"])
    return out


def _seconds(v: Any) -> float | None:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def _trend_points(store: Store, tagged: TrendRuns, metric: str, metric_rows: str, series_f: str | None) -> list[dict]:
    """The points (TREND_POINTS_SQL), in the order of year, series, origin and machine."""
    if not tagged.runs:
        return []
    ignored = list(TREND_IGNORED_FACTORS) + ([series_f] if series_f else [])
    points = [{"series": sv, "origin": origin, "machine": mk, "year": y, "value": med, "lo": lo, "hi": hi,
               "runs": list(runs), "cond": dict(cond_map or {})}
              for sv, origin, mk, y, med, lo, hi, runs, cond_map in store.query(
                  TREND_POINTS_SQL.replace("{metric_rows}", metric_rows),
                  [tagged.runs, tagged.years, tagged.series, tagged.machine_keys, metric, ignored])]
    sort_v = analysis.factor_sort_key(None, "v")
    points.sort(key=lambda p: (p["year"], sort_v(p["series"]), p["origin"], p["machine"]))
    return points


def _traces(points: list[dict]) -> tuple[list[dict], list[str]]:
    """The chart's traces, one per (series, origin, machine), with the points of one year side by side, never
    on top of each other; and the machines in the order they first appear."""
    machine_order = sorted({p["machine"] for p in points},
                           key=lambda k: (min(p["year"] for p in points if p["machine"] == k), k))
    series_order = sorted({p["series"] for p in points}, key=analysis.factor_sort_key(None, "v"))
    per_year: dict[int, list[int]] = {}
    for i, p in enumerate(points):
        per_year.setdefault(p["year"], []).append(i)
    offsets = {}
    for idx in per_year.values():
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
    return traces, machine_order


class TrendTexts:
    """What a reader reads of a trend's points, per language: the series, the condition, the machine, the
    run length and the origin, in the chart's legend and hovers, the table and the download."""

    def __init__(self, spec: dict, metric: str, labels: SimpleNamespace, tagged: TrendRuns):
        self.series_f = spec.get("series")
        self.metric = metric
        self.labels = labels
        self.machines = tagged.machines
        self.info = tagged.info
        y_title = text(spec.get("y_title"), "y_title", CONFIG_FILE) if spec.get("y_title") else None
        self.y_title = y_title

    def series_name(self, sv: str, lang: str) -> str:
        key = f"trend_series_{self.series_f}"
        return words.t(lang, key, sv) if self.series_f and key in words.keys() else sv

    def length(self, p: dict, lang: str) -> str:
        durs = sorted({self.info[r]["duration_s"] for r in p["runs"] if self.info[r]["duration_s"] is not None})
        dur = "/".join(f"{float(d):g}" for d in durs) if durs else "?"
        n_runs = len(p["runs"])
        if p["origin"] == "transcribed":  # one printed value per condition: the runs it summarises
            stated = {self.info[r]["runs"] for r in p["runs"] if self.info[r]["runs"]}
            n_runs = max(stated) if stated else None
        return words.t(lang, "trend_length", dur, runs=n_runs if n_runs is not None else "?")

    def origin(self, p: dict, lang: str) -> str:
        if p["origin"] != "transcribed":
            return words.t(lang, "trend_origin_measured")
        cit = next((self.info[r]["citation"] for r in p["runs"] if self.info[r]["citation"]), None) or {}
        return words.t(lang, "trend_origin_transcribed", citation_text(cit, lang))

    def condition(self, p: dict, lang: str) -> str:
        """The point's condition: factors with their labels, never key=value."""
        return ", ".join(_factor_text(f, [p["cond"][f]], lang, self.labels)
                         for f in TREND_HOVER_FACTORS if f in p["cond"])

    def machine(self, p: dict, lang: str) -> str:
        return _machine_long(self.machines[p["machine"]], lang)

    def chart_words(self, traces: list[dict], machine_order: list[str], points: list[dict], lang: str) -> dict:
        """The legend's names and each point's hover lines."""
        short = machine_labels({k: self.machines[k] for k in machine_order}, lang)
        names, hovers = [], []
        for tr in traces:
            name = f"{self.series_name(tr['series'], lang)} · {short[machine_order[tr['machine_index']]]}"
            names.append(name + (words.t(lang, "trend_transcribed_suffix") if tr["origin"] == "transcribed" else ""))
            hovers.append([self.hover(p, lang) for p in points
                           if (p["series"], p["origin"], p["machine"]) == (tr["series"], tr["origin"],
                                                                           machine_order[tr["machine_index"]])])
        return {"names": names, "hover": hovers, "x_title": words.t(lang, "trend_axis_fiscal_year"),
                "y_title": self.y_title.get(lang) if self.y_title else analysis.metric_label(self.metric, lang)}

    def hover(self, p: dict, lang: str) -> list[str]:
        cond = self.condition(p, lang)
        return [self.series_name(p["series"], lang),
                f"{words.t(lang, 'trend_axis_fiscal_year')}: {p['year']}",
                f"{analysis.metric_label(self.metric, lang)}: {_fmt(p['value'])}" + (f" ({cond})" if cond else ""),
                f"{words.t(lang, 'trend_col_machine')}: {self.machine(p, lang)}",
                f"{words.t(lang, 'trend_col_length')}: {self.length(p, lang)}",
                f"{words.t(lang, 'trend_col_origin')}: {self.origin(p, lang)}"]

    def table_row(self, p: dict, lang: str) -> list[str]:
        return [str(p["year"]), self.series_name(p["series"], lang), _fmt(p["value"]),
                f"{_fmt(p['lo'])}–{_fmt(p['hi'])}" if len(p["runs"]) > 1 else "—", self.condition(p, lang),
                self.machine(p, lang), self.length(p, lang), self.origin(p, lang)]

    def csv_row(self, p: dict, lang: str) -> list[str]:
        """The download's row: the numbers as exact decimals, the runs' min, max and count."""
        return [str(p["year"]), self.series_name(p["series"], lang), f"{p['value']:.12g}", f"{p['lo']:.12g}",
                f"{p['hi']:.12g}", str(len(p["runs"])), self.condition(p, lang), self.machine(p, lang),
                self.length(p, lang), self.origin(p, lang)]


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
    studies: dict = {}
    for r in reports:
        for v, t in r.study_titles.items():
            studies.setdefault(v, t)
        for f, t in r.factor_names.items():
            names.setdefault(f, t)
        for f, vals in r.factor_labels.items():
            for v, t in vals.items():
                value_labels.setdefault(f, {}).setdefault(v, t)
        for f, o in r.factor_order.items():
            order.setdefault(f, o)
    return SimpleNamespace(factor_names=names, factor_labels=value_labels, factor_order=order, study_titles=studies)
