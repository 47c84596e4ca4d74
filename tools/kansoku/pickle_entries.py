"""A directory of pickled entries, one file per key, that a build reads, writes and prunes: the item cache of
``report/`` and the figure cache of ``render/`` are both kept so (on the ground floor, so that each stage keeps
its own cache without importing the other's)."""

from __future__ import annotations

import os
import pickle
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class PickleEntries:
    """Entries kept in ``directory`` (None: nothing kept); ``used`` names the entries this build read or wrote."""

    directory: Path | None
    used: set[str] = field(default_factory=set)

    def load(self, key: str) -> Any:
        """The entry under ``key`` (marked used), or None when there is none or it cannot be read."""
        path = self.directory / f"{key}.pickle"
        try:
            with open(path, "rb") as fh:
                value = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            return None
        self.used.add(path.name)
        return value

    def has(self, key: str) -> bool:
        """Whether an entry is kept under ``key`` (without reading it: :meth:`load` may still find it unreadable)."""
        return self.directory is not None and (self.directory / f"{key}.pickle").is_file()

    def save(self, key: str, value: Any) -> None:
        path = self.directory / f"{key}.pickle"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # a killed build never leaves half an entry
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.used.add(path.name)

    def keep(self, key: str) -> None:
        """Mark the entry under ``key`` used without reading it (a later build may need it)."""
        if self.directory is not None:
            self.used.add(f"{key}.pickle")

    def prune(self) -> int:
        """Remove the entries this build did not use (and a killed build's half-written .tmp- file); call once
        the build succeeded. Returns how many were removed."""
        if self.directory is None or not self.directory.is_dir():
            return 0
        n = 0
        for p in self.directory.iterdir():
            if p.name not in self.used:
                p.unlink(missing_ok=True)
                n += 1
        return n
