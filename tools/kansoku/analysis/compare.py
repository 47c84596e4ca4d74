"""Compare two selections of runs condition by condition, for every metric they share.

"15 against 14", "checksums on against off", "this year's machine against last year's": selection A is
the baseline, selection B the candidate. Runs are matched by *condition*: the values of every factor
except the ones that define the selections and the repetition factors (``rep``…). For each metric and
condition both sides' runs give a spread, the ratio of medians B / A with its interval, and the verdict
of :mod:`kansoku.analysis.noise` (better / worse / within noise / too few runs). The direction comes from
the metric's definition; a metric whose direction is not known (a transcribed published value) gets
"higher" / "lower" instead of better / worse.
"""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from kansoku import parsers
from kansoku.analysis import noise
from kansoku.errors import KansokuError
from kansoku.store.selection import RunValue

REPETITION_FACTORS = ("rep", "repetition", "repeat", "iteration", "trial")


class SelectionError(KansokuError):
    """A selection names a factor or value the store does not have (exit 2: bad input)."""

    exit_code = 2


def parse_selection(text: str) -> dict[str, list[str]]:
    """``"version=15,study=scaleup"`` → {"version": ["15"], "study": ["scaleup"]}; ``a=x|y`` lists values;
    an empty string selects every run."""
    out: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise SelectionError(f"selection {text!r}: expected factor=value[,factor=value…], got {part!r}")
        out.setdefault(key.strip(), []).extend(v.strip() for v in value.split("|") if v.strip())
    return out


def check_selection(selection: dict[str, list[str]], known: dict[str, set[str]], label: str) -> None:
    problems = []
    for factor, values in selection.items():
        if factor not in known:
            hint = difflib.get_close_matches(factor, list(known), n=1)
            problems.append(f"{label}: no factor {factor!r} in the database"
                            + (f" (did you mean {hint[0]!r}?)" if hint else ""))
            continue
        for v in values:
            if v not in known[factor]:
                hint = difflib.get_close_matches(v, sorted(known[factor]), n=1)
                problems.append(f"{label}: factor {factor!r} has no value {v!r}"
                                + (f" (did you mean {hint[0]!r}?)" if hint else
                                   f" (values: {', '.join(sorted(known[factor])[:8])})"))
    if problems:
        raise SelectionError("; ".join(problems))


@dataclass(frozen=True)
class Comparison:
    metric: str
    unit: str | None
    condition: tuple[tuple[str, str], ...]
    baseline: noise.Spread
    candidate: noise.Spread
    verdict: noise.Verdict
    direction: str  # "higher_is_better", "lower_is_better", "unknown"
    baseline_runs: tuple[str, ...]
    candidate_runs: tuple[str, ...]
    transcribed: bool

    @property
    def effect(self) -> float:
        """|log(ratio)|: the size of the change, symmetric for gains and losses."""
        r = self.verdict.ratio
        return abs(math.log(r)) if r and r > 0 else 0.0

    @property
    def label(self) -> str:
        """better / worse / within_noise / too_few_runs / no_ratio, or higher / lower for a metric of
        unknown direction."""
        k = self.verdict.kind
        if self.direction == "unknown" and k in ("better", "worse"):
            return "higher" if (self.verdict.ratio or 0) > 1 else "lower"
        return k


@dataclass
class CompareResult:
    comparisons: list[Comparison]
    method: noise.Method
    condition_factors: list[str]
    only_baseline: int = 0  # (metric, condition) pairs present on one side only
    only_candidate: int = 0
    skipped_metrics: list[str] = field(default_factory=list)

    def regressions(self, threshold_pct: float) -> list[Comparison]:
        """Worse beyond noise by at least ``threshold_pct`` percent (a CI job's failure)."""
        return [c for c in self.comparisons if c.label == "worse"
                and abs((c.verdict.ratio or 1) - 1) * 100 >= threshold_pct]


def _condition(factors: dict[str, str], ignore: set[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in factors.items() if k not in ignore))


def compare(baseline: Iterable[RunValue], candidate: Iterable[RunValue], selection_factors: Iterable[str],
            method: noise.Method | None = None, repetition_factors: Iterable[str] = REPETITION_FACTORS
            ) -> CompareResult:
    method = method or noise.Method()
    ignore = set(selection_factors) | set(repetition_factors)
    defs = parsers.metrics()

    def group(values: Iterable[RunValue]) -> dict[tuple, list[RunValue]]:
        out: dict[tuple, list[RunValue]] = defaultdict(list)
        for rv in values:
            out[(rv.metric, _condition(rv.factors, ignore))].append(rv)
        return out

    a, b = group(baseline), group(candidate)
    comps = []
    for key in sorted(set(a) & set(b)):
        metric, cond = key
        ra, rb = a[key], b[key]
        md = defs.get(metric)
        direction = "unknown" if md is None else ("higher_is_better" if md.higher_is_better else "lower_is_better")
        va, vb = [r.value for r in ra], [r.value for r in rb]
        verdict = noise.compare(vb, va, md.higher_is_better if md else True, method)
        comps.append(Comparison(
            metric, ra[0].unit, cond, noise.spread(va), noise.spread(vb), verdict, direction,
            tuple(r.run_id for r in ra), tuple(r.run_id for r in rb),
            any(r.origin == "transcribed" for r in ra + rb)))
    comps.sort(key=lambda c: (-c.effect, c.metric, c.condition))
    factors = sorted({k for c in comps for k, _ in c.condition})
    return CompareResult(comps, method, factors,
                         only_baseline=len(set(a) - set(b)), only_candidate=len(set(b) - set(a)))
