"""Capture the part of the PostgreSQL server log written during a run (``--server-log FILE``).

The server keeps appending to its log; a run wants only its own window. The capture notes the log's
size when the monitors start and, when they stop, copies what was appended since into the run
directory as ``server.log``, where ingest reads its checkpoint lines (parsers/postgres_log.py). A log
that shrank meanwhile (rotated or truncated) is copied whole from its start, and the run.toml says so.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

OUTPUT = "server.log"


@dataclass
class ServerLogTail:
    path: Path
    offset: int = 0
    error: str | None = None

    def start(self) -> None:
        try:
            self.offset = self.path.stat().st_size
        except OSError as exc:
            self.error = f"{self.path}: {exc.strerror or exc}"

    def stop(self, run_dir: Path) -> dict[str, object]:
        """Copy the appended bytes to run_dir/server.log; returns what run.toml records about it."""
        info: dict[str, object] = {"server_log": str(self.path), "server_log_output": OUTPUT}
        if self.error:
            info["server_log_error"] = self.error
            return info
        try:
            size = self.path.stat().st_size
            start = self.offset if size >= self.offset else 0
            if start == 0 and self.offset:
                info["server_log_note"] = "the log shrank during the run (rotated or truncated): copied from its start"
            with open(self.path, "rb") as src, open(run_dir / OUTPUT, "wb") as dst:
                src.seek(start)
                shutil.copyfileobj(src, dst)
            info["server_log_bytes"] = max(0, size - start)
        except OSError as exc:
            info["server_log_error"] = f"{self.path}: {exc.strerror or exc}"
        return info
