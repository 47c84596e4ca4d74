"""sysstat variants, on real sysstat 12.6.1 output generated here (tests/fixtures/sysstat_variants/README.md says how):
mpstat and pidstat are not sar, device classes in disk totals, time zones and midnight, since-boot
figures, colour escapes, sar --pretty, plausibility bounds."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import FIXTURES, ro_con, run_tool
from kansoku.errors import ParseError
from kansoku.ingest.detect import detect
from sys_helpers import parse

V = FIXTURES / "sysstat_variants"


@pytest.mark.parametrize("name, fmt", [
    ("mpstat_P.txt", "mpstat-text"), ("mpstat_Pall.txt", "mpstat-text"), ("mpstat_A.txt", "mpstat-text"),
    ("mpstat_boot.txt", "mpstat-text"), ("mpstat_json.txt", "mpstat-json"), ("mpstat_A_json.txt", "mpstat-json"),
    ("pidstat.txt", "pidstat-text"), ("pidstat_udr.txt", "pidstat-text"), ("pidstat_boot.txt", "pidstat-text"),
    ("sar_colors.txt", "sar-text"), ("sar_pretty.txt", "sar-text"), ("sar_u0.txt", "sar-text"),
    ("sar_ny.txt", "sar-text"), ("iostat_g.txt", "iostat-text"), ("sa_loop.bin", "sa-binary"),
])
def test_detected_as_their_own_tool(name, fmt):
    assert detect(V / name).format.name == fmt


def test_mpstat_per_cpu_soft_and_node_section():
    s = parse("mpstat-text", V / "mpstat_A.txt")
    acts = {a for (a,) in s.q("SELECT DISTINCT activity FROM sys_metrics")}
    assert acts == {"cpu", "cpu-node", "intr", "intr-irq", "softirq"}
    assert s.q("SELECT DISTINCT tool FROM sys_metrics") == [("mpstat",)]
    # the file's line '02:01:05       1   10.10 ... 78.79 ...': CPU 1, first sample
    v = s.q("SELECT value FROM sys_metrics WHERE activity='cpu' AND instance='1' AND metric='%iowait' "
            "AND ts = (SELECT min(ts) FROM sys_metrics)")
    assert v == [(78.79,)]
    assert s.q("SELECT count(*) FROM sys_metrics WHERE metric='%soft' AND activity='cpu'")[0][0] == 6
    assert s.q("SELECT value FROM sys_metrics WHERE activity='softirq' AND instance='1' AND metric='BLOCK/s' "
               "ORDER BY ts LIMIT 1") == [(190.0,)]


def test_mpstat_json_matches_its_keys():
    s = parse("mpstat-json", V / "mpstat_json.txt")
    assert s.q("SELECT value FROM sys_metrics WHERE instance='1' AND metric='%iowait' ORDER BY ts LIMIT 1") == [(90.10,)]
    a = parse("mpstat-json", V / "mpstat_A_json.txt")
    assert {x for (x,) in a.q("SELECT DISTINCT activity FROM sys_metrics")} >= {"cpu", "cpu-node", "intr", "softirq"}


def test_mpstat_and_pidstat_without_interval_are_since_boot():
    s = parse("mpstat-text", V / "mpstat_boot.txt")
    assert s.q("SELECT bool_and(since_boot) FROM sys_metrics") == [(True,)]
    assert any("since boot" in w for _, w in s.warnings)
    p = parse("pidstat-text", V / "pidstat_boot.txt")
    assert p.q("SELECT bool_and(since_boot) FROM pidstat") == [(True,)]


def test_pidstat_rows_per_process():
    s = parse("pidstat-text", V / "pidstat_udr.txt")
    # '02:01:11        0     18520   74.26   22.77    0.00    9.90   97.03     1  chromium'
    assert s.q("SELECT value FROM pidstat WHERE pid=18520 AND metric='%CPU' ORDER BY ts LIMIT 1") == [(97.03,)]
    assert s.q("SELECT value FROM pidstat WHERE pid=18511 AND metric='VSZ' ORDER BY ts LIMIT 1") == [(1518304952.0,)]
    assert s.q("SELECT DISTINCT command FROM pidstat WHERE pid=54") == [("kworker/1:1H-kblockd",)]
    assert s.q("SELECT count(DISTINCT ts) FROM pidstat WHERE NOT since_boot") == [(2,)]


def test_sar_colours_pretty_and_since_boot():
    c = parse("sar-text", V / "sar_colors.txt")
    assert c.q("SELECT value FROM sys_metrics WHERE metric='%idle' ORDER BY ts") == [(63.40,), (99.50,)]
    p = parse("sar-text", V / "sar_pretty.txt")
    assert p.q("SELECT instance, value FROM sys_metrics WHERE metric='wkB/s'") == [("vda", 13816.0)]
    b = parse("sar-text", V / "sar_u0.txt")
    assert b.q("SELECT bool_and(since_boot) FROM sys_metrics") == [(True,)]
    assert any("since boot" in w for _, w in b.warnings)


def test_midnight_under_a_2359_header_is_the_next_day():
    s = parse("sar-text", V / "sar_midnight_header.txt")  # header 23:59:59 (11/22/26), rows 00:00:00, 00:00:01
    got = [t for (t,) in s.q("SELECT DISTINCT ts::VARCHAR FROM sys_metrics ORDER BY 1")]
    assert got[0].startswith("2026-11-23 00:00:00")
    m = parse("sar-text", V / "sar_midnight.txt")
    got = [t[:19] for (t,) in m.q("SELECT DISTINCT ts::VARCHAR FROM sys_metrics ORDER BY 1")]
    assert got == ["2026-11-22 23:59:58", "2026-11-23 00:00:00", "2026-11-23 00:00:03"]


def test_sar_text_in_new_york_lands_on_the_binary_files_instants():
    meta = {"machine": {"timezone": "America/New_York"}}
    ny = parse("sar-text", V / "sar_ny.txt", run_meta=meta)  # 21:01:16 EST on 11/22/26
    assert ny.q("SELECT min(ts) FROM sys_metrics")[0][0] == datetime(2026, 11, 23, 2, 1, 16, tzinfo=timezone.utc)
    assert not any("guess" in w for _, w in ny.warnings)
    # the same sa file rendered by sadf -d -T in New York (local time, no zone) and by sadf -d (UTC)
    local = parse("sadf-csv", V / "sadf_d_local_ny.csv", run_meta=meta)
    utc = parse("sadf-csv", V / "sadf_d_loop.csv")
    assert local.q("SELECT min(ts), max(ts) FROM sys_metrics") == utc.q("SELECT min(ts), max(ts) FROM sys_metrics")
    guessed = parse("sar-text", V / "sar_ny.txt")
    assert any("guess" in w for _, w in guessed.warnings)


def test_standard_time_abbreviation_in_summer_follows_the_runs_zone(tmp_path):
    # sysstat prints tzname[0] ('EST') all year: in July New York is on EDT (UTC-4), not UTC-5
    line = (V / "sadf_d_loop.csv").read_text().splitlines()
    rows = [line[0]] + [l.replace("2026-11-23", "2026-07-01").replace(" UTC;", " EST;") for l in line[1:3]]
    f = tmp_path / "sadf.csv"
    f.write_text("\n".join(rows) + "\n")
    s = parse("sadf-csv", f, run_meta={"machine": {"timezone": "America/New_York"}})
    assert s.q("SELECT min(ts) FROM sys_metrics")[0][0].hour == 6  # 02:01:39 EDT = 06:01:39 UTC
    assert not s.warnings
    g = parse("sadf-csv", f)
    assert any("guess" in w for _, w in g.warnings)


def _run(tmp_path: Path, files: list[str], start: str, end: str, name="run") -> Path:
    d = tmp_path / "runs" / name
    d.mkdir(parents=True)
    for f in files:
        shutil.copy(V / f, d / f)
    (d / "run.toml").write_text(f'start = {start}\nend = {end}\n[machine]\ntimezone = "UTC"\n')
    return d


def test_disk_totals_count_physical_disks_only(tmp_path, tmp_db):
    # iostat -t -x -g grp vda loop0: loop0 (backed by a file on vda) wrote 33792 kB/s in the second report,
    # and the group row 'grp' repeats vda + loop0 (37240 kB/s)
    d = _run(tmp_path, ["iostat_g.txt"], "2026-11-23T02:08:05Z", "2026-11-23T02:08:08Z")
    run_tool("ingest", "--db", tmp_db, d, check=True)
    con = ro_con(tmp_db)
    classes = dict(con.execute("SELECT device, device_class FROM sys_devices").fetchall())
    assert classes == {"vda": "physical", "loop0": "virtual", "grp": "group"}
    per_dev = dict(con.execute("SELECT device, write_kb_s FROM disk_in_run_mean").fetchall())
    total = con.execute("SELECT value FROM run_metrics WHERE metric='disk_write_kb_s'").fetchone()[0]
    assert total == pytest.approx(per_dev["vda"]) == pytest.approx((3448 + 2772) / 2)
    assert per_dev["loop0"] == pytest.approx(33792 / 2)  # but it is not in the total


def test_device_names_are_classified_physical_partition_or_virtual():
    from kansoku.parsers.sysstat.common import classify_devices

    got = classify_devices({"sda", "sda1", "dm-0", "dev8-0", "dev8-1", "dev253-0", "nvme0n1", "nvme0n1p1",
                            "cciss/c0d0p1", "md0", "bcache0", "vg00-lv_data", "sdb-part1", "grp"}, {"grp"})
    assert {k: v[0] for k, v in got.items()} == {
        "sda": "physical", "sda1": "partition", "dm-0": "virtual", "dev8-0": "physical", "dev8-1": "partition",
        "dev253-0": "virtual", "nvme0n1": "physical", "nvme0n1p1": "partition", "cciss/c0d0p1": "partition",
        "md0": "virtual", "bcache0": "virtual", "vg00-lv_data": "virtual", "sdb-part1": "partition",
        "grp": "group"}


@pytest.mark.parametrize("old, new, expected", [
    ("63.40", "nan", "a finite number"),
    ("63.40", "1e309", "a finite number"),
    ("63.40", "1.8e19", "a percentage between 0 and 100"),
])
def test_implausible_values_are_refused_with_file_and_line(tmp_path, old, new, expected):
    text = (V / "sar_colors.txt").read_text()
    f = tmp_path / "sar.txt"
    f.write_text(text.replace(old, new, 1))
    with pytest.raises(ParseError) as e:
        parse("sar-text", f)
    assert expected in str(e.value) and f"{f}:4:" in str(e.value)


def test_negative_rate_in_sar_output_is_refused(tmp_path):
    text = (V / "sar_d_loop.txt").read_text().splitlines()
    i = next(i for i, l in enumerate(text) if " vda " in l or l.rstrip().endswith("vda") or "vda" in l.split())
    toks = text[i].split()
    toks[2] = "-5.00"
    text[i] = "   ".join(toks)
    f = tmp_path / "sar.txt"
    f.write_text("\n".join(text) + "\n")
    with pytest.raises(ParseError, match="non-negative"):
        parse("sar-text", f)


# -- several runs in one file or one directory (real pgbench 15 output, tests/fixtures/pgbench_layouts) ----

LAYOUTS = FIXTURES / "pgbench_layouts"


def test_appended_pgbench_summaries_are_refused(tmp_db):
    proc = run_tool("ingest", "--db", tmp_db, LAYOUTS / "appended")
    assert proc.returncode == 2, proc.stderr
    assert "pgbench.log:18: expected one pgbench run per file" in proc.stderr
    assert "its own run directory" in proc.stderr
    assert "Traceback" not in proc.stderr and not tmp_db.exists() or _no_runs(tmp_db)


def test_three_runs_in_one_directory_are_refused(tmp_db, tmp_path):
    proc = run_tool("ingest", "--db", tmp_db, LAYOUTS / "three_runs")
    assert proc.returncode == 2, proc.stderr
    assert "3 pgbench-stdout files in one run directory" in proc.stderr
    assert "A run is a directory" in proc.stderr
    # the -l logs alone (three PIDs) are refused too
    logs = tmp_path / "logs"
    logs.mkdir()
    for f in (LAYOUTS / "three_runs").glob("pgbench_log_*"):
        shutil.copy(f, logs / f.name)
    proc = run_tool("ingest", "--db", tmp_db, logs)
    assert proc.returncode == 2 and "logs of 3 different runs" in proc.stderr


def _no_runs(db: Path) -> bool:
    con = ro_con(db)
    try:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    finally:
        con.close()


# -- failure read as success: fio (tests/fixtures/fio_failures) -----------------------------------------

FIO = FIXTURES / "fio_failures"


@pytest.mark.parametrize("name, status", [("error_json.json", "error"), ("error_text.txt", "error"),
                                          ("killed.txt", "killed")])
def test_failed_or_killed_fio_is_stored_marked_and_left_out(tmp_path, tmp_db, name, status):
    bad = tmp_path / "runs" / "rw=write" / "rep=2"
    bad.mkdir(parents=True)
    shutil.copy(FIO / name, bad / name)
    proc = run_tool("ingest", "--db", tmp_db, tmp_path / "runs")
    assert proc.returncode == 0, proc.stderr  # not stopping the ingest
    con = ro_con(tmp_db)
    assert con.execute("SELECT status FROM fio_status WHERE run_id = 'rw=write/rep=2'").fetchall() == [(status,)]
    assert con.execute("SELECT count(*) FROM run_metrics WHERE run_id = 'rw=write/rep=2' AND metric LIKE 'fio_%' "
                       "AND value IS NOT NULL").fetchone()[0] == 0
    if name != "killed.txt":  # the numbers are kept for inspection
        assert con.execute("SELECT error FROM fio_jobs WHERE run_id = 'rw=write/rep=2'").fetchall() == [(28,)]


# -- old sa files, --keep-going, -v, unrelated files ---------------------------------------------------

OLD_SA = FIXTURES / "sa_old_format" / "sa.bin"


def test_old_sa_file_beside_its_text_rendering_uses_the_text(tmp_path, tmp_db):
    d = tmp_path / "runs" / "run"
    d.mkdir(parents=True)
    shutil.copy(OLD_SA, d / "sa.bin")
    shutil.copy(V / "sar_d_loop.txt", d / "sar_d.txt")
    proc = run_tool("ingest", "--db", tmp_db, "-v", d)
    assert proc.returncode == 0, proc.stderr
    assert "Current sysstat version cannot read the format of this file (0x2171)" in proc.stdout  # sadf's own words
    assert "sar_d.txt holds the same data and is used instead" in proc.stdout
    con = ro_con(tmp_db)
    assert con.execute("SELECT count(DISTINCT instance) FROM sys_metrics WHERE activity = 'disk'").fetchone()[0] == 2


def test_keep_going_stores_what_parses_and_lists_the_rest(tmp_path, tmp_db):
    old = tmp_path / "runs" / "old"
    good = tmp_path / "runs" / "good"
    old.mkdir(parents=True)
    good.mkdir(parents=True)
    shutil.copy(OLD_SA, old / "sa.bin")
    shutil.copy(V / "sar_d_loop.txt", good / "sar_d.txt")
    proc = run_tool("ingest", "--db", tmp_db, tmp_path / "runs")
    assert proc.returncode == 2 and "nothing was stored" in proc.stderr
    assert "0x2171" in proc.stderr  # sadf's stderr shown
    proc = run_tool("ingest", "--db", tmp_db, "--keep-going", tmp_path / "runs")
    assert proc.returncode == 2, proc.stderr
    assert "--keep-going stored the rest" in proc.stderr and str(old / "sa.bin") in proc.stderr
    con = ro_con(tmp_db)
    assert con.execute("SELECT run_id FROM runs").fetchall() == [("good",)]
    assert con.execute("SELECT file_name FROM sources").fetchall() == [("sar_d.txt",)]


def test_verbose_lists_every_file_and_unrelated_files_are_zero_runs(tmp_path, tmp_db):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "todo.txt").write_text("buy disks\n")
    (d / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    (d / "empty.log").write_text("")
    proc = run_tool("ingest", "--db", tmp_db, "-v", d)
    assert proc.returncode == 2
    assert "0 runs: none of the 3 files" in proc.stderr
    for name, why in (("todo.txt", "not a known tool output"), ("photo.jpg", "binary, unknown format"),
                      ("empty.log", "empty file")):
        assert f"{d / name}: {why}" in proc.stdout + proc.stderr
    run = _run(tmp_path, ["mpstat_P.txt", "pidstat.txt"], "2026-11-23T02:01:00Z", "2026-11-23T02:01:10Z")
    proc = run_tool("ingest", "--db", tmp_db, "-v", run)
    assert proc.returncode == 0, proc.stderr
    assert f"{run / 'mpstat_P.txt'}: read as mpstat-text, new" in proc.stdout
    assert f"{run / 'pidstat.txt'}: read as pidstat-text, new" in proc.stdout


def test_sadf_p_gives_the_rows_of_sadf_j_of_the_same_file():
    # sadf -p sa_loop.bin -- -A and sadf -j sa_loop.bin -- -A (sysstat 12.6.1): the same values per
    # activity, item, metric and time (sadf -j also carries legacy disk keys and numbers serial lines)
    p = parse("sadf-p", V / "sadf_p_all.txt")
    j = parse("sadf-json", V / "sadf_j_loop.json")
    q = ("SELECT activity, instance, metric, ts, value FROM sys_metrics WHERE activity IN "
         "('cpu', 'memory', 'swap', 'queue', 'net-dev', 'disk', 'paging', 'io', 'task')")
    got, want = set(p.q(q)), set(j.q(q))
    assert len(got) > 200 and got <= want
    assert {r[:3] for r in want - got} <= {(a, i, m) for a, i, m, *_ in want if m in (
        "rd_sec/s", "wr_sec/s", "dc_sec/s", "avgrq-sz", "avgqu-sz")}


# -- fio --write_*_log (tests/fixtures/fio_logs) ---------------------------------------------------------

def test_fio_logs_agree_with_the_jobs_report(tmp_db):
    run_tool("ingest", "--db", tmp_db, FIXTURES / "fio_logs", check=True)
    con = ro_con(tmp_db)
    kinds = dict(con.execute("SELECT kind, any_value(unit) FROM fio_log GROUP BY kind").fetchall())
    assert kinds == {"bw": "KiB/s", "clat": "ns", "lat": "ns", "iops": "IOPS"}
    log_bw = con.execute("SELECT avg(value) FROM fio_log WHERE kind = 'bw' AND direction = 'read' "
                         "AND run_id = 'rw=randrw'").fetchone()[0]
    job_bw = con.execute("SELECT bw_kib_s FROM fio_jobs WHERE direction = 'read' AND run_id = 'rw=randrw'").fetchone()[0]
    assert log_bw == pytest.approx(job_bw, rel=0.2)
    assert con.execute("SELECT count(*) FROM fio_log WHERE run_id = 'rw=randread'").fetchone()[0] == 2000


def test_damaged_fio_log_line_is_named(tmp_path, tmp_db):
    d = tmp_path / "runs" / "run"
    d.mkdir(parents=True)
    lines = (FIXTURES / "fio_logs" / "rw=randread" / "rawlat_clat.1.log").read_text().splitlines()
    lines[1500] = lines[1500].replace(", 0, 4096", ", 7, 4096")
    (d / "rawlat_clat.1.log").write_text("\n".join(lines) + "\n")
    proc = run_tool("ingest", "--db", tmp_db, d)
    assert proc.returncode == 2 and "rawlat_clat.1.log:1501: expected a fio log line" in proc.stderr, proc.stderr


def _fio_log_rows(db: Path) -> int:
    con = ro_con(db)
    try:
        return con.execute("SELECT count(*) FROM fio_log").fetchone()[0]
    finally:
        con.close()


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("run, name, line, pos, value, column", [
    ("rw=randread", "rawlat_clat.1.log", 1501, 1, "99999999999999999", "value"),  # a latency in ns beyond any run
    ("rw=randread", "rawlat_clat.1.log", 1501, 0, "99999999999", "time_ms"),
    ("rw=randrw", "fiolog_bw.1.log", 7, 1, "99999999999", "value"),  # KiB/s no machine reaches
])
def test_a_fio_log_value_outside_its_bounds_is_named_by_its_line(tmp_path, tmp_db, run, name, line, pos, value,
                                                                  column):
    """fio_log keeps no line (DuckDB reads the log): a value that fits its column but no fio prints was refused
    by the store's range check naming the file alone; the refused row is found in the file again by its time
    and value. Exit 2, and the store keeps the run it held."""
    other = "rw=randrw" if run == "rw=randread" else "rw=randread"
    shutil.copytree(FIXTURES / "fio_logs" / other, tmp_path / "runs" / other)
    run_tool("ingest", "--db", tmp_db, tmp_path / "runs" / other, check=True)
    before = _fio_log_rows(tmp_db)
    assert before > 0
    d = tmp_path / "runs" / run
    shutil.copytree(FIXTURES / "fio_logs" / run, d)
    lines = (d / name).read_text().splitlines()
    fields = lines[line - 1].split(", ")
    fields[pos] = value
    lines[line - 1] = ", ".join(fields)
    (d / name).write_text("\n".join(lines) + "\n")
    proc = run_tool("ingest", "--db", tmp_db, d)
    assert proc.returncode == 2 and "1 file(s) could not be ingested" in proc.stderr, proc.stderr
    assert f"{name}:{line}: expected {column} between 0 and " in proc.stderr, proc.stderr
    assert _fio_log_rows(tmp_db) == before


# -- PostgreSQL statistics snapshots (tests/fixtures/pg_stat) --------------------------------------------

def test_pg_stat_snapshots_give_checkpoints_and_wal_per_transaction(tmp_db):
    run_tool("ingest", "--db", tmp_db, FIXTURES / "pg_stat", check=True)
    con = ro_con(tmp_db)
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric LIKE 'pg_%'").fetchall())
    # from the files: wal_bytes 20287244 -> 36282020, checkpoints_req 0 -> 1, buffers_checkpoint 2059 -> 3938
    assert m["pg_wal_bytes"] == 36282020 - 20287244
    assert m["pg_checkpoints"] == 1 and m["pg_buffers_checkpoint"] == 3938 - 2059
    tx = con.execute("SELECT transactions_processed FROM pgbench_summary").fetchone()[0]
    assert m["pg_wal_bytes_per_tx"] == pytest.approx((36282020 - 20287244) / tx)


def test_pg_stat_without_a_time_needs_before_or_after_in_its_name(tmp_path, tmp_db):
    d = tmp_path / "runs" / "run"
    d.mkdir(parents=True)
    text = (FIXTURES / "pg_stat" / "clients=2" / "pg_stat_wal.before.csv").read_text().splitlines()
    cut = [",".join(l.split(",")[1:]) for l in text]  # as a user's own 'psql --csv -c "TABLE pg_stat_wal"'
    (d / "wal.csv").write_text("\n".join(cut) + "\n")
    proc = run_tool("ingest", "-v", "--db", tmp_db, d)
    # a file that cannot be placed in time is skipped with its reason (one file never loses a run);
    # alone in its directory it leaves no run, which is an error
    assert proc.returncode == 2, proc.stderr
    assert "wal.csv:1: expected a snapshot_at column" in proc.stderr, (proc.stdout, proc.stderr)
    assert "cannot be used" in proc.stderr


def test_a_pg_stat_file_that_cannot_be_placed_in_time_never_loses_its_run(tmp_path, tmp_db):
    """The reported run: a pg_stat CSV with a 'ctime' column and no snapshot time refused the whole run
    (sadf CSVs, a server log, an sa file); now the file is skipped with its reason and the run is stored."""
    d = tmp_path / "runs" / "run"
    shutil.copytree(FIXTURES / "pg_stat" / "clients=2", d)
    text = (d / "pg_stat_wal.before.csv").read_text().splitlines()
    (d / "pg_stat_wal.before.csv").unlink()
    (d / "pg_stat_wal.after.csv").unlink()
    cut = ["ctime," + ",".join(l.split(",")[1:]) if i == 0 else "2026-11-23 02:43:22," + ",".join(l.split(",")[1:])
           for i, l in enumerate(text)]
    (d / "wal_stats.csv").write_text("\n".join(cut) + "\n")
    proc = run_tool("ingest", "-v", "--db", tmp_db, d)
    assert proc.returncode == 0, proc.stderr
    assert "wal_stats.csv" in proc.stdout and "cannot be used" in proc.stdout, proc.stdout
    con = ro_con(tmp_db)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM pgbench_summary").fetchone()[0] == 1
    assert con.execute("SELECT count(DISTINCT view) FROM pg_stat_snapshot").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM sources WHERE file_name = 'wal_stats.csv'").fetchone()[0] == 0


def test_sadf_p_of_a_machine_with_a_battery(tmp_path, tmp_db):
    """sar -m BAT prints 'status Full', a text value: the file was refused whole at that line."""
    src = V / "sadf_p_all.txt"
    lines = src.read_text().splitlines()
    host, iv, ts = lines[-1].split("\t")[:3]
    bat = [f"{host}\t{iv}\t{ts}\tBAT0\t%cap\t100.00", f"{host}\t{iv}\t{ts}\tBAT0\tcap/min\t0.00",
           f"{host}\t{iv}\t{ts}\tBAT0\tstatus\tFull"]
    d = tmp_path / "runs" / "run"
    d.mkdir(parents=True)
    (d / "sadf_p.txt").write_text("\n".join(lines + bat) + "\n")
    proc = run_tool("ingest", "-v", "--db", tmp_db, d)
    assert proc.returncode == 0, proc.stderr
    assert "status 'Full' is text" in proc.stdout, proc.stdout
    con = ro_con(tmp_db)
    assert con.execute("SELECT count(*) FROM sys_metrics WHERE metric = '%cap'").fetchone()[0] == 1


def test_sadf_x_gives_exactly_the_rows_of_sadf_j():
    # sadf -x sa_loop.bin -- -A and sadf -j sa_loop.bin -- -A (sysstat 12.6.1)
    x = parse("sadf-xml", V / "sadf_x_all.xml")
    j = parse("sadf-json", V / "sadf_j_loop.json")
    q = "SELECT activity, instance, metric, ts, interval_s, value FROM sys_metrics"
    assert set(x.q(q)) == set(j.q(q)) and len(x.q(q)) > 400
    assert not x.warnings


def test_end_of_summer_time_is_warned_not_reordered():
    # real: summer time ended during the run, sar printed 03:52:59 then 02:53:19
    s = parse("sar-text", V / "sar_dst_end.txt")
    assert any("times go back" in w and "03:52:59 -> 02:53:19" in w for _, w in s.warnings), s.warnings
    assert s.q("SELECT count(DISTINCT ts) FROM sys_metrics") == [(5,)]


def test_repeated_hour_in_an_iana_zone_is_the_second_occurrence(tmp_path):
    # the same shape of output on the night New York leaves summer time (2026-11-01 01:59 EDT -> 01:00 EST)
    text = ("Linux 6.18.44 (vm) \t11/01/26 \t_x86_64_\t(2 CPU)\n\n"
            "01:59:20        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
            "01:59:40        all     79.14      0.00     10.08      2.89      0.08      7.82\n"
            "01:00:00        all     83.97      0.00     10.39      1.86      0.08      3.70\n"
            "01:00:20        all     54.23      2.65     15.52      3.96      0.10     23.54\n")
    f = tmp_path / "sar.txt"
    f.write_text(text)
    s = parse("sar-text", f, run_meta={"machine": {"timezone": "America/New_York"}})
    got = [t for (t,) in s.q("SELECT DISTINCT ts FROM sys_metrics ORDER BY 1")]
    assert [(b - a).total_seconds() for a, b in zip(got, got[1:])] == [20.0, 20.0]


@pytest.mark.parametrize("fmt, name, key, record_line", [
    ("sadf-json", "sadf_j_loop.json", '"rkB": ', 64),
    ("mpstat-json", "mpstat_json.txt", '"usr": ', 20),
])
def test_a_value_refused_in_a_json_document_is_named_by_its_records_line(tmp_path, fmt, name, key, record_line):
    """A JSON document's values have no line of their own: a refused one is named by the line of its statistics
    record (its "timestamp"), the second record here."""
    from kansoku.errors import ParseError
    from sys_helpers import parse

    lines = (V / name).read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i in range(record_line, len(lines)) if key in lines[i])
    start = lines[at].index(key) + len(key)
    end = start + len(lines[at][start:].split(",")[0].split("}")[0])
    lines[at] = lines[at][:start] + "NaN" + lines[at][end:]
    damaged = tmp_path / name
    damaged.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ParseError) as ei:
        parse(fmt, damaged)
    assert f"{damaged}:{record_line}: expected a finite number" in str(ei.value), str(ei.value)
