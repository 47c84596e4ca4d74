"""The page of every run of a report: what it is, what it measured, how it behaved, where the report uses it.

Every run behind a table or figure of the report gets a page (``kansoku.model.RunPage``), whatever the spec
declares: its factors and run.toml (machine, versions, commands, PostgreSQL settings), each metric beside
the median, min and max of its condition (the report's runs sharing every factor but ``rep``), its
per-second series (pgbench TPS and latency, CPU and disks over the run window; aggregated per second, never
a transaction row), its system calls (strace -c) and fio jobs, its raw files, and every table cell and
figure that uses it.

Cost: a fixed number of set-based queries, never one per run, so a campaign of 1,000 runs costs the same
handful of queries as one of 10: every run's metrics and events once per build (the ``run_metrics`` and
``run_events`` views compute all runs in one pass; every report's pages share the result), and per report
the series of all its runs in one query, run.toml, strace and fio. The per-second series are formatted in
SQL (fixed decimals per column) and only joined into CSV lines here; a condition's median, min and max are
taken over the few runs of the condition. A build keeps each run's metrics, series and events in the item
cache (report/cache.py) under the run's fingerprint: the next build reads the store for new or changed runs
only. It keeps each whole page too, under a key of everything the page shows (``ItemCache.run_page_key``: the
run's and its condition's fingerprints, the report's context and record of the run, the items using it): a
rebuild after one new run makes the pages of that run's condition again, and takes the others as they were.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import statistics
import threading
from collections.abc import Iterator
from typing import Any

from kansoku import parsers, words
from kansoku.analysis import steady
from kansoku.analysis import tables as analysis
from kansoku.analysis.commands import campaign_root, relative_to
from kansoku.model import (
    CHART_COLUMNS,
    REP,
    SERIES_COLUMNS,
    Chapter,
    Figure,
    KeptRunPage,
    ProvenanceRun,
    RunInfo,
    RunMetric,
    RunPage,
    RunSeries,
    RunUse,
    SourceFile,
    Table,
    condition_key,
    encode,
)
from kansoku.report.cache import ItemCache
from kansoku.report.environment import MACHINE_FIELDS, SERVER_META, SETTING_NOISE, machine_value
from kansoku.spec.model import GROUPING, LANGS, Report
from kansoku.store.db import RUN_VIEWS, Store, run_metric_selects
from kansoku.values import stable

# the events marked on a run's TPS chart and listed under it (analysis/steady.py, docs/steady-state.md)
EVENT_KINDS = ("checkpoint", "restartpoint", "stall", "steady_start", "steady_end")
SIGNIFICANT = 4   # digits a run page prints of a metric (the condition's magnitude decides the decimals)
MAX_DECIMALS = 6
DECIMALS_BELOW = 3  # RunMetric.texts: a value printed with its own significant decimals and this many fewer
TOP_SYSCALLS = 15
# the headline metrics first (a pgbench run's throughput and latency), then the others in the parsers' order
HEADLINE = ("tps", "tps_steady", "tps_txlog", "transactions_processed", "latency_avg_ms", "latency_stddev_ms",
            "latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms")

# Every metric of every stored run, read once per build and shared by every report's run pages: each metric's
# branch of the run_metrics view computes it for all runs in one pass (a per-report or per-run query would
# repeat that pass); each report then takes its runs' values and its conditions' statistics from it. A metric
# that several hosts of a run measured is listed once per host, by role: cpu_idle_pct[server],
# cpu_idle_pct[client]. The branches are read one at a time (``_all_metrics``; reading the whole view in one
# statement holds every branch's working memory at once).

# The same for a few runs (a rebuild after new runs; the others come from the cache): the same branches over
# a connection whose tall tables hold these runs' rows alone (``Store.runs_only``), so that a run costs its
# own rows, not the store's. A constant run filter (``_IN_RUNS``, :func:`only_runs`) alone does not do it:
# DuckDB pushes it through the views' unions and groupings but not through every window (pgbench's progress
# lines are windowed by file, sys_series_chosen by run or file), and a run id's zone maps (8-byte string
# prefixes, the same for every run of a campaign) skip no row group: one new run would pay for every
# run's rows (docs/build-performance.md).


# Runs whose pages are computed, written and dropped together (render/hugo.py writes each batch as it comes):
# a batch's series rows are Python lists of every second of every column, so the pages of every run held at
# once would grow with the number of runs; a batch bounds them.
RUN_PAGE_BATCH = 200


def only_runs(sql: str, run_ids: list[str]) -> str:
    """``sql`` restricted to ``run_ids`` by constants DuckDB can push down into the views: ``_IN_RUNS`` is
    replaced by the list of run ids as SQL string literals, and every ``JOIN sel ON sel.run_id = X.run_id``
    gets ``AND X.run_id IN (...)`` (the join keeps its meaning; the constant filter spares the views every
    other run). Run ids are quoted as SQL strings (a quote doubled), never spliced otherwise."""
    lits = "(" + ", ".join("'" + r.replace("'", "''") + "'" for r in run_ids) + ")"
    sql = re.sub(r"JOIN sel ON sel\.run_id = (\w+)\.run_id", lambda m: f"{m.group(0)} AND {m.group(1)}.run_id IN {lits}",
                 sql)
    return sql.replace("_IN_RUNS", lits)
# Every run's per-second series in one query: pgbench's per-second TPS (its best source, the seconds inside
# the run window), CPU of all CPUs (the best tool the run has) and its physical disks summed (the best
# tool), each binned to the whole second since the run's start and joined on it. Each column comes back
# as numbers rounded to its decimals and as text with exactly those decimals (the CSV).
_CPU = ("usr", "sys", "iowait", "soft", "steal", "idle")
_SERIES_VALUES = [c for c in SERIES_COLUMNS if c != "second"]
_SERIES_WITH = """
WITH sel AS (SELECT unnest(?::VARCHAR[]) AS run_id),
t AS (
    SELECT s.run_id, round(s.elapsed_s)::BIGINT AS second, avg(s.tps) AS tps,
           avg(s.latency_avg_ms) AS latency_avg_ms, max(s.latency_max_ms) AS latency_max_ms,
           any_value(s.series_source) AS tps_source
    FROM pgbench_tps_per_second s JOIN sel ON sel.run_id = s.run_id LEFT JOIN runs r ON r.run_id = s.run_id
    WHERE s.elapsed_s IS NOT NULL AND (r.start_time IS NULL OR r.end_time IS NULL OR
          (s.elapsed_s - s.interval_s >= -0.001 AND s.elapsed_s <= epoch(r.end_time) - epoch(r.start_time) + 0.001))
    GROUP BY ALL
), chost AS (  -- one host per run: the campaign's default role (a run of several hosts is never averaged)
    SELECT x.run_id, arg_min(x.host, CASE WHEN x.role = coalesce(r.default_role, 'server') THEN 0 ELSE 1 END) AS host
    FROM (SELECT DISTINCT c.run_id, c.host, c.role FROM cpu_in_run c JOIN sel ON sel.run_id = c.run_id) x
    LEFT JOIN runs r ON r.run_id = x.run_id GROUP BY x.run_id
), c0 AS (
    SELECT c.* FROM cpu_in_run c JOIN sel ON sel.run_id = c.run_id
    JOIN chost ON chost.run_id = c.run_id AND c.host IS NOT DISTINCT FROM chost.host
    WHERE c.cpu = 'all' AND c.t_s IS NOT NULL
), cbest AS (
    SELECT run_id, arg_min(tool, CASE tool WHEN 'sar' THEN 1 WHEN 'mpstat' THEN 2 WHEN 'iostat' THEN 3 ELSE 4 END)
           AS tool
    FROM c0 GROUP BY run_id
), c AS (
    SELECT c0.run_id, round(c0.t_s)::BIGINT AS second, any_value(c0.tool) AS cpu_tool,
           """ + ", ".join(f"avg(c0.{x}_pct) AS cpu_{x}_pct" for x in _CPU) + """
    FROM c0 JOIN cbest ON cbest.run_id = c0.run_id AND cbest.tool = c0.tool GROUP BY ALL
), dhost AS (
    SELECT x.run_id, arg_min(x.host, CASE WHEN x.role = coalesce(r.default_role, 'server') THEN 0 ELSE 1 END) AS host
    FROM (SELECT DISTINCT d.run_id, d.host, d.role FROM disk_in_run d JOIN sel ON sel.run_id = d.run_id) x
    LEFT JOIN runs r ON r.run_id = x.run_id GROUP BY x.run_id
), d0 AS (
    SELECT d.* FROM disk_in_run d JOIN sel ON sel.run_id = d.run_id
    JOIN dhost ON dhost.run_id = d.run_id AND d.host IS NOT DISTINCT FROM dhost.host
    WHERE NOT coalesce(d.is_virtual, false) AND NOT coalesce(d.is_partition, false) AND d.t_s IS NOT NULL
), dbest AS (
    SELECT run_id, arg_min(tool, CASE tool WHEN 'sar' THEN 1 ELSE 2 END) AS tool FROM d0 GROUP BY run_id
), dsum AS (
    SELECT d0.run_id, d0.tool, d0.t_s, sum(d0.read_kb_s) AS rd, sum(d0.write_kb_s) AS wr, max(d0.util_pct) AS ut
    FROM d0 JOIN dbest ON dbest.run_id = d0.run_id AND dbest.tool = d0.tool GROUP BY ALL
), d AS (
    SELECT run_id, round(t_s)::BIGINT AS second, any_value(tool) AS disk_tool, avg(rd) AS disk_read_kb_s,
           avg(wr) AS disk_write_kb_s, avg(ut) AS disk_util_pct
    FROM dsum GROUP BY ALL
), j AS (
    SELECT coalesce(t.run_id, c.run_id, d.run_id) AS run_id, coalesce(t.second, c.second, d.second) AS second,
           t.tps_source, c.cpu_tool, d.disk_tool,
           """ + ", ".join(_SERIES_VALUES) + """
    FROM t FULL JOIN c ON c.run_id = t.run_id AND c.second = t.second
         FULL JOIN d ON d.run_id = coalesce(t.run_id, c.run_id) AND d.second = coalesce(t.second, c.second)
)
"""
# each run's seconds (the rows of j, or of the table made of them) as one row: its numbers as lists, and its
# CSV text whole (RunSeries.csv: the header, then a line a second of the columns the run has, any value
# present, each with its fixed decimals, an empty field for a second without a sample). The text is made here,
# not in Python: a run's ten text columns would be thousands of strings fetched, kept in the cache and joined
# again.
_SERIES_HAS = {col: f"_has_{col}" for col in SERIES_COLUMNS}
_SERIES_TEXT = {col: "second::VARCHAR" if col == "second" else f"printf('%.{SERIES_COLUMNS[col]}f', {col})"
                for col in SERIES_COLUMNS}


def _series_json_number(col: str) -> str:
    """A value of ``col`` as json.dumps writes the number the query gives (``round(col, decimals)``): DuckDB's
    text of a double is Python's repr (the shortest that reads back the same; 600,000 rounded values of 1e-4
    to 1e9 compared) but for a negative zero, which Python writes -0.0. Not finite: the row's text is NULL
    (the renderer's json.dumps refuses it, as before)."""
    if col == "second":
        return "second::VARCHAR"
    x = f"round({col}, {SERIES_COLUMNS[col]})"
    return f"CASE WHEN {x} = 0 AND atan2({x}, -1.0) < 0 THEN '-0.0' ELSE {x}::VARCHAR END"


_SERIES_LISTS = """
SELECT run_id, any_value(tps_source), any_value(cpu_tool), any_value(disk_tool), list(second ORDER BY second),
       """ + ",\n       ".join(f"list(round({col}, {SERIES_COLUMNS[col]}) ORDER BY second)" for col in _SERIES_VALUES) + """,
       concat_ws(',', """ + ", ".join(f"CASE WHEN any_value({_SERIES_HAS[col]}) THEN '{col}' END"
                                      for col in SERIES_COLUMNS) + """) || chr(10)
       || string_agg(concat_ws(',', """ + ", ".join(
    f"CASE WHEN {_SERIES_HAS[col]} THEN coalesce({_SERIES_TEXT[col]}, '') END" for col in SERIES_COLUMNS) + """),
                     chr(10) ORDER BY second) || chr(10),
       CASE WHEN """ + " OR ".join(f"bool_or(NOT isfinite({col}))" for col in _SERIES_VALUES if col in CHART_COLUMNS) + """
            THEN NULL ELSE '{{' || concat_ws(',', """ + ", ".join(
    f"""CASE WHEN any_value({_SERIES_HAS[col]}) THEN '"{col}":[' || string_agg(coalesce({_series_json_number(col)}, 'null'),
                ',' ORDER BY second) || ']' END""" for col in SERIES_COLUMNS if col in CHART_COLUMNS) + """) || '}}' END
FROM (SELECT *, """ + ", ".join(f"bool_or({col} IS NOT NULL) OVER (PARTITION BY run_id) AS {_SERIES_HAS[col]}"
                                for col in SERIES_COLUMNS) + """
      FROM {rows}) GROUP BY run_id
"""
SERIES_SQL = _SERIES_WITH + _SERIES_LISTS.format(rows="j")

# A first build reads the series of every run, a batch at a time: one query a batch scanned the CPU and disk
# views over every stored row (the run filter does not make the scan smaller), once per batch.
# Instead every run's seconds (the rows of j) are made once into a temporary table, in the order of the
# batches (``pos``: zone maps on an integer skip the other batches' row groups), and each batch groups its own.
# The table is filled SERIES_CHUNK runs a statement: one statement over every run joined, sorted and grouped
# every run's seconds at once, its memory growing with the runs, beyond the build's limit at a large campaign.
# Each statement scans the samples' tables whole again (their rows are not in the chunks' order), so a chunk is
# large: a campaign of up to SERIES_CHUNK runs is one statement.
SERIES_SECONDS_TABLE = "kansoku_series_seconds"
SERIES_CHUNK = 10_000
_SERIES_SECONDS_SQL = (_SERIES_WITH + ", o AS (SELECT unnest(?::VARCHAR[]) AS run_id, "
                       "generate_subscripts(?::VARCHAR[], 1) + ?::BIGINT AS pos)\n"
                       "SELECT o.pos, j.* FROM j JOIN o ON o.run_id = j.run_id ORDER BY o.pos, j.second")


def _factor_order(report: Report, factors: set[str]) -> list[str]:
    declared = list(report.factor_names)
    return [f for f in declared if f in factors] + sorted(factors - set(declared))


_NUMBER = re.compile(r"[-+]?[0-9][0-9,.]*")


def label_runs(report: Report, infos: dict[str, RunInfo]) -> None:
    """Each run's factors as a reader reads them (``RunInfo.factor_labels``: the report's names and value
    labels), and its title (``RunInfo.title``) made of them: the values of the
    factors that differ between the report's runs, where it belongs first (its campaign, its study) and then in
    the report's order, and its repetition last ("Streaming replication, sync 1 + async 1, run 2"); a factor
    every run shares (the campaign of a one-campaign report) says nothing of it."""
    values: dict[str, set[str]] = {}
    labels: dict[tuple[str, str, str], list[str]] = {}  # (factor, value, language): a campaign's runs share a few

    def label(f: str, v: str, lang: str) -> list[str]:
        got = labels.get((f, v, lang))
        if got is None:
            got = labels[f, v, lang] = [analysis.factor_name(report, f, lang),
                                        analysis.factor_value_label(report, f, v, lang)]
        return got
    for info in infos.values():
        # (a pair shared by the runs of one value: no reader changes it, and kept records hold it once)
        info.factor_labels = {lang: [label(f, v, lang) for f, v in info.factors.items()] for lang in LANGS}
        for f, v in info.factors.items():
            values.setdefault(f, set()).add(v)
    order = [f for f in GROUPING if f in values] + [f for f in _factor_order(report, set(values)) if f not in GROUPING]
    shown = [f for f in order if f != REP and len(values[f]) > 1]
    parts_of: dict[tuple[str, str, str], str] = {}  # (factor, value, language) -> its part of a title, made once

    def part(f: str, v: str, lang: str) -> str:
        got = parts_of.get((f, v, lang))
        if got is None:
            name, value = label(f, v, lang)
            # a bare number says nothing without its factor's name; a repetition is the title's last part
            got = parts_of[f, v, lang] = (words.t(lang, "column_run_n", v) if f == REP else
                                          words.t(lang, "factor_value", name=name, value=value)
                                          if _NUMBER.fullmatch(value) else value)
        return got
    separator = {lang: words.t(lang, "env_values_separator") for lang in LANGS}
    for info in infos.values():
        fs = info.factors
        named = [f for f in shown if f in fs] + ([REP] if REP in fs else [])
        info.title = {lang: separator[lang].join([part(f, fs[f], lang) for f in named]) or info.id for lang in LANGS}


def run_pages(store: Store, report: Report, chapters: list[Chapter], infos: dict[str, RunInfo],
              cache: ItemCache | None = None) -> dict[str, RunPage]:
    """The page of every run in ``infos`` (the runs behind the report's tables and figures), by run id in
    sorted order: every batch of :func:`run_page_batches` at once (the PDF's tests and small reports; the
    site's build writes each batch and drops it)."""
    pages: dict[str, RunPage] = {}
    for batch in run_page_batches(store, report, chapters, infos, cache):
        pages.update(batch)
    return dict(sorted(pages.items()))


def run_page_batches(store: Store, report: Report, chapters: list[Chapter], infos: dict[str, RunInfo],
                     cache: ItemCache | None = None, batch_runs: int | None = None,
                     handles: bool = False) -> Iterator[dict[str, RunPage | KeptRunPage]]:
    """The pages of the runs in ``infos``, a batch of about ``batch_runs`` runs (``RUN_PAGE_BATCH``) at a
    time, each batch whole conditions (a page shows its condition's median, min and max), its pages by run id
    in sorted order. Nothing of a batch is kept once it is handed over, so that what a build holds does not
    grow with the number of runs. ``cache``: a page whose key is unchanged is the last build's; each run's
    metrics, per-second series and events are kept by the run's fingerprint and read again while it holds (a
    rebuild after one new run queries that run alone). ``handles``: a page kept by the last build is handed over
    as a KeptRunPage (its key, record and whether it has series; the whole page read only if asked: the site's
    renderer, render/run_pages.py, needs no more when its files are kept)."""
    run_ids = sorted(infos)
    if not run_ids:
        return
    batch_runs = batch_runs or RUN_PAGE_BATCH
    # the condition of each run: the report's runs with the same factors but rep
    conditions: dict[tuple, list[str]] = {}
    for rid in run_ids:
        conditions.setdefault(condition_key(infos[rid].factors), []).append(rid)
    # the first build (most runs missing): every run's metrics in one pass; a rebuild: the missing runs' alone
    keys, few = _data_keys(store, cache, run_ids)
    if "_kansoku_series_order" not in store.__dict__:  # every run's series are made in this order (_batch_series)
        store.__dict__["_kansoku_series_order"] = _batch_order(conditions, batch_runs)
    uses = _uses_index(chapters, set(run_ids))
    batch: list[str] = []
    for members in conditions.values():  # in the order of their first run
        batch.extend(members)
        if len(batch) >= batch_runs:
            yield _page_batch(store, report, uses, infos, sorted(batch), conditions, cache, keys, few, handles)
            batch = []
    if batch:
        yield _page_batch(store, report, uses, infos, sorted(batch), conditions, cache, keys, few, handles)


def records_key(store: Store, report: Report, run_ids: list[str], cache: ItemCache | None) -> str | None:
    """The key of the report's records of its runs (``ComputedReport.runs``: report/build.py labelled_provenance)
    and of what is made of them alone (their page data: render/records_cache.py). A record is made of its run's
    fingerprint (every column of the run it reads), the report's context (its labels), the report's runs (the
    factors that tell them apart: their titles) and where the store keeps the raw files (their copies' paths):
    the key is made of those. None: no cache, or a run without a fingerprint."""
    if cache is None or cache.directory is None or not run_ids:
        return None
    fps = cache.run_fingerprints(store)
    if any(rid not in fps for rid in run_ids):
        return None
    runs = "".join(f"\0{rid}\1{fps[rid]}" for rid in sorted(run_ids))
    return cache.whole_key("records", report, f"{os.fspath(store.blobs)}\0{runs}")


def key_records(store: Store, report: Report, infos: dict[str, RunInfo], cache: ItemCache | None) -> None:
    """Each record's key (``RunInfo.key``): the digest of what it is made of, as :func:`records_key` says, but
    of one run (its fingerprint, the report's context, where the store keeps the raw files) and with its title
    for the report's runs as a whole. Two records of one key are the same record: what is made of some records
    alone (a data-sources part's JSON) is kept while their keys are, and a new run encodes its own part again,
    not every run's. Left None without a cache or the run's fingerprint."""
    if cache is None or cache.directory is None:
        return
    fps = cache.run_fingerprints(store)
    context = cache.whole_key("record", report, os.fspath(store.blobs))
    for rid, info in infos.items():
        fp = fps.get(rid)
        if fp is not None:  # (a short text: hashlib keeps Python's lock, kansoku.digest's pieces are not needed)
            title = "\0".join(info.title.get(lang, "") for lang in LANGS)
            info.key = hashlib.sha256(f"{context}\0{rid}\1{fp}\0{title}".encode()).hexdigest()


# A record as a row: its fields in their declared order, its raw files' too (the rule is RunInfo's fields). Rows
# of tuples, strs and numbers are written and read back by pickle several times faster than the dataclasses.
_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(RunInfo))
_SOURCE_FIELDS = tuple(f.name for f in dataclasses.fields(SourceFile))
_SOURCES_AT = _RECORD_FIELDS.index("sources")


