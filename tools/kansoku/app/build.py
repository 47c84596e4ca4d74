"""Build the site and the PDFs: store -> computed reports -> renderers (see ``kansoku.app``)."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import queue
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import duckdb

from kansoku import resources, site_links, words
from kansoku.app import forked
from kansoku.errors import KansokuError
from kansoku.model import ComputedReport, KeptRunPage, RunPage, Trends, is_local_address
from kansoku.render import hugo, linking, page_reuse, publish
from kansoku.report.build import compute_report
from kansoku.report.cache import ItemCache
from kansoku.report.runs import (
    events_ahead,
    keep_run_pages,
    remember_run_pages,
    run_page_batches,
    run_pages_key,
    share_samples,
)
from kansoku.report.trends import compute_trends, trend_specs
from kansoku.spec.model import Report, load_all, load_report
from kansoku.store.db import BUILD_MEMORY_LIMIT, Store, open_store
from kansoku.words import LANGS

if TYPE_CHECKING:  # the PDF writer is imported by the builds that write PDFs
    from kansoku.render import typst

CONTENT = Path("content")
CONFIG = Path("config.toml")
GENERATED = Path("data/generated")
SPECS = Path("data/reports")


@dataclass
class BuildResult:
    reports: list[str] = field(default_factory=list)
    tables: int = 0
    figures: int = 0
    pages: int = 0
    seconds: float = 0.0
    pdfs: list[Path] = field(default_factory=list)
    out: Path = Path("public")
    items_computed: list[str] = field(default_factory=list)  # '<report>/<item>' computed by this build
    items_reused: list[str] = field(default_factory=list)    # ... reused from the last build (unchanged inputs)
    run_sets_computed: list[str] = field(default_factory=list)  # '<report>/<block>' said of a report's runs
    per_run_computed: dict[str, list[str]] = field(default_factory=dict)  # block -> runs whose part was computed
    whole_queries: int = 0                                   # per-run queries run over every run (none kept)
    files_written: int = 0                                   # generated files whose bytes changed
    runs_reused: int = 0                                     # run pages whose run data came from the cache
    runs_computed: int = 0                                   # ... was read from the store
    run_pages_whole: list[str] = field(default_factory=list)  # reports whose run pages were taken whole, unmade
    figures_reused: int = 0                                  # figures whose drawing came from the last build
    figures_drawn: int = 0                                   # ... were drawn (render/figure_cache.py)
    run_pages_reused: int = 0                                # run pages taken from the replaced site
    run_pages_rendered: int = 0                              # ... rendered by Hugo (render/page_reuse.py)
    reports_pages_reused: list[str] = field(default_factory=list)  # reports whose other pages were taken so
    sources_parts_reused: int = 0                            # data-sources parts (2..) taken so
    raw_at_link_limit: list[str] = field(default_factory=list)  # stored copies copied, not linked: at their
    #                                                          file system's limit of links (render/linking.py)


def load_config(config: Path = CONFIG) -> dict:
    """The site's configuration: the skeleton's config.toml with the site's own laid over it."""
    return resources.load_config(config)


def site_address(rep: ComputedReport, config: dict, warn=None) -> None:
    """The web edition's address the PDF prints: the spec's ``[report] site_url``, else config.toml's
    ``baseURL`` when it is an absolute address. A local address (or none) is said (``warn``): a reader of the
    PDF could not open it."""
    base = str(config.get("baseURL") or "")
    rep.site_url = rep.site_url or (base if re.match(r"https?://", base) else None)
    if warn is None:
        return
    if not rep.site_url:
        warn(words.t("en", "warn_no_site_address", rep.id, base=base or "(none)"))
    elif is_local_address(rep.site_url):
        warn(words.t("en", "warn_local_site_address", rep.id, url=rep.site_url))


def compute_site(store: Store, spec_dir: Path, content: Path = CONTENT, config: Path = CONFIG,
                 cache: ItemCache | None = None, reports: list | None = None) -> tuple[list[ComputedReport], Trends]:
    """Every report of ``spec_dir`` (with its run pages; ``reports``: those already loaded from it, e.g. by the
    preflight) and the cross-year view. ``cache``: reuse the tables and figures whose inputs did not change
    (report/cache.py)."""
    _, computed, trends = _compute_site(store, spec_dir, content, config, cache, with_run_pages=True,
                                        reports=reports)
    return computed, trends


