#!/usr/bin/env python3
"""The example's ingest and full build, this checkout against a reference revision, interleaved.

Both read the same measured runs (this checkout's data/runs) and each its own data/published (the transcriptions'
format moves with the code), and each builds its own specs and prose, each step in a fresh store of its own, alternating revision by revision so that both see the same
minutes of a shared machine. Records wall time, CPU time of the children (user + sys) and the load average before
each step, and the ratios of this checkout's means to the reference's, with ``record()`` under bench/results/.

    bench/example_pair.py --ref /path/to/a/checkout/of/the/reference [--reps 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import Figure, Load, record

HERE = Path(__file__).resolve().parent.parent
CPU_A_RUN_TARGET = 0.35  # seconds of ingest CPU a run


def step(argv: list[str], cwd: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_before": round(load, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path, required=True, help="a checkout of the reference revision")
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    load = Load()
    rows = []
    for rep in range(args.reps):
        for name, root in (("this", HERE), ("reference", args.ref.resolve())):
            with tempfile.TemporaryDirectory(prefix="kansoku-pair-") as tmp:
                db = Path(tmp) / "k.duckdb"
                inputs = [str(HERE / "data" / "runs"), str(root / "data" / "published")]
                ingest = step([sys.executable, str(root / "tools" / "ingest"), "-q", "--db", str(db), *inputs], root)
                build = step([sys.executable, str(root / "tools" / "build"), "-q", "--db", str(db), "--out",
                              str(Path(tmp) / "public"), "--generated", str(Path(tmp) / "gen")], root)
            rows.append({"rep": rep + 1, "revision": name, "ingest": ingest, "build": build})
            print(json.dumps(rows[-1]), flush=True)
    ref = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.ref, capture_output=True, text=True).stdout.strip()
    runs = sum(1 for _ in (HERE / "data" / "runs").rglob("run.toml"))
    figs = figures(rows, ref, runs)
    record("example_pair", figs, load=load, raw={"reference": ref, "runs": runs, "rows": rows, "inputs": [
        "data/runs of this checkout", "data/published of each revision"]})
    return 0 if all(f.met is not False for f in figs) else 1


def figures(rows: list[dict], ref: str, runs: int) -> list[Figure]:
    """This checkout's means over the reference's, step by step, and this checkout's ingest CPU a run."""
    def mean(rev_name: str, what: str, key: str) -> float:
        xs = [r[what][key] for r in rows if r["revision"] == rev_name]
        return sum(xs) / len(xs)
    out = [Figure(f"{w} / reference, {'CPU' if k == 'cpu_s' else 'wall'}",
                  round(mean("this", w, k) / mean("reference", w, k), 3), "x", reference=f"revision {ref}")
           for w in ("ingest", "build") for k in ("cpu_s", "wall_s")]
    a_run = mean("this", "ingest", "cpu_s") / runs
    return out + [Figure("ingest CPU a run", round(a_run, 3), "s", f"<= {CPU_A_RUN_TARGET}",
                         a_run <= CPU_A_RUN_TARGET, extra={"runs": runs})]


if __name__ == "__main__":
    sys.exit(main())
