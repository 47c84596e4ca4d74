"""Plausibility bounds, one table per format (parsers/bounds.py, and sysstat's in common.py).

Every bound of every table is checked both ways on a real DuckDB store: a value at the edge is stored, one
beyond it (and NaN, infinity) is refused with the file named. A value sysstat really prints (PSI %scpu
105.59 at a 1 s interval) is stored as printed with a warning; one no version prints is refused.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import FIXTURES, ro_con, run_tool
from kansoku.errors import ParseError
from kansoku.parsers import bounds, modules
from kansoku.store.db import FileSink, scratch_store

ALL = [(m.name, tb, b) for m in modules() for tb in m.bounds for b in tb.bounds]


def test_every_measured_family_declares_its_bounds():
    declared = {m.name for m in modules() if m.bounds}
    assert {"pgbench", "pgbench_log", "postgres_log", "pg_stat", "strace", "fio"} <= declared


_DEFAULTS = {"VARCHAR": "x", "INTEGER": 1, "BIGINT": 1, "DOUBLE": 1.0, "BOOLEAN": False, "JSON": "{}",
             "TIMESTAMP WITH TIME ZONE": datetime(2026, 1, 1).astimezone()}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    store = scratch_store(tmp_path_factory.mktemp("bounds") / "s.duckdb")
    yield store
    store.close()


def _row(store, table: str) -> dict:
    """A row with only the columns that may not be NULL filled in."""
    cols = store.table_columns(table)
    required = {c for (c,) in store.query("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                          "AND NOT is_nullable", [table])}
    return {c: _DEFAULTS.get(t.upper()) if c in required else None for c, t in cols.items()}


def _check_one(store, table: str, column: str, value, tb, b=None, added: bool = False) -> FileSink:
    """``added``: the row goes through the sink's add_rows, whose rows the check reads without a statement
    (bounds._inside), else straight into the table (the statements' path)."""
    row = _row(store, table)
    if b is not None:  # the row is one the bound applies to
        row.update({c: vs[0] for c, vs in b.where})
    row[column] = value
    with store.file_transaction():  # never committed: rolled back
        sink = FileSink(store=store, path=Path("/runs/r/file.txt"), run_id="r", source_id="s1", file_no=1)
        if added:
            sink.add_rows(table, [{k: v for k, v in row.items() if k not in ("source_id", "run_id", "file_no")}])
            assert sink.added_rows(table) is not None
        else:
            # the file's rows: by its source_id, or by its number in the tables keyed by it (transaction logs)
            own = {"source_id": "s1"} if "source_id" in store.table_columns(table) else {"file_no": 1}
            store.insert_rows(table, [{**row, **own}])
            sink.tables.add(table)
        bounds.check(sink, [tb])
    return sink


def _outside(b):
    out = []
    if isinstance(b.low, datetime) or isinstance(b.high, datetime):
        if b.low is not None:
            out.append(b.low - timedelta(days=1))
        if b.high is not None:
            out.append(b.high + timedelta(days=1))
        return out
    if b.low is not None:
        out.append(b.low - 1)
    if b.high is not None:
        out.append(b.high * 1.5 + 1)
    return out


@pytest.mark.quick_sample(12)
@pytest.mark.parametrize("module,tb,b", ALL, ids=[f"{m}:{tb.table}.{b.column}" for m, tb, b in ALL])
def test_each_bound_stores_its_edges_and_refuses_beyond(scratch, module, tb, b):
    ctype = scratch.table_columns(tb.table)[b.column].upper()
    for edge in (b.low, b.high):
        if edge is not None:
            for added in (False, True):
                sink = _check_one(scratch, tb.table, b.column, int(edge) if ctype in ("BIGINT", "INTEGER") else edge,
                                  tb, b, added)
                assert not [w for w in sink.warnings if b.warn_above is None], sink.warnings
    bad = _outside(b)
    if ctype == "DOUBLE":
        bad += [float("nan"), float("inf"), float("-inf")]
    assert bad, "a bound that refuses nothing"
    for v in bad:
        if ctype in ("BIGINT", "INTEGER"):
            v = int(v)
            if not -2 ** 63 <= v < 2 ** 63:
                continue
        with pytest.raises(ParseError) as exc:
            _check_one(scratch, tb.table, b.column, v, tb, b)
        assert "/runs/r/file.txt" in str(exc.value) and b.column in str(exc.value)
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            continue  # add_rows stores NaN and infinities as NULL, with a warning (FileSink._checked)
        with pytest.raises(ParseError) as added:  # the same refusal, in the same words, without a statement
            _check_one(scratch, tb.table, b.column, v, tb, b, added=True)
        assert str(added.value) == str(exc.value)
    if b.warn_above is not None:  # stored as printed with the same warning both ways
        above = (b.warn_above + b.high) / 2 if b.high is not None else b.warn_above * 2
        ways = [_check_one(scratch, tb.table, b.column, above, tb, b, added).warnings for added in (False, True)]
        assert ways[0] and ways[0] == ways[1]


def test_a_repeated_row_is_refused(scratch):
    tb = next(tb for m in modules() for tb in m.bounds if tb.unique)
    row = _row(scratch, tb.table)
    row.update(thread=0, interval_start_epoch_s=1795304976)
    with scratch.file_transaction():  # never committed: rolled back
        sink = FileSink(store=scratch, path=Path("/runs/r/log"), run_id="r", source_id="s1")
        scratch.insert_rows(tb.table, [{**row, "source_id": "s1"}] * 2)
        sink.tables.add(tb.table)
        with pytest.raises(ParseError, match="twice"):
            bounds.check(sink, [tb])
    with scratch.file_transaction():  # the same through add_rows (bounds._inside sees the repeat)
        sink = FileSink(store=scratch, path=Path("/runs/r/log"), run_id="r", source_id="s1")
        sink.add_rows(tb.table, [{k: v for k, v in row.items() if k not in ("source_id", "run_id")}] * 2)
        with pytest.raises(ParseError, match="twice"):
            bounds.check(sink, [tb])


# -- sysstat: what sar really prints above 100 % ------------------------------------------------------------

SADF_D = FIXTURES / "sar" / "run1" / "sadf_d.csv"


def _sadf_run(tmp_path: Path, old: bytes, new: bytes) -> Path:
    run = tmp_path / "runs" / "run"
    run.mkdir(parents=True)
    shutil.copy(SADF_D.parent / "run.toml", run / "run.toml")
    data = SADF_D.read_bytes()
    assert old in data
    (run / "sadf_d.csv").write_bytes(data.replace(old, new, 1))
    return run


def test_psi_overshoot_at_one_second_is_stored_as_printed_and_warned(tmp_path, tmp_db):
    """The reported file: '%scpu' 105.59 at a 1 s interval (sysstat printed it) refused the whole run."""
    run = _sadf_run(tmp_path, b"vm;1;2026-11-21 23:45:40 UTC;20.15;24.78;30.01;40.86",
                    b"vm;1;2026-11-21 23:45:40 UTC;20.15;24.78;30.01;105.59")
    proc = run_tool("ingest", "-v", "--db", tmp_db, run)
    assert proc.returncode == 0, proc.stderr
    con = ro_con(tmp_db)
    assert con.execute("SELECT value FROM sys_metrics WHERE metric = '%scpu' AND value > 100").fetchall() == [(105.59,)]
    warnings = [w for (w,) in con.execute("SELECT message FROM ingest_warnings").fetchall()]
    assert any("%scpu 105.59 above 100 %" in w and "stored as printed" in w for w in warnings), warnings


def test_a_kernel_psi_average_above_100_is_refused(tmp_path, tmp_db):
    """The kernel's own averages (%scpu-10) are capped at 100.00: 105.59 there is a damaged number."""
    run = _sadf_run(tmp_path, b"vm;1;2026-11-21 23:45:40 UTC;20.15;", b"vm;1;2026-11-21 23:45:40 UTC;120.15;")
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert proc.returncode == 2, proc.stderr
    assert "%scpu-10" in proc.stderr and str(run / "sadf_d.csv") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_psi_beyond_any_printable_share_is_not_stored(tmp_path, tmp_db):
    run = _sadf_run(tmp_path, b"vm;1;2026-11-21 23:45:40 UTC;20.15;24.78;30.01;40.86",
                    b"vm;1;2026-11-21 23:45:40 UTC;20.15;24.78;30.01;1375298.72")
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert proc.returncode == 0, proc.stderr
    con = ro_con(tmp_db)
    assert con.execute("SELECT count(*) FROM sys_metrics WHERE metric = '%scpu' AND value > 10000").fetchone()[0] == 0


# -- run.toml -----------------------------------------------------------------------------------------------

PGB = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("key,when", [("start", "2150-11-21T23:44:12+00:00"), ("start", "1900-01-01T00:00:00+00:00"),
                                      ("end", "2150-11-21T23:44:12+00:00")])
def test_a_run_dated_outside_any_clock_is_refused(tmp_path, tmp_db, key, when):
    run = tmp_path / "runs" / "run"
    shutil.copytree(PGB, run)
    toml = (run / "run.toml").read_text()
    lines = [ln for ln in toml.splitlines() if not ln.startswith(f"{key} =")]
    lines.insert(2, f"{key} = {when}")
    (run / "run.toml").write_text("\n".join(lines) + "\n")
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"{run / 'run.toml'}:3:" in proc.stderr and key in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not tmp_db.exists() or ro_con(tmp_db).execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_the_streamed_sa_path_stores_psi_overshoot_warned(scratch):
    """The binary sa path checks its stored rows in SQL (plausible.check_stored): the reported 1 s sa
    file was refused at '%scpu' 105.59; stored as printed with a warning, the kernel's averages still capped."""
    from datetime import timezone

    from kansoku.parsers.sysstat import plausible

    def rows(metric, value):
        return [{"source_id": "s1", "run_id": "r", "tool": "sar", "format": "sa-binary",
                 "ts": datetime(2026, 1, 1, tzinfo=timezone.utc), "interval_s": 1.0, "sample": 33,
                 "since_boot": False, "activity": "psi-cpu", "instance": None, "metric": metric, "value": value,
                 "line": None}]

    with scratch.file_transaction():  # never committed: rolled back
        sink = FileSink(store=scratch, path=Path("/runs/r/sa.bin"), run_id="r", source_id="s1")
        scratch.insert_rows("sys_metrics", rows("%scpu", 105.59))
        plausible.check_stored(sink)
        assert any("%scpu 105.59 above 100 %" in w.message for w in sink.warnings), sink.warnings
    with scratch.file_transaction():  # never committed: rolled back
        sink = FileSink(store=scratch, path=Path("/runs/r/sa.bin"), run_id="r", source_id="s1")
        scratch.insert_rows("sys_metrics", rows("%scpu-10", 105.59))
        with pytest.raises(ParseError, match="%scpu-10"):
            plausible.check_stored(sink)


def test_every_format_declares_its_longest_line():
    """bounds.TEXT names every registered format, and nothing else (a renamed format would fall back silently)."""
    assert sorted(bounds.TEXT) == sorted(f.name for m in modules() for f in m.formats)


@pytest.mark.parametrize("where", ["first", "middle", "last", "last without newline"])
def test_a_line_at_the_limit_is_read_and_one_byte_more_refused(tmp_path, where):
    limit = bounds.TEXT["pgbench-txlog"].longest_line
    for length, refused in ((limit, False), (limit + 1, True)):
        lines = [b"1 2 3"] * 3000  # more than a read chunk, so that the long line may sit inside one
        at = {"first": 0, "middle": 1500, "last": len(lines)}[where.split()[0]]
        lines.insert(at, b"7" * length)
        data = b"\n".join(lines) + (b"" if where == "last without newline" else b"\n")
        f = tmp_path / f"log.{length}"
        f.write_bytes(data)
        if not refused:
            bounds.check_text(f, "pgbench-txlog")
            continue
        with pytest.raises(ParseError) as exc:
            bounds.check_text(f, "pgbench-txlog")
        assert exc.value.line == at + 1 and f"at most {limit:,} bytes" in str(exc.value)


def test_a_long_line_across_read_chunks_is_refused(tmp_path):
    f = tmp_path / "server.log"
    f.write_bytes(b"a line\n" * 100_000 + b"y" * (9 << 20) + b"\nthe end\n")
    with pytest.raises(ParseError) as exc:
        bounds.check_text(f, "postgres-log")
    assert exc.value.line == 100_001


def test_a_file_appended_to_itself_is_refused_unless_its_tool_repeats(tmp_path):
    f = tmp_path / "out.txt"
    once = b"".join(b"line %d\n" % i for i in range(50_000))
    f.write_bytes(once + once)
    with pytest.raises(ParseError) as exc:
        bounds.check_text(f, "fio-text")
    assert exc.value.line == 50_001 and "appended to itself" in str(exc.value)
    bounds.check_text(f, "pgbench-script")  # a script may repeat its statements
    f.write_bytes(once + once[:-2] + b"0\n")  # the same length, its last number different
    bounds.check_text(f, "fio-text")


def test_a_compressed_log_whose_text_is_appended_to_itself_is_refused(tmp_path, tmp_db):
    """A perf script appended to itself, then gzipped (its bytes do not repeat, its text does): refused with the
    line where the copy starts, never a profile of twice the samples."""
    import gzip

    from conftest import ROOT

    src = next((ROOT / "data" / "runs" / "example").rglob("perf-script.txt.gz"))
    text = gzip.decompress(src.read_bytes())
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "perf-script.txt.gz").write_bytes(gzip.compress(text + text, mtime=0))
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = text.count(b"\n") + 1
    assert f"perf-script.txt.gz:{line}: expected the tool's output once" in proc.stderr, proc.stderr
    (run / "perf-script.txt.gz").write_bytes(gzip.compress(text, mtime=0))  # once: read
    assert run_tool("ingest", "--db", tmp_db, run).returncode == 0


