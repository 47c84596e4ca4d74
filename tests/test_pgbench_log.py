"""pgbench per-transaction (-l) and aggregate (--aggregate-interval) logs, through the real ingest.

Real captures: tests/fixtures/pgbench/ (corpus/real, pgbench 15.20: a 1-thread per-transaction log and
a 4-thread aggregate log with their pgbench.log and run.toml). Older variants (8.4 .. 14) have no real
capture: their lines are built inline from shared/docs/formats.md §1.4/§1.5 (doLog printf formats),
and each such test says so. The corpus walk at the end parses every pgbench file under the corpus.
"""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, copy_store
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest
from kansoku.parsers.pgbench.txlog import shape_of

REAL = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off"
TX_RUN = REAL / "clients=1" / "rep=1"
AGG_RUN = REAL / "clients=8" / "rep=agg"


def q(db: Path, sql: str, params=None):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def metric(db: Path, name: str) -> dict[str, float]:
    return dict(q(db, "SELECT run_id, value FROM run_metrics WHERE metric = ?", [name]))


def make_run(root: Path, rel: str, files: dict[str, str | bytes]) -> Path:
    d = root / rel
    d.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (d / name).write_bytes(content.encode() if isinstance(content, str) else content)
    return d


# -- variants: which shape each version's lines have (table-driven) ----------------

SHAPES = [
    # (label, lines, kind, fields)   inline lines from formats.md §1.4/§1.5 unless marked real
    ("8.4 .. 18 plain", "0 1 3678 0 1795304692 878960\n1 1 2742 0 1795304692 878056\n", "txlog", 6),
    ("9.4+ -R lag", "0 1 1200 0 1400000000 500 65\n", "txlog", 7),
    ("9.5+ -R -L skipped", "0 1 skipped 0 1400000000 500 9000\n0 2 1300 0 1400000000 900 10\n", "txlog", 7),
    ("15+ failed", "1 1 failed 0 1795304717 245248\n0 1 8788 0 1795304717 244351\n", "txlog", 6),
    ("15+ retries + lag", "0 1 serialization 0 1795304713 142968 40 2\n0 2 deadlock 0 1795304713 142999 1 2\n",
     "txlog", 8),
    ("<= 9.6 Windows 0 0", "0 1 3678 0 0 0\n", "txlog", 6),
    ("9.3 aggregate", "1400000000 358 1319152 6151794990 556 12434\n", "aggregate", 6),
    ("9.4 aggregate -R", "1400000000 358 1319152 6151794990 556 12434 100 2000 1 50\n", "aggregate", 10),
    ("9.5-14 aggregate -R -L", "1400000000 358 1319152 6151794990 556 12434 100 2000 1 50 3\n", "aggregate", 11),
    ("15+ aggregate", "1795304721 327 1901169 14444654711 1598 21368 0 0 0 0 0 234 371 0 0\n", "aggregate", 15),
]


@pytest.mark.parametrize("label,text,kind,fields", SHAPES, ids=[s[0] for s in SHAPES])
def test_a_log_line_names_its_kind_and_fields(label, text, kind, fields):
    s = shape_of(text.encode())
    assert s is not None and (s.kind, s.fields) == (kind, fields)


@pytest.mark.parametrize("text", [
    "",  # empty
    "\x00\x01\x02\x03" * 100,  # binary
    " 1  0      0 100000   2000 300000    0    0     1     2   10   20  1  1 98  0  0\n",  # vmstat line
    "0 1 3678 0 1795304692\n",  # 5 fields
    "1400000000 1 2 3 4 5 6 7\n",  # 8-field aggregate: no such variant
    "0 1 3678 0 1795304692 878960 5\n0 1 oops 0 1795304692 878960\n1 1 oops 0 1795304692 878960\n",  # mostly not
    "0 1 oops 0 1795304692 878960\n",  # unknown word on the first line
])
def test_text_that_is_not_a_pgbench_log_has_no_shape(text):
    assert shape_of(text.encode()) is None


# -- real logs through the ingest -------------------------------------------------


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("db") / "k.duckdb"
    rep = ingest([FIXTURES / "pgbench"], db)
    assert rep.ok, rep.errors
    return db


