"""pgbench standard output (summary, -r, -P) and pgbench -i output, every version 8.4 .. 18.

Real captures: tests/fixtures/pgbench/ (copied from corpus/real, PostgreSQL 15.20) and, when the
corpus is present, every pgbench file under it (test_pgbench_log.py walks them all). Versions with no
real capture are covered by inline fixtures built line by line from shared/docs/formats.md §1.1-§1.3
(the printf formats of printResults/printProgressReport in each release); each says so.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, ro_con, run_tool
from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead
from kansoku.parsers.pgbench import init as pgbench_init
from kansoku.parsers.pgbench import stdout as pgbench

RUN = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off"


class FakeSink:
    """Collects what a parser writes (pgbench stdout needs no database)."""

    def __init__(self, path: Path, run_start=None):
        self.path, self.run_id, self.run_start = path, "r", run_start
        self.rows: dict[str, list[dict]] = {}
        self.warnings: list[tuple] = []
        self.facts: dict = {}
        self.version = None

    def add_rows(self, table, rows):
        rows = list(rows)
        self.rows.setdefault(table, []).extend(rows)
        return len(rows)

    def warn(self, line, message):
        self.warnings.append((line, message))

    def fact(self, name, value):
        self.facts[name] = value

    def set_tool_version(self, v):
        self.version = v


def parse_text(tmp_path: Path, text: str, run_start=None) -> FakeSink:
    p = tmp_path / "pgbench.log"
    p.write_text(text)
    head = FileHead(p, p.read_bytes()[:65536], p.stat().st_size)
    assert pgbench.sniff_stdout(head), "sniffer must claim a pgbench capture"
    sink = FakeSink(p, run_start)
    pgbench.parse_stdout(p, sink)
    return sink


# -- version inventory (inline: no real capture of these versions exists; built from formats.md §1.1) --

V84 = """transaction type: TPC-B (sort of)
scaling factor: 10
query mode: simple
number of clients: 4
number of transactions per client: 1000
number of transactions actually processed: 4000/4000
tps = 812.345678 (including connections establishing)
tps = 815.000001 (excluding connections establishing)
"""
V93_R = """starting vacuum...end.
transaction type: TPC-B (sort of)
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 2
duration: 5 s
number of transactions actually processed: 1500
tps = 299.1 (including connections establishing)
tps = 300.2 (excluding connections establishing)
statement latencies in milliseconds:
\t0.002100\t\\set nbranches 1 * :scale
\t1.234567\tBEGIN;
\t2.500000\tEND;
"""
V94_P = """progress: 1.0 s, 120.0 tps, lat 8.312 ms stddev 2.100
progress: 2.0 s, 0.0 tps, lat nan ms stddev -nan
transaction type: TPC-B (sort of)
scaling factor: 1
query mode: prepared
number of clients: 1
number of threads: 1
duration: 2 s
number of transactions actually processed: 120
latency average: 8.312 ms
latency stddev: 2.100 ms
tps = 59.9 (including connections establishing)
tps = 60.0 (excluding connections establishing)
"""
V95_RL = """progress: 1.0 s, 100.0 tps, lat 1.000 ms stddev 0.500, lag 0.100 ms, 3 skipped
transaction type: TPC-B (sort of)
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
duration: 1 s
number of transactions actually processed: 100
number of transactions skipped: 3 (2.913 %)
number of transactions above the 5.0 ms latency limit: 4 (3.883 %)
latency average: 1.000 ms
latency stddev: 0.500 ms
rate limit schedule lag: avg 0.100 (max 4.000) ms
tps = 99.0 (including connections establishing)
tps = 100.0 (excluding connections establishing)
"""
V96_SCRIPT = """transaction type: /tmp/read.sql
scaling factor: 1
query mode: simple
number of clients: 8
number of threads: 8
duration: 60 s
number of transactions actually processed: 32484
latency average = 22.203 ms
latency stddev = 3.000 ms
tps = 540.479109 (including connections establishing)
tps = 540.578481 (excluding connections establishing)
script statistics:
 - statement latencies in milliseconds:
         0.003  \\set aid random(1, 100000 * :scale)
        22.100  SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
"""
V11_LIMIT = """transaction type: <builtin: select only>
scaling factor: 100
query mode: extended
number of clients: 16
number of threads: 4
duration: 10 s
number of transactions actually processed: 10000
number of transactions above the 10.0 ms latency limit: 12/10000 (0.120 %)
latency average = 1.600 ms
latency stddev = 0.400 ms
tps = 1000.000000 (including connections establishing)
tps = 1001.000000 (excluding connections establishing)
statement latencies in milliseconds:
         0.001  \\set aid random(1, 100000 * :scale)
         1.590  SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
