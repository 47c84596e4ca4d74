"""Parallel ingest (ingest/parallel.py) stores exactly what a serial ingest stores, keeps the
all-or-nothing rule and the error report (file, line, what was expected, exit 2), and --keep-going."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import ro_con, run_tool
from test_interrupts import check_outcome

RUNS = [("read", 1, 1), ("read", 2, 2), ("update", 4, 1), ("update", 8, 3)]


def _campaign(corpus: Path, dest: Path) -> Path:
    """Four real runs (pgbench stdout and -l logs, sa file, sar text, sadf -d and -j, iostat, vmstat)."""
    root = dest / "campaign"
    for w, c, r in RUNS:
        src = corpus / "real" / f"study=scaleup/workload={w}/config=checksums-off/clients={c}/rep={r}"
        shutil.copytree(src, root / f"workload={w}" / f"clients={c}" / f"rep={r}")
    (root / ".kansoku-campaign").write_text("")
    return root


def _contents(db: Path) -> dict[str, list[tuple]]:
    """Every stored table, rows sorted; the ingest's clock (ingested_at) left out. A file's number (file_no,
    the store's own key of a transaction log, handed out in the order the writer meets the files) is replaced
    by the file's source_id."""
    from kansoku.store.db import FILE_TABLE

    con = ro_con(db)
    out = {}
    for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                "ORDER BY 1").fetchall():
        cols = [c for (c,) in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                          "AND schema_name = 'main' ORDER BY column_index", [table]).fetchall()
                if c != "ingested_at"]
        src = table
        if "file_no" in cols:
            if "source_id" not in cols:
                src = f"(SELECT f.source_id, t.* FROM {table} t JOIN {FILE_TABLE} f USING (file_no))"
                cols = ["source_id"] + cols
            cols.remove("file_no")
        out[table] = con.execute(f"SELECT {', '.join(chr(34) + c + chr(34) for c in cols)} FROM {src} ORDER BY ALL").fetchall()
    con.close()
    return out


def test_parallel_ingest_stores_what_a_serial_one_stores(corpus, tmp_path, monkeypatch):
    from kansoku.ingest import parallel
    from kansoku.ingest.pipeline import ingest

    root = _campaign(corpus, tmp_path)
    # the sa files and the JSON renderings (> 80 kB) are parsed by the writer itself, the rest by the workers
    monkeypatch.setattr(parallel, "BIG_FILE_BYTES", 80_000)
    serial = ingest([root], tmp_path / "serial" / "k.duckdb", jobs=1)
    par = ingest([root], tmp_path / "par" / "k.duckdb", jobs=2)
    assert serial.ok and par.ok and serial.committed and par.committed, (serial.errors, par.errors)
    assert [(f.path, f.status, f.format, f.rows, f.warnings) for f in serial.files] == \
        [(f.path, f.status, f.format, f.rows, f.warnings) for f in par.files]
    a, b = _contents(tmp_path / "serial" / "k.duckdb"), _contents(tmp_path / "par" / "k.duckdb")
    assert sum(len(v) for v in a.values()) > 50_000
    assert (a["pgbench_transaction_rows_plain"] + a["pgbench_transaction_rows_full"]) and a["sys_metrics"] and a["sources"]
    for table in a:
        assert a[table] == b[table], table
    # the raw files are kept by the workers as by a serial ingest
    kept = sorted(p.name for p in (tmp_path / "par" / "blobs").rglob("*") if p.is_file() and len(p.name) == 64)
    assert kept == sorted(p.name for p in (tmp_path / "serial" / "blobs").rglob("*")
                          if p.is_file() and len(p.name) == 64)
    # again: nothing changed, every file is recognised as unchanged by the workers
    again = ingest([root], tmp_path / "par" / "k.duckdb", jobs=2)
    assert again.ok and {f.status for f in again.files if f.status != "skipped"} == {"unchanged"}
    assert _contents(tmp_path / "par" / "k.duckdb") == b


