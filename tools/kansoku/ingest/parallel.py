"""Parallel ingest: independent files parsed on all cores, one writer.

DuckDB allows one writing process per database file, and the ingest is one transaction (all-or-nothing).
So the files are parsed by worker processes, each into a scratch DuckDB database of its own with the same
schema: a worker hashes each file of a chunk (keeping its copy under ``blobs/``, as the serial ingest does),
runs the parsers inside one transaction of its scratch database, writes the rows they stored to Parquet
(one file per table), rolls the transaction back, and hands back what each sink collected (warnings,
facts, tool version, declared runs). The ingest's own process remains the only writer of the store: it
applies the outcomes in the order of the walk (so the store's contents do not depend on which worker
finished first) inside its one transaction, with ``INSERT ... SELECT * FROM read_parquet``.

Big files (pgbench -l logs, a day of sar) are not sent to the workers: DuckDB already reads one big file
on every core, and copying its rows through Parquet would cost as much again. The ingest's process parses
them itself, straight into the store, while the workers parse the small ones.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import duckdb

from kansoku import parsers
from kansoku.errors import KansokuError, ParseError, RunError, UnusableFile
from kansoku.parsers import bounds
from kansoku.store.db import FileSink, Store, blob_path, hash_and_keep, scratch_store

# Files at least this big are parsed by the writer itself (see the module's docstring).
BIG_FILE_BYTES = 32 << 20
# A worker parses its files a chunk at a time (parse_chunk): at most this many files, this much input.
CHUNK_FILES = 32
CHUNK_BYTES = 16 << 20
# Without --jobs, a pool is started only for this many small files: starting a worker (a Python with
# DuckDB and every parser imported, its scratch schema) costs about half a second of CPU.
AUTO_MIN_FILES = 24
# Columns of a table that hold one value per file: its Parquet parts leave them out (Store.export_rows), the
# writer puts them back from each file's values (FileOutcome.per_file, Store.import_rows).
PER_FILE_COLUMNS = {"sys_metrics": ("run_id", "tool", "format", "host", "role")}


@dataclass(frozen=True)
class FileTask:
    path: str
    format: str
    run_id: str | None
    source_id: str
    run_start: Any
    run_meta: dict[str, Any]
    old_sha256: str | None
    blobs: str
    host: str | None = None  # the file's host and role (docs/ingest.md, "Hosts in a run")
    role: str | None = None
    file_no: int | None = None  # the file's number in the store (store/db.py FILE_TABLE), handed out by the writer


@dataclass
class FileOutcome:
    status: str  # 'unchanged' | 'parsed' | 'failed' | 'unusable' (skipped with its reason)
    digest: str = ""
    error: str | None = None  # as listed in the ingest's errors
    reason: str | None = None  # as kept with the file's result
    parts: dict[str, str] = field(default_factory=dict)  # table -> Parquet file holding the file's rows (its chunk's)
    warnings: list[tuple[int | None, str]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    tool_version: str | None = None
    rows_loaded: int = 0
    runs: list[dict[str, Any]] = field(default_factory=list)
    chunk_end: bool = True  # the last file of its worker's chunk: the chunk's parts are complete once it is applied
    # table -> the values of its PER_FILE_COLUMNS for this file, when its part leaves them out
    per_file: dict[str, tuple] = field(default_factory=dict)


def kept_digest(path: Path, blobs: Path) -> str:
    """The file's sha256, read once when its copy is already kept (the usual case of an unchanged file);
    a copy that is missing is made (a second read)."""
    digest = hash_and_keep(path, None)[0]
    if not blob_path(blobs, digest).is_file():
        digest = hash_and_keep(path, blobs)[0]
    return digest


def digest_with_companions(path: Path, blobs: Path, companions) -> str:
    """A file's digest; with companions (files the parse also reads), a digest of all their digests."""
    digest = kept_digest(path, blobs)
    if companions:
        digest = hashlib.sha256("".join([digest] + [kept_digest(c, blobs) for c in companions(path)])
                                .encode()).hexdigest()
    return digest


# -- the worker side -----------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


# Scratch space of a parallel ingest: beside the store (never /tmp, where a killed ingest's files stayed
# forever), a directory of the store's own (two stores in one directory are two writers at once), one
# directory per ingest in it, removed when the pool closes; leftovers of a killed ingest are removed by the
# store's next writer (which holds the store's lock, so no other ingest can be using them).
SCRATCH_DIR = ".kansoku-scratch"


