"""Spread and noise-aware verdicts for comparisons of repeated runs.

A benchmark campaign repeats each condition a few times (3–5 in the consortium's reports). A comparison
cell ("checksums on / off = 96.2 %") is only worth printing with a verdict on whether the difference is
larger than the run-to-run noise. The method, chosen for so few repetitions:

* **Test**: the exact two-sided Wilcoxon–Mann–Whitney rank-sum test over all ways of splitting the pooled
  runs into two groups of the observed sizes (a permutation test of the rank sum). It assumes nothing about
  the distribution of a run's throughput (which is often skewed by one slow run), and because the null
  distribution is enumerated exactly, its false-alarm rate on pure noise is at most ``alpha`` for any
  distribution. With 3 runs against 3 the smallest attainable p is 2/20 = 0.10, reached only when the two
  ranges do not overlap; so ``alpha = 0.10`` is the strictest level at which 3×3 can show anything at all.
  The splits are counted by rank sum (``rank_sum_counts``), not listed, so the test stays exact for a hundred
  runs against a hundred; only a comparison too large to count (``COUNT_CELLS``) takes the test's normal
  approximation (ties and continuity corrected, as R's ``wilcox.test``), which at those sizes is as close to
  the counted p as a sample of the splits would be, in no time (``tests/test_noise.py`` holds it to the
  counted p).
* **Effect threshold**: a difference that the test finds real but that is smaller than ``min_effect``
  (default 2 % of the baseline median) is reported as within noise, as asv's ``compare`` requires both a
  significant test and a ratio beyond its factor, and Bencher's percentage thresholds do.
* **Too few runs**: fewer than ``Method.min_runs`` runs on either side gives no verdict at all (printed as such),
  never "better" or "worse".
* **Interval**: the ratio of medians gets a percentile bootstrap interval (``B`` resamples per side, fixed
  seed) shown beside it; it describes the spread, the verdict comes from the test.

The direction (better or worse) comes from the metric catalogue (``parsers.catalogue()``): a higher TPS
is better, a higher latency is worse; a metric with no better direction (CPU %idle, disk KB/s) that moved
beyond the noise is "changed", never better or worse.
Everything here works on lists of floats; the callers get the per-run values from the store.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import statistics
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, Sequence

from kansoku import words
from kansoku.analysis.verdict_method import Method

LIST_LIMIT = 1_000  # up to this many splits they are listed (3 runs against 3: 20), beyond they are counted
COUNT_CELLS = 4_000_000  # the rank-sum count table's size (float64 cells) above which the p is approximated
SEED = 20131  # any fixed number: the same runs give the same interval in every build

VerdictKind = Literal["better", "worse", "changed", "within_noise", "too_few_runs", "no_ratio"]


@dataclass(frozen=True)
class Spread:
    """The runs behind one aggregated number."""

    values: tuple[float, ...]
    n: int
    median: float
    minimum: float
    maximum: float
    q1: float | None = None  # quartiles (inclusive method) when n >= 4
    q3: float | None = None
    cv: float | None = None  # coefficient of variation (stdev / mean) when n >= 2 and mean != 0


# Verdicts and spreads already computed (a build's comparison: ``kept``, those an earlier build of it
# computed, ``used``, those this one asked for), by their arguments: both are functions of their arguments
# alone, so one new run recomputes its condition's alone (report/cache.py ItemCache.comparison)
_KEPT: tuple[dict, dict] | None = None


@contextmanager
def kept_results(kept: dict, used: dict):
    """Inside the block, :func:`compare` and :func:`spread` give the result kept in ``kept`` under their
    arguments when there is one, and record every result they give in ``used``."""
    global _KEPT
    before, _KEPT = _KEPT, (kept, used)
    try:
        yield
    finally:
        _KEPT = before


def _exact(values: Sequence[float]) -> tuple[str, ...]:
    """Values as a key that tells apart every float (0.0 and -0.0 too)."""
    return tuple(float(v).hex() for v in values)


def _kept(key: tuple, compute):
    if _KEPT is None:
        return compute()
    got = _KEPT[0].get(key)
    if got is None:
        got = compute()
    _KEPT[1][key] = got
    return got


def spread(values: Sequence[float]) -> Spread:
    vals = tuple(float(v) for v in values)
    return _kept(("spread", _exact(vals)), lambda: _spread(vals))


def _spread(vals: tuple[float, ...]) -> Spread:
    if not vals:
        raise ValueError("spread of no runs")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"spread of non-finite values {vals}")
    q1 = q3 = cv = None
    if len(vals) >= 4:
        q1, _, q3 = statistics.quantiles(vals, n=4, method="inclusive")
    if len(vals) >= 2:
        mean = statistics.fmean(vals)
        if mean != 0:
            cv = statistics.stdev(vals) / abs(mean)
    return Spread(vals, len(vals), statistics.median(vals), min(vals), max(vals), q1, q3, cv)


@dataclass(frozen=True)
class Verdict:
    kind: VerdictKind
    ratio: float | None  # median(value) / median(baseline)
    ratio_low: float | None  # bootstrap interval of the ratio of medians
    ratio_high: float | None
    p_value: float | None  # two-sided rank-sum p: exact, or its normal approximation beyond COUNT_CELLS
    n_value: int
    n_baseline: int
    method: Method = field(default_factory=Method)

    @property
    def decided(self) -> bool:
        return self.kind in ("better", "worse", "changed")


def rank_sum_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of the Wilcoxon rank-sum statistic over every split of the pooled runs into groups of the
    observed sizes; its normal approximation where counting them would not fit (``rank_sum_counts``).

    Ties get mid-ranks; the p is the share of splits whose rank sum is at least as far from its mean as
    the observed one (so ties can only make the test more conservative). The smaller group's rank sum is the
    one counted: the other's is the total less it, as far from its mean, and its table is smaller."""
    if len(b) < len(a):
        a, b = b, a
    pooled = list(a) + list(b)
    n, total = len(a), len(pooled)
    order = sorted(range(total), key=lambda i: pooled[i])
    ranks2 = [0] * total  # twice the mid-ranks: whole numbers
    ties = 0  # the sum of t^3 - t over the groups of t tied runs (the variance's correction)
    i = 0
    while i < total:
        j = i
        while j + 1 < total and pooled[order[j + 1]] == pooled[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks2[order[k]] = i + j + 2
        ties += (j - i + 1) ** 3 - (j - i + 1)
        i = j + 1
    expected2 = n * (total + 1)
    observed2 = abs(sum(ranks2[:n]) - expected2)
    if math.comb(total, n) <= LIST_LIMIT:  # few splits: listing them is quicker than counting (the same p)
        splits = list(itertools.combinations(ranks2, n))
        return sum(abs(sum(s) - expected2) >= observed2 for s in splits) / len(splits)
    counts = _rank_sum_counts(tuple(sorted(ranks2)), n)
    if counts is not None:
        import numpy as np  # numpy only where a verdict is computed: a rebuild that reuses its tables loads none

        far = np.abs(np.arange(len(counts)) - expected2) >= observed2
        return float(counts[far].sum() / counts.sum())
    return _normal_p(observed2 / 2, n, total - n, ties)


def _normal_p(distance: float, n: int, m: int, ties: int) -> float:
    """The two-sided p of a rank sum ``distance`` from its mean, by the normal approximation of its null
    distribution: the variance corrected for ties, the distance for continuity (by half a rank)."""
    total = n + m
    variance = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:  # every run tied: every split has the same rank sum
        return 1.0
    z = max(distance - 0.5, 0.0) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))