def test_real_transaction_log_agrees_with_the_pgbench_summary(real_db):
    run = "study=scaleup/workload=read/config=checksums-off/clients=1/rep=1"
    n, ok, threads = q(real_db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok'), list(DISTINCT thread) "
                                "FROM pgbench_transactions WHERE run_id = ?", [run])[0]
    processed = q(real_db, "SELECT transactions_processed FROM pgbench_summary WHERE run_id = ?", [run])[0][0]
    assert n == ok == processed == 3287 and threads == [0]
    # whole-run TPS from the log agrees with pgbench's own figure
    assert metric(real_db, "tps_txlog")[run] == pytest.approx(metric(real_db, "tps")[run], rel=0.01)
    p = {m: metric(real_db, m)[run] for m in
         ("latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms")}
    assert 0 < p["latency_p50_ms"] <= p["latency_p90_ms"] <= p["latency_p95_ms"] <= p["latency_p99_ms"] \
        <= p["latency_max_ms"]
    avg = q(real_db, "SELECT latency_avg_ms FROM pgbench_summary WHERE run_id = ?", [run])[0][0]
    assert q(real_db, "SELECT latency_avg_ms FROM pgbench_latency_percentiles WHERE run_id = ?", [run])[0][0] \
        == pytest.approx(avg, rel=0.01)


def test_real_per_second_series_on_wall_clock(real_db):
    run = "study=scaleup/workload=read/config=checksums-off/clients=1/rep=1"
    rows = q(real_db, "SELECT epoch(ts), elapsed_s, tps, series_source FROM pgbench_tps_per_second "
                      "WHERE run_id = ? ORDER BY ts", [run])
    start = q(real_db, "SELECT epoch(start_time) FROM runs WHERE run_id = ?", [run])[0][0]
    assert {r[3] for r in rows} == {"txlog"} and 15 <= len(rows) <= 17
    assert abs(rows[0][0] - start) < 1.0  # the first second holds the run's start (run.toml)
    assert sum(r[2] for r in rows) == 3287
    steady = metric(real_db, "tps_steady")[run]
    assert steady == pytest.approx(sum(r[2] for r in rows[1:-1]) / (len(rows) - 2), rel=0.01)


def test_real_aggregate_log_gives_a_per_second_series(real_db):
    run = "study=scaleup/workload=read/config=checksums-off/clients=8/rep=agg"
    fields, threads, interval = q(real_db, "SELECT min(fields), count(DISTINCT thread), max(interval_s) "
                                           "FROM pgbench_aggregate WHERE run_id = ?", [run])[0]
    assert (fields, threads, interval) == (15, 4, 1)
    rows = q(real_db, "SELECT tps, series_source FROM pgbench_tps_per_second WHERE run_id = ?", [run])
    assert {r[1] for r in rows} == {"aggregate"}
    total = sum(r[0] for r in rows)
    assert 0.9 * 6841 <= total <= 6841  # the in-progress last interval is never written (formats.md §1.5)
    assert metric(real_db, "tps_steady")[run] == pytest.approx(456, rel=0.1)


def test_progress_only_run_has_series(tmp_path, tmp_db):
    src = TX_RUN / "pgbench.log"
    d = make_run(tmp_path, "study=scaleup/workload=read/config=checksums-off/clients=1/rep=1", {"pgbench.log": src.read_text(),
                                             "run.toml": (TX_RUN / "run.toml").read_text()})
    assert ingest([d], tmp_db).ok
    rows = q(tmp_db, "SELECT series_source, count(*) FROM pgbench_tps_per_second GROUP BY 1")
    assert rows == [("progress", 15)]


# -- version variants, inline (no real capture: lines built from formats.md §1.4/§1.5) --


