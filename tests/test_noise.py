"""Verdicts on comparisons of repeated runs (kansoku.analysis.noise), checked on synthetic runs whose
truth is known: a clear gain, a clear loss, and pure noise (the false-alarm rate)."""

import math
import random

import pytest

from kansoku.analysis import noise


def test_clear_gain_and_loss_follow_the_metric_direction():
    base = [1000.0, 1012.0, 995.0]
    faster = [1180.0, 1195.0, 1170.0]
    assert noise.compare(faster, base, higher_is_better=True).kind == "better"
    assert noise.compare(faster, base, higher_is_better=False).kind == "worse"  # e.g. latency went up
    v = noise.compare(base, faster, higher_is_better=True)
    assert v.kind == "worse" and v.ratio == pytest.approx(1000.0 / 1180.0)
    assert v.ratio_low <= v.ratio <= v.ratio_high
    assert v.p_value == pytest.approx(0.1)  # 3 against 3, ranges apart: the smallest p there is


def test_overlapping_runs_are_within_noise():
    # the example campaign's read / 2 clients: one slow run makes a 30 % spread
    off = [677.3, 894.1, 890.0]
    on = [871.0, 902.5, 885.2]
    v = noise.compare(on, off, higher_is_better=True)
    assert v.kind == "within_noise"
    assert v.ratio == pytest.approx(885.2 / 890.0)


def test_a_real_but_tiny_difference_is_within_noise():
    base = [1000.0, 1000.5, 1001.0]
    v = noise.compare([1005.0, 1005.5, 1006.0], base, higher_is_better=True)
    assert v.p_value == pytest.approx(0.1) and v.kind == "within_noise"  # 0.5 % < min_effect


def test_too_few_runs_and_zero_baseline_give_no_verdict():
    assert noise.compare([1.0, 2.0], [1.0, 1.1, 1.2], True).kind == "too_few_runs"
    assert noise.compare([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], True).kind == "no_ratio"
    assert noise.smallest_p(3, 3) == pytest.approx(0.1)
    assert noise.smallest_p(5, 5) == pytest.approx(2 / 252)


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("n", [3, 4, 5])
@pytest.mark.parametrize("dist", ["normal", "lognormal", "one-slow-run"])
def test_false_alarm_rate_on_pure_noise_is_at_most_alpha(n, dist):
    rng = random.Random(7 * n)
    method = noise.Method(resamples=50)

    def draw():
        if dist == "normal":
            return [rng.gauss(1000, 50) for _ in range(n)]
        if dist == "lognormal":
            return [1000 * math.exp(rng.gauss(0, 0.08)) for _ in range(n)]
        return [1000 * (0.7 if rng.random() < 0.2 else 1.0) * rng.uniform(0.97, 1.03) for _ in range(n)]

    trials = 1500
    alarms = sum(noise.compare(draw(), draw(), True, method).decided for _ in range(trials))
    rate = alarms / trials
    # the test is exact, so the expected rate is <= alpha; allow three standard errors of sampling
    se = math.sqrt(noise.Method().alpha * (1 - noise.Method().alpha) / trials)
    assert rate <= noise.Method().alpha + 3 * se, rate


def test_power_with_five_runs_on_a_ten_percent_gain():
    rng = random.Random(3)
    method = noise.Method(resamples=50)
    hits = sum(
        noise.compare([rng.gauss(1100, 30) for _ in range(5)], [rng.gauss(1000, 30) for _ in range(5)], True,
                      method).kind == "better"
        for _ in range(300))
    assert hits / 300 > 0.9


def test_spread_carries_the_runs():
    s = noise.spread([10068.6, 9928.0, 7710.0])
    assert (s.n, s.minimum, s.median, s.maximum) == (3, 7710.0, 9928.0, 10068.6)
    assert s.q1 is None and s.cv == pytest.approx(0.1433, abs=1e-3)
    s5 = noise.spread([1, 2, 3, 4, 5])
    assert (s5.q1, s5.q3) == (2, 4)
    with pytest.raises(ValueError):
        noise.spread([1.0, float("nan")])


def test_verdicts_are_reproducible():
    a, b = [1.0, 1.3, 1.1, 1.25], [0.9, 1.0, 0.95, 1.2]
    assert noise.compare(a, b, True) == noise.compare(a, b, True)


def _enumerated_p(a, b):
    """The rank-sum p by listing every split (the definition), with mid-ranks for ties."""
    import itertools

    pooled = list(a) + list(b)
    total, n = len(pooled), len(a)
    ranks = [(sum(x < v for x in pooled) + (sum(x <= v for x in pooled) - 1)) / 2 + 1 for v in pooled]
    expected = n * (total + 1) / 2
    observed = abs(sum(ranks[:n]) - expected)
    splits = list(itertools.combinations(range(total), n))
    return sum(abs(sum(ranks[k] for k in s) - expected) >= observed - 1e-9 for s in splits) / len(splits)