@functools.lru_cache(maxsize=64)
def _rank_sum_counts(ranks2: tuple[int, ...], n: int):
    """``rank_sum_counts`` once per multiset of ranks and group size: without ties the ranks are 1 .. N, so
    every comparison of n runs against m counts the same table, and a report's many comparisons of the same
    sizes count it once. Read-only: the table is shared."""
    counts = rank_sum_counts(ranks2, n)
    if counts is not None:
        counts.flags.writeable = False
    return counts


def rank_sum_counts(ranks2: Sequence[int], n: int):
    """How many ways of choosing ``n`` of the (doubled, whole) ranks give each rank sum: ``counts[s]`` for
    s = 0 .. the largest sum, or None when the table would exceed ``COUNT_CELLS`` (then the caller approximates).

    Counted, not enumerated: one pass per run over a table of (runs chosen, sum), each run added to every
    smaller choice (a 0/1 knapsack count), so 30 runs against 30 (10^17 splits) stay exact and cheap where
    listing the splits would not (docs/build-performance.md). Counts are floats: exact up to 2^53 splits (identical to enumerating them), beyond that to 16 digits."""
    top = sum(sorted(ranks2)[len(ranks2) - n:]) if n else 0
    if (n + 1) * (top + 1) > COUNT_CELLS:
        return None
    import numpy as np  # (as in rank_sum_p)

    table = np.zeros((n + 1, top + 1))
    table[0, 0] = 1.0
    for r in ranks2:
        if r <= top:  # (numpy reads the right side whole before it writes: each run is added once)
            table[1:, r:] += table[:-1, :top + 1 - r]
    return table[n]


