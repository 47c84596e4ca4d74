"""Connection, locking, schema and the Sink parsers write into."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

import duckdb

from kansoku import parsers
from kansoku.errors import KansokuError, StoreBusyError
from kansoku.parsers.base import IngestWarning

DEFAULT_DB = Path("data/kansoku.duckdb")
SCHEMA_FILE = Path(__file__).with_name("schema.sql")
CORE_TABLES_WITH_SOURCE = ["ingest_warnings"]

_LOCK_RE = re.compile(r"(Could not set lock|Conflicting lock)", re.I)
_PID_RE = re.compile(r"PID (\d+)")


class Store:
    """An open kansoku database."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self.con = con
        self.path = path
        self.read_only = read_only
        self._columns: dict[str, dict[str, str]] = {}  # the schema is fixed while a store is open

    # -- schema -------------------------------------------------------------
    def ensure_schema(self) -> None:
        con = self.con
        con.execute(SCHEMA_FILE.read_text())
        for mod in parsers.modules():
            if mod.schema:
                con.execute(mod.schema)
        self.create_views()
        con.execute("DELETE FROM kansoku_meta WHERE key = 'schema_fingerprint'")
        con.execute("INSERT INTO kansoku_meta VALUES ('schema_fingerprint', ?)", [schema_fingerprint()])

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
        metric_selects = []
        for md in parsers.metrics().values():
            metric_selects.append(
                f"SELECT run_id, {sql_str(md.name)} AS metric, CAST(value AS DOUBLE) AS value, "
                f"{sql_str(md.unit)} AS unit FROM ({md.sql})"
            )
        for mod in parsers.modules():
            if mod.metrics_sql:  # metrics named by data (transcribed published values)
                metric_selects.append(
                    f"SELECT run_id, metric, CAST(value AS DOUBLE) AS value, unit FROM ({mod.metrics_sql})")
        if not metric_selects:
            metric_selects.append(
                "SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS metric, NULL::DOUBLE AS value, NULL::VARCHAR AS unit WHERE false"
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

    # -- reading: the analysis and report stages ask through these, never through ``con`` --

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Rows of a read-only query over the stored tables and views."""
        return self.con.execute(sql, list(params or [])).fetchall()

    def query_dicts(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name."""
        cur = self.con.execute(sql, list(params or []))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def schema_fingerprint() -> str:
    """Changes whenever a table, view or metric definition changes."""
    import hashlib

    h = hashlib.sha256(SCHEMA_FILE.read_bytes())
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
    store = Store(con, path, read_only)
    if not read_only:
        if not store.schema_is_current():  # the DDL is only re-run when a definition changed
            store.ensure_schema()
    elif not store.schema_is_current():
        # Made by an older kansoku: upgrade the schema and views (tables are only ever added), then reopen.
        con.close()
        open_store(path, read_only=False, wait_s=wait_s, on_wait=on_wait).close()
        return open_store(path, read_only=True, wait_s=wait_s, on_wait=on_wait)
    return store


@dataclass
class FileSink:
    """The Sink a parser writes one file into (see parsers.base.Sink)."""

    store: Store
    path: Path
    run_id: str | None
    source_id: str
    run_start: Any = None
    rows_loaded: int = 0
    warnings: list[IngestWarning] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    tool_version: str | None = None
    tables_touched: set[str] = field(default_factory=set)
    newlines: Any = None  # () -> int, when the ingest counts the file's newlines while hashing it
    runs: list[dict[str, Any]] = field(default_factory=list)  # runs the file declares (own_runs formats)

    def _fixed(self) -> dict[str, Any]:
        return {"source_id": self.source_id, "run_id": self.run_id}

    def add_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        cols = self.store.table_columns(table)
        fixed = {k: v for k, v in self._fixed().items() if k in cols}
        n = self.store.insert_rows(table, rows, fixed)
        self.rows_loaded += n
        self.tables_touched.add(table)
        return n

    def load_sql(self, table: str, select_sql: str, params: dict[str, Any] | None = None) -> int:
        all_params = {"source_id": self.source_id, "run_id": self.run_id, **(params or {})}
        used = {k: v for k, v in all_params.items() if f"${k}" in select_sql}
        n = self.store.con.execute(f"INSERT INTO {table} BY NAME {select_sql}", used).fetchone()[0]
        self.rows_loaded += n
        self.tables_touched.add(table)
        return n

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
