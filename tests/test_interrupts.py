"""Ctrl-C at any moment of an ingest ends with one true line, never a traceback.

SIGINT is sent as a terminal sends it (to the process group) after delays from the interpreter's start to the
end of a small serial ingest; after each, the store is checked against what the message says.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, ro_con

RUN = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"


def _sources(db) -> int:
    if not db.exists():
        return 0
    con = ro_con(db)
    try:
        return con.execute("SELECT count(*) FROM sources").fetchone()[0]
    except Exception:  # noqa: BLE001 -- a store whose schema was never created holds nothing
        return 0
    finally:
        con.close()


def interrupt_ingest(db, paths, delay: float, *extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "ingest"), "--db", str(db), *extra, *map(str, paths)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def check_outcome(proc: subprocess.CompletedProcess, db) -> str:
    """The message is the truth about the store. Returns which outcome it was."""
    err = proc.stderr
    startup = re.match(r"Failed checking if argv\[0\] is an import path entry\n(?:.*\n)*?KeyboardInterrupt\n", err)
    if startup:
        # Python prints the interrupt of its zipimport check of argv[0] and then runs the script all the same
        # (CPython's pymain_get_importer): the tool's own outcome follows, judged as any other
        err = err[startup.end():]
        proc = subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, err)
    if "Fatal Python error: init_import_site" in err or "Fatal Python error: init_sys_streams" in err:
        # the interpreter's own start-up (its streams or site module, before the tool's first line runs): Python's
        # message, outside the tool's reach; nothing of the tool ran
        assert _sources(db) == 0 and not db.exists()
        return "python"
    if re.fullmatch(r'Traceback \(most recent call last\):\n  File "[^"]+/tools/ingest", line 0, in <module>\n'
                    r'KeyboardInterrupt\n', err):
        # between Python's handler going in and the script's first line (its try cannot have begun: the signal
        # is raised on the module's first instruction, line 0): Python's own report, nothing of the tool ran
        assert _sources(db) == 0 and not db.exists()
        return "python"
    assert "Traceback" not in err, err
    if proc.returncode == -signal.SIGINT:
        # killed by the signal: Python's handler was not in yet (nothing written), or no longer (the interpreter's
        # shutdown, after the ingest had committed and printed its summary, which then is the truth)
        if _sources(db) == 0:
            return "killed"
        assert "pgbench-txlog" in proc.stdout and " rows" in proc.stdout, proc.stdout
        return "killed after done"
    assert proc.returncode in (0, 130), (proc.returncode, err)
    if proc.returncode == 0:
        assert _sources(db) > 0
        return "done"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    if "nothing was stored" in err:
        assert _sources(db) == 0, err
        return "nothing"
    if "had committed" in err:
        assert _sources(db) > 0, err
        return "committed"
    assert lines == ["interrupted"], err  # before the ingest began: nothing could have been stored
    assert _sources(db) == 0, err
    return "early"


@pytest.mark.quick_sample(4)
@pytest.mark.parametrize("delay", [0.01, 0.03, 0.05, 0.07, 0.1, 0.15, 0.25, 0.4, 0.6, 0.9, 1.3])
def test_ctrl_c_at_any_moment_of_a_serial_ingest_says_the_truth(tmp_path, delay):
    db = tmp_path / "k.duckdb"
    proc = interrupt_ingest(db, [RUN], delay, "--jobs", "1")
    check_outcome(proc, db)


def test_a_killed_ingests_scratch_is_removed_by_the_next_one(tmp_path):
    """A kill -9 leaves worker databases and Parquet parts behind: the scratch lives beside the store and the
    next writer removes what a killed ingest left."""
    from kansoku.ingest.parallel import scratch_root

    db = tmp_path / "k.duckdb"
    left = scratch_root(db) / "ingest-4242-x"
    # another store in the same directory: its ingest's scratch (alive, as far as this one knows) is its own
    # writer's to remove (two ingests side by side removed each other's Parquet parts: a traceback)
    other = scratch_root(tmp_path / "other.duckdb") / "ingest-4244-y"
    for d in (left, other):
        d.mkdir(parents=True)
        (d / "worker-4243.duckdb").write_bytes(b"\0" * 1024)
        (d / "0123-pgbench_summary.parquet").write_bytes(b"PAR1")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "ingest"), "--db", str(db), str(RUN)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert list(scratch_root(db).iterdir()) == []
    assert sorted(p.name for p in other.iterdir()) == ["0123-pgbench_summary.parquet", "worker-4243.duckdb"]


def test_a_parallel_ingest_keeps_its_scratch_beside_the_store(tmp_path, monkeypatch):
    import tempfile

    from kansoku.ingest import parallel
    from kansoku.ingest.pipeline import ingest

    made = []
    real = tempfile.TemporaryDirectory

    def spy(*args, **kwargs):
        d = real(*args, **kwargs)
        made.append(Path(d.name))
        return d

    monkeypatch.setattr(tempfile, "TemporaryDirectory", spy)
    db = tmp_path / "store" / "k.duckdb"
    db.parent.mkdir()
    report = ingest([FIXTURES / "sysstat_variants"], db, jobs=2)
    assert report.ok, report.errors
    pools = [d for d in made if d.name.startswith("ingest-")]
    assert pools and all(d.parent == parallel.scratch_root(db) for d in pools)
    assert not any(d.exists() for d in pools)


@pytest.mark.slow  # a fault-injection trial of half a minute or more: --all (CI) runs it
def test_a_ctrl_c_during_a_parsers_duckdb_statement_is_an_interrupt_not_a_damaged_file(tmp_path, monkeypatch):
    """DuckDB turns a Ctrl-C during a statement into RuntimeError('Query interrupted'); the parsers' safety net
    reported it as a damaged file ('expected a valid pgbench-txlog file') and the ingest went on parsing (a
    second Ctrl-C was needed). Now it is the user's interrupt: nothing stored, 'interrupted'."""
    import threading

    from kansoku.ingest.pipeline import Interrupted, ingest
    from kansoku.store.db import FileSink

    real = FileSink.load_sql

    def slow_then_real(self, table, select_sql, params=None):
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        # long enough to be inside it when the timer fires anywhere; DuckDB sometimes notices the interrupt only
        # when the statement ends, so not much longer than that
        self.store.con.execute("SELECT count(*) FROM range(4000000000) t(x) WHERE x % 7 = 3").fetchone()
        return real(self, table, select_sql, params)

    monkeypatch.setattr(FileSink, "load_sql", slow_then_real)
    db = tmp_path / "k.duckdb"
    with pytest.raises(Interrupted) as exc:
        ingest([RUN], db, jobs=1)
    assert not exc.value.committed
    assert _sources(db) == 0


def test_a_ctrl_c_a_library_swallowed_still_stops_the_commit(tmp_path):
    """DuckDB reads Python's pending signals during a statement and did not always raise them again (in a CI
    run an ingest with a Ctrl-C sent during a statement committed and exited 0). A Ctrl-C inside the
    transaction is witnessed: swallowed or not, the transaction rolls back and the Ctrl-C is raised."""
    from kansoku.store.db import open_store

    store = open_store(tmp_path / "k.duckdb")
    try:
        with pytest.raises(KeyboardInterrupt):
            with store.atomic() as tx:
                store.con.execute("CREATE TABLE t AS SELECT 1 AS x")
                try:
                    signal.raise_signal(signal.SIGINT)  # what a library that catches everything would do
                except KeyboardInterrupt:
                    pass
        assert not tx.committed
        assert store.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 't'").fetchone() == (0,)
        with store.atomic() as tx:  # the next transaction is not haunted by the old Ctrl-C
            store.con.execute("CREATE TABLE t AS SELECT 1 AS x")
        assert tx.committed
    finally:
        store.close()
