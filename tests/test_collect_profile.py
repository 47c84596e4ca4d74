"""tools/collect with a CPU profile and a query study against a real PostgreSQL: perf record -g on
the postmaster's processes, perf script | gzip in the run, ingested by content; the query runner's failures;
perf errors stop the run before anything is measured. Skipped without PostgreSQL server binaries or perf."""

from __future__ import annotations

import shutil
import subprocess

import duckdb
import pytest

from kansoku.collect.profile import ProfileError, probe
from test_collect_integration import _as_pg, _pg_bindir, _skip_reason, server  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(_skip_reason() is not None or shutil.which("perf") is None,
                                reason=_skip_reason() or "perf not installed (apt-get install linux-perf)")


def _perf_can_record() -> bool:
    try:
        probe(None, 99)
        return True
    except ProfileError:
        return False


def _conninfo(server) -> str:  # noqa: F811 (the fixture's value)
    return f"host=127.0.0.1 port={server['port']} user=postgres dbname=bench"


@pytest.mark.skipif(not _perf_can_record(), reason="perf cannot record here (perf_event_paranoid, container)")
def test_a_profiled_pgbench_run(server, tmp_path, tool):  # noqa: F811
    port = server["port"]
    subprocess.run(["pgbench", "-i", "-q", "-s", "1", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "bench"],
                   check=True, capture_output=True)
    pidfile = server["data"] / "postmaster.pid"
    proc = tool("collect", "--root", tmp_path / "runs", "--no-monitors", "--settle", "0.2", "--perf-pidfile", pidfile,
                "--perf-frequency", "199", "clients=2", "--", "pgbench", "-n", "-c", "2", "-j", "1", "-T", "2",
                "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-b", "simple-update", "bench")
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "runs" / "clients=2"
    assert (run / "perf-script.txt.gz").stat().st_size > 0 and not (run / "perf.data").exists()
    toml = (run / "run.toml").read_text()
    assert "perf_record = \"perf record -g -F 199 -e " in toml and "perf_stop_signal = \"INT\"" in toml
    assert 'perf = "perf version' in toml
    db = tmp_path / "k.duckdb"
    proc = tool("ingest", "-v", "--db", db, tmp_path / "runs")
    assert proc.returncode == 0, proc.stderr
    assert "read as perf-script" in proc.stdout + proc.stderr
    con = duckdb.connect(str(db), read_only=True)
    samples, procs = con.execute("SELECT samples, (SELECT list(DISTINCT process) FROM profile_stacks) "
                                 "FROM profile_runs").fetchone()
    assert samples > 0 and procs == ["postgres"]  # the postmaster's processes only


def test_perf_errors_stop_the_run_before_it_starts(server, tmp_path, tool):  # noqa: F811
    proc = tool("collect", "--root", tmp_path / "runs", "--no-monitors", "--perf-system-wide", "--perf-event",
                "no-such-event", "x=1", "--", "true")
    assert proc.returncode == 2 and "perf cannot record on this machine (event no-such-event)" in proc.stderr
    assert "perf_event_paranoid" in proc.stderr and not (tmp_path / "runs").exists()
    proc = tool("collect", "--root", tmp_path / "runs", "--no-monitors", "--perf-pid", "999999999", "x=1", "--", "true")
    assert proc.returncode == 2 and "no process 999999999" in proc.stderr, proc.stderr


def test_a_query_list_that_fails_on_the_server_marks_the_run_failed(server, tmp_path, tool):  # noqa: F811
    q = tmp_path / "q.sql"
    q.write_text("-- query: one\nSELECT 1;\n-- query: missing\nSELECT * FROM no_such_table;\n")
    proc = tool("collect", "--root", tmp_path / "runs", "--no-monitors", "--settle", "0", "w=0", "--", "python3",
                str(tool.__globals__["ROOT"] / "tools" / "collect"), "queries", "--conninfo", _conninfo(server),
                "--repeat", "2", str(q))
    assert proc.returncode == 3, proc.stderr
    run = tmp_path / "runs" / "w=0"
    assert 'status = "failed"' in (run / "run.toml").read_text()
    assert "psql:queries.sql:4: ERROR:  relation \"no_such_table\" does not exist" in \
        (run / "queries-timing.txt").read_text()
    db = tmp_path / "k.duckdb"
    tool("ingest", "--db", db, tmp_path / "runs")
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT query, mode, status, elapsed_ms IS NULL FROM query_statements "
                       "ORDER BY query, mode, repetition").fetchall()
    assert rows == [("missing", "explain", "failed", True)] * 2 + [("missing", "timing", "failed", True)] * 2 + \
        [("one", "explain", "ok", False)] * 2 + [("one", "timing", "ok", False)] * 2
