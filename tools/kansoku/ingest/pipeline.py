"""Ingest: walk run directories, detect files by content, parse them into the store.

All-or-nothing: the whole ingest is one DuckDB transaction. A file that fails
to parse is reported (file, line, what was expected), the other files are
still checked so that every problem is listed at once, and then nothing is
committed: the database is left exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import duckdb

from kansoku import parsers
from kansoku.errors import KansokuError, ParseError, RunError, UnusableFile
from kansoku.ingest import parallel, renderings
from kansoku.ingest.detect import RUN_METADATA_BYTES, Detection, detect_in_run
from kansoku.ingest.parallel import FileOutcome, FileTask
from kansoku.ingest.runs import (
    CAMPAIGN_MARKER,
    HOST_DIR_PREFIX,
    HOST_TOML,
    RUN_TOML,
    Run,
    campaign_root,
    check_host_names,
    host_dir_key,
    key_line,
    load_host,
    machine_fingerprint,
    make_run,
    walk_files,
)
from kansoku.interrupts import raise_if_witnessed
from kansoku.parsers import bounds
from kansoku.parsers.base import IngestWarning, runs_mixed_in_directory
from kansoku.parsers.sysstat.common import FORMAT_RANK
from kansoku.store.db import FileSink, Store, Transaction, hash_and_keep, open_store, sql_str


@dataclass
class FileResult:
    path: str
    run_id: str | None
    status: str  # 'new' | 'replaced' | 'unchanged' | 'checked' | 'removed' | 'skipped' | 'failed'
    # 'checked': a rendering of the run's sa file, kept (blob, sha256) and compared with the sa file's stored
    # rows on a sample of its records, not parsed whole (``reason`` says against what and how many records)
    format: str | None = None
    rows: int = 0
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    declared_runs: int = 0  # runs the file declares itself (transcribed published tables)


@dataclass
class IngestReport:
    db: str
    committed: bool = False
    files: list[FileResult] = field(default_factory=list)
    runs_new: int = 0
    runs_updated: int = 0
    runs_seen: int = 0
    errors: list[str] = field(default_factory=list)
    aborted_on: str | None = None  # the file DuckDB aborted the transaction on (nothing of the ingest stored)
    # the files of a workers' batch DuckDB aborted the transaction on (nothing stored): to be parsed alone
    retry_alone: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.status for f in self.files))

    @property
    def runs_transcribed(self) -> int:
        """Transcribed runs (re)stored by this ingest."""
        return sum(f.declared_runs for f in self.files)


@dataclass
class IngestSummary:
    """What ``kansoku ingest --json`` prints (serialised by ``model.encode``): the report's fields, then its
    files counted by status, whether it succeeded and the transcribed runs it stored."""

    db: str
    committed: bool
    files: list[FileResult]
    runs_new: int
    runs_updated: int
    runs_seen: int
    errors: list[str]
    aborted_on: str | None
    retry_alone: list[str]
    counts: dict[str, int]
    ok: bool
    runs_transcribed: int

    @classmethod
    def of(cls, report: IngestReport) -> IngestSummary:
        return cls(**{f.name: getattr(report, f.name) for f in fields(report)}, counts=report.counts(),
                   ok=report.ok, runs_transcribed=report.runs_transcribed)


_hasher_pool: ThreadPoolExecutor | None = None


def _hasher() -> ThreadPoolExecutor:
    """The thread that hashes a file while its parser runs (made when first needed, again after ``stop_hasher``)."""
    global _hasher_pool
    if _hasher_pool is None:
        _hasher_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kansoku-sha256")
    return _hasher_pool


def stop_hasher() -> None:
    """End the hashing thread. The command line ends it while a Ctrl-C still says the truth: Python's exit would
    join it with no handler of kansoku's in place, and a Ctrl-C there printed a traceback."""
    global _hasher_pool
    pool, _hasher_pool = _hasher_pool, None
    if pool is not None:
        pool.shutdown(wait=True)


class Interrupted(Exception):
    """Ctrl-C during an ingest; ``committed`` says whether the transaction had committed."""

    def __init__(self, committed: bool):
        self.committed = committed
        super().__init__("interrupted")


def sha256_file(path: Path) -> str:
    return hash_and_keep(path, None)[0]


def source_id_for(run_id: str, file_name: str) -> str:
    return hashlib.sha1(f"{run_id}\0{file_name}".encode()).hexdigest()[:16]


def ingest(paths: list[Path], db_path: Path, *, wait_s: float = 0.0,
           progress: Callable[[Iterable], Iterable] | None = None,
           on_wait: Callable[[str], None] | None = None, keep_going: bool = False,
           jobs: int | None = None) -> IngestReport:
    """Ingest the paths in one transaction. Ctrl-C raises Interrupted, which says whether it committed.
    ``keep_going``: store the files that parse (and their runs) even when others fail; the failures are
    still listed in ``report.errors`` (the caller exits non-zero).
    ``jobs``: processes parsing files (``ingest/parallel.py``); None: every core when there are enough
    files to pay for starting them, 1: all in this process."""
    began: list[Transaction] = []  # the ingest's transaction once it has begun
    try:
        with parallel.private_temp():
            left_out: dict[str, str] = {}
            alone: set[Path] = set()
            while True:
                report = _ingest(paths, db_path, wait_s=wait_s, progress=progress, on_wait=on_wait,
                                 keep_going=keep_going, jobs=jobs, began=began, left_out=left_out, alone=alone)
                if report.retry_alone:
                    # DuckDB failed on a batch of the workers' files: each parsed by the writer, alone, in a new
                    # attempt (the file that fails again is then named, and with --keep-going left out)
                    alone |= {Path(p) for p in report.retry_alone}
                    began.clear()
                    continue
                if not (keep_going and report.aborted_on) or report.aborted_on in left_out:
                    return _with_left_out(report, left_out)
                # DuckDB aborted the transaction on a file: nothing can be kept of it, so with --keep-going the
                # ingest runs again without that file (its error stays listed, once)
                left_out[report.aborted_on] = next(e for e in reversed(report.errors) if e.startswith(report.aborted_on))
                began.clear()
    except KeyboardInterrupt:  # outside the transaction: before it began, or after it ended (closing the store)
        raise Interrupted(bool(began) and began[0].committed) from None
    except RuntimeError as exc:  # DuckDB's form of a Ctrl-C during a statement (creating the schema)
        if _is_interrupt(exc):
            raise Interrupted(bool(began) and began[0].committed) from None
        raise


def _with_left_out(report: IngestReport, left_out: dict[str, str]) -> IngestReport:
    """The errors of the files left out of the ingest (DuckDB aborted on them), listed with the others."""
    report.errors[:0] = list(left_out.values())
    return report