def _compute_site(store: Store, spec_dir: Path, content: Path, config: Path, cache: ItemCache | None,
                  with_run_pages: bool, reports: list | None = None
                  ) -> tuple[list[Report], list[ComputedReport], Trends]:
    reports = load_all(spec_dir) if reports is None else reports
    computed = [compute_report(store, r, content / "reports", cache=cache, with_run_pages=with_run_pages)
                for r in reports]
    cfg = load_config(config)
    for rep in computed:
        site_address(rep, cfg)
    trends = compute_trends(store, reports, computed, trend_specs(cfg))
    return reports, computed, trends


def site_run_pages(store: Store, reports: list[Report], computed: list[ComputedReport], cache: ItemCache | None,
                   whole_keys: dict[str, str | None] | None = None, kept: set[str] = frozenset()
                   ) -> Iterator[tuple[ComputedReport, dict[str, RunPage]]]:
    """The run pages of every report, a batch at a time (report/runs.py ``run_page_batches``), for the
    renderer to write and drop as they come: the store stays open while they are written. A page the last
    build kept unchanged is a KeptRunPage (not read back unless the renderer must write its files again).
    ``kept``: reports whose pages are taken whole (report/runs.py keep_run_pages), left out; the others' pages
    are remembered under their key as a whole (``whole_keys``) for the next build."""
    for spec, rep in zip(reports, computed):
        if rep.id in kept:
            continue
        key = (whole_keys or {}).get(rep.id)
        made: dict[str, bool] | None = {} if key and cache is not None else None
        for pages in run_page_batches(store, spec, rep.chapters, rep.runs, cache, handles=True):
            for page in pages.values() if made is not None else ():
                if not page.key:
                    made = None
                    break
                made[page.key] = page.has_series if isinstance(page, KeptRunPage) else page.series is not None
            yield rep, pages
        if made is not None:
            remember_run_pages(cache, key, made)


class Ahead:
    """The batches of ``batches`` made one ahead, in a thread, while the consumer (the renderer, writing a
    batch's files) works on the one before: the run pages' DuckDB statements and file writes run without
    Python's lock, so the two overlap on a second core (otherwise one idles while the run pages are made and
    written). At most two batches are alive at once: the one the consumer holds and
    the one being made (the memory of one more batch). Everything the thread makes reads the store, so
    whatever else reads it while the thread lives takes ``lock`` (a KeptRunPage read back by the renderer:
    :meth:`guard`); DuckDB refuses a connection used by two threads at once. ``close`` (always, before the
    store is closed) stops the thread, interrupting its statement, and waits for it; an error of the thread
    is raised in the consumer."""

    _END = object()

    def __init__(self, batches: Iterator, store: Store):
        self.store = store
        self.lock = threading.Lock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._slot = threading.Semaphore(1)  # the batch being made; the consumer's is released as it is taken
        self._stop = threading.Event()
        self._batches = batches
        self._thread = threading.Thread(target=self._make, name="kansoku-run-pages", daemon=True)
        self._thread.start()

    def _make(self) -> None:
        try:
            while True:
                self._slot.acquire()
                if self._stop.is_set():
                    return
                with self.lock:
                    item = next(self._batches, self._END)
                if item is self._END:
                    self._queue.put((self._END, None))
                    return
                self._queue.put((item, None))
        except BaseException as exc:  # handed to the consumer, which raises it
            self._queue.put((self._END, exc))

    def __iter__(self) -> Iterator:
        while True:
            item, exc = self._queue.get()
            if item is self._END:
                if exc is not None:
                    raise exc
                return
            self._slot.release()  # the next batch is made while the consumer works on this one
            yield self.guard(item)

    def guard(self, item):
        """A batch whose kept pages (KeptRunPage) read the store under the lock when read back."""
        _, pages = item
        for page in pages.values():
            if isinstance(page, KeptRunPage):
                page.load = functools.partial(self._locked, page.load)
        return item

    def _locked(self, load):
        with self.lock:
            return load()

    def close(self) -> None:
        """Stop the thread (its statement interrupted) and wait for it; then nothing else reads the store."""
        self._stop.set()
        self._slot.release()
        if self._thread.is_alive():
            try:
                self.store.con.interrupt()
            except Exception:  # noqa: BLE001 (closed, or no statement running: nothing to interrupt)
                pass
        self._thread.join()