def records_rows(infos: dict[str, RunInfo]) -> list[tuple]:
    """The records as rows (:func:`records_of_rows` makes them again), for a build to keep them between
    processes: a spec edited leaves them as they were (report/build.py kept_records)."""
    rows = []
    for info in infos.values():
        row = [getattr(info, f) for f in _RECORD_FIELDS]
        row[_SOURCES_AT] = [tuple(getattr(s, f) for f in _SOURCE_FIELDS) for s in info.sources]
        rows.append(tuple(row))
    return rows


def records_of_rows(rows: list[tuple]) -> dict[str, RunInfo]:
    """The records :func:`records_rows` made rows of, by run id in the same order."""
    out = {}
    for row in rows:
        fields = list(row)
        fields[_SOURCES_AT] = [SourceFile(*s) for s in fields[_SOURCES_AT]]
        out[row[0]] = RunInfo(*fields)
    return out


def run_pages_key(report: Report, chapters: list[Chapter], infos: dict[str, RunInfo], records: str | None,
                  cache: ItemCache | None) -> str | None:
    """The key of a report's run pages as a whole: made of what every page's key is made of
    (``ItemCache.run_page_key``: the code, the report's context, each run's fingerprint and the report's record
    of it, its condition, the tables and figures that use it), for all the report's runs at once: ``records``
    (:func:`records_key` of ``infos``) and the uses of each run. While it holds, every page's key holds: a build
    takes the last build's pages whole (:func:`keep_run_pages`) without making one of them (a spec item edited
    whose runs stay the same: a caption, a table added over the same runs). None: no cache, or no records key."""
    if cache is None or cache.directory is None or not infos or records is None:
        return None
    uses = [[u.kind, u.chapter, u.item.id, u.item.label, sorted(u.runs), sorted(u.cells.items())]
            for u in _uses_index(chapters, set(infos))]
    return cache.whole_key("run-pages", report, records + _inputs_json(uses))