def _is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C: Python's KeyboardInterrupt, or DuckDB's 'Query interrupted' when it came during a statement."""
    return isinstance(exc, KeyboardInterrupt) or (isinstance(exc, RuntimeError) and "Query interrupted" in str(exc))


def _pooled(work: list[tuple[Path, Detection]], runs: dict, jobs: int | None,
            writer_only: set[Path] = frozenset()) -> tuple[set[Path], int]:
    """The files the workers parse (small ones of runs with an identity) and how many workers."""
    small = {det.path for run_dir, det in work if det.path not in writer_only
             and runs.get(run_dir) is not None and det.path.stat().st_size < parallel.BIG_FILE_BYTES}
    if jobs is None:
        n = parallel.default_jobs() if len(small) >= parallel.AUTO_MIN_FILES else 1
    else:
        n = max(1, jobs)
    n = min(n, len(small))
    return (small, n) if n > 1 else (set(), 1)


# The largest run.toml / host.toml read: far above what tools/collect writes, far below what one stored row can
# hold (DuckDB reads each row as one JSON object of at most 16 MB).


def _discover(paths: list[Path], report: IngestReport, left_out: dict[str, str]):
    """Walk and detect (no database needed yet): the detected files by run directory, each run directory's walk
    root, the directories walked whole and each run directory's host=<name>/ subdirectories. ``left_out``: files
    not read (path -> why), listed as failed."""
    by_dir: dict[Path, list[Detection]] = defaultdict(list)
    roots: dict[Path, Path] = {}
    whole: set[Path] = set()  # directories walked whole: their set of files is known
    host_dirs: dict[Path, set[str]] = defaultdict(set)  # run directory -> its host=<name>/ subdirectories
    oversized: dict[Path, str] = {}  # run directory -> the error of its run.toml or host.toml
    scripts_of: dict[Path, frozenset[str]] = {}  # run directory -> the scripts its run.toml names
    for w in walk_files([Path(p) for p in paths]):
        if w.link:
            report.files.append(FileResult(str(w.path), None, "skipped", reason=w.link))
            continue
        parent = w.path.parent
        host_key = host_dir_key(parent)  # a host=<name>/ subdirectory belongs to its run (docs/ingest.md)
        run_dir = parent.parent if host_key is not None else parent
        if w.whole_dir:
            whole.add(run_dir)
        if str(w.path) in left_out:
            report.files.append(FileResult(str(w.path), None, "failed", reason=left_out[str(w.path)]))
            continue
        d = detect_in_run(w.path, run_dir, scripts_of)
        if d.format is None:
            if d.reason != "run metadata":
                report.files.append(FileResult(str(w.path), None, "skipped", reason=d.reason))
            elif (size := w.path.stat().st_size) > RUN_METADATA_BYTES:
                oversized[run_dir] = (f"{w.path}: expected a run description of at most {RUN_METADATA_BYTES:,} bytes "
                                      f"(tools/collect writes a few kB), found {size:,} bytes (a file written over?); "
                                      "nothing of this run is stored")
            continue
        by_dir[run_dir].append(d)
        roots[run_dir] = w.root
        if host_key is not None:
            host_dirs[run_dir].add(host_key)
    for run_dir, error in sorted(oversized.items()):  # the run is refused whole, as for any error of its run.toml
        report.errors.append(error)
        for d in by_dir.pop(run_dir, []):
            report.files.append(FileResult(str(d.path), None, "failed", d.format.name, reason=error))
    return by_dir, roots, whole, host_dirs


def _ingest(paths: list[Path], db_path: Path, *, wait_s: float, progress, on_wait,
            keep_going: bool = False, jobs: int | None = None, began: list | None = None,
            left_out: dict[str, str] | None = None, alone: set[Path] = frozenset()) -> IngestReport:
    """One attempt at the ingest; ``alone``: files the writer parses itself, one at a time (never pooled)."""
    report = IngestReport(db=str(db_path))
    by_dir, roots, whole, host_dirs = _discover(paths, report, left_out or {})
    _skip_scripts_outside_runs(by_dir, report)
    work = [(run_dir, d) for run_dir in sorted(by_dir) for d in by_dir[run_dir]]
    _check_one_run_per_directory(by_dir, report)
    runs = _identify_runs(by_dir, roots, host_dirs, report)
    measured = _measured_runs(runs, by_dir, report)

    store = open_store(db_path, wait_s=wait_s, on_wait=on_wait)
    parallel.clean_scratch(db_path)  # this process is the store's one writer: what is there was left by a kill
    tx = None
    rendering_of = _renderings_of_sa_files(by_dir)  # checked on a sample by the writer, after their sa file
    pooled, n_jobs = _pooled(work, runs, jobs, set(rendering_of) | set(alone))
    files: _FilePass | None = None
    try:
        with store.atomic() as tx:
            if began is not None:  # a Ctrl-C after COMMIT (while the store closes) must not say "nothing stored"
                began.append(tx)
            _check_run_dirs_keep_their_ids(store, measured, runs, roots, report)
            _check_against_stored(store, measured, by_dir, whole, report)
            files = _FilePass(store, report, runs, work, rendering_of, pooled)
            files.start_pool(n_jobs, db_path)
            aborted = files.parse_all(progress)
            if report.errors and (aborted or not keep_going):
                tx.rollback()
                return report
            if not _store_runs(store, report, work, by_dir, whole, measured, keep_going):
                tx.rollback()
                return report
        report.committed = tx.committed
    except parallel.BatchFailed as exc:  # rolled back: the batch's files are tried again, each alone
        if not exc.paths or {Path(p) for p in exc.paths} <= set(alone):  # (never: such files are not pooled)
            raise
        report.retry_alone = exc.paths
        report.committed = False
    except (KeyboardInterrupt, RuntimeError) as exc:
        if not _is_interrupt(exc):
            raise
        raise Interrupted(tx is not None and tx.committed) from None
    finally:
        if files is not None:  # an error or Ctrl-C before the pool was drained
            files.close_pool(abort=True)
        store.close()
    return report


def _skip_scripts_outside_runs(by_dir: dict[Path, list[Detection]], report: IngestReport) -> None:
    """A directory holding only attachments (scripts beside a plan, not in a run directory) is not a run."""
    for run_dir in [d for d, dets in by_dir.items() if all(x.format.attachment for x in dets)]:
        for d in by_dir.pop(run_dir):
            report.files.append(FileResult(str(d.path), None, "skipped",
                                           reason=f"{d.format.description}, outside a run directory"))


def _check_one_run_per_directory(by_dir: dict[Path, list[Detection]], report: IngestReport) -> None:
    """One run per directory (formats declare what that means), each host's files by themselves."""
    for run_dir, dets in sorted(by_dir.items()):
        for where in sorted({d.path.parent for d in dets}):
            why = runs_mixed_in_directory([(d.path, d.format) for d in dets
                                           if d.format is not None and d.path.parent == where])
            if why:
                report.errors.append(f"{where}: {why}. A run is a directory: put each run (its pgbench output, "
                                     "-l logs, monitors) in its own directory, e.g. clients=4/rep=1/; nothing stored")


