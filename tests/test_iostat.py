"""iostat: text and JSON reports, timestamps, since-boot first report, bad input."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from conftest import FIXTURES
from kansoku.errors import ParseError
from sys_helpers import parse

REAL = FIXTURES / "iostat" / "iostat_x.txt"  # corpus/real, iostat -x -t -k 1


def test_real_iostat_first_report_is_since_boot():
    s = parse("iostat-text", REAL)
    boot = s.q("SELECT DISTINCT sample, ts::VARCHAR FROM sys_metrics WHERE since_boot")
    assert boot == [(0, "2026-11-21 23:45:38+00")]
    util = s.q("SELECT value FROM sys_metrics WHERE instance='vda' AND metric='%util' AND sample=1")
    assert util == [(72.8,)]
    assert s.q("SELECT count(DISTINCT instance) FROM sys_metrics WHERE activity='disk'")[0][0] == 1
    series = s.q("SELECT activity, samples, since_boot_excluded, interval_s FROM sys_series ORDER BY 1")
    assert series[0][2] == 1 and series[0][3] == 1.0


def test_iostat_y_first_report_is_kept(corpus):
    s = parse("iostat-text", corpus / "generated/iostat/sysstat12.6.1_iostat-yxz.txt")
    assert s.q("SELECT count(*) FROM sys_metrics WHERE since_boot")[0][0] == 0


@pytest.mark.parametrize("name, first_ts", [
    ("sysstat12.6.1_iostat-tdk_de_DE.txt", "2026-11-21 23:43:26+00"),
    ("sysstat12.6.1_iostat-tdm_ISO.txt", "2026-11-21 23:43:27+00"),
    ("sysstat12.6.1_iostat-tx_en_US.txt", "2026-11-21 23:43:25+00"),
])
def test_iostat_timestamps_of_each_locale_and_format_read_as_utc(corpus, name, first_ts):
    s = parse("iostat-text", corpus / "generated/iostat" / name)
    assert s.q("SELECT min(ts)::VARCHAR FROM sys_metrics")[0][0] == first_ts


def test_units_old_and_new_columns_in_disk_view(corpus, tmp_path):
    # -m gives MB/s, POSIXLY_CORRECT 512-byte blocks: the disk view converts both to kB/s
    for name, metric in (("sysstat12.6.1_iostat-tdm_ISO.txt", "MB_read/s"),
                         ("sysstat12.6.1_iostat-d_POSIXLY_CORRECT_blocks.txt", "Blk_read/s")):
        s = parse("iostat-text", corpus / "generated/iostat" / name)
        assert s.q("SELECT count(*) FROM sys_metrics WHERE metric = ?", [metric])[0][0] > 0
    old = parse("iostat-text", corpus / "public/iostat/rhel6_sysstat9.0.4_mx_tsprefixed.log")
    # harness prefixes give times to a file written without -t
    assert old.q("SELECT count(*) FROM sys_metrics WHERE ts IS NULL")[0][0] == 0
    assert old.q("SELECT count(*) FROM sys_metrics WHERE metric='avgqu-sz'")[0][0] > 0


def test_human_readable_device_last(corpus):
    s = parse("iostat-text", corpus / "public/iostat/sysstat12.7_iostat-dh_human.txt")
    v = s.q("SELECT value FROM sys_metrics WHERE instance='sda' AND metric='kB_read/s' AND sample=0")
    assert v == [(pytest.approx(222.1),)]


def test_iostat_json_output_stores_samples_and_since_boot_report(corpus):
    s = parse("iostat-json", corpus / "public/iostat/sysstat12.x_iostat-o_JSON_pkb.json")
    assert s.q("SELECT count(*) FROM sys_metrics WHERE metric='%util'")[0][0] > 0
    assert s.q("SELECT count(*) FROM sys_metrics WHERE since_boot AND sample = 0")[0][0] > 0
    assert s.q("SELECT min(ts)::VARCHAR FROM sys_metrics")[0][0] == "2024-03-15 00:53:14+00"


def test_truncated_iostat_json_keeps_whole_reports(corpus, tmp_path):
    text = (corpus / "public/iostat/sysstat12.7_iostat-o_JSON-x-pALL.json").read_text()
    f = tmp_path / "io.json"
    f.write_text(text[: int(len(text) * 0.75)])
    s = parse("iostat-json", f)
    assert any("ends early" in m for _, m in s.warnings)
    assert s.q("SELECT count(DISTINCT sample) FROM sys_metrics")[0][0] == 1


def test_cut_device_row_mid_file_is_an_error(tmp_path):
    lines = REAL.read_text().splitlines(keepends=True)
    lines[7] = lines[7][:40] + "\n"
    f = tmp_path / "iostat.txt"
    f.write_text("".join(lines))
    with pytest.raises(ParseError) as ei:
        parse("iostat-text", f)
    assert f"{f}:8" in str(ei.value)


def test_cut_last_line_is_a_warning(tmp_path):
    f = tmp_path / "iostat.txt"
    f.write_text(REAL.read_text()[:-30])
    s = parse("iostat-text", f)
    assert s.warnings


def test_sar_output_is_not_iostat(corpus):
    from kansoku.ingest.detect import detect

    d = detect(corpus / "generated/sar/sysstat12.6.1_sar-A_from_file_C.txt")
    assert d.format.name == "sar-text"
    with pytest.raises(ParseError):
        parse("iostat-text", corpus / "generated/sar/sysstat12.6.1_sar-A_from_file_C.txt")


def test_iostat_in_run_window(tool, tmp_path, tmp_db):
    run = tmp_path / "clients=2" / "rep=1"
    run.mkdir(parents=True)
    shutil.copy(REAL, run)
    shutil.copy(FIXTURES / "iostat" / "run.toml", run)
    tool("ingest", "--db", tmp_db, tmp_path, check=True)
    con = duckdb.connect(str(tmp_db), read_only=True)
    rows = con.execute("SELECT tool, count(*), min(t_s), max(t_s) FROM disk_in_run GROUP BY tool").fetchall()
    idle = con.execute("SELECT value FROM run_metrics WHERE metric='cpu_idle_pct'").fetchall()
    con.close()
    assert rows[0][0] == "iostat" and 14 <= rows[0][1] <= 16 and rows[0][2] > 0 and rows[0][3] < 16
    assert len(idle) == 1  # no sar in this run: iostat's avg-cpu is used
