"""Steady state of pgbench runs (warm-up, ramp-down, CV, drift, stalls) and the events of a run.

Three kinds of input, all through a real DuckDB store:
- synthetic per-second series whose truth is known (a warm-up of 10 s, a 30 % drift, stalls), loaded as
  -P progress rows, to check each rule and its false-alarm rate on flat noisy series;
- the example campaign's scaleup runs (data/runs/example, -P 1 and sampled transaction logs);
- a real PostgreSQL 15 cluster's log with checkpoints and the pgbench run it served
  (tests/fixtures/postgres_log, made with log_checkpoints = on, checkpoint_timeout = 30s,
  max_wal_size = 32MB, log_timezone = 'Asia/Tokyo').
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES
from drawing import drawn_figure
from kansoku.analysis import steady
from kansoku.ingest.pipeline import ingest
from kansoku.parsers.pgbench.steady import STEADY_PARAMS
from kansoku.store.db import open_store

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
PG_RUN_DIR = FIXTURES / "postgres_log" / "study=checkpoints" / "clients=2" / "rep=1"
PG_RUN = "study=checkpoints/clients=2/rep=1"


def load_series(db: Path, series: dict[str, list[float]], interval_s: float = 1.0) -> None:
    """Store each series as a run with -P progress rows (as the pgbench parser writes them)."""
    store = open_store(db)
    try:
        runs, rows = [], []
        for k, (run_id, tps) in enumerate(series.items()):
            start = T0 + timedelta(hours=k)
            runs.append({"run_id": run_id, "run_dir": f"/synthetic/{run_id}", "origin": "measured", "status": "ok",
                         "start_time": start, "end_time": start + timedelta(seconds=interval_s * len(tps))})
            for i, v in enumerate(tps, start=1):
                rows.append({"source_id": f"s-{run_id}", "run_id": run_id, "elapsed_s": interval_s * i,
                             "ts": start + timedelta(seconds=interval_s * i), "tps": v, "line": i})
        store.insert_rows("runs", runs)
        store.insert_rows("pgbench_progress", rows)
    finally:
        store.close()


def states(db: Path) -> dict[str, steady.SteadyState]:
    store = open_store(db, read_only=True)
    try:
        return steady.steady_states(store)
    finally:
        store.close()


def noisy(rng: random.Random, level: float, cv: float, n: int) -> list[float]:
    return [max(0.0, rng.gauss(level, cv * level)) for _ in range(n)]


# -- synthetic series: each rule against a known truth ----------------------------------------


def test_known_warmup_rampdown_drift_and_stall(tmp_db):
    rng = random.Random(14)
    warm = [1000 * (0.3 + 0.07 * i) for i in range(10)] + noisy(rng, 1000, 0.03, 50)  # 10 s ramp from 30 %
    ramp_down = noisy(rng, 1000, 0.03, 57) + [400, 380, 390]
    drift = [v * (1 + 0.3 * i / 59) for i, v in enumerate(noisy(rng, 1000, 0.03, 60))]  # +30 % over the run
    fall = [v * (1 - 0.2 * i / 59) for i, v in enumerate(noisy(rng, 1000, 0.03, 60))]
    stall = noisy(rng, 1000, 0.03, 60)
    stall[29:32] = [100, 80, 120]  # a checkpoint-like dip of 3 s
    stall[44] = 0
    short = [900, 1000, 1010, 990, 1005]
    load_series(tmp_db, {"warm": warm, "rampdown": ramp_down, "drift": drift, "fall": fall, "stall": stall,
                         "short": short})
    s = states(tmp_db)

    assert s["warm"].found and 8 <= s["warm"].warmup_s <= 12 and s["warm"].rampdown_s == 0
    assert s["warm"].tps_steady == pytest.approx(1000, rel=0.03) and s["warm"].flags == ()
    assert s["warm"].tps_cv_pct == pytest.approx(3, abs=1.5)

    assert s["rampdown"].found and s["rampdown"].warmup_s == 0 and s["rampdown"].rampdown_s == 3
    assert s["rampdown"].steady_end_s == 57 and "stall" not in s["rampdown"].flags

    assert "drift" in s["drift"].flags and s["drift"].tps_drift_pct == pytest.approx(26, abs=8)
    assert "drift" in s["fall"].flags and s["fall"].tps_drift_pct == pytest.approx(-20, abs=6)

    assert s["stall"].flags == ("stall",) and s["stall"].stall_s == 4 and s["stall"].warmup_s == 0
    assert s["stall"].tps_steady < 1000 * 57 / 60 + 100

    # too short for the rule: the fallback window (first and last second dropped), said so
    assert not s["short"].found and s["short"].flags == ("no_steady_state",)
    assert (s["short"].steady_start_s, s["short"].steady_end_s) == (1, 4)

    store = open_store(tmp_db, read_only=True)
    try:
        ev = steady.events(store, ["stall", "warm"])
        notes = steady.run_notes(store, ["stall", "warm", "drift", "short"], "en")
        metrics = dict(store.con.execute(
            "SELECT metric, value FROM run_metrics WHERE run_id = 'stall' AND metric IN "
            "('tps_steady', 'tps_cv_pct', 'warmup_s', 'rampdown_s', 'stall_s', 'tps_drift_pct')").fetchall())
    finally:
        store.close()
    stalls = [(e.at_s, e.until_s, e.value) for e in ev["stall"] if e.event == "stall"]
    assert stalls == [(29, 32, 80), (44, 45, 0)]
    assert [e.event for e in ev["stall"]][0] == "run_start" and ev["stall"][-1].event == "run_end"
    assert ev["stall"][-1].at_s == 60
    assert [(e.event, e.at_s) for e in ev["warm"] if e.event == "steady_start"] == [("steady_start", s["warm"].warmup_s)]
    assert set(notes) == {"stall", "drift", "short"} and "4 s" in notes["stall"][0]
    assert notes["drift"][0].startswith("throughput drifts by +")
    assert set(metrics) == {"tps_steady", "tps_cv_pct", "warmup_s", "rampdown_s", "stall_s", "tps_drift_pct"}
    assert metrics["stall_s"] == 4


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("cv, max_stalls", [(0.05, 0), (0.10, 0), (0.20, 9)])
def test_flat_noisy_series_rarely_flagged(tmp_db, cv, max_stalls):
    """Pure noise around a constant level: the documented false-alarm level of the drift test is 1 %
    (Mann-Kendall, two-sided) and a stall needs a second below half the median and 4 robust standard
    deviations below it; allow 3 % drift flags and 3 % stall flags (none below 20 % CV) in 300 runs of 60 s."""
    rng = random.Random(int(cv * 1000))
    runs = {f"flat{i}": noisy(rng, 5000, cv, 60) for i in range(300)}
    load_series(tmp_db, runs)
    s = states(tmp_db)
    assert len(s) == 300
    drift = sum("drift" in st.flags for st in s.values())
    stall = sum("stall" in st.flags for st in s.values())
    none = sum("no_steady_state" in st.flags for st in s.values())
    warm = sorted(st.warmup_s for st in s.values())
    assert drift <= 9, f"{drift} of 300 flat runs flagged as drifting"
    assert stall <= max_stalls and none == 0
    assert warm[int(0.95 * len(warm))] <= 1  # 95 % of the runs: no (or a one-second) warm-up
    assert all(st.tps_cv_pct == pytest.approx(100 * cv, rel=0.35) for st in s.values())


def test_progress_every_five_seconds(tmp_db):
    """-P 5 over 300 s: the rule works on intervals, times are in seconds."""
    rng = random.Random(5)
    tps = [200, 450, 700] + noisy(rng, 1000, 0.04, 57)
    load_series(tmp_db, {"p5": tps}, interval_s=5.0)
    st = states(tmp_db)["p5"]
    assert st.found and st.warmup_s == 15 and st.steady_end_s == 300 and st.flags == ()


# -- the example campaign: real -P and sampled transaction logs -------------------------------


# the scaleup study's runs in the session's ingest of the example (conftest.example_db): the other studies'
# runs are in the same store
SCALEUP = "(SELECT run_id FROM run_factors WHERE factor = 'study' AND value = 'scaleup')"


def test_example_runs_have_a_steady_state(example_db):
    con = duckdb.connect(str(example_db), read_only=True)
    try:
        rows = con.execute(
            "SELECT st.run_id, st.series_source, st.steady_found, st.samples, st.tps_steady, st.tps_cv_pct, "
            "st.stall_s, s.tps FROM pgbench_steady_state st JOIN pgbench_summary s USING (run_id) "
            f"WHERE st.run_id IN {SCALEUP}").fetchall()
        counts = dict(con.execute(
            "SELECT metric, count(*) FROM run_metrics WHERE metric IN ('tps_steady', 'tps_cv_pct', 'warmup_s', "
            f"'rampdown_s', 'stall_s', 'tps_drift_pct') AND run_id IN {SCALEUP} GROUP BY metric").fetchall())
        sampled = con.execute("SELECT count(DISTINCT run_id) FROM pgbench_tps_per_second "
                              f"WHERE series_source = 'txlog' AND run_id IN {SCALEUP}").fetchone()[0]
    finally:
        con.close()
    assert len(rows) == 80 and counts == {m: 80 for m in counts} and len(counts) == 6
    # -P lines count every transaction; the runs with a 2 % sampled transaction log (rep 1) use them too
    assert sampled == 16 and {r[1] for r in rows} == {"progress"}
    assert all(r[2] for r in rows) and all(29 <= r[3] <= 30 for r in rows)
    stalled = {r[0].split("study=scaleup/")[1] for r in rows if r[6]}
    # one real stall: a second of the update workload at 2 clients with (almost) no transaction
    assert stalled == {"workload=update/config=checksums-off/clients=2/rep=4"}
    for run_id, _, _, _, tps_steady, cv, stall_s, tps in rows:
        # 30 s runs without a long warm-up: steady-state TPS is close to pgbench's whole-run figure
        assert tps_steady == pytest.approx(tps, rel=0.15), run_id
        assert 0 < cv < 30, run_id


# -- a real PostgreSQL 15 server log with checkpoints, and the run it served ---------------


@pytest.fixture(scope="module")
def pg_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("steady-pg") / "kansoku.duckdb"
    report = ingest([PG_RUN_DIR], db)
    assert report.ok and [f.format for f in report.files if f.format == "postgres-log"] == ["postgres-log"]
    return db


def _log_time(text: str) -> float:
    """'2026-11-23 11:06:31.370 JST' -> epoch seconds (JST = UTC+9), independently of the parser."""
    naive = datetime.fromisoformat(text[:23])
    return (naive - timedelta(hours=9)).replace(tzinfo=timezone.utc).timestamp()


def test_checkpoint_events_on_the_run_axis(pg_db):
    lines = (PG_RUN_DIR / "server.log").read_text().splitlines()
    starts = [_log_time(l) for l in lines if "LOG:  checkpoint starting:" in l]
    ends = [_log_time(l) for l in lines if "LOG:  checkpoint complete:" in l]
    run_start = datetime.fromisoformat("2026-11-23T02:06:25.651003+00:00").timestamp()
    run_end = datetime.fromisoformat("2026-11-23T02:07:40.811867+00:00").timestamp()
    store = open_store(pg_db, read_only=True)
    try:
        ev = steady.events(store, [PG_RUN])[PG_RUN]
        st = steady.steady_states(store)[PG_RUN]
        n_metric = store.con.execute("SELECT value FROM run_metrics WHERE metric = 'checkpoints'").fetchall()
    finally:
        store.close()
    cps = [e for e in ev if e.event == "checkpoint"]
    # every checkpoint that started before the run's end and completed after its start, in order
    expected = [(a - run_start, b - run_start) for a, b in zip(starts, ends) if a <= run_end and b >= run_start]
    assert len(starts) == len(ends) == 21 and len(expected) == 16
    assert [(round(e.at_s, 3), round(e.until_s, 3)) for e in cps] == [(round(a, 3), round(b, 3)) for a, b in expected]
    assert n_metric == [(16.0,)]
    assert cps[0].at_s == pytest.approx(_log_time("2026-11-23 11:06:31.370") - run_start, abs=1e-3)
    assert all(e.reason == "wal" and e.value > 1000 and e.until_s > e.at_s for e in cps)
    assert cps[0].label("en") == "Checkpoint (wal, 1762 buffers written, 2.4 s)"
    assert [e.event for e in ev][0] == "run_start" and ev[-1].event == "run_end"
    assert ev[-1].at_s == pytest.approx(run_end - run_start, abs=1e-3)
    # the series is the -P progress (the transaction log is sampled at 5 %); the run is noisy and slow
    # to settle on this shared machine: it drifts upward and dips below half its median TPS
    assert st.series_source == "progress" and st.found
    assert "stall" in st.flags and st.stall_s >= 2
    stall_spans = [(e.at_s, e.until_s) for e in ev if e.event == "stall"]
    assert stall_spans and all(0 <= a < b <= 75.2 for a, b in stall_spans)


def test_method_note_states_the_parameters():
    en, ja = steady.method_note("en"), steady.method_note("ja")
    for text, pct in ((en, " %"), (ja, "%")):  # a percent as each language prints it
        assert "{{" not in text and f"{STEADY_PARAMS['consecutive']}" in text and f"1{pct}" in text
        assert f"±{round(STEADY_PARAMS['band_fraction'] * 100)}{pct}" in text
    assert "Mann–Kendall" in en and "Theil–Sen" in en


# -- events drawn on the TPS-over-time chart ------------------------------------------------

CHART_SPEC = """
[report]
id = "events-test"
fiscal_year = 2026
title = { ja = "イベント", en = "Events" }
organisation = { ja = "kansoku", en = "kansoku" }