def scratch_root(db_path: Path) -> Path:
    db = Path(db_path).resolve()
    return db.parent / SCRATCH_DIR / f"{db.name}.parts"


def clean_scratch(db_path: Path) -> int:
    """Remove what killed ingests left in the store's scratch directory; how many entries were removed."""
    root = scratch_root(db_path)
    n = 0
    if root.is_dir():
        for p in root.iterdir():
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
            n += 1
    return n


# Temporary files of an ingest (DuckDB's row files, sadf's output, samples of renderings, and those of the
# workers and tools it starts): in a directory of the ingest's own, named by its process, which it removes as
# it ends; one left by an ingest that was killed (kill -9: no code runs) is removed by the next ingest, once its
# process is gone.
PRIVATE_TEMP_PREFIX = "kansoku-ingest-"


def _started(pid: int) -> str:
    """When the process started (Linux: /proc's clock ticks since boot), so that a reused pid is not taken for
    the ingest that died; '' where /proc is not."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return not started or _started(pid) in ("", started)


def remove_orphan_temps(base: Path) -> int:
    """Remove the private temporary directories of ingests that are no longer running; how many."""
    n = 0
    for p in base.glob(f"{PRIVATE_TEMP_PREFIX}*"):
        pid, started, _ = (p.name[len(PRIVATE_TEMP_PREFIX):].split("-", 2) + ["", ""])[:3]  # PID-START-random
        try:
            if not pid.isascii() or not pid.isdigit() or p.is_symlink() or p.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not _alive(int(pid), started):
            shutil.rmtree(p, ignore_errors=True)
            n += 1
    return n


@contextmanager
def private_temp() -> Iterator[Path]:
    """Every temporary file of this ingest (its own, its workers', the tools' it runs) in a directory of its own
    under the temporary directory, removed at the end; those of killed ingests removed first."""
    base = Path(tempfile.gettempdir())
    remove_orphan_temps(base)
    mine = Path(tempfile.mkdtemp(prefix=f"{PRIVATE_TEMP_PREFIX}{os.getpid()}-{_started(os.getpid())}-", dir=base))
    # the schema templates (store/db.py schema_template) are a cache kept across ingests under the temporary
    # directory: reached from here through a link, never made again for every ingest and worker
    shared = base / f"kansoku-schema-{os.getuid()}"
    try:
        shared.mkdir(mode=0o700, exist_ok=True)
        (mine / shared.name).symlink_to(shared, target_is_directory=True)
    except OSError:
        pass  # (without it the templates are made in here, and go with it)
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = str(mine)
    os.environ["TMPDIR"] = str(mine)  # the workers and the tools inherit it
    try:
        yield mine
    finally:
        tempfile.tempdir = saved[0]
        if saved[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[1]
        shutil.rmtree(mine, ignore_errors=True)


def _quiet_resource_tracker() -> None:
    """multiprocessing's resource tracker (it unlinks the pool's semaphores once the ingest has ended, however
    it ended) started with its stderr on /dev/null: after a kill -9 it still cleans up, without a 'leaked
    semaphore' warning on the user's terminal about objects it is removing."""
    from multiprocessing import resource_tracker  # (as Pool)

    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(2)
    try:
        sys.stderr.flush()
        os.dup2(devnull, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _die_with_parent() -> None:
    """A worker whose ingest was killed (kill -9) ends at once and silently, instead of printing a traceback
    when its task queue breaks (Linux: PR_SET_PDEATHSIG)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pool's own checks end the worker
        return
    if os.getppid() == 1:  # the parent died before the call
        os._exit(0)


def _init_worker(scratch_dir: str) -> None:
    # Ctrl-C is the ingest process's to handle: it stops the pool; a worker must not print a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    # A pool whose initializer raises starts a new worker for the dead one, forever (the ingest would hang):
    # the worker stays up and its first chunk raises the error instead, which ends the ingest (nothing stored).
    try:
        _start_worker(scratch_dir)
    except Exception as exc:  # noqa: BLE001 - any failure to start is reported, not retried
        _WORKER["start_error"] = f"{type(exc).__name__}: {exc}"


