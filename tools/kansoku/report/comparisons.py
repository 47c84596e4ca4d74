"""The compare pages of a report (``[[compare]]`` in a spec): two selections of runs, condition by condition.

The numbers come from the code behind ``tools/compare`` (``analysis.compare.select_and_compare``), called
with the selections ``where + a`` and ``where + b``: the page and the terminal cannot disagree (a test
compares the page's rows with ``tools/compare --json``). This module only adds what a page prints: the
report's names of metrics, factors and values, the numbers as text in both languages, the legend.
"""

from __future__ import annotations

import shlex

from kansoku import words
from kansoku.analysis import compare as cmp
from kansoku.analysis import noise
from kansoku.analysis import tables as analysis
from kansoku.errors import SpecError
from kansoku.model import CompareEnvironment, CompareRow, CompareSide, Comparison, Words
from kansoku.spec.model import LANGS, CompareSpec, Report
from kansoku.store.db import Store

# the noise-aware verdict as the flag of table cells (their symbols, fills and legend; analysis/tables.py)
FLAGS = {"better": "better", "worse": "worse", "changed": "changed", "within_noise": "within-noise",
         "too_few_runs": "too-few-runs",
         "no_ratio": "too-few-runs"}


def _both(f) -> Words:
    return {lang: f(lang) for lang in LANGS}


def _change(pct: float | None, lang: str) -> str:
    if pct is None:
        return "—"
    return analysis.fmt_printed(f"{pct:+.1f}", "change", lang)


def _side(s: noise.Spread, runs: tuple[str, ...]) -> CompareSide:
    text = _both(lambda lang: words.t(lang, "compare_spread", median=cmp.num_text(s.median),
                                      min=cmp.num_text(s.minimum), max=cmp.num_text(s.maximum), n=s.n))
    return CompareSide(s.median, s.minimum, s.maximum, s.n, list(s.values), list(runs), text)


def _selection_label(report: Report, sel: dict[str, list[str]]) -> Words:
    return _both(lambda lang: ", ".join(
        " | ".join(analysis.factor_value_label(report, f, v, lang) for v in vals) for f, vals in sel.items()))


def command(spec: CompareSpec) -> str:
    """The same comparison on the terminal."""
    def arg(sel: dict[str, list[str]]) -> str:
        return ",".join(f"{k}={'|'.join(v)}" for k, v in sel.items())

    argv = ["tools/compare", arg(spec.selection("a")), arg(spec.selection("b"))]
    for m in spec.metrics or []:
        argv += ["--metric", m]
    return shlex.join(argv)


def compute_comparison(store: Store, report: Report, spec: CompareSpec) -> Comparison:
    method = noise.Method()
    try:
        result = cmp.select_and_compare(store, spec.selection("a"), spec.selection("b"), spec.metrics, method,
                                        scope=report.scope)
    except cmp.SelectionError as exc:  # names checked by spec/validate.py first; a store changed since
        raise SpecError(report.spec_file, f"compare {spec.id!r}", str(exc)) from None
    except cmp.MetricChoiceError as exc:  # hosts checked by the preflight first (analysis/spec_check.py)
        raise SpecError(report.spec_file, f"compare {spec.id!r} metrics", str(exc).removeprefix("--metric ")) from None
    common = cmp.common_condition(result)
    varying = sorted({k for c in result.comparisons for k, v in c.condition if (k, v) not in common},
                     key=lambda f: (f not in report.factor_names, f))
    rows = []
    for c in result.comparisons:
        v = c.verdict
        cond = dict(c.condition)
        interval = _both(lambda lang: "" if v.ratio_low is None else words.t(
            lang, "compare_interval", lo=_change(cmp.change_pct(v.ratio_low), lang),
            hi=_change(cmp.change_pct(v.ratio_high), lang)))
        rows.append(CompareRow(
            metric=c.metric, unit=c.unit, condition=cond, a=_side(c.baseline, c.baseline_runs),
            b=_side(c.candidate, c.candidate_runs), ratio=v.ratio, ratio_low=v.ratio_low, ratio_high=v.ratio_high,
            p_value=v.p_value, verdict=c.label, direction=c.direction, transcribed=c.transcribed,
            flag=FLAGS.get(c.label),
            metric_label=_both(lambda lang: analysis.metric_label(c.metric, lang, report=report)),
            values=[_both(lambda lang: analysis.factor_value_label(report, f, cond[f], lang) if f in cond else "—")
                    for f in varying],
            change=_both(lambda lang: _change(cmp.change_pct(v.ratio), lang)), interval=interval,
            verdict_text=words.both(f"verdict_{c.label}")))
    # the where factors are not conditions (the selections name them) but every row shares them too
    shared = [(f, vals[0]) for f, vals in spec.where.items() if len(vals) == 1]
    shared += sorted(common, key=lambda kv: (kv[0] not in report.factor_names, kv[0]))
    # the second sentence brings its own separator (a space in English, none after a Japanese full stop)
    method_note = _both(lambda lang: noise.method_note(lang, method) + words.t(
        lang, "compare_interval_method", level=f"{method.level * 100:g}", resamples=method.resamples))
    runs = sorted({r for row in rows for r in row.a.runs + row.b.runs})
    return Comparison(
        id=spec.id, page=spec.page_id, title=spec.title.as_dict(),
        footnote=spec.footnote.as_dict() if spec.footnote else None,
        a_label=_selection_label(report, spec.a), b_label=_selection_label(report, spec.b),
        selections=command(spec),
        common=[(_both(lambda lang: analysis.factor_name(report, f, lang)),
                 _both(lambda lang: analysis.factor_value_label(report, f, v, lang))) for f, v in shared],
        factors=[_both(lambda lang: analysis.factor_name(report, f, lang)) for f in varying],
        rows=rows, method=method_note, marks=sorted({r.flag for r in rows if r.flag}),
        not_compared={"a": result.only_baseline, "b": result.only_candidate},
        csv=cmp.csv_rows(result), runs=runs,
        environment=[CompareEnvironment(role=_both(lambda lang: analysis.role_label(d.role, lang)) if d.role else None,
                                        key=d.key, a=list(d.a), b=list(d.b)) for d in result.environment])