def _damage_sadf_csv(root: Path) -> Path:
    bad = root / "workload=update" / "clients=4" / "rep=1" / "sadf_d.csv"
    # alone, it is parsed whole (beside its sa.bin a rendering is checked on a sample of its
    # records, and line 6 lies outside it; tests/test_renderings.py damages sampled records)
    bad.parent.chmod(0o755)
    (bad.parent / "sa.bin").unlink()
    lines = bad.read_text().splitlines(keepends=True)
    lines[5] = lines[5].rsplit(";", 1)[0] + ";12.3.4\n"
    bad.chmod(0o644)
    bad.write_text("".join(lines))
    return bad


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_bad_file_among_many_in_parallel_stores_nothing(corpus, tmp_path, tmp_db):
    root = _campaign(corpus, tmp_path)
    bad = _damage_sadf_csv(root)
    p = run_tool("ingest", "--db", tmp_db, "--jobs", "2", root)
    assert p.returncode == 2, p.stderr
    assert f"{bad}:6: expected" in p.stderr and "nothing was stored" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    if tmp_db.exists():
        con = ro_con(tmp_db)
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM sys_metrics").fetchone()[0] == 0
        con.close()
    # --keep-going: every other file and run stored, the bad file listed
    p = run_tool("ingest", "--db", tmp_db, "--jobs", "2", "--keep-going", "--json", root)
    assert p.returncode == 2 and f"{bad}:6" in p.stdout, p.stdout  # --json: the errors are in the summary
    con = ro_con(tmp_db)
    stored = {r[0] for r in con.execute("SELECT path FROM sources").fetchall()}
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    assert str(bad.resolve()) not in stored and len(stored) >= 25 and runs == len(RUNS)


@pytest.mark.slow  # two ingests again: --all (CI); test_a_file_the_writer_refuses_inside_a_chunk_leaves_no_rows is quick
def test_a_bad_file_in_a_chunk_with_keep_going_stores_what_a_serial_ingest_stores(corpus, tmp_path, monkeypatch):
    """A worker parses a chunk's files in one transaction, rolled back once their rows left (never committed);
    when a file of the chunk fails, the chunk is parsed again a file at a time (each file its own transaction):
    with --keep-going, every other file of that chunk is stored, exactly as a serial ingest stores them."""
    from kansoku.ingest import parallel
    from kansoku.ingest.pipeline import ingest

    root = _campaign(corpus, tmp_path)
    bad = _damage_sadf_csv(root)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 32)  # the bad file shares its chunk with others
    serial = ingest([root], tmp_path / "serial" / "k.duckdb", jobs=1, keep_going=True)
    par = ingest([root], tmp_path / "par" / "k.duckdb", jobs=2, keep_going=True)
    assert serial.committed and par.committed and serial.errors == par.errors
    assert len(par.errors) == 1 and f"{bad}:6: expected" in par.errors[0], par.errors
    assert [(f.path, f.status, f.format, f.rows, f.warnings) for f in serial.files] == \
        [(f.path, f.status, f.format, f.rows, f.warnings) for f in par.files]
    a, b = _contents(tmp_path / "serial" / "k.duckdb"), _contents(tmp_path / "par" / "k.duckdb")
    assert a["sys_metrics"] and not any(str(bad.resolve()) == r[2] for r in b["sources"])
    for table in a:
        assert a[table] == b[table], table


