"""Nothing lost, nothing counted twice, nothing from outside (ingest side).

Every test runs tools/ingest on real pgbench output (tests/fixtures/runs) into a real DuckDB file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, ro_con

RUNS = ROOT / "tests" / "fixtures" / "runs" / "campaign=corpus-2026-11" / "study=scaleup" / "workload=read" / \
    "config=checksums-off"
LOG = RUNS / "clients=2" / "rep=1" / "pgbench.log"  # says 2 clients, tps = 427.039398
VMSTAT = ROOT / "tests" / "fixtures" / "vmstat" / "vmstat.txt"


def put(d: Path, name: str = "pgbench.log", src: Path = LOG) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, d / name)
    return d / name


def q(db: Path, sql: str, *params):
    con = ro_con(db)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def ingest_json(tool, db: Path, *paths, check=True):
    proc = tool("ingest", "--db", db, "--json", *paths, check=check)
    return proc, (json.loads(proc.stdout) if proc.stdout.strip() else None)


def test_every_path_segment_names_a_run(tool, tmp_path, tmp_db):
    camp = tmp_path / "campaign"
    put(camp / "hostA" / "clients=2" / "rep=1")
    put(camp / "hostB" / "clients=2" / "rep=1")
    _, rep = ingest_json(tool, tmp_db, camp)
    assert rep["runs_new"] == 2
    assert q(tmp_db, "SELECT run_id FROM runs ORDER BY 1") == [("hostA/clients=2/rep=1",), ("hostB/clients=2/rep=1",)]
    assert q(tmp_db, "SELECT count(*) FROM pgbench_summary") == [(2,)]
    # the factors describe the run; the id is not made of them alone
    assert q(tmp_db, "SELECT DISTINCT factor FROM run_factors ORDER BY 1")[:2] == [("clients",), ("rep",)]


def test_a_run_named_the_same_from_inside_a_hive_tree(tool, tmp_path, tmp_db):
    camp = tmp_path / "runs"
    put(camp / "study=a" / "clients=2" / "rep=1")
    ingest_json(tool, tmp_db, camp)
    _, rep = ingest_json(tool, tmp_db, camp / "study=a")  # same run, given from below
    assert rep["counts"] == {"unchanged": 1} and rep["runs_new"] == 0
    assert q(tmp_db, "SELECT run_id FROM runs") == [("study=a/clients=2/rep=1",)]


def test_two_directories_one_identity_is_an_error_naming_both(tool, tmp_path, tmp_db):
    a = put(tmp_path / "a" / "clients=2" / "rep=1").parent
    b = put(tmp_path / "b" / "clients=2" / "rep=1").parent
    proc = tool("ingest", "--db", tmp_db, tmp_path / "a", tmp_path / "b")
    assert proc.returncode == 2
    assert str(a) in proc.stderr and str(b) in proc.stderr and "'clients=2/rep=1'" in proc.stderr
    assert not tmp_db.exists() or q(tmp_db, "SELECT count(*) FROM runs") == [(0,)]


def test_ingest_from_a_lower_path_never_stores_a_run_twice(tool, tmp_path, tmp_db):
    camp = tmp_path / "campaign"
    put(camp / "2026" / "hostA" / "run1")
    ingest_json(tool, tmp_db, camp)
    before = q(tmp_db, "SELECT run_id, count(*) OVER () FROM runs")
    proc = tool("ingest", "--db", tmp_db, camp / "2026")
    assert proc.returncode == 2
    assert "already stored as run '2026/hostA/run1'" in proc.stderr and "'hostA/run1'" in proc.stderr
    assert ".kansoku-campaign" in proc.stderr
    assert q(tmp_db, "SELECT run_id, count(*) OVER () FROM runs") == before


def test_a_campaign_marker_makes_the_id_independent_of_the_path_given(tool, tmp_path, tmp_db):
    camp = tmp_path / "campaign"
    put(camp / "2026" / "hostA" / "run1")
    (camp / ".kansoku-campaign").write_text("")
    ingest_json(tool, tmp_db, camp / "2026" / "hostA")
    _, rep = ingest_json(tool, tmp_db, camp)
    assert rep["counts"] == {"unchanged": 1}
    assert q(tmp_db, "SELECT run_id FROM runs") == [("2026/hostA/run1",)]


def test_a_runs_files_are_a_set_renamed_and_deleted_files_leave_no_rows(tool, tmp_path, tmp_db):
    # the database (and its blobs/) next to the runs: the walk skips the store's copies
    run = put(tmp_path / "clients=2" / "rep=1").parent
    ingest_json(tool, tmp_db, tmp_path)
    (run / "pgbench.log").rename(run / "pgbench-renamed.log")
    proc, rep = ingest_json(tool, tmp_db, tmp_path)
    assert {k: v for k, v in rep["counts"].items() if k != "skipped"} == {"new": 1, "removed": 1}  # skipped: the db
    assert [Path(f["path"]).name for f in rep["files"] if f["status"] == "removed"] == ["pgbench.log"]
    assert q(tmp_db, "SELECT count(*), sum(tps) FROM pgbench_summary") == [(1, 427.039398)]
    assert q(tmp_db, "SELECT value FROM run_metrics WHERE metric = 'tps'") == [(427.039398,)]
    assert q(tmp_db, "SELECT file_name FROM sources") == [("pgbench-renamed.log",)]
    text = tool("ingest", "--db", tmp_db, tmp_path, check=True).stdout
    assert "removed" not in text
    # a second file (a monitor's; a second pgbench output would be a second run), then deleted: its rows
    # go with it, and the summary says so
    put(run, "vmstat.txt", VMSTAT)
    ingest_json(tool, tmp_db, tmp_path)
    rows = q(tmp_db, "SELECT count(*) FROM sys_metrics")[0][0]
    assert rows > 0 and q(tmp_db, "SELECT count(*) FROM sources") == [(2,)]
    (run / "vmstat.txt").unlink()
    text = tool("ingest", "--db", tmp_db, tmp_path, check=True).stdout
    assert "1 removed" in text
    assert q(tmp_db, "SELECT count(*) FROM sys_metrics") == [(0,)]
    assert q(tmp_db, "SELECT count(*) FROM pgbench_summary") == [(1,)]
    assert q(tmp_db, "SELECT count(*) FROM sources") == [(1,)]


def test_a_single_file_given_does_not_remove_its_neighbours(tool, tmp_path, tmp_db):
    run = put(tmp_path / "clients=2" / "rep=1").parent
    put(run, "vmstat.txt", VMSTAT)
    ingest_json(tool, tmp_db, tmp_path)
    _, rep = ingest_json(tool, tmp_db, run / "pgbench.log")
    assert rep["counts"] == {"unchanged": 1}
    assert q(tmp_db, "SELECT count(*) FROM sources") == [(2,)]


def test_provenance_by_content_a_copy_and_the_kept_bytes(tool, tmp_path, tmp_db):
    first = tmp_path / "first"
    run = put(first / "clients=2" / "rep=1").parent
    shutil.copyfile(RUNS / "clients=2" / "rep=1" / "run.toml", run / "run.toml")
    ingest_json(tool, tmp_db, first)
    second = tmp_path / "second"
    shutil.copytree(first, second)
    shutil.rmtree(first)
    _, rep = ingest_json(tool, tmp_db, second)
    assert rep["counts"] == {"unchanged": 1}
    (path, sha), = q(tmp_db, "SELECT path, sha256 FROM sources")
    assert path == str((second / "clients=2" / "rep=1" / "pgbench.log").resolve())  # sources.path stays true
    blob = tmp_db.parent / "blobs" / sha[:2] / sha
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha == hashlib.sha256(LOG.read_bytes()).hexdigest()
    assert not os.access(blob, os.W_OK) or os.geteuid() == 0  # read-only (root may write anyway)
    (toml_sha,), = q(tmp_db, "SELECT run_toml_sha256 FROM runs")
    assert (tmp_db.parent / "blobs" / toml_sha[:2] / toml_sha).read_bytes() == (run.parent.parent.parent / "second" / "clients=2" / "rep=1" / "run.toml").read_bytes()


def test_symlinks_are_not_followed_out_of_the_tree(tool, tmp_path, tmp_db):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.log").write_bytes(LOG.read_bytes())
    (outside / "run.toml").write_text('token = "s3cr3t-token"\n')
    (outside / "d").mkdir()
    put(outside / "d")
    tree = tmp_path / "tree"
    run = put(tree / "clients=2" / "rep=1").parent
    (run / "linked.log").symlink_to(outside / "secret.log")
    (run / "run.toml").symlink_to(outside / "run.toml")
    (tree / "clients=2" / "rep=2").symlink_to(outside / "d", target_is_directory=True)
    proc, rep = ingest_json(tool, tmp_db, tree)
    skipped = {Path(f["path"]).name: f["reason"] for f in rep["files"] if f["status"] == "skipped"}
    assert skipped == {"linked.log": "symbolic link out of the tree (not followed)",
                       "run.toml": "symbolic link out of the tree (not followed)",
                       "rep=2": "symbolic link out of the tree (not followed)"}
    assert q(tmp_db, "SELECT run_id FROM runs") == [("clients=2/rep=1",)]
    assert q(tmp_db, "SELECT file_name FROM sources") == [("pgbench.log",)]
    assert "s3cr3t" not in str(q(tmp_db, "SELECT run_toml FROM runs"))
    assert q(tmp_db, "SELECT count(*) FROM run_factors WHERE factor = 'token'") == [(0,)]


def _sidecar(d: Path, csv_name: str) -> Path:
    src = ROOT / "data" / "published" / "fy2013"
    d.mkdir(parents=True)
    text = (src / "fy2013_t2.3_checksum.toml").read_text().replace('csv = "fy2013_t2.3_checksum.csv"',
                                                                     f"csv = {json.dumps(csv_name)}")
    (d / "t.toml").write_text(text)
    return d / "t.toml"


def test_published_sidecar_csv_is_confined_to_its_directory(tool, tmp_path, tmp_db):
    src = ROOT / "data" / "published" / "fy2013" / "fy2013_t2.3_checksum.csv"
    secret = tmp_path / "x.csv"
    secret.write_text("TOPSECRET,header\n1,2\n")
    for i, name in enumerate(["/etc/passwd", "../../x.csv", "../x.csv", str(secret)]):
        d = tmp_path / f"case{i}" / "pub"
        _sidecar(d, name)
        shutil.copyfile(src, d / "fy2013_t2.3_checksum.csv")
        proc = tool("ingest", "--db", tmp_db, d)
        assert proc.returncode == 2, proc.stderr
        assert "outside the sidecar's directory" in proc.stderr
        assert "root:" not in proc.stderr and "TOPSECRET" not in proc.stderr and "/etc/passwd" not in proc.stderr
    # a link next to the sidecar is refused as well
    d = tmp_path / "link" / "pub"
    _sidecar(d, "linked.csv")
    (d / "linked.csv").symlink_to(secret)
    proc = tool("ingest", "--db", tmp_db, d)
    assert proc.returncode == 2 and "TOPSECRET" not in proc.stderr
    assert not tmp_db.exists() or q(tmp_db, "SELECT count(*) FROM sources") == [(0,)]


CTRL_C = """
import os, signal, sys
sys.path.insert(0, {tools!r})
import duckdb
import kansoku.store.db as db
from kansoku.cli import ingest_main
real_connect = duckdb.connect

