"""The example's replication chapter: every number its Discussion quotes equals the number computed
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
from test_example_report import VERDICT_WORDS, rendered_discussion

STUDY = ROOT / "data" / "runs" / "example" / "campaign=example-2026-11" / "study=replication"
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


def discussion(public, lang: str) -> str:
    """The Discussion as the built page prints it (the numbers through the data), whitespace folded (ja: removed)."""
    return rendered_discussion(public, "replication", lang)


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

    text = discussion(public, lang)
    n = med["none"]
    lag = {p: fmt(v, 2) for p, v in replay_lag_ms.items()}
    words = VERDICT_WORDS[lang]
    p_of = {p: f"{rank_sum_p(tps[p], tps['none']):.3f}" for p in PATTERNS[1:]}
    if lang == "en":
        names = {"async-1": "one asynchronous standby", "async-2": "two asynchronous standbys",
                 "sync-1": "one synchronous standby", "sync-2": "two synchronous standbys",
                 "mixed-1s1a": "one synchronous and one asynchronous standby"}
        expected = [
            f"The three runs without replication span {fmt(min(tps['none']), 1)} to {fmt(max(tps['none']), 1)} TPS "
            f"around a median of {fmt(n, 1)}",
            *(f"{names[p]}: {fmt(med[p], 1)} TPS, {pct[p]} % of no replication; {words[verdicts[p]]}, p = {p_of[p]}"
              for p in PATTERNS[1:]),
            f"with one synchronous standby the machine was idle {fmt(idle['sync-1'], 1)} % of the time, more than "
            f"without replication ({fmt(idle['none'], 1)} %)",
            f"CPU idle was {fmt(idle['async-1'], 1)} % with one and {fmt(idle['async-2'], 1)} % with two",
            "lost much less to asynchronous standbys and about as much to synchronous ones (its tables 8.8 and 8.9",
            f"replay lag (the second table, median) was {lag['async-1']} ms with one asynchronous standby, "
            f"{lag['async-2']} ms with two, {lag['sync-1']} ms with one synchronous standby, {lag['sync-2']} ms with two "
            f"and {lag['mixed-1s1a']} ms with one of each",
        ]
    else:
        names = {"async-1": "非同期 1 台", "async-2": "非同期 2 台", "sync-1": "同期 1 台", "sync-2": "同期 2 台",
                 "mixed-1s1a": "同期 1 台 + 非同期 1 台"}
        expected = [
            f"レプリケーションなしの 3 回の実行は中央値 {fmt(n, 1)} に対して {fmt(min(tps['none']), 1)} から "
            f"{fmt(max(tps['none']), 1)} TPS の範囲にある",
            *(f"{names[p]}: {fmt(med[p], 1)} TPS、レプリケーションなしの {pct[p]} %。判定は{words[verdicts[p]]}、"
              f"p = {p_of[p]}" for p in PATTERNS[1:]),
            f"同期 1 台では CPU アイドルは {fmt(idle['sync-1'], 1)} % で、スタンバイも同じマシンで動いているのに、"
            f"レプリケーションなし ({fmt(idle['none'], 1)} %) より多かった",
            f"CPU アイドルは非同期 1 台で {fmt(idle['async-1'], 1)} %、2 台で {fmt(idle['async-2'], 1)} % だった",
            "非同期スタンバイでの低下がずっと小さく、同期スタンバイではほぼ同じだった (2017 年度報告書の表 8.8 と 8.9",
            f"replay_lag (2 つ目の表、中央値) は、非同期 1 台で {lag['async-1']} ms、非同期 2 台で {lag['async-2']} ms、"
            f"同期 1 台で {lag['sync-1']} ms、同期 2 台で {lag['sync-2']} ms、同期 1 台 + 非同期 1 台で "
            f"{lag['mixed-1s1a']} ms だった",
        ]
        expected = ["".join(s.split()) for s in expected]
    for sentence in expected:
        assert sentence in text, f"replication.{lang}: expected {sentence!r} in {text!r}"
    # FY2017's printed ratios are another report's numbers: referred to by its tables, not copied
    for p in ("async-1", "async-2", "sync-2"):  # (sync-1: this report's own ratio happens to print the same)
        assert f"{fy2017[p]} %" not in text and f"{fy2017[p]}%" not in text, p
    # what the sentences claim about the runs: synchronous standbys cost about what FY2017's did, asynchronous
    # ones more (they share this machine's CPUs)
    assert abs(float(pct["sync-1"]) - float(fy2017["sync-1"])) < 5
    assert float(pct["async-1"]) < float(fy2017["async-1"]) - 10 and float(pct["async-2"]) < float(fy2017["async-2"]) - 10
