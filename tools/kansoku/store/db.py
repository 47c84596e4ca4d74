"""Connection, locking, schema and the Sink parsers write into."""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import duckdb

from kansoku import parsers
from kansoku.errors import KansokuError, ParseError, StoreBusyError
from kansoku.interrupts import raise_if_witnessed, sigint_held, sigint_witnessed
from kansoku.parsers.base import IngestWarning
from kansoku.store.limits import BUILD_MEMORY_LIMIT  # noqa: F401 (kansoku.store.db.BUILD_MEMORY_LIMIT, as before)

DEFAULT_DB = Path("data/kansoku.duckdb")
SCHEMA_FILE = Path(__file__).with_name("schema.sql")
CORE_TABLES_WITH_SOURCE = ["ingest_warnings"]
# The table numbering files: a table with a ``file_no`` column and no ``source_id`` (a per-transaction log's
# rows, billions of them, without a string per row) names its file by that number, and this table maps it to
# the file's source_id. The numbers are unique in a store and handed out by its writer (Store.next_file_no).
FILE_TABLE = "pgbench_transaction_files"

# DuckDB's memory while a memory-bound format is parsed (Format.memory_bound: binary sa files) and in the
# parallel ingest's workers. Without a limit DuckDB keeps every block it wrote cached (80 % of the machine's
# memory by default), and a day of sar (40 million rows) would hold gigabytes; beyond the limit it evicts
# written blocks. Not applied to every parse: a limited bulk read_csv (transaction logs) spills and is slower.
WRITER_MEMORY_LIMIT = "160MB"
# DuckDB's memory in a build: BUILD_MEMORY_LIMIT (store/limits.py, which the command line reads without DuckDB)

# The tall tables whose every row belongs to one run (by its run_id, or by its source's run), and whose
# every reader computes a run's rows from that run's rows alone (grouped, joined or windowed by run, source or
# file): a run's rows of every view are the same whether these tables hold the whole store or this run alone
# (``Store.runs_only``). Not here: the tables a view reads across runs, e.g. pg_checkpoints (a server log
# that is no run's counts for every run in the directories below it) and runs (the log's own run decides).
PER_RUN_TABLES = {
    "sys_metrics": "run_id",            # sys_metrics_auth -> cpu, disk, memory (grouped by run) -> *_in_run*
    "sys_series": "run_id",             # sys_series_chosen (by run or file), sys_source_clock (by file, run)
    "pgbench_progress": "run_id",       # pgbench_tps_per_second, pgbench_tps_samples (windows by file, run)
    "pgbench_aggregate": "run_id",      # pgbench_aggregate_intervals (grouped by run)
    "pgbench_transaction_files": "source_id",  # pgbench_transactions (its file's run), grouped by run above
    "pgbench_transaction_rows_plain": "file_no",  # (its file's, by file_no)
    "pgbench_transaction_rows_full": "file_no",
}

# Views over PER_RUN_TABLES that a run's page reads many times (most of run_metrics' branches, run_events and
# the series read the steady state, the CPU and disk samples of the run's window): ``Store.runs_only(views=...)``
# computes each once over the runs' rows, in this order (a view after those it reads). Planning the views
# again for each of a run page's statements, not their rows, was most of the cost (docs/build-performance.md).
RUN_VIEWS = ("pgbench_tps_per_second", "pgbench_tps_samples", "pgbench_steady_state", "pgbench_stalls",
             "sys_series_chosen", "sys_metrics_auth", "cpu", "disk", "memory", "cpu_in_run", "disk_in_run",
             "memory_in_run", "cpu_in_run_mean", "disk_in_run_mean", "run_time_axis", "pgbench_aggregate_intervals")

# In a query of ``Store.per_run``: the place of a condition on ``m.run_id`` (as it stands: every run)
RUNS = "/*kansoku:runs*/ true"

_LOCK_RE = re.compile(r"(Could not set lock|Conflicting lock)", re.I)
_PID_RE = re.compile(r"PID (\d+)")


