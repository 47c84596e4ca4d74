#!/usr/bin/env python3
"""Benchmark: how each step of the writer's loop grows with the runs: time and peak memory per size.

    python3 bench/growth.py --dir /tmp/growth [--sizes 1000,3000,10000,30000] [--reps 1] [--no-serve]

For each size, the store of ``bench/loop.py`` (1,000 runs ingested once, copied in SQL to the size: kept in
``--dir``), then the loop's steps (full build, spec item edit, new run; a prose edit, a spec item edit and a new
run under ``kansoku serve``), each with its wall time, CPU (children included) and peak memory (PSS) of the
process tree. The target past this machine's loop: the 30,000-run full build in < 4 minutes within 1.5 GB. The
results are written by ``bench/record.py`` (part ``growth``: a figure per size and step, and the ratio of each
step's time and memory at the largest size to the smallest).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import loop  # noqa: E402
from record import Figure, Load, record  # noqa: E402

BIG_RUNS, BIG_FULL_S, BIG_FULL_MB = 30000, 240.0, 1536.0  # the target at 30,000 runs
PROJECTED_RUNS = 100000  # a nightly farm's runs after years: each step projected there (projections)


def figures(by_size: dict[int, dict[str, list[dict]]]) -> list[Figure]:
    out: list[Figure] = []
    for n, rows in by_size.items():
        for step, got in rows.items():
            if step not in loop.STEPS or not got:
                continue
            wall = loop.median([r["wall_s"] for r in got])
            mb = max(r["peak_mb"] for r in got)
            big = n == BIG_RUNS and step == "full"
            out.append(Figure(f"{step} at {n} runs, wall", wall, "s",
                              target=f"< {BIG_FULL_S:g} s" if big else "", met=(wall < BIG_FULL_S) if big else None,
                              extra={"cpu_s": loop.median([r["cpu_s"] for r in got]), "reps": len(got)}))
            out.append(Figure(f"{step} at {n} runs, peak memory (PSS) of the process tree", mb, "MB",
                              target=f"< {BIG_FULL_MB:g} MB" if big else "", met=(mb < BIG_FULL_MB) if big else None))
    sizes = sorted(by_size)
    out += projections(by_size)
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        for step in loop.STEPS:
            a, b = by_size[lo].get(step), by_size[hi].get(step)
            if not a or not b:
                continue
            for what, unit in (("wall_s", "time"), ("peak_mb", "memory")):
                pick = loop.median if what == "wall_s" else max
                ratio = pick([r[what] for r in b]) / max(pick([r[what] for r in a]), 1e-9)
                out.append(Figure(f"{step}: {unit} at {hi} runs / at {lo} runs", round(ratio, 2), "x",
                                  reference=f"{hi / lo:g}x the runs"))
    return out


def projections(by_size: dict[int, dict[str, list[dict]]], to: int = PROJECTED_RUNS) -> list[Figure]:
    """Each step's time and memory at ``to`` runs, by the power law through the two largest sizes measured
    (value = a * runs ** k: k is how the step grows there, 1 for a cost proportional to the runs). A projection
    is no measurement: the figure names the sizes it comes from and its exponent."""
    sizes = sorted(by_size)
    if len(sizes) < 2 or sizes[-1] >= to:
        return []
    n1, n2 = sizes[-2:]
    out = []
    for step in loop.STEPS:
        a, b = by_size[n1].get(step), by_size[n2].get(step)
        if not a or not b:
            continue
        for what, unit, label in (("wall_s", "s", "wall"), ("peak_mb", "MB", "peak memory (PSS) of the process tree")):
            pick = loop.median if what == "wall_s" else max
            v1, v2 = pick([r[what] for r in a]), pick([r[what] for r in b])
            if v1 <= 0 or v2 <= 0:
                continue
            k = math.log(v2 / v1) / math.log(n2 / n1)
            out.append(Figure(f"{step} projected at {to} runs, {label}", round(v2 * (to / n2) ** k, 1), unit,
                              reference=f"projected from {n1} and {n2} runs",
                              extra={"exponent": round(k, 2), "from": [n1, n2], "values": [v1, v2]}))
    return out


def failure_figures(sizes: list[int], failed: dict[int, str]) -> list[Figure]:
    """One figure a size measured: 1 when a step failed at it (its error kept), 0 when every step passed, so
    that the latest run at a size says whether the steps pass there (docs/performance.md shows the latest)."""
    return [Figure(f"steps at {n} runs that failed", int(n in failed), "", target="0", met=n not in failed,
                   extra={"error": failed[n][-600:]} if n in failed else {}) for n in sizes]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, help="setup kept here, a store a size (default: a temporary directory, "
                                             "removed at the end)")
    ap.add_argument("--sizes", default="1000,3000,10000,30000", help="runs, comma-separated")
    ap.add_argument("--reps", type=int, default=1, help="repetitions of each step at each size (default 1)")
    ap.add_argument("--no-serve", action="store_true",
                    help="leave out the steps under kansoku serve (prose, spec item, new run)")
    ap.add_argument("--memory-limit", help="the builds' --memory-limit (default: the build's own default)")
    args = ap.parse_args()
    load = Load(args.dir)
    by_size: dict[int, dict[str, list[dict]]] = {}
    failed: dict[int, str] = {}
    with loop.workdir(args.dir) as base:
        for n in sorted(int(x) for x in args.sizes.split(",") if x.strip()):
            s = loop.setup(base, n)
            s.memory_limit = args.memory_limit
            print(f"== {n} runs ({s.base})", flush=True)
            try:
                by_size[n] = loop.run_steps(s, args.reps, serve=not args.no_serve)
            except SystemExit as exc:  # a step that failed at this size is a result too: kept, and the next size run
                failed[n] = str(exc)
                print(f"   failed at {n} runs: {exc}", flush=True)
    figs = figures(by_size) + failure_figures(sorted(set(by_size) | set(failed)), failed)
    for f in figs:
        print(f"{f.name:55} {f.value:9.2f} {f.unit:3} {f.target}  {'' if f.met is None else 'met' if f.met else 'MISSED'}")
    record("growth", figs, raw={"memory_limit": args.memory_limit, "failed": {str(n): e for n, e in failed.items()},
                                **{str(n): rows for n, rows in by_size.items()}}, load=load)
    return 1 if any(f.met is False for f in figs) else 0


if __name__ == "__main__":
    sys.exit(main())
