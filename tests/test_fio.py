"""fio: json/json+, normal and terse output (formats.md §6).

Real files: tests/fixtures/fio/rw=*/format={normal,jsonplus}/rep=1/ (copied from
shared/corpus/real/study=fio, fio-3.33, 4 jobs with group_reporting, direct=1, bs=8k; the normal
and json+ outputs are *different runs*, see real/README.md). shared/corpus/generated/fio and
public/fio are read in place. Variants no corpus file shows (fio 2.x normal output, an unknown
terse version, cut-off files) are built inline and say so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, RecordingSink
from conftest import one_file_run as _one_file
from conftest import ro_con as _con
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest

REAL = FIXTURES / "fio"
PATTERNS = ["randread", "randwrite", "read", "write"]


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("fio") / "kansoku.duckdb"
    rep = ingest([REAL], db)
    assert rep.ok and rep.committed, rep.errors
    return db


def test_real_json_plus_values_and_units(real_db):
    con = _con(real_db)
    r = con.execute(
        "SELECT report_format, direction, bw_kib_s, iops, runtime_ms, io_kib, total_ios, lat_mean_us, clat_mean_us, "
        "clat_p50_us, clat_p99_us, jobs_in_report, group_reported, rw, bs_bytes, numjobs, direct, ioengine, "
        "options_origin FROM fio_jobs WHERE run_id = 'rw=randread/format=jsonplus/rep=1'").fetchall()
    assert len(r) == 1  # write and trim did no I/O: not stored
    (fmt, d, bw, iops, rt, io, n, lat, clat, p50, p99, jobs, grp, rw, bs, nj, direct, eng, origin) = r[0]
    assert (fmt, d, bw, rt, io, n) == ("json+", "read", 267258, 10002, 2673120, 334140)
    assert iops == pytest.approx(33407.318536)
    assert clat == pytest.approx(118.014672601)  # clat_ns mean 118014.672601 ns -> us
    assert (p50, p99) == (pytest.approx(112.128), pytest.approx(284.672))
    assert lat > clat
    assert (jobs, grp, rw, bs, nj, direct, eng) == (4, True, "randread", 8192, 4, True, "psync")
    assert origin == "file+run.toml"
    pcts = con.execute("SELECT count(*), max(percentile) FROM fio_latency_percentiles l JOIN fio_jobs j "
                       "USING (source_id, job_no, direction) WHERE j.run_id = 'rw=randread/format=jsonplus/rep=1'"
                       ).fetchone()
    assert pcts == (17, 99.99)
    assert con.execute("SELECT device, read_ios FROM fio_disk_util WHERE run_id = 'rw=randread/format=jsonplus/rep=1'"
                       ).fetchone()[0] == "vda"


def test_real_normal_output_values_and_options_from_run_toml(real_db):
    con = _con(real_db)
    r = con.execute(
        "SELECT direction, bw_kib_s, iops, runtime_ms, io_kib, clat_min_us, clat_mean_us, lat_mean_us, clat_p99_us, "
        "bw_mean_kib_s, bw_samples, total_ios, jobs_in_report, rw, bs_bytes, iodepth, numjobs, direct, options_origin "
        "FROM fio_jobs WHERE run_id = 'rw=randread/format=normal/rep=1'").fetchone()
    # read: IOPS=33.3k, BW=260MiB/s (272MB/s)(2598MiB/10001msec); clat (usec): min=32, ..., avg=118.58
    assert r[:5] == ("read", 260 * 1024, 33300, 10001, 2598 * 1024)
    assert r[5:9] == (32, 118.58, 118.74, 260)
    assert r[9:12] == (265766.11, 76, 332570)
    # numjobs from 'jobs=4', direct=1 only from the command line in run.toml
    assert r[12:] == (4, "randread", 8192, 1, 4, True, "file+run.toml")


def test_fio_metrics_per_run_hold_the_outputs_values(real_db):
    con = _con(real_db)
    m = {(r, k): v for r, k, v in con.execute("SELECT run_id, metric, value FROM run_metrics WHERE metric LIKE 'fio%'"
                                              ).fetchall()}
    assert m[("rw=randread/format=jsonplus/rep=1", "fio_read_bw_kib_s")] == 267258
    assert m[("rw=randwrite/format=jsonplus/rep=1", "fio_write_iops")] == pytest.approx(41537.192561)
    assert m[("rw=write/format=normal/rep=1", "fio_write_lat_mean_us")] == pytest.approx(121.70, abs=0.01)
    assert ("rw=write/format=jsonplus/rep=1", "fio_read_bw_kib_s") not in m  # no reads: no number, not 0


def test_normal_and_json_plus_of_different_runs_are_the_same_order_of_magnitude(real_db):
    # real/README.md: the normal and json+ outputs of a pattern come from different runs, so only
    # the order of magnitude can agree (same-run agreement: the tests below).
    con = _con(real_db)
    rows = con.execute("SELECT rw, direction, report_format, bw_kib_s, iops FROM fio_pattern_bw").fetchall()
    by = {(rw, d, f): (bw, iops) for rw, d, f, bw, iops in rows}
    for rw in PATTERNS:
        d = "read" if "read" in rw else "write"
        bw_n, iops_n = by[(rw, d, "normal")]
        bw_j, iops_j = by[(rw, d, "json+")]
        assert 0.5 < bw_n / bw_j < 2 and 0.5 < iops_n / iops_j < 2, rw


def test_pattern_view_and_ratio_to_baseline_device(real_db):
    con = _con(real_db)
    rows = con.execute("SELECT DISTINCT device, pattern, direction, pattern_direction FROM fio_pattern_bw "
                       "ORDER BY pattern_direction").fetchall()
    assert rows == [("vda", "rand", "read", "rand_read"), ("vda", "rand", "write", "rand_write"),
                    ("vda", "seq", "read", "seq_read"), ("vda", "seq", "write", "seq_write")]
    ratio = con.execute("SELECT DISTINCT bw_ratio FROM fio_bw_ratio('vda')").fetchall()
    assert ratio == [(1.0,)]


def _same_run_rows(db: Path, file_name: str) -> dict[tuple[str, str], tuple[float, float]]:
    con = _con(db)
    rows = con.execute("SELECT report_format, direction, bw_kib_s, iops FROM fio_jobs j JOIN sources s "
                       "USING (source_id) WHERE s.file_name = ?", [file_name]).fetchall()
    return {(f, d): (bw, iops) for f, d, bw, iops in rows}


def _agree(a: tuple[float, float], b: tuple[float, float], rel: float) -> None:
    assert a[0] == pytest.approx(b[0], rel=rel) and a[1] == pytest.approx(b[1], rel=rel), (a, b)


def test_normal_and_terse_of_the_same_run_agree(corpus, tmp_db):
    # generated/fio/fio-3.33_normal+terse_group_reporting.txt: --output-format=normal,terse, one run.
    f = corpus / "generated" / "fio" / "fio-3.33_normal+terse_group_reporting.txt"
    rep = ingest([f], tmp_db)
    assert rep.ok, rep.errors
    rows = _same_run_rows(tmp_db, f.name)
    assert set(rows) == {("normal", "read"), ("terse", "read")}
    # the normal output prints 3 significant digits (IOPS=10.7k): 0.5 % rounding at most
    _agree(rows[("normal", "read")], rows[("terse", "read")], rel=0.005)
    assert rows[("terse", "read")] == (1365333, 10666)
    con = _con(tmp_db)
    grp = con.execute("SELECT DISTINCT report_format, jobs_in_report, group_reported FROM fio_jobs ORDER BY 1").fetchall()
    assert grp == [("normal", 2, True), ("terse", 2, True)]
    # run metrics come from the more precise report
    assert con.execute("SELECT value FROM run_metrics WHERE metric = 'fio_read_iops'").fetchone()[0] == 10666


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_normal_terse_and_json_plus_of_one_real_run_agree(tmp_path, tmp_db):
    # No corpus file holds all three formats of one run, so fio makes one here (about 1 s of I/O
    # on a 4 MiB file under tmp): --output-format=normal,terse,json+ writes all three to stdout.
    run = tmp_path / "runs" / "fio_three_formats"
    run.mkdir(parents=True)
    out = run / "fio_output.txt"
    with open(out, "w") as fh:
        subprocess.run(["fio", "--name=randrw", "--rw=randrw", f"--filename={tmp_path / 'fio.dat'}", "--size=4M",
                        "--bs=4k", "--runtime=1", "--time_based", "--ioengine=psync", "--numjobs=2",
                        "--group_reporting", "--output-format=normal,terse,json+"],
                       stdout=fh, stderr=subprocess.DEVNULL, check=True, timeout=60)
    rep = ingest([run], tmp_db)
    assert rep.ok, rep.errors
    rows = _same_run_rows(tmp_db, "fio_output.txt")
    for d in ("read", "write"):
        _agree(rows[("terse", d)], rows[("json+", d)], rel=1e-4)  # terse truncates IOPS to an integer
        _agree(rows[("normal", d)], rows[("json+", d)], rel=0.01)  # '13.2k' and '51.4MiB/s': 3 digits
    assert _con(tmp_db).execute("SELECT DISTINCT jobs_in_report FROM fio_jobs").fetchall() == [(2,)]


def test_json_versions_normalise_units(corpus, tmp_path):
    pub = corpus / "public" / "fio"
    db = tmp_path / "k.duckdb"
    rep = ingest([pub / "fio-2.1.4_json_pkb.json", pub / "fio-2.17_json_pkb.json",
                  pub / "fio-3.1_json_randread_fioplot.json"], db)
    assert rep.ok, rep.errors
    con = _con(db)

    def job(version, jobname):
        return con.execute("SELECT io_kib, clat_mean_us, clat_p99_us, bw_kib_s FROM fio_jobs WHERE fio_version = ? "
                           "AND jobname = ?", [version, jobname]).fetchone()

    # fio 2.1.4: io_bytes is KiB and clat is in us
    assert job("fio-2.1.4", "sequential_write") == (361984, 477734.84, 823296, 68118)
    # fio 3.1: clat_ns in ns
    io, clat, p99, bw = job("fio-3.1", "random-read")
    assert io == 1587404 and bw == 26456 and 100 < clat < 1000 and p99 == pytest.approx(142.336)


def test_several_jobs_without_group_reporting_is_a_warning_and_summed(corpus, tmp_db):
    f = corpus / "generated" / "fio" / "fio-3.33_json_two_jobs.json"
    rep = ingest([f], tmp_db)
    assert rep.ok, rep.errors
    (res,) = [r for r in rep.files if r.format == "fio-json"]
    assert any("fio-3.33_json_two_jobs.json:257: fio json output has 2 job reports (no group_reporting)" in w
               for w in res.warnings)
    con = _con(tmp_db)
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric IN ('fio_read_bw_kib_s', "
                         "'fio_write_bw_kib_s')").fetchall())
    assert m == {"fio_write_bw_kib_s": 744727, "fio_read_bw_kib_s": 910222}


NORMAL_2X = """\
seq-read: (g=0): rw=read, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32
fio-2.1.3
Starting 2 processes

