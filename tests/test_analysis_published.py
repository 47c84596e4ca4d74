"""The past reports' ratio columns, recomputed from the transcribed raw columns and checked
against the printed ones: they agree to the printed precision except exactly the flagged cells."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from kansoku.analysis import tables as analysis
from kansoku.analysis.table_kinds import compute_table
from kansoku.analysis.tables import check_published, compare_interval
from kansoku.spec.model import load_report
from kansoku.store.db import open_store

ROOT = Path(__file__).resolve().parents[1]
PUB = ROOT / "data" / "published"
SPECS = ROOT / "data" / "reports"


@pytest.fixture(scope="module")
def store(published_db):
    st = open_store(published_db, read_only=True)  # data/published, ingested once per session (conftest)
    yield st
    st.close()


def rows_of(name: str) -> list[dict]:
    (path,) = PUB.rglob(name)
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def table(store, spec: str, table_id: str):
    report = load_report(SPECS / spec)
    return compute_table(store, report, report.item(table_id))


def compare_cells(t, col: int = 0):
    """Per row: (row label, the col-th compare cell, the published cell after it)."""
    out = []
    for row in t.rows:
        comps = [i for i, c in enumerate(row) if c.kind == "compare"]
        i = comps[col]
        out.append((row[0].text["en"], row[i], row[i + 1]))
    return out


def half(s: str) -> float:
    return 0.5 * 10 ** -(len(s.split(".")[1]) if "." in s else 0)


def assert_column(cells, inputs: dict[str, tuple[str, str]], printed: dict[str, str], scale: float,
                  flagged: set[str], how: str = "ratio"):
    """inputs: row label -> (value, baseline) as printed. Independently of analysis.py: the ratio
    (or speed-up) of the printed inputs, and the interval their printed rounding allows."""
    assert {label for label, _, _ in cells} == set(inputs)
    for label, comp, pub in cells:
        a, b = inputs[label]
        f = (lambda x, y: x / y) if how == "ratio" else (lambda x, y: y / x)
        assert comp.value == pytest.approx(f(float(a), float(b)), rel=1e-12), label
        p = printed[label]
        assert pub.kind == "published" and pub.value * scale == pytest.approx(float(p))
        assert comp.published["printed"] == p
        # the ratio is kansoku's own computation: not marked transcribed (†); the printed one is
        assert "transcribed" not in comp.flags and "transcribed" in pub.flags
        corners = [f(x, y) * scale for x in (float(a) - half(a), float(a) + half(a))
                   for y in (float(b) - half(b), float(b) + half(b))]
        agrees = float(p) - half(p) <= max(corners) + 1e-9 and float(p) + half(p) >= min(corners) - 1e-9
        if label in flagged:
            assert "mismatch" in comp.flags and "mismatch" in pub.flags, label
            assert not agrees, label
        else:
            assert "checked" in comp.flags and "mismatch" not in comp.flags, (label, comp.published)
            assert agrees, (label, f(float(a), float(b)) * scale, p)


def test_fy2013_table_2_2_all_agree(store):
    t = table(store, "past-fy2013.toml", "read-92-vs-93")
    assert t.item.number == "2.2"
    rows = rows_of("fy2013_t2.2_read_92_vs_93.csv")
    raw = {r["clients"]: (r["tps_9.3"], r["tps_9.2"]) for r in rows}
    printed = {r["clients"]: r["published_ratio_9.3_vs_9.2_pct"] for r in rows}
    assert_column(compare_cells(t), raw, printed, 100, flagged=set())
    assert t.checks() == {"checked": 11, "mismatch": 0}
    assert [c.text["ja"] for c in t.rows[0]] == ["1", "403.38", "98.25", "418.77", "98.30", "103.82%", "103.82%"]


def test_fy2013_table_2_3_flags_exactly_16_48_128(store):
    t = table(store, "past-fy2013.toml", "checksum")
    rows = rows_of("fy2013_t2.3_checksum.csv")
    raw = {r["clients"]: (r["tps_checksum_on"], r["tps_checksum_off"]) for r in rows}
    printed = {r["clients"]: r["published_ratio_on_vs_off_pct"] for r in rows}
    assert_column(compare_cells(t), raw, printed, 100, flagged={"16", "48", "128"})
    assert t.checks() == {"checked": 11, "mismatch": 3}
    cells = {label: comp for label, comp, _ in compare_cells(t)}
    # 2 clients: 97.565 computed, 97.56 printed: within the printed rounding, not flagged
    assert cells["2"].text["en"] == "97.57 %" and cells["2"].published["printed"] == "97.56"
    assert "checked" in cells["2"].flags
    # 128 clients: 0.03 points off
    assert cells["128"].published["computed"] == pytest.approx(82.9663, abs=1e-4)
    assert cells["128"].published["agrees"] is False


def test_fy2013_table_2_4_both_ratio_columns(store):
    t = table(store, "past-fy2013.toml", "checksum-compiled")
    off = {r["clients"]: r["tps_checksum_off"] for r in rows_of("fy2013_t2.3_checksum.csv")}
    r3 = rows_of("fy2013_t2.3_checksum.csv")
    r4 = rows_of("fy2013_t2.4_checksum_compiled.csv")
    assert_column(compare_cells(t, 0), {r["clients"]: (r["tps_checksum_on"], off[r["clients"]]) for r in r3},
                  {r["clients"]: r["published_ratio_on_vs_off_pct"] for r in r3}, 100, flagged={"16", "48", "128"})
    assert_column(compare_cells(t, 1),
                  {r["clients"]: (r["tps_checksum_on_vectorized"], off[r["clients"]]) for r in r4},
                  {r["clients"]: r["published_ratio_vs_checksum_off_pct"] for r in r4}, 100, flagged=set())


@pytest.mark.parametrize("table_id,query,server,number", [
    ("no10-server1", "No.10", "server1", "6.8"), ("no10-server2", "No.10", "server2", "6.9"),
    ("no11-server1", "No.11", "server1", "6.10"), ("no11-server2", "No.11", "server2", "6.11")])
def test_fy2017_parallel_query_speedup(store, table_id, query, server, number):
    t = table(store, "past-fy2017.toml", table_id)
    assert t.item.number == number
    rows = [r for r in rows_of("fy2017_t6.8-6.11_parallel_query.csv") if r["query"] == query and r["server"] == server]
    base = next(r["elapsed_s"] for r in rows if r["version"] == "9.5")
    raw = {r["version"]: (r["elapsed_s"], base) for r in rows}
    printed = {r["version"]: r["published_speedup_vs_9.5"] for r in rows}
    assert_column(compare_cells(t), raw, printed, 1, flagged=set(), how="speedup")
    # elapsed times shown as printed (5 significant figures)
    assert [row[1].text["en"] for row in t.rows] == [r["elapsed_s"] for r in rows]


@pytest.mark.parametrize("table_id,keep,label_of,number", [
    ("sync", lambda r: r["async_standbys"] == "0", lambda r: r["sync_standbys"], "8.8"),
    ("async", lambda r: r["sync_standbys"] == "0", lambda r: r["async_standbys"], "8.9"),
    ("mixed", lambda r: r["pattern"] in ("none", "async-3", "mixed-1s2a", "mixed-2s1a", "sync-3"),
     lambda r: r["pattern"], "8.10")])
def test_fy2017_replication_pct_of_no_replication(store, table_id, keep, label_of, number):
    t = table(store, "past-fy2017.toml", table_id)
    assert t.item.number == number
    rows = [r for r in rows_of("fy2017_t8.8-8.10_replication.csv") if keep(r)]
    none = next(r["tps"] for r in rows if r["pattern"] == "none")
    report = t.item
    labels = [row[0].text["en"] for row in t.rows]
    assert len(labels) == len(rows)
    spec = load_report(SPECS / "past-fy2017.toml")

    def label(r):
        v = label_of(r)
        if v in report.row_labels:
            return report.row_labels[v].get("en")
        lab = spec.factor_labels.get(report.rows, {}).get(v)
        return lab.get("en") if lab else v
    raw = {label(r): (r["tps"], none) for r in rows}
    printed = {label(r): r["published_pct_of_no_replication"] for r in rows}
    assert_column(compare_cells(t), raw, printed, 100, flagged=set())
    assert labels[0].startswith("(reference)")  # the baseline row first
    assert "baseline" in t.rows[0][0].flags


def test_interval_check_is_the_printed_precision():
    # 801.86 / 821.87 = 97.5653 %: the inputs' rounding gives [97.5647, 97.5659]; 97.56 stands for
    # [97.555, 97.565]: they meet, so it agrees
    c = check_published(801.86, 0.005, 821.87, 0.005, "ratio", "percent", 97.56, 0.005)
    assert c.agrees and c.low < 97.565 < c.high
    # 11527.28 / 13893.93 = 82.9663 %; 83.00 stands for [82.995, 83.005]: no
    assert not check_published(11527.28, 0.005, 13893.93, 0.005, "ratio", "percent", 83.00, 0.005).agrees
    # a coarser printed input widens the interval, still not enough to explain 83.00
    assert check_published(11527, 0.5, 13894, 0.5, "ratio", "percent", 83.00, 0.005).agrees is False
    lo, hi = compare_interval(100, 0.5, 10, 0.5, "speedup")
    assert lo == pytest.approx(9.5 / 100.5) and hi == pytest.approx(10.5 / 99.5)
    # measured values (exact): only the published value's rounding counts
    assert check_published(1.0, 0, 3.0, 0, "ratio", "percent", 33.33, 0.005).agrees
    assert not check_published(1.0, 0, 3.0, 0, "ratio", "percent", 33.32, 0.005).agrees


def test_a_printed_zero_over_a_baseline_has_a_bounded_interval():
    """A transcribed 0.00 (known to ±0.005) over a baseline of 100 is a ratio in [-0.00005, 0.00005]: bounded.
    Only a denominator whose interval holds 0 makes the interval unbounded."""
    lo, hi = analysis.compare_interval(0.0, 0.005, 100.0, 0.05, "ratio")
    assert lo == pytest.approx(-0.005 / 99.95) and hi == pytest.approx(0.005 / 99.95)
    assert analysis.compare_interval(5.0, 0.005, 0.0, 0.005, "ratio") == (-math.inf, math.inf)
    assert analysis.compare_interval(0.0, 0.005, 100.0, 0.05, "speedup") == (-math.inf, math.inf)


def all_tables(store):
    for spec in sorted(SPECS.glob("past-*.toml")):
        report = load_report(spec)
        for ch in report.chapters:
            for it in ch.tables:
                yield spec.name, it.id, compute_table(store, report, it)


def test_marks_of_transcribed_tables_tell_the_truth(store):
    """† only on transcribed values (a ratio kansoku computes is not one); no verdict, no "?" and no
    rank-sum legend where every comparison is between single transcribed values."""
    seen = 0
    for spec, tid, t in all_tables(store):
        for row in t.rows:
            for c in row:
                if c.kind == "compare":
                    assert "transcribed" not in c.flags, (spec, tid, c.text)
                if "transcribed" in c.flags and c.kind != "published":
                    assert c.runs, (spec, tid, c.text)  # a transcribed value is a run's value
        singles = all(len(c.run_values) <= 1 for row in t.rows for c in row if c.kind == "value")
        if singles and all("transcribed" in c.flags for row in t.rows for c in row if c.kind == "value"):
            m = t.to_model()
            seen += 1
            assert not any(c.verdict for row in t.rows for c in row), (spec, tid)
            assert not set(m.marks) & {"better", "worse", "changed", "within-noise", "too-few-runs"}, (spec, tid)
            assert m.method is None, (spec, tid)
    assert seen > 10


def test_check_summary_counts_inline_checks(store):
    """FY2017 table 9.3 prints its change inline beside each throughput: those cells are checked too."""
    t = table(store, "past-fy2017.toml", "select")
    inline = [c for row in t.rows for c in row if c.kind == "value" and c.published]
    assert len(inline) == 33
    assert t.checks() == {"checked": 33, "mismatch": 1}
