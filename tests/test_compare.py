"""tools/compare on synthetic campaigns whose truth is known, and on the example campaign."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL_LOG = next((ROOT / "tests/fixtures/runs").rglob("pgbench.log"))

# condition (clients) -> (A runs' tps, B runs' tps)
TRUTH = {
    8: ([1000.0, 1010.0, 990.0], [1200.0, 1190.0, 1210.0]),   # clear gain
    16: ([1000.0, 1012.0, 995.0], [800.0, 805.0, 795.0]),     # clear loss (20 %)
    32: ([1000.0, 1010.0, 990.0], [1005.0, 995.0, 1008.0]),   # pure noise
    64: ([1000.0, 1010.0], [1500.0, 1490.0]),                 # two runs a side: no verdict
}


def _pgbench_log(clients: int, tps: float) -> str:
    """The real pgbench 15 output of the fixture, with its client count and headline TPS replaced."""
    text = REAL_LOG.read_text()
    text = "\n".join(l for l in text.splitlines() if not l.startswith("progress:")) + "\n"
    text = re.sub(r"number of clients: \d+", f"number of clients: {clients}", text)
    text = re.sub(r"number of threads: \d+", "number of threads: 1", text)
    return re.sub(r"tps = [\d.]+", f"tps = {tps:.6f}", text)


def run(*args, check=True):
    p = subprocess.run([sys.executable, str(ROOT / "tools" / args[0]), *args[1:]], capture_output=True, text=True)
    if check and p.returncode not in (0, 6):
        raise AssertionError(f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    for clients, sides in TRUTH.items():
        for version, values in zip(("14", "15"), sides):
            for rep, tps in enumerate(values, 1):
                d = tmp / "runs" / f"version={version}" / f"clients={clients}" / f"rep={rep}"
                d.mkdir(parents=True)
                (d / "pgbench.log").write_text(_pgbench_log(clients, tps))
    db = tmp / "k.duckdb"
    run("ingest", "--db", str(db), str(tmp / "runs"))
    return db


def test_verdicts_follow_the_truth(campaign):
    p = run("compare", "--db", str(campaign), "version=14", "version=15", "--metric", "tps", "--json")
    doc = json.loads(p.stdout)
    got = {int(c["condition"]["clients"]): c for c in doc["comparisons"]}
    assert {k: got[k]["verdict"] for k in got} == {8: "better", 16: "worse", 32: "within_noise", 64: "too_few_runs"}
    assert sorted(got[8]["baseline"]["values"]) == sorted(TRUTH[8][0])
    assert sorted(got[8]["candidate"]["values"]) == sorted(TRUTH[8][1])
    assert got[16]["ratio"] == pytest.approx(800.0 / 1000.0)
    assert got[16]["baseline"]["min"] == 995.0 and got[16]["baseline"]["max"] == 1012.0
    assert got[8]["ratio_interval"][0] > 1.0 and got[16]["ratio_interval"][1] < 1.0
    # one metric: its conditions in their natural order (clients 8 before 16, not by the size of the change)
    assert [int(c["condition"]["clients"]) for c in doc["comparisons"]] == [8, 16, 32, 64]
    assert {c["direction"] for c in doc["comparisons"]} == {"higher_is_better"}


def test_exit_status_for_ci(campaign):
    p = run("compare", "--db", str(campaign), "version=14", "version=15", "--metric", "tps", "--fail-above", "10")
    assert p.returncode == 6 and "clients=16" in p.stderr
    p = run("compare", "--db", str(campaign), "version=14", "version=15", "--metric", "tps", "--fail-above", "25")
    assert p.returncode == 0
    # the other way round, the gain at 8 clients is the regression
    p = run("compare", "--db", str(campaign), "version=15", "version=14", "--metric", "tps", "--fail-above", "10")
    assert p.returncode == 6 and "clients=8" in p.stderr


def test_terminal_table_and_csv(campaign):
    p = run("compare", "--db", str(campaign), "version=14", "version=15", "--metric", "tps")
    lines = p.stdout.splitlines()
    assert any("two-sided rank-sum test (exact; its normal approximation for groups too large to count) at alpha 0.1"
               in l for l in lines)
    row = next(l for l in lines if "clients=16" in l)
    assert "1,000.0 [995.0–1,012.0] n=3" in row and "-20.0 %" in row and "WORSE" in row
    assert "4 comparisons: 1 better, 1 too few runs, 1 within noise, 1 WORSE" in p.stdout
    p = run("compare", "--db", str(campaign), "version=14", "version=15", "--metric", "tps", "--csv")
    header, *rows = p.stdout.splitlines()
    assert header.startswith("metric,unit,condition,a_median") and len(rows) == 4
    # numbers rounded to meaningful digits (6 significant for values, 5 for ratios, 3 for p), never
    # 6.587677725121718; the exact floats are in --json
    for row in rows:
        for field in row.split(",")[3:-1]:
            digits = field.lstrip("-").replace(".", "").strip("0")
            assert len(digits) <= 6, (field, row)
    assert any(r.startswith("tps,tps,clients=8,") and ",1.2," in r for r in rows), rows  # 1200 / 1000


def test_direction_and_primary_metric_lead(campaign):
    """tools/compare shows each metric's direction and leads with TPS, whatever the metric names' order."""
    p = run("compare", "--db", str(campaign), "version=14", "version=15", "--metric", "latency_avg_ms",
            "--metric", "tps")
    rows = [l for l in p.stdout.splitlines() if l.startswith(("tps", "latency_avg_ms"))]
    assert rows[0].startswith("latency_avg_ms")  # the first metric asked for is the primary one
    assert all("  lower  " in r for r in rows if r.startswith("latency")) and \
        all("  higher  " in r for r in rows if r.startswith("tps "))
    p = run("compare", "--db", str(campaign), "version=14", "version=15")
    first = next(l for l in p.stdout.splitlines() if l.split(" ")[0] in ("tps", "latency_avg_ms", "latency_stddev_ms",
                                                                          "transactions_processed"))
    assert first.startswith("tps ")


def test_compare_across_two_stores_of_the_same_runs_finds_no_change(campaign, tmp_path):
    other = tmp_path / "other.duckdb"
    shutil.copy(campaign, other)
    p = run("compare", "--db", str(campaign), "--db-b", str(other), "version=14", "version=14", "--metric", "tps",
            "--json")
    doc = json.loads(p.stdout)
    # the same runs on both sides: every condition compared, none better or worse
    assert len(doc["comparisons"]) == len(TRUTH)
    assert {c["verdict"] for c in doc["comparisons"]} == {"within_noise", "too_few_runs"}


def test_bad_selection_is_exit_2_with_a_hint(campaign):
    p = run("compare", "--db", str(campaign), "verison=14", "version=16", check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "did you mean 'version'" in p.stderr and "no value '16'" in p.stderr
    p = run("compare", "--db", str(campaign), "version", "version=15", check=False)
    assert p.returncode == 2 and "expected factor=value" in p.stderr


def test_example_runs_compare_checksums_off_with_on_per_condition(example_db):
    """The example report's own question, asked of its bundled runs (ingested once per session)."""
    db = example_db
    p = run("compare", "--db", str(db), "config=checksums-off", "config=checksums-on", "--metric", "tps", "--json")
    doc = json.loads(p.stdout)
    cells = {(c["condition"]["workload"], c["condition"]["clients"]): c for c in doc["comparisons"]
             if c["condition"].get("study") == "scaleup"}
    # as many runs a side as the campaign repeated each condition (not hard-coded: the example is re-measured)
    assert len(cells) == 8 and all(c["baseline"]["n"] == c["candidate"]["n"] >= 3 for c in cells.values())
    assert all(c["verdict"] in ("better", "worse", "within_noise") for c in cells.values())