class WorkerStartError(KansokuError):
    """An ingest worker could not start (a broken installation, no memory): the ingest ends, nothing stored."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"an ingest worker could not start ({reason}); nothing was stored. "
                         f"Check the installation (python3 -c 'import kansoku.parsers'), or ingest with --jobs 1")

    def __reduce__(self):  # it crosses from the worker to the ingest's process
        return (WorkerStartError, (self.reason,))


def _start_worker(scratch_dir: str) -> None:
    path = Path(scratch_dir) / f"worker-{os.getpid()}.duckdb"
    _WORKER["store"] = scratch_store(path, in_memory=True)
    _WORKER["formats"] = {f.name: f for f in parsers.formats()}
    _WORKER["hasher"] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kansoku-sha256")
    _WORKER["out"] = Path(scratch_dir)
    _WORKER["chunks"] = 0


def parse_chunk(tasks: list[FileTask]) -> list[FileOutcome]:
    """Hash, and unless unchanged parse, each file of a chunk into the worker's scratch database; then the
    chunk's rows leave as one Parquet file per table (``FileOutcome.parts``: the same files for every file of
    the chunk, each row naming its ``source_id``). A statement per table and file would cost a
    worker more than parsing a real run's small files (docs/ingest-performance.md).

    The chunk's files are parsed in one transaction that is never committed: once their rows are exported,
    it is rolled back (a COMMIT of an in-memory database still moves the transaction's rows into the tables,
    which a DELETE per table would then empty; a ROLLBACK is far cheaper). When a file of the chunk does not parse (an error, an unusable file), the
    transaction holds some of its rows: it is rolled back and the chunk parsed again a file at a time, each in
    its own transaction, committed when it parsed; the outcomes are the same."""
    if "start_error" in _WORKER:
        raise WorkerStartError(_WORKER["start_error"])
    store: Store = _WORKER["store"]
    with store.file_transaction():  # never committed: rolled back once the rows left as Parquet
        outcomes, written = _parse_files(store, tasks, own_transactions=False)
        if len(outcomes) == len(tasks):
            return _export(store, tasks, outcomes, written)
    try:
        outcomes, written = _parse_files(store, tasks, own_transactions=True)
        return _export(store, tasks, outcomes, written)
    finally:
        store.clear(written)


def _parse_files(store: Store, tasks: list[FileTask], *, own_transactions: bool) -> tuple[list[FileOutcome],
                                                                                         dict[str, list[int]]]:
    """The outcomes of the chunk's files and, per table, the outcomes (indexes) whose file stored rows in it;
    without ``own_transactions``, only up to the first file that did not parse (the caller starts again)."""
    outcomes: list[FileOutcome] = []
    written: dict[str, list[int]] = {}  # table -> the outcomes (indexes) whose file stored rows in it
    for task in tasks:
        out, tables = _parse_file(store, task, own_transaction=own_transactions)
        if not own_transactions and out.status not in ("parsed", "unchanged"):
            break
        for table in tables:
            written.setdefault(table, []).append(len(outcomes))
        outcomes.append(out)
    return outcomes, written


def _export(store: Store, tasks: list[FileTask], outcomes: list[FileOutcome],
            written: dict[str, list[int]]) -> list[FileOutcome]:
    """The chunk's rows as one Parquet file per table, named in the outcomes of the files that stored rows."""
    _WORKER["chunks"] += 1
    for table in sorted(written):
        part = _WORKER["out"] / f"w{os.getpid()}-c{_WORKER['chunks']}-{table}.parquet"
        n, per_file = store.export_rows(table, part, PER_FILE_COLUMNS.get(table, ()))
        if n:
            for i in written[table]:
                if per_file is None:
                    outcomes[i].parts[table] = str(part)
                elif tasks[i].source_id in per_file:  # (else the file has no rows there: no part to read)
                    outcomes[i].parts[table] = str(part)
                    outcomes[i].per_file[table] = per_file[tasks[i].source_id]
        else:
            part.unlink(missing_ok=True)
    for i, out in enumerate(outcomes):
        out.chunk_end = i == len(outcomes) - 1
    return outcomes