def compute_one(db: Path, spec_file: Path, content_root: Path = CONTENT / "reports",
                with_run_pages: bool = False, wait_s: float = 0.0, on_wait=None) -> ComputedReport:
    """One report from the store at ``db`` (read-only; waiting up to ``wait_s`` for a process holding it);
    the PDF has no run pages."""
    report = load_report(spec_file)
    store = open_store(db, read_only=True, wait_s=wait_s, on_wait=on_wait)
    try:
        return compute_report(store, report, content_root, with_run_pages=with_run_pages)
    finally:
        store.close()


# DuckDB's memory for each transaction the largest run logged: its latency percentiles (quantile_cont) hold
# every latency of the run at once, and cannot spill; with a margin over what such a statement was seen to take
TX_ROW_BYTES = 128
# the rest of the build's statements beside them
BUILD_HEADROOM_BYTES = 100 << 20
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt])(i?)b\s*", re.I | re.ASCII)


def size_bytes(size: str) -> int:
    """A --memory-limit size in bytes (KB = 1000, KiB = 1024, as DuckDB reads them)."""
    m = _SIZE.fullmatch(size)
    if not m:
        raise ValueError(size)
    base = 1024 if m.group(3) else 1000
    return int(float(m.group(1)) * base ** ("kmgt".index(m.group(2).lower()) + 1))


def memory_that_works(largest_run_rows: int, limit: str) -> str:
    """A --memory-limit for a store whose largest run logged ``largest_run_rows`` transactions: what its
    percentiles take, and never less than twice ``limit``; in whole GB from 1GB on, else in 100 MB steps."""
    need = max(largest_run_rows * TX_ROW_BYTES + BUILD_HEADROOM_BYTES, 2 * size_bytes(limit))
    if need >= 10 ** 9:
        return f"{-(-need // 10 ** 9)}GB"
    return f"{-(-need // 10 ** 8) * 100}MB"


def out_of_memory(limit: str, exc: Exception, largest_run_rows: int) -> str:
    """The error of a build whose DuckDB statement needed more than ``limit`` (and could not spill)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    rows = f" (its largest run logged {largest_run_rows:,} transactions)" if largest_run_rows else ""
    return (f"the build needed more memory than its limit of {limit} while computing the reports ({first}); "
            f"the site is as it was: run it again with --memory-limit {memory_that_works(largest_run_rows, limit)}"
            f"{rows}")


def _largest_run_rows(store: Store) -> int:
    """The transactions the store's largest run logged; 0 when they cannot be counted now."""
    from kansoku.parsers.pgbench.txlog import LARGEST_RUN_ROWS_SQL

    try:
        return int(store.query(LARGEST_RUN_ROWS_SQL)[0][0])
    except duckdb.Error:
        return 0


def release_memory() -> None:
    """Give the memory the computation freed back to the system (glibc keeps freed blocks for reuse, which
    the build would otherwise hold while Hugo runs; docs/build-performance.md)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


# The cyclic garbage collector's thresholds while a build computes (gc.set_threshold). The computation makes
# millions of short-lived records, nearly all freed by their reference counts; at Python's defaults the
# collector ran over the growing heap every 700 of them (docs/build-performance.md).
COLLECT_AFTER = (100_000, 50, 100)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """COLLECT_AFTER while the block runs, Python's thresholds as they were after it."""
    was = gc.get_threshold()
    gc.set_threshold(*COLLECT_AFTER)
    try:
        yield
    finally:
        gc.set_threshold(*was)


def write_site_data(db: Path, spec_dir: Path, generated: Path, content: Path, config: Path, wait_s: float,
                    on_wait, pdf: list[str] | None, reports: list | None, memory_limit: str, say,
                    raw_to: Path | None = None) -> tuple[BuildResult, ItemCache, list, list[ComputedReport]]:
    """The build up to Hugo: every report computed and the generated directory written (what ``kansoku serve``
    recomputes while Hugo's own server renders). The caller holds the output lock. Returns the result so far,
    the item cache (pruned after a build that published), the raw files to link and the reports whose PDFs to
    write. ``raw_to``: the raw files are linked there (render/linking.py RawLinks) by a process of its own,
    which starts on the last build's files at once, and none is returned to link."""
    with fewer_collections():
        return _write_site_data(db, spec_dir, generated, content, config, wait_s, on_wait, pdf, reports,
                                memory_limit, say, raw_to)