@pytest.mark.slow  # the whole views again: --all (CI); test_example_runs_compare_checksums_off_with_on_... reads metric_values quick
def test_metric_values_of_some_metrics_are_the_whole_views(example_db):
    """metric_values with metrics reads only the run_metrics branches of those metrics (and the branches
    naming metrics by data): the same rows, in the same order, as the whole view filtered. A branch left out
    by mistake (or a metric only a data-named branch has) shows here."""
    sys.path.insert(0, str(ROOT / "tools"))
    from kansoku.store import selection
    from kansoku.store.db import open_store, run_metric_selects

    store = open_store(example_db, read_only=True)
    try:
        published = [m for (m,) in store.con.execute(
            "SELECT DISTINCT metric FROM run_metrics WHERE run_id IN (SELECT run_id FROM runs "
            "WHERE origin <> 'measured') ORDER BY metric LIMIT 3").fetchall()]
        metrics = ["tps", "latency_avg_ms", "latency_p95_ms", "cpu_idle_pct", "disk_write_kb_s", *published]
        assert len(run_metric_selects(metrics)) < len(run_metric_selects())
        for sel in ({"study": ["scaleup"], "config": ["checksums-on"]}, {}):
            got = selection.metric_values(store, sel, metrics)
            whole = [v for v in selection.metric_values(store, sel, None) if v.metric in metrics]
            assert got and sorted(map(repr, got)) == sorted(map(repr, whole))
            assert {v.metric for v in got} >= {"tps", "cpu_idle_pct"}
    finally:
        store.close()
