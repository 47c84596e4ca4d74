"""PostgreSQL server log: checkpoint and restartpoint lines, every wording from 8.3 to 18.

Real capture: tests/fixtures/postgres_log/.../server.log, a PostgreSQL 15.18 cluster started for the
purpose (log_checkpoints = on, checkpoint_timeout = 30s, max_wal_size = 32MB, log_timezone =
'Asia/Tokyo') serving a 75 s pgbench run. Other versions could not be run here: their 'complete' lines
are built inline from the server's message format strings (LogCheckpointEnd in xlog.c of each
version), one per wording, and each test says so.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conftest import FIXTURES, ROOT, RecordingSink, one_file_run, ro_con
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest
from kansoku.parsers.postgres_log import COMPLETE_VARIANTS, line_time, parse, parse_complete

PG_RUN_DIR = FIXTURES / "postgres_log" / "study=checkpoints" / "clients=2" / "rep=1"
PREFIX = "2026-11-23 11:06:31.370 JST [32644] LOG:  "

# One 'complete' message per wording (inline, from the format strings), with what it must give.
WORDINGS = [
    ("slru-lsn", "checkpoint complete: wrote 1810 buffers (22.1%), wrote 3 SLRU buffers; 0 WAL file(s) added, "
                 "0 removed, 2 recycled; write=2.401 s, sync=0.101 s, total=2.541 s; sync files=12, longest=0.050 s, "
                 "average=0.008 s; distance=32768 kB, estimate=32768 kB; lsn=0/5A000098, redo lsn=0/59000028",
     {"slru_buffers_written": 3, "lsn": "0/5A000098", "redo_lsn": "0/59000028", "distance_kb": 32768}),
    ("lsn", "checkpoint complete: wrote 1810 buffers (22.1%); 0 WAL file(s) added, 0 removed, 2 recycled; "
            "write=2.401 s, sync=0.101 s, total=2.541 s; sync files=12, longest=0.050 s, average=0.008 s; "
            "distance=32768 kB, estimate=32768 kB; lsn=0/5A000098, redo lsn=0/59000028",
     {"slru_buffers_written": None, "lsn": "0/5A000098", "wal_files_recycled": 2}),
    ("wal", "checkpoint complete: wrote 1071 buffers (13.1%); 0 WAL file(s) added, 1 removed, 1 recycled; "
            "write=0.238 s, sync=0.078 s, total=0.376 s; sync files=38, longest=0.010 s, average=0.003 s; "
            "distance=24048 kB, estimate=26259 kB",  # the real 15.18 line of the fixture
     {"buffers_written": 1071, "buffers_pct": 13.1, "wal_files_removed": 1, "write_s": 0.238, "sync_s": 0.078,
      "total_s": 0.376, "sync_files": 38, "sync_longest_s": 0.010, "estimate_kb": 26259, "lsn": None}),
    ("xlog-distance", "checkpoint complete: wrote 52 buffers (0.3%); 0 transaction log file(s) added, 0 removed, "
                      "1 recycled; write=5.112 s, sync=0.021 s, total=5.150 s; sync files=9, longest=0.011 s, "
                      "average=0.002 s; distance=16384 kB, estimate=16384 kB",
     {"wal_files_recycled": 1, "distance_kb": 16384, "total_s": 5.150}),
    ("xlog-sync-files", "checkpoint complete: wrote 5 buffers (0.0%); 0 transaction log file(s) added, 0 removed, "
                        "0 recycled; write=0.401 s, sync=0.002 s, total=0.410 s; sync files=3, longest=0.001 s, "
                        "average=0.000 s",
     {"sync_files": 3, "distance_kb": None}),
    ("xlog", "checkpoint complete: wrote 120 buffers (2.9%); 0 transaction log file(s) added, 0 removed, "
             "3 recycled; write=23.962 s, sync=0.352 s, total=24.405 s",
     {"buffers_written": 120, "wal_files_recycled": 3, "sync_files": None}),
    ("restartpoint-8.4", "restartpoint complete: wrote 40 buffers (1.0%); write=7.891 s, sync=0.015 s, total=7.911 s",
     {"buffers_written": 40, "wal_files_added": None, "total_s": 7.911}),
]


def test_every_wording_in_the_table_is_covered():
    assert [w[0] for w in WORDINGS] == [v[0] for v in COMPLETE_VARIANTS]


@pytest.mark.parametrize("variant, msg, expect", WORDINGS, ids=[w[0] for w in WORDINGS])
def test_checkpoint_complete_wording_of_each_variant_reads_its_values(variant, msg, expect):
    got = parse_complete(msg)
    assert got is not None and got[0] == variant
    values = got[1]
    for col, want in expect.items():
        assert values.get(col) == want, col


def test_unknown_wording_is_not_guessed():
    assert parse_complete("checkpoint complete: wrote 10 buffers (0.1%); something new=1") is None


@pytest.mark.parametrize("prefix, expect", [
    ("2026-11-23 11:06:31.370 JST [1] ", datetime(2026, 11, 23, 2, 6, 31, 370000, tzinfo=timezone.utc)),
    ("2026-11-23 02:06:31 UTC [1] ", datetime(2026, 11, 23, 2, 6, 31, tzinfo=timezone.utc)),
    ("2026-11-23 10:06:31.5 +08 ", datetime(2026, 11, 23, 2, 6, 31, 500000, tzinfo=timezone.utc)),
    ("2026-11-22 21:06:31.000 EST ", datetime(2026, 11, 23, 2, 6, 31, tzinfo=timezone.utc)),
    ("1795399591.370 [1] ", datetime(2026, 11, 23, 2, 6, 31, 370000, tzinfo=timezone.utc)),
])
def test_log_line_prefix_times_read_to_utc_instants(prefix, expect):
    ts, why = line_time(prefix)
    assert why is None and ts == expect


def test_ambiguous_zone_and_missing_time_are_said_not_guessed():
    for prefix, says in (("2026-11-23 11:06:31.370 CST [1] ", "log_timezone"), ("[32644] ", "log_line_prefix")):
        ts, why = line_time(prefix)
        assert ts is None and says in why


def test_real_postgresql_15_log_stores_its_checkpoints(tmp_db):
    report = ingest([PG_RUN_DIR], tmp_db)
    assert report.ok
    assert {f.format for f in report.files if f.path.endswith("server.log")} == {"postgres-log"}
    con = ro_con(tmp_db)
    try:
        rows = con.execute("SELECT kind, reason, start_ts, end_ts, buffers_written, buffers_pct, write_s, sync_s, "
                           "total_s, distance_kb, variant, start_line, end_line FROM pg_checkpoints "
                           "ORDER BY start_line").fetchall()
        version = con.execute("SELECT tool_version FROM sources WHERE format = 'postgres-log'").fetchone()[0]
        warnings = con.execute("SELECT count(*) FROM ingest_warnings").fetchone()[0]
    finally:
        con.close()
    assert len(rows) == 21 and version == "15.18" and warnings == 0
    assert {r[0] for r in rows} == {"checkpoint"} and {r[10] for r in rows} == {"wal"}
    assert [r[1] for r in rows].count("wal") == 19
    assert rows[3][1] == "immediate force wait" and rows[-1][1] == "shutdown immediate"
    # line 7/8 of the log: '2026-11-23 11:06:18.589 JST ... checkpoint starting: wal', then
    # '... 11:06:19.281 JST ... complete: wrote 35 buffers (0.4%); ... write=0.533 s, sync=0.132 s, total=0.692 s'
    first = rows[0]
    assert first[2] == datetime(2026, 11, 23, 2, 6, 18, 589000, tzinfo=timezone.utc)
    assert first[3] == datetime(2026, 11, 23, 2, 6, 19, 281000, tzinfo=timezone.utc)
    assert first[4:10] == (35, 0.4, 0.533, 0.132, 0.692, 11725) and first[11:] == (7, 8)
    for r in rows:  # the logged total agrees with the two lines' times
        assert (r[3] - r[2]).total_seconds() == pytest.approx(r[8], abs=0.01)


def test_cut_log_unknown_wording_and_restartpoints(tmp_path, tmp_db):
    real = (PG_RUN_DIR / "server.log").read_text().splitlines()
    lines = real[:8] + [
        PREFIX + "checkpoint complete: wrote 9 buffers (0.1%); a wording from the future",
        "2026-11-23 11:07:00.000 JST [700] LOG:  restartpoint starting: time",
        "2026-11-23 11:07:05.000 JST [700] LOG:  restartpoint complete: wrote 40 buffers (1.0%); "
        "write=4.990 s, sync=0.005 s, total=5.000 s",
        "2026-11-23 11:07:06.000 JST [700] LOG:  checkpoint starting: time",
    ]
    d = one_file_run(tmp_path, "server.log", "\n".join(lines) + "\n")
    report = ingest([d], tmp_db)
    assert report.ok
    con = ro_con(tmp_db)
    try:
        rows = con.execute("SELECT kind, reason, end_ts IS NULL, total_s FROM pg_checkpoints ORDER BY start_line").fetchall()
        warnings = con.execute("SELECT line, message FROM ingest_warnings").fetchall()
    finally:
        con.close()
    assert rows == [("checkpoint", "wal", False, 0.692), ("restartpoint", "time", False, 5.0),
                    ("checkpoint", "time", True, None)]
    assert len(warnings) == 1 and warnings[0][0] == 9 and "unknown wording" in warnings[0][1]


def test_recognised_by_content_only():
    assert detect(PG_RUN_DIR / "server.log").format.name == "postgres-log"
    assert detect(PG_RUN_DIR / "pgbench.log").format.name == "pgbench-stdout"
    # the example's setup transcript mentions the server but is not its log
    assert detect(ROOT / "data" / "runs" / "example" / ".setup" / "server.log").format is None


def test_no_time_in_prefix_warns_once():
    sink = RecordingSink(PG_RUN_DIR / "server.log")
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "postgresql.log"
        p.write_text("LOG:  checkpoint starting: time\nLOG:  checkpoint complete: wrote 3 buffers (0.0%); "
                     "0 WAL file(s) added, 0 removed, 0 recycled; write=0.301 s, sync=0.001 s, total=0.310 s; "
                     "sync files=2, longest=0.001 s, average=0.001 s; distance=1 kB, estimate=1 kB\n"
                     "LOG:  checkpoint starting: time\n")
        parse(p, sink)
    rows = sink.rows["pg_checkpoints"]
    assert [(r["reason"], r["start_ts"], r.get("buffers_written")) for r in rows] == [("time", None, 3), ("time", None, None)]
    assert len(sink.warnings) == 1 and "log_line_prefix" in sink.warnings[0][1]


FORMATS = FIXTURES / "postgres_log" / "formats"


def test_stderr_csvlog_and_jsonlog_of_one_server_agree():
    """Real: one PostgreSQL 15.18 server logging to stderr, csvlog and jsonlog at once (logging_collector,
    log_timezone = 'UTC'), two CHECKPOINT commands and WAL-triggered checkpoints, then a fast shutdown."""
    from kansoku.parsers.postgres_log import parse_csv, parse_json

    got = {}
    for name, fn, fmt in (("postgresql.log", parse, "postgres-log"), ("postgresql.csv", parse_csv, "postgres-csvlog"),
                          ("postgresql.json", parse_json, "postgres-jsonlog")):
        path = FORMATS / name
        assert detect(path).format.name == fmt
        sink = RecordingSink(path)
        fn(path, sink)
        assert sink.warnings == []
        got[fmt] = [{k: v for k, v in r.items() if not k.endswith("_line")} for r in sink.rows["pg_checkpoints"]]
    assert got["postgres-log"] == got["postgres-csvlog"] == got["postgres-jsonlog"]
    rows = got["postgres-log"]
    assert len(rows) == 6 and rows[0]["reason"] == "wal" and rows[0]["buffers_written"] == 905
    assert rows[0]["start_ts"] == datetime(2026, 11, 23, 2, 32, 46, 862000, tzinfo=timezone.utc)
    assert [r["reason"] for r in rows].count("immediate force wait") == 2 and rows[-1]["reason"] == "shutdown immediate"


def test_other_csv_and_json_files_are_not_server_logs():
    assert detect(PG_RUN_DIR / "pg_settings.csv").format is None or \
        detect(PG_RUN_DIR / "pg_settings.csv").format.name != "postgres-csvlog"
    fio_json = next((FIXTURES / "fio").rglob("*.json"), None)
    if fio_json is not None:
        assert detect(fio_json).format.name != "postgres-jsonlog"