def keep_run_pages(store: Store, infos: dict[str, RunInfo], cache: ItemCache, key: str) -> bool:
    """The last build's run pages of a report whose :func:`run_pages_key` is ``key`` kept for the next build,
    as :func:`run_page_batches` keeps a page it finds unchanged (the page and its run's data); False when the
    cache no longer holds each of them (the pages must be made)."""
    pages = cache.load(key)
    if not isinstance(pages, dict) or len(pages) != len(infos) or not all(cache.has(k) for k in pages):
        return False
    cache.keep(key)
    for page_key, has_series in pages.items():
        cache.keep(page_key)
        cache.page_known(page_key, has_series)
    keys, _ = _data_keys(store, cache, sorted(infos))
    for k in keys.values():
        if k:
            cache.keep(k)
    cache.runs_reused += len(infos)
    return True


def remember_run_pages(cache: ItemCache, key: str, pages: dict[str, bool]) -> None:
    """The pages a build made or kept of a report whose :func:`run_pages_key` is ``key`` (page key -> whether
    it has series), for the next build's :func:`keep_run_pages`."""
    cache.save(key, pages)


def _batch_order(conditions: dict[tuple, list[str]], batch_runs: int) -> list[str]:
    """The runs in the order run_page_batches hands them over: whole conditions up to ``batch_runs`` runs,
    each batch's runs sorted."""
    order: list[str] = []
    batch: list[str] = []
    for members in conditions.values():
        batch.extend(members)
        if len(batch) >= batch_runs:
            order += sorted(batch)
            batch = []
    return order + sorted(batch)


