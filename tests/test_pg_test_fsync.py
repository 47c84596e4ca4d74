"""pg_test_fsync (formats.md §7).

Real file: tests/fixtures/pg_test_fsync/pg_test_fsync15.18_s1.txt, captured for kansoku with Debian's
pg_test_fsync 15.18 (`-s 1`, see the README there) because shared/corpus/real has no pg_test_fsync run.
shared/corpus/generated/pg_test_fsync is read in place. Older layouts (9.1 'operations per test'
without usecs/op, the note on two lines, n/a*) have no real file and are built inline from
formats.md §7.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES
from conftest import one_file_run as _one_file
from conftest import ro_con as _con
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest

REAL = FIXTURES / "pg_test_fsync" / "pg_test_fsync15.18_s1.txt"


def _run_with(tmp_path: Path, src: Path) -> Path:
    d = tmp_path / "runs" / "host=vm"
    d.mkdir(parents=True)
    shutil.copy(src, d / "pg_test_fsync.txt")
    return d


def test_real_output_every_section(tmp_path, tmp_db):
    rep = ingest([_run_with(tmp_path, REAL)], tmp_db)
    assert rep.ok and rep.committed, rep.errors
    assert [f.format for f in rep.files] == ["pg_test_fsync"]
    con = _con(tmp_db)
    sections = con.execute("SELECT section, count(*) FROM pg_test_fsync_results GROUP BY section, section_no "
                           "ORDER BY section_no").fetchall()
    assert sections == [("one_write", 5), ("two_writes", 5), ("open_sync_sizes", 5),
                        ("fsync_other_descriptor", 2), ("non_sync_write", 1)]
    row = con.execute("SELECT ops_per_sec, usecs_per_op, status, write_count, write_size_kb, line FROM "
                      "pg_test_fsync_results WHERE section = 'one_write' AND method = 'fdatasync'").fetchone()
    assert row == (16827.704, 59, "ok", 1, 8, 7)
    na = con.execute("SELECT ops_per_sec, usecs_per_op, status FROM pg_test_fsync_results "
                     "WHERE method = 'fsync_writethrough'").fetchall()
    assert na == [(None, None, "n/a"), (None, None, "n/a")]
    sizes = con.execute("SELECT write_count, write_size_kb, ops_per_sec FROM pg_test_fsync_results "
                        "WHERE section = 'open_sync_sizes' ORDER BY item_no").fetchall()
    assert sizes[0] == (1, 16, 535.714) and sizes[-1] == (16, 1, 26.894)
    assert con.execute("SELECT label, ops_per_sec FROM pg_test_fsync_results WHERE section = 'non_sync_write'"
                       ).fetchone() == ("write", 1353806.216)
    info = con.execute("SELECT seconds_per_test, wal_block_kb, sections, results FROM pg_test_fsync_info").fetchone()
    assert info == (1, 8, 5, 18)
    methods = con.execute("SELECT method, one_write_ops_per_sec, two_writes_ops_per_sec, status FROM "
                          "pg_test_fsync_methods ORDER BY preference_no").fetchall()
    assert [m[0] for m in methods] == ["open_datasync", "fdatasync", "fsync", "fsync_writethrough", "open_sync"]
    assert methods[0][1:] == (18639.459, 256.965, "ok") and methods[3][3] == "n/a"
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric LIKE 'pg_test_fsync%'").fetchall())
    assert m == {"pg_test_fsync_open_datasync_ops_s": 18639.459, "pg_test_fsync_fdatasync_ops_s": 16827.704,
                 "pg_test_fsync_fsync_ops_s": 4867.542, "pg_test_fsync_open_sync_ops_s": 345.64}


def test_generated_pg_test_fsync_output_stores_every_method(corpus, tmp_path, tmp_db):
    rep = ingest([_run_with(tmp_path, corpus / "generated" / "pg_test_fsync" / "pg_test_fsync15_s1.txt")], tmp_db)
    assert rep.ok, rep.errors
    con = _con(tmp_db)
    assert con.execute("SELECT count(*) FROM pg_test_fsync_results").fetchone()[0] == 18
    assert con.execute("SELECT ops_per_sec, usecs_per_op FROM pg_test_fsync_results WHERE section = 'two_writes' "
                       "AND method = 'fsync'").fetchone() == (1673.319, 598)


OLD_91 = """\
2000 operations per test
O_DIRECT supported on this platform for open_datasync and open_sync.

