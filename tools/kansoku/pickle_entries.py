"""A directory of pickled entries, one file per key, that a build reads, writes and prunes: the item cache of
``report/`` and the figure cache of ``render/`` are both kept so (on the ground floor, so that each stage keeps
its own cache without importing the other's)."""

from __future__ import annotations

import os
import pickle
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class PickleEntries:
    """Entries kept in ``directory`` (None: nothing kept); ``used`` names the entries this build read or wrote.
    ``write_behind``: entries saved from then on are written by a thread of their own (pickled by the caller,
    read back from memory until written), so that a file system's latency of creating files (thousands of
    them in a first build of a campaign's run pages) is not the caller's; ``flush`` waits for
    them and raises the first error."""

    directory: Path | None
    used: set[str] = field(default_factory=set)
    _pending: dict[str, bytes] = field(default_factory=dict, repr=False)  # file name -> bytes being written
    _writer: Any = field(default=None, repr=False)
    _slots: Any = field(default=None, repr=False)
    _errors: list[BaseException] = field(default_factory=list, repr=False)
    _names: set[str] | None = field(default=None, repr=False)  # the directory's entries (``_listed``)

    WRITE_BEHIND = 256  # entries saved and not yet written, at most (their bytes are held in memory until written)

    def _listed(self, name: str) -> bool:
        """Whether the directory held the entry ``name`` when first looked at (its listing read once), or this
        build saved it. A first build asks for many entries that are not there; a failed open or stat for each,
        by the thread making the run pages, would let go of Python's lock and wait to take it back from the
        renderer's thread."""
        if self._names is None:
            try:
                self._names = set(os.listdir(self.directory))
            except OSError:
                self._names = set()
        return name in self._names

    def load(self, key: str) -> Any:
        """The entry under ``key`` (marked used), or None when there is none or it cannot be read."""
        path = self.directory / f"{key}.pickle"
        data = self._pending.get(path.name)
        if data is None and not self._listed(path.name):
            return None
        try:
            if data is not None:
                value = pickle.loads(data)
            else:
                with open(path, "rb") as fh:
                    value = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            return None
        self.used.add(path.name)
        return value

    def has(self, key: str) -> bool:
        """Whether an entry is kept under ``key`` (without reading it: :meth:`load` may still find it unreadable):
        in the directory's listing, read once (a stat an entry cost seconds for a campaign's run pages)."""
        return self.directory is not None and (f"{key}.pickle" in self._pending or self._listed(f"{key}.pickle"))

    def save(self, key: str, value: Any) -> None:
        path = self.directory / f"{key}.pickle"
        self._listed(path.name)
        self._names.add(path.name)
        if self._writer is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, path)  # a killed build never leaves half an entry
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        else:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            self._slots.acquire()
            self._pending[path.name] = data
            self._writer.submit(self._write, path, data)
        self.used.add(path.name)

    def _write(self, path: Path, data: bytes) -> None:
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)  # a killed build never leaves half an entry
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except BaseException as exc:  # raised by flush
            self._errors.append(exc)
        finally:
            if self._pending.get(path.name) is data:
                del self._pending[path.name]
            self._slots.release()

    def write_behind(self) -> None:
        """Entries saved from now on are written by a thread (until :meth:`flush`)."""
        if self.directory is None or self._writer is not None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        self._slots = threading.BoundedSemaphore(self.WRITE_BEHIND)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kansoku-entries")

    def flush(self) -> None:
        """Wait until every entry saved is written (entries are saved by the caller's thread alone); the first
        error of a write is raised (a full disk)."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = self._slots = None
        if self._errors:
            exc, self._errors = self._errors[0], []
            raise exc

    def keep(self, key: str) -> None:
        """Mark the entry under ``key`` used without reading it (a later build may need it)."""
        if self.directory is not None:
            self.used.add(f"{key}.pickle")

    def prune(self) -> int:
        """Remove the entries this build did not use (and a killed build's half-written .tmp- file); call once
        the build succeeded (and its entries are written: :meth:`flush`). Returns how many were removed."""
        self.flush()
        if self.directory is None or not self.directory.is_dir():
            return 0
        n = 0
        for p in self.directory.iterdir():
            if p.name not in self.used:
                p.unlink(missing_ok=True)
                n += 1
        return n