"""
V13_PART = """transaction type: <builtin: TPC-B (sort of)>
scaling factor: 10
partition method: range
partitions: 4
query mode: simple
number of clients: 4
number of threads: 2
duration: 5 s
number of transactions actually processed: 5000
latency average = 4.000 ms
tps = 999.500000 (including connections establishing)
tps = 1000.000000 (excluding connections establishing)
"""
V14 = """pgbench (14.13)
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
duration: 3 s
number of transactions actually processed: 3000
latency average = 2.000 ms
initial connection time = 5.123 ms
tps = 1000.500000 (without initial connection time)
"""
V14_CONNECT = """pgbench (14.13, server 13.4)
transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
duration: 3 s
number of transactions actually processed: 900
latency average = 6.600 ms
average connection time = 3.300 ms
tps = 300.000000 (including reconnection times)
"""
V18_SCRIPTS = """pgbench (18.3)
transaction type: multiple scripts
scaling factor: 1
query mode: simple
number of clients: 4
number of threads: 2
maximum number of tries: 3
duration: 3 s
number of transactions actually processed: 1000
number of failed transactions: 10 (0.990%)
number of transactions retried: 20 (1.980%)
total number of retries: 25
latency average = 0.833 ms
latency stddev = 1.313 ms
initial connection time = 14.059 ms
tps = 333.333333 (without initial connection time)
SQL script 1: <builtin: TPC-B (sort of)>
 - weight: 1 (targets 50.0% of total)
 - 510 transactions (50.5% of total)
 - number of transactions actually processed: 500 (tps = 166.666667)
 - number of failed transactions: 10 (1.961%)
 - number of transactions retried: 20 (3.922%)
 - total number of retries: 25
 - latency average = 1.000 ms
 - latency stddev = 1.500 ms
 - statement latencies in milliseconds, failures and retries:
         0.002           0          0 \\set aid random(1, 100000 * :scale)
         0.700          10         25 UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SQL script 2: <builtin: select only>
 - weight: 1 (targets 50.0% of total)
 - 500 transactions (49.5% of total)
 - number of transactions actually processed: 500 (tps = 166.666667)
 - number of failed transactions: 0 (0.000%)
 - latency average = 0.666 ms
 - latency stddev = 0.100 ms