class Store:
    """An open kansoku database."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self.con = con
        self.path = path
        self.read_only = read_only
        self._columns: dict[str, dict[str, str]] = {}  # the schema is fixed while a store is open
        self._file_no: int | None = None  # the last file number handed out (next_file_no)
        # what answers Store.per_run from rows kept by an earlier build (report/cache.py ItemCache.keep_run_rows)
        self.run_rows: Callable[[str, list[Any]], list[tuple]] | None = None

    @contextmanager
    def memory_limited(self, limited: bool = True) -> Iterator[None]:
        """DuckDB's memory limited to WRITER_MEMORY_LIMIT inside the block (when ``limited``), restored after."""
        if not limited:
            yield
            return
        before = self.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        self.con.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")
        try:
            yield
        finally:
            try:
                self.con.execute(f"SET memory_limit = '{before}'")
            except duckdb.TransactionException:  # the parse's error aborted the transaction: the ingest rolls
                pass                                # back and closes (an interrupt is never swallowed here)

    def limit_memory(self, limit: str, spill_dir: Path | None = None) -> None:
        """DuckDB's memory limited to ``limit`` on this connection (a build's: BUILD_MEMORY_LIMIT), what does
        not fit spilled under ``spill_dir`` (DuckDB removes its files there when the connection closes)."""
        if spill_dir is not None:
            spill_dir.mkdir(parents=True, exist_ok=True)
            self.con.execute(f"SET temp_directory = {sql_str(str(spill_dir))}")
        self.con.execute(f"SET memory_limit = {sql_str(limit)}")

    # -- schema -------------------------------------------------------------
    def ensure_schema(self) -> None:
        con = self.con
        con.execute(SCHEMA_FILE.read_text())
        for mod in parsers.modules():
            if mod.schema:
                con.execute(mod.schema)
        if ddl := parsers.host_columns_ddl():  # after every module's tables: each names its own
            con.execute(ddl)
        self._retire_tables()
        self.create_views()
        con.execute("DELETE FROM kansoku_meta WHERE key = 'schema_fingerprint'")
        con.execute("INSERT INTO kansoku_meta VALUES ('schema_fingerprint', ?)", [schema_fingerprint()])

    def _retire_tables(self) -> None:
        """A store of an older layout: the rows of each table a module retired moved into its new tables
        (ParserModule.retired), in one transaction each (all moved, the old table dropped, or nothing)."""
        held = {t for (t,) in self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"
        ).fetchall()}
        for mod in parsers.modules():
            for old, sql in mod.retired.items():
                if old not in held:
                    continue
                with self.atomic():  # (a Ctrl-C leaves the old table whole)
                    self.con.execute(sql)
        self._columns.clear()

    def next_file_no(self) -> int:
        """A file number not used in the store (FILE_TABLE): one past the largest stored when first asked,
        then one more each time (numbers of files not stored in the end are simply not used)."""
        if self._file_no is None:
            self._file_no = self.con.execute(f"SELECT coalesce(max(file_no), 0) FROM {FILE_TABLE}").fetchone()[0]
        self._file_no += 1
        return self._file_no

    def file_keyed(self, table: str) -> bool:
        """A table whose rows name their file by ``file_no`` (FILE_TABLE), not by ``source_id``."""
        cols = self.table_columns(table)
        return "source_id" not in cols and "file_no" in cols

    def schema_is_current(self) -> bool:
        try:
            row = self.con.execute("SELECT value FROM kansoku_meta WHERE key = 'schema_fingerprint'").fetchone()
        except duckdb.CatalogException:
            return False
        return row is not None and row[0] == schema_fingerprint()

    def create_views(self) -> None:
        con = self.con
        for mod in parsers.modules():
            if mod.views:
                try:
                    con.execute(mod.views)
                except duckdb.CatalogException as exc:
                    if "is of type Table" not in str(exc):
                        raise
                    # A table of an older kansoku is a view now: its rows cannot be carried over.
                    raise KansokuError(
                        f"{self.path} was made by an older kansoku whose layout changed ({exc}). The store is "
                        f"rebuilt from the raw files: remove {self.path} and run tools/ingest again.") from None
        metric_selects = run_metric_selects()
        if not metric_selects:
            metric_selects.append(
                "SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS metric, NULL::DOUBLE AS value, NULL::VARCHAR AS unit, "
                "NULL::VARCHAR AS host, NULL::VARCHAR AS role WHERE false"
            )
        con.execute("CREATE OR REPLACE VIEW run_metrics AS\n" + "\nUNION ALL\n".join(metric_selects))
        # A wide view of factors for the DuckDB CLI: runs with a MAP of factors.
        con.execute(
            """CREATE OR REPLACE VIEW runs_with_factors AS
               SELECT r.*, f.factors FROM runs r LEFT JOIN (
                 SELECT run_id, map(list(factor ORDER BY factor), list(value ORDER BY factor)) AS factors
                 FROM run_factors GROUP BY run_id) f USING (run_id)"""
        )

    def source_tables(self) -> list[str]:
        tables = list(CORE_TABLES_WITH_SOURCE)
        for mod in parsers.modules():
            tables.extend(mod.tables)
        return tables

    def table_columns(self, table: str) -> dict[str, str]:
        if table in self._columns:
            return self._columns[table]
        rows = self.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
            [table],
        ).fetchall()
        if not rows:
            raise KansokuError(f"internal: no table {table!r} in the store schema")
        self._columns[table] = {name: typ for name, typ in rows}
        return self._columns[table]

    # -- rows ---------------------------------------------------------------
    def insert_rows(self, table: str, rows: Iterable[dict[str, Any]], fixed: dict[str, Any] | None = None) -> int:
        """Bulk insert dict rows through DuckDB's JSON reader (much faster than executemany)."""
        cols = self.table_columns(table)
        json_cols = [c for c, t in cols.items() if t == "JSON"]
        fd, tmp = tempfile.mkstemp(prefix="kansoku-", suffix=".ndjson")
        n = 0
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                for row in rows:
                    if fixed:
                        row = {**row, **fixed}
                    unknown = set(row) - set(cols)
                    if unknown:
                        raise KansokuError(f"internal: table {table} has no column(s) {sorted(unknown)}")
                    for c in json_cols:  # a JSON column holds the document, not a string of it
                        if isinstance(row.get(c), str):
                            row = {**row, c: json.loads(row[c])}
                    fh.write(json.dumps(row, default=_json_default))
                    fh.write("\n")
                    n += 1
            if n:
                columns = "{" + ", ".join(f"{sql_str(c)}: {sql_str(t)}" for c, t in cols.items()) + "}"
                self.con.execute(
                    f"INSERT INTO {table} BY NAME SELECT * FROM read_json(?, format='newline_delimited', "
                    f"columns={columns}, timestampformat='auto')",
                    [tmp],
                )
        finally:
            os.unlink(tmp)
        return n

    def close(self) -> None:
        self.con.close()

    # -- parallel ingest: a worker's scratch store hands a file's rows to the writer as Parquet --------
    @contextmanager
    def file_transaction(self) -> Iterator[Callable[[], None]]:
        """A transaction the block commits by calling what it is given; rolled back otherwise (a worker's
        file: its rows stay in the scratch database only when the parse succeeded)."""
        self.con.execute("BEGIN TRANSACTION")
        done = False

        def commit() -> None:
            nonlocal done
            self.con.execute("COMMIT")
            done = True

        try:
            yield commit
        finally:
            if not done:
                try:
                    self.con.execute("ROLLBACK")
                except duckdb.Error:
                    pass

    def export_rows(self, table: str, out: Path, per_file: Sequence[str] = ()) -> tuple[int, dict[str, tuple] | None]:
        """Write every row of ``table`` (a worker's scratch table: the rows of the files of one chunk, in the
        order they were stored) to a Parquet file; the number of rows, and the values of the ``per_file``
        columns of each file (source_id -> values) when each file has one value in each of them: those columns
        are then left out of the file (``import_rows`` puts them back). Five such columns of ``sys_metrics``
        (run_id, tool, format, host, role: the same on each of a file's thousands of rows) would be much of the
        cost of writing a chunk's rows."""
        cols = self.table_columns(table)  # a known table, not a name from elsewhere
        values = None
        if per_file and all(c in cols for c in per_file) and "source_id" in cols:
            rows = self.con.execute(f"SELECT DISTINCT source_id, {', '.join(per_file)} FROM {table}").fetchall()
            if len({r[0] for r in rows}) == len(rows):
                values = {r[0]: tuple(r[1:]) for r in rows}
        select = f"SELECT * EXCLUDE ({', '.join(per_file)})" if values is not None else "SELECT *"
        n = self.con.execute(f"COPY ({select} FROM {table}) TO {sql_str(str(out))} (FORMAT parquet)").fetchone()[0]
        return n, values

    def clear(self, tables: Iterable[str]) -> None:
        """Delete every row of these tables (a worker's scratch tables, once their rows left as Parquet)."""
        for table in tables:
            self.table_columns(table)
            self.con.execute(f"DELETE FROM {table}")

    def import_rows(self, table: str, parquet: Path | str | list[Path | str],
                    source_ids: Sequence[str] | None = None,
                    per_file: tuple[Sequence[str], Sequence[tuple]] | None = None) -> int:
        """Insert the rows a worker exported (``export_rows``) into ``table``: one Parquet file, or a list of
        them (one statement); with ``source_ids``, only those files' rows. ``per_file``: the columns the files
        leave out and, for each of ``source_ids``, their values (``export_rows``), laid over each row of the
        file by its position in ``source_ids`` (no join: the rows keep their order)."""
        types = self.table_columns(table)
        files = [str(p) for p in parquet] if isinstance(parquet, list) else str(parquet)
        if per_file is not None:
            if source_ids is None or self.file_keyed(table):  # (a caller's mistake: the columns would be lost)
                raise ValueError(f"{table}: per-file columns are laid over files named by source_id alone")
            cols, values = per_file
            lists = ", ".join(f"(?::{types[c]}[])[kansoku_k] AS {c}" for c in cols)
            return self.con.execute(
                f"INSERT INTO {table} BY NAME SELECT * EXCLUDE (kansoku_k), {lists} FROM (SELECT *, "
                f"list_position(?::VARCHAR[], source_id) AS kansoku_k FROM read_parquet(?)) WHERE kansoku_k > 0",
                [[v[i] for v in values] for i in range(len(cols))] + [list(source_ids), files]).fetchone()[0]
        if source_ids is None:
            return self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet(?)",
                                    [files]).fetchone()[0]
        if self.file_keyed(table):  # these files' numbers: their FILE_TABLE rows are imported first (Batch)
            return self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet(?) WHERE file_no IN "
                                    f"(SELECT file_no FROM {FILE_TABLE} WHERE list_contains(?::VARCHAR[], source_id))",
                                    [files, list(source_ids)]).fetchone()[0]
        return self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet(?) "
                                f"WHERE list_contains(?::VARCHAR[], source_id)",
                                [files, list(source_ids)]).fetchone()[0]

    # -- reading: the analysis and report stages ask through these, never through ``con`` --

    @contextmanager
    def runs_only(self, run_ids: Sequence[str], views: Sequence[str] = ()) -> Iterator["Store"]:
        """The store as seen by a query about ``run_ids`` alone, at the cost of these runs' rows: a second
        connection (its own temporary schema) in which each table of ``PER_RUN_TABLES`` is shadowed by a
        temporary table of the same name holding these runs' rows only (one scan of the stored table; DuckDB
        resolves a name to the temporary table first, in a view's definition as well). Every view then
        computes these runs alone: their rows are those of the whole store for these runs, since a view's
        rows of a run come from those tables' rows of that run only (``PER_RUN_TABLES``;
        tests/test_runs_only.py compares both). Without it a run filter reaches the tall tables only as far
        as the views' windows and unions let it: a rebuild after one new run would compute the windows of
        every run (docs/build-performance.md). ``views``: views over these tables (``RUN_VIEWS``)
        made temporary tables of their rows too, once, after the tables: every later statement reads them as
        they are (their rows are these runs' alone) instead of planning the view again."""
        lits = ", ".join(sql_str(r) for r in run_ids) or "NULL"

        def own(db: str, table: str) -> str | None:
            if table not in PER_RUN_TABLES:
                return None  # a view of ``views``: over the shadowed tables already
            if PER_RUN_TABLES[table] == "run_id":
                return f"run_id IN ({lits})"
            sources = f'SELECT source_id FROM "{db}".main.sources WHERE run_id IN ({lits})'
            if PER_RUN_TABLES[table] == "file_no":
                return f'file_no IN (SELECT file_no FROM "{db}".main.{FILE_TABLE} WHERE source_id IN ({sources}))'
            return f"source_id IN ({sources})"

        with self._shadowed([*PER_RUN_TABLES, *views], own) as store:
            yield store

    @contextmanager
    def computed_once(self, views: Sequence[str]) -> Iterator["Store"]:
        """The store on a second connection in which each of ``views`` is a temporary table of its rows,
        computed once (one statement each), that every later statement of the connection reads in its place
        (DuckDB resolves a name to the temporary table first, inside view definitions too)."""
        with self._shadowed(views, None) as store:
            yield store

    def computed_here(self, views: Sequence[str]) -> None:
        """Each of ``views`` made a temporary table of its rows on this store's own connection, computed once
        (one statement each, in this order: a later view reads the earlier ones' tables), that every later
        statement of this connection reads in its place until it closes (a build's reports and run pages
        alike). Another connection (``runs_only``, ``computed_once``) still sees the views."""
        _shadow(self.con, views, None)

    def computed(self, name: str) -> bool:
        """Whether this connection reads ``name`` from a temporary table of its rows (``computed_here``,
        ``computed_once``, ``runs_only``) rather than from the stored view."""
        return bool(self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?",
                                     [name]).fetchone()[0])

    @contextmanager
    def _shadowed(self, names: Iterable[str], where) -> Iterator["Store"]:
        """A second connection in which each of ``names`` that the store holds (table or view) is shadowed by a
        temporary table of its rows (those ``where(db, name)`` selects, when given)."""
        cur = self.con.cursor()
        try:
            _shadow(cur, names, where)
            yield Store(cur, self.path, True)
        finally:
            cur.close()

    def temp_table(self, name: str, select_sql: str, params: Sequence[Any] | None = None,
                   append: bool = False) -> None:
        """A temporary table ``name`` (this connection's, gone when it closes) of a SELECT's rows, in their order;
        ``append``: the rows added after the table's own."""
        if append:
            self.con.execute(f'INSERT INTO temp."{name}" {select_sql}', list(params or []))
        else:
            self.con.execute(f'CREATE OR REPLACE TEMP TABLE "{name}" AS {select_sql}', list(params or []))

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Rows of a read-only query over the stored tables and views."""
        return self.con.execute(sql, list(params or [])).fetchall()

    def per_run(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Rows of a query about every run whose rows of a run come from that run's stored rows alone (its rows
        of PER_RUN_TABLES and of its own small tables): its first column ``m.run_id``, its rows ordered by it,
        ``RUNS`` standing where a condition on ``m.run_id`` goes. A build's item cache (``run_rows``) may give
        the rows of the runs whose fingerprint did not change from an earlier build and compute the others
        alone; else the query runs as it is."""
        if self.run_rows is not None:
            return self.run_rows(sql, list(params or []))
        return self.query(sql, params)

    def query_dicts(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name."""
        cur = self.con.execute(sql, list(params or []))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    # -- the ingest's API: every statement the ingest runs against stored tables ----------------------
    @contextmanager
    def atomic(self) -> Iterator["Transaction"]:
        """One transaction: committed when the block ends normally (unless ``tx.rollback()`` was called),
        rolled back on any exception, including Ctrl-C. ``tx.committed`` tells the truth afterwards: a
        Ctrl-C pressed during COMMIT is held back until COMMIT has returned, then raised."""
        tx = Transaction()
        with sigint_witnessed():
            self.con.execute("BEGIN TRANSACTION")
            try:
                yield tx
                raise_if_witnessed()  # a Ctrl-C a statement swallowed: never commit after one
            except BaseException:
                try:
                    self.con.execute("ROLLBACK")
                except duckdb.Error:
                    pass
                raise
            if tx.rolled_back:
                self.con.execute("ROLLBACK")
                return
            with sigint_held() as held:
                self.con.execute("COMMIT")
                tx.committed = True
        if held:
            raise KeyboardInterrupt

    def source_state(self, source_id: str) -> tuple[str, int, str] | None:
        """(sha256, size_bytes, path) of a stored source, or None."""
        return self.con.execute("SELECT sha256, size_bytes, path FROM sources WHERE source_id = ?",
                                [source_id]).fetchone()

    def source_states(self, source_ids: list[str]) -> dict[str, tuple[str, int, str, str | None, str | None]]:
        """source_id -> (sha256, size_bytes, path, host, role) of these stored sources (one statement)."""
        return {r[0]: tuple(r[1:]) for r in self.con.execute(
            "SELECT source_id, sha256, size_bytes, path, host, role FROM sources "
            "WHERE source_id IN (SELECT unnest(?::VARCHAR[]))", [source_ids]).fetchall()}

    def source_host(self, source_id: str) -> tuple[str | None, str | None]:
        """(host, role) a stored source was ingested as (a file whose host or role changed is parsed again)."""
        row = self.con.execute("SELECT host, role FROM sources WHERE source_id = ?", [source_id]).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def printed_hosts(self, run_ids: list[str]) -> dict[str, list[tuple[str, str | None, str]]]:
        """run_id -> (file_name, host the layout gives the file, hostname the file itself prints) of the runs'
        files that print one (sysstat headers), for every run of an ingest in one statement."""
        out: dict[str, list[tuple[str, str | None, str]]] = {}
        for run_id, *row in self.con.execute(
                "SELECT DISTINCT src.run_id, src.file_name, src.host, ss.host FROM sys_series ss "
                "JOIN sources src USING (source_id) WHERE src.run_id IN (SELECT unnest(?::VARCHAR[])) "
                "AND ss.host IS NOT NULL AND ss.host <> '' ORDER BY 1, 2", [run_ids]).fetchall():
            out.setdefault(run_id, []).append(tuple(row))
        return out

    def sampling_intervals(self, run_ids: list[str]) -> dict[str, dict[str, float]]:
        """run_id -> file_name -> the shortest sampling interval (s) of the runs' monitor files (sysstat)."""
        out: dict[str, dict[str, float]] = {}
        for run_id, name, interval in self.con.execute(
                "SELECT src.run_id, src.file_name, min(ss.interval_s) FROM sys_series ss JOIN sources src "
                "USING (source_id) WHERE src.run_id IN (SELECT unnest(?::VARCHAR[])) AND ss.interval_s > 0 "
                "GROUP BY 1, 2", [run_ids]).fetchall():
            out.setdefault(run_id, {})[name] = interval
        return out

    def set_source_path(self, source_id: str, path: str) -> None:
        """An unchanged file seen at another place: sources.path says where it is now."""
        self.con.execute("UPDATE sources SET path = ? WHERE source_id = ?", [path, source_id])

    def run_sources(self, run_id: str) -> dict[str, str]:
        """file_name -> source_id of the files stored for a run."""
        return dict(self.con.execute("SELECT file_name, source_id FROM sources WHERE run_id = ?",
                                     [run_id]).fetchall())

    def runs_in_dirs(self, run_dirs: list[str]) -> dict[str, str]:
        """run_dir -> run_id of measured runs stored from these directories."""
        return dict(self.con.execute(
            "SELECT run_dir, run_id FROM runs WHERE origin = 'measured' AND run_dir IN (SELECT unnest(?::VARCHAR[]))",
            [run_dirs]).fetchall())

    def measured_run_dirs(self, run_ids: list[str]) -> dict[str, str]:
        """run_id -> run_dir of these runs stored as measured runs."""
        return dict(self.con.execute(
            "SELECT run_id, run_dir FROM runs WHERE origin = 'measured' AND run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]).fetchall())

    def run_files(self, run_ids: list[str]) -> dict[str, dict[str, tuple[str, str]]]:
        """run_id -> file_name -> (sha256, format) of the files stored for these runs (one statement)."""
        out: dict[str, dict[str, tuple[str, str]]] = {}
        for run_id, name, sha, fmt in self.con.execute(
                "SELECT run_id, file_name, sha256, format FROM sources WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                [run_ids]).fetchall():
            out.setdefault(run_id, {})[name] = (sha, fmt)
        return out

    def delete_source(self, source_id: str) -> None:
        """A file's rows everywhere, and the runs it declared itself (transcribed tables)."""
        declared = ("SELECT run_id FROM runs WHERE origin = 'transcribed' "
                    "AND json_extract_string(run_toml, '$.source_id') = ?")
        self.con.execute(f"DELETE FROM run_factors WHERE run_id IN ({declared})", [source_id])
        self.con.execute(f"DELETE FROM runs WHERE run_id IN ({declared})", [source_id])
        tables = self.source_tables()
        for table in [t for t in tables if self.file_keyed(t)]:  # before the file's row that numbers them
            self.con.execute(f"DELETE FROM {table} WHERE file_no IN "
                             f"(SELECT file_no FROM {FILE_TABLE} WHERE source_id = ?)", [source_id])
        for table in [t for t in tables if not self.file_keyed(t)]:
            self.con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])
        self.con.execute("DELETE FROM sources WHERE source_id = ?", [source_id])

    def defined_run(self, run_ids: list[str]) -> tuple[str, str] | None:
        """(run_id, origin) of one of these runs already stored, or None."""
        return self.con.execute("SELECT run_id, origin FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
                                "LIMIT 1", [run_ids]).fetchone()

    def upsert_run(self, runs: list[tuple[dict[str, Any], dict[str, tuple[str, str]], list[dict[str, Any]],
                                     list[dict[str, Any]]]]) -> list[str]:
        """Store measured runs: for each, its row of ``runs`` (without ingested_at), its factors
        (name -> (value, origin)), its hosts (``run_hosts`` rows, replacing the run's stored ones) and the
        machines they ran on (``machines`` rows, each kept once). A few statements for all the runs of an
        ingest, not a dozen per run. Returns each run's state: 'new', 'updated' or
        'unchanged' (its row and factors as stored)."""
        ids = [row["run_id"] for row, *_ in runs]
        if len(set(ids)) < len(ids):  # one id twice (--keep-going past the error that says so): in turn
            return [self.upsert_run([r])[0] for r in runs]
        old = {r[0]: r[1:] for r in self.con.execute(
            "SELECT run_id, run_dir, status, status_note, run_toml::VARCHAR, run_toml_sha256, default_role, "
            "coverage_threshold FROM runs "
            "WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
        old_factors: dict[str, dict[str, str]] = {}
        for run_id, factor, value in self.con.execute(
                "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                [ids]).fetchall():
            old_factors.setdefault(run_id, {})[factor] = value
        states, changed = [], []
        for row, factors, _, _ in runs:
            o = old.get(row["run_id"])
            if o and old_factors.get(row["run_id"], {}) == {k: v for k, (v, _) in factors.items()} \
                    and o[1:3] == (row["status"], row["status_note"]) \
                    and json.loads(o[3] or "null") == json.loads(row["run_toml"]) \
                    and o[0] == row["run_dir"] and o[4] == row.get("run_toml_sha256") \
                    and o[5] == row.get("default_role") and o[6] == row.get("coverage_threshold"):
                states.append("unchanged")
                continue
            states.append("updated" if o else "new")
            changed.append((row, factors))
        if changed:
            gone = [row["run_id"] for row, _ in changed]
            self.con.execute("DELETE FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [gone])
            self.con.execute("DELETE FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [gone])
            now = datetime.now(timezone.utc)
            self.insert_rows("runs", [{**row, "ingested_at": now} for row, _ in changed])
            self.insert_rows("run_factors", [{"run_id": row["run_id"], "factor": k, "value": v, "origin": o}
                                             for row, factors in changed for k, (v, o) in factors.items()])
        self.con.execute("DELETE FROM run_hosts WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
        hosts = [h for _, _, some, _ in runs for h in some]
        if hosts:
            self.insert_rows("run_hosts", hosts)
        machines: dict[str, dict[str, Any]] = {}
        for _, _, _, some in runs:
            for m in some:
                machines.setdefault(m["machine_id"], m)  # the first run's description of a machine is kept
        known = {r[0] for r in self.con.execute("SELECT machine_id FROM machines WHERE machine_id IN "
                                                "(SELECT unnest(?::VARCHAR[]))", [list(machines)]).fetchall()}
        new = [m for mid, m in machines.items() if mid not in known]
        if new:
            self.insert_rows("machines", new)
        return states

    # -- the build's API --------------------------------------------------------------------------
    @property
    def blobs(self) -> Path:
        return blob_dir(self.path)


@dataclass
class Transaction:
    committed: bool = False
    rolled_back: bool = False

    def rollback(self) -> None:
        """End the block with ROLLBACK instead of COMMIT."""
        self.rolled_back = True


# -- content-addressed copies of the raw files, kept with the store ----------------------------------
RUN_TOML = "run.toml"
BLOBS_MARKER = ".kansoku-blobs"  # a walk never descends into a directory holding it


def blob_dir(db_path: Path) -> Path:
    """Where the raw files of a store are kept, by sha256: ``blobs/`` next to the database file."""
    return Path(db_path).parent / "blobs"


def blob_path(blobs: Path, sha256: str) -> Path:
    return Path(blob_file(os.fspath(blobs), sha256))


def blob_file(blobs: str, sha256: str) -> str:
    """The kept copy of the bytes of ``sha256`` under ``blobs``, as a string (a campaign's report names tens of
    thousands of them, and hands them to another process: a path object costs more to make and to pickle)."""
    return f"{blobs}/{sha256[:2]}/{sha256}"


_FICLONE = 0x40049409  # ioctl(dest, FICLONE, src): a copy-on-write clone of the whole file (Linux)


def _reflink(path: Path, dest_fd: int) -> bool:
    """Make ``dest_fd`` a copy-on-write clone of ``path`` where the filesystem allows it (never a hard
    link: a file edited in place later would change the kept copy). False: copy the bytes instead."""
    try:
        with open(path, "rb") as src:
            fcntl.ioctl(dest_fd, _FICLONE, src.fileno())
        os.lseek(dest_fd, 0, os.SEEK_SET)
        return True
    except OSError:  # EXDEV, EOPNOTSUPP, EINVAL (ext4, tmpfs, another filesystem): copied instead
        return False


# Chunks small enough to stay in the CPU's L2 cache while they are hashed, counted and written: larger chunks
# make each of the three passes read memory again (docs/ingest-performance.md).
_CHUNK = 1 << 18


def hash_and_keep(path: Path, blobs: Path | None) -> tuple[str, int, int]:
    """Read the file once: its sha256, its size, its number of newlines, and (unless ``blobs`` is None)
    a copy of exactly the bytes hashed kept as ``blobs/<sha256[:2]>/<sha256>`` (read-only; written
    once, never replaced). The published raw file is that copy, so it matches the sha256 on the
    sources page whatever happens later to the file that was ingested."""
    h = hashlib.sha256()
    newlines = size = 0
    if blobs is None:
        with open(path, "rb") as src:
            for chunk in iter(lambda: src.read(_CHUNK), b""):
                h.update(chunk)
                newlines += chunk.count(b"\n")
                size += len(chunk)
        return h.hexdigest(), size, newlines
    if not (blobs / BLOBS_MARKER).is_file():
        blobs.mkdir(parents=True, exist_ok=True)
        (blobs / BLOBS_MARKER).write_text("kansoku: raw files kept by sha256; tools/ingest never walks this directory\n")
    fd, tmp = tempfile.mkstemp(prefix=".incoming-", dir=blobs)
    try:
        if _reflink(path, fd):
            # the copy shares the file's blocks (copy-on-write: btrfs, XFS): no bytes written; the bytes
            # hashed are read from the copy, so they are exactly the kept ones whatever the file becomes
            with os.fdopen(fd, "rb") as kept:
                for chunk in iter(lambda: kept.read(_CHUNK), b""):
                    h.update(chunk)
                    newlines += chunk.count(b"\n")
                    size += len(chunk)
        else:
            with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
                for chunk in iter(lambda: src.read(_CHUNK), b""):
                    h.update(chunk)
                    newlines += chunk.count(b"\n")
                    size += len(chunk)
                    dst.write(chunk)
        digest = h.hexdigest()
        target = blob_path(blobs, digest)
        if target.is_file() and target.stat().st_size == size:
            os.unlink(tmp)
        else:
            target.parent.mkdir(exist_ok=True)
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return digest, size, newlines


def run_metric_selects(metrics: Iterable[str] | None = None) -> list[str]:
    """The branches of the ``run_metrics`` view, a SELECT of (run_id, metric, value, unit, host, role) each: one
    per metric definition (per-host metrics: one row per host of the run), one per module naming metrics by
    data (transcribed published values). A build reads them one at a time (report/runs.py): the whole view in
    one statement holds every branch's working memory at once. ``metrics``: only the definitions of these
    metrics (and every branch naming metrics by data): every row of ``run_metrics`` whose metric is one of
    them, without planning the ~60 other branches."""
    wanted = None if metrics is None else set(metrics)
    selects = []
    for md in parsers.metrics().values():
        if wanted is not None and md.name not in wanted:
            continue
        hr = "host::VARCHAR AS host, role::VARCHAR AS role" if md.per_host else \
            "NULL::VARCHAR AS host, NULL::VARCHAR AS role"
        selects.append(
            f"SELECT run_id, {sql_str(md.name)} AS metric, CAST(value AS DOUBLE) AS value, "
            f"{sql_str(md.unit)} AS unit, {hr} FROM ({md.sql})"
        )
    for mod in parsers.modules():
        if mod.metrics_sql:  # metrics named by data (transcribed published values)
            selects.append(
                f"SELECT run_id, metric, CAST(value AS DOUBLE) AS value, unit, NULL::VARCHAR AS host, "
                f"NULL::VARCHAR AS role FROM ({mod.metrics_sql})")
    return selects


def run_metric_source(metrics: Iterable[str]) -> str:
    """``run_metrics`` as a query's source, from the branches that can hold ``metrics`` alone (planning the
    whole view's ~60 branches cost most of a query about one metric): the same rows."""
    branches = run_metric_selects(metrics)
    return "(" + "\nUNION ALL\n".join(branches) + ")" if branches else "run_metrics"


def schema_fingerprint() -> str:
    """Changes whenever a table, view or metric definition changes."""
    h = hashlib.sha256(SCHEMA_FILE.read_bytes() + parsers.host_columns_ddl().encode())
    for mod in parsers.modules():
        h.update(mod.name.encode() + mod.schema.encode() + mod.views.encode())
    for md in parsers.metrics().values():
        h.update(md.name.encode() + md.sql.encode())
    return h.hexdigest()[:16]


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def sql_str(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def _shadow(con: duckdb.DuckDBPyConnection, names: Iterable[str], where) -> None:
    """On ``con``: each of ``names`` that the store holds (table or view) shadowed by a temporary table of its
    rows (those ``where(db, name)`` selects, when given); DuckDB resolves a name to the temporary table first,
    inside view definitions too. A view made whole (no ``where``) that a module computes for less
    (``parsers.whole_views``) is made by that module's statement: the same rows."""
    db = con.execute("SELECT current_database()").fetchone()[0]
    whole = parsers.whole_views() if where is None else {}
    held = {t for (t,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' UNION "
        "SELECT view_name FROM duckdb_views() WHERE database_name = ? AND schema_name = 'main'",
        [db, db]).fetchall()}
    for name in names:
        if name not in held:
            continue
        if name in whole:
            con.execute(f'CREATE TEMP TABLE "{name}" AS {whole[name]}')
            continue
        cond = where(db, name) if where is not None else None
        cond = f" WHERE {cond}" if cond else ""
        con.execute(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM "{db}".main."{name}"{cond}')


def open_store(path: str | Path = DEFAULT_DB, *, read_only: bool = False, wait_s: float = 0.0,
               on_wait=None) -> Store:
    """Open (creating if needed) the database.

    DuckDB allows one writing process per file; a second writer gets a lock
    error. We wait up to ``wait_s`` seconds for the other process, then stop
    with a clear message: we never touch a database another process holds.
    """
    path = Path(path)
    if read_only and not path.exists():
        raise KansokuError(f"{path}: no database yet; run tools/ingest first")
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    announced = False
    if not read_only and not path.exists() and not path.with_name(path.name + ".wal").exists():
        _from_template(path)  # a new store: the schema copied, not created (else ensure_schema below)
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as exc:
            if not _LOCK_RE.search(str(exc)):
                raise KansokuError(f"{path}: cannot open database: {exc}") from exc
            pid = _PID_RE.search(str(exc))
            holder = f"process {pid.group(1)}" if pid else "another process"
            if time.monotonic() >= deadline:
                raise StoreBusyError(
                    f"{path} is in use by {holder} (another ingest or build?); "
                    f"nothing was changed. Try again when it has finished, or pass --wait SECONDS."
                ) from None
            if not announced and on_wait:
                on_wait(f"{path} is in use by {holder}; waiting up to {wait_s:.0f} s ...")
                announced = True
            time.sleep(0.25)
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # a big file's load prints no bar on stdout
    store = Store(con, path, read_only)
    if not read_only:
        if not store.schema_is_current():  # the DDL is only re-run when a definition changed
            store.ensure_schema()
    elif not store.schema_is_current():
        # Made by another kansoku version. A read-only open never writes: the upgrade is tools/ingest's.
        con.close()
        raise KansokuError(
            f"{path} was made by another version of kansoku (its tables and views differ from this one's); "
            f"nothing was changed. Run tools/ingest on your runs (it upgrades the store), then try again.")
    return store


def _used(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    """The named parameters a statement uses (DuckDB refuses unused ones)."""
    return {k: v for k, v in params.items() if f"${k}" in sql}


TEMPLATES_KEPT = 4  # schema templates of different versions kept under the temporary directory
_MAKING: set[str] = set()  # the templates this process is writing (DuckDB shares its own open files)


def _remove_stale_templates(folder: Path) -> None:
    """Half-made templates (``.new-*``) of a process killed while it wrote one: removed when no process
    holds DuckDB's lock on them (a template being made now is locked by its writer)."""
    for new in folder.glob(".new-*.duckdb"):
        if str(new) in _MAKING:
            continue
        try:
            duckdb.connect(str(new), read_only=True).close()
        except duckdb.Error as exc:
            if _LOCK_RE.search(str(exc)):  # being written by a live process
                continue
        for leftover in (new, new.with_name(new.name + ".wal")):
            leftover.unlink(missing_ok=True)


def schema_template() -> Path | None:
    """An empty database with the current schema and views, made once per schema version (and kansoku and
    DuckDB version) and copied for every new store and every worker's scratch database: creating the
    tables and the 60-odd views costs far more than copying the small file.
    Kept under the temporary directory, one file per version (the last few made; older ones are removed); None when it
    cannot be written (the caller then creates the schema itself)."""
    key = hashlib.sha256((schema_fingerprint() + duckdb.__version__).encode() + Path(__file__).read_bytes())
    folder = Path(tempfile.gettempdir()) / f"kansoku-schema-{os.getuid()}"
    path = folder / f"{key.hexdigest()[:16]}.duckdb"
    try:
        _remove_stale_templates(folder)
    except OSError:  # (a folder not there yet, or not ours to clean)
        pass
    if path.is_file():
        return path
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".new-", suffix=".duckdb")
        os.close(fd)
        os.unlink(tmp)  # DuckDB creates the file itself
        _MAKING.add(tmp)
        try:
            con = duckdb.connect(tmp)
            try:
                con.execute("SET TimeZone = 'UTC'")
                Store(con, Path(tmp), False).ensure_schema()
                con.execute("CHECKPOINT")
            finally:
                con.close()
            os.replace(tmp, path)
        finally:
            _MAKING.discard(tmp)
            for leftover in (Path(tmp), Path(tmp + ".wal")):
                leftover.unlink(missing_ok=True)
        # other versions' templates: the few most recently made stay (two checkouts or a branch and main used
        # in turns would otherwise evict each other's and pay the schema on every new store)
        others = sorted((p for p in folder.glob("*.duckdb") if p != path and not p.name.startswith(".new-")),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[TEMPLATES_KEPT - 1:]:
            old.unlink(missing_ok=True)
        return path
    except (OSError, duckdb.Error):
        return None


def _from_template(path: Path) -> bool:
    """A new database file at ``path`` as a copy of the schema template; False when there is none."""
    template = schema_template()
    if template is None:
        return False
    try:
        shutil.copyfile(template, path)
    except OSError:
        Path(path).unlink(missing_ok=True)
        return False
    return True


def scratch_store(path: Path, in_memory: bool = False) -> Store:
    """A private database with the store's schema, for a parallel ingest's worker (one thread: the
    workers already use every core): a copy of the schema template, else the schema created here.
    ``in_memory``: the database is held in memory (a commit writes nothing: a worker commits every file it
    parses), what does not fit its memory limit spilled beside ``path``."""
    if in_memory:
        con = duckdb.connect(":memory:")
        con.execute(f"SET temp_directory = {sql_str(str(path) + '.spill')}")
        template = schema_template()
        made = False
        if template is not None:
            try:  # tables, views, macros and the schema fingerprint, as the template holds them
                con.execute(f"ATTACH {sql_str(str(template))} AS kansoku_template (READ_ONLY)")
                con.execute("COPY FROM DATABASE kansoku_template TO memory")
                con.execute("DETACH kansoku_template")
                made = True
            except duckdb.Error:
                con.close()
                con = duckdb.connect(":memory:")
                con.execute(f"SET temp_directory = {sql_str(str(path) + '.spill')}")
    else:
        made = not Path(path).exists() and _from_template(Path(path))
        con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET threads = 1")
    con.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")
    store = Store(con, Path(path), False)
    if not (made and store.schema_is_current()):
        store.ensure_schema()
    return store


ADDED_ROWS_KEPT = 5000  # rows of a table a FileSink keeps for the bounds (a pgbench summary, its progress lines)
_INT_LIMITS = {"TINYINT": 2 ** 7, "SMALLINT": 2 ** 15, "INTEGER": 2 ** 31, "BIGINT": 2 ** 63,
               "UTINYINT": 2 ** 8, "USMALLINT": 2 ** 16, "UINTEGER": 2 ** 32, "UBIGINT": 2 ** 64}


@dataclass
class FileSink:
    """The Sink a parser writes one file into (see parsers.base.Sink)."""

    store: Store
    path: Path
    run_id: str | None
    source_id: str
    run_start: Any = None
    run_meta: dict[str, Any] = field(default_factory=dict)  # the run's run.toml, as ingest read it (never re-read)
    rows_loaded: int = 0
    warnings: list[IngestWarning] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    tool_version: str | None = None
    newlines: Any = None  # () -> int, when the ingest counts the file's newlines while hashing it
    runs: list[dict[str, Any]] = field(default_factory=list)  # runs the file declares (own_runs formats)
    tables: set[str] = field(default_factory=set)  # tables the parser wrote rows into
    # table -> the rows add_rows stored in it, as stored (None: rows were also written or changed by SQL, or too many
    # to keep): the plausibility bounds look at these instead of a statement (parsers/bounds.py ``check``)
    added: dict[str, tuple[list[dict[str, Any]], dict[str, Any]] | None] = field(default_factory=dict)  # (rows, fixed)
    host: str | None = None  # the file's host and its role in the run (docs/ingest.md, "Hosts in a run")
    role: str | None = None
    file_no: int | None = None  # the file's number (FILE_TABLE): given by the writer, else asked of the store

    def _number(self) -> int:
        if self.file_no is None:
            self.file_no = self.store.next_file_no()
        return self.file_no

    def _fixed(self, cols: dict[str, str] | None = None) -> dict[str, Any]:
        fixed = {"source_id": self.source_id, "run_id": self.run_id, "host": self.host, "role": self.role}
        if cols is not None and "file_no" in cols:
            fixed["file_no"] = self._number()
        return fixed

    def _own(self, table: str) -> tuple[str, Any]:
        """(column, value) naming this file's rows of ``table``."""
        if self.store.file_keyed(table):
            return "file_no", self._number()
        return "source_id", self.source_id

    def _host_columns(self, table: str) -> list[str]:
        """The host columns the sink fills on ``table``: those its parser module declares."""
        return list(parsers.host_columns().get(table, ()))

    def add_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        cols = self.store.table_columns(table)
        fixed = {k: v for k, v in self._fixed(cols).items() if k in cols and (k not in ("host", "role")
                                                                         or k in self._host_columns(table))}
        checked = list(self._checked(table, cols, rows))
        n = self.store.insert_rows(table, checked, fixed)
        kept = self.added.setdefault(table, ([], fixed))
        if kept is not None:  # (the rows as given: the fixed columns are laid over them when the bounds ask)
            if len(kept[0]) + len(checked) <= ADDED_ROWS_KEPT:
                kept[0].extend(checked)
            else:
                self.added[table] = None
        self.tables.add(table)
        if table != FILE_TABLE:  # the row describing the file is not one of the rows it holds
            self.rows_loaded += n
        return n

    def _checked(self, table: str, cols: dict[str, str], rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Rows as the column types can hold them: an integer beyond the column's range (a damaged
        '99999999999' in a count) is a ParseError naming the file and line, never a DuckDB error inside
        the ingest transaction; a NaN or infinity (pgbench prints '-nan' for an empty run) is stored as
        NULL with a warning."""
        for row in rows:
            for k, v in row.items():
                if isinstance(v, bool) or v is None:
                    continue
                if isinstance(v, int):
                    limit = _INT_LIMITS.get(cols.get(k, ""))
                    if limit is not None and not -limit <= v < limit:
                        raise ParseError(self.path, row.get("line") or row.get("first_line"),
                                         f"a {k} that fits a {cols[k]} ({table})", str(v)[:40])
                elif isinstance(v, float) and not math.isfinite(v):
                    self.warn(row.get("line") or row.get("first_line"), f"{k} = {v} is not a number: stored as NULL")
                    row = {**row, k: None}
            yield row

    def added_rows(self, table: str) -> list[dict[str, Any]] | None:
        """Every row of ``table`` this file stored, when all of them came through ``add_rows`` (as stored,
        the file's fixed columns included); None otherwise."""
        kept = self.added.get(table)
        return None if kept is None else [{**row, **kept[1]} for row in kept[0]]

    def load_sql(self, table: str, select_sql: str, params: dict[str, Any] | None = None) -> int:
        self.added[table] = None
        all_params = {"source_id": self.source_id, "run_id": self.run_id, **(params or {})}
        if "$file_no" in select_sql:
            all_params["file_no"] = self._number()
        host_cols = self._host_columns(table)
        if host_cols:  # the file's host and role on every row, whatever the parser's SELECT names
            extra = ", ".join(f"$kansoku_{c}::VARCHAR AS {c}" for c in host_cols)
            select_sql = f"SELECT *, {extra} FROM ({select_sql})"
            all_params.update({f"kansoku_{c}": getattr(self, c) for c in host_cols})
        used = {k: v for k, v in all_params.items() if f"${k}" in select_sql}
        self.tables.add(table)
        n = self.store.con.execute(f"INSERT INTO {table} BY NAME {select_sql}", used).fetchone()[0]
        self.rows_loaded += n
        return n

    # -- the bulk path of big files (pgbench -l logs): DuckDB reads the file, the parser checks the rows
    # it loaded. Only this file's own rows are reachable, through these methods.

    def own_rows(self, table: str, select_sql: str, params: dict[str, Any] | None = None) -> list[tuple]:
        """Run ``select_sql`` where ``{rows}`` stands for this file's rows of ``table``."""
        key, own = self._own(table)
        sql = select_sql.replace("{rows}", f"(SELECT * FROM {table} WHERE {key} = $kansoku_own)")
        return self.store.con.execute(sql, _used(sql, {"source_id": self.source_id, "kansoku_own": own,
                                                       **(params or {})})).fetchall()

    def update_own_rows(self, table: str, set_sql: str, params: dict[str, Any] | None = None) -> None:
        """UPDATE this file's rows of ``table`` SET ``set_sql``."""
        self.added[table] = None
        key, own = self._own(table)
        sql = f"UPDATE {table} SET {set_sql} WHERE {key} = $kansoku_own"
        self.store.con.execute(sql, _used(sql, {"source_id": self.source_id, "kansoku_own": own, **(params or {})}))

    def delete_own_rows(self, table: str) -> int:
        """Delete this file's rows of ``table`` (a first, cheaper load that is not kept); how many."""
        self.added[table] = None
        key, own = self._own(table)
        n = self.store.con.execute(f"DELETE FROM {table} WHERE {key} = ?", [own]).fetchone()[0]
        self.rows_loaded -= n
        return n

    def delete_last_own_row(self, table: str, where_sql: str, params: list[Any]) -> int:
        """Delete the newest of this file's rows matching ``where_sql`` (positional ``?``): a cut last
        line a bulk reader took for a complete row. Returns 0 or 1."""
        self.added[table] = None
        con = self.store.con
        key, own = self._own(table)
        row = con.execute(f"SELECT max(rowid) FROM {table} WHERE {key} = ? AND {where_sql}",
                          [own, *params]).fetchone()
        if row[0] is None:
            return 0
        con.execute(f"DELETE FROM {table} WHERE rowid = ?", [row[0]])
        self.rows_loaded -= 1
        return 1

    def csv_rejects(self, reader_sql: str, params: dict[str, Any]) -> list[tuple[int, int, str, str]]:
        """Error path of a bulk load: read the file again with DuckDB's ``store_rejects`` (``reader_sql`` is
        a read_csv(..., store_rejects=true) call) and return (line, byte offset, text, message) of the lines
        it could not read. No query here may fail: an error would abort the ingest transaction."""
        con = self.store.con
        con.execute("SET enable_progress_bar = false")  # the re-read must print no bar on stdout

        def has_tables() -> bool:
            return con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name IN "
                               "('reject_scans', 'reject_errors')").fetchone()[0] == 2

        before = con.execute("SELECT coalesce(max(scan_id), -1) FROM reject_scans").fetchone()[0] \
            if has_tables() else -1
        con.execute(f"CREATE OR REPLACE TEMP TABLE kansoku_reject_probe AS SELECT * FROM {reader_sql}", params)
        con.execute("DROP TABLE kansoku_reject_probe")
        if not has_tables():
            return []
        rows = con.execute(
            "SELECT line, min(line_byte_position), any_value(csv_line), string_agg(DISTINCT error_message, '; ') "
            "FROM reject_errors WHERE scan_id > ? GROUP BY line ORDER BY line", [before]).fetchall()
        return [(int(r[0]), int(r[1]), r[2], r[3]) for r in rows]

    def warn(self, line: int | None, message: str) -> None:
        self.warnings.append(IngestWarning(line, message))

    def newline_count(self) -> int:
        """Newlines in the file: from the ingest's hashing pass when it ran one, else counted here."""
        if self.newlines is not None:
            return self.newlines()
        n = 0
        with open(self.path, "rb") as fh:
            while chunk := fh.read(1 << 23):
                n += chunk.count(b"\n")
        return n

    def fact(self, name: str, value: Any) -> None:
        self.facts[name] = value

    def set_tool_version(self, version: str | None) -> None:
        self.tool_version = version

    def add_run(self, run_id: str, factors: dict[str, str], *, citation: str | None = None,
                meta: dict[str, Any] | None = None) -> None:
        self.runs.append({"run_id": run_id, "factors": dict(factors), "citation": citation,
                          "meta": dict(meta or {})})
