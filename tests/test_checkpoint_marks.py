"""Checkpoint marks from pg_stat_bgwriter / pg_stat_checkpointer snapshots (store/events.sql run_stat_checkpoints):
when the checkpointer's counters rose between two snapshots of a run, a checkpoint was counted in that interval,
drawn on the TPS-over-time chart as "somewhere between t1 and t2".

Fixtures (tests/fixtures/pg_stat_series/README.md): ``pg15`` measured here by tools/collect with PostgreSQL 15
(``--pg-stat-interval 1``, a CHECKPOINT requested during the run, the server log kept); ``pg17-handwritten``
written by hand from the documented columns of PostgreSQL 17's pg_stat_checkpointer.
"""

from __future__ import annotations

import csv
import re
import shutil
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import FIXTURES, ro_con, run_tool

PG15 = FIXTURES / "pg_stat_series" / "pg15"
PG17 = FIXTURES / "pg_stat_series" / "pg17-handwritten"


def _run_dir(root: Path) -> Path:
    return next(p.parent for p in root.rglob("run.toml"))


def _ts(s: str) -> datetime:
    return datetime.fromisoformat(s.replace(" ", "T", 1))


def expected_intervals(run_dir: Path, timed: str, requested: str) -> list[tuple[float, float, int, int]]:
    """(start_s, end_s, timed rise, requested rise) between consecutive snapshots, read straight from the CSV
    files (before, series, after) and run.toml's start; only rises (a reset is no checkpoint)."""
    start = tomllib.loads((run_dir / "run.toml").read_text())["start"].timestamp()
    snaps = []
    for f in sorted(run_dir.glob("pg_stat_*.csv")):
        with open(f, newline="") as fh:
            rows = list(csv.DictReader(fh))
        if not rows or timed not in rows[0]:
            continue
        for r in rows:
            snaps.append((_ts(r["snapshot_at"]).timestamp(), float(r[timed]), float(r[requested])))
    snaps.sort()
    out = []
    for (t0, a0, b0), (t1, a1, b1) in zip(snaps, snaps[1:]):
        if a1 >= a0 and b1 >= b0 and (a1 - a0) + (b1 - b0) > 0:
            out.append((round(t0 - start, 3), round(t1 - start, 3), int(a1 - a0), int(b1 - b0)))
    return out


def stat_events(db: Path) -> list[tuple]:
    con = ro_con(db)
    try:
        return con.execute("SELECT round(at_s, 3), round(until_s, 3), reason, value, unit FROM run_events "
                           "WHERE event = 'checkpoint_stat' ORDER BY at_s").fetchall()
    finally:
        con.close()


def spans(rows) -> list[float]:
    return [x for a, b, *_ in rows for x in (a, b)]


def _reason(timed: int, requested: int) -> str:
    return ", ".join(w for w, n in (("timed", timed), ("requested", requested)) if n > 0)


@pytest.fixture
def pg15_without_log(tmp_path):
    """The PostgreSQL 15 run without its server log: the statistics are the only evidence of checkpoints."""
    dst = tmp_path / "runs"
    shutil.copytree(PG15, dst, ignore=shutil.ignore_patterns("server.log"))
    db = tmp_path / "k.duckdb"
    run_tool("ingest", "--db", db, dst, check=True)
    return db, _run_dir(dst)


def test_pg15_series_was_taken_by_tools_collect():
    run_dir = _run_dir(PG15)
    meta = tomllib.loads((run_dir / "run.toml").read_text())
    assert meta["status"] == "ok" and meta["server"]["server_version"].startswith("15.")
    assert meta["commands"]["pg_stat_series_interval_s"] == 1.0
    series = list(csv.DictReader(open(run_dir / "pg_stat_bgwriter.series.csv", newline="")))
    assert meta["commands"]["pg_stat_series_snapshots"] == len(series) >= 10
    times = [_ts(r["snapshot_at"]) for r in series]
    assert times == sorted(times) and meta["start"] < times[0] and times[-1] < meta["end"]


def test_pg15_marks_between_snapshots(pg15_without_log):
    db, run_dir = pg15_without_log
    want = expected_intervals(run_dir, "checkpoints_timed", "checkpoints_req")
    assert want, "the fixture's run holds at least one checkpoint (a CHECKPOINT was requested during it)"
    assert any(req > 0 for *_, req in want)
    got = stat_events(db)
    assert spans(got) == pytest.approx(spans(want), abs=2e-3)
    for (a, b, reason, value, unit), (_, _, timed, req) in zip(got, want):
        assert reason == _reason(timed, req) and value == timed + req and unit == "checkpoints"
        assert 0 < b - a < 3  # one snapshot interval (1 s, plus psql's own time)


