"""The bootstrap interval drawn with numpy is the pure-Python loop's, bit for bit (issue 20: a build of a hundred
tables draws millions of resamples; the verdicts must not change with the speed)."""

from __future__ import annotations

import random

from kansoku.analysis import noise


def test_vectorised_bootstrap_equals_the_loop():
    rng = random.Random(11)
    method = noise.Method()
    for trial in range(60):
        nb, nv = rng.randint(1, 40), rng.randint(1, 40)
        scale = rng.choice([1e-3, 1.0, 850.0, 1e7])
        baseline = [round(rng.uniform(0.5, 2.0) * scale, rng.choice([0, 2, 6])) or scale for _ in range(nb)]
        value = [rng.uniform(0.1, 3.0) * scale for _ in range(nv)]
        if trial % 5 == 0:  # ties, as repeated runs of a printed value have
            value = [value[0]] * nv
        assert noise.ratio_interval(value, baseline, method) == noise._ratio_interval_loop(value, baseline, method)


def test_a_baseline_with_zero_or_negative_values_takes_the_loop():
    method = noise.Method()
    for baseline in ([0.0, 1.0, 2.0], [-1.0, 1.0, 3.0, 4.0]):
        value = [1.0, 2.0, 3.0]
        assert noise.ratio_interval(value, baseline, method) == noise._ratio_interval_loop(value, baseline, method)