def _page_batch(store: Store, report: Report, uses: list[_ItemUse], infos: dict[str, RunInfo],
                run_ids: list[str], conditions: dict[tuple, list[str]], cache: ItemCache | None,
                keys: dict[str, str | None], few: bool, handles: bool = False) -> dict[str, RunPage | KeptRunPage]:
    pages: dict[str, RunPage] = {}
    rep_key = analysis.factor_sort_key(None, REP)
    # what the runs of a condition share is made once a condition (its runs in order) and a factor value (its
    # names): a condition of the 10,000-run campaign has 50 runs, which every one of its pages listed again
    in_order: dict[tuple, list[ProvenanceRun]] = {}
    labelled: dict[tuple[str, str], tuple[dict[str, str], dict[str, str]]] = {}
    orders: dict[frozenset, list[str]] = {}  # (the runs of a report have a few sets of factors)
    for rid in run_ids:
        info = infos[rid]
        fs = info.factors
        factors = []
        names = frozenset(fs)
        if names not in orders:
            orders[names] = _factor_order(report, set(names))
        for f in orders[names]:
            if (f, fs[f]) not in labelled:
                labelled[(f, fs[f])] = ({lang: analysis.factor_name(report, f, lang) for lang in LANGS},
                                        {lang: analysis.factor_value_label(report, f, fs[f], lang) for lang in LANGS})
            factors.append(labelled[(f, fs[f])])
        cond = condition_key(fs)
        if cond not in in_order:
            siblings = sorted(conditions[cond], key=lambda r: (rep_key(infos[r].factors.get(REP, "")), r))
            in_order[cond] = [ProvenanceRun(r, infos[r].anchor, infos[r].factors.get(REP) or "·", False)
                              for r in siblings]
        pages[rid] = RunPage(info=info, factors=factors, condition=list(in_order[cond]))
    _uses(uses, pages)
    # a page whose inputs are those of a page of the last build is that page (the cache's run_page_key);
    # ``handles``: the site's renderer gets it as a KeptRunPage, read back only if its files are not kept
    todo, page_keys = run_ids, {}
    if cache is not None and cache.directory is not None:
        todo = []
        cond_keys: dict[int, str] = {}  # a condition's part of its pages' keys (its runs, their fingerprints), once
        blobs = os.fspath(store.blobs)
        texts: dict[int, tuple] = {}  # (the runs of a condition share their uses and factor labels)
        for rid in run_ids:
            page = pages[rid]
            cond = cond_keys.get(id(page.condition[0]) if page.condition else 0)
            if cond is None:
                cond = cache.condition_key(store, [r.id for r in page.condition],
                                           _inputs_json(encode(page.condition)))
                cond_keys[id(page.condition[0]) if page.condition else 0] = cond
            key = cache.run_page_key(store, report, rid, cond, _page_inputs(page, blobs, texts))
            has_series = cache.page_kept(key) if key and handles else None
            if has_series is not None:
                pages[rid] = KeptRunPage(page.info, key, has_series, functools.partial(
                    _read_back, store, report, page, key, cache, keys))
                continue
            got = cache.load(key) if key else None
            if got is None:
                todo.append(rid)
                page_keys[rid] = key
            else:
                pages[rid] = _unkept(got, page)
                cache.page_known(key, got.series is not None)
        cache.runs_reused += len(run_ids) - len(todo)  # their run data with them
    if todo:
        _fill_pages(store, report, {rid: pages[rid] for rid in todo}, cache, keys, few, page_keys)
    if cache is not None:  # the run data of the pages not computed stays for the next build's
        for rid in run_ids:
            if keys.get(rid):
                cache.keep(keys[rid])
    return pages