def test_parts_with_and_without_the_per_file_columns_store_every_row(tmp_path, monkeypatch):
    """sys_metrics' part of a chunk leaves out run_id, tool, format, host and role when each file has one value
    in each (Store.export_rows), and the writer lays each file's values over its rows; a chunk where a file has
    two (here: two tools) keeps them in its part. A batch holding files of both kinds, and a file that stored
    no row, stores every row once, each file's rows in their order."""
    from kansoku.ingest import parallel
    from kansoku.store.db import scratch_store

    monkeypatch.setitem(parallel._WORKER, "out", tmp_path)
    monkeypatch.setitem(parallel._WORKER, "chunks", 0)
    scratch = scratch_store(tmp_path / "w.duckdb", in_memory=True)
    rows = {"a": [("sar", "h1")] * 3, "b": [("sar", "h2")] * 2, "e": [],  # chunk 1: one value per file
            "c": [("iostat", "h1"), ("sar", "h1")], "d": [("vmstat", None)] * 2}  # chunk 2: c has two tools
    outcomes = {}
    for chunk in (["a", "e", "b"], ["c", "d"]):
        tasks, outs = [], []
        for sid in chunk:
            for i, (tool, host) in enumerate(rows[sid]):
                scratch.con.execute(
                    "INSERT INTO sys_metrics (source_id, run_id, tool, format, ts, since_boot, activity, metric, "
                    "value, line, host, role) VALUES (?, 'r1', ?, 'x', TIMESTAMPTZ '2026-01-01 00:00:00+00' + "
                    "to_seconds(?), false, 'cpu', 'm', ?, ?, ?, 'server')", [sid, tool, i, i * 1.5, i + 1, host])
            tasks.append(parallel.FileTask(sid, "f", "r1", sid, None, {}, None, str(tmp_path)))
            outs.append(parallel.FileOutcome("parsed"))
        parallel._export(scratch, tasks, outs, {"sys_metrics": list(range(len(chunk)))})
        outcomes.update(zip(chunk, outs))
        scratch.con.execute("CREATE OR REPLACE TABLE kept AS SELECT * FROM sys_metrics" if chunk[0] == "a" else
                            "INSERT INTO kept SELECT * FROM sys_metrics")
        scratch.clear(["sys_metrics"])
    assert set(outcomes["a"].per_file) == {"sys_metrics"} and not outcomes["c"].per_file
    assert not outcomes["e"].parts and outcomes["c"].parts
    writer = scratch_store(tmp_path / "store.duckdb")
    batch = parallel.Batch(writer)
    for sid in ("a", "c", "e", "b", "d"):
        batch.add(sid, outcomes[sid].parts, {}, outcomes[sid].per_file)
    batch.flush()
    stored = writer.con.execute("SELECT * FROM sys_metrics ORDER BY source_id, line").fetchall()
    assert stored == scratch.con.execute("SELECT * FROM kept ORDER BY source_id, line").fetchall()
    assert len(stored) == 9 and {r[0] for r in stored} == {"a", "b", "c", "d"}
    by_file = {}
    for r in writer.con.execute("SELECT source_id, line FROM sys_metrics").fetchall():
        by_file.setdefault(r[0], []).append(r[1])
    assert all(lines == sorted(lines) for lines in by_file.values())  # each file's rows in their order


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_busy_store_is_exit_4_with_a_pool(corpus, tmp_path, tmp_db):
    root = _campaign(corpus, tmp_path)
    run_tool("ingest", "--db", tmp_db, "--jobs", "1", root / "workload=read", check=True)
    holder = duckdb.connect(str(tmp_db))
    try:
        p = run_tool("ingest", "--db", tmp_db, "--jobs", "2", root)
    finally:
        holder.close()
    assert p.returncode == 4 and "in use" in p.stderr, p.stderr


@pytest.mark.slow  # a Ctrl-C trial: --all (CI); test_interrupts.py's serial Ctrl-C sample is quick
def test_ctrl_c_during_a_parallel_ingest(corpus, tmp_path, tmp_db):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while workers parse: exit 130,
    no traceback from the ingest or its workers, the store as it was."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    root = _campaign(corpus, tmp_path)
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "ingest"), "--db", str(tmp_db), "--jobs", "2",
                             str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    # the walk is done and the workers are starting or parsing (much later, a quick machine could already be in
    # the interpreter's shutdown after its summary)
    time.sleep(1.5)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    # the message is the truth about the store, whichever moment the signal met (test_interrupts.check_outcome)
    check_outcome(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), tmp_db)