def _damaged_run(tmp_path, rep: str, name: str, edit) -> Path:
    from conftest import ROOT

    where = Path("study=scaleup") / "workload=read" / "config=checksums-off" / rep
    src = ROOT / "tests" / "fixtures" / "pgbench" / where
    run = tmp_path / "runs" / where
    shutil.copytree(src, run)
    lines = (run / name).read_text().splitlines(keepends=True)
    (run / name).write_text("".join(edit(lines)))
    return run


def _field_set(line: str, pos: int, value: str) -> str:
    fields = line.split()
    fields[pos] = value
    return " ".join(fields) + "\n"


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("rep, name, edit, where", [
    # an aggregate interval's minimum latency damaged on line 5
    ("clients=8/rep=agg", "pgbench_log.15216",
     lambda ls: ls[:4] + [_field_set(ls[4], 4, "-inf")] + ls[5:], ":5: expected latency_min_us"),
    # lines 2 and 3 appended again: refused at the second copy of line 2, which it names
    ("clients=8/rep=agg", "pgbench_log.15216.1", lambda ls: ls + ls[1:3], None),
    # a transaction's latency damaged on line 7 of a per-transaction log
    ("clients=1/rep=1", "pgbench_log.12350",
     lambda ls: ls[:6] + [_field_set(ls[6], 2, "-5")] + ls[7:], ":7: expected latency_us"),
])
def test_a_pgbench_log_row_refused_is_named_by_its_line(tmp_path, tmp_db, rep, name, edit, where):
    """pgbench's logs are stored without their line numbers; a row refused is found in the file again, so
    the error names its line as for every other format."""
    run = _damaged_run(tmp_path, rep, name, edit)
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    if where is None:  # the earliest interval repeated: line 2's, again two lines before the end
        where = f":{len((run / name).read_text().splitlines()) - 1}: expected each aggregate interval once"
        assert "first at line 2" in proc.stderr, proc.stderr
    assert f"{name}{where}" in proc.stderr, proc.stderr