seq-read: (groupid=0, jobs=1): err= 0: pid=2345: Mon Jan  5 10:00:00 2015
  read : io=326081KB, bw=1023.3KB/s, iops=255 , runt=318686msec
    slat (usec): min=2 , max=1805.8K, avg=12.50, stdev=800.10
    clat (msec): min=1 , max=2500 , avg=125.04, stdev=80.01
     lat (msec): min=1 , max=2500 , avg=125.05, stdev=80.02
    clat percentiles (msec):
     |  1.00th=[    3],  5.00th=[    8], 10.00th=[   15], 20.00th=[   40],
     | 50.00th=[  110], 95.00th=[  280], 99.00th=[  400], 99.90th=[  900]
    bw (KB  /s): min=  100, max= 2000, per=50.10%, avg=1030.00, stdev=200.00
  cpu          : usr=0.10%, sys=0.50%, ctx=80000, majf=0, minf=40
  IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=0.1%, 16=0.1%, 32=99.9%, >=64=0.0%
     issued    : total=r=81520/w=0/d=0, short=r=0/w=0/d=0

seq-read: (groupid=0, jobs=1): err= 0: pid=2346: Mon Jan  5 10:00:00 2015
  read : io=325000KB, bw=1019.9KB/s, iops=254 , runt=318700msec
    clat (msec): min=1 , max=2400 , avg=125.40, stdev=80.50
  cpu          : usr=0.10%, sys=0.50%, ctx=80000, majf=0, minf=40

