"""What the ingest holds to whatever the input: numbers only in ASCII digits, memory flat in a file's length,
names printed safely, no temporary file left behind a killed ingest, one failed file never losing the others."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, ro_con, run_tool

PARSERS = ROOT / "tools" / "kansoku" / "parsers"
_FLAGS_AT = {"compile": 1, "match": 2, "search": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "sub": 4,
             "subn": 4, "split": 3}


def _patterns_without_ascii(path: Path) -> list[str]:
    """Every regular expression of a parser, whether its pattern is written there or built (pgbench's NUM)."""
    src = path.read_text()
    out = []
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in _FLAGS_AT and node.args):
            continue
        flags = [k.value for k in node.keywords if k.arg == "flags"] + node.args[_FLAGS_AT[node.func.attr]:][:1]
        if not any("ASCII" in ast.get_source_segment(src, f) for f in flags):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


@pytest.mark.parametrize("path", sorted(PARSERS.rglob("*.py")), ids=lambda p: str(p.relative_to(PARSERS)))
def test_parsers_read_only_ascii_digits_as_numbers(path):
    """Python's \\d, int() and float() take '１２３' (fullwidth) and other scripts' digits: a parser's patterns
    are ASCII (re.ASCII), so no damaged or foreign digit is ever read as a number."""
    assert not _patterns_without_ascii(path)


class _CountingSink:
    """A sink that counts the rows handed to it and keeps none: what a parser itself holds is what is measured."""

    def __init__(self, path: Path):
        self.path, self.rows, self.run_id, self.run_start, self.run_meta = path, 0, "r", None, {}

    def add_rows(self, table, rows):
        n = sum(1 for _ in rows)
        self.rows += n
        return n

    def warn(self, line, message):
        pass


def _timing(n: int) -> bytes:
    return b"Timing is on.\n" + b"".join(b"-- kansoku query=q%d repetition=1\nTime: %d.%03d ms\n" % (i, i % 997, i % 1000)
                                         for i in range(n))


