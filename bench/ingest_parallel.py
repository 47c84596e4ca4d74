#!/usr/bin/env python3
"""Benchmark: ingest of a campaign of many run directories, one process vs every core.

    python3 bench/ingest_parallel.py [--runs 1000] [--reps 3] [--jobs N] [--keep DIR] [--tree CHECKOUT]

The campaign is made of the real runs of the corpus (``corpus/real/study=scaleup``: pgbench stdout and
four -l logs, the sa file and its sar / sadf -d / sadf -j renderings, iostat, vmstat, run.toml; a
dozen files per run), hard-linked ``--runs`` times under ``copy=N/`` directories (each copy
is a run of its own). Then, in this one run and interleaved, each in its own process and into a fresh
database: ``tools/ingest --jobs 1`` and ``tools/ingest --jobs N`` (N = every core by default). Prints the
medians, the speed-up, and whether the parallel ingest meets its target (a 1,000-run campaign in under 2
minutes, scaled to --runs), and records them with ``record()`` under bench/results/. ``--tree``: each
repetition also runs that checkout's ``tools/ingest --jobs N`` on the same campaign, interleaved, and the
figures say this one's wall and CPU over it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import Figure, Load, record

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("KANSOKU_CORPUS", ROOT.parent / "shared" / "corpus"))
TARGET_S_PER_1000 = 120.0


def _corpus() -> Path:
    for c in (CORPUS, Path("/work/shared/corpus")):
        if (c / "real" / "study=scaleup").is_dir():
            return c
    raise SystemExit("corpus not found (set KANSOKU_CORPUS to the directory holding real/study=scaleup)")


def make_campaign(dest: Path, runs: int) -> int:
    """``runs`` run directories (hard links to the corpus's real runs); the number of files."""
    sources = sorted({p.parent for p in (_corpus() / "real" / "study=scaleup").rglob("run.toml")})
    if not sources:
        raise SystemExit("no real runs in the corpus")
    (dest / ".kansoku-campaign").parent.mkdir(parents=True, exist_ok=True)
    (dest / ".kansoku-campaign").write_text("")
    files = 0
    for i in range(runs):
        src = sources[i % len(sources)]
        run = dest / f"copy={i // len(sources)}" / src.relative_to(src.parents[4])
        run.mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():
            if f.is_file():
                target = run / f.name
                if not target.exists():
                    try:
                        os.link(f, target)
                    except OSError:  # another file system: a copy
                        shutil.copy2(f, target)
                files += 1
    return files


def measure(campaign: Path, work: Path, jobs: int, tree: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU seconds of one ``tools/ingest`` of checkout ``tree`` (its children, the workers and sadf,
    included)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(tree / "tools" / "ingest"), "--db", str(work / "k.duckdb"),
                             "--jobs", str(jobs), str(campaign)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"ingest --jobs {jobs} failed: {err[-2000:]}")
    shutil.rmtree(work, ignore_errors=True)
    # wait4 gives the ingest's rusage with its children's that it waited for (the workers, sadf)
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000, help="run directories in the campaign (default 1000)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each measurement (median reported)")
    ap.add_argument("--jobs", type=int, default=0, help="workers of the parallel ingest (default: every core)")
    ap.add_argument("--keep", type=Path, help="work in this directory and keep the campaign")
    ap.add_argument("--tree", type=Path, metavar="CHECKOUT",
                    help="pair the --jobs N ingest with this checkout's, interleaved in each repetition")
    args = ap.parse_args(argv)
    load = Load()
    jobs = args.jobs or len(os.sched_getaffinity(0))

    work = args.keep or Path(tempfile.mkdtemp(prefix="kansoku-bench-par-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        campaign = work / "campaign"
        t = time.perf_counter()
        files = make_campaign(campaign, args.runs)
        print(f"campaign: {campaign} ({args.runs:,} runs, {files:,} files), made in {time.perf_counter() - t:.1f} s")
        print(f"machine: {os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable), python {sys.version.split()[0]}",
              flush=True)
        times: dict[int, list[float]] = {1: [], jobs: []}
        cpus: dict[int, list[float]] = {1: [], jobs: []}
        ref_times: list[float] = []
        ref_cpus: list[float] = []
        loads: list[float] = [os.getloadavg()[0]]
        for rep in range(args.reps):
            runs = [(j, ROOT) for j in times] + ([(jobs, args.tree.resolve())] if args.tree else [])
            for j, tree in runs if rep % 2 == 0 else [runs[0], *reversed(runs[1:])]:  # (which goes first alternates)
                wall, cpu = measure(campaign, work / "db", j, tree)
                (times[j] if tree == ROOT else ref_times).append(wall)
                (cpus[j] if tree == ROOT else ref_cpus).append(cpu)
                loads.append(os.getloadavg()[0])
                who = "" if tree == ROOT else f" ({tree.name})"
                print(f"  rep {rep + 1}: --jobs {j:<3d}{who} {wall:8.2f} s wall {cpu:8.2f} s CPU "
                      f"(load {loads[-1]:.2f})", flush=True)
        med = {j: statistics.median(v) for j, v in times.items()}
        cpu_med = {j: statistics.median(v) for j, v in cpus.items()}
        target = TARGET_S_PER_1000 * args.runs / 1000
        print()
        for j, label in ((1, "1 process"), (jobs, f"{jobs} workers")):
            print(f"ingest, {label:9s}: {med[j]:8.2f} s wall (median), {med[j] / args.runs * 1000:.1f} ms per run; "
                  f"{cpu_med[j]:.2f} s CPU (user+sys with children), {cpu_med[j] / args.runs * 1000:.0f} ms per run")
        print(f"load average: {min(loads):.2f} .. {max(loads):.2f} on {os.cpu_count()} CPUs")
        print(f"speed-up: {med[1] / med[jobs]:.2f}x on {jobs} workers")
        ok = med[jobs] <= target
        print(f"parallel ingest of {args.runs:,} runs: {med[jobs]:.1f} s (target < {target:.0f} s: "
              f"{'meets' if ok else 'MISSES'})")
        per_run = {"runs": args.runs, "jobs": jobs}
        paired: list[Figure] = []
        if args.tree:
            rev = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "--short=8", "HEAD"], capture_output=True,
                                 text=True).stdout.strip() or str(args.tree)
            ref_wall, ref_cpu = statistics.median(ref_times), statistics.median(ref_cpus)
            print(f"--jobs {jobs} / {rev}: {med[jobs] / ref_wall:.2f}x wall ({ref_wall:.2f} s), "
                  f"{cpu_med[jobs] / ref_cpu:.2f}x CPU ({ref_cpu:.2f} s)")
            paired = [Figure(f"ingest, --jobs {jobs} / reference, wall", round(med[jobs] / ref_wall, 3), "x",
                             reference=f"revision {rev}", extra={**per_run, "reference_s": round(ref_wall, 2)}),
                      Figure(f"ingest, --jobs {jobs} / reference, CPU", round(cpu_med[jobs] / ref_cpu, 3), "x",
                             reference=f"revision {rev}", extra={**per_run, "reference_s": round(ref_cpu, 2)})]
        record("ingest_parallel", [*paired,
            Figure(f"ingest, --jobs {jobs}, wall", round(med[jobs], 1), "s", f"< {target:g}", ok, extra=per_run),
            Figure(f"ingest, --jobs {jobs}, wall a run", round(med[jobs] / args.runs * 1000, 1), "ms",
                   f"< {TARGET_S_PER_1000:.0f}", ok, extra=per_run),
            Figure(f"ingest, --jobs {jobs}, CPU", round(cpu_med[jobs], 1), "s", extra=per_run),
            Figure("ingest, --jobs 1, wall", round(med[1], 1), "s", extra=per_run),
            Figure(f"speed-up of --jobs {jobs}", round(med[1] / med[jobs], 2), "x", reference="tools/ingest --jobs 1",
                   extra=per_run),
        ], load=load, raw={"runs": args.runs, "files": files, "jobs": jobs, "loads": [round(x, 2) for x in loads],
                           "wall_s": {str(j): v for j, v in times.items()},
                           "cpu_s": {str(j): v for j, v in cpus.items()},
                           "reference": {"tree": str(args.tree), "wall_s": ref_times, "cpu_s": ref_cpus}
                           if args.tree else None})
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