def _worker_parse_chunk(doc: str, parse_chunk: str) -> str:
    """sitecustomize.py for an ingest's workers (they alone start with --multiprocessing-fork): ``parse_chunk``,
    the source of ``parse_chunk(module, tasks)``, replaces kansoku.ingest.parallel's in them (``doc``: what
    such a worker does)."""
    return """
import importlib.abc, importlib.util, os, signal, sys
from pathlib import Path
PARSE_CHUNK

class _ParseChunkReplaced(importlib.abc.MetaPathFinder):
    '''DOC'''

    def find_spec(self, name, path=None, target=None):
        if name != "kansoku.ingest.parallel":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            module.parse_chunk = lambda tasks: parse_chunk(module, tasks)

        spec.loader.exec_module = exec_module
        return spec


if "--multiprocessing-fork" in sys.argv:
    sys.meta_path.insert(0, _ParseChunkReplaced())
""".replace("PARSE_CHUNK", parse_chunk).replace("DOC", doc)


STILL_WRITING_WORKER = _worker_parse_chunk(
    "A worker that keeps writing files into the pool's scratch directory, as one writing its Parquet parts "
    "does, for as long as it lives (it is deaf to Ctrl-C, as every worker is).", """
def parse_chunk(module, tasks):
    out = Path(module._WORKER["out"]) / f"parts-{os.getpid()}"
    out.mkdir(exist_ok=True)
    Path(os.environ["KANSOKU_TEST_WRITING"]).touch()
    n = 0
    while True:
        (out / f"part-{n % 50}.parquet").write_bytes(b"x" * 4096)
        n += 1
""")