def test_log_variants_of_each_pgbench_version_load(tmp_path, tmp_db):
    runs = {
        # 9.5-14: -R -L, lag column and 'skipped' words
        "v=9.5/rep=1": {"pgbench_log.100": "0 1 1200 0 1400000000 500 65\n0 2 skipped 0 1400000000 900 9000\n"
                                           "0 3 1300 0 1400000001 100 10\n"},
        # 15+: retries (--max-tries=3) and detailed failures, 8 fields with -R
        "v=15/rep=1": {"pgbench_log.200": "0 1 serialization 0 1795304713 142968 40 2\n"
                                          "0 2 3000 0 1795304713 150000 10 0\n0 3 deadlock 0 1795304714 1 5 2\n"},
        # <= 9.6 on Windows: no completion time
        "v=9.6w/rep=1": {"pgbench_log.300": "0 1 3678 0 0 0\n0 2 3000 0 0 0\n"},
        # 9.3 / 9.4 / 9.5-14 aggregate variants
        "v=9.3/rep=agg": {"pgbench_log.400": "1400000000 10 10000 20000000 500 2000\n"
                                             "1400000005 20 30000 60000000 600 2500\n"},
        "v=9.4/rep=agg": {"pgbench_log.500": "1400000000 10 10000 20000000 500 2000 100 2000 1 50\n"},
        "v=14/rep=agg": {"pgbench_log.600": "1400000000 10 10000 20000000 500 2000 100 2000 1 50 3\n"
                                            "1400000001 0 0 0 0 0 0 0 0 0 0\n"},
    }
    for rel, files in runs.items():
        make_run(tmp_path, rel, files)
    rep = ingest([tmp_path], tmp_db)
    assert rep.ok, rep.errors
    got = dict((r[0], r[1:]) for r in q(tmp_db, "SELECT run_id, list(status ORDER BY transaction_no), "
                                                "list(lag_us ORDER BY transaction_no), "
                                                "list(retries ORDER BY transaction_no), count(end_epoch_us) "
                                                "FROM pgbench_transactions GROUP BY run_id"))
    assert got["v=9.5/rep=1"] == (["ok", "skipped", "ok"], [65, 9000, 10], [None, None, None], 3)
    assert got["v=15/rep=1"] == (["serialization", "ok", "deadlock"], [40, 10, 5], [2, 0, 2], 3)
    assert got["v=9.6w/rep=1"][3] == 0  # no completion times
    agg = dict((r[0], r[1:]) for r in q(tmp_db, "SELECT run_id, max(fields), max(interval_s), sum(skipped) "
                                                "FROM pgbench_aggregate GROUP BY run_id"))
    assert agg["v=9.3/rep=agg"] == (6, 5, None)
    assert agg["v=9.4/rep=agg"][0] == 10
    assert agg["v=14/rep=agg"] == (11, 1, 3)
    warnings = [w for f in rep.files for w in f.warnings]
    assert any("Windows" in w for w in warnings) and any("single interval" in w for w in warnings)
    # a 9.3 aggregate with 5 s intervals gives per-second TPS = count / 5
    assert q(tmp_db, "SELECT tps FROM pgbench_tps_per_second WHERE run_id = 'v=9.3/rep=agg' ORDER BY ts") \
        == [(2.0,), (4.0,)]


def test_sampled_log_scaled_by_summary(tmp_path, tmp_db):
    """--sampling-rate=0.5: the log holds half the transactions; TPS is scaled back with the summary."""
    src = (TX_RUN / "pgbench_log.12350").read_text().splitlines(keepends=True)
    d = make_run(tmp_path, "sampled=yes/rep=1", {"pgbench_log.999": "".join(src[::2]),
                                                 "pgbench.log": (TX_RUN / "pgbench.log").read_text()})
    assert ingest([d], tmp_db).ok
    (frac,) = q(tmp_db, "SELECT sampling_fraction FROM pgbench_txlog_sampling")[0]
    assert frac == pytest.approx(0.5, abs=0.01)
    assert metric(tmp_db, "tps_txlog")["sampled=yes/rep=1"] == pytest.approx(219.24, rel=0.02)


def test_seventh_field_from_summary_beside(tmp_path, tmp_db):
    """7 fields are retries when the summary beside says --max-tries=3 and shows no rate limit."""
    summary = (TX_RUN / "pgbench.log").read_text().replace("maximum number of tries: 1", "maximum number of tries: 3")
    d = make_run(tmp_path, "m=1/rep=1", {"pgbench.log": summary,
                                        "pgbench_log.7": "0 1 1200 0 1795304652 500 2\n0 2 1300 0 1795304652 900 0\n"})
    rep = ingest([d], tmp_db)
    assert rep.ok, rep.errors
    assert q(tmp_db, "SELECT list(retries ORDER BY transaction_no), count(lag_us) FROM pgbench_transactions") \
        == [([2, 0], 0)]


# -- aborted runs never feed metrics -------------------------------------------------


