"""A machine is one rule (ingest/runs.py machine_fingerprint) on the chapters and on the trends page: two boots
of one virtual machine whose MemTotal differs by a few KiB are one machine, two different machines are two;
where two machines' short descriptions are alike, the trends legend says what tells them apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_tool
from kansoku.ingest.runs import machine_fingerprint
from kansoku.report.trends import compute_trend, machine_labels, machine_of
from kansoku.store.db import open_store

AMD = {"hostname": "vm", "cpu_model": "AMD EPYC", "cpu_count": 2, "nproc": 2, "mem_total_kib": 24684092,
       "kernel": "Linux 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0 x86_64", "os": "Debian GNU/Linux 12 (bookworm)",
       "virtualization": "kvm", "disks": {"vda": {"size_bytes": 274877906944, "rotational": True}}}
REBOOTED = {**AMD, "mem_total_kib": AMD["mem_total_kib"] - 8}  # the same guest booted again
INTEL = {**AMD, "cpu_model": "Intel(R) Xeon(R) Processor @ 2.50GHz"}
LATER_KERNEL = {**AMD, "kernel": "Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 x86_64"}

PGBENCH = """pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: read.sql
scaling factor: 10
query mode: simple
number of clients: 2
number of threads: 2
maximum number of tries: 1
duration: 15 s
number of transactions actually processed: {n}
number of failed transactions: 0 (0.000%)
latency average = 1.000 ms
initial connection time = 2.000 ms
tps = {tps} (without initial connection time)
"""


def test_a_reboot_that_moves_memtotal_by_a_few_kib_keeps_the_machine():
    assert machine_fingerprint(REBOOTED) == machine_fingerprint(AMD)
    assert machine_of({"machine": REBOOTED}, "measured")["key"] == machine_of({"machine": AMD}, "measured")["key"]


def test_different_machines_stay_different():
    assert machine_fingerprint(INTEL) != machine_fingerprint(AMD)
    assert machine_fingerprint({**AMD, "mem_total_kib": 16 * 1024 * 1024}) != machine_fingerprint(AMD)
    assert machine_of({"machine": INTEL}, "measured")["key"] != machine_of({"machine": AMD}, "measured")["key"]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_legend_tells_alike_machines_apart(lang):
    machs = {k: machine_of({"machine": m}, "measured") for k, m in (("a", AMD), ("b", LATER_KERNEL))}
    labels = machine_labels(machs, lang)
    assert labels["a"] != labels["b"] and "fc-v669" in labels["b"], labels
    alone = machine_labels({"a": machs["a"]}, lang)
    assert "fc-v657" not in alone["a"], alone  # cores and memory suffice for one machine


def _run(root: Path, rep: int, machine: dict, tps: float) -> None:
    d = root / "campaign=trend" / "study=scaleup" / f"rep={rep}"
    d.mkdir(parents=True)
    (d / "pgbench.log").write_text(PGBENCH.format(n=int(tps * 15), tps=f"{tps:.6f}"))
    lines = ['hostname = "vm"', "start = 2026-11-2%dT10:00:00+00:00" % rep, "end = 2026-11-2%dT10:00:15+00:00" % rep,
             "", "[machine]"]
    for k, v in machine.items():
        if not isinstance(v, dict):
            lines.append(f"{k} = {v!r}".replace("'", '"').replace("True", "true"))
    lines.append("[machine.disks.vda]\nsize_bytes = 274877906944\nrotational = true")
    (d / "run.toml").write_text("\n".join(lines) + "\n")


def test_trend_plots_the_runs_of_one_rebooted_machine_as_one_machine(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, 1, AMD, 1500.0)
    _run(runs, 2, REBOOTED, 1600.0)
    _run(runs, 3, INTEL, 1400.0)
    db = tmp_path / "kansoku.duckdb"
    run_tool("ingest", "-q", "--db", db, runs, check=True)
    store = open_store(db, read_only=True)
    try:
        ids = [r[0] for r in store.query("SELECT run_id FROM runs ORDER BY run_id")]
        stored = dict(store.query("SELECT run_id, machine_id FROM run_hosts"))
        fig = compute_trend(store, 1, {"id": "t", "metric": "tps", "where": {"study": ["scaleup"]},
                                       "title": {"ja": "t", "en": "t"}}, {},
                            {r: {2026} for r in ids}, {2026: ["r"]})
    finally:
        store.close()
    assert len(ids) == 3 and len(set(stored.values())) == 2, stored
    assert fig.trend["machines"] == 2, fig.trend["rows"]["en"]
    peaks = sorted(float(r[2].replace(",", "")) for r in fig.trend["rows"]["en"])
    assert peaks == [1400.0, 1550.0]  # the rebooted machine's two runs are one point: their median


def test_legend_keeps_the_memory_of_a_machine_that_is_told_apart_by_it():
    machs = {k: machine_of({"machine": m}, "measured") for k, m in
             (("a", AMD), ("b", LATER_KERNEL), ("c", {**AMD, "mem_total_kib": 16 * 1024 * 1024}))}
    labels = machine_labels(machs, "en")
    assert "16.0 GiB" in labels["c"] and "kernel" not in labels["c"], labels
    assert len(set(labels.values())) == 3, labels