def _identify_runs(by_dir: dict[Path, list[Detection]], roots: dict[Path, Path], host_dirs: dict[Path, set[str]],
                   report: IngestReport) -> dict[Path, Run | None]:
    """Each run directory's run (None: its description is refused, the error listed), with its hosts."""
    runs: dict[Path, Run | None] = {}
    for run_dir in sorted(by_dir):
        try:
            runs[run_dir] = make_run(run_dir, roots[run_dir])
            for key in sorted(host_dirs.get(run_dir, ())):
                runs[run_dir].hosts[key] = load_host(runs[run_dir], key, run_dir / f"{HOST_DIR_PREFIX}{key}")
            check_host_names(runs[run_dir])  # one hostname for two hosts would merge their samples
        except RunError as exc:
            runs[run_dir] = None
            report.errors.append(str(exc))
    return runs


def _measured_runs(runs: dict[Path, Run | None], by_dir: dict[Path, list[Detection]],
                   report: IngestReport) -> dict[Path, Run]:
    """The measured runs by directory, each id given to one directory only. A directory holding only files that
    declare their own runs (published tables) is not a run."""
    measured = {d: r for d, r in runs.items() if r is not None and any(not x.format.own_runs for x in by_dir[d])}
    seen: dict[str, Run] = {}
    for run in measured.values():
        other = seen.setdefault(run.run_id, run)
        if other is not run:
            report.errors.append(f"{other.run_dir} and {run.run_dir} would both be run {run.run_id!r}; "
                                 f"ingest them from one campaign root (a {CAMPAIGN_MARKER} file marks one; see docs/ingest.md)")
    return measured


def _check_run_dirs_keep_their_ids(store: Store, measured: dict[Path, Run], runs: dict[Path, Run | None],
                                   roots: dict[Path, Path], report: IngestReport) -> None:
    """A run directory already stored keeps its run id: ingested from another path, it would be named anew."""
    stored_as = store.runs_in_dirs([str(r.run_dir) for r in measured.values()])
    for run in measured.values():
        old_id = stored_as.get(str(run.run_dir))
        if old_id is not None and old_id != run.run_id:
            report.errors.append(
                f"{run.run_dir} is already stored as run {old_id!r}; this ingest would name it "
                f"{run.run_id!r} (relative to {campaign_root(run.run_dir, roots[_key(runs, run)].resolve())}). "
                f"Ingest from the same path as before, or mark the campaign root with a {CAMPAIGN_MARKER} "
                f"file so that every path names a run the same way")


class _FilePass:
    """The writer's pass over the detected files, in the order of the walk: the files it parses itself, the
    workers' outcomes, and each run's renderings of its sa file, checked once that file's rows are stored."""

    def __init__(self, store: Store, report: IngestReport, runs: dict[Path, Run | None],
                 work: list[tuple[Path, Detection]], rendering_of: dict[Path, Path], pooled: set[Path]):
        self.store, self.report, self.runs, self.work = store, report, runs, work
        self.rendering_of, self.pooled = rendering_of, pooled
        self.pool: parallel.Pool | None = None
        self.batch: parallel.Batch | None = None  # the workers' rows, inserted a batch of files at a time
        self.states: dict[str, tuple] = {}
        self.deferred: list[tuple[Path, Detection]] = []  # a run's renderings, checked once its other files are in
        self.checks = renderings.Checks()  # what the checks of renderings share
        self.sa_files = set(rendering_of.values())  # what its renderings are compared with
        # what is stored of every rendering, read once (not a statement per run's check): a rendering's row of
        # sources changes only at its own check
        self.stored_renderings = _stored_renderings(store, [(runs[r_dir], d.path) for r_dir, d in work
                                                            if d.path in rendering_of and runs[r_dir] is not None])

    def start_pool(self, n_jobs: int, db_path: Path) -> None:
        """The workers, parsing the pooled files ahead of the writer."""
        if not self.pooled:
            return
        runs, store = self.runs, self.store
        self.states = store.source_states([source_id_for(runs[run_dir].run_id, _file_name(runs[run_dir], det.path))
                                           for run_dir, det in self.work if det.path in self.pooled])
        tasks = [_task(runs[run_dir], det, self.states, store.blobs, store.next_file_no())
                 for run_dir, det in self.work if det.path in self.pooled]
        self.pool = parallel.Pool(tasks, n_jobs, scratch=parallel.scratch_root(db_path))
        self.batch = parallel.Batch(store)

    def close_pool(self, abort: bool) -> None:
        if self.pool is not None:
            self.pool.close(abort=abort)
            self.pool = None

    def parse_all(self, progress) -> bool:
        """Every file stored or checked, its result listed in the order of the walk; True: the ingest aborted."""
        report = self.report
        first_result = len(report.files)
        aborted = self._each_file(progress(self.work) if progress else self.work)
        if self.batch is not None and not aborted:  # before the pool's scratch directory (the parts) goes
            self.batch.flush()
        if not aborted and self.deferred and not self.check_renderings():
            aborted = True
        # renderings are checked later than their neighbours, when their run's sa file is stored (a run later,
        # or a batch later in a parallel ingest)
        order = {str(det.path): i for i, (_, det) in enumerate(self.work)}
        report.files[first_result:] = sorted(report.files[first_result:], key=lambda f: order.get(f.path, len(order)))
        self.close_pool(abort=aborted)
        return aborted

    def _each_file(self, iterator) -> bool:
        """The files in turn (a run's renderings deferred); True: aborted."""
        report, batch = self.report, self.batch
        for run_dir, det in iterator:
            raise_if_witnessed()  # a Ctrl-C during the last file that a statement swallowed
            # a finished run's renderings, once its sa file's rows are in the store (the batch is empty)
            if self.deferred and self.deferred[-1][0] != run_dir and (batch is None or not batch.files) \
                    and not self.check_renderings():
                return True
            run = self.runs[run_dir]
            if run is None:
                report.files.append(FileResult(str(det.path), None, "failed", det.format.name,
                                               reason="run metadata error"))
                continue
            if det.path in self.rendering_of:
                self.deferred.append((run_dir, det))
                continue
            try:
                res = self._one_file(run, det)
            except _Aborted:
                report.files.append(FileResult(str(det.path), run.run_id, "failed", det.format.name,
                                               reason=report.errors[-1]))
                return True
            report.files.append(res)
        return False

    def _one_file(self, run: Run, det: Detection) -> FileResult:
        """A pooled file's outcome applied, or the file parsed by the writer."""
        if det.path in self.pooled:
            sa = det.path in self.sa_files
            return _apply_outcome(self.store, run, det, next(self.pool.results), self.report, self.batch,
                                  self.states, keep=self.checks.parquet if sa else None,
                                  digests=self.checks.digests if sa else None)
        if self.batch is not None:  # the files before it are stored before the writer parses one
            self.batch.flush()
        return _ingest_file(self.store, run, det, self.report)

    def check_renderings(self) -> bool:
        """The deferred renderings (the previous run's: workers parse ahead meanwhile); False: aborted."""
        self.deferred.sort(key=lambda rd: (rd[0], rd[1].path.parent, _rank(rd[1]), rd[1].path))
        todo = list(self.deferred)
        self.deferred.clear()
        try:
            return self._check(todo)
        finally:
            for part in self.checks.parquet.values():  # (filled by pooled sa files only: the batch removes a part)
                self.batch.release(str(part))
            self.checks.clear_references()

    def _check(self, todo: list[tuple[Path, Detection]]) -> bool:
        # what is stored of these renderings (read for every rendering as the ingest began); their sources rows
        # inserted in one statement (not two statements a rendering, three renderings a run)
        runs, report, checks = self.runs, self.report, self.checks
        checks.begin(self.stored_renderings, [(runs[r_dir], d, self.rendering_of[d.path]) for r_dir, d in todo])
        try:
            for r_dir, d in todo:
                raise_if_witnessed()
                try:
                    report.files.append(_ingest_rendering(self.store, runs[r_dir], d, self.rendering_of[d.path],
                                                          checks, report))
                except _Aborted:
                    report.files.append(FileResult(str(d.path), runs[r_dir].run_id, "failed",
                                                   d.format.name, reason=report.errors[-1]))
                    return False
            if checks.rows:  # (only when every check ended: after a Ctrl-C or an aborted
                self.store.insert_rows("sources", checks.rows)  # statement the transaction is void)
            return True
        finally:
            checks.end()