def _fill_pages(store: Store, report: Report, fresh: dict[str, RunPage], cache: ItemCache | None,
                keys: dict[str, str | None], few: bool, page_keys: dict[str, str | None]) -> None:
    """Compute the pages ``fresh`` (made by _page_batch: record, factors, condition, uses) from their runs'
    data, and keep each under its key (``page_keys``)."""
    todo = list(fresh)
    need = sorted(set(todo) | {r.id for rid in todo for r in fresh[rid].condition})
    values, series, events = _run_data(store, need, cache, keys, few, set(todo))
    _metrics(report, todo, fresh, values)
    _series({rid: series.get(rid) for rid in todo}, fresh)
    _run_toml(store, todo, fresh)
    _syscalls(store, todo, fresh)
    _fio(store, todo, fresh)
    _events({rid: events.get(rid, []) for rid in todo}, fresh)
    for rid in todo:
        if page_keys.get(rid):
            fresh[rid].key = page_keys[rid]
            cache.save(page_keys[rid], _kept(fresh[rid]))
            cache.page_known(page_keys[rid], fresh[rid].series is not None)


def _read_back(store: Store, report: Report, page: RunPage, key: str, cache: ItemCache,
               keys: dict[str, str | None]) -> RunPage:
    """The whole page behind a KeptRunPage (``page``: as _page_batch made it, before its run data): the one
    kept under ``key``, or, when it cannot be read, computed again (the store is open while the renderer
    writes the batch)."""
    got = cache.load(key)
    if got is not None:
        return _unkept(got, page)
    _fill_pages(store, report, {page.info.id: page}, cache, keys, True, {page.info.id: key})
    return page


def _kept(page: RunPage) -> RunPage:
    """The page as the item cache keeps it: without what _page_batch makes of the report before its key (the
    report's record of the run, its factors, condition and uses: inputs of the key, so the same for every page
    of the key), which :func:`_unkept` puts back. The condition's runs and the record's files would otherwise be
    about half of what each page pickles and writes."""
    return dataclasses.replace(page, info=None, factors=[], condition=[], uses=[])


def _unkept(got: RunPage, page: RunPage) -> RunPage:
    """A page kept by :func:`_kept` with the parts ``page`` (as _page_batch made it) has: the report's own
    record of the run (the renderer gives its raw files their URLs), factors, condition and uses."""
    got.info, got.factors, got.condition, got.uses = page.info, page.factors, page.condition, page.uses
    return got


def _page_inputs(page: RunPage, blobs: str, texts: dict[int, tuple] | None = None) -> str:
    """What a run page shows that the other parts of its key (the code, the report's context, the run's
    fingerprint, its condition's part: ``ItemCache.condition_key``, the condition's runs as the report names them
    and their fingerprints) do not cover: its factors as the report names them, the tables and figures that use
    it, and what the report's record of the run is made of beyond them: where the store keeps the raw files
    (``blobs``: their copies' paths) and the run's title (the factors that tell the report's runs apart). The
    record itself (raw files, factor labels) is not encoded: its run's fingerprint covers every column it reads,
    as for :func:`records_key`. The text is ``json.dumps`` of the three keys with ``sort_keys``, made of its
    parts (the encoder writes a value inside an object as it writes it alone). ``texts``: the factors and uses
    that pages share (a factor's labels, :func:`_uses`), each encoded once (:func:`_shared_items_json`)."""
    if texts is None:
        factors, uses = _inputs_json(page.factors), _inputs_json(encode(page.uses))
    else:
        factors, uses = _shared_items_json(page.factors, texts), _shared_items_json(page.uses, texts)
    return f'{{"factors": {factors}, "record": {_inputs_json([blobs, page.info.title])}, "uses": {uses}}}'


def _shared_items_json(items: list, texts: dict[int, tuple]) -> str:
    """``_inputs_json(encode(items))`` of a list whose items many pages share: each item's text made once, kept
    in ``texts`` with the item (whose id names it while it is held there)."""
    parts = []
    for item in items:
        got = texts.get(id(item))
        if got is None:
            got = texts[id(item)] = (item, _inputs_json(encode(item)))
        parts.append(got[1])
    return "[" + ", ".join(parts) + "]"


def _inputs_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _per_store(store: Store, name: str, compute):
    """Computed once per open store (a build opens it read-only: nothing changes under us)."""
    cache = store.__dict__.setdefault("_kansoku_run_pages_cache", {})
    if name not in cache:
        cache[name] = compute()
    return cache[name]


def _metrics_by_branch(store: Store, run_ids: list[str] | None = None, together: bool = False
                       ) -> dict[str, dict[str, float]]:
    """Metric -> value of each run (of ``run_ids``, else of every run), a branch of the run_metrics view at a
    time (the largest branch's memory alone; one statement of the whole view also costs its planning, above
    the branches' sum). ``together``: the branches in one statement, in their
    order (a few runs' own rows, ``Store.runs_only``: one statement is planned once instead of one per
    branch). A metric several hosts of a run measured is named by role: cpu_idle_pct[server], cpu_idle_pct[client]."""
    where = "" if run_ids is None else " AND run_id IN " + only_runs("_IN_RUNS", run_ids)
    selects = [f"SELECT run_id, metric, role, value FROM ({select}) WHERE value IS NOT NULL AND isfinite(value){where}"
               for select in run_metric_selects()]
    if together:
        selects = ["SELECT run_id, metric, role, value FROM (" + " UNION ALL ".join(
            f"SELECT *, {i} AS branch_no FROM ({sel})" for i, sel in enumerate(selects)) + ") ORDER BY run_id, metric, branch_no"]
    else:
        selects = [f"{sel} ORDER BY run_id, metric" for sel in selects]
    # each run's rows by metric, a run's dict made final before the next run's (every run's metrics of a
    # campaign are millions of values: no key, list or tuple more than the result's own)
    rows: dict[str, dict[str, Any]] = {}
    for sql in selects:
        for rid, metric, role, v in store.query(sql):
            mine = rows.get(rid)
            if mine is None:
                mine = rows[rid] = {}
            had = mine.get(metric)
            if had is None:
                mine[metric] = (role, v)
            elif type(had) is list:
                had.append((role, v))
            else:
                mine[metric] = [had, (role, v)]
    out: dict[str, dict[str, float]] = {}
    for rid in sorted(rows, key=lambda r: (r is None, r)):
        mine = rows.pop(rid)
        named: dict[str, float] = {}
        for metric in sorted(mine):
            got = mine[metric]
            if type(got) is list:
                for role, v in got:
                    named[f"{metric}[{role}]" if role is not None else metric] = stable(v)
            else:
                named[metric] = stable(got[1])
        out[rid] = named
    return out