def _perf(n: int) -> bytes:
    sample = (b"postgres  %d   %d.%06d:   20408163 cpu-clock: \n"
              b"\t          167adf __strlen_evex+0x1f (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
              b"\t          4732d9 PostgresMain+0x919 (/usr/lib/postgresql/15/bin/postgres)\n\n")
    return b"".join(sample % (9915 + i % 4, 286 + i // 1000, i % 1000) for i in range(n))


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("fmt,make", [("psql-timing", _timing), ("perf-script", _perf)])
def test_a_parser_holds_the_same_memory_for_a_file_four_times_longer(tmp_path, monkeypatch, fmt, make):
    """psql \\timing and perf script outputs are read a line at a time: the parser's peak memory does not grow with
    the file (it held the whole text, its lines and every row before)."""
    import tracemalloc

    from kansoku import parsers
    from kansoku.parsers import bounds
    from kansoku.parsers.queries import timing

    monkeypatch.setattr(timing, "BATCH", 500)
    monkeypatch.setattr(bounds, "_CHUNK", 1 << 16)  # the line check's read, smaller than either file
    parse = next(f.parse for f in parsers.formats() if f.name == fmt)
    peaks = []
    for n in (1_500, 6_000):
        f = tmp_path / f"{n}.txt"
        f.write_bytes(make(n))
        sink = _CountingSink(f)
        tracemalloc.start()
        parse(f, sink)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert sink.rows
    assert peaks[1] < 1.3 * peaks[0] + 200_000, peaks


def test_file_names_with_a_newline_or_an_escape_sequence_are_printed_escaped(tmp_path):
    """A name holding a newline would forge a line of its own ('error: …'), one holding ESC drive the terminal:
    every message names them escaped (errors.for_terminal, used by the error and warning printers)."""
    from conftest import FIXTURES, run_tool

    run = tmp_path / "runs" / "run\nerror: a forged directory line"
    run.mkdir(parents=True)
    (run / "skipped\nerror: all files stored\x1b[2J").write_text("nothing a tool prints\n")
    damaged = run / "perf\nerror: a forged line\x1b[31m.txt"
    damaged.write_bytes((FIXTURES / "profiles" / "perf_postmaster" / "perf-script.txt").read_bytes()
                        .replace(b"286.439573:", b"nan:", 1))
    proc = run_tool("ingest", "-v", "--db", tmp_path / "k.duckdb", tmp_path / "runs")
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    assert "\x1b" not in out and "Traceback" not in out
    assert not [line for line in out.splitlines() if line.lstrip().startswith("error: a forged")
                or line.lstrip().startswith("error: all files")], out
    assert "run\\nerror: a forged directory line/perf\\nerror: a forged line\\x1b[31m.txt:1: expected" in out, out
    assert "skipped\\nerror: all files stored\\x1b[2J: not a known tool output" in out, out


@pytest.mark.slow  # a kill -9 trial: --all (CI); test_interrupts.py removes a killed ingest's leftovers quick
def test_a_killed_ingest_leaves_no_temporary_file_once_the_next_has_run(tmp_path):
    """kill -9 while the workers parse and sadf writes: what the ingest had in the temporary directory (DuckDB's
    row files, sadf's output) is in a directory of its own, which the next ingest removes; no 'leaked
    semaphore' warning reaches the terminal."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT, run_tool

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    runs = ROOT / "data" / "runs"
    if not runs.is_dir():
        pytest.skip("the example's runs are not in this checkout")
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "ingest"), "--jobs", "2", "--db",
                             str(tmp_path / "k.duckdb"), str(runs)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:  # until it has temporary files of its own
        if any(p.name.startswith("kansoku-sa-") or p.suffix == ".ndjson" for p in tmp.rglob("*")):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    time.sleep(2)  # the resource tracker, which outlives it by a moment
    assert "leaked semaphore" not in err, err
    left = [p.name for p in tmp.iterdir() if not p.name.startswith("kansoku-schema-")]
    assert all(name.startswith("kansoku-ingest-") for name in left), left
    small = tmp_path / "run"
    small.mkdir()
    (small / "pgbench.log").write_bytes((ROOT / "tests" / "fixtures" / "pgbench" / "study=scaleup" / "workload=read"
                                         / "config=checksums-off" / "clients=1" / "rep=1" / "pgbench.log").read_bytes())
    run_tool("ingest", "--db", tmp_path / "other.duckdb", small, env=env, check=True)
    assert [p.name for p in tmp.iterdir()] in ([], [f"kansoku-schema-{os.getuid()}"])


@pytest.mark.parametrize("keep_going", [True, False])
def test_a_file_duckdb_aborts_on_loses_only_itself_with_keep_going(tmp_path, monkeypatch, keep_going):
    """A statement DuckDB fails on aborts the whole ingest's transaction: with --keep-going the other files are
    still stored (the ingest runs again without that file), and the file is one error, not two."""
    from conftest import FIXTURES, ro_con
    from kansoku.ingest.pipeline import ingest
    from kansoku.parsers.pgbench import txlog

    src = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"
    for run in "abc":
        (tmp_path / "runs" / run).mkdir(parents=True)
        (tmp_path / "runs" / run / "pgbench.log").write_bytes((src / "pgbench.log").read_bytes())
    bad = tmp_path / "runs" / "b" / "pgbench_log.12350"
    bad.write_bytes((src / "pgbench_log.12350").read_bytes())
    monkeypatch.setattr(txlog, "_load", lambda path, sink, table, *a, **k: (
        sink.load_sql(table, "SELECT error('a statement DuckDB aborts on')"), 0))
    rep = ingest([tmp_path / "runs"], tmp_path / "k.duckdb", keep_going=keep_going, jobs=1)
    assert len(rep.errors) == 1 and rep.errors[0].startswith(f"{bad}: "), rep.errors
    assert [f.status for f in rep.files if f.path == str(bad)] == ["failed"]
    assert rep.committed == keep_going
    if keep_going:
        con = ro_con(tmp_path / "k.duckdb")
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 3


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("where", ["run.toml", "host=db/host.toml"])
def test_a_run_description_beyond_what_collect_writes_is_refused_with_its_path(tmp_path, where):
    """A run.toml holding a value larger than one stored row can hold (DuckDB reads a row as one JSON object,
    of bounded size) is refused with its path, exit 2, not a traceback; with --keep-going the other runs are
    stored."""
    from conftest import FIXTURES, ro_con, run_tool

    src = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"
    for run in ("a", "b"):
        (tmp_path / "runs" / run).mkdir(parents=True)
        (tmp_path / "runs" / run / "pgbench.log").write_bytes((src / "pgbench.log").read_bytes())
    big = tmp_path / "runs" / "b" / where
    big.parent.mkdir(exist_ok=True)
    big.write_text('hostname = "db"\nnote = "' + "x" * (33 << 20) + '"\n')
    if where != "run.toml":
        (big.parent / "pgbench.log").write_bytes((src / "pgbench.log").read_bytes())
    for keep_going in ((), ("--keep-going",)):
        db = tmp_path / f"k{len(keep_going)}.duckdb"
        proc = run_tool("ingest", *keep_going, "--db", db, tmp_path / "runs")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{big}: expected a run description of at most" in proc.stderr, proc.stderr
        if keep_going:
            assert ro_con(db).execute("SELECT list(run_id) FROM runs").fetchone()[0] == ["a"]


_PGB = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"
_FIO = FIXTURES / "fio" / "rw=read" / "format=normal" / "rep=1"
SAR_TEXT = ("Linux 5.4.0 (db1) \t04/18/19 \t_x86_64_\t(2 CPU)\n\n"
            "10:00:00        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
            "10:00:01        all      1.00      0.00      1.00      0.00      0.00     98.00\n"
            "10:00:02        all      2.00      0.00      1.00      0.00      0.00     97.00\n").encode()
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _fullwidth(rx: bytes):
    """Rewrite the first match of rx (a number a tool printed) in fullwidth digits."""
    def edit(data: bytes) -> bytes:
        m = re.search(rx, data, flags=re.M)
        assert m, rx
        return data[:m.start()] + m.group().decode().translate(FULLWIDTH).encode() + data[m.end():]
    return edit


# (file name, its bytes, the number to rewrite, the line that holds it)
FULLWIDTH_CASES = {
    "sar text": ("sar.txt", SAR_TEXT, rb"(?<=all      )2\.00", 5),
    "sadf -d": ("sadf_d.csv", (FIXTURES / "sar" / "run1" / "sadf_d.csv").read_bytes(), rb"(?<=UTC;-1;)2\.08", 2),
    "iostat": ("iostat_x.txt", (FIXTURES / "iostat" / "iostat_x.txt").read_bytes(), rb"40\.60", 5),
    "vmstat": ("vmstat.txt", (FIXTURES / "vmstat" / "vmstat.txt").read_bytes(), rb"21930212", 3),
    "pgbench": ("pgbench.log", (_PGB / "pgbench.log").read_bytes(), rb"(?<=progress: 1\.0 s, )181\.0", None),
    "strace -c": ("strace_c.txt", (FIXTURES / "strace" / "variant=c_f" / "strace_c.txt").read_bytes(),
                  rb"149540", None),
    "pg_test_fsync": ("pg_test_fsync.txt", (FIXTURES / "pg_test_fsync" / "pg_test_fsync15.18_s1.txt").read_bytes(),
                      rb"18639\.459", 6),
    "fio text": ("fio_output.txt", (_FIO / "fio_output.txt").read_bytes(), rb"(?<=clat \(usec\): min=)29", None),
    "pg_stat csv": ("pg_stat_bgwriter.after.csv", (FIXTURES / "pg_stat" / "clients=2" /
                                                  "pg_stat_bgwriter.after.csv").read_bytes(), rb"(?<=,)209447", 2),
    "psql timing": ("psql-timing.txt", (FIXTURES / "queries" / "timing" / "psql-timing.txt").read_bytes(),
                    rb"(?<=Time: )123\.597", 8),
    "folded stacks": ("stacks.folded", (FIXTURES / "profiles" / "folded" / "stacks.folded").read_bytes(),
                      rb"(?<=_int_malloc )20408163", 1),
}


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("case", sorted(FULLWIDTH_CASES))
def test_fullwidth_digits_are_refused_with_file_and_line(tmp_path, tmp_db, case):
    name, data, rx, line = FULLWIDTH_CASES[case]
    run = tmp_path / "runs" / "run"
    run.mkdir(parents=True)
    (run / name).write_bytes(_fullwidth(rx)(data))
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    if line is None:
        damaged = (run / name).read_bytes()
        at = damaged.index(re.search(rx, data, flags=re.M).group().decode().translate(FULLWIDTH).encode())
        line = damaged[:at].count(b"\n") + 1
    assert f"{run / name}:{line}:" in proc.stderr, proc.stderr
    if tmp_db.exists():
        assert ro_con(tmp_db).execute("SELECT count(*) FROM sources").fetchone()[0] == 0


def test_a_template_left_half_made_by_kill_is_removed_at_the_next_open(tmp_path):
    """kill -9 while the schema template is written leaves its '.new-*' file: the next open of a store removes
    it, but never one a live process is writing (DuckDB's lock on it says so)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT / "tools")}
    folder = tmp / f"kansoku-schema-{os.getuid()}"
    make = "from kansoku.store.db import schema_template; schema_template()"
    for _ in range(20):  # until a kill lands while the file is being written
        proc = subprocess.Popen([sys.executable, "-c", make], env=env)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not list(folder.glob(".new-*.duckdb")):
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if list(folder.glob(".new-*.duckdb")):
            break
        for made in folder.glob("*.duckdb"):
            made.unlink()
    stale = list(folder.glob(".new-*.duckdb"))
    assert stale, "no kill landed while the template was written"
    held = folder / ".new-held.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(held)!r}); "
                               "print('open', flush=True); time.sleep(120)"], env=env, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        run_tool("ingest", "--db", tmp_path / "k.duckdb", FIXTURES / "vmstat", env=env, check=True)
        left = sorted(p.name for p in folder.glob(".new-*"))
        assert left == [held.name], left
    finally:
        holder.kill()
        holder.wait()
