"""tools/collect --server-log: the part of the server log written during a run lands in the run
directory, and ingest reads its checkpoints. The 'server' here is a shell command appending lines of
the real PostgreSQL 15 log (tests/fixtures/postgres_log) to a log that already holds earlier lines."""

from __future__ import annotations

import shlex
import tomllib

from conftest import FIXTURES, ro_con
from kansoku.ingest.pipeline import ingest

REAL_LOG = FIXTURES / "postgres_log" / "study=checkpoints" / "clients=2" / "rep=1" / "server.log"


def test_only_the_runs_part_of_the_log_is_kept(tool, tmp_path):
    lines = REAL_LOG.read_text().splitlines(keepends=True)
    before, during = "".join(lines[:12]), "".join(lines[12:24])  # 2 checkpoints before the run, 3 during
    log = tmp_path / "pg" / "server.log"
    log.parent.mkdir()
    log.write_text(before)
    chunk = tmp_path / "during.txt"
    chunk.write_text(during)
    cmd = f"cat {shlex.quote(str(chunk))} >> {shlex.quote(str(log))}"
    proc = tool("collect", "--root", tmp_path / "runs", "--no-monitors", "--settle", "0", "--server-log", log,
                "study=ckpt", "rep=1", "--", "sh", "-c", cmd)
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "runs" / "study=ckpt" / "rep=1"
    assert (run_dir / "server.log").read_text() == during
    meta = tomllib.loads((run_dir / "run.toml").read_text())
    assert meta["commands"]["server_log"] == str(log) and meta["commands"]["server_log_bytes"] == len(during.encode())
    report = ingest([tmp_path / "runs"], tmp_path / "k.duckdb")
    assert report.ok
    con = ro_con(tmp_path / "k.duckdb")
    try:
        assert before.count("checkpoint starting:") == 2 and during.count("checkpoint starting:") == 3
        rows = con.execute("SELECT reason, buffers_written FROM pg_checkpoints ORDER BY start_line").fetchall()
        assert rows == [("wal", 1071), ("immediate force wait", 2), ("wal", 1762)]
    finally:
        con.close()


def test_a_rotated_log_is_copied_from_its_start(tool, tmp_path):
    log = tmp_path / "server.log"
    log.write_text("x" * 5000)
    cmd = f"printf 'new\\n' > {shlex.quote(str(log))}"
    proc = tool("collect", "--root", tmp_path / "runs", "--no-monitors", "--settle", "0", "--server-log", log,
                "rep=1", "--", "sh", "-c", cmd)
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "runs" / "rep=1"
    assert (run_dir / "server.log").read_text() == "new\n"
    assert "rotated" in tomllib.loads((run_dir / "run.toml").read_text())["commands"]["server_log_note"]