def _store_runs(store: Store, report: IngestReport, work: list[tuple[Path, Detection]],
                by_dir: dict[Path, list[Detection]], whole: set[Path], measured: dict[Path, Run],
                keep_going: bool) -> bool:
    """The runs whose files were stored, stored in turn; False: a run is refused and the ingest must roll back."""
    refused = _runs_with_contradicted_hosts(store, measured, report)
    if refused and not keep_going:
        return False
    for run_dir in refused:
        for sid in store.run_sources(measured[run_dir].run_id).values():
            store.delete_source(sid)
    # with keep_going, a directory none of whose files was stored is not stored as a run
    failed = {f.path for f in report.files if f.status == "failed" or (f.status == "skipped" and f.format)} | {
        str(det.path) for run_dir, det in work if run_dir in refused}
    stored_dirs = {run_dir for run_dir, det in work if not det.format.own_runs and str(det.path) not in failed}
    measured = {d: r for d, r in measured.items() if d in stored_dirs}
    _remove_files_gone(store, report, by_dir, whole, measured)
    for state in _upsert_runs(store, list(measured.values())):
        report.runs_seen += 1
        report.runs_new += state == "new"
        report.runs_updated += state == "updated"
    _warn_coverage(store, [run.run_id for run in measured.values()], report)
    return True


def _runs_with_contradicted_hosts(store: Store, measured: dict[Path, Run], report: IngestReport) -> set[Path]:
    """The run directories whose files print the outputs of two hosts without the layout that says which is
    which (an error each)."""
    ids = [run.run_id for run in measured.values()]
    printed, intervals = store.printed_hosts(ids), store.sampling_intervals(ids)
    return {d for d, run in measured.items()
            if _hosts_contradicted(run, printed.get(run.run_id, []), intervals.get(run.run_id, {}), report)}


def _remove_files_gone(store: Store, report: IngestReport, by_dir: dict[Path, list[Detection]], whole: set[Path],
                       measured: dict[Path, Run]) -> None:
    """A run's files are a set: files no longer in a directory walked whole leave no rows behind."""
    for run_dir, run in measured.items():
        if run_dir not in whole:
            continue
        present = {_file_name(run, d.path) for d in by_dir[run_dir] if not d.format.own_runs}
        for name, sid in sorted(store.run_sources(run.run_id).items()):
            if name not in present:
                state = store.source_state(sid)
                store.delete_source(sid)
                report.files.append(FileResult(state[2] if state else name, run.run_id, "removed",
                                               reason="no longer in the run directory"))


def _warn_coverage(store: Store, run_ids: list[str], report: IngestReport) -> None:
    """A monitor whose samples cover less of its run's window than the campaign's threshold (store view
    monitor_coverage): a warning on that file naming its host and the coverage, e.g. "server sar covers 4 of
    15 s of the run (27 %; the campaign's threshold is 90 %)". The value stays stored; the cells it feeds
    are flagged at build."""
    if not run_ids:
        return
    rows = store.query(
        "SELECT src.path, c.role, c.host, c.tool, c.covered_s, c.window_s, c.coverage, c.threshold "
        "FROM monitor_coverage c JOIN sources src ON src.source_id = c.source_id "
        f"WHERE c.below AND c.run_id IN ({', '.join(map(sql_str, run_ids))}) ORDER BY src.path")
    # (the runs as constants: DuckDB takes them below the view's windows, a subquery it does not)
    by_path = {f.path: f for f in report.files}
    for path, role, host, tool, covered, window, coverage, threshold in rows:
        text = (f"{role} {tool} covers {covered:.0f} of {window:.0f} s of the run ({coverage * 100:.0f} %; the "
                f"campaign's threshold is {threshold * 100:g} %): host {host}; its samples end or pause within the "
                "run (a monitor that died, a connection lost); the cells it feeds are flagged")
        f = by_path.get(path)
        if f is not None:
            f.warnings.append(f"{path}: {text}")


LAYOUT_HINT = ("lay the run out as docs/ingest.md says (\"Hosts in a run\"): the files of the host run.toml "
               "describes at the top of the run directory, each other host's files in a subdirectory "
               "host=<name>/ with a host.toml (hostname = \"<name>\", role = \"server\" | \"client\" | ...); "
               "nothing from this run was stored")


def _short_host(name: str) -> str:
    return name.split(".", 1)[0].lower()


