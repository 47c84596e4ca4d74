"""Snapshots of the checkpointer's counters during a run (``--pg-stat-interval SECONDS``, with ``--conninfo``).

tools/collect snapshots the pg_stat views just before and just after the benchmark (run.py). To place
checkpoints on the run's time axis it also reads, every ``interval_s`` while the benchmark runs,
``pg_stat_checkpointer`` (PostgreSQL 17+) or else ``pg_stat_bgwriter`` (``SELECT now() AS snapshot_at, *``)
and appends the row to ``<view>.series.csv``: one header line, then one row per snapshot, the format of the
before/after files (parsers/pg_stat.py reads all three). When the counters rise between two snapshots, a
checkpoint was counted in that interval (store/events.sql ``run_stat_checkpoints``): the charts draw it as
"somewhere between t1 and t2", so the interval is the precision (the server log's checkpoint lines, with
``--server-log``, give the exact times).

Each snapshot is one short psql connection (no session is held open during the benchmark); a snapshot that
fails is counted and the series goes on, three failures in a row end it (run.toml says why).

The same loop reads another view when given one (``view``, ``sql``): with ``pg_stat_replication``, tools/collect
records the standbys' lags every interval (``pg_stat_replication.series.csv``; keys ``pg_stat_replication_series*``
in [commands]).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

PsqlRunner = Callable[[str, str], subprocess.CompletedProcess]
HAS_CHECKPOINTER = "SELECT to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL AS has_checkpointer"
MAX_FAILURES = 3


class PgStatSeries:
    def __init__(self, conninfo: str, run_dir: Path, interval_s: float, psql: PsqlRunner,
                 view: str | None = None, sql: str | None = None):
        self.conninfo, self.run_dir, self.interval_s, self.psql = conninfo, run_dir, interval_s, psql
        self.view: str | None = view
        self.sql = sql
        self.key = "pg_stat_series" if sql is None else f"{view}_series"
        self.snapshots = 0
        self.failures = 0
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._header: str | None = None

    @property
    def output(self) -> str:
        return f"{self.view}.series.csv"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="pg-stat-series", daemon=True)
        self._thread.start()

    def _query(self, sql: str) -> list[str] | None:
        try:
            p = self.psql(self.conninfo, sql)
        except (OSError, subprocess.SubprocessError) as exc:
            self.error = str(exc)[:300]
            return None
        if p.returncode != 0 or not p.stdout.strip():
            self.error = (p.stderr.strip() or f"psql exited {p.returncode}")[:300]
            return None
        return p.stdout.splitlines()

    def _choose_view(self) -> bool:
        lines = self._query(HAS_CHECKPOINTER)
        if lines is None or len(lines) < 2:
            return False
        self.view = "pg_stat_checkpointer" if lines[1].strip() == "t" else "pg_stat_bgwriter"
        return True

    def _snapshot(self) -> bool:
        if self.view is None and not self._choose_view():
            return False
        lines = self._query(self.sql or f"SELECT now() AS snapshot_at, * FROM {self.view}")
        if lines is None or (len(lines) < 2 and self.sql is None):  # a view of rows (standbys) may have none
            return False
        header, rows = lines[0], [ln for ln in lines[1:] if ln]
        with open(self.run_dir / self.output, "a", encoding="utf-8") as fh:
            if self._header is None:
                self._header = header
                fh.write(header + "\n")
            fh.write("".join(r + "\n" for r in rows))
        self.snapshots += 1
        return True

    def _loop(self) -> None:
        if self.view is None:
            self._choose_view()  # at once: the first snapshot is then one interval after the benchmark's start
        consecutive = 0
        while not self._stop.wait(self.interval_s):
            if self._snapshot():
                consecutive = 0
                continue
            consecutive += 1
            self.failures += 1
            if consecutive >= MAX_FAILURES:
                self.error = f"stopped after {MAX_FAILURES} failed snapshots in a row: {self.error}"
                return

    def stop(self) -> dict[str, Any]:
        """End the series; what run.toml's [commands] records about it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=40)  # a psql call times out after 30 s
        k = self.key
        info: dict[str, Any] = {f"{k}_interval_s": self.interval_s, f"{k}_snapshots": self.snapshots}
        if self.view is not None and self.snapshots:
            info[k] = f"{self.output}: " + (self.sql or f"SELECT now() AS snapshot_at, * FROM {self.view}")
        if self.failures:
            info[f"{k}_failures"] = self.failures
        if self.error:
            info[f"{k}_error"] = self.error
        return info