def test_aborted_run_excluded_from_metrics(tmp_path, tmp_db):
    log = (TX_RUN / "pgbench.log").read_text() + "pgbench: error: Run was aborted; the above results are incomplete.\n"
    d = make_run(tmp_path, "status=aborted/rep=1", {"pgbench.log": log,
                                                    "pgbench_log.12350": (TX_RUN / "pgbench_log.12350").read_bytes()})
    assert ingest([d], tmp_db).ok
    assert q(tmp_db, "SELECT status FROM pgbench_summary") == [("aborted",)]
    for m in ("tps", "tps_steady", "tps_txlog", "latency_p50_ms", "latency_p99_ms", "latency_max_ms"):
        assert metric(tmp_db, m) == {}, m
    assert q(tmp_db, "SELECT count(*) FROM pgbench_latency_percentiles") == [(1,)]  # the data is kept, not used


# -- bad input: clear errors, warnings for a cut last line, nothing stored is lost ------


GOOD = "0 1 3678 0 1795304692 878960\n0 2 1235 0 1795304692 880213\n0 3 1107 0 1795304692 881328\n"


@pytest.mark.parametrize("cut", ["0 4 11", "0 4 1107 0 1795304692 88", "0 4 fai", "0 4 1107 0 179530"],
                         ids=["short", "cut in last field", "cut in a word", "cut in epoch"])
def test_truncated_last_line_warned_and_skipped(tmp_path, tmp_db, cut):
    d = make_run(tmp_path, "t=1/rep=1", {"pgbench_log.1": GOOD + cut})
    rep = ingest([d], tmp_db)
    assert rep.ok, rep.errors
    assert q(tmp_db, "SELECT count(*), max(transaction_no) FROM pgbench_transactions") == [(3, 3)]
    assert any("cut off" in w for f in rep.files for w in f.warnings)


def test_truncated_aggregate_last_line(tmp_path, tmp_db):
    d = make_run(tmp_path, "t=1/rep=agg", {"pgbench_log.1": "1400000000 10 10000 20000000 500 2000\n"
                                                            "1400000001 10 10000 20000000 500 2000\n14000000"})
    rep = ingest([d], tmp_db)
    assert rep.ok and q(tmp_db, "SELECT count(*) FROM pgbench_aggregate") == [(2,)]


# -- the numeric first try (txlog._load's ``numeric``) stores exactly what the text reader stores ------

# 2,000 clean lines: more than the 64 kB head the variant is recognised from, so what follows is unseen
CLEAN = "".join(f"{i % 4} {i // 4} {1000 + i} 0 1795304692 {100 + i}\n" for i in range(2000))
AFTER_HEAD = {
    "clean": "",
    "odd numbers": "0 600 0500 0 1795304693 1\n1 600 500.4 0 1795304693 2\n2 600  0 1795304693 3\n",
    "failure words": "0 600 failed 0 1795304693 1\n1 600 skipped 0 1795304693 2\n3 600 deadlock 0 1795304693 3\n",
    "unknown word": "0 600 oops 0 1795304693 1\n",
    "time beyond BIGINT": "0 600 99999999999999999999 0 1795304693 1\n",
    "transaction_no not a number": "0 x 1107 0 1795304693 1\n",
    "no completion time": "0 600 1200 0 0 0\n",
    "cut, too few fields": "0 600 12",
    "cut in a word": "0 600 fai",
    "cut, all fields": "0 600 1200 0 1795304693 12",
    "blank line": "\n0 600 1200 0 1795304693 1\n",
    "duplicated line": "0 499 2996 0 1795304692 2096\n",
}


@pytest.mark.quick_sample(4)
@pytest.mark.parametrize("label,crlf", [(label, False) for label in AFTER_HEAD]
                         + [("clean", True), ("failure words", True), ("cut, too few fields", True)])