[[chapter]]
id = "c"
title = { ja = "章", en = "Chapter" }

[[chapter.figure]]
id = "one-run"
caption = { ja = "1 秒ごとの TPS", en = "TPS per second" }
chart = "tps_over_time"
metric = "tps"
where = { study = "checkpoints" }
"""


def test_events_on_the_tps_chart(pg_db, tmp_path):
    from kansoku.spec.model import load_report

    spec = tmp_path / "events.toml"
    spec.write_text(CHART_SPEC, encoding="utf-8")
    off = tmp_path / "off.toml"
    off.write_text(CHART_SPEC + "options = { events = false }\n", encoding="utf-8")
    store = open_store(pg_db, read_only=True)
    try:
        report = load_report(spec)
        built = drawn_figure(store, report, report.chapters[0].items[0])
        plain = load_report(off)
        built_off = drawn_figure(store, plain, plain.chapters[0].items[0])
        n_events = store.con.execute(f"SELECT count(*) FROM run_events WHERE run_id = '{PG_RUN}' "
                                     "AND event IN ('checkpoint', 'stall', 'run_end', 'steady_start', 'steady_end')"
                                     ).fetchone()[0]
    finally:
        store.close()
    for lang in ("en", "ja"):
        f = built.figure[lang]
        names = [t.get("name") for t in f["data"]]
        marks = {t["name"]: t for t in f["data"][1:]}
        assert {t.get("type", "scatter") for t in f["data"]} == {"scatter"}
        checkpoint = "Checkpoint" if lang == "en" else "チェックポイント"
        assert checkpoint in marks and len(marks[checkpoint]["x"]) == 16, names
        assert marks[checkpoint]["x"][0] == pytest.approx(5.719, abs=1e-3)
        assert (("Stall" if lang == "en" else "ストール") in marks) and (
            ("Run end" if lang == "en" else "実行終了") in marks)
        assert sum(len(t["x"]) for t in f["data"][1:]) == n_events
        bands = [s for s in f["layout"]["shapes"] if s["type"] == "rect"]
        assert len(bands) == 16 + len(marks["Stall" if lang == "en" else "ストール"]["x"])
        assert marks[checkpoint]["hovertext"][0] == (
            "Checkpoint (wal, 1762 buffers written, 2.4 s)" if lang == "en" else "チェックポイント (wal, 書き出し 1762 バッファ, 2.4 s)")
    assert len(built_off.figure["en"]["data"]) == 1 and not built_off.figure["en"]["layout"].get("shapes")


def test_progress_without_a_clock(tmp_path, tmp_db):
    """A pgbench output with -P lines but no run.toml (no wall clock): the elapsed seconds are the axis."""
    d = tmp_path / "runs" / "study=noclock" / "rep=1"
    d.mkdir(parents=True)
    (d / "pgbench.log").write_text((PG_RUN_DIR / "pgbench.log").read_text())
    assert ingest([tmp_path / "runs"], tmp_db).ok
    store = open_store(tmp_db, read_only=True)
    try:
        st = steady.steady_states(store)["study=noclock/rep=1"]
        clockless = store.con.execute("SELECT count(*) FROM pgbench_tps_samples WHERE ts IS NULL").fetchone()[0]
    finally:
        store.close()
    assert clockless == 75 and st.series_source == "progress" and st.found
    assert st.steady_end_s == 75 and st.tps_steady == pytest.approx(382.6, abs=1)