def _write_site_data(db: Path, spec_dir: Path, generated: Path, content: Path, config: Path, wait_s: float,
                     on_wait, pdf: list[str] | None, reports: list | None, memory_limit: str, say,
                     raw_to: Path | None) -> tuple[BuildResult, ItemCache, list, list[ComputedReport]]:
    # tables and figures whose inputs did not change are reused from the last build (report/cache.py)
    cache = ItemCache(generated / hugo.BUILD_CACHE / "items")
    cache.write_behind()  # its entries written by a thread of their own (flushed before Hugo)
    raw_linked = linking.RawLinks(raw_to, generated / hugo.BUILD_CACHE) if raw_to is not None else None
    ahead: Ahead | None = None
    events = None
    store: Store | None = None
    done = False
    try:
        store = open_store(db, read_only=True, wait_s=wait_s, on_wait=on_wait)
        store.limit_memory(memory_limit, generated / hugo.BUILD_CACHE / "duckdb-spill")
        # a first build: the CPU and disk samples (a pivot of every sys_metrics row) computed once, read by
        # the reports and the run pages alike (report/runs.py share_samples); every run's events, which the
        # run pages read first, computed meanwhile on a second connection (events_ahead)
        if share_samples(store, cache):
            events = events_ahead(store)
        say(f"computing the reports of {spec_dir} from {db}")
        specs, computed, trends = _compute_site(store, spec_dir, content, config, cache, with_run_pages=False,
                                                reports=reports)
        raw = [f for rep in computed if rep.publish_raw for f in publish.plan_raw(rep)]  # sets the URLs
        if raw_linked is not None:
            raw_linked.link(raw)
            raw = []
        with_pdf = [rep for rep in computed if pdf and ("all" in pdf or rep.id in pdf)]
        unknown = sorted(set(pdf or []) - {"all"} - {rep.id for rep in computed})
        if unknown:
            raise KansokuError(f"--pdf: no report {', '.join(map(repr, unknown))} "
                               f"(reports: {', '.join(rep.id for rep in computed)})")
        for rep in with_pdf:  # the pages link the PDFs written below, into the same fresh directory
            rep.pdf = {lang: f"/pdf/{rep.id}.{lang}.pdf" for lang in LANGS}
        # the run pages are computed, written and dropped a batch at a time (bounded memory), the
        # next batch made in a thread while the renderer writes one (Ahead)
        # a report whose run pages' inputs are all as the last build's takes its pages whole (their files and
        # cache entries as they are): none is made or checked one by one
        whole = {rep.id: run_pages_key(spec, rep.chapters, rep.runs, rep.records_key, cache)
                 for spec, rep in zip(specs, computed)}
        as_written = hugo.run_pages_written(generated, whole)
        kept = {rep.id: as_written[rep.id] for rep in computed
                if rep.id in as_written and keep_run_pages(store, rep.runs, cache, whole[rep.id])}
        say(f"computing the run pages and writing the page data into {generated}")
        ahead = Ahead(site_run_pages(store, specs, computed, cache, whole, set(kept)), store)
        written = hugo.write_generated(computed, generated, trends, run_pages=ahead, whole_keys=whole,
                                       kept_reports=kept)
        done = True
    except duckdb.OutOfMemoryException as exc:
        raise KansokuError(out_of_memory(memory_limit, exc, _largest_run_rows(store))) from None
    finally:
        if ahead is not None:
            ahead.close()
        if events is not None:
            events.close()
        if store is not None:
            store.close()
        if raw_linked is not None:  # (it writes into the caller's directory until done or stopped)
            raw_linked.wait() if done else raw_linked.stop()
    at_limit = raw_linked.result() if raw_linked is not None else []  # (a copy missing or altered: the error)
    cache.flush()  # every entry written before the site changes (a write's error ends the build here)
    res = BuildResult()
    res.items_computed, res.items_reused = list(cache.computed), list(cache.hits)
    res.run_sets_computed = list(cache.of_runs_computed)
    res.per_run_computed = {name: sorted(set(runs)) for name, runs in cache.per_run_computed.items()}
    res.whole_queries = cache.whole_queries
    res.files_written = written["files_written"]
    res.runs_reused, res.runs_computed = cache.runs_reused, cache.runs_computed
    res.figures_reused, res.figures_drawn = written["figures_reused"], written["figures_drawn"]
    res.reports = [r.id for r in computed]
    res.tables = sum(len(c.tables) for r in computed for c in r.chapters)
    res.figures = sum(len(c.figures) for r in computed for c in r.chapters)
    res.run_pages_whole = sorted(kept)
    res.raw_at_link_limit = at_limit
    return res, cache, raw, with_pdf