def test_numeric_first_try_stores_what_the_text_reader_stores(tmp_path, monkeypatch, label, crlf):
    """The same log ingested with the numeric first try and with the text reader alone: the same rows,
    warnings and errors (clean logs keep the first load, the others load again as text)."""
    from kansoku.parsers.pgbench import txlog
    from kansoku.store.db import FileSink

    body = CLEAN + AFTER_HEAD[label]
    d = make_run(tmp_path, "n=1/rep=1", {"pgbench_log.7": body.replace("\n", "\r\n") if crlf else body})
    loads: list[str] = []
    real_load_sql = FileSink.load_sql
    monkeypatch.setattr(FileSink, "load_sql", lambda self, table, sql, params=None: (
        loads.append("text" if "TRY_CAST" in sql else "numeric"), real_load_sql(self, table, sql, params))[1])
    got = {}
    for mode in ("numeric", "text"):
        if mode == "text":
            real_load = txlog._load
            monkeypatch.setattr(txlog, "_load", lambda *a, **k: real_load(*a, **{**k, "numeric": None}))
        loads.clear()
        db = tmp_path / f"{mode}.duckdb"
        rep = ingest([d], db)
        rows = q(db, "SELECT * FROM pgbench_transactions ORDER BY ALL") if rep.committed else None
        got[mode] = (rep.ok, rep.errors, [(f.status, f.rows, f.warnings) for f in rep.files], rows)
        if mode == "numeric":
            assert loads[0] == "numeric" and loads[1:] in ([], ["text"])
            kept = label in ("clean", "odd numbers", "no completion time", "cut, too few fields", "cut in a word",
                             "cut, all fields", "duplicated line")
            assert (loads == ["numeric"]) == (kept and not (crlf and label.startswith("cut"))), loads
    assert got["numeric"] == got["text"]
    assert got["numeric"][0] == (label not in ("unknown word", "time beyond BIGINT", "transaction_no not a number",
                                               "duplicated line")), got["numeric"][1]


@pytest.fixture(scope="module")
def stored_once(tmp_path_factory):
    """The real fixture runs ingested once for the module, and the store's row counts."""
    db = tmp_path_factory.mktemp("pgbench-stored") / "kansoku.duckdb"
    assert ingest([FIXTURES / "pgbench"], db).ok
    tables = ["sources", "runs", "pgbench_transactions", "pgbench_aggregate", "pgbench_summary"]
    return db, {t: q(db, f"SELECT count(*) FROM {t}")[0][0] for t in tables}


@pytest.fixture
def stored(tmp_path, stored_once):
    """A database holding the real fixture runs (a test's own copy of ``stored_once``), and its row counts."""
    db, counts = stored_once
    return copy_store(db, tmp_path / "stored"), dict(counts)


BAD = [
    ("non-numeric mid-file", {"pgbench_log.5": GOOD + "0 x 1107 0 1795304692 881328\n" + GOOD},
     ["pgbench_log.5:4", "transaction_no"]),
    ("unknown word", {"pgbench_log.5": GOOD + "0 4 oops 0 1795304692 881328\n"}, ["pgbench_log.5:4", "oops"]),
    ("field count changes", {"pgbench_log.5": GOOD + "0 4 1107 0 1795304692 881328 7\n"},
     ["pgbench_log.5:4", "6 space-separated fields"]),
    ("binary garbage inside", {"pgbench_log.5": GOOD.encode() + b"\x00\xff\xfe garbage\n" + GOOD.encode()},
     ["pgbench_log.5:4"]),
    ("thread files disagree", {"pgbench_log.5": GOOD, "pgbench_log.5.1": "1 1 3678 0 1795304692 878960 12\n"},
     ["pgbench_log.5", "pgbench_log.5.1", "6 fields", "7 fields"]),
    ("aggregate vs txlog threads", {"pgbench_log.5": GOOD,
                                    "pgbench_log.5.1": "1795304721 327 1901169 14444654711 1598 21368\n"},
     ["'pgbench_log.5.1: ", "aggregate log"]),
]


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("label,files,needles", BAD, ids=[b[0] for b in BAD])
def test_bad_input_clear_error_nothing_lost(tmp_path, stored, label, files, needles):
    db, before = stored
    d = make_run(tmp_path, "bad=1/rep=1", files)
    rep = ingest([d], db)
    assert not rep.ok and not rep.committed
    msg = "\n".join(rep.errors)
    for needle in needles:
        assert needle in msg, (needle, msg)
    assert {t: q(db, f"SELECT count(*) FROM {t}")[0][0] for t in before} == before


def test_bad_input_cli_exit_code(tmp_path, tool, stored):
    db, before = stored
    d = make_run(tmp_path, "bad=2/rep=1", {"pgbench_log.5": GOOD + "0 4 1107 zero 1795304692 881328\n"})
    proc = tool("ingest", "--db", db, d)
    assert proc.returncode != 0 and "pgbench_log.5:4" in proc.stdout + proc.stderr
    assert {t: q(db, f"SELECT count(*) FROM {t}")[0][0] for t in before} == before