@pytest.mark.slow  # a Ctrl-C trial: --all (CI); test_interrupts.py's serial Ctrl-C sample is quick
def test_ctrl_c_while_workers_write_their_parts(corpus, tmp_path, tmp_db):
    """Ctrl-C to the ingest while its workers (deaf to it) still write into the scratch directory: the workers
    are ended and waited for before the directory is removed. CI saw "OSError: Directory not empty" with a
    traceback: the executor forgot its processes at its shutdown, so none was ended or waited for."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT
    from kansoku.ingest.parallel import scratch_root

    root = _campaign(corpus, tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STILL_WRITING_WORKER)
    writing = tmp_path / "writing"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "KANSOKU_TEST_WRITING": str(writing)}
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "ingest"), "--db", str(tmp_db), "--jobs", "2",
                             str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while not writing.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert writing.exists(), proc.communicate(timeout=5)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("the ingest did not end after Ctrl-C (its workers were not ended)") from None
    assert proc.returncode == 130, (proc.returncode, err)
    assert check_outcome(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), tmp_db) != "python"
    assert not list(scratch_root(tmp_db).glob("*")), "scratch left behind"


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("chunk_files", [1, 4, 32])
def test_renderings_checked_across_batches_store_what_a_serial_ingest_stores(corpus, tmp_path, monkeypatch,
                                                                             chunk_files):
    """The workers parse the sa files, a chunk of files at a time (each chunk's rows in one Parquet part per
    table); the writer stores their rows a few files at a time (Batch.FILES = 3, so batches end inside runs
    and inside chunks) and checks each run's renderings against the sa file's part once it is stored: the same
    results, rows and no part left behind."""
    from kansoku.ingest import parallel
    from kansoku.ingest.pipeline import ingest

    root = _campaign(corpus, tmp_path)
    monkeypatch.setattr(parallel.Batch, "FILES", 3)
    monkeypatch.setattr(parallel, "CHUNK_FILES", chunk_files)
    serial = ingest([root], tmp_path / "serial" / "k.duckdb", jobs=1)
    par = ingest([root], tmp_path / "par" / "k.duckdb", jobs=2)
    assert serial.ok and par.ok and serial.committed and par.committed, (serial.errors, par.errors)
    assert [(f.path, f.status, f.format, f.rows, f.reason) for f in serial.files] == \
        [(f.path, f.status, f.format, f.rows, f.reason) for f in par.files]
    assert sum(f.status == "checked" for f in par.files) == 3 * len(RUNS)
    a, b = _contents(tmp_path / "serial" / "k.duckdb"), _contents(tmp_path / "par" / "k.duckdb")
    for table in a:
        assert a[table] == b[table], table
    assert not list((tmp_path / "par").rglob("*.parquet"))


def test_a_file_the_writer_refuses_inside_a_chunk_leaves_no_rows(corpus, tmp_path, monkeypatch):
    """--keep-going: a run directory saying clients=3 over pgbench output of 2 clients: the writer refuses its
    pgbench files (RunError) although their worker parsed them into a chunk shared with other files; the rows
    stored are a serial ingest's, chunks and batches ending anywhere."""
    from kansoku.ingest import parallel
    from kansoku.ingest.pipeline import ingest

    root = _campaign(corpus, tmp_path)
    (root / "workload=read" / "clients=2").rename(root / "workload=read" / "clients=3")
    toml = root / "workload=read" / "clients=3" / "rep=2" / "run.toml"
    toml.chmod(0o644)
    toml.write_text(toml.read_text().replace("clients = 2\n", "clients = 3\n", 1))
    monkeypatch.setattr(parallel.Batch, "FILES", 4)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 5)
    serial = ingest([root], tmp_path / "serial" / "k.duckdb", jobs=1, keep_going=True)
    par = ingest([root], tmp_path / "par" / "k.duckdb", jobs=2, keep_going=True)
    refused = [f for f in par.files if f.status == "failed"]
    assert refused and all("clients=3" in f.path for f in refused)
    assert any("the file says clients = 2" in e for e in par.errors), par.errors
    assert [(f.path, f.status, f.format, f.rows, f.reason) for f in serial.files] == \
        [(f.path, f.status, f.format, f.rows, f.reason) for f in par.files]
    a, b = _contents(tmp_path / "serial" / "k.duckdb"), _contents(tmp_path / "par" / "k.duckdb")
    for table in a:
        assert a[table] == b[table], table
    con = ro_con(tmp_path / "par" / "k.duckdb")
    assert not con.execute("SELECT count(*) FROM pgbench_summary s JOIN sources USING (source_id) "
                           "WHERE sources.path LIKE '%clients=3%'").fetchone()[0]
    con.close()



BROKEN_WORKER = """
import importlib.abc, sys


class _NoFioParserInWorkers(importlib.abc.MetaPathFinder):
    '''An ingest worker cannot import a parser (a broken installation, seen by the pool's workers only).'''

    def find_spec(self, name, path=None, target=None):
        if name == "kansoku.parsers.fio":
            raise ImportError("kansoku.parsers.fio is broken in this worker (test)")
        return None


if "--multiprocessing-fork" in sys.argv:
    sys.meta_path.insert(0, _NoFioParserInWorkers())
"""

KILLED_WORKER = _worker_parse_chunk(
    "A worker killed while it parses its first chunk (by the out-of-memory killer, by kill -9).", """
def parse_chunk(module, tasks):
    os.kill(os.getpid(), signal.SIGKILL)
""")