def test_pg15_server_log_explains_its_checkpoints(tmp_path):
    """With the server log, its checkpoints (exact times) are drawn, and a statistics interval a logged
    checkpoint overlaps is left out: one mark per checkpoint, the most precise one."""
    db = tmp_path / "k.duckdb"
    run_tool("ingest", "--db", db, PG15, check=True)
    run_dir = _run_dir(PG15)
    start = tomllib.loads((run_dir / "run.toml").read_text())["start"].timestamp()
    log = (run_dir / "server.log").read_text()
    stamp = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG:  checkpoint "
    starts = [datetime.fromisoformat(m).replace(tzinfo=timezone.utc).timestamp() - start
              for m in re.findall(stamp + r"starting", log, re.M)]
    ends = [datetime.fromisoformat(m).replace(tzinfo=timezone.utc).timestamp() - start
            for m in re.findall(stamp + r"complete", log, re.M)]
    assert starts and len(ends) >= len(starts) - 1
    logged = list(zip(starts, ends + [None] * (len(starts) - len(ends))))
    want = [w for w in expected_intervals(run_dir, "checkpoints_timed", "checkpoints_req")
            if not any(s <= w[1] and (e if e is not None else s) >= w[0] for s, e in logged)]
    assert spans(stat_events(db)) == pytest.approx(spans(want), abs=2e-3)
    con = ro_con(db)
    try:
        n = con.execute("SELECT count(*) FROM run_events WHERE event = 'checkpoint'").fetchone()[0]
    finally:
        con.close()
    assert n >= 1


def test_pg17_checkpointer_marks_handwritten(tmp_path):
    db = tmp_path / "k.duckdb"
    run_tool("ingest", "--db", db, PG17, check=True)
    run_dir = _run_dir(PG17)
    want = expected_intervals(run_dir, "num_timed", "num_requested")
    assert [(a, b, t, r) for a, b, t, r in want] == [(3.0, 4.0, 0, 1), (9.0, 10.0, 1, 0)]  # the reset at 11 s: none
    got = stat_events(db)
    assert got == [(3.0, 4.0, "requested", 1.0, "checkpoints"), (9.0, 10.0, "timed", 1.0, "checkpoints")]
    con = ro_con(db)
    try:  # the run's count: both checkpoints, the reset counted from zero (never a negative count)
        assert con.execute("SELECT value FROM run_metrics WHERE metric = 'pg_checkpoints'").fetchone()[0] == 2
    finally:
        con.close()


CHART_SPEC = """\
[report]
id = "ckpt"
fiscal_year = 2026
title = "checkpoints"
organisation = "kansoku"

[[chapter]]
id = "c"
title = "c"

[[chapter.figure]]
id = "tps"
caption = { ja = "1 秒ごとの TPS", en = "TPS per second" }
chart = "tps_over_time"
metric = "tps"
where = { study = "checkpoints" }
"""


def test_marks_on_the_tps_chart_in_both_languages(pg15_without_log, tmp_path):
    from kansoku.app import compute_one
    from kansoku.render import charts
    from kansoku.render.charts.events import EVENT_META

    db, run_dir = pg15_without_log
    spec = tmp_path / "ckpt.toml"
    spec.write_text(CHART_SPEC, encoding="utf-8")
    fig = compute_one(db, spec, tmp_path / "content").chapters[0].figures["tps"]
    want = expected_intervals(run_dir, "checkpoints_timed", "checkpoints_req")
    for lang, name, between in (("en", "Checkpoint (counted between two statistics snapshots)", "somewhere between"),
                                ("ja", "チェックポイント (統計の 2 つのスナップショットの間に計数)", "の間のどこか")):
        f = charts.draw(fig.chart_data, lang)
        marks = [t for t in f["data"] if t.get("meta") == EVENT_META and t.get("name") == name]
        assert len(marks) == 1
        m = marks[0]
        assert list(m["x"]) == pytest.approx([(a + b) / 2 for a, b, *_ in want], abs=1e-3)
        assert all(between in h for h in m["hovertext"]) and "%{x" not in m["hovertemplate"]
        bands = [(s["x0"], s["x1"]) for s in f["layout"].get("shapes", []) if s.get("type") == "rect"]
        for a, b, *_ in want:
            assert any(abs(x0 - a) < 1e-3 and abs(x1 - b) < 1e-3 for x0, x1 in bands), (a, b, bands)