def _hosts_contradicted(run: Run, printed_hosts: list[tuple[str, str | None, str]], intervals: dict[str, float],
                        report: IngestReport) -> bool:
    """The hostnames the run's files print (sysstat headers, ``Store.printed_hosts``) against the layout: two
    hostnames in one directory, or a hostname that is not its directory's host, refuse the run (an error
    each; True); so does a host whose clock is further off than its files' sampling ``intervals``."""
    printed: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))  # host key -> name -> files
    for file_name, _, name in printed_hosts:
        key = file_name.split("/", 1)[0][len(HOST_DIR_PREFIX):] if "/" in file_name else ""
        printed[key if key in run.hosts else ""][name].append(file_name)
    bad = False
    for key, names in sorted(printed.items()):
        host = run.hosts[key]
        where = run.run_dir / f"{HOST_DIR_PREFIX}{key}" if key else run.run_dir
        by_short: dict[str, list[str]] = defaultdict(list)  # 'db1' and 'db1.example.org' (uname -n) are one host
        for n, files in names.items():
            by_short[_short_host(n)].extend(files)
        if len(by_short) > 1:
            said = "; ".join(f"{', '.join(files)} say{'s' if len(files) == 1 else ''} {n!r}"
                             for n, files in sorted(names.items()))
            report.errors.append(f"{where}: the outputs of {len(names)} hosts in one directory of run "
                                 f"{run.run_id!r} ({said}); {LAYOUT_HINT}")
            bad = True
        elif host.hostname and _short_host(next(iter(names))) != _short_host(host.hostname):
            name, files = next(iter(names.items()))
            told = (host.toml_path or where / (HOST_TOML if key else RUN_TOML))
            report.errors.append(f"{where / files[0]}: the file says its host is {name!r}, but {told} says hostname = "
                                 f"{host.hostname!r} (run {run.run_id!r}, host {key or host.hostname!r}); "
                                 f"{LAYOUT_HINT}")
            bad = True
    for key, host in sorted(run.hosts.items()):
        offset = host.clock_offset_s
        if not key or offset is None:
            continue
        mine = {f: i for f, i in intervals.items() if f.startswith(f"{HOST_DIR_PREFIX}{key}/")}
        if mine and abs(offset) > min(mine.values()):
            f, i = min(mine.items(), key=lambda kv: kv[1])
            report.errors.append(
                f"{key_line(host.toml_path, 'clock_offset_s')}: clock_offset_s = {offset:g}: the clock of host {host.hostname!r} (run "
                f"{run.run_id!r}) is further from the collecting host's than its sampling interval ({i:g} s in "
                f"{f}); its samples cannot be lined up with the run's. Synchronise the clocks (chrony/NTP) and "
                "measure again; nothing from this run was stored")
            bad = True
    return bad


def _check_against_stored(store: Store, measured: dict[Path, Run], by_dir: dict[Path, list[Detection]],
                          whole: set[Path], report: IngestReport) -> None:
    """The identity rules against what is already stored, not only within this ingest: a run id stored from
    another directory with other content is an error naming both (never a silent replacement), and a file
    given alone must not make its stored run hold two runs' files (a renamed pgbench output)."""
    ids = [r.run_id for r in measured.values()]
    stored_dirs, stored_files = store.measured_run_dirs(ids), store.run_files(ids)
    for run_dir, run in measured.items():
        dets = [d for d in by_dir[run_dir] if not d.format.own_runs]
        stored = stored_files.get(run.run_id, {})
        old_dir = stored_dirs.get(run.run_id)
        if old_dir is not None and old_dir != str(run.run_dir) and stored:
            here = {_file_name(run, d.path): d for d in dets}
            common = sorted(set(here) & set(stored))
            differs = [n for n in common if sha256_file(here[n].path) != stored[n][0]]
            if differs or not common:
                what = f"{differs[0]} differs" if differs else "none of its files is stored there"
                report.errors.append(
                    f"{run.run_dir} would be run {run.run_id!r}, which is already stored from {old_dir} with other "
                    f"content ({what}); two run directories never share an id: ingest both from their common "
                    f"campaign root (or put a {CAMPAIGN_MARKER} file at the top of each campaign) so that each "
                    f"keeps a name of its own; nothing stored")
                continue
        if run_dir in whole or not stored:
            continue  # a directory walked whole replaces its stored set of files
        fmts = {f.name: f for f in parsers.formats()}
        given = {_file_name(run, d.path) for d in dets}
        files = [(run.run_dir / name, fmts[fmt]) for name, (_, fmt) in sorted(stored.items())
                 if name not in given and fmt in fmts]
        files += [(d.path, d.format) for d in dets]
        why = runs_mixed_in_directory(files)
        if why:
            report.errors.append(
                f"{run.run_dir}: with the files already stored for run {run.run_id!r}, {why}; a run is a directory "
                f"holding one run: ingest the whole directory (its files replace the stored set, so a renamed or "
                f"deleted file leaves nothing behind); nothing stored")


def _key(runs: dict[Path, Run | None], run: Run) -> Path:
    return next(d for d, r in runs.items() if r is run)


class _Aborted(Exception):
    """A parser's bulk load failed inside DuckDB: the transaction is gone, the ingest stops (rolled back)."""


def _file_name(run: Run, path: Path) -> str:
    return path.relative_to(run.run_dir).as_posix() if path.is_relative_to(run.run_dir) else path.name


def _task(run: Run, det: Detection, states: dict[str, tuple], blobs: Path, file_no: int) -> FileTask:
    """What a worker needs to parse one file (ingest/parallel.py); ``states``: ``Store.source_states`` of
    the pooled files (one statement for all of them); ``file_no``: the file's number in the store, should its
    parser use one (Store.next_file_no: the writer hands them out, so that the workers' never collide)."""
    sid = source_id_for(run.run_id, _file_name(run, det.path))
    old = states.get(sid)
    host = run.host_of(det.path)
    if old and old[3:5] != (host.hostname, host.role):  # its host or role changed: parse again
        old = None
    return FileTask(path=str(det.path), format=det.format.name, run_id=None if det.format.own_runs else run.run_id,
                    source_id=sid, run_start=run.start_time, run_meta=run.meta,
                    old_sha256=old[0] if old else None, blobs=str(blobs), host=host.hostname, role=host.role,
                    file_no=file_no)


@dataclass
class _Parsed:
    """What the writer keeps of a worker's sink (the fields _store_declared_runs reads)."""
    source_id: str
    runs: list