def test_empty_and_foreign_files_are_not_logs(tmp_path):
    empty = tmp_path / "pgbench_log.1"
    empty.write_bytes(b"")
    assert detect(empty).format is None and detect(empty).reason == "empty file"
    other = tmp_path / "pgbench_log.2"
    other.write_text("Linux 6.1 (vm) \t11/21/2026 \t_x86_64_\t(2 CPU)\n\n12:00:01 AM  CPU  %user\n")
    assert detect(other).format is None or detect(other).format.tool != "pgbench"


# -- property: whatever pgbench prints, DuckDB reads it back exactly ---------------------

TX = st.tuples(st.integers(0, 999), st.integers(0, 10**9),
               st.one_of(st.integers(0, 10**9), st.sampled_from(["skipped", "failed", "serialization", "deadlock"])),
               st.integers(0, 9), st.integers(1_400_000_000, 2_000_000_000), st.integers(0, 999_999),
               st.integers(0, 10**7), st.integers(0, 100))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(TX, min_size=1, max_size=40, unique_by=lambda r: (r[0], r[1])),  # pgbench numbers each
       extra=st.sampled_from([0, 2]))                                                # client's transactions once
def test_any_transaction_log_reads_back_row_for_row(tmp_path_factory, rows, extra):
    root = tmp_path_factory.mktemp("prop")
    text = "".join(" ".join(map(str, r[:6] + r[6:6 + extra])) + "\n" for r in rows)
    d = make_run(root, "p=1/rep=1", {"pgbench_log.1": text})
    db = root / "k.duckdb"
    rep = ingest([d], db)
    assert rep.ok, rep.errors
    # (through the view: a log without failure words or extra fields is stored in the plain table, any other
    # in the full one; the order of the view's rows is not the file's, so both sides are sorted)
    got = q(db, "SELECT client_id, transaction_no, CASE status WHEN 'ok' THEN latency_us::VARCHAR ELSE status END, "
                "script_no, end_epoch_us, lag_us, retries FROM pgbench_transactions")
    want = [(r[0], r[1], str(r[2]), r[3], r[4] * 1_000_000 + r[5],
             r[6] if extra else None, r[7] if extra else None) for r in rows]
    assert sorted(got) == sorted(want)



# -- the stored layout: one row per file, the transactions keyed by its number ------------

# The layout of main before the narrow tables (ac00413): every transaction of every log in one table of ten
# columns, and the view over it.
FORMER_TABLE = """CREATE TABLE pgbench_transaction_rows (source_id VARCHAR NOT NULL, thread INTEGER, client_id INTEGER,
    transaction_no BIGINT, failure VARCHAR, latency_us BIGINT, script_no INTEGER, end_epoch_us BIGINT, lag_us BIGINT,
    retries INTEGER)"""
FORMER_VIEW = """CREATE OR REPLACE VIEW pgbench_transactions AS
SELECT t.source_id, s.run_id, t.thread, t.client_id, t.transaction_no, coalesce(t.failure, 'ok') AS status,
       t.* EXCLUDE (source_id, thread, client_id, transaction_no, failure)
FROM pgbench_transaction_rows t JOIN sources s USING (source_id)"""
NEW_TABLES = ("pgbench_transaction_files", "pgbench_transaction_rows_plain", "pgbench_transaction_rows_full")


def _layout_runs(root: Path) -> Path:
    """Logs of every shape: the real 1-thread log (plain), two thread files of one log, -R lag with 'skipped',
    15+ failures and retries, 'failed' in a 6-field log, Windows' 0 0."""
    shutil.copytree(TX_RUN, root / "real" / "rep=1")
    make_run(root, "threads/rep=1", {"pgbench_log.77": "0 1 3678 0 1795304692 878960\n0 2 2742 0 1795304692 978056\n",
                                     "pgbench_log.77.1": "1 1 2000 1 1795304692 900000\n1 2 2100 1 1795304693 1\n"})
    make_run(root, "v=9.5/rep=1", {"pgbench_log.100": "0 1 1200 0 1400000000 500 65\n0 2 skipped 0 1400000000 900 9000\n"})
    make_run(root, "v=15/rep=1", {"pgbench_log.200": "0 1 serialization 0 1795304713 142968 40 2\n"
                                                     "0 2 3000 0 1795304713 150000 10 0\n"})
    make_run(root, "v=15f/rep=1", {"pgbench_log.210": "1 1 failed 0 1795304717 245248\n0 1 8788 0 1795304717 244351\n"})
    make_run(root, "v=9.6w/rep=1", {"pgbench_log.300": "0 1 3678 0 0 0\n0 2 3000 0 0 0\n"})
    return root


