"""The standbys of a primary: ``psql --csv`` of ``pg_stat_replication`` as tools/collect selects it
(``pg_stat_replication.before.csv``, ``.series.csv``, ``.after.csv``; collect/run.py ``REPLICATION_VIEW``,
docs/collect.md), so that a replication study (FY2017 chapter 8: TPS against 0–3 synchronous and asynchronous
standbys) can show how far behind its standbys were beside its TPS.

One row per standby and snapshot: who (``application_name``, ``client_addr``), its ``state`` and ``sync_state``,
its lags in seconds (``write_lag_s``, ``flush_lag_s``, ``replay_lag_s``: PostgreSQL's own ``write_lag`` …
intervals, NULL when the standby has caught up and nothing is being written) and in bytes of WAL behind the
primary's current position (``sent_lag_bytes`` … ``replay_lag_bytes``). A file with a header and no row is a
snapshot taken with no standby connected: nothing to store, and no error. The file belongs to the host whose
PostgreSQL is the primary (its run directory or ``host=<name>/``).
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.numbers import to_float

SCHEMA = """
-- One row per (snapshot, standby) of the primary's pg_stat_replication (tools/collect --pg-stat-replication).
CREATE TABLE IF NOT EXISTS pg_replication_snapshot (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    snapshot_at TIMESTAMPTZ NOT NULL, -- when the snapshot was taken (the primary's now())
    moment VARCHAR NOT NULL,          -- 'before' | 'after' | 'at' (a series taken during the run)
    application_name VARCHAR,         -- the standby's application_name (primary_conninfo)
    client_addr VARCHAR,
    state VARCHAR,                    -- startup | catchup | streaming | backup | stopping
    sync_state VARCHAR,               -- async | potential | sync | quorum
    sync_priority INTEGER,
    sent_lag_bytes DOUBLE,            -- WAL bytes between the primary's current position and what was sent
    write_lag_bytes DOUBLE,           -- ... and what the standby wrote
    flush_lag_bytes DOUBLE,           -- ... flushed
    replay_lag_bytes DOUBLE,          -- ... replayed
    write_lag_s DOUBLE,               -- PostgreSQL's write_lag in seconds (NULL: caught up, idle)
    flush_lag_s DOUBLE,
    replay_lag_s DOUBLE,
    line INTEGER                      -- line in the file
);
"""

REQUIRED = ("snapshot_at", "application_name", "state", "sync_state", "replay_lag_s", "replay_lag_bytes")
NUMBERS = ("sent_lag_bytes", "write_lag_bytes", "flush_lag_bytes", "replay_lag_bytes", "write_lag_s",
           "flush_lag_s", "replay_lag_s")


def _per_run(expr: str, unit_factor: str = "") -> str:
    """Per run: the mean, over the snapshots taken during the run, of the largest value among the standbys."""
    return ("SELECT run_id, avg(v)" + unit_factor + " AS value FROM (SELECT run_id, snapshot_at, max(" + expr +
            ") AS v FROM pg_replication_snapshot WHERE moment = 'at' GROUP BY run_id, snapshot_at) "
            "WHERE v IS NOT NULL GROUP BY run_id")


METRICS = [
    MetricDef("replication_standbys",
              "SELECT run_id, max(n) AS value FROM (SELECT run_id, snapshot_at, count(*) FILTER (WHERE state = "
              "'streaming') AS n FROM pg_replication_snapshot GROUP BY run_id, snapshot_at) GROUP BY run_id",
              "count", None),
    MetricDef("replication_sync_standbys",
              "SELECT run_id, max(n) AS value FROM (SELECT run_id, snapshot_at, count(*) FILTER (WHERE sync_state "
              "IN ('sync', 'quorum')) AS n FROM pg_replication_snapshot GROUP BY run_id, snapshot_at) GROUP BY run_id",
              "count", None),
    MetricDef("replication_write_lag_ms", _per_run("write_lag_s", " * 1000"), "ms", False),
    MetricDef("replication_flush_lag_ms", _per_run("flush_lag_s", " * 1000"), "ms", False),
    MetricDef("replication_replay_lag_ms", _per_run("replay_lag_s", " * 1000"), "ms", False),
    MetricDef("replication_replay_lag_bytes", _per_run("replay_lag_bytes"), "bytes", False),
]


def sniff(head: FileHead) -> bool:
    cols = textfile.csv_header(head)
    return cols is not None and cols[:1] == ["snapshot_at"] and all(c in cols for c in REQUIRED)


def parse(path: Path, sink: Sink) -> None:
    rows = textfile.read_csv_rows(path, "psql --csv output of pg_stat_replication")
    if not rows or any(c not in rows[0] for c in REQUIRED):
        raise ParseError(path, 1, "the header of tools/collect's pg_stat_replication query ("
                         + ", ".join(REQUIRED) + ", …)", ",".join(rows[0])[:80] if rows else "an empty file")
    cols = rows[0]
    name = path.name.lower()
    moment = "before" if ".before." in name else "after" if ".after." in name else "at"
    out = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or row == [""]:
            continue
        if len(row) != len(cols):
            raise ParseError(path, lineno, f"{len(cols)} CSV fields as in the header", ",".join(row)[:80])
        cells = dict(zip(cols, row))
        try:
            at = datetime.fromisoformat(cells["snapshot_at"].replace(" ", "T", 1))
        except ValueError:
            raise ParseError(path, lineno, "an ISO time in snapshot_at", cells["snapshot_at"]) from None
        if at.tzinfo is None:
            raise ParseError(path, lineno, "snapshot_at with its UTC offset (a timestamptz)", cells["snapshot_at"])
        rec = {"snapshot_at": at, "moment": moment, "line": lineno,
               "application_name": cells.get("application_name") or None,
               "client_addr": cells.get("client_addr") or None, "state": cells.get("state") or None,
               "sync_state": cells.get("sync_state") or None}
        prio = cells.get("sync_priority", "")
        if prio:
            if not (prio.isascii() and prio.lstrip("-").isdigit()):  # (isdigit alone takes "１２")
                raise ParseError(path, lineno, "an integer sync_priority", prio)
            rec["sync_priority"] = int(prio)
        for c in NUMBERS:
            v = cells.get(c, "")
            if v == "":
                rec[c] = None
                continue
            try:
                x = to_float(v)
            except ValueError:
                raise ParseError(path, lineno, f"a number in column {c!r}", v) from None
            if not math.isfinite(x):
                raise ParseError(path, lineno, f"a finite number in column {c!r}", v)
            rec[c] = x
        out.append(rec)
    if out:
        sink.add_rows("pg_replication_snapshot", out)


MODULE = ParserModule(
    name="pg_stat_replication",
    formats=[Format("postgres", "pg-stat-replication-csv", "psql --csv of the primary's pg_stat_replication as "
                    "tools/collect selects it (one row per standby and snapshot, lags in seconds and bytes)",
                    sniff, parse, priority=9)],
    schema=SCHEMA,
    tables=["pg_replication_snapshot"],
    metrics=METRICS,
)