def _apply_outcome(store: Store, run: Run, det: Detection, out: FileOutcome, report: IngestReport,
                   batch: parallel.Batch, states: dict[str, tuple], keep: dict[str, Path] | None = None,
                   digests: dict[str, str] | None = None) -> FileResult:
    """A worker's outcome for one file, applied by the writer as _ingest_file would have stored it; its rows
    and its ``sources`` row join ``batch`` (inserted a batch of files at a time). ``states``: the stored
    sources of the pooled files as the ingest began (``Store.source_states``; each file is applied once).
    ``keep``: a sa file's ``sys_metrics`` part is kept there after the batch is stored (its renderings' check
    reads it, then removes it); ``digests``: its sha256 as stored, kept there for the same check."""
    try:
        res = _apply(store, run, det, out, report, batch, states, keep)
        if digests is not None and res.status in ("new", "replaced", "unchanged"):
            digests[source_id_for(run.run_id, _file_name(run, det.path))] = out.digest
        return res
    finally:  # after its rows joined the batch: its chunk's parts may be complete now
        batch.seen(out.parts, out.chunk_end)


def _apply(store: Store, run: Run, det: Detection, out: FileOutcome, report: IngestReport,
           batch: parallel.Batch, states: dict[str, tuple], keep: dict[str, Path] | None) -> FileResult:
    path, fmt = det.path, det.format
    file_name = _file_name(run, path)
    sid = source_id_for(run.run_id, file_name)
    old = states.get(sid)
    if out.status == "unchanged":
        if old[2] != str(path.resolve()):  # the same bytes seen at another place: say where they are now
            store.set_source_path(sid, str(path.resolve()))
        return FileResult(str(path), run.run_id, "unchanged", fmt.name)
    if old:
        store.delete_source(sid)
    if out.status == "unusable":
        return FileResult(str(path), run.run_id, "skipped", fmt.name, reason=f"cannot be used: {out.reason}")
    if out.status == "failed":
        report.errors.append(out.error)
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=out.reason)
    run_id = None if fmt.own_runs else run.run_id
    try:  # checked before its rows are queued: a file refused here leaves nothing to delete
        for name, value in out.facts.items():
            run.check_fact(name, value, path)
        _store_declared_runs(store, _Parsed(sid, out.runs), path)
    except RunError as exc:  # (its rows stay in its chunk's parts, never stored: the batch stores by file)
        report.errors.append(str(exc))
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=str(exc))
    warnings = [IngestWarning(line, message) for line, message in out.warnings]
    if keep is not None and "sys_metrics" in out.parts:  # read again by its renderings' check, then removed
        keep[sid] = Path(out.parts["sys_metrics"])
        batch.keep(out.parts["sys_metrics"])
    return _record_source(store, run, det, sid, file_name, run_id, out.digest, out.tool_version,
                          out.rows_loaded, warnings, len(out.runs), replaced=bool(old), batch=batch,
                          parts=out.parts, per_file=out.per_file)


def _record_source(store: Store, run: Run, det: Detection, sid: str, file_name: str, run_id: str | None,
                   digest: str, tool_version: str | None, rows_loaded: int, warnings: list[IngestWarning],
                   declared_runs: int, *, replaced: bool, batch: parallel.Batch | None = None,
                   parts: dict[str, str] | None = None, per_file: dict[str, tuple] | None = None) -> FileResult:
    """The file's warnings and its row of ``sources`` (with ``batch``: queued there, with the file's Parquet
    ``parts``); its result."""
    path, fmt = det.path, det.format
    host = run.host_of(path)
    rows = {"ingest_warnings": [{"line": w.line, "message": w.message, "source_id": sid} for w in warnings],
            "sources": [{
                "source_id": sid, "run_id": run_id, "path": str(path.resolve()), "file_name": file_name,
                "sha256": digest, "size_bytes": path.stat().st_size, "tool": fmt.tool, "format": fmt.name,
                "tool_version": tool_version, "rows_loaded": rows_loaded,
                "ingested_at": datetime.now(timezone.utc), "host": host.hostname, "role": host.role}]}
    if batch is not None:
        batch.add(sid, parts or {}, rows, per_file, path=str(path))
    else:
        for table, some in rows.items():
            if some:
                store.insert_rows(table, some)
    return FileResult(str(path), run_id, "replaced" if replaced else "new", fmt.name, rows_loaded,
                      warnings=[f"{path}:{w.line}: {w.message}" if w.line else f"{path}: {w.message}"
                                for w in warnings], declared_runs=declared_runs)


def _rank(det: Detection) -> int:
    return FORMAT_RANK.get(det.format.name, 9)


def _renderings_of_sa_files(by_dir: dict[Path, list[Detection]]) -> dict[Path, Path]:
    """Each sar text / sadf -d / sadf -j file that sits beside exactly one binary sa file of its host (the
    same directory: a run's top, or its host=<name>/), mapped to that sa file. Whether it renders the sa file's
    data is decided later, by content (``_ingest_rendering``); the name says nothing."""
    out: dict[Path, Path] = {}
    for dets in by_dir.values():
        by_host: dict[Path, list[Detection]] = defaultdict(list)
        for d in dets:
            by_host[d.path.parent].append(d)
        for group in by_host.values():
            sa = [d.path for d in group if d.format.name == "sa-binary"]
            if len(sa) != 1:
                continue
            for d in group:
                if d.format.name in renderings.SAMPLED_FORMATS:
                    out[d.path] = sa[0]
    return out


_RENDERING_STATE = "sha256, checked_against, checked_against_sha256, host, role, path, records_checked"


def _stored_renderings(store: Store, todo: list[tuple[Run, Path]]) -> dict[str, tuple]:
    """source_id -> what ``_ingest_rendering`` compares of a stored rendering, for these files (one statement)."""
    sids = [source_id_for(run.run_id, _file_name(run, path)) for run, path in todo]
    if not sids:
        return {}
    return {r[0]: tuple(r[1:]) for r in store.query(
        f"SELECT source_id, {_RENDERING_STATE} FROM sources WHERE source_id IN (SELECT unnest(?::VARCHAR[]))",
        [sids])}