def _ingest_with(site_code: str, root: Path, tmp_db: Path, tmp_path: Path):
    import os

    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(site_code)
    return run_tool("ingest", "--db", tmp_db, "--jobs", "2", root, timeout=120,
                    env={"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])})


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("site_code, message", [
    (BROKEN_WORKER, "an ingest worker could not start (ImportError: kansoku.parsers.fio is broken in this worker "
                    "(test)); nothing was stored"),
    (KILLED_WORKER, "an ingest worker process ended before its files were parsed (killed, or out of memory?); "
                    "nothing was stored"),
], ids=["cannot-start", "killed"])
def test_a_worker_that_fails_ends_the_ingest(corpus, tmp_path, tmp_db, site_code, message):
    """A worker that cannot start (its initializer raises) or is killed (kill -9, the out-of-memory killer),
    which multiprocessing.Pool would replace forever: one line saying what happened, exit 1, no traceback, the
    store as it was."""
    root = _campaign(corpus, tmp_path)
    run_tool("ingest", "--db", tmp_db, "--jobs", "1", root / "workload=read", check=True)
    con = ro_con(tmp_db)
    before = con.execute("SELECT count(*), max(ingested_at) FROM sources").fetchone()
    con.close()
    p = _ingest_with(site_code, root, tmp_db, tmp_path)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    con = ro_con(tmp_db)
    assert con.execute("SELECT count(*), max(ingested_at) FROM sources").fetchone() == before and before[0] > 0
    con.close()
    from kansoku.ingest.parallel import scratch_root

    assert not list(scratch_root(tmp_db).glob("*")), "scratch left behind"


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("alone, keep_going", [("fails", True), ("fails", False), ("parses", True)])
def test_a_batch_duckdb_fails_on_is_tried_again_a_file_at_a_time(tmp_path, monkeypatch, alone, keep_going):
    """DuckDB fails on the writer's insert of a workers' batch (aborting the ingest's transaction): the
    batch's files are parsed again by the writer, one at a time. A file that then fails alone is the one error,
    listed once, and with --keep-going every other file of its batch is stored; one that parses is stored."""
    from conftest import FIXTURES
    from kansoku.ingest.pipeline import ingest
    from kansoku.parsers.pgbench import txlog
    from kansoku.store.db import Store

    src = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"
    for run in "abcd":
        (tmp_path / "runs" / run).mkdir(parents=True)
        for name in ("pgbench.log", "pgbench_log.12350"):
            shutil.copy(src / name, tmp_path / "runs" / run / name)
    bad = tmp_path / "runs" / "b" / "pgbench_log.12350"
    import_rows = Store.import_rows

    def failing_import(self, table, parquet, source_ids=None, per_file=None):
        if table in (txlog.TX_PLAIN, txlog.TX_FULL):  # a real failure inside the ingest's transaction
            self.con.execute("SELECT error('the batch of workers'' rows DuckDB fails on')")
        return import_rows(self, table, parquet, source_ids, per_file)

    monkeypatch.setattr(Store, "import_rows", failing_import)
    if alone == "fails":  # (the workers are spawned: only the writer's parse of the file fails)
        load = txlog._load
        monkeypatch.setattr(txlog, "_load", lambda path, sink, table, *a, **k: (
            sink.load_sql(table, "SELECT error('a statement DuckDB aborts on')"), 0) if path == bad
            else load(path, sink, table, *a, **k))
    rep = ingest([tmp_path / "runs"], tmp_path / "k.duckdb", keep_going=keep_going, jobs=2)
    listed = [f.path for f in rep.files]
    assert len(listed) == len(set(listed)), listed  # each file once
    if keep_going:
        assert sorted(listed) == sorted(str(p) for p in (tmp_path / "runs").rglob("pgbench*"))
    if alone == "parses":
        assert rep.committed and not rep.errors and {f.status for f in rep.files} == {"new"}, rep.errors
        stored = 8
    else:
        assert len(rep.errors) == 1 and rep.errors[0].startswith(f"{bad}: "), rep.errors
        assert [f.status for f in rep.files if f.status != "new"] == ["failed"]
        assert [f.path for f in rep.files if f.status == "failed"] == [str(bad)]
        assert rep.committed == keep_going
        stored = 7
    if rep.committed:
        con = ro_con(tmp_path / "k.duckdb")
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == stored
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
        con.close()