"""

VERSIONS = [
    # (label, text, expected summary fields)
    ("8.4 -t, no threads line", V84, dict(clients=4, threads=None, transactions_per_client=1000,
                                           transactions_processed=4000, transactions_expected=4000, tps=815.000001,
                                           tps_including_connections=812.345678,
                                           tps_basis="excluding connections establishing")),
    ("9.3 -r tab rows", V93_R, dict(threads=2, duration_s=5, tps=300.2, latency_avg_ms=None)),
    ("9.4 latency colon, -P nan", V94_P, dict(latency_avg_ms=8.312, latency_stddev_ms=2.1, query_mode="prepared")),
    ("9.5 -R -L skipped", V95_RL, dict(transactions_skipped=3, latency_limit_ms=5.0,
                                       transactions_above_latency_limit=4, rate_limit_lag_avg_ms=0.1,
                                       rate_limit_lag_max_ms=4.0)),
    ("9.6-10 script statistics", V96_SCRIPT, dict(transaction_type="/tmp/read.sql", latency_avg_ms=22.203,
                                                  tps=540.578481)),
    ("11-13 latency limit N/M", V11_LIMIT, dict(transactions_above_latency_limit=12, latency_limit_ms=10.0)),
    ("13 partitions", V13_PART, dict(partition_method="range", partitions=4)),
    ("14 initial connection time", V14, dict(pgbench_version="14.13", initial_connection_time_ms=5.123,
                                             tps=1000.5, tps_basis="without initial connection time")),
    ("14 -C reconnection", V14_CONNECT, dict(pgbench_version="14.13", server_version="13.4",
                                             average_connection_time_ms=3.3, tps=300.0,
                                             tps_basis="including reconnection times")),
    ("18 per-script block", V18_SCRIPTS, dict(pgbench_version="18.3", max_tries=3, transactions_failed=10,
                                              transactions_retried=20, total_retries=25, tps=333.333333)),
]


@pytest.mark.parametrize("label,text,expected", VERSIONS, ids=[v[0] for v in VERSIONS])
def test_pgbench_summary_of_each_version_reads_its_values(tmp_path, label, text, expected):
    sink = parse_text(tmp_path, text)
    (summary,) = sink.rows["pgbench_summary"]
    assert summary["status"] == "ok"
    for key, value in expected.items():
        got = summary.get(key)
        if isinstance(value, float):
            assert got == pytest.approx(value), key
        else:
            assert got == value, key


def test_statement_latencies_of_each_version_read_with_their_statements(tmp_path):
    rows = parse_text(tmp_path, V93_R).rows["pgbench_statement_latency"]  # 9.1-9.5: TAB, %f, TAB
    assert [r["latency_ms"] for r in rows] == [0.0021, 1.234567, 2.5]
    assert rows[0]["statement"] == "\\set nbranches 1 * :scale" and rows[1]["statement_no"] == 2
    rows = parse_text(tmp_path, V96_SCRIPT).rows["pgbench_statement_latency"]  # 9.6-10 ' - ' heading
    assert rows[1]["latency_ms"] == 22.1 and rows[1]["statement"].startswith("SELECT abalance")
    rows = parse_text(tmp_path, V18_SCRIPTS).rows["pgbench_statement_latency"]  # 18: one space before text
    assert rows[1] == dict(latency_ms=0.7, failures=10, retries=25, script_no=1, statement_no=2,
                           statement="UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;")


def test_pgbench_18_per_script_blocks_with_retries(tmp_path):
    scripts = parse_text(tmp_path, V18_SCRIPTS).rows["pgbench_scripts"]
    assert [s["script_no"] for s in scripts] == [1, 2]
    assert scripts[0]["transactions"] == 510 and scripts[0]["transactions_processed"] == 500
    assert scripts[0]["tps"] == pytest.approx(166.666667)
    assert scripts[0]["transactions_retried"] == 20 and scripts[0]["total_retries"] == 25


def _stdout_run(tmp_path: Path, name: str, text: str) -> Path:
    d = tmp_path / "runs" / name
    d.mkdir(parents=True)
    (d / "pgbench.log").write_text(text)
    return d


def _script_rows(db: Path) -> tuple[int, int, int]:
    con = ro_con(db)
    try:
        return con.execute("SELECT (SELECT count(*) FROM pgbench_summary), (SELECT count(*) FROM pgbench_scripts), "
                           "(SELECT count(*) FROM pgbench_statement_latency)").fetchone()
    finally:
        con.close()


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("printed, damaged, column", [
    (" - number of transactions actually processed: 500 (tps = 166.666667)",
     " - number of transactions actually processed: 500 (tps = 1e11)", "tps"),
    (" - latency average = 0.666 ms", " - latency average = 1e12 ms", "latency_avg_ms"),
    (" - latency stddev = 1.500 ms", " - latency stddev = -1.500 ms", "latency_stddev_ms"),
    ("         0.700          10", "        -0.700          10", "latency_ms"),
])
def test_a_script_or_statement_value_outside_its_bounds_is_refused_at_its_line(tmp_path, tmp_db, printed, damaged,
                                                                               column):
    """The per-script and per-statement tables keep no line, so the store's range check named the file alone: a
    value no pgbench prints is refused as its line is read, exit 2, and the store keeps the run it held."""
    run_tool("ingest", "--db", tmp_db, _stdout_run(tmp_path, "good", V18_SCRIPTS), check=True)
    before = _script_rows(tmp_db)
    assert before == (1, 2, 2)
    assert printed in V18_SCRIPTS
    text = V18_SCRIPTS.replace(printed, damaged, 1)  # (the first script's)
    line = text[:text.index(damaged)].count("\n") + 1
    proc = run_tool("ingest", "--db", tmp_db, _stdout_run(tmp_path, "bad", text))
    assert proc.returncode == 2 and "1 file(s) could not be ingested" in proc.stderr, proc.stderr
    assert f"pgbench.log:{line}: expected {column} between 0 and " in proc.stderr, proc.stderr
    assert _script_rows(tmp_db) == before


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("printed, damaged, column, kind", [
    (" - weight: 1 (targets 50.0% of total)", " - weight: 99999999999 (targets 50.0% of total)", "weight", "INTEGER"),
    (" - 510 transactions (50.5% of total)", " - 99999999999999999999 transactions (50.5% of total)", "transactions",
     "BIGINT"),
    ("         0.700          10         25", "         0.700          10 99999999999999999999", "retries", "BIGINT"),
])
def test_a_script_or_statement_count_beyond_the_stores_integers_is_refused_at_its_line(tmp_path, tmp_db, printed,
                                                                                      damaged, column, kind):
    """A count too large for its column (pgbench_scripts.weight an INTEGER, the other counts BIGINT) was refused by
    the store's integer check naming the file alone: it is refused at its line as read, exit 2, the store kept."""
    run_tool("ingest", "--db", tmp_db, _stdout_run(tmp_path, "good", V18_SCRIPTS), check=True)
    before = _script_rows(tmp_db)
    text = V18_SCRIPTS.replace(printed, damaged, 1)
    line = text[:text.index(damaged)].count("\n") + 1
    proc = run_tool("ingest", "--db", tmp_db, _stdout_run(tmp_path, "bad", text))
    assert proc.returncode == 2 and "1 file(s) could not be ingested" in proc.stderr, proc.stderr
    assert f"pgbench.log:{line}: expected a count for {column!r} that fits the store's {kind}" in proc.stderr, \
        proc.stderr
    assert _script_rows(tmp_db) == before


