"""Helpers for the sar/iostat/vmstat tests: parse one file into an in-memory DuckDB with the real schema."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import duckdb
import pytest

from kansoku.parsers.sysstat import common as sm


class MemSink:
    """A Sink backed by an in-memory DuckDB holding the sys_metrics/sys_series tables."""

    def __init__(self, path: Path, run_start: Any = None, mem: bool = True):
        self.path = path
        self.run_id = "r"
        self.run_start = run_start
        self.warnings: list[tuple[int | None, str]] = []
        self.version = None
        self.run_meta: dict[str, Any] = {}
        if mem:
            self.con = duckdb.connect()
            self.con.execute("SET TimeZone = 'UTC'")
            self.con.execute(sm.SCHEMA)
            from kansoku.parsers.sysstat import pidstat

            self.con.execute(pidstat.SCHEMA)

    def add_rows(self, table, rows):
        rows = list(rows)
        if not rows:
            return 0
        cols = list(rows[0])
        self.con.executemany(
            f"INSERT INTO {table} (source_id, run_id, {', '.join(cols)}) VALUES ('s', ?, {', '.join('?' * len(cols))})",
            [[self.run_id] + [r[c] for c in cols] for r in rows])
        return len(rows)

    def load_sql(self, table, select_sql, params=None):
        p = {"source_id": "s", "run_id": self.run_id, **(params or {})}
        used = {k: v for k, v in p.items() if f"${k}" in select_sql}
        self.con.execute(f"INSERT INTO {table} BY NAME {select_sql}", used)
        return 0

    def own_rows(self, table, select_sql, params=None):
        sql = select_sql.replace("{rows}", f"(SELECT * FROM {table} WHERE source_id = 's')")
        p = {k: v for k, v in (params or {}).items() if f"${k}" in sql}
        return self.con.execute(sql, p).fetchall()

    def update_own_rows(self, table, set_sql, params=None):
        sql = f"UPDATE {table} SET {set_sql} WHERE source_id = 's'"
        self.con.execute(sql, {k: v for k, v in (params or {}).items() if f"${k}" in sql})

    def warn(self, line, message):
        self.warnings.append((line, message))

    def fact(self, name, value):
        pass

    def set_tool_version(self, v):
        self.version = v

    def q(self, sql: str, params=None) -> list[tuple]:
        return self.con.execute(sql, params or []).fetchall()

    def digest(self, sql: str) -> tuple:
        """A SELECT's rows as a multiset: their count and the sum of their hashes."""
        return self.con.execute(f"SELECT count(*), sum(hash(r)::HUGEINT) FROM ({sql}) r").fetchone()


def same_rows(a: MemSink, b: MemSink, sql: str) -> bool:
    """Whether a SELECT gives the same rows in two sinks, in any order: their digests when they agree (a sa
    file's rows are hundreds of thousands, slow to compare as Python tuples), else the rows themselves, sorted
    (-0.0 and 0.0 are equal there; a failing assertion then shows them)."""
    return a.digest(sql) == b.digest(sql) or a.q(sql + " ORDER BY ALL") == b.q(sql + " ORDER BY ALL")


def parse(fmt_name: str, path: Path, run_start: Any = None, mem: bool = True, run_meta: dict | None = None) -> MemSink:
    from kansoku import parsers

    fmt = next(f for f in parsers.formats() if f.name == fmt_name)
    sink = MemSink(path, run_start, mem)
    sink.run_meta = run_meta or {}
    fmt.parse(path, sink)
    return sink


# for a module that runs this machine's sar (real_sar_u)
needs_sar = pytest.mark.skipif(shutil.which("sar") is None, reason="sysstat (sar) is installed by .ci/setup")


def real_sar_u(samples: int) -> str:
    """`sar -u 1 SAMPLES` as this machine prints it (LC_ALL=C, ISO dates)."""
    env = {**os.environ, "LC_ALL": "C", "S_TIME_FORMAT": "ISO"}
    return subprocess.run(["sar", "-u", "1", str(samples)], capture_output=True, text=True, env=env, check=True,
                          timeout=30).stdout