def _parse_file(store: Store, task: FileTask, *, own_transaction: bool = True) -> tuple[FileOutcome, set[str]]:
    """One file of a chunk: its outcome and the tables it stored rows in (kept when it parsed: with
    ``own_transaction``, committed; else in the chunk's transaction)."""
    fmt = _WORKER["formats"][task.format]
    path = Path(task.path)
    blobs = Path(task.blobs)
    hashing = None
    if task.old_sha256 is None and not fmt.companions:
        # a new file is parsed whatever its hash: hash it (and keep its bytes) while the parser runs
        hashing = _WORKER["hasher"].submit(hash_and_keep, path, blobs)
        digest = ""
    else:
        digest = digest_with_companions(path, blobs, fmt.companions)
        if digest == task.old_sha256:
            return FileOutcome("unchanged", digest), set()
    try:
        with (store.file_transaction() if own_transaction else nullcontext(lambda: None)) as commit:
            sink = FileSink(store=store, path=path, run_id=task.run_id, source_id=task.source_id,
                            run_start=task.run_start, run_meta=task.run_meta, host=task.host, role=task.role,
                            file_no=task.file_no,
                            newlines=(lambda: hashing.result()[2]) if hashing is not None else None)
            try:
                fmt.parse(path, sink)
                bounds.check(sink, bounds.for_format(fmt.name))
            except UnusableFile as exc:
                return FileOutcome("unusable", reason=str(exc)), set()
            except (ParseError, RunError) as exc:
                return FileOutcome("failed", error=str(exc), reason=str(exc)), set()
            except KansokuError as exc:
                return FileOutcome("failed", error=f"{path}: {exc}", reason=str(exc)), set()
            if hashing is not None:
                digest = hashing.result()[0]
            commit()
            return FileOutcome("parsed", digest, warnings=[(w.line, w.message) for w in sink.warnings],
                               facts=dict(sink.facts), tool_version=sink.tool_version,
                               rows_loaded=sink.rows_loaded, runs=list(sink.runs)), set(sink.tables)
    finally:
        if hashing is not None:
            hashing.result()  # the kept copy is complete before the writer may publish it


# -- the writer side -----------------------------------------------------------------------------


class WorkerLost(KansokuError):
    """A worker process ended while the ingest needed it (killed by a signal, by the kernel for memory)."""


class Pool:
    """Worker processes parsing FileTasks; ``results`` yields outcomes in the order of the tasks.

    A ``concurrent.futures`` pool, not ``multiprocessing.Pool``: when a worker dies (kill -9, the kernel's
    out-of-memory killer) the latter starts another and waits forever for the dead one's chunk, and the new
    worker, started after the main script was shown again, ran tools/ingest's script once more, in a loop.
    This one says it is broken: the ingest ends with one line (``WorkerLost``), nothing stored."""

    def __init__(self, tasks: list[FileTask], jobs: int, scratch: Path | None = None):
        if scratch is not None:
            scratch.mkdir(parents=True, exist_ok=True)
        self.scratch = tempfile.TemporaryDirectory(prefix=f"ingest-{os.getpid()}-",
                                                   dir=str(scratch) if scratch is not None else None)
        # spawn, not fork: the ingest process holds DuckDB's threads and an open store. A spawned worker
        # would run the main script again (tools/ingest has no __main__ guard, and needs nothing from
        # it): the workers are started with the main module's origin hidden. Every chunk is submitted here,
        # so every worker starts here (the executor starts workers as tasks are submitted, never later).
        import multiprocessing  # an ingest of few files parses them in its own process, and loads none of it
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")
        main = sys.modules["__main__"]
        saved = {k: main.__dict__.pop(k) for k in ("__file__", "__spec__") if k in main.__dict__}
        # Ctrl-C goes to the whole process group: a worker still importing would print a traceback. An
        # ignored SIGINT survives exec, and Python then leaves it ignored, so the workers start deaf to it.
        try:
            handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread: signals are not this thread's to handle
            handler = None
        # The tools take SIGPIPE's default (output piped into `head` ends quietly), but the executor closes its
        # call queue's reading end when a worker dies or is ended, and its feeder thread's next write would then
        # kill this process with SIGPIPE (exit -13, semaphores leaked): while the pool lives, a closed pipe is an
        # error its feeder handles. Restored by close, once every thread and process of the pool has ended.
        self._sigpipe = None
        if handler is not None:
            self._sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        try:
            main.__spec__ = None
            _quiet_resource_tracker()
            self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                            initargs=(self.scratch.name,))
            futures = [self.pool.submit(parse_chunk, chunk) for chunk in chunks(tasks, jobs)]
        finally:
            if handler is not None:
                signal.signal(signal.SIGINT, handler)
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)
        self.results = self._outcomes(futures)

    @staticmethod
    def _outcomes(futures: list) -> Iterator[FileOutcome]:
        from concurrent.futures.process import BrokenProcessPool  # (as Pool)

        for future in futures:
            try:
                chunk = future.result()
            except BrokenProcessPool:
                raise WorkerLost("an ingest worker process ended before its files were parsed (killed, or out "
                                 "of memory?); nothing was stored. Ingest again (with fewer --jobs if memory "
                                 "is short)") from None
            yield from chunk

    def close(self, *, abort: bool = False) -> None:
        """Stop the workers and remove the scratch directory. On abort the workers (deaf to Ctrl-C) are ended
        and waited for before their directory goes: a worker still writing its Parquet parts made the removal
        fail ("Directory not empty"). The executor has no terminate; its processes are taken before its
        shutdown forgets them (``shutdown`` sets ``_processes`` to None, even without waiting)."""
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        if abort:
            for process in processes:
                process.terminate()
            for process in processes:
                process.join(timeout=10)
                if process.is_alive():
                    process.kill()
                    process.join()
            self.pool.shutdown(wait=True, cancel_futures=True)  # its manager sees the ended workers, and ends
        else:
            self.pool.shutdown(wait=True)
        if self._sigpipe is not None:
            signal.signal(signal.SIGPIPE, self._sigpipe)
            self._sigpipe = None
        self.scratch.cleanup()


