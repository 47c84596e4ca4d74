"""Published (transcribed) tables: sidecar + CSV -> runs with origin 'transcribed', citation, values."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import SHARED
from kansoku.ingest.pipeline import ingest
from kansoku.parsers.published import decimals_of, half_unit

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "data" / "published"

SIDECAR = """
[published]
id = "t-demo"
csv = "demo.csv"
[published.citation]
report = { ja = "デモ報告書", en = "Demo report" }
table = "表 1.1"
page = 12
[published.factors]
study = "demo"
[published.columns]
clients = { factor = "clients" }
tps_a = { metric = "tps", factors = { config = "a" } }
tps_b = { metric = "tps", factors = { config = "b" } }
published_ratio_pct = { metric = "published_ratio_pct", factors = { config = "b" } }
"""
CSV = "clients,tps_a,tps_b,published_ratio_pct\n1,100.0,110.0,110.0\n2,200.0,150.0,75.00\n"


def write_demo(d: Path, sidecar: str = SIDECAR, csv: str = CSV) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "demo.toml").write_text(sidecar, encoding="utf-8")
    (d / "demo.csv").write_text(csv, encoding="utf-8")
    return d


def q(db: Path, sql: str, params=None):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_half_unit_from_printed_precision():
    assert decimals_of("98.30") == 2 and half_unit("98.30") == pytest.approx(0.005)
    assert half_unit("10247") == 0.5
    assert half_unit("0.93164") == pytest.approx(0.000005)
    assert half_unit("1.5e3") == pytest.approx(50)


def test_published_tables_ingest_as_cited_transcribed_runs(tmp_db):
    rep = ingest([PUBLISHED], tmp_db)
    assert rep.ok, rep.errors
    counts = rep.counts()
    n = len(list(PUBLISHED.rglob("*.toml")))  # one sidecar and one CSV per published table
    assert n >= 31 and counts["new"] == 2 * n
    assert q(tmp_db, "SELECT DISTINCT origin, status FROM runs") == [("transcribed", "ok")]
    # FY2013 2.2: 11 client counts x 2 versions; every run cites the report and table
    runs = q(tmp_db, "SELECT run_id, citation FROM runs WHERE run_id LIKE 'published/fy2013-t2.2/%'")
    assert len(runs) == 22
    assert all("表 2.2" in c and "FY2013" in c for _, c in runs)
    # values flow into run_metrics like measured data
    v = q(tmp_db, "SELECT value FROM run_metrics WHERE run_id = 'published/fy2013-t2.3/clients=16/config=checksums-on' "
                  "AND metric = 'published_ratio_pct'")
    assert v == [(99.93,)]
    f = dict(q(tmp_db, "SELECT factor, value FROM run_factors WHERE run_id = 'published/fy2013-t2.2/clients=128/version=9.3'"))
    assert f == {"fiscal_year": "2013", "study": "read-scaleup", "workload": "read-custom", "checksums": "off",
                 "clients": "128", "version": "9.3", "published_table": "fy2013-t2.2"}
    assert q(tmp_db, "SELECT printed, decimals FROM published_values WHERE transcribed_run_id = "
                     "'published/fy2013-t2.2/clients=1/version=9.3' AND metric = 'cpu_idle_pct'") == [("98.30", 2)]
    # both files are sources with their own sha256; no directory run was made for data/published
    fmts = q(tmp_db, "SELECT format, count(*) FROM sources GROUP BY 1 ORDER BY 1")
    assert fmts == [("published-csv", n), ("published-table", n)]
    assert q(tmp_db, "SELECT count(*) FROM runs WHERE origin <> 'transcribed'") == [(0,)]
    # idempotent
    rep2 = ingest([PUBLISHED], tmp_db)
    assert rep2.counts() == {"unchanged": 2 * n, "skipped": rep.counts().get("skipped", 0)} or \
        rep2.counts().get("unchanged") == 2 * n


def test_editing_the_csv_reingests_the_table(tmp_path, tmp_db):
    d = write_demo(tmp_path / "pub")
    assert ingest([d], tmp_db).ok
    assert q(tmp_db, "SELECT count(*) FROM runs") == [(4,)]
    (d / "demo.csv").write_text("clients,tps_a,tps_b,published_ratio_pct\n1,100.0,120.0,120.0\n", encoding="utf-8")
    rep = ingest([d], tmp_db)
    assert rep.ok, rep.errors
    assert {f.status for f in rep.files if f.format == "published-table"} == {"replaced"}
    # the runs of the old row 2 are gone, the new value is there
    assert q(tmp_db, "SELECT count(*) FROM runs") == [(2,)]
    assert q(tmp_db, "SELECT value FROM run_metrics WHERE run_id = 'published/t-demo/clients=1/config=b' "
                     "AND metric = 'tps'") == [(120.0,)]
    cit = q(tmp_db, "SELECT citation FROM runs LIMIT 1")[0][0]
    assert cit == "デモ報告書 / Demo report, 表 1.1, p. 12"


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("sidecar,csv,needle", [
    (SIDECAR, CSV.replace("110.0,110.0", "110.0 %,110.0"), "demo.csv:2: expected a number in column 'tps_b'"),
    (SIDECAR, "clients,tps_a,tps_b,published_ratio_pct,extra\n1,1,1,1,1\n", "demo.csv:1: expected every column"),
    (SIDECAR.replace('table = "表 1.1"\n', ""), CSV, "with at least report and table"),
    (SIDECAR.replace('{ factor = "clients" }', '{ factor = "clients", metric = "x" }'), CSV, "exactly one of factor"),
    (SIDECAR, "clients,tps_a,tps_b,published_ratio_pct\n1,100.0\n", "demo.csv:2: expected 4 fields"),
])
def test_bad_published_table_is_refused_and_nothing_changes(tmp_path, tmp_db, sidecar, csv, needle):
    good = write_demo(tmp_path / "good")
    assert ingest([good], tmp_db).ok
    before = q(tmp_db, "SELECT count(*) FROM runs")[0][0], q(tmp_db, "SELECT count(*) FROM published_values")[0][0]
    bad = tmp_path / "bad"
    write_demo(bad, sidecar.replace('id = "t-demo"', 'id = "t-bad"'), csv)
    rep = ingest([bad], tmp_db)
    assert not rep.ok and not rep.committed
    assert any(needle in e for e in rep.errors), rep.errors
    after = q(tmp_db, "SELECT count(*) FROM runs")[0][0], q(tmp_db, "SELECT count(*) FROM published_values")[0][0]
    assert after == before


def test_bad_published_table_exit_code(tmp_path, tmp_db, tool):
    bad = write_demo(tmp_path / "bad", csv=CSV.replace("200.0,150.0", "200.0,n/a"))
    proc = tool("ingest", "--db", tmp_db, bad)
    assert proc.returncode == 2
    assert "demo.csv:3: expected a number in column 'tps_b'" in proc.stderr + proc.stdout


def test_same_table_id_twice_is_an_error(tmp_path, tmp_db):
    write_demo(tmp_path / "one")
    write_demo(tmp_path / "two")
    rep = ingest([tmp_path / "one", tmp_path / "two"], tmp_db)
    assert not rep.ok and "already defined by another file" in rep.errors[0]
    assert not (tmp_db.exists() and q(tmp_db, "SELECT count(*) FROM runs")[0][0])


def test_reference_csvs_are_exact_copies():
    ref = SHARED / "reference"
    if not ref.is_dir():
        pytest.skip("../shared/reference not present")
    for src in ref.glob("*.csv"):
        copies = list(PUBLISHED.rglob(src.name))
        assert len(copies) == 1, src.name
        assert copies[0].read_bytes() == src.read_bytes()
        assert copies[0].with_suffix(".toml").is_file(), f"{src.name} has no sidecar"
