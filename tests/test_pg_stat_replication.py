"""pg_stat_replication snapshots (parsers/pg_stat_replication.py): real files of the example's replication
study (tests/fixtures/pg_stat_replication, README there), the metrics, and bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES, one_file_run, ro_con
from kansoku.ingest.pipeline import ingest

REAL = FIXTURES / "pg_stat_replication"
HEADER = (REAL / "pattern=none" / "pg_stat_replication.before.csv").read_text()


def test_real_snapshots_of_a_primary_with_a_sync_and_an_async_standby(tmp_db):
    rep = ingest([REAL], tmp_db)
    assert rep.ok and rep.committed, rep.errors
    formats = {Path(f.path).name: f.format for f in rep.files if "pattern=mixed" in f.path}
    assert formats["pg_stat_replication.series.csv"] == "pg-stat-replication-csv"
    assert formats["pg_stat_replication.before.csv"] == "pg-stat-replication-csv"
    con = ro_con(tmp_db)
    rows = con.execute("SELECT moment, application_name, state, sync_state, sync_priority FROM pg_replication_snapshot "
                       "ORDER BY snapshot_at, application_name").fetchall()
    assert [r[0] for r in rows] == ["before", "before", "at", "at", "at", "at", "after", "after"]
    assert {r[1:] for r in rows} == {("s1", "streaming", "sync", 1), ("s2", "streaming", "async", 0)}
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE run_id LIKE '%mixed%' "
                         "AND metric LIKE 'replication%'").fetchall())
    assert m["replication_standbys"] == 2 and m["replication_sync_standbys"] == 1
    # the mean over the two snapshots taken during the run of the larger of the two standbys' lags
    lags = con.execute("SELECT snapshot_at, max(replay_lag_s) FROM pg_replication_snapshot WHERE moment = 'at' "
                       "GROUP BY 1").fetchall()
    assert len(lags) == 2
    assert abs(m["replication_replay_lag_ms"] - 1000 * sum(v for _, v in lags) / 2) < 1e-9
    # no standby: header-only files are no error and give no rows
    assert con.execute("SELECT count(*) FROM pg_replication_snapshot WHERE run_id LIKE '%none%'").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM sources WHERE run_id LIKE '%none%' AND format = "
                       "'pg-stat-replication-csv'").fetchone()[0] == 2


def test_a_damaged_lag_names_file_and_line(tmp_path, tmp_db):
    text = (REAL / "pattern=mixed-1s1a" / "pg_stat_replication.series.csv").read_text().splitlines()
    cells = text[2].split(",")
    cells[-1] = "0.00x1"
    text[2] = ",".join(cells)
    shutil.copy(REAL / "pattern=mixed-1s1a" / "pgbench.log", tmp_path / "pgbench.log")
    run = one_file_run(tmp_path, "pg_stat_replication.series.csv", "\n".join(text) + "\n")
    shutil.copy(tmp_path / "pgbench.log", run / "pgbench.log")
    rep = ingest([run], tmp_db)
    assert not rep.ok
    msg = " ".join(str(e) for e in rep.errors)
    assert "pg_stat_replication.series.csv:3" in msg and "replay_lag_s" in msg


def test_pg_stat_files_and_replication_files_are_told_apart():
    from kansoku.ingest.detect import detect

    rep = detect(REAL / "pattern=mixed-1s1a" / "pg_stat_replication.after.csv")
    assert rep.format is not None and rep.format.name == "pg-stat-replication-csv"
    other = next((FIXTURES / "pg_stat").rglob("pg_stat_bgwriter*.csv"))
    assert detect(other).format.name == "pg-stat-csv"
