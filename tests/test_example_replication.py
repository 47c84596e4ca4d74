"""The example's replication chapter (issue 24): every number its Discussion quotes equals the number computed
here again from the raw files (pgbench.log, pg_stat_replication.series.csv) and the number the built site's
tables print; the verdicts it states are the ones the rank-sum rule gives on the runs."""

from __future__ import annotations

import csv
import itertools
import re
import statistics
import tomllib
from decimal import ROUND_HALF_UP, Decimal

import pytest

from conftest import ROOT

STUDY = ROOT / "data" / "runs" / "example" / "campaign=example-2026-11" / "study=replication"
CONTENT = ROOT / "content" / "reports" / "example"
PATTERNS = ["none", "async-1", "async-2", "sync-1", "sync-2", "mixed-1s1a"]
TPS_LINE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M)


def fmt(x: float, digits: int) -> str:
    """Rounded half away from zero, as the report rounds."""
    return str(Decimal(repr(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def run_dirs(pattern: str):
    dirs = sorted(STUDY.glob(f"pattern={pattern}/rep=*"))
    assert [d.name for d in dirs] == ["rep=1", "rep=2", "rep=3"], dirs
    for d in dirs:
        assert tomllib.loads((d / "run.toml").read_text())["status"] == "ok"
    return dirs


@pytest.fixture(scope="module")
def tps() -> dict[str, list[float]]:
    """pattern -> each run's TPS, from pgbench's own summary line."""
    return {p: [float(TPS_LINE.search((d / "pgbench.log").read_text()).group(1)) for d in run_dirs(p)]
            for p in PATTERNS}


@pytest.fixture(scope="module")
def replay_lag_ms() -> dict[str, float]:
    """pattern -> median over its runs of: the mean over the run's snapshots of the largest standby's replay_lag."""
    out = {}
    for p in PATTERNS[1:]:
        per_run = []
        for d in run_dirs(p):
            largest: dict[str, float] = {}
            with open(d / "pg_stat_replication.series.csv", newline="") as fh:
                for row in csv.DictReader(fh):
                    if row["replay_lag_s"]:
                        largest[row["snapshot_at"]] = max(largest.get(row["snapshot_at"], 0.0), float(row["replay_lag_s"]))
            per_run.append(1000 * sum(largest.values()) / len(largest))
        out[p] = statistics.median(per_run)
    return out


def rank_sum_p(a: list[float], b: list[float]) -> float:
    """Exact two-sided rank-sum p (no ties in TPS), enumerated here rather than trusting analysis/noise.py."""
    pooled = sorted(a + b)
    rank = {v: i + 1 for i, v in enumerate(pooled)}
    expected = len(a) * (len(pooled) + 1) / 2
    observed = abs(sum(rank[v] for v in a) - expected)
    splits = list(itertools.combinations(range(1, len(pooled) + 1), len(a)))
    return sum(abs(sum(s) - expected) >= observed - 1e-9 for s in splits) / len(splits)


def verdict(value: list[float], base: list[float]) -> str:
    ratio = statistics.median(value) / statistics.median(base)
    if rank_sum_p(value, base) <= 0.10 and abs(ratio - 1) >= 0.02:
        return "✓" if ratio > 1 else "✗"
    return "≈"


def discussion(lang: str) -> str:
    text = (CONTENT / f"replication.{lang}.md").read_text(encoding="utf-8")
    head = "## Discussion" if lang == "en" else "## 考察"
    return " ".join(text.split(head, 1)[1].split())


def site_table(public, lang: str, table: str) -> dict[str, dict[str, str]]:
    """The built table's CSV (what the page prints, unrounded): row label -> column -> value."""
    with open(public / "csv" / "example" / f"{table}.{lang}.csv", encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {r[next(iter(r))]: r for r in rows}


LABELS = {"en": {"none": "no replication", "async-1": "1 async", "async-2": "2 async", "sync-1": "1 sync",
                 "sync-2": "2 sync", "mixed-1s1a": "1 sync + 1 async"},
          "ja": {"none": "レプリケーションなし", "async-1": "非同期 1", "async-2": "非同期 2", "sync-1": "同期 1",
                 "sync-2": "同期 2", "mixed-1s1a": "同期 1 + 非同期 1"}}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_discussion_numbers_equal_the_raw_runs_and_the_built_tables(example_site, tps, replay_lag_ms, lang):
    _, public = example_site
    med = {p: statistics.median(v) for p, v in tps.items()}
    pct = {p: fmt(100 * med[p] / med["none"], 1) for p in PATTERNS}
    verdicts = {p: verdict(tps[p], tps["none"]) for p in PATTERNS[1:]}
    # the built tables print the same medians, ranges, ratios and counts
    table = site_table(public, lang, "replication-tps")
    for p in PATTERNS:
        row = table[LABELS[lang][p]]
        values = list(row.values())
        assert float(values[1]) == pytest.approx(med[p]) and float(values[2]) == pytest.approx(min(tps[p]))
        assert float(values[3]) == pytest.approx(max(tps[p])) and values[5] == "3"
        assert fmt(100 * float(values[-1]), 1) == pct[p]
    lag = site_table(public, lang, "replication-lag")
    for p in PATTERNS[1:]:
        replay = [v for k, v in lag[LABELS[lang][p]].items() if k.startswith("replay_lag") and k.endswith(("[median]", "[中央値]"))]
        assert replay and float(replay[0]) == pytest.approx(replay_lag_ms[p]), (p, replay)
    # "every run saw the standbys its pattern asked for": least and largest counts over the runs
    standbys = {"async-1": (1, 0), "async-2": (2, 0), "sync-1": (1, 1), "sync-2": (2, 2), "mixed-1s1a": (2, 1)}
    for p, (streaming, sync) in standbys.items():
        v = list(lag[LABELS[lang][p]].values())
        assert [float(x) for x in v[1:4]] == [streaming] * 3 and [float(x) for x in v[5:8]] == [sync] * 3, (p, v[:8])
    idle_col = next(k for k in table[LABELS[lang]["none"]] if ("[server]" in k or "[サーバ]" in k) and "idle" in k
                    and k.endswith(("[median]", "[中央値]")))
    idle = {p: float(table[LABELS[lang][p]][idle_col]) for p in PATTERNS}
    nice_cols = [k for k in table[LABELS[lang]["none"]] if "%nice" in k and not k.endswith(("(runs)", "(実行数)"))]
    assert len(nice_cols) == 3  # the median, its least and its largest run
    # "nothing else ran on the machine ... the %nice column is 0.0 in every run" (the setup says so)
    assert all(float(table[LABELS[lang][p]][k]) == 0 for p in PATTERNS for k in nice_cols)
    # synchronous standbys wait (more idle than without replication), asynchronous ones take CPU (less idle)
    assert idle["sync-1"] > idle["none"] > idle["async-1"] > idle["async-2"]
    with open(ROOT / "data" / "published" / "fy2017" / "fy2017_t8.8-8.10_replication.csv", newline="") as fh:
        fy2017 = {r["pattern"]: r["published_pct_of_no_replication"] for r in csv.DictReader(fh)}

    text = discussion(lang)
    n = med["none"]
    lag_lo, lag_hi = fmt(min(replay_lag_ms.values()), 2), fmt(max(replay_lag_ms.values()), 2)
    if lang == "en":
        expected = [
            f"The three runs without replication span {fmt(min(tps['none']), 1)} to {fmt(max(tps['none']), 1)} TPS "
            f"around a median of {fmt(n, 1)}",
            f"one asynchronous standby {fmt(med['async-1'], 1)} TPS ({pct['async-1']} % of no replication), two "
            f"asynchronous {fmt(med['async-2'], 1)} TPS ({pct['async-2']} %), one synchronous {fmt(med['sync-1'], 1)} TPS "
            f"({pct['sync-1']} %), two synchronous {fmt(med['sync-2'], 1)} TPS ({pct['sync-2']} %), and one synchronous "
            f"with one asynchronous {fmt(med['mixed-1s1a'], 1)} TPS ({pct['mixed-1s1a']} %)",
            f"with one synchronous standby the machine was idle {fmt(idle['sync-1'], 1)} % of the time, more than "
            f"without replication ({fmt(idle['none'], 1)} %)",
            f"CPU idle fell to {fmt(idle['async-1'], 1)} % with one and {fmt(idle['async-2'], 1)} % with two",
            f"({fy2017['async-1']} % and {fy2017['async-2']} % of no replication with one and two)",
            f"({fy2017['sync-1']} % with one, {fy2017['sync-2']} % with two)",
            f"replay lag is {lag_lo} to {lag_hi} ms in the median of every pattern",
        ]
    else:
        expected = [
            f"レプリケーションなしの 3 回の実行は中央値 {fmt(n, 1)} に対して {fmt(min(tps['none']), 1)} から "
            f"{fmt(max(tps['none']), 1)} TPS の範囲にある",
            f"非同期 1 台は {fmt(med['async-1'], 1)} TPS (レプリケーションなしの {pct['async-1']} %)、非同期 2 台は "
            f"{fmt(med['async-2'], 1)} TPS ({pct['async-2']} %)、同期 1 台は {fmt(med['sync-1'], 1)} TPS ({pct['sync-1']} %)、"
            f"同期 2 台は {fmt(med['sync-2'], 1)} TPS ({pct['sync-2']} %)、同期 1 台 + 非同期 1 台は "
            f"{fmt(med['mixed-1s1a'], 1)} TPS ({pct['mixed-1s1a']} %)",
            f"同期 1 台では CPU アイドルは {fmt(idle['sync-1'], 1)} % で、スタンバイも同じマシンで動いているのに、"
            f"レプリケーションなし ({fmt(idle['none'], 1)} %) より多かった",
            f"CPU アイドルは非同期 1 台で {fmt(idle['async-1'], 1)} %、2 台で {fmt(idle['async-2'], 1)} % に下がった",
            f"(1 台で {fy2017['async-1']} %、2 台で {fy2017['async-2']} %)",
            f"(1 台で {fy2017['sync-1']} %、2 台で {fy2017['sync-2']} %)",
            f"replay_lag はどの構成でも中央値で {lag_lo} から {lag_hi} ms",
        ]
    for sentence in expected:
        assert sentence in text, f"replication.{lang}.md: expected {sentence!r}"
    # what the sentences claim about the runs: every pattern with a standby slower than every run without one,
    # so worse beyond noise, each at the smallest p 3 runs against 3 can give
    for p in PATTERNS[1:]:
        assert max(tps[p]) < min(tps["none"]), p
        assert verdicts[p] == "✗" and rank_sum_p(tps[p], tps["none"]) == pytest.approx(0.1), p
    assert "p = 0.100" in text
