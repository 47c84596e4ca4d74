"""sar / sadf -d / sadf -j / sa files: parsing, locales, run windows, metrics, bad input."""

from __future__ import annotations

import csv
import shutil
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, run_tool
from kansoku.errors import ParseError
from sys_helpers import parse

RUN1 = FIXTURES / "sar" / "run1"  # copied from corpus/real/.../read/.../clients=2/rep=1
REAL_RUN = "study=scaleup/workload=read/config=checksums-off/clients=2/rep=1"


def _real_run_dir(corpus: Path) -> Path:
    return corpus / "real" / REAL_RUN


# -- the headline number: mean %idle over the run window, checked independently -----------------

def _independent_idle(csv_path: Path, run_toml: Path) -> float:
    """Mean %idle of CPU 'all' from sadf -d, plain csv module: a sample counts when the middle of its
    interval lies in [start, end] of run.toml (the rule the cpu_in_run view documents)."""
    meta = tomllib.loads(run_toml.read_text())
    start, end = meta["start"].timestamp(), meta["end"].timestamp()
    header = None
    vals = []
    with open(csv_path, newline="") as fh:
        for row in csv.reader(fh, delimiter=";"):
            if row[0].startswith("# hostname"):
                header = row[3:]
                continue
            if header is None or header[0] != "CPU" or "%idle" not in header or row[3] != "-1":
                continue
            ts = datetime.strptime(row[2], "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=timezone.utc).timestamp()
            mid = ts - float(row[1]) / 2
            if start <= mid <= end:
                vals.append(float(row[3 + header.index("%idle")]))
    assert len(vals) >= 10
    return sum(vals) / len(vals)


def test_mean_idle_of_real_run_matches_sadf_csv(tool, tmp_path, tmp_db):
    run = tmp_path / "study=scaleup" / "clients=2" / "rep=1"
    shutil.copytree(RUN1, run)
    tool("ingest", "--db", tmp_db, tmp_path, check=True)
    con = duckdb.connect(str(tmp_db), read_only=True)
    got = con.execute("SELECT value FROM run_metrics WHERE metric = 'cpu_idle_pct'").fetchall()
    chosen = con.execute("SELECT DISTINCT format FROM sys_series_chosen WHERE activity = 'cpu'").fetchall()
    boot = con.execute("SELECT count(*) FROM sys_metrics WHERE since_boot").fetchone()[0]
    con.close()
    assert len(got) == 1
    assert got[0][0] == pytest.approx(_independent_idle(RUN1 / "sadf_d.csv", RUN1 / "run.toml"), abs=1e-9)
    # both files hold the same data: the sa file is read, its sadf -d rendering is checked on a sample
    # (each measurement is ingested once, from the sa file)
    assert chosen == [("sa-binary",)]
    assert boot == 0  # sar does not print a since-boot sample


def test_all_four_renderings_of_one_run_agree(corpus, tmp_db, tool):
    run = _real_run_dir(corpus)
    tool("ingest", "--db", tmp_db, run, check=True)
    con = duckdb.connect(str(tmp_db), read_only=True)
    summed = """SELECT format, count(*), round(sum(value), 6) FROM sys_metrics
           WHERE tool = 'sar' AND activity IN ('cpu', 'memory', 'queue', 'net-dev', 'io', 'task')
             AND metric NOT IN ('rd_sec/s', 'wr_sec/s')
           GROUP BY format ORDER BY format"""
    per_format = con.execute(summed).fetchall()
    checked = con.execute("SELECT file_name, format, rows_loaded, checked_against FROM sources "
                          "WHERE checked_against IS NOT NULL ORDER BY 1").fetchall()
    views = con.execute("SELECT DISTINCT tool, format FROM cpu ORDER BY 1").fetchall()
    disk_ts = con.execute("SELECT min(t_s), max(t_s), count(DISTINCT device) FROM disk_in_run").fetchone()
    metrics = dict(con.execute("SELECT metric, value FROM run_metrics").fetchall())
    con.close()
    # the sa file is read; its three renderings are kept and checked on a sample, not parsed
    assert checked == [("sadf.json", "sadf-json", 0, "sa.bin"), ("sadf_d.csv", "sadf-csv", 0, "sa.bin"),
                       ("sar_A.txt", "sar-text", 0, "sa.bin")]
    # each rendering read whole by its own parser gives the rows stored from the sa file
    meta = tomllib.loads((run / "run.toml").read_text())
    for name, fmt in (("sadf.json", "sadf-json"), ("sadf_d.csv", "sadf-csv"), ("sar_A.txt", "sar-text")):
        per_format += parse(fmt, run / name, run_start=meta["start"], run_meta=meta).q(summed)
    assert {f for f, _, _ in per_format} == {"sa-binary", "sadf-csv", "sadf-json", "sar-text"}
    assert len({n for _, n, _ in per_format}) == 1, per_format
    assert max(s for *_, s in per_format) - min(s for *_, s in per_format) < 1e-3, per_format
    # one authoritative file per tool: no double counting; iostat/vmstat are kept apart by 'tool'
    assert views == [("iostat", "iostat-text"), ("sar", "sa-binary"), ("vmstat", "vmstat-text")]
    assert 0 < disk_ts[0] < 2 and 14 < disk_ts[1] < 16.5 and disk_ts[2] == 1  # vda only
    for m in ("cpu_idle_pct", "cpu_usr_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_soft_pct",
              "disk_read_kb_s", "disk_write_kb_s", "disk_util_pct_max"):
        assert m in metrics
    assert metrics["cpu_usr_pct"] + metrics["cpu_sys_pct"] + metrics["cpu_idle_pct"] <= 100.5


# -- every file of these tools in the corpus --------------------------------------------------

SYS_TOOLS = {"sar", "iostat", "vmstat"}


def _corpus_sys_files(corpus: Path) -> list[Path]:
    out = []
    for sub in ("generated", "public"):
        for d in ("sar", "iostat", "vmstat"):
            out += sorted(p for p in (corpus / sub / d).glob("*") if p.is_file())
    for name in ("sa.bin", "sar_A.txt", "sadf_d.csv", "sadf.json", "iostat_x.txt", "vmstat.txt"):
        out += sorted((corpus / "real").rglob(name))
    return out


@pytest.mark.slow  # the corpus's files: --all (CI); each format's own tests (test_sysstat_variants.py) are quick
def test_every_sysstat_iostat_vmstat_file_in_the_corpus_parses(corpus, monkeypatch):
    from kansoku.ingest.detect import detect
    from kansoku.parsers.sysstat import common as sm

    # parsing is what is walked here; loading into DuckDB is covered by the ingest tests
    counted: dict[str, int] = {}
    monkeypatch.setattr(sm.Collector, "flush", lambda self, sink: counted.__setitem__(str(sink.path), len(self.rows)))

    files = _corpus_sys_files(corpus)
    assert len(files) > 150
    failures = []
    for f in files:
        d = detect(f)
        want = f.parent.name if f.parent.name in SYS_TOOLS else \
            "iostat" if f.name.startswith("iostat") else "vmstat" if f.name.startswith("vmstat") else "sar"
        if d.format is None or d.format.tool != want:
            failures.append(f"{f}: detected as {d.format and d.format.name} ({d.reason})")
            continue
        try:
            if d.format.name == "sa-binary":  # streamed: DuckDB does the rows, so they are counted there
                s = parse(d.format.name, f)
                counted[str(f)] = s.q("SELECT count(*) FROM sys_metrics")[0][0]
            else:
                parse(d.format.name, f, mem=False)
        except ParseError as exc:
            failures.append(str(exc))
            continue
        if not counted.get(str(f)):
            failures.append(f"{f}: no rows")
    assert not failures, "\n".join(failures)


# -- locales, clocks, records ------------------------------------------------------------------

def test_japanese_and_chinese_times_and_translated_average(corpus):
    s = parse("sar-text", corpus / "generated/sar/sysstat12.6.1_sar-ur_ja_JP.txt")
    rows = s.q("SELECT DISTINCT ts FROM sys_metrics WHERE activity = 'cpu' ORDER BY ts")
    assert [r[0].isoformat() for r in rows] == ["2026-11-21T23:43:36+00:00", "2026-11-21T23:43:37+00:00"]
    # the 平均値: lines are not samples
    assert s.q("SELECT count(*) FROM sys_metrics WHERE activity='cpu' AND metric='%idle'")[0][0] == 2
    z = parse("sar-text", corpus / "generated/sar/sysstat12.6.1_sar-q_zh_CN.txt")
    assert z.q("SELECT count(DISTINCT ts), min(ts)::VARCHAR FROM sys_metrics WHERE metric = 'runq-sz'")[0] == \
        (2, "2026-11-21 23:43:38+00")


def test_decimal_commas_and_device_name_last(corpus):
    s = parse("sar-text", corpus / "generated/sar/sysstat12.6.1_sar_multi_de_DE_decimal_comma.txt")
    usr = s.q("SELECT value FROM sys_metrics WHERE activity='cpu' AND instance='all' AND metric='%usr' ORDER BY ts")
    assert usr[0][0] == pytest.approx(34.18)
    dev = s.q("SELECT DISTINCT instance FROM sys_metrics WHERE activity='disk'")
    assert dev == [("vda",)]


def test_sar_text_with_a_twelve_hour_clock_reads_pm_times(corpus):
    s = parse("sar-text", corpus / "generated/sar/sysstat12.6.1_sar-A_live_en_US_12h.txt")
    ts = s.q("SELECT min(ts)::VARCHAR FROM sys_metrics WHERE activity='cpu'")[0][0]
    assert ts == "2026-11-21 23:43:32+00"  # 11:43:32 PM


def test_midnight_rollover_restart_and_average_per_segment(tmp_path):
    # Built from formats.md §2.2-2.3 (no real capture crosses midnight): sar -f output with a
    # restart segment, Average: lines per segment, and times rolling over midnight.
    f = tmp_path / "sar.txt"
    f.write_text(
        "Linux 5.4.0 (db1) \t04/18/19 \t_x86_64_\t(2 CPU)\n\n"
        "23:59:50        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
        "23:59:59        all      1.00      0.00      1.00      0.00      0.00     98.00\n"
        "00:00:08        all      2.00      0.00      1.00      0.00      0.00     97.00\n"
        "Average:        all      1.50      0.00      1.00      0.00      0.00     97.50\n\n"
        "00:00:10     LINUX RESTART\t(4 CPU)\n\n"
        "00:00:20        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
        "00:00:30        all      3.00      0.00      1.00      0.00      0.00     96.00\n"
        "Average:        all      3.00      0.00      1.00      0.00      0.00     96.00\n")
    s = parse("sar-text", f)
    ts = [r[0].isoformat() for r in s.q("SELECT ts FROM sys_metrics WHERE metric='%idle' ORDER BY ts")]
    assert ts == ["2019-04-18T23:59:59+00:00", "2019-04-19T00:00:08+00:00", "2019-04-19T00:00:30+00:00"]
    assert s.q("SELECT value FROM sys_metrics WHERE activity='restart'") == [(4.0,)]


def test_restart_in_sadf_csv_and_json(corpus):
    c = parse("sadf-csv", corpus / "public/sar/sysstat12.7_sadf-d_restart.csv")
    j = parse("sadf-json", corpus / "public/sar/sysstat12.7_sadf-j_restart.json")
    assert c.q("SELECT value FROM sys_metrics WHERE activity='restart'") == [(8.0,)]
    assert j.q("SELECT count(*) FROM sys_metrics WHERE activity='restart'")[0][0] >= 1


def test_sadf_dh_one_line_and_epoch(corpus):
    s = parse("sadf-csv", corpus / "public/sar/sysstat12.7_sadf-dh_one-line.csv")
    cpus = s.q("SELECT DISTINCT instance FROM sys_metrics WHERE activity='cpu' ORDER BY 1")
    assert cpus == [("3",), ("all",)]
    assert s.q("SELECT count(*) FROM sys_metrics WHERE activity='intr' AND instance='sum'")[0][0] > 0
    e = parse("sadf-csv", corpus / "generated/sar/sysstat12.6.1_sadf-d-U_epoch.csv")
    assert e.q("SELECT min(ts)::VARCHAR FROM sys_metrics")[0][0] == "2026-11-21 23:43:46+00"


def test_json_names_match_csv_names(corpus):
    d = _real_run_dir(corpus)
    j = parse("sadf-json", d / "sadf.json")
    c = parse("sadf-csv", d / "sadf_d.csv")
    q = "SELECT DISTINCT activity, metric FROM sys_metrics WHERE activity <> 'disk' ORDER BY 1, 2"
    assert j.q(q) == c.q(q)


# -- bad input ------------------------------------------------------------------------------------

def test_truncated_sadf_json_keeps_complete_records(tmp_path):
    import subprocess

    if shutil.which("sadf") is None:
        pytest.skip("sadf not installed")
    js = subprocess.run(["sadf", "-j", str(RUN1 / "sa.bin"), "--", "-u"], capture_output=True, text=True,
                        check=True).stdout
    f = tmp_path / "sadf.json"
    f.write_text(js[: int(len(js) * 0.6)])
    s = parse("sadf-json", f)
    assert any("ends early" in m for _, m in s.warnings)
    n = s.q("SELECT count(DISTINCT ts) FROM sys_metrics")[0][0]
    assert 5 < n < 18


def test_truncated_sar_text_last_line_is_a_warning(tmp_path):
    f = tmp_path / "sar.txt"
    f.write_text("Linux 5.4.0 (db1) \t04/18/19 \t_x86_64_\t(2 CPU)\n\n"
                 "10:00:00        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
                 "10:00:01        all      1.00      0.00      1.00      0.00      0.00     98.00\n"
                 "10:00:02        all      2.00      0.0")
    s = parse("sar-text", f)
    assert s.q("SELECT count(DISTINCT ts) FROM sys_metrics")[0][0] == 1
    cut = [w for w in s.warnings if "cut off" in w[1]]
    assert cut and cut[0][0] == 5


def test_garbage_in_sar_text_names_file_and_line(tmp_path):
    f = tmp_path / "sar.txt"
    f.write_text("Linux 5.4.0 (db1) \t04/18/19 \t_x86_64_\t(2 CPU)\n\n"
                 "10:00:00        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
                 "10:00:01        all      1.00      0.00      1.00      0.00      0.00     98.00\n"
                 "this is not sar output\n"
                 "10:00:02        all      2.00      0.00      1.00      0.00      0.00     97.00\n")
    with pytest.raises(ParseError) as ei:
        parse("sar-text", f)
    assert str(f) in str(ei.value) and ":5:" in str(ei.value)


def test_wrong_tool_is_not_taken_for_sar(tmp_path):
    from kansoku.ingest.detect import detect

    f = tmp_path / "out.txt"
    f.write_text("transaction type: <builtin: TPC-B (sort of)>\nnumber of clients: 2\n"
                 "progress: 1.0 s, 420.0 tps, lat 4.6 ms stddev 1.2\n")
    d = detect(f)
    assert d.format is None or d.format.tool not in SYS_TOOLS
    with pytest.raises(ParseError):
        parse("sar-text", f)
    with pytest.raises(ParseError):
        parse("sadf-csv", f)


def test_unknown_sa_file_version_is_a_clear_error(tmp_path):
    if shutil.which("sadf") is None:
        pytest.skip("sadf not installed")
    data = bytearray((RUN1 / "sa.bin").read_bytes())
    data[2:4] = b"\x70\x21"  # format magic 0x2170: a sysstat 9.x data file
    f = tmp_path / "sa.bin"
    f.write_bytes(bytes(data))
    with pytest.raises(ParseError) as ei:
        parse("sa-binary", f)
    msg = str(ei.value)
    assert str(f) in msg and "sadf" in msg


def test_sa_file_converted_by_sadf_c_is_ingested(tmp_path, tmp_db):
    """A real sysstat 11 file: refused with the advice to convert it; once converted with the installed
    'sadf -c', ingested whole, its interrupt totals those the sar that wrote it prints."""
    if shutil.which("sadf") is None:
        pytest.skip("sadf not installed")
    import subprocess

    old = FIXTURES / "sa_old_format" / "sa_sysstat11.bin"
    run = tmp_path / "runs" / "run"
    run.mkdir(parents=True)
    shutil.copy(old, run / "sa.bin")
    p = run_tool("ingest", "--db", tmp_db, run)
    assert p.returncode == 2 and "sadf -c" in p.stderr, p.stderr
    with open(run / "sa.bin", "wb") as out:
        subprocess.run(["sadf", "-c", str(old)], stdout=out, stderr=subprocess.DEVNULL, check=True)
    p = run_tool("ingest", "--db", tmp_db, run)
    assert p.returncode == 0, p.stderr
    con = duckdb.connect(str(tmp_db), read_only=True)
    got = [round(v, 2) for (v,) in con.execute(
        "SELECT value FROM sys_metrics WHERE activity = 'intr' AND instance = 'sum' AND metric = 'all' "
        "ORDER BY ts").fetchall()]
    cpu = con.execute("SELECT count(DISTINCT ts) FROM sys_metrics WHERE activity = 'cpu'").fetchone()[0]
    con.close()
    printed = [float(line.split()[-1]) for line in
               (FIXTURES / "sa_old_format" / "sar_I_SUM_sysstat11.txt").read_text().splitlines()
               if line[:2].isdigit() and line.split()[1] == "sum"]
    assert got == printed and len(got) == cpu == 3


def test_sa_file_without_sadf_installed_is_a_warning(tmp_path, monkeypatch):
    import kansoku.parsers.sysstat.sa_binary as sysstat

    monkeypatch.setattr(sysstat.shutil, "which", lambda name: None)
    s = parse("sa-binary", RUN1 / "sa.bin")
    assert any("sadf" in m and "install" in m for _, m in s.warnings)
    assert s.q("SELECT count(*) FROM sys_metrics")[0][0] == 0


def test_bad_sadf_csv_fails_ingest_and_keeps_database(tool, tmp_path, tmp_db):
    good = tmp_path / "good" / "rep=1"
    shutil.copytree(RUN1, good)
    tool("ingest", "--db", tmp_db, tmp_path / "good", check=True)
    con = duckdb.connect(str(tmp_db), read_only=True)
    before = con.execute("SELECT (SELECT count(*) FROM sys_metrics), (SELECT count(*) FROM sources)").fetchone()
    con.close()
    bad = tmp_path / "bad" / "rep=2"
    bad.mkdir(parents=True)
    lines = (RUN1 / "sadf_d.csv").read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace(";", ";x", 5).replace("x", "", 4)  # a value that is not a number
    lines[5] = lines[5].rsplit(";", 1)[0] + ";12.3.4\n"
    (bad / "sadf_d.csv").write_text("".join(lines))
    p = tool("ingest", "--db", tmp_db, tmp_path / "bad")
    assert p.returncode == 2
    assert "sadf_d.csv:6" in p.stderr
    con = duckdb.connect(str(tmp_db), read_only=True)
    after = con.execute("SELECT (SELECT count(*) FROM sys_metrics), (SELECT count(*) FROM sources)").fetchone()
    con.close()
    assert after == before
