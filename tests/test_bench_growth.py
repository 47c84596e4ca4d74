"""bench/growth.py: each step projected past the sizes measured, by the power law through the two largest."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import growth  # noqa: E402


def _step(wall: float, mb: float) -> list[dict]:
    return [{"wall_s": wall, "cpu_s": wall, "peak_mb": mb}]


def test_a_step_is_projected_through_the_two_largest_sizes():
    """Time proportional to the runs (exponent 1) and memory flat (exponent 0) between the two largest sizes
    project so to 100,000 runs; the smallest size takes no part."""
    by_size = {1000: {"full": _step(1.0, 10.0)}, 3000: {"full": _step(30.0, 300.0)},
               30000: {"full": _step(300.0, 300.0)}}
    got = {f.name: f for f in growth.projections(by_size)}
    wall = got["full projected at 100000 runs, wall"]
    mem = got["full projected at 100000 runs, peak memory (PSS) of the process tree"]
    assert wall.value == pytest.approx(1000.0) and wall.extra["exponent"] == 1.0
    assert wall.extra["from"] == [3000, 30000] and wall.reference == "projected from 3000 and 30000 runs"
    assert mem.value == pytest.approx(300.0) and mem.extra["exponent"] == 0.0


def test_nothing_is_projected_from_one_size_or_past_the_sizes_measured():
    assert growth.projections({10000: {"full": _step(60.0, 900.0)}}) == []
    assert growth.projections({1000: {"full": _step(6.0, 90.0)}, 100000: {"full": _step(600.0, 900.0)}}) == []


def test_each_size_says_whether_a_step_failed_there():
    """A size whose steps all passed gives 0 (met), a failed one 1 with its error: a later passing run replaces
    an earlier failure on the performance page."""
    figs = growth.failure_figures([10000, 30000], {30000: "x" * 700 + "out of memory"})
    assert [(f.name, f.value, f.met) for f in figs] == [("steps at 10000 runs that failed", 0, True),
                                                         ("steps at 30000 runs that failed", 1, False)]
    assert figs[0].extra == {} and figs[1].extra["error"].endswith("out of memory") and len(figs[1].extra["error"]) == 600