# Views that several of a first build's queries read: the CPU and disk samples of every run's window (every
# run's per-second series, and the means that six and three branches of run_metrics read), and every run's
# steady state (the steady-state checks of the reports' tables, and the branches of run_metrics made of it:
# steady TPS, its spread, warm-up, ramp-down, stalls, drift). Each is computed once into a temporary table of its
# name on a second connection kept while the store is open
# (``_shared``), which every later statement of that connection reads in its place (DuckDB resolves a name to
# the temporary table first, inside view definitions too): the means are then computed from the samples'
# tables, and the series from the same, rather than each branch computing its view over every stored row
# again, and the samples' views (a pivot of every ``sys_metrics`` row) twice, for the means and the series
# (docs/build-performance.md).
SHARED_METRIC_VIEWS = ("cpu_in_run", "disk_in_run", "cpu_in_run_mean", "disk_in_run_mean", "pgbench_steady_state")


def _data_keys(store: Store, cache: ItemCache | None, run_ids: list[str]) -> tuple[dict[str, str | None], bool]:
    """Each run's key of its page data in the item cache, and whether few of them are missing there (a
    rebuild: at most a quarter; never without a cache)."""
    keys = {r: cache.run_key(store, r, "data") for r in run_ids} if cache is not None else {}
    n_missing = sum(1 for r in run_ids if not (keys.get(r) and cache.has(keys[r])))
    return keys, cache is not None and n_missing * 4 <= len(run_ids)


def share_samples(store: Store, cache: ItemCache | None) -> bool:
    """Before a build computes its reports: SHARED_METRIC_VIEWS made temporary tables on the build's own
    connection once (``Store.computed_here``), when most stored runs' data is not in the item cache (a first
    build: the run pages then compute every run's samples anyway). The reports' queries (the per-host check
    of the CPU and disk metrics, the runs a CPU chart can draw, ...) and the run pages (``_shared``) then read
    the same tables instead of each computing the pivot of every ``sys_metrics`` row again (the costliest
    view a query asks). A rebuild after a few new runs does not: their pages
    read the new runs' rows alone (``Store.runs_only``), and the reports' items are mostly cached. True when
    the tables were made."""
    run_ids = [r for (r,) in store.query("SELECT run_id FROM runs")]
    if not run_ids or _data_keys(store, cache, run_ids)[1]:
        return False
    store.computed_here(SHARED_METRIC_VIEWS)
    _per_store(store, "shared", lambda: (None, store))
    return True


def _shared(store: Store) -> Store:
    """The store on a connection in which SHARED_METRIC_VIEWS are temporary tables, made once per open store:
    its own when ``share_samples`` made them there, else a second one, closed with the store (a connection's
    cursors close with it)."""
    def make():
        held = store.computed_once(SHARED_METRIC_VIEWS)
        return held, held.__enter__()  # (the context manager is kept: it closes the connection when collected)
    return _per_store(store, "shared", make)[1]


def _all_metrics(store: Store) -> dict[str, dict[str, float]]:
    """Every run's metrics, once per open store (shared by every batch and report of a build)."""
    return _per_store(store, "metrics", lambda: _metrics_by_branch(_shared(store)))


def _run_data(store: Store, run_ids: list[str], cache: ItemCache | None, keys: dict[str, str | None],
              few: bool, counted: set[str] | None = None
              ) -> tuple[dict[str, dict[str, float]], dict[str, tuple], dict[str, list]]:
    """Each run's metrics (metric -> value), its series row (SERIES_SQL) and its events (``steady.events``) for
    one batch of runs, from the cache where the run's fingerprint is unchanged, the others from the store: all
    runs' metrics and events in one pass shared by every batch when most are missing (the first build, ``few``
    false), else only the missing runs'; the series of the batch's missing runs in one query."""
    values: dict[str, dict[str, float]] = {}
    series: dict[str, tuple] = {}
    events: dict[str, list] = {}
    missing = []
    for r in run_ids:
        got = cache.load(keys[r]) if keys.get(r) else None
        if got is None:
            missing.append(r)
        else:
            values[r], series[r], events[r] = got["metrics"], got["series"], got["events"]
    if cache is not None:  # (counted: the runs whose page is made; the others only lend their metrics)
        computed = sum(1 for r in missing if counted is None or r in counted)
        cache.runs_computed += computed
        cache.runs_reused += (len(run_ids) if counted is None else len(counted)) - computed
    if not missing:
        return values, series, events
    if not few:
        everyone = _all_metrics(store)  # one pass over every run, shared by every batch and report of the build
        fresh = {r: everyone.get(r, {}) for r in missing}
        every_event = _all_events(store)
        fresh_events = {r: every_event.get(r, []) for r in missing}
        rows = _batch_series(store, missing)
    else:  # a few runs: the views over these runs' rows alone (Store.runs_only), not over the whole store's
        fresh = {r: {} for r in missing}
        held = ItemCache.own_held(store, missing)  # made for the reports' per-run queries about the same runs
        with contextlib.nullcontext(held) if held is not None else store.runs_only(missing, views=RUN_VIEWS) as own:
            fresh.update(_metrics_by_branch(own, missing, together=True))
            got_events = steady.events(own, missing, constant=True)
            rows = {row[0]: tuple(row) for row in own.query(only_runs(SERIES_SQL, missing), [missing])}
        fresh_events = {r: got_events.get(r, []) for r in missing}
    for r in missing:
        values[r], series[r], events[r] = fresh[r], rows.get(r), _event_list(fresh_events[r])
        if keys.get(r):
            cache.save(keys[r], {"metrics": fresh[r], "series": rows.get(r), "events": events[r]})
    return values, series, events


def _batch_series(store: Store, run_ids: list[str]) -> dict[str, tuple]:
    """The series rows (SERIES_SQL's) of ``run_ids``, from every run's seconds made once per open store into
    SERIES_SECONDS_TABLE in the order the batches come (``_kansoku_series_order``, set by
    run_page_batches; the other stored runs after)."""
    shared = _shared(store)  # (the CPU and disk samples computed once: the metrics read them too)

    def make() -> dict[str, int]:
        order = list(store.__dict__.get("_kansoku_series_order", []))
        listed = set(order)
        order += [r for (r,) in store.query("SELECT run_id FROM runs ORDER BY run_id") if r not in listed]
        for start in range(0, max(len(order), 1), SERIES_CHUNK):  # (in order: the table's rows stay by pos)
            chunk = order[start:start + SERIES_CHUNK]
            shared.temp_table(SERIES_SECONDS_TABLE, _SERIES_SECONDS_SQL, [chunk, chunk, chunk, start],
                              append=start > 0)
        return {r: i + 1 for i, r in enumerate(order)}  # generate_subscripts counts from 1
    pos = _per_store(store, "series_positions", make)
    at = [pos[r] for r in run_ids if r in pos]
    if not at:
        return {}
    sql = _SERIES_LISTS.format(rows=f"{SERIES_SECONDS_TABLE} WHERE pos BETWEEN {min(at)} AND {max(at)} "
                                    f"AND run_id IN {only_runs('_IN_RUNS', run_ids)}")
    return {row[0]: tuple(row) for row in shared.query(sql)}