def _ingest_rendering(store: Store, run: Run, det: Detection, sa_path: Path, fallback: renderings.Checks,
                      report: IngestReport) -> FileResult:
    """A sar text / sadf -d / sadf -j file beside the run's sa file: kept (its bytes in blobs/, its sha256 in
    ``sources``) and checked against the rows stored from the sa file on a sample of its records
    (``renderings.py``), or read whole when it is not a rendering of that measurement, or when the sa file gave
    no rows (sadf cannot read it: the first such rendering is read whole and the others are checked against it)."""
    path, fmt = det.path, det.format
    file_name = _file_name(run, path)
    sid = source_id_for(run.run_id, file_name)
    ref_path = sa_path
    ref_sid = source_id_for(run.run_id, _file_name(run, sa_path))
    if not renderings.reference_series(store, ref_sid, fallback.refs):
        ref_path = fallback.read_whole.get(path.parent)
        if ref_path is None:  # the sa file gave no rows (its warning says why): this rendering is read instead
            res = _read_whole(store, run, det, report, f"{sa_path.name} gave no rows (see its warning)")
            if res.status in ("new", "replaced", "unchanged"):
                fallback.read_whole[path.parent] = path
                fallback.refs.pop(source_id_for(run.run_id, _file_name(run, path)), None)
            return res
        ref_sid = source_id_for(run.run_id, _file_name(run, ref_path))
    ref_name = _file_name(run, ref_path)
    ref_shas = fallback.ref_sha
    ref_sha = ref_shas.get(ref_sid) or fallback.digests.get(ref_sid)  # (a pooled sa file's: no statement)
    if ref_sha is None:
        ref_sha = ref_shas[ref_sid] = store.source_state(ref_sid)[0]
    digest = hash_and_keep(path, store.blobs)[0]
    host = run.host_of(path)
    if fallback.old is not None:  # read with the other renderings of the check (_stored_renderings)
        old = fallback.old.get(sid)
    else:
        old = store.query(f"SELECT {_RENDERING_STATE} FROM sources WHERE source_id = ?", [sid])
        old = old[0] if old else None
    if old and old[:5] == (digest, ref_name, ref_sha, host.hostname, host.role):
        if old[5] != str(path.resolve()):
            store.set_source_path(sid, str(path.resolve()))
        return FileResult(str(path), run.run_id, "unchanged", fmt.name,
                          reason=f"rendering of {ref_name}, checked before ({old[6]} records compared)")
    smp, sink, exc = _sampled(store, run, det, fallback)
    if exc is not None:
        raise exc
    if smp is None:
        return _read_whole(store, run, det, report, f"no records could be sampled to compare with {ref_name}")
    if isinstance(sink, UnusableFile):
        return _read_whole(store, run, det, report, "its sample could not be used")
    if isinstance(sink, ParseError):
        report.errors.append(str(sink))
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=str(sink))
    verdict = renderings.compare(store, sink, ref_sid, ref_name, fallback.refs,
                                 fallback.parquet.get(ref_sid), also=_times_beside(store, det, sa_path,
                                                                                             fallback))
    if not verdict.same:
        return _read_whole(store, run, det, report, f"not a rendering of {ref_name}: {verdict.why}")
    if verdict.differs is not None:
        line, sample, ts, act, inst, metric, stored, rendered = verdict.differs
        line = (smp.line_of[line - 1] if line and 0 < line <= len(smp.line_of) else None) if smp.data is not None \
            else smp.record_line.get(sample)
        where = f"{path}:{line}" if line else str(path)
        what = f"{act} {metric}" + (f" of {inst}" if inst else "")
        msg = (f"{where}: this file renders the measurement of {ref_name} (same host, record times and interval) "
               f"but disagrees with it: {what} at {ts:%Y-%m-%d %H:%M:%S %Z} is {_num(rendered)} here and "
               f"{_num(stored)} in {ref_name}; one of the two was altered or damaged (sysstat prints both from the "
               "same records): restore it from the run's collection, or remove it; nothing stored")
        report.errors.append(msg)
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=msg)
    if old:
        store.delete_source(sid)
    row = {
        "source_id": sid, "run_id": run.run_id, "path": str(path.resolve()), "file_name": file_name,
        "sha256": digest, "size_bytes": path.stat().st_size, "tool": fmt.tool, "format": fmt.name,
        "tool_version": None, "rows_loaded": 0, "ingested_at": datetime.now(timezone.utc),
        "host": host.hostname, "role": host.role, "checked_against": ref_name, "checked_against_sha256": ref_sha,
        "records_checked": verdict.records,
    }
    if fallback.rows is not None:  # inserted with the other renderings of the check
        fallback.rows.append(row)
    else:
        store.insert_rows("sources", [row])
    note = (f"rendering of {ref_name}, not parsed: {verdict.records} records compared ({verdict.values} values)"
            + (f"; {verdict.unmatched} values it prints have no counterpart there (e.g. {verdict.unmatched_example})"
               if verdict.unmatched else ""))
    return FileResult(str(path), run.run_id, "checked", fmt.name, reason=note)


def _sampled(store: Store, run: Run, det: Detection, fallback: renderings.Checks) -> tuple:
    """(sample or None, the sample's sink or the UnusableFile / ParseError its parse raised, an exception
    to raise as the file's own) of a rendering: cut and parsed once per check (``_times_beside`` may have
    done it for a rendering checked after another of the same sa file)."""
    memo = fallback.sampled
    if memo is not None and det.path in memo:
        return memo.pop(det.path)
    smp = sink = None
    try:
        smp = renderings.sample(det.path, det.format.name)
        if smp is not None:
            try:
                sink = renderings.parse_sample(smp, det.path, det.format, run.start_time, run.meta,
                                               parallel.scratch_root(store.path))
            except (UnusableFile, ParseError) as exc:
                sink = exc
    except Exception as exc:  # noqa: BLE001 - raised at the file's own turn, as without the look-ahead
        return smp, None, exc
    return smp, sink, None


def _times_beside(store: Store, det: Detection, sa_path: Path, fallback: renderings.Checks) -> set[float]:
    """The record times sampled from the other renderings of the same sa file, checked after this one in the
    same check: their reference rows are fetched with this one's, in one statement (the renderings sample
    records 0, n/2, n-1, sar text 0, 1, n/2 or n/2+1, n-1: the sar text's check asked again)."""
    out: set[float] = set()
    memo = fallback.sampled
    if memo is None:
        return out
    todo = fallback.todo
    mine = next((i for i, (_, d, _) in enumerate(todo) if d.path == det.path), None)
    if mine is None:
        return out
    for run, d, sa in todo[mine + 1:]:
        if sa != sa_path or d.path.parent != det.path.parent:
            continue
        if d.path not in memo:
            memo[d.path] = _sampled(store, run, d, renderings.Checks())
        sink = memo[d.path][1]
        if isinstance(sink, renderings.SampleSink):
            out |= renderings.sample_times(sink)
    return out


def _num(v) -> str:
    return "empty" if v is None else f"{v:g}"


def _read_whole(store: Store, run: Run, det: Detection, report: IngestReport, why: str) -> FileResult:
    """A rendering read whole as any file is (a former check of it, without rows, is replaced)."""
    sid = source_id_for(run.run_id, _file_name(run, det.path))
    old = store.query("SELECT checked_against FROM sources WHERE source_id = ?", [sid])
    if old and old[0][0] is not None:
        store.delete_source(sid)
    res = _ingest_file(store, run, det, report)
    if res.status in ("new", "replaced", "unchanged"):
        res.reason = f"read whole: {why}"
    return res


