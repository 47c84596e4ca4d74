"""Render the page of every run (``ComputedReport.run_pages``) for Hugo: small files, one set per run.

For each run of a report, under the generated directory:

- ``assets/runs/<report>/<anchor>.json``  the run's page-ready data (``RunPageData``), read by
  ``layouts/runs/single.html`` (an asset, not a data file: Hugo reads it only when it renders the page; it
  holds the per-second series once, not per language, as one JSON text: ``series_text``), less what its
  condition's pages share (``page_json``);
- ``assets/runs/<report>/conditions/<name>.json``  what the pages of a condition share, once a condition
  (``condition_json``): its runs (every page lists them) and its metrics' labels, read by
  ``layouts/partials/run-condition.html`` once a condition and language (``partialCached``), not once a page;
- ``static/csv/<report>/runs/<anchor>.csv``  its per-second series as a download (fixed decimals per column);
- ``content/reports/<report>/runs/<anchor>.<lang>.md``  a page per language, front matter only.

Nothing here computes: the numbers and the CSV text are in the model; this module only places files.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from dataclasses import dataclass
from typing import Any

from kansoku import words
from kansoku.digest import digest
from kansoku.model import (
    CHART_COLUMNS,
    ComputedReport,
    KeptRunPage,
    RunPage,
    RunSeries,
    RunUse,
    SourceFile,
    condition_key,
    encode,
)
from kansoku.render.views import command_units

LANGS = words.LANGS
# the text of a file the generated directory already holds as it should be (render/hugo.py sync_files
# leaves it, unread; compared by identity)
KEEP = "\0kept"


def run_csv(rep_id: str, anchor: str) -> str:
    """Where a run page's series download is, under the site (and under the generated ``static``)."""
    return f"csv/{rep_id}/runs/{anchor}.csv"


def run_csv_url(rep_id: str, anchor: str) -> str:
    return "/" + run_csv(rep_id, anchor)


def generated_files(rep_id: str, anchor: str) -> tuple[str, str, dict[str, str]]:
    """A run page's files under the generated directory: its data, its series download (when it has series) and
    its page in each language."""
    return (f"assets/runs/{rep_id}/{anchor}.json", "static/" + run_csv(rep_id, anchor),
            {lang: f"content/reports/{rep_id}/runs/{anchor}.{lang}.md" for lang in LANGS})


def run_page_dirs(rep_id: str) -> tuple[str, ...]:
    """The directories under the generated directory that hold a report's run pages' files (and their
    conditions') and nothing else."""
    data, csv, mds = generated_files(rep_id, "-")
    return tuple(sorted({posixpath.dirname(p) for p in (data, csv, *mds.values())}))


RUN_PAGE_SUFFIX = ".html"  # a run page's address after its anchor (run_page)


def run_page(rep_id: str, anchor: str, lang: str) -> str:
    """Where a run page is, under the site: a file of its own, not a folder's index.html. A campaign's site is
    mostly run pages, and a rebuild links the unchanged ones from the site it replaces (render/page_reuse.py):
    a folder a page would cost a directory made for each of them. The templates link ``<runs>/<anchor>.html``
    (``RUN_PAGE_SUFFIX``: the site's parameter ``run_page_suffix``, render/hugo.py hugo_config)."""
    return f"{lang}/reports/{rep_id}/runs/{anchor}{RUN_PAGE_SUFFIX}"


def _front(d: dict) -> str:
    return "---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in d.items()) + "---\n"



def series_text(series: RunSeries, dumps) -> str:
    """The per-second columns of a run page as one JSON text (``RunPageData.series_json``), which the template
    writes into the page as it is, once, and the page's script hands to each chart's traces by column name
    (static/js/kansoku.js): Hugo does not parse thousands of numbers into values to write them out again,
    and the seconds are in the page once, not once per trace. The text holds the columns the charts draw
    (``CHART_COLUMNS``): as the series' query made it (``RunSeries.chart_json``, the same bytes), or made here."""
    text = series.chart_json
    if text is None:
        text = dumps({c: series.values[c] for c in series.columns if c in CHART_COLUMNS})
    # numbers and column names only; "<" escaped all the same, as the text goes inside a <script> element
    return text.replace("<", "\\u003c")


@dataclass
class SeriesData:
    """What the run page's template reads of its per-second series besides the columns' values (those are
    ``RunPageData.series_json``)."""

    columns: list[str]                           # the columns the run has (RunSeries.columns)
    tps_source: str | None
    cpu_tool: str | None
    disk_tool: str | None


def condition_name(factors: dict[str, str]) -> str:
    """The file name (without .json) of the data a condition's pages share: its factors but ``rep`` (a
    condition: model.condition_key)."""
    key = json.dumps(condition_key(factors), ensure_ascii=False)
    return "c-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass
class NamedValue:
    name: str
    value: Any


@dataclass
class RunCommand:
    """A line of run.toml's [commands] (a command, a directory, a query, a number) as the page sets it: in
    units a line breaks between, never inside (an option with its value: ``views.command_units``); a unit too
    long for a phone's column (a path, a quoted query) is ``long`` and may break inside."""

    name: str
    units: list[list[Any]]  # [text, long]


