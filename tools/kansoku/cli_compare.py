"""tools/compare: two selections of runs compared condition by condition (see --help).

Exit status: 0 compared (whatever the verdicts), 2 bad selection, 4 database busy, 6 a metric regressed
beyond noise by at least ``--fail-above`` percent (for CI jobs).
"""

from __future__ import annotations

import argparse
import dataclasses
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

from kansoku.errors import KansokuError

EXIT_REGRESSION = 6
VERDICT_TEXT = {"better": "better", "worse": "WORSE", "within_noise": "within noise",
                "too_few_runs": "too few runs", "no_ratio": "no ratio (baseline 0)",
                "higher": "higher", "lower": "lower"}


def _num(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "—"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    return f"{v:.4g}"


def _pct(r: float | None) -> str:
    return "—" if r is None else f"{(r - 1) * 100:+.1f} %"


def _cond(c, common: frozenset = frozenset()) -> str:
    return " ".join(f"{k}={v}" for k, v in c.condition if (k, v) not in common) or "(all)"


def _common(result) -> frozenset:
    """Factor values shared by every compared condition: said once above the table, not on every row."""
    conds = [set(c.condition) for c in result.comparisons]
    return frozenset(set.intersection(*conds)) if len(conds) > 1 else frozenset()


def _spread(s) -> str:
    return f"{_num(s.median)} [{_num(s.minimum)}–{_num(s.maximum)}] n={s.n}"


def _records(result) -> list[dict[str, Any]]:
    out = []
    for c in result.comparisons:
        v = c.verdict
        out.append({
            "metric": c.metric, "unit": c.unit, "condition": dict(c.condition),
            "baseline": {"median": c.baseline.median, "min": c.baseline.minimum, "max": c.baseline.maximum,
                         "n": c.baseline.n, "values": list(c.baseline.values), "runs": list(c.baseline_runs)},
            "candidate": {"median": c.candidate.median, "min": c.candidate.minimum, "max": c.candidate.maximum,
                          "n": c.candidate.n, "values": list(c.candidate.values), "runs": list(c.candidate_runs)},
            "ratio": v.ratio, "ratio_interval": [v.ratio_low, v.ratio_high], "p_value": v.p_value,
            "verdict": c.label, "direction": c.direction, "transcribed": c.transcribed,
        })
    return out


def _print_table(result, a_label: str, b_label: str, out) -> None:
    m = result.method
    print(f"A (baseline) = {a_label}   B = {b_label}", file=out)
    common = _common(result)
    if common:
        print("every condition: " + " ".join(f"{k}={v}" for k, v in sorted(common)), file=out)
    print(f"verdict: exact two-sided rank-sum test at alpha {m.alpha:g} and a change of at least "
          f"{m.min_effect * 100:g} %; fewer than {m.min_runs} runs a side gives no verdict; "
          f"interval: {m.level * 100:g} % bootstrap of the ratio of medians", file=out)
    headers = ["metric", "condition", "A median [min–max] n", "B median [min–max] n", "B/A", "interval", "verdict"]
    rows = []
    for c in result.comparisons:
        v = c.verdict
        interval = "" if v.ratio_low is None else f"{_pct(v.ratio_low)} … {_pct(v.ratio_high)}"
        rows.append([c.metric + (f" ({c.unit})" if c.unit else ""), _cond(c, common), _spread(c.baseline),
                     _spread(c.candidate), _pct(v.ratio), interval,
                     VERDICT_TEXT[c.label] + (" (transcribed)" if c.transcribed else "")])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths)), file=out)
    counts: dict[str, int] = {}
    for c in result.comparisons:
        counts[c.label] = counts.get(c.label, 0) + 1
    summary = ", ".join(f"{n} {VERDICT_TEXT[k]}" for k, n in sorted(counts.items()))
    print(f"{len(result.comparisons)} comparisons: {summary or 'none'}", file=out)
    if result.only_baseline or result.only_candidate:
        print(f"not compared (a condition on one side only): {result.only_baseline} in A, "
              f"{result.only_candidate} in B", file=out)


