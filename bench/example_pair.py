#!/usr/bin/env python3
"""The example's ingest and full build, this checkout against a reference revision, interleaved.

Both read the same measured runs (this checkout's data/runs) and each its own data/published (the transcriptions'
format moves with the code), and each builds its own specs and prose, each step in a fresh store of its own, alternating revision by revision so that both see the same
minutes of a shared machine. Records wall time, CPU time of the children (user + sys) and the load average before
each step into bench/results/example_pair-<date>.json.

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
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


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
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    ref = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.ref, capture_output=True, text=True).stdout.strip()

    def mean(rev_name: str, what: str, key: str) -> float:
        xs = [r[what][key] for r in rows if r["revision"] == rev_name]
        return sum(xs) / len(xs)
    ratios = {f"{w}_{k}": round(mean("this", w, k) / mean("reference", w, k), 3)
              for w in ("ingest", "build") for k in ("cpu_s", "wall_s")}
    out = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "this": rev, "reference": ref,
           "cpus": os.cpu_count(), "inputs": ["data/runs of this checkout", "data/published of each revision"], "rows": rows,
           "ratios_this_over_reference": ratios}
    dest = HERE / "bench" / "results" / f"example_pair-{out['date'][:10]}.json"
    dest.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(ratios), f"-> {dest.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
