"""kansoku compare (tools/compare): two selections of runs compared condition by condition (see --help).

Exit status: 0 compared (whatever the verdicts), 2 bad selection, 3 a --metric several hosts answer without
a role (or a role a run lacks), 4 database busy, 6 a metric regressed beyond noise by at least
``--fail-above`` percent (for CI jobs).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from pathlib import Path

from kansoku.cli_options import (
    EPILOG,
    common_options,
    interruptible,
    prepare_command,
    print_error,
    print_waiting,
    site_of,
    store_options,
)
from kansoku.errors import KansokuError

EXIT_REGRESSION = 6
VERDICT_TEXT = {"better": "better", "worse": "WORSE", "changed": "changed", "within_noise": "within noise",
                "too_few_runs": "too few runs", "no_ratio": "no ratio (baseline 0)",
                "higher": "higher", "lower": "lower"}


# a metric's direction (the catalogue's, parsers.catalogue()) as the terminal table's "better" column
DIRECTION_TEXT = {"higher_is_better": "higher", "lower_is_better": "lower", "neither": "neither",
                  "unknown": "unknown"}


def _pct(r: float | None) -> str:
    return "—" if r is None else f"{(r - 1) * 100:+.1f} %"


def _spread(s) -> str:
    from kansoku.analysis.compare import num_text  # numpy, after the options (as compare_main)

    return f"{num_text(s.median)} [{num_text(s.minimum)}–{num_text(s.maximum)}] n={s.n}"


def _print_table(result, a_label: str, b_label: str, out) -> None:
    from kansoku.analysis.compare import common_condition, condition_text  # as _spread

    m = result.method
    print(f"A (baseline) = {a_label}   B = {b_label}", file=out)
    common = common_condition(result)
    if common:
        print("every condition: " + " ".join(f"{k}={v}" for k, v in sorted(common)), file=out)
    print(f"verdict: two-sided rank-sum test (exact; its normal approximation for groups too large to count) "
          f"at alpha {m.alpha:g} and a change of at least "
          f"{m.min_effect * 100:g} % (\"changed\" for a metric with no better direction); fewer than {m.min_runs} runs a side gives no verdict; "
          f"interval: {m.level * 100:g} % bootstrap of the ratio of medians", file=out)
    headers = ["metric", "better", "condition", "A median [min–max] n", "B median [min–max] n", "B/A", "interval", "verdict"]
    rows = []
    for c in result.comparisons:
        v = c.verdict
        interval = "" if v.ratio_low is None else f"{_pct(v.ratio_low)} … {_pct(v.ratio_high)}"
        rows.append([c.metric + (f" ({c.unit})" if c.unit else ""), DIRECTION_TEXT[c.direction], condition_text(c, common), _spread(c.baseline),
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
    if result.environment:
        print("", file=out)
        print(f"environment differences ({len(result.environment)}; recorded with the runs: run.toml, host.toml):",
              file=out)
        env_rows = [[(f"[{d.role}] " if d.role else "") + d.key, " | ".join(d.a), " | ".join(d.b)]
                    for d in result.environment]
        env_widths = [max(len(h), *(len(r[i]) for r in env_rows)) for i, h in enumerate(("key", "A", "B"))]
        print("  ".join(h.ljust(w) for h, w in zip(("key", "A", "B"), env_widths)), file=out)
        print("  ".join("-" * w for w in env_widths), file=out)
        for r in env_rows:
            print("  ".join(x.ljust(w) for x, w in zip(r, env_widths)), file=out)
    else:
        print("environment: no difference recorded between A's and B's runs (machine, versions, settings)", file=out)


@interruptible
def compare_main(argv: list[str] | None = None, prog: str = "kansoku compare") -> int:
    from kansoku.analysis import verdict_method as noise  # its defaults are in --help, without numpy

    ap = argparse.ArgumentParser(
        prog=prog, parents=[common_options(), store_options("database of A")],
        description="Compare two selections of runs (A, the baseline, and B) condition by condition for every "
                    "metric they share: both medians with their spread, the change B/A with its interval and a "
                    "verdict (better / worse / within noise; \"changed\" for a metric with no better direction, such as "
                    "CPU %%idle or disk KB/s). Rows lead with the primary metric (TPS, or the first --metric). "
                    "A selection is factor=value[,factor=value…] "
                    "(value lists with |; an empty string selects every run). Runs are matched on every other "
                    "factor except repetitions (rep). Example: %(prog)s config=checksums-off "
                    "config=checksums-on",
        epilog=EPILOG + ", 6 regression beyond noise (--fail-above)")
    ap.add_argument("a", help="selection A, the baseline (e.g. version=14)")
    ap.add_argument("b", help="selection B (e.g. version=15)")
    ap.add_argument("--db-b", type=Path, default=None, help="database of B, when the two campaigns were ingested apart")
    ap.add_argument("--metric", action="append", default=None, help="compare only this metric (repeatable); a metric measured per host takes its "
                         "host's role: cpu_idle_pct[server]")
    ap.add_argument("--alpha", type=float, default=noise.ALPHA, help=f"level of the test (default {noise.ALPHA})")
    ap.add_argument("--min-effect", type=float, default=noise.MIN_EFFECT * 100,
                    help=f"smallest change in percent that can be better/worse (default {noise.MIN_EFFECT * 100:g})")
    ap.add_argument("--fail-above", type=float, default=None, metavar="PCT",
                    help="exit 6 when a metric is worse beyond noise by at least PCT percent")
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    fmt.add_argument("--csv", action="store_true", help="print the comparisons as CSV")
    args = ap.parse_args(argv)
    prepare_command(args)
    from kansoku.analysis import compare as cmp  # after the options: --help, --version load no DuckDB
    from kansoku.store.db import open_store  # DuckDB, after the options
    try:
        args.db = args.db or site_of(args).db
        sel_a, sel_b = cmp.parse_selection(args.a), cmp.parse_selection(args.b)
        if not 0 < args.alpha < 1 or args.min_effect < 0:
            raise cmp.SelectionError("--alpha must be between 0 and 1 and --min-effect not negative")
        method = noise.Method(alpha=args.alpha, min_effect=args.min_effect / 100)
        if args.a == args.b and not args.db_b:
            raise cmp.SelectionError("A and B select the same runs")
        store_a = open_store(args.db, read_only=True, wait_s=args.wait, on_wait=print_waiting)
        store_b = (open_store(args.db_b, read_only=True, wait_s=args.wait, on_wait=print_waiting) if args.db_b
                   else None)
        try:
            result = cmp.select_and_compare(store_a, sel_a, sel_b, args.metric, method, store_b)
        finally:
            store_a.close()
            if store_b is not None:
                store_b.close()
    except KansokuError as exc:
        print_error(str(exc))
        return exc.exit_code
    out = sys.stdout
    if args.quiet:  # the exit status only (with --fail-above: a CI check)
        pass
    elif args.json:
        json.dump({"a": args.a, "b": args.b, "method": dataclasses.asdict(method),
                   "comparisons": cmp.records(result), "not_compared": {"a": result.only_baseline,
                                                                     "b": result.only_candidate},
                   "environment": cmp.environment_records(result)},
                  out, ensure_ascii=False, indent=1, default=float)
        print(file=out)
    elif args.csv:
        csv.writer(out).writerows(cmp.csv_rows(result))
    else:
        if not result.comparisons:
            print("no metric and condition is present in both selections", file=out)
        _print_table(result, args.a + (f" in {args.db}" if args.db_b else ""),
                     args.b + (f" in {args.db_b}" if args.db_b else ""), out)
    if args.fail_above is not None:
        bad = result.regressions(args.fail_above)
        if bad:
            print(f"{len(bad)} regression(s) beyond noise of at least {args.fail_above:g} %: "
                  + "; ".join(f"{c.metric} {cmp.condition_text(c)} {_pct(c.verdict.ratio)}" for c in bad[:5]), file=sys.stderr)
            return EXIT_REGRESSION
    return 0