def test_a_nan_pgbench_prints_for_a_script_is_not_refused_as_read(tmp_path):
    """'-nan' (a script that ran no transaction) passes the parse-time bounds: the sink stores it as NULL."""
    sink = parse_text(tmp_path, V18_SCRIPTS.replace(" - latency stddev = 0.100 ms", " - latency stddev = -nan ms"))
    assert math.isnan(sink.rows["pgbench_scripts"][1]["latency_stddev_ms"])


def test_progress_lines_of_each_version_read_tps_latency_and_lag(tmp_path):
    start = datetime(2026, 11, 21, 23, 48, 32, tzinfo=timezone.utc)
    prog = parse_text(tmp_path, V94_P, run_start=start).rows["pgbench_progress"]
    assert prog[0]["tps"] == 120.0 and prog[0]["ts"] == datetime(2026, 11, 21, 23, 48, 33, tzinfo=timezone.utc)
    assert math.isnan(prog[1]["latency_avg_ms"])  # 9.4-10 divide by zero in an empty interval
    prog = parse_text(tmp_path, V95_RL).rows["pgbench_progress"]
    assert prog[0]["lag_ms"] == 0.1 and prog[0]["skipped"] == 3
    # 9.6+ --progress-timestamp: Unix epoch in place of elapsed seconds (inline, formats.md §1.3)
    prog = parse_text(tmp_path, "progress: 1795304913.123 s, 10.0 tps, lat 1.000 ms stddev 0.100\n").rows[
        "pgbench_progress"]
    assert prog[0]["epoch_s"] == pytest.approx(1795304913.123) and "elapsed_s" not in prog[0]


def test_real_pgbench_15_stdout_gives_summary_progress_and_latencies(tmp_path):
    sink = FakeSink(RUN / "clients=1" / "rep=1" / "pgbench.log")
    pgbench.parse_stdout(sink.path, sink)
    (s,) = sink.rows["pgbench_summary"]
    assert s["pgbench_version"] == "15.20 (Debian 15.20-0+deb12u1)"
    assert (s["clients"], s["threads"], s["duration_s"], s["max_tries"]) == (1, 1, 15, 1)
    assert s["tps"] == pytest.approx(219.243394)
    assert len(sink.rows["pgbench_progress"]) == 15
    assert sink.rows["pgbench_statement_latency"][-1]["failures"] == 0
    assert sink.facts == {"clients": 1, "threads": 1, "duration_s": 15}


# -- aborted runs: stored as such, never a good run ---------------------------

ABORTED_14 = V14.replace("tps = 1000.500000 (without initial connection time)\n",
                         "tps = 1000.500000 (without initial connection time)\n"
                         "client 1 aborted in command 4 (SQL) of script 0; ERROR:  deadlock detected\n")
ABORTED_15_NO_TPS = """pgbench (15.20)
pgbench: error: client 0 script 0 aborted in command 4 query 0: ERROR:  relation "x" does not exist
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 1
number of threads: 1
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 0
number of failed transactions: 0 (NaN%)
pgbench: error: Run was aborted; the above results are incomplete.
"""


@pytest.mark.parametrize("text", [ABORTED_14, ABORTED_15_NO_TPS], ids=["14 client aborted", "15 run aborted"])
def test_aborted_runs_are_marked(tmp_path, text):
    (s,) = parse_text(tmp_path, text).rows["pgbench_summary"]
    assert s["status"] == "aborted" and "aborted" in s["status_note"]
    assert s["aborted_clients"] == 1


# -- bad input -----------------------------------------------------------------


def test_summary_cut_off_midway(tmp_path):
    text = "\n".join(V14.splitlines()[:7]) + "\n"  # killed after 'duration:'
    with pytest.raises(ParseError) as exc:
        parse_text(tmp_path, text)
    assert "pgbench.log" in str(exc.value) and "tps = " in str(exc.value)


def test_non_numeric_summary_field(tmp_path):
    with pytest.raises(ParseError) as exc:
        parse_text(tmp_path, V14.replace("number of clients: 2", "number of clients: two"))
    assert ":5:" in str(exc.value) and "numeric" in str(exc.value)


