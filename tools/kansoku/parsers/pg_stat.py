"""PostgreSQL statistics snapshots: ``psql --csv`` of ``pg_stat_bgwriter`` (PostgreSQL 8.3-16),
``pg_stat_checkpointer`` (17+), ``pg_stat_wal`` (14+), ``pg_stat_database`` taken before and after a run
(docs/formats.md §8), so a report can show checkpoints, buffers written and WAL per transaction beside TPS.

Which view a file holds is told by its header (table ``VIEWS_BY_COLUMNS``). When a snapshot was taken comes
from a ``snapshot_at`` column (``tools/collect`` selects ``now() AS snapshot_at, *``); a file without it is
placed by the word ``before``/``after`` in its name, with a warning. A file may hold several snapshots, one
row each: ``tools/collect`` writes ``<view>.series.csv`` with the checkpointer's counters every few seconds
during the run (collect/pg_stat_series.py), from which store/events.sql places checkpoints on the run's time
axis (``run_stat_checkpoints``). Per run, what each counter rose by from the first to the last snapshot is
the run's figure (``pg_stat_delta``; a reset in between is counted from zero).
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

from kansoku.errors import ParseError, UnusableFile
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import EARLIEST, LATEST, Bound, TableBounds
from kansoku.parsers.numbers import to_float

SCHEMA = """
-- One row per (snapshot, object, counter) of a PostgreSQL statistics view.
CREATE TABLE IF NOT EXISTS pg_stat_snapshot (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    view VARCHAR NOT NULL,          -- 'pg_stat_bgwriter' | 'pg_stat_checkpointer' | 'pg_stat_wal' | 'pg_stat_database'
    snapshot_at TIMESTAMPTZ,        -- when the snapshot was taken (snapshot_at column), NULL when only the name says
    moment VARCHAR NOT NULL,        -- 'before' | 'after' | 'at' (a time, no word in the name)
    object VARCHAR,                 -- datname for pg_stat_database, NULL for the cluster-wide views
    counter VARCHAR NOT NULL,       -- the view's column name as printed
    value DOUBLE,
    line INTEGER                    -- line in the file
);
"""

# view -> columns that only it has (first match wins).
VIEWS_BY_COLUMNS = [
    ("pg_stat_checkpointer", {"num_timed", "num_requested", "buffers_written"}),
    ("pg_stat_bgwriter", {"checkpoints_timed", "checkpoints_req", "buffers_checkpoint"}),
    ("pg_stat_bgwriter", {"buffers_clean", "maxwritten_clean", "buffers_alloc"}),  # 17+: bgwriter only
    ("pg_stat_wal", {"wal_records", "wal_fpi", "wal_bytes"}),
    ("pg_stat_database", {"datname", "xact_commit", "blks_hit"}),
]
TEXT_COLUMNS = {"snapshot_at", "stats_reset", "datname", "checksum_last_failure", "datid"}

VIEWS = """
-- Per run, view, object and counter: what the counter rose by from the first snapshot to the last (the run's
-- own activity). Snapshots in order: before, those without a word in their file name (a series taken during
-- the run), after; by time within each. A counter that went down between two snapshots was reset (stats_reset)
-- and counts from zero again: that step adds its new value (as a monitoring system's counter increase does).
CREATE OR REPLACE VIEW pg_stat_delta AS
WITH o AS (
  SELECT run_id, host, role, view, object, counter, value,
         CASE moment WHEN 'before' THEN 0 WHEN 'at' THEN 1 ELSE 2 END AS m_rank, snapshot_at
  FROM pg_stat_snapshot
), steps AS (
  SELECT run_id, host, role, view, object, counter, value,
         lag(value) OVER (PARTITION BY run_id, host, role, view, object, counter
                          ORDER BY m_rank, snapshot_at NULLS FIRST, value) AS prev
  FROM o
)
SELECT run_id, host, role, view, object, counter,
       sum(CASE WHEN prev IS NULL THEN 0 WHEN value >= prev THEN value - prev ELSE value END) AS delta,
       count(*) AS snapshots
FROM steps GROUP BY ALL HAVING count(*) >= 2;
"""


def _delta(counters: str, view: str) -> str:
    return (f"SELECT run_id, host, role, sum(delta) AS value FROM pg_stat_delta WHERE view = '{view}' "
            f"AND counter IN ({counters}) GROUP BY run_id, host, role")


METRICS = [
    MetricDef("pg_checkpoints", "SELECT run_id, host, role, sum(value) AS value FROM (" +
              _delta("'checkpoints_timed', 'checkpoints_req'", "pg_stat_bgwriter") + " UNION ALL " +
              _delta("'num_timed', 'num_requested'", "pg_stat_checkpointer") + ") GROUP BY run_id, host, role",
              "count", None, per_host=True),
    MetricDef("pg_buffers_checkpoint", "SELECT run_id, host, role, sum(value) AS value FROM (" +
              _delta("'buffers_checkpoint'", "pg_stat_bgwriter") + " UNION ALL " +
              _delta("'buffers_written'", "pg_stat_checkpointer") + ") GROUP BY run_id, host, role",
              "buffers", None, per_host=True),
    MetricDef("pg_wal_bytes", _delta("'wal_bytes'", "pg_stat_wal"), "bytes", None, per_host=True),
    MetricDef("pg_wal_bytes_per_tx",
              "SELECT w.run_id, w.host, w.role, w.value / nullif(s.transactions_processed, 0) AS value FROM ("
              + _delta("'wal_bytes'", "pg_stat_wal") + ") w JOIN pgbench_summary s ON s.run_id = w.run_id "
              "WHERE s.status = 'ok'", "bytes", False, per_host=True),
]


def view_of(cols: list[str]) -> str | None:
    have = set(cols)
    for view, sig in VIEWS_BY_COLUMNS:
        if sig <= have:
            return view
    return None


def sniff_pg_stat(head: FileHead) -> bool:
    cols = textfile.csv_header(head)
    return cols is not None and view_of(cols) is not None


def parse_pg_stat(path: Path, sink: Sink) -> None:
    rows = textfile.read_csv_rows(path, "psql --csv output of a pg_stat view")
    if not rows:
        raise ParseError(path, None, "a header line", "an empty file")
    cols = rows[0]
    view = view_of(cols)
    if view is None:
        raise ParseError(path, 1, "the columns of pg_stat_bgwriter, pg_stat_checkpointer, pg_stat_wal or "
                         "pg_stat_database", ",".join(cols)[:80])
    name = path.name.lower()
    word = "before" if "before" in name else "after" if "after" in name else None
    if "snapshot_at" not in cols:
        if word is None:
            raise UnusableFile(path, 1, "a snapshot_at column (SELECT now() AS snapshot_at, * FROM ...) or "
                             "'before'/'after' in the file name, to tell when the snapshot was taken",
                             ",".join(cols[:3]))
        sink.warn(None, f"no snapshot_at column: taken as the {word} snapshot from the file name")
    out = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or row == [""]:
            continue
        if len(row) != len(cols):
            raise ParseError(path, lineno, f"{len(cols)} CSV fields as in the header", ",".join(row)[:80])
        cells = dict(zip(cols, row))
        at = None
        if "snapshot_at" in cells:
            try:
                at = datetime.fromisoformat(cells["snapshot_at"].replace(" ", "T", 1))
            except ValueError:
                raise ParseError(path, lineno, "an ISO time in snapshot_at", cells["snapshot_at"]) from None
            if at.tzinfo is None:
                raise ParseError(path, lineno, "snapshot_at with its UTC offset (a timestamptz)", cells["snapshot_at"])
        for c, v in cells.items():
            if c in TEXT_COLUMNS or v == "":
                continue
            try:
                x = to_float(v)
            except ValueError:
                raise ParseError(path, lineno, f"a number in column {c!r}", v) from None
            if not math.isfinite(x) or x < 0:
                raise ParseError(path, lineno, f"a finite non-negative counter in column {c!r}", v)
            out.append({"view": view, "snapshot_at": at, "moment": word or "at", "object": cells.get("datname"),
                        "counter": c, "value": x, "line": lineno})
    if not out:
        raise ParseError(path, max(1, len(rows)), "at least one snapshot row", "the end of the file, with none")
    sink.add_rows("pg_stat_snapshot", out)


# What psql prints of a statistics view (parsers/bounds.py): a snapshot taken by a real clock (an epoch of 0,
# 1970, is a clock never set), counters and times that are finite numbers.
BOUNDS = [
    TableBounds("pg_stat_snapshot", bounds=(
        Bound("snapshot_at", EARLIEST, LATEST, "the time a snapshot was taken"),
        Bound("value", 0, None, "a counter or a time"),
    )),
]

MODULE = ParserModule(
    name="pg_stat",
    bounds=BOUNDS,
    formats=[Format("postgres", "pg-stat-csv", "psql --csv of pg_stat_bgwriter / pg_stat_checkpointer / "
                    "pg_stat_wal / pg_stat_database (snapshots before and after a run)", sniff_pg_stat,
                    parse_pg_stat, priority=8)],
    schema=SCHEMA,
    views=VIEWS,
    tables=["pg_stat_snapshot"],
    metrics=METRICS,
    host_columns={"pg_stat_snapshot": ("host", "role")},
)
