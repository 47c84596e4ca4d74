"""Pickled entries under keys, kept in one SQLite file of a directory, that a build reads, writes and prunes: the
item cache of ``report/`` and the figure and records caches of ``render/`` are all kept so (on the ground floor,
so that each stage keeps its own cache without importing the other's).

One file, not a file per entry: a first build of a campaign's run pages keeps two entries a run, and a file
system makes (and a later build removes) tens of thousands of small files at a cost that varies by the folder
and the day many times over (docs/build-performance.md); SQLite appends them to one file. Its transactions keep
the promise a file per entry renamed into place kept: a killed build never leaves half an entry.
"""

from __future__ import annotations

import os
import pickle
import queue
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.errors import KansokuError

DB_FILE = "entries.sqlite"
_DB_FILES = (DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm", DB_FILE + "-journal")

# the writer commits this many entries at most in one transaction (each commit appends to the write-ahead log)
COMMIT_EVERY = 64


@dataclass
class PickleEntries:
    """Entries kept in ``directory`` (None: nothing kept); ``used`` names the entries this build read or wrote
    (and the files of the directory it keeps: the others are removed by :meth:`prune`).
    ``write_behind``: entries saved from then on are written by a thread of their own (pickled by the caller,
    read back from memory until written), so that the writes are not the caller's; ``flush`` waits for them and
    raises the first error."""

    directory: Path | None
    used: set[str] = field(default_factory=set)
    _pending: dict[str, bytes] = field(default_factory=dict, repr=False)  # key -> bytes being written
    _queue: Any = field(default=None, repr=False)
    _writer: Any = field(default=None, repr=False)
    _slots: Any = field(default=None, repr=False)
    _errors: list[BaseException] = field(default_factory=list, repr=False)
    _names: set[str] | None = field(default=None, repr=False)  # the keys kept (``_listed``)
    _local: Any = field(default_factory=threading.local, repr=False)  # each thread's connection

    WRITE_BEHIND = 256  # entries saved and not yet written, at most (their bytes are held in memory until written)

    def _connection(self, create: bool) -> sqlite3.Connection | None:
        """This thread's connection to the entries' file (made once a thread and process); None when there is
        no such file and ``create`` is false."""
        con = getattr(self._local, "con", None)
        if con is not None and self._local.pid == os.getpid():  # (a forked child opens its own)
            return con
        if not create and not (self.directory / DB_FILE).exists():
            return None
        con = _open(self.directory)
        self._local.con, self._local.pid = con, os.getpid()
        return con

    def _listed(self, key: str) -> bool:
        """Whether the file held the entry ``key`` when first looked at (its keys read once), or this build saved
        it. A first build asks for many entries that are not there: each answered without a query."""
        if self._names is None:
            try:
                con = self._connection(create=False)
                self._names = {k for (k,) in con.execute("SELECT key FROM entries")} if con is not None else set()
            except sqlite3.DatabaseError:
                self._names = set()
        return key in self._names

    def load(self, key: str) -> Any:
        """The entry under ``key`` (marked used), or None when there is none or it cannot be read."""
        data = self._pending.get(key)
        if data is None:
            if self.directory is None or not self._listed(key):
                return None
            con = self._connection(create=False)
            if con is None:
                return None
            try:
                row = con.execute("SELECT data FROM entries WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError:
                return None
            if row is None:
                return None
            data = row[0]
        try:
            value = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError, IndexError):
            return None
        self.used.add(key)
        return value

    def has(self, key: str) -> bool:
        """Whether an entry is kept under ``key`` (without reading it: :meth:`load` may still find it unreadable),
        by the keys read once."""
        return self.directory is not None and (key in self._pending or self._listed(key))

    def save(self, key: str, value: Any) -> None:
        self._listed(key)
        self._names.add(key)
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if self._writer is None:
            self._connection(create=True).execute("INSERT OR REPLACE INTO entries VALUES (?, ?)", (key, data))
        else:
            self._slots.acquire()
            self._pending[key] = data
            self._queue.put((key, data))
        self.used.add(key)

    def write_behind(self) -> None:
        """Entries saved from now on are written by a thread (until :meth:`flush`)."""
        if self.directory is None or self._writer is not None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        self._slots = threading.BoundedSemaphore(self.WRITE_BEHIND)
        self._queue = queue.SimpleQueue()
        # (the thread holds the queue, not the entries: if they are dropped unflushed, a build that failed in a
        # process that goes on, kansoku serve, their end stops it)
        self._writer = threading.Thread(target=_write_all, name="kansoku-entries", daemon=True,
                                        args=(self.directory, self._queue, self._pending, self._errors, self._slots))
        self._writer.start()
        weakref.finalize(self, self._queue.put, None)

    def flush(self) -> None:
        """Wait until every entry saved is written (entries are saved by the caller's thread alone); the first
        error of a write is raised (a full disk: KansokuError naming the file)."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = self._slots = self._queue = None
        if self._errors:
            exc, self._errors = self._errors[0], []
            raise exc

    def keep(self, key: str) -> None:
        """Mark the entry under ``key`` used without reading it (a later build may need it)."""
        if self.directory is not None:
            self.used.add(key)

    def prune(self) -> int:
        """Remove the entries this build did not use, and the directory's files it did not name in ``used`` (an
        older version's); call once the build succeeded (and its entries are written: :meth:`flush`). Returns how
        many entries and files were removed."""
        self.flush()
        if self.directory is None or not self.directory.is_dir():
            return 0
        n = 0
        con = self._connection(create=False)
        if con is not None:
            stale = [(k,) for (k,) in con.execute("SELECT key FROM entries") if k not in self.used]
            with _transaction(con):
                con.executemany("DELETE FROM entries WHERE key = ?", stale)
            n = len(stale)
            self._names = None
        for p in self.directory.iterdir():
            if p.name not in self.used and p.name not in _DB_FILES:
                p.unlink(missing_ok=True)
                n += 1
        return n


def _open(directory: Path) -> sqlite3.Connection:
    """A connection to ``directory``'s entries (the file made if need be). A file SQLite cannot read is a cache
    lost: made again, empty."""
    directory.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(directory / DB_FILE)
    except sqlite3.DatabaseError:
        for name in _DB_FILES:
            (directory / name).unlink(missing_ok=True)
        return _connect(directory / DB_FILE)


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode = WAL")  # a reader never waits for the writer
    con.execute("PRAGMA synchronous = NORMAL")  # (a cache: a power cut may lose the last entries)
    con.execute("PRAGMA journal_size_limit = 67108864")
    con.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, data BLOB NOT NULL)")
    return con


def _write_all(directory: Path, entries: queue.SimpleQueue, pending: dict[str, bytes], errors: list,
               slots: threading.BoundedSemaphore) -> None:
    """The writer's loop (``PickleEntries.write_behind``): the entries saved, a transaction for those waiting (up
    to COMMIT_EVERY), until None comes (``flush``, or the entries' end)."""
    con = None
    done = False
    while not done:
        batch = [entries.get()]
        while len(batch) < COMMIT_EVERY:
            try:
                batch.append(entries.get_nowait())
            except queue.Empty:
                break
        if None in batch:
            batch = [b for b in batch if b is not None]
            done = True
        try:
            if batch and not errors:
                con = con or _open(directory)
                with _transaction(con):
                    con.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", batch)
        except (OSError, sqlite3.Error) as exc:  # raised by flush (a full disk)
            errors.append(KansokuError(f"{directory / DB_FILE}: cannot keep the build's cache: {exc} (a full disk? "
                                       "a damaged cache file may be removed: the next build makes it again)"))
        except BaseException as exc:  # raised by flush
            errors.append(exc)
        finally:
            for key, data in batch:
                if pending.get(key) is data:
                    del pending[key]
                slots.release()
    if con is not None:
        con.close()


@contextmanager
def _transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN ... COMMIT on a connection in autocommit mode (ROLLBACK on an error)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