UNIT_COLUMNS = 30  # what a phone's column holds of the page's code


def run_command(name: str, value: Any) -> RunCommand:
    return RunCommand(name, [[u, len(u) > UNIT_COLUMNS] for u in command_units(str(value))])


@dataclass
class ToolVersion:
    tool: str
    value: str


@dataclass
class MetricData:
    """A metric of the run: its value printed with ``texts_from``, ``texts_from`` + 1, ... decimals; the page
    prints the text of the decimals its condition's file gives it (its label, and its condition's median, min,
    max and count, are in that file too: the same on each of its pages)."""

    metric: str
    texts_from: int
    texts: list[str]


@dataclass
class ConditionStats:
    """A metric's median, min and max over a condition's runs, as printed, and how many runs have it."""

    median: str
    low: str
    high: str
    n: int
    decimals: dict[str, int]  # each run's value's decimals, by its anchor (RunMetric.decimals)


@dataclass
class RunPageData:
    """A run page's own data (``assets/runs/<report>/<anchor>.json``): the run's record (its raw files with their
    addresses) but its factors, which ``factor_list`` shows as the report names them; its metrics; its series;
    what it recorded; and, by name, what its condition's pages share (``condition_json``): the condition's runs
    (``cond``, and the page's place in its list, ``condition_index``), the metrics' labels, and its uses, machine,
    versions and settings (``shared``). (A condition's list of runs would otherwise be a large part of every
    page's data, parsed and walked by Hugo for every page and language.)"""

    id: str
    origin: str
    status: str
    start: str | None
    end: str | None
    status_note: str | None
    citation: str | None
    hostname: str | None
    anchor: str
    sources: list[SourceFile]
    run_toml_url: str | None
    run_toml_sha256: str | None
    factor_list: list[NamedValue]
    cond: str
    condition_index: int
    metrics: list[MetricData]
    series: SeriesData | None                    # None: the run has no per-second series
    commands: list[RunCommand]
    commands_relative: bool
    meta: list[NamedValue]
    syscalls: list[dict[str, Any]]
    fio: list[dict[str, Any]]
    events: list[dict[str, Any]]
    shared: str
    csv: str | None = None                       # the series' download (run_csv_url)
    series_json: str | None = None               # the columns the charts draw, one JSON text (series_text)


def page_json(page: RunPage, shared: str, rep_id: str, dumps) -> dict:
    """A run page's own data (``RunPageData``) in the report ``rep_id``, encoded; ``dumps`` writes its series'
    columns (series_text)."""
    info, s = page.info, page.series
    return encode(RunPageData(
        id=info.id, origin=info.origin, status=info.status, start=info.start, end=page.end,
        status_note=page.status_note, citation=info.citation, hostname=info.hostname, anchor=info.anchor,
        sources=info.sources, run_toml_url=info.run_toml_url, run_toml_sha256=info.run_toml_sha256,
        factor_list=[NamedValue(n, v) for n, v in page.factors], cond=condition_name(info.factors),
        condition_index=[r.id for r in page.condition].index(info.id),
        metrics=[MetricData(m.metric, m.texts_from, m.texts) for m in page.metrics],
        series=SeriesData(s.columns, s.tps_source, s.cpu_tool, s.disk_tool) if s else None,
        commands=[run_command(k, v) for k, v in page.commands], commands_relative=page.commands_relative,
        meta=[NamedValue(k, v) for k, v in page.meta], syscalls=page.syscalls, fio=page.fio, events=page.events,
        shared=shared, csv=run_csv_url(rep_id, info.anchor) if s else None,
        series_json=series_text(s, dumps) if s else None))


@dataclass
class SharedData:
    """What the runs of a condition most often have in common: the tables and figures using them, one host,
    one configuration (a condition's file holds each different set once, by name)."""

    uses: list[RunUse]
    machine: list[NamedValue]
    versions: list[ToolVersion]
    settings: list[NamedValue]
    settings_kind: str


def page_shared(page: RunPage) -> dict:
    """A run's uses, machine, versions and settings (``SharedData``), encoded."""
    return encode(SharedData(page.uses, [NamedValue(k, v) for k, v in page.machine],
                             [ToolVersion(k, v) for k, v in page.versions],
                             [NamedValue(k, v) for k, v in page.settings], page.settings_kind))


def shared_name(shared: dict) -> str:
    """The name of a run's ``page_shared`` in its condition's file: the sha1 of their JSON."""
    return digest(json.dumps(shared, sort_keys=True, ensure_ascii=False), "sha1")[:16]  # (keeping Python's lock)