class Linking:
    """``link(staging)`` run in a thread of its own (its file system calls let Hugo's wait go on beside it)."""

    def __init__(self, link: Callable[[Path], int], staging: Path):
        self.staging = staging
        self._got: list = []
        self._thread = threading.Thread(target=self._run, args=(link,), name="kansoku-link", daemon=True)
        self._thread.start()

    def _run(self, link) -> None:
        try:
            self._got.append(link(self.staging))
        except BaseException as exc:  # raised by result()
            self._got.append(exc)

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> int:
        """The pages it linked; its error raised here."""
        self.wait()
        got = self._got[0]
        if isinstance(got, BaseException):
            raise got
        return got


@dataclass
class Computed:
    """What the build's computation (a child process: app/forked.py) hands back: the result so far and the item
    cache's use by this build (pruned once the site is published)."""

    result: BuildResult
    cache_dir: Path | None
    cache_used: set[str]
    cache_pages: dict[str, bool]


def compute_and_write(db: Path, spec_dir: Path, generated: Path, content: Path, config: Path, wait_s: float,
                      on_wait, pdf: list[str] | None, reports: list | None, memory_limit: str, say,
                      staging: Path) -> Computed:
    """Every report computed, the generated directory written, the raw files linked and the PDFs asked for
    written into ``staging`` (``pdf/``): the part of the build that holds the computed reports."""
    pdf_dir = staging / "pdf"
    res, cache, _, with_pdf = write_site_data(db, spec_dir, generated, content, config, wait_s, on_wait, pdf,
                                              reports, memory_limit, say, raw_to=staging)
    if with_pdf:
        from kansoku.render import typst  # (jinja2 and the PDF writer: imported by a build that writes PDFs)
    for rep in with_pdf:
        say(f"writing the PDFs of {rep.id} ({', '.join(LANGS)})")
        res.pdfs += [Path("pdf") / r.path.name for r in typst.render_pdfs(rep, LANGS, out_dir=pdf_dir)]
    return Computed(res, cache.directory, cache.used, cache.pages_now)


def build_site(db: Path, out: Path, spec_dir: Path = SPECS, generated: Path = GENERATED,
               content: Path = CONTENT, wait_s: float = 0.0, on_wait=None, pdf: list[str] | None = None,
               config: Path = CONFIG, site_root: Path | None = None, progress=None,
               reports: list | None = None, memory_limit: str = BUILD_MEMORY_LIMIT,
               in_child: bool = False) -> BuildResult:
    """tools/build: compute every report, write the generated directory (render.hugo), run Hugo into a
    fresh directory, link the raw files from the store's copies, and swap it in only when complete.
    ``pdf``: ids of reports (or ``["all"]``) whose PDFs are written into the site (``pdf/<id>.<lang>.pdf``)
    and linked from every page of the report. ``progress``: told each step as it starts (one line of text).
    ``reports``: the specs of ``spec_dir`` as the preflight loaded them (not read again). ``memory_limit``:
    DuckDB's memory while the reports are computed (what does not fit is spilled to disk); a statement that
    cannot spill and needs more ends the build with an error saying so (the site stays as it was).
    ``in_child``: the computation runs in a forked child (app/forked.py), for the command line, whose process
    kansoku owns whole; a caller's process may hold threads and open databases a fork would copy mid-use (a
    lock another thread holds stays held in the child), so a library call computes in its own process."""
    say = progress or (lambda message: None)
    t0 = time.monotonic()
    # no file read through a symbolic link (kansoku/site_links.py), before anything is written
    site_links.refuse_site_links(content, spec_dir, config, site_root)
    with publish.output_lock([out, generated], wait_s, on_wait):  # one build at a time per output
        new = publish.fresh_output(out)  # Hugo writes a fresh directory, swapped in only when complete
        # the PDFs, the reused pages and the raw files go into a directory of their own (Hugo empties its
        # destination of files it did not write), moved into Hugo's once it is done
        staging = publish.staging_for(new)
        publish.take_kept_raw(out, staging)  # the replaced output's raw tree, brought to this build's list
        linked: Linking | None = None
        try:
            # computed in a child process from the command line: its memory is the system's again before Hugo
            # starts (app/forked.py)
            compute = functools.partial(compute_and_write, db, spec_dir, generated, content, config, wait_s,
                                        on_wait, pdf, reports, memory_limit, say, staging)
            done = forked.run_forked(compute) if in_child else compute()
            res = done.result
            res.out = out
            root = site_root or config.parent
            # run pages whose inputs did not change are taken from the current output (render/page_reuse.py)
            reuse = hugo.plan_reuse(out, generated, content, site_root=root, config=config)
            res.run_pages_reused, res.run_pages_rendered = len(reuse.reuse), len(reuse.render)
            res.reports_pages_reused = sorted(reuse.reports_reuse)
            res.sources_parts_reused = len(reuse.parts_reuse)
            # the reused pages linked into the staging directory beside Hugo (the raw files are there already)
            linked = Linking(lambda into: page_reuse.link_reused(reuse, into, generated), staging)
            say(f"running Hugo ({len(reuse.render)} run pages to render, {len(reuse.reuse)} reused; "
                f"the other pages of {len(reuse.reports) - len(reuse.reports_reuse)} report(s) to render, "
                f"{len(reuse.reports_reuse)} reused"
                + (f"; {len(reuse.parts_reuse)} data-sources parts reused" if reuse.parts_reuse else "") + ")")
            res.pages = hugo.run_hugo(new, generated, content, site_root=root, config=config, reuse=reuse)
            res.pages += linked.result()
            publish.merge_into(staging, new)
            page_reuse.forget(out)  # from here on the output may change: its run-page manifest is void
            publish.swap_in(new, out)
        except BaseException:
            if linked is not None:
                linked.wait()  # (it writes into its directory until done)
            publish.discard(staging)
            publish.discard(new)
            raise
        res.pdfs = [out / p for p in res.pdfs]
        page_reuse.remember(reuse)  # the fingerprints of the run pages the output now holds
        # entries no item of this build used
        ItemCache(done.cache_dir, used=done.cache_used).prune_after(done.cache_pages)
    res.seconds = time.monotonic() - t0
    return res