def test_truncated_last_progress_line_is_a_warning(tmp_path):
    sink = parse_text(tmp_path, "progress: 1.0 s, 10.0 tps, lat 1.000 ms stddev 0.100\nprogress: 2.0 s, 11.")
    assert len(sink.rows["pgbench_progress"]) == 1
    assert sink.warnings and sink.warnings[0][0] == 2


def test_binary_and_foreign_files(tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01\x02transaction type: x\n\xff\xfe" * 50)
    head = FileHead(garbage, garbage.read_bytes(), garbage.stat().st_size)
    assert not pgbench.sniff_stdout(head) and not pgbench_init.sniff_init(head)
    with pytest.raises(ParseError):
        pgbench.parse_stdout(garbage, FakeSink(garbage))
    vmstat = tmp_path / "vmstat.txt"
    vmstat.write_text("procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
                      " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
                      " 1  0      0 100000   2000 300000    0    0     1     2   10   20  1  1 98  0  0\n")
    head = FileHead(vmstat, vmstat.read_bytes(), vmstat.stat().st_size)
    assert not pgbench.sniff_stdout(head)
    with pytest.raises(ParseError) as exc:
        pgbench.parse_stdout(vmstat, FakeSink(vmstat))
    assert "vmstat.txt" in str(exc.value)


@settings(max_examples=60, deadline=None)
@given(tps=st.floats(0, 1e6, allow_nan=False), lat=st.floats(0, 1e5, allow_nan=False),
       sd=st.floats(0, 1e5, allow_nan=False), failed=st.integers(0, 10**9),
       lag=st.none() | st.floats(0, 1e4, allow_nan=False), skipped=st.none() | st.integers(0, 10**6))
def test_any_printed_progress_line_reads_back_its_values(tmp_path_factory, tps, lat, sd, failed, lag, skipped):
    """Any 15+ progress line printed with pgbench's printf formats reads back to the printed values."""
    line = f"progress: 3.0 s, {tps:.1f} tps, lat {lat:.3f} ms stddev {sd:.3f}, {failed} failed"
    if lag is not None:
        line += f", lag {lag:.3f} ms"
        if skipped is not None:
            line += f", {skipped} skipped"
    sink = parse_text(tmp_path_factory.mktemp("p"), line + "\n")
    (row,) = sink.rows["pgbench_progress"]
    assert row["tps"] == float(f"{tps:.1f}") and row["latency_avg_ms"] == float(f"{lat:.3f}")
    assert row["failed"] == failed
    if lag is not None:
        assert row["lag_ms"] == float(f"{lag:.3f}")
        assert row.get("skipped") == skipped


# -- pgbench -i -----------------------------------------------------------------


def test_real_pgbench_15_init_log_is_an_init_not_a_run(tmp_path):
    path = RUN / "pgbench_init.log"
    head = FileHead(path, path.read_bytes(), path.stat().st_size)
    assert pgbench_init.sniff_init(head) and not pgbench.sniff_stdout(head)
    sink = FakeSink(path)
    pgbench_init.parse_init(path, sink)
    (row,) = sink.rows["pgbench_init"]
    assert row["status"] == "ok" and row["tuples_total"] == 2_000_000 and row["scaling_factor"] == 20
    assert row["generate_mode"] == "client-side" and row["total_s"] > 0 and row["generate_s"] > 0


def test_init_log_of_9_6_reads_and_a_cut_one_is_incomplete(tmp_path):
    # 9.6 style (inline, formats.md §1.6: no 'done in', 'set primary keys...'), progress with \r
    p = tmp_path / "init.txt"
    p.write_text("creating tables...\n100000 of 1000000 tuples (10%) done (elapsed 0.05 s, remaining 0.45 s)\r"
                 "1000000 of 1000000 tuples (100%) done (elapsed 0.50 s, remaining 0.00 s)\n"
                 "vacuum...\nset primary keys...\ndone.\n")
    sink = FakeSink(p)
    pgbench_init.parse_init(p, sink)
    assert sink.rows["pgbench_init"][0]["status"] == "ok"
    assert sink.rows["pgbench_init"][0]["scaling_factor"] == 10
    p.write_text("dropping old tables...\ncreating tables...\ngenerating data (client-side)...\n"
                 "100000 of 1000000 tuples (10%) done (elapsed 0.05 s, remaining 0.45 s)\n")
    sink = FakeSink(p)
    pgbench_init.parse_init(p, sink)
    assert sink.rows["pgbench_init"][0]["status"] == "incomplete" and sink.warnings