def _ingest_file(store: Store, run: Run, det: Detection, report: IngestReport) -> FileResult:
    path = det.path
    fmt = det.format
    assert fmt is not None
    file_name = _file_name(run, path)
    sid = source_id_for(run.run_id, file_name)
    old = store.source_state(sid)
    blobs = store.blobs
    hashing: Future | None = None
    if old is None and not fmt.companions:
        # A new file is parsed whatever its hash: hash it (and keep its bytes) while the parser runs
        # (big pgbench logs: sha256 costs as much as half of DuckDB's read, and hashlib releases the GIL).
        hashing = _hasher().submit(hash_and_keep, path, blobs)
        digest = ""
    else:
        # with companions (files the parse also reads), a change to them must re-ingest this file
        digest = parallel.digest_with_companions(path, blobs, fmt.companions)
    host = run.host_of(path)
    if old and old[0] == digest and store.source_host(sid) == (host.hostname, host.role):
        if old[2] != str(path.resolve()):  # the same bytes seen at another place: say where they are now
            store.set_source_path(sid, str(path.resolve()))
        return FileResult(str(path), run.run_id, "unchanged", fmt.name)
    if old:
        store.delete_source(sid)
    run_id = None if fmt.own_runs else run.run_id
    sink = FileSink(store=store, path=path, run_id=run_id, source_id=sid, run_start=run.start_time,
                    run_meta=run.meta, host=host.hostname, role=host.role, newlines=(lambda: hashing.result()[2]) if hashing is not None else None)
    try:
        with store.memory_limited(fmt.memory_bound):
            fmt.parse(path, sink)
        bounds.check(sink, bounds.for_format(fmt.name))
        for name, value in sink.facts.items():
            run.check_fact(name, value, path)
        _store_declared_runs(store, sink, path)
    except UnusableFile as exc:  # one file never loses its run: skipped, with the reason
        store.delete_source(sid)
        return FileResult(str(path), run.run_id, "skipped", fmt.name, reason=f"cannot be used: {exc}")
    except (ParseError, RunError) as exc:
        report.errors.append(str(exc))
        try:
            store.delete_source(sid)
        except duckdb.TransactionException:  # the parser's load aborted the transaction: nothing is stored
            report.errors[-1] += ("; DuckDB aborted the ingest's transaction on this file: fix or remove it and "
                                  "ingest again (--keep-going stores the other files without it)")
            report.aborted_on = str(path)
            raise _Aborted() from None
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=str(exc))
    except KansokuError as exc:
        store.delete_source(sid)
        report.errors.append(f"{path}: {exc}")
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=str(exc))
    if hashing is not None:
        digest = hashing.result()[0]
    return _record_source(store, run, det, sid, file_name, run_id, digest, sink.tool_version, sink.rows_loaded,
                          sink.warnings, len(sink.runs), replaced=bool(old))


def _store_declared_runs(store: Store, sink: FileSink | _Parsed, path: Path) -> None:
    """Runs a file declares itself (transcribed published tables): origin 'transcribed', with citation."""
    if not sink.runs:
        return
    other = store.defined_run([r["run_id"] for r in sink.runs])
    if other is not None:
        raise RunError(f"{path}: run {other[0]!r} is already defined by another "
                       f"{'file' if other[1] == 'transcribed' else 'run directory'}; give the table another id")
    now = datetime.now(timezone.utc)
    store.insert_rows("runs", [{
        "run_id": r["run_id"], "run_dir": str(path.parent.resolve()), "origin": "transcribed", "status": "ok",
        "status_note": None, "start_time": None, "end_time": None, "hostname": None, "citation": r["citation"],
        "run_toml": json.dumps({**r["meta"], "source_id": sink.source_id}, ensure_ascii=False, default=str),
        "ingested_at": now} for r in sink.runs])
    store.insert_rows("run_factors", [{"run_id": r["run_id"], "factor": k, "value": v, "origin": "transcribed"}
                                      for r in sink.runs for k, v in r["factors"].items()])


def _upsert_runs(store: Store, runs: list[Run]) -> list[str]:
    """Store the measured runs, their factors and hosts: a few statements for all of them (``Store.upsert_run``),
    not a dozen per run. Each run's state: 'new', 'updated' or 'unchanged'."""
    return store.upsert_run([_run_rows(store, run) for run in runs])


def _run_rows(store: Store, run: Run) -> tuple[dict, dict, list[dict], list[dict]]:
    """A run's row of ``runs`` (without ingested_at), its factors (name -> (value, origin)), its ``run_hosts``
    rows and the ``machines`` rows of its hosts."""
    status, note = run.status
    toml = run.run_dir / RUN_TOML
    toml_sha = hash_and_keep(toml, store.blobs)[0] if toml.is_file() and not toml.is_symlink() else None
    row = {
        "run_id": run.run_id, "run_dir": str(run.run_dir), "origin": "measured", "status": status,
        "status_note": note, "start_time": run.start_time, "end_time": run.end_time,
        "hostname": run.hostname, "citation": None, "run_toml": run.meta_json(), "run_toml_sha256": toml_sha,
        "default_role": run.default_role,
        "coverage_threshold": None if run.coverage_threshold is None else float(run.coverage_threshold),
    }
    factors = {k: (v, run.factor_origin[k]) for k, v in run.factors.items()}
    hosts, machines = [], {}
    for key, host in sorted(run.hosts.items()):
        mid = machine_fingerprint(host.machine)
        if mid is not None:
            inv = {k: v for k, v in host.machine.items() if k != "hostname"}
            machines[mid] = {"machine_id": mid, "cpu_model": _text(inv.get("cpu_model")),
                             "cpu_count": inv.get("cpu_count") if isinstance(inv.get("cpu_count"), int) else None,
                             "mem_total_kib": inv.get("mem_total_kib") if isinstance(inv.get("mem_total_kib"), int)
                             else None, "kernel": _text(inv.get("kernel")), "os": _text(inv.get("os")),
                             "virtualization": _text(inv.get("virtualization")),
                             "inventory": json.dumps(inv, default=str, ensure_ascii=False)}
        sha = None
        if key and host.toml_path is not None:
            sha = hash_and_keep(host.toml_path, store.blobs)[0]
        hosts.append({"run_id": run.run_id, "host": host.hostname, "role": host.role,
                      "host_dir": f"{HOST_DIR_PREFIX}{key}" if key else "", "machine_id": mid,
                      "clock_offset_s": host.clock_offset_s, "clock_offset_error_s": host.clock_offset_error_s,
                      "host_toml": json.dumps(host.meta, default=str, ensure_ascii=False) if key else None,
                      "host_toml_sha256": sha})
    return row, factors, hosts, list(machines.values())


def _text(v) -> str | None:
    return None if v is None else str(v)
