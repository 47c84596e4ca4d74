"""vmstat: layouts, timestamps, translated headers, since-boot first line, bad input."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from kansoku.errors import ParseError
from sys_helpers import parse

REAL = FIXTURES / "vmstat" / "vmstat.txt"  # corpus/real, vmstat -t -w 1


def test_real_vmstat_first_line_is_since_boot():
    s = parse("vmstat-text", REAL)
    assert s.q("SELECT DISTINCT sample, ts::VARCHAR FROM sys_metrics WHERE since_boot") == \
        [(0, "2026-11-21 23:45:38+00")]
    assert s.q("SELECT value FROM sys_metrics WHERE metric='bo' AND sample=1") == [(125848.0,)]
    assert s.q("SELECT DISTINCT activity FROM sys_metrics ORDER BY 1") == \
        [("cpu",), ("io",), ("memory",), ("procs",), ("swapping",), ("system",)]
    assert s.q("SELECT count(*) FROM sys_metrics WHERE metric='gu'")[0][0] > 0


def test_header_repeats_and_plain_layout(corpus):
    s = parse("vmstat-text", corpus / "generated/vmstat/procps4.0.2_vmstat_1_25_header_repeat.txt")
    assert s.q("SELECT count(DISTINCT sample) FROM sys_metrics")[0][0] == 25
    assert s.q("SELECT count(DISTINCT sample) FROM sys_metrics WHERE since_boot")[0][0] == 1
    assert s.q("SELECT count(*) FROM sys_metrics WHERE ts IS NOT NULL")[0][0] == 0


def test_translated_header_and_timestamp_zone(corpus):
    s = parse("vmstat-text", corpus / "generated/vmstat/procps4.0.2_vmstat-t_de_DE.txt")
    assert s.q("SELECT count(*) FROM sys_metrics WHERE metric='free'")[0][0] > 0  # 'frei'
    assert s.q("SELECT min(ts)::VARCHAR FROM sys_metrics")[0][0] == "2026-11-21 23:44:01+00"
    assert s.q("SELECT DISTINCT tz_basis FROM sys_series") == [("vmstat -t (UTC)",)]


def test_active_inactive_and_wide(corpus):
    a = parse("vmstat-text", corpus / "public/vmstat/centos7_procps3.3.10_vmstat-awt.txt")
    assert a.q("SELECT DISTINCT metric FROM sys_metrics WHERE activity='memory' ORDER BY 1") == \
        [("active",), ("free",), ("inact",), ("swpd",)]
    w = parse("vmstat-text", corpus / "public/vmstat/procps3.3.17plus_vmstat-w_extra-wide.txt")
    assert w.q("SELECT value FROM sys_metrics WHERE metric='cache'") == [(22658240.0,)]


def test_vmstat_d_disk_table_gives_per_device_counters(corpus):
    s = parse("vmstat-text", corpus / "public/vmstat/centos7_procps3.3.10_vmstat-dt.txt")
    assert s.q("SELECT value FROM sys_metrics WHERE instance='sda' AND metric='read_sectors'") == [(841035.0,)]


def test_prefixed_lines_with_id_100(corpus):
    s = parse("vmstat-text", corpus / "public/vmstat/rhel6_procps3.2.8_tsprefixed.log")
    assert s.q("SELECT count(*) FROM sys_metrics WHERE ts IS NULL")[0][0] == 0
    assert s.q("SELECT value FROM sys_metrics WHERE metric='id' AND sample=0") == [(100.0,)]


def test_cut_line_mid_file_is_an_error_last_line_a_warning(tmp_path):
    lines = REAL.read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.txt"
    bad.write_text("".join(lines[:4] + [lines[4][:30] + "\n"] + lines[5:]))
    with pytest.raises(ParseError) as ei:
        parse("vmstat-text", bad)
    assert f"{bad}:5" in str(ei.value)
    cut = tmp_path / "cut.txt"
    cut.write_text(REAL.read_text()[:-25])
    s = parse("vmstat-text", cut)
    assert s.warnings and s.warnings[0][0] == len(lines)


def test_text_that_is_not_vmstat_is_neither_detected_nor_parsed(tmp_path):
    from kansoku.ingest.detect import detect

    f = tmp_path / "x.txt"
    f.write_text("procs are running\nr b are letters\n")
    d = detect(f)
    assert d.format is None or d.format.tool != "vmstat"
    with pytest.raises(ParseError):
        parse("vmstat-text", f)
