"""The incremental build: a computed table or figure is kept beside the generated data and reused while
nothing it depends on has changed.

An item's key is the sha256 of
- the code version (every source file of the package and the words of ``i18n/``: a change of a parser, a
  query, a label or a drawing recomputes everything),
- the report's context (its spec without the chapters: factor names, labels and orders, metric labels,
  device groups, ...), and the item itself (its spec entry, number and chapter) but its caption, which is
  shown as written and put in when the item is taken from the cache,
- the fingerprint of every run the item can read: the runs its ``where`` selects (without the baseline's
  factor, whose other value a comparison reads; a range selects every run with the factor) and a run named
  by ``options.run``. A run's fingerprint covers its row in ``runs`` (status, origin, times, run.toml), its
  factors and the sha256 of each of its files with the time its rows were stored (another ingest of the same
  bytes may derive other rows), so a new, changed, re-labelled or removed run, or a run stored again, changes
  the key of exactly the items that can select it.

A build that cannot say which runs an item reads (an unknown factor in ``where``: an error the computation
reports) computes the item without the cache. Entries a build did not use are removed once it succeeds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from kansoku.analysis import noise
from kansoku.digest import digest
from kansoku.pickle_entries import PickleEntries
from kansoku.resources import code_version
from kansoku.store.db import RUN_VIEWS, RUNS, Store, sql_str
from kansoku.values import canon

# One fingerprint per run, in one query: everything of the run a table or figure can read, but where it was
# ingested from (run_dir, sources.path) and when the run's row was written (runs.ingested_at: a moved campaign
# ingested again rewrites it, its data the same). Each file counts by its sha256 and the time its rows were
# stored (sources.ingested_at, kept while the file is unchanged, even when seen at another place): the rows an
# ingest derives from a file are the ingest code's, so the same bytes stored by another ingest (a store made
# again by newer code: other rows, the same hashes) make another fingerprint. Each file's row counts whole as
# the report's record of the run reads it (report/provenance.py runs_provenance: size, tool, format, version,
# the rendering it was checked against): a run's fingerprint and the report's context decide that record. The
# run.toml as stored counts by DuckDB's 64-bit hash of its text, not by the text itself: a campaign's run.tomls are
# the largest text the query reads.
RUN_FINGERPRINTS_SQL = """
WITH f AS (
    SELECT run_id, string_agg(factor || '=' || value, chr(31) ORDER BY factor, value) AS fs
    FROM run_factors GROUP BY run_id
), s AS (
    SELECT run_id, string_agg(file_name || ':' || sha256 || '@' || ingested_at::VARCHAR || chr(29)
                              || concat_ws(chr(29), coalesce(size_bytes::VARCHAR, '-'), coalesce(tool, '-'),
                                           coalesce(format, '-'), coalesce(tool_version, '-'),
                                           coalesce(checked_against, '-'), coalesce(records_checked::VARCHAR, '-')),
                              chr(31) ORDER BY file_name, sha256) AS ss
    FROM sources WHERE run_id IS NOT NULL GROUP BY run_id
)
SELECT r.run_id, sha256(concat_ws(chr(30), r.origin, r.status, coalesce(r.status_note, ''),
           coalesce(r.start_time::VARCHAR, ''), coalesce(r.end_time::VARCHAR, ''), coalesce(r.hostname, ''),
           coalesce(r.citation, ''), coalesce(hash(r.run_toml::VARCHAR)::VARCHAR, ''),
           coalesce(r.run_toml_sha256, ''), coalesce(f.fs, ''), coalesce(s.ss, '')))