@pytest.mark.parametrize("sizes", [(3, 3), (4, 5), (5, 5), (7, 6), (10, 10)])
def test_counted_p_equals_every_split_listed(sizes):
    """The p counted by rank sum (noise.rank_sum_counts) is the p of listing every split, to the bit, with and
    without ties, up to 10 against 10 (184,756 splits)."""
    rng = random.Random(sum(sizes))
    for trial in range(6):
        pick = (lambda: rng.choice([1.0, 2.0, 2.0, 3.0, 5.0])) if trial % 2 else (lambda: rng.gauss(100, 10))
        a, b = [pick() for _ in range(sizes[0])], [pick() + (trial - 2) for _ in range(sizes[1])]
        assert noise.rank_sum_p(a, b) == _enumerated_p(a, b), (a, b)


def test_thirty_runs_against_thirty_are_counted_exactly():
    """10^17 splits: counted (no sampling); the p of two disjoint groups is the two extreme splits' share."""
    a, b = [float(i) for i in range(30)], [float(i) for i in range(100, 130)]
    assert noise.rank_sum_p(a, b) == pytest.approx(2 / math.comb(60, 30), rel=1e-12)
    assert noise.rank_sum_p([1.0] * 30, [1.0] * 30) == 1.0
    # interleaved groups: far from significant
    assert noise.rank_sum_p([float(i) for i in range(0, 60, 2)], [float(i) for i in range(1, 60, 2)]) > 0.5


def test_the_count_table_is_shared_by_comparisons_with_the_same_ranks():
    """One count table per multiset of ranks and group size (noise._rank_sum_counts): comparisons of other
    values with the same ranks reuse it, and the p of each is that of its own fresh table."""
    noise._rank_sum_counts.cache_clear()
    a, b = [float(i) for i in range(0, 40, 2)], [float(i) + 0.5 for i in range(1, 40, 2)]
    first = noise.rank_sum_p(a, b)
    shifted = noise.rank_sum_p([x * 3 + 7 for x in a], [x * 3 + 7 for x in b])  # the same ranks
    assert noise._rank_sum_counts.cache_info().hits == 1 and shifted == first
    other = noise.rank_sum_p(a[:-1] + [b[0]], b)  # a tie: other (mid-)ranks, a table of their own
    assert noise._rank_sum_counts.cache_info().misses == 2
    for p, (x, y) in ((first, (a, b)), (other, (a[:-1] + [b[0]], b))):
        pooled = sorted(x + y)
        mid2 = {v: pooled.index(v) + len(pooled) - pooled[::-1].index(v) + 1 for v in pooled}  # twice the mid-rank
        counts = noise.rank_sum_counts([mid2[v] for v in x + y], len(x))
        expected = len(x) * (len(pooled) + 1)
        observed = abs(sum(mid2[v] for v in x) - expected)
        far = [s for s in range(len(counts)) if abs(s - expected) >= observed]
        assert p == counts[far].sum() / counts.sum()
    with pytest.raises(ValueError):  # a shared table cannot be changed by one of its users
        noise._rank_sum_counts(tuple(sorted(range(2, 82, 2))), 20)[0] = 1.0


def test_kept_verdicts_and_spreads_are_given_for_the_same_values_only():
    """report/cache.py keeps a comparison's verdicts and spreads by their arguments (noise.kept_results): the
    same values get the kept result, any other values (a run added or changed, even 0.0 for -0.0) their own."""
    a, b = [1.0, 1.1, 1.2, 1.3], [2.0, 2.1, 2.2, 2.3]
    used: dict = {}
    with noise.kept_results({}, used):
        verdict, spread = noise.compare(b, a, True), noise.spread(a)
    assert verdict == noise.compare(b, a, True) and spread == noise.spread(a) and len(used) == 2
    kept = {k: ("kept", k[0]) for k in used}  # not what a computation gives: shows what is served as kept
    again: dict = {}
    with noise.kept_results(kept, again):
        assert noise.compare(b, a, True) == ("kept", "compare") and noise.spread(a) == ("kept", "spread")
        assert noise.compare(b + [2.4], a, True) == noise.compare(b + [2.4], a, True, noise.Method())
        assert noise.compare(b + [2.4], a, True) != ("kept", "compare")
        assert noise.spread(a[:3] + [1.31]) == noise._spread((1.0, 1.1, 1.2, 1.31))
    assert len(again) == 4
    with noise.kept_results({("spread", noise._exact([0.0, 1.0])): "kept"}, {}):
        assert noise.spread([-0.0, 1.0]) != "kept"



def _interval_by_choices(value, baseline, method):
    """The bootstrap interval by its definition: each resample draws the baseline's runs, then the value's, with
    ``random.Random(SEED).choices``; the interval is the percentiles of the sorted ratios of medians."""
    import statistics

    rng = random.Random(noise.SEED)
    ratios = []
    for _ in range(method.resamples):
        mb = statistics.median(rng.choices(baseline, k=len(baseline)))
        ratios.append(statistics.median(rng.choices(value, k=len(value))) / mb)
    ratios.sort()
    tail = (1 - method.level) / 2
    return ratios[int(math.floor(tail * (len(ratios) - 1)))], ratios[int(math.ceil((1 - tail) * (len(ratios) - 1)))]