def compare_main(argv: list[str] | None = None) -> int:
    from kansoku.analysis import compare as cmp
    from kansoku.analysis import noise
    from kansoku.cli import EPILOG, REPO, _err, _prepare_command
    from kansoku.store.db import DEFAULT_DB, open_store
    from kansoku.store.selection import factor_values, metric_values

    ap = argparse.ArgumentParser(
        prog="tools/compare",
        description="Compare two selections of runs (A, the baseline, and B) condition by condition for every "
                    "metric they share: both medians with their spread, the change B/A with its interval and a "
                    "verdict (better / worse / within noise). A selection is factor=value[,factor=value…] "
                    "(value lists with |; an empty string selects every run). Runs are matched on every other "
                    "factor except repetitions (rep). Example: tools/compare config=checksums-off "
                    "config=checksums-on",
        epilog=EPILOG + ", 6 regression beyond noise (--fail-above)")
    ap.add_argument("a", help="selection A, the baseline (e.g. version=14)")
    ap.add_argument("b", help="selection B (e.g. version=15)")
    ap.add_argument("--db", type=Path, default=REPO / DEFAULT_DB, help=f"database of A (default {DEFAULT_DB})")
    ap.add_argument("--db-b", type=Path, default=None, help="database of B, when the two campaigns were ingested apart")
    ap.add_argument("--metric", action="append", default=None, help="compare only this metric (repeatable)")
    ap.add_argument("--alpha", type=float, default=noise.ALPHA, help=f"level of the test (default {noise.ALPHA})")
    ap.add_argument("--min-effect", type=float, default=noise.MIN_EFFECT * 100,
                    help=f"smallest change in percent that can be better/worse (default {noise.MIN_EFFECT * 100:g})")
    ap.add_argument("--fail-above", type=float, default=None, metavar="PCT",
                    help="exit 6 when a metric is worse beyond noise by at least PCT percent")
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    fmt.add_argument("--csv", action="store_true", help="print the comparisons as CSV")
    args = ap.parse_args(argv)
    _prepare_command(args)
    try:
        sel_a, sel_b = cmp.parse_selection(args.a), cmp.parse_selection(args.b)
        if not 0 < args.alpha < 1 or args.min_effect < 0:
            raise cmp.SelectionError("--alpha must be between 0 and 1 and --min-effect not negative")
        method = noise.Method(alpha=args.alpha, min_effect=args.min_effect / 100)
        store_a = open_store(args.db, read_only=True)
        store_b = open_store(args.db_b, read_only=True) if args.db_b else store_a
        try:
            problems = []
            for sel, st, label in ((sel_a, store_a, "A"), (sel_b, store_b, "B")):
                try:
                    cmp.check_selection(sel, factor_values(st), label)
                except cmp.SelectionError as exc:
                    problems.append(str(exc))
            if problems:
                raise cmp.SelectionError("; ".join(problems))
            values_a = metric_values(store_a, sel_a, args.metric)
            values_b = metric_values(store_b, sel_b, args.metric)
        finally:
            store_a.close()
            if store_b is not store_a:
                store_b.close()
        if args.a == args.b and not args.db_b:
            raise cmp.SelectionError("A and B select the same runs")
        result = cmp.compare(values_a, values_b, set(sel_a) | set(sel_b), method)
    except KansokuError as exc:
        _err(str(exc))
        return exc.exit_code
    out = sys.stdout
    if args.json:
        json.dump({"a": args.a, "b": args.b, "method": dataclasses.asdict(method),
                   "comparisons": _records(result), "not_compared": {"a": result.only_baseline,
                                                                     "b": result.only_candidate}},
                  out, ensure_ascii=False, indent=1, default=float)
        print(file=out)
    elif args.csv:
        w = csv.writer(out)
        w.writerow(["metric", "unit", "condition", "a_median", "a_min", "a_max", "a_n", "b_median", "b_min",
                    "b_max", "b_n", "ratio", "ratio_low", "ratio_high", "p_value", "verdict"])
        for c in result.comparisons:
            v = c.verdict
            w.writerow([c.metric, c.unit or "", _cond(c), repr(c.baseline.median), repr(c.baseline.minimum),
                        repr(c.baseline.maximum), c.baseline.n, repr(c.candidate.median),
                        repr(c.candidate.minimum), repr(c.candidate.maximum), c.candidate.n,
                        "" if v.ratio is None else repr(v.ratio), "" if v.ratio_low is None else repr(v.ratio_low),
                        "" if v.ratio_high is None else repr(v.ratio_high),
                        "" if v.p_value is None else repr(v.p_value), c.label])
    else:
        if not result.comparisons:
            print("no metric and condition is present in both selections", file=out)
        _print_table(result, args.a + (f" in {args.db}" if args.db_b else ""),
                     args.b + (f" in {args.db_b}" if args.db_b else ""), out)
    if args.fail_above is not None:
        bad = result.regressions(args.fail_above)
        if bad:
            print(f"{len(bad)} regression(s) beyond noise of at least {args.fail_above:g} %: "
                  + "; ".join(f"{c.metric} {_cond(c)} {_pct(c.verdict.ratio)}" for c in bad[:5]), file=sys.stderr)
            return EXIT_REGRESSION
    return 0