def _both_ways(db: Path, want: list[tuple]) -> None:
    """pgbench_transactions holds exactly ``want``: the same rows as a multiset (each row as often), compared in
    Python: inserting ``want`` into DuckDB for an EXCEPT ALL by executemany is far slower."""
    got = collections.Counter(q(db, "SELECT * FROM pgbench_transactions"))
    assert got == collections.Counter(want), (got - collections.Counter(want), collections.Counter(want) - got)


def test_each_shape_stored_in_its_table_and_the_view_unchanged(tmp_path):
    root = _layout_runs(tmp_path / "runs")
    db = tmp_path / "k.duckdb"
    rep = ingest([root], db)
    assert rep.ok, rep.errors
    files = {r[0]: r[1:] for r in q(db, "SELECT s.run_id || '/' || s.file_name, f.thread, f.fields, f.has_lag, "
                                        "f.has_retries, f.plain FROM pgbench_transaction_files f "
                                        "JOIN sources s USING (source_id)")}
    assert files == {
        "real/rep=1/pgbench_log.12350": (0, 6, False, False, True),
        "threads/rep=1/pgbench_log.77": (0, 6, False, False, True),
        "threads/rep=1/pgbench_log.77.1": (1, 6, False, False, True),
        "v=9.5/rep=1/pgbench_log.100": (0, 7, True, False, False),
        "v=15/rep=1/pgbench_log.200": (0, 8, True, True, False),
        "v=15f/rep=1/pgbench_log.210": (0, 6, False, False, False),
        "v=9.6w/rep=1/pgbench_log.300": (0, 6, False, False, True),
    }, files
    assert q(db, "SELECT count(DISTINCT file_no) FROM pgbench_transaction_files") == [(7,)]
    plain, full = (q(db, f"SELECT count(*) FROM {t}")[0][0] for t in NEW_TABLES[1:])
    assert (plain, full) == (3287 + 4 + 2, 6)
    # the rows a file reports are its transactions (the row describing the file is not one of them)
    assert sorted(f.rows for f in rep.files if f.format == "pgbench-txlog") == [2, 2, 2, 2, 2, 2, 3287]
    assert q(db, "SELECT run_id, thread, client_id, transaction_no, status, latency_us, script_no, end_epoch_us, "
                 "lag_us, retries FROM pgbench_transactions WHERE run_id LIKE 'v=%' ORDER BY ALL") == [
        ("v=15/rep=1", 0, 0, 1, "serialization", None, 0, 1795304713142968, 40, 2),
        ("v=15/rep=1", 0, 0, 2, "ok", 3000, 0, 1795304713150000, 10, 0),
        ("v=15f/rep=1", 0, 0, 1, "ok", 8788, 0, 1795304717244351, None, None),
        ("v=15f/rep=1", 0, 1, 1, "failed", None, 0, 1795304717245248, None, None),
        ("v=9.5/rep=1", 0, 0, 1, "ok", 1200, 0, 1400000000000500, 65, None),
        ("v=9.5/rep=1", 0, 0, 2, "skipped", None, 0, 1400000000000900, 9000, None),
        ("v=9.6w/rep=1", 0, 0, 1, "ok", 3678, 0, None, None, None),
        ("v=9.6w/rep=1", 0, 0, 2, "ok", 3000, 0, None, None, None),
    ]