def ratio_interval(value: Sequence[float], baseline: Sequence[float], method: Method) -> tuple[float, float] | None:
    """Percentile bootstrap interval of median(value) / median(baseline), resampling each side; None when
    fewer than half the resamples have a baseline median other than 0.

    Each resample draws the baseline's runs, then the value's, as ``random.Random(SEED).choices`` would
    (the same Mersenne Twister state, the same ``floor(random() * n)`` choice), all at once: a build of a
    hundred tables draws millions of resamples."""
    if not value or not baseline:
        return None
    import numpy as np  # (as in rank_sum_p)

    state = random.Random(SEED).getstate()[1]
    rs = np.random.RandomState()
    rs.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), state[624]))
    nb, nv = len(baseline), len(value)
    u = rs.random_sample(method.resamples * (nb + nv)).reshape(method.resamples, nb + nv)
    b = np.asarray(baseline, dtype=float)[np.floor(u[:, :nb] * float(nb)).astype(np.int64)]
    v = np.asarray(value, dtype=float)[np.floor(u[:, nb:] * float(nv)).astype(np.int64)]
    mb = _medians(b)
    kept = mb != 0
    if int(kept.sum()) < method.resamples // 2:
        return None
    ratios = sorted((_medians(v)[kept] / mb[kept]).tolist())
    tail = (1 - method.level) / 2
    lo = ratios[int(math.floor(tail * (len(ratios) - 1)))]
    hi = ratios[int(math.ceil((1 - tail) * (len(ratios) - 1)))]
    return lo, hi


def _medians(rows):
    """statistics.median of each row: the middle value, or the mean of the two middle values ((a + b) / 2)."""
    import numpy as np  # (as in rank_sum_p)

    s = np.sort(rows, axis=1)
    n = s.shape[1]
    if n % 2:
        return s[:, n // 2]
    return (s[:, n // 2 - 1] + s[:, n // 2]) / 2


def compare(value: Sequence[float], baseline: Sequence[float], higher_is_better: bool | None,
            method: Method | None = None) -> Verdict:
    """The verdict on ``value`` against ``baseline`` (each the per-run values of one condition);
    ``higher_is_better`` None (a metric with no better direction): "changed" instead of better / worse."""
    method = method or Method()
    return _kept(("compare", _exact(value), _exact(baseline), higher_is_better, method),
                 lambda: _compare(value, baseline, higher_is_better, method))


def _compare(value: Sequence[float], baseline: Sequence[float], higher_is_better: bool | None,
             method: Method) -> Verdict:
    nv, nb = len(value), len(baseline)
    mv = statistics.median(value) if value else None
    mb = statistics.median(baseline) if baseline else None
    if mv is None or mb is None:
        return Verdict("too_few_runs", None, None, None, None, nv, nb, method)
    if mb == 0:
        return Verdict("no_ratio", None, None, None, None, nv, nb, method)
    ratio = mv / mb
    if nv < method.min_runs or nb < method.min_runs:
        return Verdict("too_few_runs", ratio, None, None, None, nv, nb, method)
    interval = ratio_interval(value, baseline, method)
    lo, hi = interval if interval else (None, None)
    p = rank_sum_p(value, baseline)
    kind: VerdictKind = "within_noise"
    if p <= method.alpha + 1e-12 and abs(ratio - 1) >= method.min_effect:
        if higher_is_better is None:
            kind = "changed"
        else:
            kind = "better" if (ratio > 1) == higher_is_better else "worse"
    return Verdict(kind, ratio, lo, hi, p, nv, nb, method)


def smallest_p(n_value: int, n_baseline: int) -> float:
    """The smallest two-sided p the rank-sum test can reach with these run counts (2 / C(n+m, n))."""
    return min(1.0, 2 / math.comb(n_value + n_baseline, n_value))


def method_note(lang: str, method: Method | None = None) -> str:
    """The verdict's method and parameters in words, for the note under a table and the methods section."""
    m = method or Method()
    values = {"alpha": f"{m.alpha:g}", "min_effect": f"{m.min_effect * 100:g}", "min_runs": str(m.min_runs)}
    return words.t(lang, "verdict_method", **values)