Run status group 0 (all jobs):
   READ: io=651081KB, aggrb=2043KB/s, minb=1019KB/s, maxb=1023KB/s, mint=318686msec, maxt=318700msec

Disk stats (read/write):
  sdb: ios=163000/0, merge=0/0, ticks=20000000/0, in_queue=20000000, util=100.00%
"""


def test_fio_2x_normal_output_and_clones_without_group_reporting(tmp_path, tmp_db):
    # Inline, from formats.md §6.3 (fio <= 2.16 layout: 'read : io=..KB, bw=..KB/s, iops=.. , runt=..msec',
    # 'max=1805.8K'): the corpus has no fio 2.x normal output. numjobs=2 without group_reporting.
    d = _one_file(tmp_path, "fio.txt", NORMAL_2X)
    rep = ingest([d], tmp_db)
    assert rep.ok, rep.errors
    (res,) = [r for r in rep.files if r.format == "fio-text"]
    assert any("fio.txt:18: fio normal output has 2 job reports" in w for w in res.warnings)
    con = _con(tmp_db)
    r = con.execute("SELECT bw_kib_s, iops, io_kib, runtime_ms, slat_mean_us, clat_mean_us, clat_p99_us, "
                    "bw_mean_kib_s, total_ios, iodepth, bs_bytes, ioengine FROM fio_jobs ORDER BY job_no").fetchall()
    assert r[0] == (1023.3, 255, 326081, 318686, 12.5, 125040, 400000, 1030, 81520, 32, 4096, "libaio")
    assert len(r) == 2
    assert con.execute("SELECT value FROM run_metrics WHERE metric = 'fio_read_bw_kib_s'").fetchone()[0] == \
        pytest.approx(1023.3 + 1019.9)
    assert con.execute("SELECT device, read_ios, util_pct FROM fio_disk_util").fetchone() == ("sdb", 163000, 100.0)


def _counts(db: Path) -> dict[str, int]:
    con = _con(db)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("fio_jobs", "fio_latency_percentiles", "fio_disk_util", "sources", "runs")}
    finally:
        con.close()


def test_truncated_json_fails_clearly_and_database_is_unchanged(tool, tmp_path, tmp_db):
    good = tmp_path / "good"
    shutil.copytree(REAL / "rw=read", good / "rw=read")
    assert ingest([good], tmp_db).committed
    before = _counts(tmp_db)
    src = (REAL / "rw=write" / "format=jsonplus" / "rep=1" / "fio_output.json").read_text()
    cut = src[: len(src) // 2]
    d = _one_file(tmp_path / "bad", "fio_output.json", cut)
    proc = tool("ingest", "--db", tmp_db, good, d)
    assert proc.returncode == 2
    line = cut.count("\n") + 1
    assert f"fio_output.json:{line}: expected a complete fio JSON document" in proc.stderr
    assert _counts(tmp_db) == before


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("printed, damaged, expected", [
    ("50.00th=[  110]", "300.00th=[  110]", "expected percentile between 0 and 100 (a percentile), found '300.0'"),
    ("1.00th=[    3]", "1e300.00th=[    3]", "expected a fio result line with numbers and known units"),
    ("99.00th=[  400]", "99.00th=[99999999999999999999]", "expected value_us between 0 and"),
])
def test_a_damaged_percentile_is_refused_at_its_line(tmp_path, tmp_db, printed, damaged, expected):
    """A percentile line is read whole: a percentile outside 0..100, a value beyond any run or text between the
    items (which a search for items would skip, reading '1e300.00th' as 300) is refused at its line, and the
    store keeps what it held."""
    good = tmp_path / "good"
    shutil.copytree(REAL / "rw=read", good / "rw=read")
    assert ingest([good], tmp_db).committed
    before = _counts(tmp_db)
    text = NORMAL_2X.replace(printed, damaged)
    line = text[:text.index(damaged)].count("\n") + 1
    rep = ingest([_one_file(tmp_path / "bad", "fio.txt", text)], tmp_db)
    (err,) = rep.errors
    assert f"fio.txt:{line}: {expected}" in err, err
    assert _counts(tmp_db) == before


JSON_PLUS = REAL / "rw=randwrite" / "format=jsonplus" / "rep=1" / "fio_output.json"


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("source, name, printed, damaged, expected", [
    # fio JSON: a percentile key or its value (ns) beyond what fio prints
    (JSON_PLUS, "fio_output.json", '"99.990000" : ', '"99.990000" : 99999999999999999999, "x" : ',
     "expected value_us between 0 and"),
    (JSON_PLUS, "fio_output.json", '"5.000000" : ', '"1e300" : ', "expected percentile between 0 and 100"),
    # terse: one line per job, its percentiles as 'P%=VALUE' fields (after a line fio printed before it)
    ("terse", "terse.txt", "99.990000%=2637;", "99.990000%=99999999999999;", "expected value_us between 0 and"),
    ("terse", "terse.txt", "5.000000%=37;", "300.000000%=37;", "expected percentile between 0 and 100"),
])
def test_a_json_or_terse_percentile_outside_its_bounds_is_refused_at_its_line(tmp_path, tmp_db, tool, corpus, source,
                                                                            name, printed, damaged, expected):
    """fio_latency_percentiles keeps no line: a percentile of a JSON or terse report outside the table's bounds
    was refused by the store's range check naming the file alone; it is now refused as it is read, at the line
    printing it. Exit 2, and the store keeps what it held."""
    good = tmp_path / "good"
    shutil.copytree(REAL / "rw=read", good / "rw=read")
    tool("ingest", "--db", tmp_db, good, check=True)
    before = _counts(tmp_db)
    if source == "terse":
        text = "fio: some warning\n" + (corpus / "generated" / "fio" / "fio-3.33_terse_v3.txt").read_text()
    else:
        text = source.read_text()
    assert printed in text
    text = text.replace(printed, damaged, 1)
    line = text[:text.index(damaged)].count("\n") + 1
    proc = tool("ingest", "--db", tmp_db, _one_file(tmp_path / "bad", name, text))
    assert proc.returncode == 2 and "1 file(s) could not be ingested" in proc.stderr, proc.stderr
    assert f"{name}:{line}: {expected}" in proc.stderr, proc.stderr
    assert _counts(tmp_db) == before


def test_unknown_terse_version_is_refused(tmp_path, tmp_db, corpus):
    # Inline: a v3 line from the corpus with its version field changed to 6 (no fio prints it yet).
    v3 = (corpus / "generated" / "fio" / "fio-3.33_terse_v3.txt").read_text()
    d = _one_file(tmp_path, "terse.txt", "fio: some warning\n" + "6" + v3[1:])
    rep = ingest([d], tmp_db)
    assert not rep.ok and not rep.committed
    (err,) = rep.errors
    assert "terse.txt:2: expected fio terse version 2, 3, 4, 5" in err and "version 6 is not known" in err


def test_fio_terse_versions_2_to_5_are_read(corpus, tmp_db):
    gen = corpus / "generated" / "fio"
    files = [gen / f"fio-3.33_terse_v{v}.txt" for v in (2, 3, 4, 5)]
    rep = ingest(files, tmp_db)
    assert rep.ok, rep.errors
    con = _con(tmp_db)
    rows = con.execute("SELECT s.file_name, j.direction, j.bw_kib_s, j.iops, j.io_kib, j.clat_p99_us, j.bw_samples "
                       "FROM fio_jobs j JOIN sources s USING (source_id) ORDER BY 1, 2").fetchall()
    got = {(f[-6:-4], d): tuple(rest) for f, d, *rest in rows}
    assert got[("v2", "read")][:3] == (61859, 15464, 123780)
    assert got[("v3", "write")][:4] == (29453, 7363, 58936, 12)
    assert got[("v5", "read")] == (66796, 16699, 133660, 114, 3)
    disks = con.execute("SELECT count(*) FROM fio_disk_util").fetchone()[0]
    assert disks == 3  # v3, v4, v5 print disk util; v2 does not


def test_cut_off_terse_line_at_the_end_is_a_warning(tmp_path, tmp_db, corpus):
    v3 = (corpus / "generated" / "fio" / "fio-3.33_terse_v3.txt").read_text()
    d = _one_file(tmp_path, "terse.txt", v3 + v3[:300])
    rep = ingest([d], tmp_db)
    assert rep.ok, rep.errors
    (res,) = [r for r in rep.files if r.format == "fio-text"]
    assert any("terse.txt:2: terse line cut off" in w for w in res.warnings)


def test_every_fio_file_in_the_corpus_parses(corpus):
    found = []
    for p in sorted(corpus.rglob("*")):
        if not p.is_file() or p.name == "run.toml":
            continue
        det = detect(p)
        if det.format is not None and det.format.tool == "fio":
            found.append((p, det.format))
    names = {str(p.relative_to(corpus)) for p, _ in found}
    expected = {str(p.relative_to(corpus)) for sub in ("generated/fio", "public/fio")
                for p in (corpus / sub).iterdir()}
    expected |= {str(p.relative_to(corpus)) for p in (corpus / "real").rglob("fio_output.*")}
    assert expected <= names, expected - names
    for p, fmt in found:
        sink = RecordingSink(p)
        fmt.parse(p, sink)
        jobs = sink.rows.get("fio_jobs", [])
        assert jobs, p
        for j in jobs:
            assert j["direction"] == "sync" or (j["bw_kib_s"] > 0 and j["iops"] > 0), (p, j)
            assert j["lat_mean_us"] is None or 0 < j["lat_mean_us"] < 1e7, (p, j)