def test_store_of_the_former_layout_upgrades_on_its_next_ingest(tmp_path):
    """A store whose transactions are in the former ten-column table (main before the narrow tables) is
    upgraded by its next ingest: the same rows of pgbench_transactions, the old table gone; then a changed
    log's rows are replaced and a removed log's rows removed, as before."""
    root = _layout_runs(tmp_path / "runs")
    db = tmp_path / "k.duckdb"
    assert ingest([root], db).ok
    want = q(db, "SELECT * FROM pgbench_transactions")
    assert len(want) == 3287 + 4 + 2 + 6
    con = duckdb.connect(str(db))
    con.execute(FORMER_TABLE)
    con.execute("INSERT INTO pgbench_transaction_rows SELECT source_id, thread, client_id, transaction_no, "
                "CASE WHEN status <> 'ok' THEN status END, latency_us, script_no, end_epoch_us, lag_us, retries "
                "FROM pgbench_transactions")
    for t in NEW_TABLES:
        con.execute(f"DROP TABLE {t}")
    con.execute(FORMER_VIEW)
    con.execute("UPDATE kansoku_meta SET value = 'former' WHERE key = 'schema_fingerprint'")
    con.close()
    _both_ways(db, want)  # the former layout's view shows the same rows

    rep = ingest([root], db)
    assert rep.ok and rep.committed, rep.errors
    assert {f.status for f in rep.files} == {"unchanged"}
    tables = {t for (t,) in q(db, "SELECT table_name FROM duckdb_tables()")}
    assert "pgbench_transaction_rows" not in tables and set(NEW_TABLES) <= tables
    _both_ways(db, want)
    assert q(db, "SELECT count(*), count(DISTINCT file_no), count(DISTINCT source_id), sum(plain::INTEGER) "
                 "FROM pgbench_transaction_files") == [(7, 7, 7, 4)]
    assert q(db, "SELECT count(*) FROM pgbench_transaction_rows_full") == [(6,)]

    # a changed log: its rows replaced (the former ones gone); a removed thread file: its rows gone
    (root / "v=9.6w" / "rep=1" / "pgbench_log.300").write_text("0 1 1111 0 0 0\n")
    (root / "threads" / "rep=1" / "pgbench_log.77.1").unlink()
    rep = ingest([root], db)
    assert rep.ok, rep.errors
    assert sorted(f.status for f in rep.files if f.status != "unchanged") == ["removed", "replaced"]
    want = [r for r in want if r[1] != "v=9.6w/rep=1" and not (r[1] == "threads/rep=1" and r[2] == 1)]
    want.append(q(db, "SELECT * FROM pgbench_transactions WHERE run_id = 'v=9.6w/rep=1'")[0])
    assert want[-1][5:7] == ("ok", 1111)
    _both_ways(db, want)
    assert q(db, "SELECT count(*) FROM pgbench_transaction_files") == [(6,)]
    assert q(db, "SELECT count(*) FROM pgbench_transaction_rows_plain WHERE file_no NOT IN "
                 "(SELECT file_no FROM pgbench_transaction_files)") == [(0,)]
    # each file its own number
    assert q(db, "SELECT count(DISTINCT file_no) FROM pgbench_transaction_files") == [(6,)]

# -- every pgbench file of the corpus ------------------------------------------------------


@pytest.mark.slow  # the corpus's files: --all (CI); each version's and shape's tests are quick
def test_every_corpus_pgbench_file_parses(corpus, tmp_path):
    """Find pgbench outputs by content (not name), ingest them all; each must parse."""
    found, unclaimed = [], []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.name in ("run.toml", "README.md", "SOURCES.md"):
            continue
        det = detect(path)
        if det.format is not None and det.format.tool == "pgbench" and det.format.attachment:
            continue  # a pgbench script (-f): an input kept with a run, never a run of its own (test_commands.py)
        if det.format is not None and det.format.tool == "pgbench":
            found.append(path)
        elif det.format is None and path.stat().st_size and b"pgbench" in path.read_bytes()[:4096] \
                and path.suffix != ".sql":
            unclaimed.append(path)
    assert not unclaimed, f"pgbench-looking files no parser claims: {unclaimed}"
    kinds = {detect(p).format.name for p in found}
    assert kinds >= {"pgbench-stdout", "pgbench-txlog", "pgbench-aggregate", "pgbench-init"}
    # copy each into its own run directory tree (keeps thread files together, keeps real run.toml); a
    # directory of independent outputs (no run.toml) gives each run its own directory: one run per directory
    from kansoku.parsers.pgbench.txlog import log_run_key

    dst = tmp_path / "c"
    for p in found:
        rel = p.parent.relative_to(corpus)
        if not (p.parent / "run.toml").exists():
            rel = rel / (log_run_key(p) or p.name).replace(".", "_")
        (dst / rel).mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst / rel / p.name)
        if (p.parent / "run.toml").exists():
            shutil.copy(p.parent / "run.toml", dst / rel / "run.toml")
    rep = ingest([dst], tmp_path / "k.duckdb")
    assert rep.ok, rep.errors
    assert sum(f.status == "new" for f in rep.files) == len(found)
