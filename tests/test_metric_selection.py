"""Metrics over a selection of devices or CPUs: `disk_write_kb_s[hdd]` with a spec's [device_groups]
(FY2013 表 4.8 sums KB/s over the HDD group and the SSD group), `cpu_soft_pct[0+1]` (per-CPU means)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import ROOT
from kansoku.analysis.table_kinds import compute_table
from kansoku.errors import SpecError
from kansoku.ingest.pipeline import ingest
from kansoku.spec.model import load_report
from kansoku.store.db import open_store
from site_helpers import one_table_spec

RUN = ROOT / "data/runs/example/campaign=example-2026-11/study=scaleup/workload=update/config=checksums-off/clients=8"

SPEC = one_table_spec("sel", head="""
[device_groups]
system = ["vda"]
none = ["sdz"]
""", table="""\
metrics = ["tps", "disk_write_kb_s[system]", "disk_write_kb_s", "disk_util_pct_max[vda]", "cpu_usr_pct[0]",
           "cpu_usr_pct[0+1]"]
companions = "aggregate"
aggregate = "mean"
where = { study = "scaleup", clients = 8 }
rows = "clients"
digits = { default = 6 }
""")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sel") / "k.duckdb"
    rep = ingest([RUN], path)
    assert rep.ok, rep.errors
    return path


def spec(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "sel.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_selection_metrics_match_the_per_device_and_per_cpu_views(db, tmp_path):
    report = load_report(spec(tmp_path, SPEC))
    store = open_store(db, read_only=True)
    try:
        table = compute_table(store, report, report.item("t"))
    finally:
        store.close()
    row = [c.value for c in table.rows[0]][1:]
    con = duckdb.connect(str(db), read_only=True)
    per_run_write = con.execute("SELECT run_id, write_kb_s FROM disk_in_run_mean WHERE device = 'vda'").fetchall()
    usr0 = con.execute("SELECT run_id, usr_pct FROM cpu_in_run_mean WHERE cpu = '0'").fetchall()
    usr1 = dict(con.execute("SELECT run_id, usr_pct FROM cpu_in_run_mean WHERE cpu = '1'").fetchall())
    util = con.execute("SELECT avg(util_pct) FROM disk_in_run_mean WHERE device = 'vda'").fetchone()[0]
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    tps, write_sys, write_all, util_vda, usr_0, usr_01 = row
    assert write_sys == pytest.approx(mean([v for _, v in per_run_write]))
    assert write_all == pytest.approx(write_sys)  # vda is the machine's only physical disk
    assert util_vda == pytest.approx(util)
    assert usr_0 == pytest.approx(mean([v for _, v in usr0]))
    assert usr_01 == pytest.approx(mean([(v + usr1[r]) / 2 for r, v in usr0]))
    headers = [c["text"]["en"] for c in table.columns]
    assert any("[system]" in h for h in headers) and any("[0+1]" in h for h in headers)


def test_selection_on_a_metric_that_takes_none_is_a_spec_error(db, tmp_path):
    report = load_report(spec(tmp_path, SPEC.replace('"tps", "disk', '"tps[vda]", "disk')))
    store = open_store(db, read_only=True)
    try:
        with pytest.raises(SpecError, match=r"sel\.toml: chapter 'c', table 't' .*'tps' takes no \[selection\]"):
            compute_table(store, report, report.item("t"))
    finally:
        store.close()


@pytest.mark.parametrize("metrics", ['metrics = ["disk_write_kb_s[none]", "tps"',  # the first metric
                                     'metrics = ["tps", "disk_write_kb_s[none]"'])  # a companion: was "—"
def test_a_group_with_no_data_names_the_table(db, tmp_path, metrics):
    report = load_report(spec(tmp_path, SPEC.replace('metrics = ["tps", "disk_write_kb_s[system]"', metrics)))
    store = open_store(db, read_only=True)
    try:
        with pytest.raises(SpecError, match=r"sel\.toml: chapter 'c', table 't'.*disk_write_kb_s\[none\]: "
                                            r"device group 'none' matches no data"):
            compute_table(store, report, report.item("t"))
    finally:
        store.close()


def test_device_groups_must_be_lists_of_names(tmp_path):
    with pytest.raises(SpecError, match=r"sel\.toml:9: device_groups\.system: expected a list of device names"):
        load_report(spec(tmp_path, SPEC.replace('system = ["vda"]', 'system = "vda"')))