class Con:  # the real connection; Ctrl-C is pressed when {when!r} runs
    def __init__(self, con):
        self._con = con
    def execute(self, sql, *a):
        if sql == {when!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return self._con.execute(sql, *a)
    def __getattr__(self, name):
        return getattr(self._con, name)

db.duckdb.connect = lambda *a, **k: Con(real_connect(*a, **k))
sys.exit(ingest_main(["--db", {db!r}, {path!r}]))
"""


def _ctrl_c(tmp_db: Path, path: Path, when: str) -> subprocess.CompletedProcess:
    script = CTRL_C.format(tools=str(ROOT / "tools"), when=when, db=str(tmp_db), path=str(path))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # a Ctrl-C trial: --all (CI); test_interrupts.py's serial Ctrl-C sample is quick
def test_ctrl_c_before_commit_stores_nothing(tmp_path, tmp_db):
    put(tmp_path / "clients=2" / "rep=1")
    proc = _ctrl_c(tmp_db, tmp_path, "DELETE FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))")
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "nothing was stored" in proc.stderr
    assert q(tmp_db, "SELECT count(*) FROM runs") == [(0,)]


@pytest.mark.slow  # a Ctrl-C trial: --all (CI); test_interrupts.py's serial Ctrl-C sample is quick
def test_ctrl_c_during_commit_tells_the_truth(tmp_path, tmp_db):
    put(tmp_path / "clients=2" / "rep=1")
    proc = _ctrl_c(tmp_db, tmp_path, "COMMIT")
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "had committed" in proc.stderr
    assert q(tmp_db, "SELECT count(*) FROM runs") == [(1,)]


# -- the identity rules hold against what is already stored ------------------------------------

LOG4 = RUNS / "clients=4" / "rep=1" / "pgbench.log"


def test_two_hosts_ingested_one_at_a_time_never_replace_each_other_silently(tool, tmp_path, tmp_db):
    """tools/ingest runs/hostA then tools/ingest runs/hostB, no campaign marker: both name their run
    'clients=2/rep=1'. hostB silently replaced hostA ('1 updated', exit 0); now an error naming both."""
    a = put(tmp_path / "runs" / "hostA" / "clients=2" / "rep=1").parent
    b = tmp_path / "runs" / "hostB" / "clients=2" / "rep=1"
    b.mkdir(parents=True)
    (b / "pgbench.log").write_bytes(LOG.read_bytes().replace(b"tps = 427.039398", b"tps = 400.000000"))
    tool("ingest", "--db", tmp_db, tmp_path / "runs" / "hostA", check=True)
    before = q(tmp_db, "SELECT run_id, run_dir FROM runs")
    proc = tool("ingest", "--db", tmp_db, tmp_path / "runs" / "hostB")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert str(a) in proc.stderr and str(b) in proc.stderr and "Traceback" not in proc.stderr
    assert q(tmp_db, "SELECT run_id, run_dir FROM runs") == before
    assert q(tmp_db, "SELECT tps FROM pgbench_summary") == [(427.039398,)]
    assert "campaign root" in proc.stderr


def test_a_copy_of_a_run_elsewhere_is_still_the_same_run(tool, tmp_path, tmp_db):
    put(tmp_path / "one" / "clients=2" / "rep=1")
    put(tmp_path / "two" / "clients=2" / "rep=1")
    tool("ingest", "--db", tmp_db, tmp_path / "one", check=True)
    proc = tool("ingest", "--db", tmp_db, tmp_path / "two", check=True)
    assert "0 new" in proc.stdout
    assert q(tmp_db, "SELECT count(*) FROM pgbench_summary") == [(1,)]


def test_a_renamed_output_given_alone_never_gives_its_run_two_summaries(tool, tmp_path, tmp_db):
    run = put(tmp_path / "clients=2" / "rep=1").parent
    tool("ingest", "--db", tmp_db, tmp_path, check=True)
    (run / "pgbench.log").rename(run / "pgbench-renamed.log")
    proc = tool("ingest", "--db", tmp_db, run / "pgbench-renamed.log")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "pgbench.log" in proc.stderr and "pgbench-renamed.log" in proc.stderr
    assert q(tmp_db, "SELECT count(*) FROM pgbench_summary") == [(1,)]
    assert q(tmp_db, "SELECT count(*) FROM run_metrics WHERE metric = 'tps'") == [(1,)]
    tool("ingest", "--db", tmp_db, tmp_path, check=True)  # the whole directory: its set replaces the stored one
    assert q(tmp_db, "SELECT file_name FROM sources") == [("pgbench-renamed.log",)]


def test_a_run_toml_that_is_not_utf8_is_a_clear_error(tool, tmp_path, tmp_db):
    run = put(tmp_path / "clients=2" / "rep=1").parent
    (run / "run.toml").write_bytes('clients = 2\nnote = "Résumé"\n'.encode("latin-1"))
    proc = tool("ingest", "--db", tmp_db, tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"{run / 'run.toml'}:2: expected UTF-8" in proc.stderr
    assert "Traceback" not in proc.stderr