def build_pdfs(report_id: str, langs: list[str] | tuple[str, ...], db: Path, out_dir: Path | None = None,
               spec_dir: Path = SPECS, content_root: Path = CONTENT / "reports",
               out: dict[str, Path] | None = None, font_dirs: list[str] | None = None,
               keep_typst: Path | None = None, config: Path = CONFIG, warn=None,
               progress=None, wait_s: float = 0.0, on_wait=None) -> list[typst.PdfResult]:
    """tools/pdf: the fonts checked first (before anything slow), the report computed, then
    :func:`render.typst.render_pdfs` (one chart export for every language). ``progress``: told each step."""
    from kansoku.render import typst  # as in build_site: the PDF writer only for PDFs

    say = progress or (lambda message: None)
    t0 = time.monotonic()
    for lang in langs:
        if lang not in LANGS:
            raise KansokuError(f"--lang must be one of {', '.join(LANGS)}, not {lang!r}")
    fonts = typst.font_set(font_dirs)
    for lang in langs:
        typst.check_fonts(lang, fonts, need_cjk=False)  # CJK decided later, per document
    site_links.refuse_site_links(content_root, spec_dir, config)  # (kansoku/site_links.py)
    say(f"computing report {report_id} from {db}")
    computed = compute_one(db, spec_dir / f"{report_id}.toml", content_root, wait_s=wait_s, on_wait=on_wait)
    site_address(computed, load_config(config), warn)
    say(f"drawing the charts and writing the PDF ({', '.join(langs)})")
    results = typst.render_pdfs(computed, langs, out_dir, out=out, fonts=fonts, keep_typst=keep_typst)
    total = time.monotonic() - t0
    for res in results:  # time of the whole build, shared work included
        res.seconds = total
    return results


def build_pdf(report_id: str, lang: str, db: Path, out: Path | None, spec_dir: Path = SPECS,
              content_root: Path = CONTENT / "reports", config: Path = CONFIG, warn=None,
              progress=None, wait_s: float = 0.0, on_wait=None) -> typst.PdfResult:
    """One language (tools/pdf REPORT --lang LANG)."""
    outs = {lang: out} if out else None
    return build_pdfs(report_id, [lang], db, spec_dir=spec_dir, content_root=content_root, out=outs,
                      config=config, warn=warn, progress=progress, wait_s=wait_s, on_wait=on_wait)[0]