Compare file sync methods using one 8kB write:
(in wal_sync_method preference order, except fdatasync
is Linux's default)
        open_datasync                    n/a*
        fdatasync                        8453.386 ops/sec
        fsync                            7854.225 ops/sec
        fsync_writethrough                            n/a
        open_sync                        n/a*
* This file system and its mount options do not support direct
I/O, e.g. ext4 in journaled mode.

Compare open_sync with different write sizes:
(This is designed to compare the cost of writing 16kB
in different write open_sync sizes.)
        16kB open_sync write             n/a*
         8kB open_sync writes            n/a*
"""


def test_old_layout_without_usecs_and_with_n_a_star(tmp_path, tmp_db):
    # Inline from formats.md §7 (9.1: 'operations per test', ops/sec only, note split over two lines,
    # 'n/a*' footnote): no real file of that version exists in the corpus.
    rep = ingest([_one_file(tmp_path, "fsync.txt", OLD_91)], tmp_db)
    assert rep.ok, rep.errors
    con = _con(tmp_db)
    rows = con.execute("SELECT section, label, method, write_count, write_size_kb, ops_per_sec, usecs_per_op, status "
                       "FROM pg_test_fsync_results ORDER BY section_no, item_no").fetchall()
    assert rows[0] == ("one_write", "open_datasync", "open_datasync", 1, 8, None, None, "n/a*")
    assert rows[1] == ("one_write", "fdatasync", "fdatasync", 1, 8, 8453.386, None, "ok")
    assert rows[3][-1] == "n/a"
    assert rows[5] == ("open_sync_sizes", "16kB open_sync write", "open_sync", None, 16, None, None, "n/a*")
    assert con.execute("SELECT operations_per_test, seconds_per_test FROM pg_test_fsync_info").fetchone() == (2000, None)


def test_result_before_any_section_fails_and_database_is_unchanged(tool, tmp_path, tmp_db):
    assert ingest([_run_with(tmp_path / "good", REAL)], tmp_db).committed
    con = _con(tmp_db)
    before = con.execute("SELECT count(*) FROM pg_test_fsync_results").fetchone()[0]
    con.close()
    text = REAL.read_text().replace("Compare file sync methods using two 8kB writes:\n", "", 1)
    bad = "        fdatasync                          417.352 ops/sec    2396 usecs/op\n" + text
    proc = tool("ingest", "--db", tmp_db, _one_file(tmp_path / "bad", "fsync.txt", bad))
    assert proc.returncode == 2
    assert "fsync.txt:1: expected a pg_test_fsync section heading" in proc.stderr
    con = _con(tmp_db)
    assert con.execute("SELECT count(*) FROM pg_test_fsync_results").fetchone()[0] == before


def test_garbled_result_line_fails_naming_the_line(tmp_path, tmp_db):
    text = REAL.read_text().replace("16827.704 ops/sec", "16827,704 ops/sec")
    rep = ingest([_one_file(tmp_path, "fsync.txt", text)], tmp_db)
    assert not rep.ok
    assert "fsync.txt:7: expected a result line" in rep.errors[0]


def test_cut_off_last_line_is_a_warning(tmp_path, tmp_db):
    text = REAL.read_text().rstrip("\n")
    text = text[: text.rindex("ops/sec")]  # killed while printing the last result
    rep = ingest([_one_file(tmp_path, "fsync.txt", text)], tmp_db)
    assert rep.ok, rep.errors
    (res,) = rep.files
    assert any("fsync.txt:36: last line is cut off" in w for w in res.warnings)
    assert _con(tmp_db).execute("SELECT count(*) FROM pg_test_fsync_results").fetchone()[0] == 17


def test_every_pg_test_fsync_file_in_the_corpus_parses(corpus, tmp_path):
    found = []
    for p in sorted(corpus.rglob("*")):
        if p.is_file() and p.name != "run.toml":
            det = detect(p)
            if det.format is not None and det.format.tool == "pg_test_fsync":
                found.append(p)
    assert {p.name for p in (corpus / "generated" / "pg_test_fsync").iterdir()} <= {p.name for p in found}
    # two directories named pg_test_fsync are two runs with one id: one store each (docs/ingest.md)
    for files, db in ((found, tmp_path / "k.duckdb"), ([REAL], tmp_path / "fixture.duckdb")):
        rep = ingest(files, db)
        assert rep.ok, rep.errors
        assert all(f.rows > 0 for f in rep.files if f.status == "new")