def test_bootstrap_interval_draws_as_random_choices_would():
    """The resamples drawn at once with numpy are those of ``random.choices`` from the same seed, bit for bit:
    the verdicts' intervals do not depend on how they are computed."""
    rng = random.Random(11)
    method = noise.Method()
    for trial in range(60):
        nb, nv = rng.randint(1, 40), rng.randint(1, 40)
        scale = rng.choice([1e-3, 1.0, 850.0, 1e7])
        baseline = [round(rng.uniform(0.5, 2.0) * scale, rng.choice([0, 2, 6])) or scale for _ in range(nb)]
        value = [rng.uniform(0.1, 3.0) * scale for _ in range(nv)]
        if trial % 5 == 0:  # ties, as repeated runs of a printed value have
            value = [value[0]] * nv
        assert noise.ratio_interval(value, baseline, method) == _interval_by_choices(value, baseline, method)


def test_bootstrap_leaves_out_resamples_whose_baseline_median_is_zero():
    method = noise.Method()
    lo, hi = noise.ratio_interval([1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 4.0], method)
    assert 0 < lo <= hi and math.isfinite(hi)
    assert noise.ratio_interval([1.0, 2.0, 3.0], [0.0, 0.0, 1.0], method) is None  # most medians are 0


@pytest.mark.parametrize("sizes", [(40, 40), (60, 45), (30, 150)])
def test_the_normal_approximation_is_the_counted_p_where_both_groups_are_large(sizes, monkeypatch):
    """Beyond COUNT_CELLS the p is the rank sum's normal approximation (ties and continuity corrected): where
    both can be had, it is within half a percentage point of the counted p, with and without ties, from a
    clear difference to none."""
    rng = random.Random(sum(sizes))
    for trial in range(10):
        pick = (lambda: rng.choice([1.0, 2.0, 2.0, 3.0, 5.0, 8.0])) if trial % 2 else (lambda: rng.gauss(100, 10))
        shift = (trial // 2 - 2) * (2.3 if trial % 2 else 10.0) * math.sqrt(2 / min(sizes))  # z of -2 .. 2
        a, b = [pick() for _ in range(sizes[0])], [pick() + shift for _ in range(sizes[1])]
        noise._rank_sum_counts.cache_clear()
        counted = noise.rank_sum_p(a, b)
        with monkeypatch.context() as m:
            m.setattr(noise, "COUNT_CELLS", 0)
            noise._rank_sum_counts.cache_clear()
            approximated = noise.rank_sum_p(a, b)
        noise._rank_sum_counts.cache_clear()
        assert noise._rank_sum_counts(tuple(range(2, 2 * sum(sizes) + 2, 2)), min(sizes)) is not None
        assert approximated == pytest.approx(counted, abs=0.005), (trial, counted, approximated)


def test_a_comparison_too_large_to_count_is_approximated_at_once():
    """400 runs against 400: no count table (it would exceed COUNT_CELLS), a p from the normal approximation,
    the same p whichever side is given first; tied groups give 1, a shift of a fifth of the noise is found."""
    rng = random.Random(7)
    a, b = [rng.gauss(100, 10) for _ in range(400)], [rng.gauss(102, 10) for _ in range(400)]
    assert noise.rank_sum_counts(list(range(2, 1602, 2)), 400) is None
    p = noise.rank_sum_p(a, b)
    assert p < 0.05 and p == noise.rank_sum_p(b, a)
    assert noise.rank_sum_p([1.0] * 400, [1.0] * 400) == 1.0
    assert noise.rank_sum_p([float(i) for i in range(0, 800, 2)], [float(i) for i in range(1, 800, 2)]) > 0.5


def test_the_smaller_group_is_counted_and_gives_the_same_p_either_way():
    """Counting the smaller group's rank sum (a far smaller table) gives the p of counting the larger one."""
    rng = random.Random(3)
    a, b = [rng.gauss(100, 10) for _ in range(4)], [rng.gauss(104, 10) for _ in range(40)]
    p = noise.rank_sum_p(a, b)
    assert p == noise.rank_sum_p(b, a)
    ranks2 = sorted(2 * (sorted(a + b).index(v) + 1) for v in a + b)
    larger = noise.rank_sum_counts(ranks2, 40)
    import numpy as np
    expected2 = 40 * 45
    observed2 = abs(sum(2 * (sorted(a + b).index(v) + 1) for v in b) - expected2)
    far = np.abs(np.arange(len(larger)) - expected2) >= observed2
    assert p == pytest.approx(float(larger[far].sum() / larger.sum()), rel=1e-12)