def condition_json(condition: list, pages: list[RunPage], shared: dict[str, dict]) -> dict:
    """What the pages of one condition share: its runs in order (id, anchor, repetition), the labels of
    the metrics of any of its pages, by language and metric name, each metric's median, min, max and count
    over the condition (``ConditionStats``: printed alike on each of its pages, report/runs.py _metrics), and
    each of its runs' uses, machine, versions and settings (``shared``: name -> ``page_shared``, one entry for
    each different set; a page names its own). A new run of the condition changes this file, not the other
    runs' own data (their values' decimals are here: ``MetricData``)."""
    labels: dict[str, dict[str, str]] = {lang: {} for lang in LANGS}
    stats: dict[str, dict] = {}
    for page in pages:
        for m in page.metrics:
            for lang in LANGS:
                labels[lang][m.metric] = m.label[lang]
            if m.metric not in stats:  # (the same on each page of the condition)
                stats[m.metric] = encode(ConditionStats(m.median, m.low, m.high, m.n, {}))
            stats[m.metric]["decimals"][page.info.anchor] = m.decimals
    return {"runs": [{"id": r.id, "anchor": r.anchor, "rep": r.rep} for r in condition],
            "labels": {lang: dict(sorted(v.items())) for lang, v in labels.items()},
            "stats": dict(sorted(stats.items())),
            "shared": dict(sorted(shared.items()))}


def run_page_files(rep: ComputedReport, dumps, kept=None, pages: dict[str, RunPage] | None = None,
                   stamps: dict[str, str] | None = None, conds: dict[str, str] | None = None
                   ) -> tuple[dict[str, str], int]:
    """The data, CSV and pages of every run page of ``rep`` (or of ``pages``, a batch of them), as {path under
    the generated directory: text}, and the number of pages. render/hugo.py writes them with the report's other
    files (only the files whose bytes change, stale ones removed). ``dumps`` is the renderer's JSON writer
    (refuses NaN and infinities). ``kept(path, key)``: whether the generated directory holds the file ``path``
    as written for a page of ``key`` (``RunPage.key``); such a file is not made again: its value is ``KEEP``.
    A ``KeptRunPage`` (a page of the last build, not read back) is read whole only when its files are not kept.
    ``pages`` holds whole conditions (report/runs.py run_page_batches). A condition's shared file is kept under
    a key made of all its pages' keys (``condition_file_key``); ``stamps`` gets that key by the file's path,
    and ``conds`` each page's condition file (``<report>/<anchor>`` -> its path)."""
    files: dict[str, str] = {}
    n = 0
    groups: dict[str, list] = {}  # condition name -> its pages
    loaded: dict[str, RunPage] = {}  # kept pages read whole
    shares: dict[str, tuple[str, dict]] = {}  # run id -> the name of its page_shared, and it

    def shared_of(run_id: str, page: RunPage) -> tuple[str, dict]:
        if run_id not in shares:
            s = page_shared(page)
            shares[run_id] = (shared_name(s), s)
        return shares[run_id]
    for run_id, page in (rep.run_pages if pages is None else pages).items():
        groups.setdefault(condition_name(page.info.factors), []).append(run_id)
        anchor = page.info.anchor
        data, series_csv, mds = generated_files(rep.id, anchor)
        has_series = page.has_series if isinstance(page, KeptRunPage) else page.series is not None
        csv = series_csv if has_series else None
        if kept is not None and page.key and kept(data, page.key) and (csv is None or kept(csv, page.key)):
            files[data] = KEEP
            if csv is not None:
                files[csv] = KEEP
        else:
            if isinstance(page, KeptRunPage):  # its files are not as the last build wrote them: the whole page
                page = page.full()
                csv = series_csv if page.series is not None else None
                loaded[run_id] = page  # (its condition's file below: read once)
            if csv is not None:
                files[csv] = page.series.csv
            files[data] = dumps(page_json(page, shared_of(run_id, page)[0], rep.id, dumps))
        for lang in LANGS:  # (front matter made of the page's key's inputs: its title is its record's)
            md = mds[lang]
            if kept is not None and page.key and kept(md, page.key):
                files[md] = KEEP
            else:
                files[md] = _front({"title": page.info.title.get(lang) or run_id, "report": rep.id, "run": anchor,
                                    "type": "runs", "generated": True, "url": "/" + run_page(rep.id, anchor, lang)})
            n += 1
    every = rep.run_pages if pages is None else pages
    for name, members in groups.items():
        key = condition_file_key([every[r].key for r in members])
        path = f"assets/runs/{rep.id}/conditions/{name}.json"
        if key and kept is not None and kept(path, key):
            files[path] = KEEP
        else:
            full = {r: loaded.get(r) or (every[r].full() if isinstance(every[r], KeptRunPage) else every[r])
                    for r in members}
            shared = dict(shared_of(r, p) for r, p in full.items())
            files[path] = dumps(condition_json(full[members[0]].condition, list(full.values()), shared))
        if key and stamps is not None:
            stamps[path] = key
        if conds is not None:
            for r in members:
                conds[f"{rep.id}/{every[r].info.anchor}"] = path
    return files, n


def condition_file_key(keys: list[str | None]) -> str | None:
    """The key a condition's shared file is kept under: made of every one of its pages' keys (``RunPage.key``),
    since it holds each of its runs' uses, machine, versions and settings (a spec item that starts using one
    run of a condition changes that run's key alone); None when a page has none."""
    if not keys or not all(keys):
        return None
    return "cond-" + hashlib.sha256("\0".join(sorted(keys)).encode()).hexdigest()