FROM runs r LEFT JOIN f USING (run_id) LEFT JOIN s USING (run_id)
UNION ALL  -- files of no one run (a published report's tables hold many runs): they count for every item
SELECT NULL, sha256(coalesce(string_agg(file_name || ':' || sha256 || '@' || ingested_at::VARCHAR, chr(31)
                                         ORDER BY file_name, sha256), ''))
FROM sources WHERE run_id IS NULL
"""


@dataclass
class ItemCache(PickleEntries):
    """Computed items kept in ``directory`` (pickled, one entry a key: kansoku/pickle_entries.py). ``hits``/``computed`` name the items of
    this build that were reused / computed (``<report>/<item>``)."""

    hits: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)
    of_runs_computed: list[str] = field(default_factory=list)  # ``<report>/<name>`` of :meth:`of_runs` computed
    per_run_computed: dict[str, list[str]] = field(default_factory=dict)  # name -> runs :meth:`per_run` computed
    runs_reused: int = 0    # runs whose page data (metrics, series; or the whole page) came from the cache
    runs_computed: int = 0  # ... were read from the store
    whole_queries: int = 0  # per-run queries run over every run (no kept rows to start from)
    _runs: dict[str, str] | None = None
    _store_id: int | None = None
    _run_keys: dict[tuple[str, str], str] = field(default_factory=dict)  # (run, kind) -> :meth:`run_key`
    _factors: dict[str, dict[str, set[str]]] | None = None
    _factors_store: int | None = None
    _contexts: dict[str, str] = field(default_factory=dict)
    _pages: dict[str, bool] | None = None  # the last build's index of kept run pages: page key -> has series
    _pages_now: dict[str, bool] = field(default_factory=dict)  # ... of this build's run pages
    _reading: list[set[str]] = field(default_factory=list)  # the kept run rows each item being computed reads
    _per_run: dict[str, dict] = field(default_factory=dict)  # key -> the entry of :meth:`per_run`, as this build has it

    PAGE_INDEX = "run-pages.json"  # in the directory: the kept run pages, so that a kept page is not read back

    def page_kept(self, key: str) -> bool | None:
        """Whether the run page kept under ``key`` has per-second series, from the last successful build's
        index (render/run_pages.py needs no more of a page whose files are kept), without reading the page;
        the entry is kept for the next build. None: not in the index, or its entry is gone (read it, or make it)."""
        if self._pages is None:
            try:
                got = json.loads((self.directory / self.PAGE_INDEX).read_text(encoding="utf-8"))
                self._pages = {k: v for k, v in got.items() if isinstance(v, bool)} if isinstance(got, dict) else {}
            except (OSError, ValueError):
                self._pages = {}
        series = self._pages.get(key)
        if series is None or not self.has(key):
            return None
        self.keep(key)
        self._pages_now[key] = series
        return series

    def page_known(self, key: str, has_series: bool) -> None:
        """A run page of this build kept under ``key`` (read back or saved): listed in the next build's index."""
        self._pages_now[key] = has_series

    @property
    def pages_now(self) -> dict[str, bool]:
        """This build's index of kept run pages (page key -> has series)."""
        return self._pages_now

    def prune_after(self, pages_now: dict[str, bool]) -> int:
        """:meth:`prune` for the build whose run pages are ``pages_now`` (a build computed by another process,
        whose entries and ``used`` this cache was made with)."""
        self._pages_now = dict(pages_now)
        return self.prune()

    def prune(self) -> int:
        """The index of the run pages of this build (written with the entries it names: after a successful
        build), then the entries it did not use removed."""
        if self.directory is None or not self.directory.is_dir():
            return super().prune()
        index = self.directory / self.PAGE_INDEX
        tmp = index.with_name(f".tmp-{self.PAGE_INDEX}")
        tmp.write_text(json.dumps(self._pages_now, sort_keys=True), encoding="utf-8")
        os.replace(tmp, index)
        self.used.add(self.PAGE_INDEX)
        return super().prune()

    def run_fingerprints(self, store: Store) -> dict[str, str]:
        if self._runs is None or self._store_id != id(store):
            self._runs = {r: fp for r, fp in store.query(RUN_FINGERPRINTS_SQL)}
            self._store_id = id(store)
            self._run_keys = {}
        return self._runs

    # At most this share of the runs changed: their rows are computed alone (Store.runs_only), else the
    # whole query runs again
    FEW_RUNS = 0.1

    def keep_run_rows(self, store: Store) -> None:
        """Let the store's per-run queries (``Store.per_run``: a per-host metric of every run) be answered from
        the rows an earlier build kept of each run whose fingerprint is unchanged (:meth:`run_rows`)."""
        if self.directory is not None:
            store.run_rows = lambda sql, params: self.run_rows(store, sql, params)

    def run_rows(self, store: Store, sql: str, params: list[Any]) -> list[tuple]:
        """The rows of a per-run query (``Store.per_run``): kept by run under the sha256 of the code version,
        the query, its parameters and the fingerprint of the files of no one run, each run's rows with its
        fingerprint; the runs whose fingerprint changed (or new runs) are computed alone (a few: over their
        rows only, ``Store.runs_only``; else the whole query again), the rest taken as kept. Rows are given
        by run id, each run's in the query's order (the query orders by ``m.run_id`` first); rows of no run
        (a NULL run id) last."""
        fps = self.run_fingerprints(store)
        h = hashlib.sha256(f"{code_version()}\0run-rows\0{fps.get(None) or ''}\0{sql}\0{params!r}".encode())
        key = h.hexdigest()
        for reading in self._reading:
            reading.add(key)
        kept = self.load(key)
        kept = kept if isinstance(kept, dict) else {}
        runs = sorted(r for r in fps if r is not None)
        missing = [r for r in runs if r not in kept or kept[r][0] != fps[r]]
        if missing or None not in kept:
            if None in kept and len(missing) <= len(runs) * self.FEW_RUNS:
                got = self._own(store, missing).query(
                    sql.replace(RUNS, "m.run_id IN (" + ", ".join(sql_str(r) for r in missing) + ")"), params)
                fresh = set(missing)
            else:
                got = store.query(sql, params)
                fresh = set(runs) | {None}
                self.whole_queries += 1
            by_run: dict[str | None, list[tuple]] = {r: [] for r in fresh}
            for row in got:
                if row[0] not in by_run:  # a run the query should not have given (not in runs): not kept
                    return store.query(sql, params)
                by_run[row[0]].append(tuple(row))
            kept = {r: v for r, v in kept.items() if r in fps}
            kept.update({r: (fps.get(r), rows) for r, rows in by_run.items()})
            self.save(key, kept)
        return [row for r in runs for row in kept[r][1]] + list(kept[None][1])

    # At most this many runs changed: the store as seen by their queries (``_own``) holds RUN_VIEWS as tables of
    # their rows too, and their run pages read the same connection (``own_held``): one shadowing of the tall
    # tables for both
    FEW_VIEWED = 10

    def _own(self, store: Store, run_ids: list[str]) -> Store:
        """The store as seen by a query about ``run_ids`` alone (``Store.runs_only``; with RUN_VIEWS made tables
        for at most FEW_VIEWED runs), made once per build and set of runs (each per-run query of the build
        about the same new runs reads it, and their run pages: ``own_held``)."""
        held = store.__dict__.setdefault("_kansoku_runs_only", {})
        key = tuple(sorted(run_ids))
        if key not in held:
            views = RUN_VIEWS if len(key) <= self.FEW_VIEWED else ()
            ctx = store.runs_only(list(key), views=views)
            held[key] = (ctx, ctx.__enter__(), bool(views))  # closed with the store (its connection's cursor)
        return held[key][1]

    @staticmethod
    def own_held(store: Store, run_ids: list[str]) -> Store | None:
        """The store as ``Store.runs_only(run_ids, views=RUN_VIEWS)`` sees it, when this build made it already
        for the per-run queries about these runs (``_own``); else None."""
        got = store.__dict__.get("_kansoku_runs_only", {}).get(tuple(sorted(run_ids)))
        return got[1] if got is not None and got[2] else None

    def run_factors(self, store: Store) -> dict[str, dict[str, set[str]]]:
        """factor -> value -> runs, read once."""
        if self._factors is None or self._factors_store != id(store):
            self._factors = {}
            for r, f, v in store.query("SELECT run_id, factor, value FROM run_factors"):
                self._factors.setdefault(f, {}).setdefault(v, set()).add(r)
            self._factors_store = id(store)
        return self._factors

    def selected_runs(self, store: Store, item: Any) -> set[str] | None:
        """The runs the item can read: those its ``where`` selects, the baseline's factor left out (a
        superset for a range: every run with the factor). None: a factor the store does not have."""
        b = item.baseline
        runs: set[str] | None = None
        factors = self.run_factors(store)
        for factor, cond in item.where.items():
            if b is not None and factor == b.factor:
                continue
            values = factors.get(factor)
            if values is None:
                return None
            if isinstance(cond, list):
                sel = set().union(*(values.get(canon(c), set()) for c in cond)) if cond else set()
            elif isinstance(cond, dict):
                sel = set().union(*values.values())
            else:
                sel = values.get(canon(cond), set())
            runs = sel if runs is None else runs & sel
        return set(self.run_fingerprints(store)) - {None} if runs is None else runs

    def key(self, store: Store, report: Any, item: Any) -> str | None:
        """The item's key, or None when its runs cannot be told (it is then computed, uncached)."""
        selected = self.selected_runs(store, item)
        if selected is None:
            return None
        runs = list(selected)
        explicit = item.options.get("run") if isinstance(item.options, dict) else None
        if isinstance(explicit, str):
            runs.append(explicit)
        fps = self.run_fingerprints(store)
        h = hashlib.sha256()
        h.update(code_version().encode())
        h.update(self.report_context(report).encode())
        h.update(repr(_uncaptioned(item)).encode())
        h.update((fps.get(None) or "").encode())
        for r in sorted(set(runs)):
            h.update(b"\0" + r.encode() + b"\1" + (fps.get(r) or "-").encode())
        return h.hexdigest()

    def get_or_compute(self, store: Store, report: Any, item: Any, compute: Callable[[], Any]) -> Any:
        """The item as kept, or computed. A kept item keeps the per-run rows it was computed from (its
        ``<key>-reads`` entry names them): the build after one that reused it still finds them when the item
        changes (a caption edited), instead of running the query over every run again."""
        name = f"{report.id}/{item.id}"
        key = self.key(store, report, item) if self.directory is not None else None
        if key is not None:
            value = self.load(key)
            if value is not None:
                self.hits.append(name)
                for read in self.load(f"{key}-reads") or ():
                    self.keep(read)
                value.caption = item.caption.as_dict()  # (not in the key: a caption edited computes nothing)
                return value
        value, reads = self._reading_rows(compute)
        self.computed.append(name)
        if key is not None:
            self.save(key, value)
            self.save(f"{key}-reads", reads)
        return value

    def _reading_rows(self, compute: Callable[[], Any]) -> tuple[Any, list[str]]:
        """``compute()`` and the keys of the kept per-run rows it read (:meth:`run_rows`)."""
        self._reading.append(set())
        try:
            value = compute()
        finally:
            reads = self._reading.pop()
        for outer in self._reading:  # (computed within another's computation: the outer one read them too)
            outer |= reads
        return value, sorted(reads)

    def of_runs(self, store: Store, report: Any, name: str, run_ids: Any, compute: Callable[[], Any]) -> Any:
        """What a report says of a set of runs as a whole (``name``: its command blocks, machines, the runs'
        environment appendix, whether any has a steady state), reused while the code, the report's context, ``run_ids`` (a
        list, or lists of lists: their grouping counts) and each of those runs' fingerprints are unchanged: a
        spec item edited recomputes none of them, a new run those that read it."""
        if self.directory is None:
            return compute()
        fps = self.run_fingerprints(store)
        h = hashlib.sha256(f"{code_version()}\0of-runs\0{name}\0{report.id}\0".encode())
        h.update(self.report_context(report).encode())
        h.update(json.dumps(run_ids).encode())
        h.update((fps.get(None) or "").encode())
        for r in sorted(_flat(run_ids)):
            h.update(b"\0" + r.encode() + b"\1" + (fps.get(r) or "-").encode())
        key = h.hexdigest()
        value = self.load(key)
        if value is None:
            value, reads = self._reading_rows(compute)
            self.of_runs_computed.append(f"{report.id}/{name}")
            self.save(key, value)
            self.save(f"{key}-reads", reads)
        else:  # the per-run values it was combined from (:meth:`per_run`): kept for the build after a new run
            for read in self.load(f"{key}-reads") or ():
                self.keep(read)
        return value

    def per_run(self, store: Store, name: str, run_ids: list[str], compute: Callable[[list[str]], dict[str, Any]],
                extra: dict[str, str] | None = None) -> dict[str, Any]:
        """``name``'s value of each run of ``run_ids`` (the part of what a report says of its runs that depends
        on one run alone: its command line parsed, its environment's captures), kept by run under the sha256 of
        the code version and ``name``, each run's value with its fingerprint (and ``extra[run]``: what the
        value reads of the run that its fingerprint does not cover); ``compute(runs)`` gives the values of the
        runs whose fingerprint changed and of new runs (a run it leaves out: None), only they read from the
        store. The entry holds the runs of every report of the build (and of the last builds, while they are
        in the store); a run the store does not have is computed each time, not kept."""
        if self.directory is None:
            got = compute(list(run_ids))
            self.per_run_computed.setdefault(name, []).extend(run_ids)
            return {r: got.get(r) for r in run_ids}
        key = hashlib.sha256(f"{code_version()}\0per-run\0{name}".encode()).hexdigest()
        for reading in self._reading:
            reading.add(key)
        fps = self.run_fingerprints(store)
        extra = extra or {}

        def fp(r: str) -> str | None:
            return None if fps.get(r) is None else fps[r] + "\0" + extra.get(r, "")

        kept = self._per_run.get(key)
        if kept is None:
            kept = self.load(key)
            kept = kept if isinstance(kept, dict) else {}
        missing = [r for r in run_ids if fp(r) is None or r not in kept or kept[r][0] != fp(r)]
        got = compute(missing) if missing else {}
        if missing:
            self.per_run_computed.setdefault(name, []).extend(missing)
            kept = {r: v for r, v in kept.items() if r in fps}
            kept.update({r: (fp(r), got.get(r)) for r in missing if fp(r) is not None})
            self.save(key, kept)
        else:
            self.keep(key)
        self._per_run[key] = kept
        fresh = set(missing)
        return {r: got.get(r) if r in fresh else kept[r][1] for r in run_ids}

    def report_context(self, report: Any) -> str:
        """The sha256 of the report's context (its spec without the chapters: factor and metric labels, device
        groups, ...), made once a report: part of every key of the report's items, blocks and pages."""
        if report.id not in self._contexts:
            context = {k: v for k, v in report.raw.items() if k != "chapter"}
            self._contexts[report.id] = hashlib.sha256(
                json.dumps(context, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()
        return self._contexts[report.id]

    def run_key(self, store: Store, run_id: str, kind: str) -> str | None:
        """The key of what a run's page reads of the run alone (``kind``: its metrics and series), valid while
        the code and the run's fingerprint stay the same. None without a directory or for an unknown run."""
        fp = self.run_fingerprints(store).get(run_id) if self.directory is not None else None
        if fp is None:
            return None
        key = self._run_keys.get((run_id, kind))  # (asked more than once a build for each run)
        if key is None:
            key = self._run_keys[run_id, kind] = hashlib.sha256(
                f"{code_version()}\0run-page\0{kind}\0{run_id}\0{fp}".encode()).hexdigest()
        return key

    def condition_key(self, store: Store, condition: list[str], inputs: str) -> str:
        """The part of a run page's key that every page of its condition shares, made once a condition: the
        sha256 of ``inputs`` (the condition's runs as the report names them) and the fingerprint of each of its
        runs (whose metrics its pages compare)."""
        fps = self.run_fingerprints(store)
        return digest(inputs + "".join(f"\0{r}\1{fps.get(r) or '-'}" for r in condition))

    def run_page_key(self, store: Store, report: Any, run_id: str, condition: str, inputs: str) -> str | None:
        """The key of a run's whole page: the code version, the report's context (its spec without the
        chapters: factor and metric labels), the run's fingerprint, ``inputs`` (what the page shows of the report
        beyond it: report/runs.py ``_page_inputs``) and ``condition`` (:meth:`condition_key` of its condition: its
        runs and their fingerprints). None without a directory or for an unknown run."""
        fps = self.run_fingerprints(store) if self.directory is not None else {}
        if run_id not in fps:
            return None
        return digest(f"{code_version()}\0run-page\0{report.id}\0{self.report_context(report)}\0{condition}\0"
                       f"{run_id}\1{fps[run_id]}\0{inputs}")

    def whole_key(self, kind: str, report: Any, inputs: str) -> str:
        """The key of something made of a whole report (``kind``: its run pages): the code version, the
        report's context and ``inputs`` (everything else it is made of, as text)."""
        return digest(f"{code_version()}\0{kind}\0{report.id}\0{self.report_context(report)}\0{inputs}")

    def comparison(self, store: Store, report: Any, spec: Any, compute: Callable[[], Any]) -> Any:
        """A ``[[compare]]`` of the report (``spec``), reused while the code, the report's context, the spec and
        the runs either of its selections can read are unchanged (its runs are those of an item whose
        ``where`` is the selection)."""
        if self.directory is None:
            return compute()
        runs: set[str] = set()
        for side in ("a", "b"):
            sel = self.selected_runs(store, _Selection(spec.selection(side)))
            if sel is None:
                return compute()
            runs |= sel
        fps = self.run_fingerprints(store)
        h = hashlib.sha256(f"{code_version()}\0compare\0".encode())
        h.update(self.report_context(report).encode())
        h.update(repr(spec).encode())
        h.update((fps.get(None) or "").encode())
        for r in sorted(runs):
            h.update(b"\0" + r.encode() + b"\1" + (fps.get(r) or "-").encode())
        key = h.hexdigest()
        # its verdicts and spreads by condition (functions of their values alone) as its last build computed
        # them: a new run recomputes its condition's (analysis/noise.py kept_results)
        parts = hashlib.sha256(f"{code_version()}\0compare-parts\0{report.id}\0{spec!r}".encode()).hexdigest()
        value = self.load(key)
        if value is None:
            kept = self.load(parts)
            used: dict = {}
            with noise.kept_results(kept if isinstance(kept, dict) else {}, used):
                value, reads = self._reading_rows(compute)
            self.save(parts, used)
            self.save(key, value)
            self.save(f"{key}-reads", reads)
        else:
            self.keep(parts)
            for read in self.load(f"{key}-reads") or ():
                self.keep(read)
        return value


def _uncaptioned(item: Any) -> Any:
    """The item as its key reads it: without its caption, which its table or figure shows as written and
    nothing computed reads (analysis/tables.py, analysis/figures.py), put in when it is taken from the cache."""
    return dataclasses.replace(item, caption=None, raw={k: v for k, v in item.raw.items() if k != "caption"})


def _flat(run_ids: Any) -> set[str]:
    """The run ids of a list of them, or of lists of lists of them."""
    return {r for x in run_ids for r in ([x] if isinstance(x, str) else _flat(x))}


@dataclass
class _Selection:
    """A selection of a ``[[compare]]`` as :meth:`ItemCache.selected_runs` reads an item."""

    where: dict[str, Any]
    baseline: Any = None