def _decimals(values: list[float]) -> int:
    """Decimals for a row of numbers printed side by side: four significant digits of the largest, then
    no trailing zero that every one of them would print (0.163 and 0.165, not 0.1630 and 0.1650). A number
    printed with d decimals that ends in 0 prints with d - 1 as the same text without that 0 (it is the
    nearest to the number with d - 1 decimals too), so each number is printed once and its trailing zeros
    counted (not printed again for each decimal dropped)."""
    d = min(analysis.sig_decimals(max(abs(x) for x in values), SIGNIFICANT), MAX_DECIMALS)
    drop = d
    for x in values:  # (a check only: printing rounds half up)
        if drop == 0:
            break
        text = f"{x:.{d}f}"
        drop = min(drop, len(text) - len(text.rstrip("0")))
    return d - drop


def _metrics(report: Report, run_ids: list[str], pages: dict[str, RunPage], values: dict[str, dict[str, float]]) -> None:
    """Each run's metrics beside the median, min and max of its condition (the report's runs sharing
    every factor but rep; ``page.condition``). The condition's three numbers are printed alike on each of its
    pages (its file holds them once: render/run_pages.py condition_json); the run's value with their decimals,
    or more where it needs them. Those decimals are in the condition's file too, and the run's data holds its
    value printed with each number of decimals they can be (``RunMetric.texts``), so that a new run leaves the
    other runs' own data as it was even when it changes them."""
    order = {m: i for i, m in enumerate(list(HEADLINE) + [m for m in parsers.metrics() if m not in HEADLINE])}
    labels: dict[str, dict[str, str]] = {}
    # a condition's median, min, max and count of a metric as printed, and the numbers
    stats: dict[tuple, tuple[str, str, str, int, list[float]]] = {}
    texts: dict[tuple[float, int], str] = {}

    def text(x: float, d: int) -> str:
        if (x, d) not in texts:
            texts[(x, d)] = analysis.round_text(x, d)
        return texts[(x, d)]
    for rid in run_ids:
        page = pages[rid]
        ids = tuple(r.id for r in page.condition)
        cond = None
        for metric, v in values.get(rid, {}).items():
            if (ids, metric) not in stats:
                if cond is None:
                    cond = [values.get(r, {}) for r in ids]
                vals = [c[metric] for c in cond if metric in c]
                three = [statistics.median(vals), min(vals), max(vals)]
                d = _decimals(three)
                stats[(ids, metric)] = (*(text(x, d) for x in three), len(vals), three)
            med_t, lo_t, hi_t, n, three = stats[(ids, metric)]
            if metric not in labels:
                labels[metric] = {lang: analysis.metric_label(metric, lang, report=report) for lang in LANGS}
            d = _decimals([v] + three)
            # a value within its condition's range gets at most its own significant decimals (the row's largest
            # number decides): those and a few fewer cover the condition's decimals but for a far larger range
            own = min(analysis.sig_decimals(v, SIGNIFICANT), MAX_DECIMALS)
            first, last = min(d, max(own - DECIMALS_BELOW, 0)), max(d, own)
            page.metrics.append(RunMetric(metric, labels[metric], v, d, [text(v, k) for k in range(first, last + 1)],
                                          first, med_t, lo_t, hi_t, n))
        page.metrics.sort(key=lambda m: (order.get(m.metric, len(order)), m.metric))


@dataclasses.dataclass
class _ItemUse:
    """A table or figure of the report and the runs it uses (a table's with the cells each run is behind)."""

    kind: str
    chapter: str
    item: Table | Figure
    runs: set[str]
    cells: dict[str, list[dict[str, str]]]


def _uses_index(chapters: list[Chapter], run_ids: set[str]) -> list[_ItemUse]:
    """Every table and figure of the report in its order, with the runs of ``run_ids`` it uses: made once a report,
    so that a batch of run pages looks its runs up (each batch walking every item's runs again would be quadratic
    in the runs)."""
    out = []
    for ch in chapters:
        for item_id in dict.fromkeys(ch.order):  # a table and a figure may share an id: both handled below
            t = ch.tables.get(item_id)
            if t is not None:
                cells = _cells_by_run(t, run_ids)
                out.append(_ItemUse("table", ch.id, t, {r for r in t.runs if r in run_ids} | set(cells), cells))
            f = ch.figures.get(item_id)
            if f is not None:
                out.append(_ItemUse("figure", ch.id, f, {r for r in f.runs if r in run_ids}, {}))
    return out


def _uses(index: list[_ItemUse], pages: dict[str, RunPage]) -> None:
    """Every table (with the cells) and figure that uses each run of ``pages``, in the report's order. The runs
    behind the same cells share one use (the runs of a condition: all of them; :func:`_page_inputs` encodes it
    once); no reader changes it."""
    for use in index:
        it = use.item
        shared: dict[tuple[int, ...], RunUse] = {}  # (a run's cells are the table's own label objects)
        for rid, page in pages.items():
            if rid in use.runs:
                cells = use.cells.get(rid, [])
                got = shared.get(tuple(map(id, cells)))
                if got is None:
                    got = shared[tuple(map(id, cells))] = RunUse(use.kind, it.id, it.label, use.chapter,
                                                                 f"{use.kind}-{it.id}", cells)
                page.uses.append(got)


def _cells_by_run(t: Table, run_ids: set[str]) -> dict[str, list[dict[str, str]]]:
    """run id -> the labels (row × column, per language) of the table's value cells that use the run."""
    cells: dict[str, list[dict[str, str]]] = {}
    for row in t.rows:
        stub = row[0].text if row else {lang: "" for lang in LANGS}
        for col, c in zip(t.columns, row):
            if c.kind in ("factor", "factor-value"):
                continue
            label = {lang: f"{stub[lang]} × {col.text[lang]}" for lang in LANGS}
            for rid in c.runs:
                if rid in run_ids and label not in cells.setdefault(rid, []):
                    cells[rid].append(label)
    return cells