def chunks(tasks: list[FileTask], jobs: int) -> list[list[FileTask]]:
    """The tasks in consecutive chunks of at most CHUNK_FILES files and CHUNK_BYTES of input (a chunk's rows
    are held by its worker until the chunk ends), small enough that every worker gets several."""
    per_chunk = max(1, min(CHUNK_FILES, -(-len(tasks) // (4 * max(1, jobs)))))
    out: list[list[FileTask]] = []
    size = 0
    for task in tasks:
        try:
            n = os.path.getsize(task.path)
        except OSError:
            n = 0
        if not out or len(out[-1]) >= per_chunk or (size + n > CHUNK_BYTES and out[-1]):
            out.append([])
            size = 0
        out[-1].append(task)
        size += n
    return out


class BatchFailed(Exception):
    """DuckDB failed on a batch's inserts (and so aborted the ingest's transaction): one statement for many
    files does not say which file it was. ``paths``: the batch's files, to be parsed by the writer one at a
    time in a new attempt, where a file that fails again fails alone."""

    def __init__(self, paths: list[str], error: BaseException):
        super().__init__(f"{type(error).__name__}: {error}")
        self.paths = paths


class Batch:
    """The writer's inserts of parsed files, a batch of files at a time: one ``INSERT ... read_parquet([...])``
    per table for the Parquet parts of every file of the batch, and one insert each for their ``sources`` and
    ``ingest_warnings`` rows. A statement per table and file would make the writer, not the workers, set the
    pace of a parallel ingest (docs/ingest-performance.md).

    A part holds the rows of every file of a worker's chunk (``parse_chunk``), and a batch may end inside a
    chunk: a flush stores only the rows of the files added to it (by ``source_id``), and a part is removed once
    its chunk is complete (its last file was added or passed over: ``seen``), every batch that read it is
    stored, and nothing keeps it (``keep``/``release``: a sa file's rows, read by its renderings' check).

    Nothing reads a file's rows between its outcome and the flush: the writer flushes before it parses a file
    itself, before the pool's scratch directory goes, and before anything reads the stored tables after the
    loop (``flush``). The rows stored are the same; only their order inside a table may differ (no reader
    depends on it)."""

    FILES = 256  # files per batch: statements stay few, the parts waiting on disk stay bounded

    def __init__(self, store: Store):
        self.store = store
        self.parts: dict[str, dict[str, None]] = {}  # table -> its parts read by this batch (in order)
        self.sids: dict[str, list[str]] = {}  # table -> the files whose rows this batch stores from them
        self.rows: dict[str, list[dict[str, Any]]] = {}
        # table -> per file of sids: its part and the values of its PER_FILE_COLUMNS (None: its part holds them)
        self.per_file: dict[str, list[tuple[str, tuple | None]]] = {}
        self.files = 0
        self.paths: list[str] = []  # the files of this batch (BatchFailed names them)
        self.kept: dict[str, int] = {}  # parts the renderings' check still reads
        self.chunk: set[str] = set()  # parts of the chunk being applied (not complete yet)
        self.done: set[str] = set()  # parts of complete chunks, removed once stored and not kept

    def keep(self, part: str) -> None:
        """Do not remove this part until it is released."""
        self.kept[part] = self.kept.get(part, 0) + 1

    def release(self, part: str) -> None:
        """The renderings' check no longer reads this part."""
        n = self.kept.get(part, 0) - 1
        if n > 0:
            self.kept[part] = n
        else:
            self.kept.pop(part, None)
            self._sweep()

    def seen(self, parts: dict[str, str], chunk_end: bool) -> None:
        """A worker's outcome reached the writer (applied or not): when it ends its chunk, the chunk's parts
        are complete."""
        self.chunk.update(parts.values())
        if chunk_end:
            self.done |= self.chunk
            self.chunk = set()
            self._sweep()

    def add(self, source_id: str, parts: dict[str, str], rows: dict[str, list[dict[str, Any]]],
            per_file: dict[str, tuple] | None = None, path: str | None = None) -> None:
        """One file's rows: in its Parquet parts (table -> file), and of other tables (table -> rows);
        ``per_file``: table -> the values of its PER_FILE_COLUMNS, which its part leaves out."""
        for table, part in parts.items():
            self.parts.setdefault(table, {})[part] = None
            self.sids.setdefault(table, []).append(source_id)
            self.per_file.setdefault(table, []).append((part, (per_file or {}).get(table)))
        for table, some in rows.items():
            self.rows.setdefault(table, []).extend(some)
        self.files += 1
        self.paths.append(path or source_id)
        if self.files >= self.FILES:
            self.flush()

    def flush(self) -> None:
        parts, sids, rows, per_file, paths = self.parts, self.sids, self.rows, self.per_file, self.paths
        self.parts, self.sids, self.rows, self.per_file, self.files, self.paths = {}, {}, {}, {}, 0, []
        try:
            self._insert(parts, sids, rows, per_file)
        except duckdb.Error as exc:
            if isinstance(exc, duckdb.InterruptException):  # Ctrl-C during the statement: the user's, not a file's
                raise
            raise BatchFailed(paths, exc) from None
        self._sweep()

    def _insert(self, parts: dict[str, dict[str, None]], sids: dict[str, list[str]],
                rows: dict[str, list[dict[str, Any]]], per_file: dict[str, list[tuple[str, tuple | None]]]) -> None:
        # with DuckDB's memory limited (as a big file's parse is): the rows it wrote stay cached otherwise, and
        # the one transaction of a campaign's ingest would grow with every run
        with self.store.memory_limited():
            # the tables naming their file by source_id first: the file-numbered ones are imported by the
            # numbers their files' rows of FILE_TABLE hold in the store
            for table in sorted(parts, key=lambda t: (self.store.file_keyed(t), t)):
                files = list(zip(sids[table], per_file[table]))
                slim = [(sid, part, v) for sid, (part, v) in files if v is not None]
                full = [(sid, part) for sid, (part, v) in files if v is None]
                if slim:  # the files whose part leaves the per-file columns out (Store.export_rows)
                    self.store.import_rows(table, list(dict.fromkeys(p for _, p, _ in slim)),
                                           source_ids=[sid for sid, _, _ in slim],
                                           per_file=(PER_FILE_COLUMNS[table], [v for _, _, v in slim]))
                if full:
                    self.store.import_rows(table, list(dict.fromkeys(p for _, p in full)),
                                           source_ids=[sid for sid, _ in full])
            for table in sorted(rows):
                self.store.insert_rows(table, rows[table])

    def _sweep(self) -> None:
        queued = {p for table in self.parts.values() for p in table}
        for part in [p for p in self.done if p not in queued and p not in self.kept]:
            Path(part).unlink(missing_ok=True)
            self.done.discard(part)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