def _series(rows: dict[str, tuple | None], pages: dict[str, RunPage]) -> None:
    for rid, row in rows.items():
        if row is None:
            continue
        _, tps_source, cpu_tool, disk_tool, seconds = row[:5]
        if rid not in pages or not seconds:
            continue
        values: dict[str, list] = {"second": list(seconds)}
        for i, col in enumerate(_SERIES_VALUES):
            values[col] = list(row[5 + i])
        cols = [c for c in SERIES_COLUMNS if any(v is not None for v in values[c])]
        pages[rid].series = RunSeries(cols, {c: values[c] for c in cols}, row[5 + len(_SERIES_VALUES)],
                                      tps_source, cpu_tool, disk_tool, row[6 + len(_SERIES_VALUES)])


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _run_toml(store: Store, run_ids: list[str], pages: dict[str, RunPage]) -> None:
    """Commands, machine, versions and PostgreSQL settings from each run's run.toml (as the appendix reads them)."""
    machines: dict[str, list] = {}
    for rid, rt, end, note in store.query(
            "SELECT run_id, run_toml::VARCHAR, end_time::VARCHAR, status_note FROM runs "
            "WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [run_ids]):
        p = pages.get(rid)
        if p is None:
            continue
        p.end, p.status_note = end, note
        doc = json.loads(rt) if rt else {}
        if not isinstance(doc, dict):
            continue
        p.meta = [(k, _text(v)) for k, v in doc.items()
                  if not isinstance(v, (dict, list)) and k not in ("start", "end", "hostname")]
        cmds = doc.get("commands")
        if isinstance(cmds, dict):
            # the collecting machine's paths under the campaign directory, relative to it (run.toml, linked
            # from the page, keeps them as recorded)
            camp = doc.get("campaign") if isinstance(doc.get("campaign"), dict) else {}
            root = campaign_root(rid, cmds, camp.get("plan"))
            p.commands = [(k, relative_to(_text(v), root)) for k, v in cmds.items() if not isinstance(v, (dict, list))]
            p.commands_relative = root is not None
        m = doc.get("machine")
        if isinstance(m, dict):
            # the same machine is listed by many runs: its rows made once (a function of its values alone)
            mk = json.dumps(m, sort_keys=True, ensure_ascii=False, default=str)
            if mk not in machines:
                keys = [k for k in MACHINE_FIELDS if k in m] + sorted(k for k in m if k not in MACHINE_FIELDS)
                machines[mk] = [(words.both(f"env_field_{k}") if k in MACHINE_FIELDS else words.same(k),
                                 machine_value(k, m[k], m)) for k in keys]
            p.machine = list(machines[mk])
        vers = doc.get("versions")
        if isinstance(vers, dict):
            p.versions = [(k, _text(v)) for k, v in vers.items()]
        server = doc.get("server")
        if isinstance(server, dict):
            names = set(server) - SERVER_META - SETTING_NOISE
            listed = server.get("non_default")
            if isinstance(listed, list):
                names &= set(map(str, listed))
            else:
                p.settings_kind = "captured"
            p.settings = [(k, _text(server[k])) for k in sorted(names, key=str.lower)]


def _num(v: Any, digits: int) -> str:
    return "—" if v is None else analysis.fmt_number(float(v), digits)


def _syscalls(store: Store, run_ids: list[str], pages: dict[str, RunPage]) -> None:
    for rid, name, pct, secs, calls, errors in store.query(
            "SELECT run_id, syscall, time_pct, seconds, calls, errors FROM strace_top_syscalls "
            "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND time_rank <= ? ORDER BY run_id, time_rank",
            [run_ids, TOP_SYSCALLS]):
        if rid in pages:
            pages[rid].syscalls.append({"syscall": name, "time_pct": _num(pct, 2), "seconds": _num(secs, 6),
                                        "calls": _num(calls, 0), "errors": _num(errors, 0)})


def _fio(store: Store, run_ids: list[str], pages: dict[str, RunPage]) -> None:
    for rid, job, direction, rw, bs, depth, numjobs, bw, iops, lat, p99 in store.query(
            "SELECT run_id, jobname, direction, rw, bs, iodepth, numjobs, bw_kib_s, iops, lat_mean_us, clat_p99_us "
            "FROM fio_jobs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
            "QUALIFY dense_rank() OVER (PARTITION BY run_id ORDER BY report_format) = 1 "
            "ORDER BY run_id, job_no, direction", [run_ids]):
        if rid in pages:
            pages[rid].fio.append({"job": job, "direction": direction, "rw": rw, "bs": bs,
                                   "iodepth": depth, "numjobs": numjobs, "bw_kib_s": _num(bw, 1),
                                   "iops": _num(iops, 1), "lat_mean_us": _num(lat, 2), "clat_p99_us": _num(p99, 2)})


def _all_events(store: Store) -> dict[str, list]:
    """Checkpoints, stalls and the steady window of every stored run: the run_events view is computed for
    every run in one pass, once per build, for every report (a rebuild reads only its new runs'); by the
    thread :func:`events_ahead` started, when it did."""
    ahead = store.__dict__.get("_kansoku_events_ahead")
    if ahead is not None:
        return _per_store(store, "events", ahead.result)
    return _per_store(store, "events", lambda: _every_event(store))


def _every_event(store: Store) -> dict[str, list]:
    return steady.events(store, [r[0] for r in store.query("SELECT run_id FROM runs")])


class _EventsAhead:
    """:func:`_every_event` on a second connection, in a thread of its own (see :func:`events_ahead`)."""

    def __init__(self, store: Store):
        self._cur = store.con.cursor()
        self._store = Store(self._cur, store.path, True)
        self._value: dict[str, list] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kansoku-run-events", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = _every_event(self._store)
        except BaseException as exc:  # raised by result(), in the thread that asks for the events
            self._error = exc

    def result(self) -> dict[str, list]:
        self._thread.join()
        self._cur.close()
        if self._error is not None:
            raise self._error
        return self._value

    def close(self) -> None:
        if self._thread.is_alive():
            try:
                self._cur.interrupt()
            except Exception:  # noqa: BLE001 (no statement running: nothing to interrupt)
                pass
        self._thread.join()
        self._cur.close()


def events_ahead(store: Store) -> _EventsAhead:
    """Every run's events, which the first batch of a first build's run pages reads (:func:`_all_events`),
    computed from now on by a thread of its own on a second connection of the store, while the build computes
    its reports on the first: the run_events view reads pgbench's and PostgreSQL's tables, none of the samples'
    temporary tables of that connection (``share_samples``), and DuckDB runs the two connections' statements at
    once, without Python's lock (the statement is long enough at many runs to keep the renderer waiting
    before the first batch; docs/build-performance.md). ``close()`` (always, before the store is closed) interrupts it
    and waits for it."""
    ahead = _EventsAhead(store)
    store.__dict__["_kansoku_events_ahead"] = ahead
    return ahead


def _event_list(evs: list) -> list[dict[str, Any]]:
    """A run's events as its page lists them (the kinds of EVENT_KINDS; labels in every language)."""
    return [{"kind": e.event, "at": round(e.at_s, 3), "until": None if e.until_s is None else round(e.until_s, 3),
             "label": {lang: e.label(lang) for lang in LANGS}} for e in evs if e.event in EVENT_KINDS]


def _events(events: dict[str, list], pages: dict[str, RunPage]) -> None:
    for rid, evs in events.items():
        if rid in pages:
            pages[rid].events = evs
