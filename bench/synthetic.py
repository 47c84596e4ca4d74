#!/usr/bin/env python3
"""A synthetic benchmark campaign of N runs, written quickly from the example's real files as templates.

    python3 bench/synthetic.py DIR --runs 1000 [--seed 1]

Each run directory (``study=synthetic/workload=W/config=C/shared_buffers=S/clients=N/rep=R/``) holds what
``tools/collect`` writes for a pgbench run of the example campaign (data/runs/example):

- ``pgbench.log``: pgbench 15's stdout with -P 1 progress lines and its summary, the numbers varied per
  condition and repetition (deterministic: the same seed gives the same bytes);
- ``sar.txt``: ``sar -A`` text of the example's own sa.bin (made once with the real ``sar``), and
- ``iostat_x.txt``: the example's iostat -x output, each with a few CPU shares moved between user and idle
  time per run (:func:`own_copy`): a real campaign's runs do not share one file, and a file every run shared
  would be one stored copy hard-linked into each site past the file system's limit on links;
- ``run.toml``: the example's run.toml with this run's factors, and the server settings that follow from
  them (shared_buffers, data_checksums).

The conditions are workload (read, update) × config (checksums-off, -on) × clients (1..16) × shared_buffers
(as many values as the number of runs asks, up to 10), with at least five repetitions each. A campaign root
marker (``.kansoku-campaign``) keeps run ids independent of where the directory is. ``add_run`` writes one
more run (the bench's "one new run").
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = (ROOT / "data/runs/example/campaign=example-2026-11/study=scaleup/workload=read/config=checksums-off"
            "/clients=8/rep=2")

WORKLOADS = ("read", "update")
CONFIGS = ("checksums-off", "checksums-on")
CLIENTS = ("1", "2", "4", "8", "16")
SHARED_BUFFERS = ("128MB", "256MB", "512MB", "1GB", "2GB", "4GB", "6GB", "8GB", "12GB", "16GB")
MIN_REPS = 5
DURATION_S = 10
BASE_TPS = {"read": 650.0, "update": 420.0}


def grid(n_runs: int) -> tuple[list[dict[str, str]], int]:
    """The conditions and the repetitions for about ``n_runs`` runs."""
    base = len(WORKLOADS) * len(CONFIGS) * len(CLIENTS)
    n_sb = max(1, min(len(SHARED_BUFFERS), n_runs // (base * MIN_REPS)))
    conds = [dict(workload=w, config=c, shared_buffers=s, clients=k)
             for w, c, s, k in itertools.product(WORKLOADS, CONFIGS, SHARED_BUFFERS[:n_sb], CLIENTS)]
    reps = max(1, math.ceil(n_runs / len(conds)))
    return conds, reps


class Templates:
    """The example's files, read (and sar's text made) once."""

    def __init__(self, work: Path):
        self.run_toml = (TEMPLATE / "run.toml").read_text(encoding="utf-8")
        self.iostat = (TEMPLATE / "iostat_x.txt").read_bytes()
        sar_txt = work / "sar_A.txt"
        if not sar_txt.is_file():
            work.mkdir(parents=True, exist_ok=True)
            out = subprocess.run(["sar", "-A", "-f", str(TEMPLATE / "sa.bin")], capture_output=True, check=True,
                                 env={**os.environ, "LC_ALL": "C", "S_TIME_FORMAT": "ISO"}).stdout
            sar_txt.write_bytes(out)
        self.sar = sar_txt.read_bytes()
        m = re.search(r"^\[factors\]\n(?:.*\n)*?\n", self.run_toml, re.M)
        if not m:
            raise SystemExit(f"{TEMPLATE / 'run.toml'}: no [factors] table to replace")
        self.factors_span = m.span()


def run_dir(root: Path, factors: dict[str, str], rep: int) -> Path:
    return (root / "study=synthetic" / f"workload={factors['workload']}" / f"config={factors['config']}"
            / f"shared_buffers={factors['shared_buffers']}" / f"clients={factors['clients']}" / f"rep={rep}")


def pgbench_stdout(factors: dict[str, str], rep: int, rng: random.Random) -> str:
    clients = int(factors["clients"])
    threads = min(clients, 4)
    sb_i = SHARED_BUFFERS.index(factors["shared_buffers"])
    tps = (BASE_TPS[factors["workload"]] * clients ** 0.55 * (0.97 if factors["config"] == "checksums-on" else 1.0)
           * (1 + 0.02 * sb_i) * (1 + rng.gauss(0, 0.03)))
    lines = ["pgbench (15.18 (Debian 15.18-0+deb12u1))"]
    total = 0.0
    for s in range(1, DURATION_S + 1):
        t = tps * (0.8 if s == 1 else 1.0) * (1 + rng.gauss(0, 0.05))
        total += t
        lat = clients * 1000.0 / t
        lines.append(f"progress: {s}.0 s, {t:.1f} tps, lat {lat:.3f} ms stddev {lat * 0.4:.3f}, 0 failed")
    n_tx = int(total)
    tps_all = n_tx / DURATION_S
    lat = clients * 1000.0 / tps_all
    script = "read.sql" if factors["workload"] == "read" else "update.sql"
    lines += [
        f"transaction type: /work/main/data/runs/example/scripts/{script}",
        "scaling factor: 10",
        "query mode: simple",
        f"number of clients: {clients}",
        f"number of threads: {threads}",
        "maximum number of tries: 1",
        f"duration: {DURATION_S} s",
        f"number of transactions actually processed: {n_tx}",
        "number of failed transactions: 0 (0.000%)",
        f"latency average = {lat:.3f} ms",
        f"latency stddev = {lat * 0.45:.3f} ms",
        f"initial connection time = {rng.uniform(5, 20):.3f} ms",
        f"tps = {tps_all:.6f} (without initial connection time)",
    ]
    return "\n".join(lines) + "\n"


def run_toml(tpl: Templates, factors: dict[str, str], rep: int) -> str:
    fac = "[factors]\n" + "".join(f'{k} = "{v}"\n' for k, v in
                                  [("study", "synthetic"), *factors.items(), ("rep", str(rep))]) + "\n"
    a, b = tpl.factors_span
    text = tpl.run_toml[:a] + fac + tpl.run_toml[b:]
    text = re.sub(r'^shared_buffers = ".*"$', f'shared_buffers = "{factors["shared_buffers"]}"', text, flags=re.M)
    checksums = "on" if factors["config"] == "checksums-on" else "off"
    return re.sub(r'^data_checksums = ".*"$', f'data_checksums = "{checksums}"', text, flags=re.M)


# a CPU line: sar's "HH:MM:SS all" and its ten shares (%usr first, %idle last); iostat's avg-cpu values
# (%user first, %idle last): user and idle time can trade hundredths without the line's sum changing
_SAR_CPU_ALL = re.compile(rb"^(\d\d:\d\d:\d\d +all +)(\d+\.\d\d)((?: +\d+\.\d\d){8} +)(\d+\.\d\d)$", re.M)
_IOSTAT_CPU = re.compile(rb"^( +)(\d+\.\d\d)((?: +\d+\.\d\d){4} +)(\d+\.\d\d)$", re.M)


def own_copy(text: bytes, line: re.Pattern, rng: random.Random, lines: int = 3) -> bytes:
    """``text`` with the first ``lines`` CPU lines' user and idle shares moved by up to 0.99 each way (the
    widths kept): this run's own bytes, parsed as the template's are."""
    done = 0

    def move(m: re.Match) -> bytes:
        nonlocal done
        user, idle = float(m.group(2)), float(m.group(4))
        d = min(rng.randrange(100) / 100, idle)
        new_user, new_idle = f"{user + d:.2f}".encode(), f"{idle - d:.2f}".encode()
        if done >= lines or len(new_user) != len(m.group(2)) or len(new_idle) != len(m.group(4)):
            return m.group(0)
        done += 1
        return m.group(1) + new_user + m.group(3) + new_idle

    return line.sub(move, text)


def write_run(root: Path, tpl: Templates, factors: dict[str, str], rep: int, seed: int) -> Path:
    d = run_dir(root, factors, rep)
    d.mkdir(parents=True, exist_ok=True)
    rng = random.Random(f"{seed}/{sorted(factors.items())}/{rep}")
    (d / "pgbench.log").write_text(pgbench_stdout(factors, rep, rng), encoding="utf-8")
    (d / "run.toml").write_text(run_toml(tpl, factors, rep), encoding="utf-8")
    (d / "sar.txt").write_bytes(own_copy(tpl.sar, _SAR_CPU_ALL, rng))
    (d / "iostat_x.txt").write_bytes(own_copy(tpl.iostat, _IOSTAT_CPU, rng))
    return d


def write_campaign(root: Path, n_runs: int, seed: int = 1, work: Path | None = None) -> list[Path]:
    """Write ``n_runs`` runs under ``root`` (emptied first); returns their directories."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / ".kansoku-campaign").write_text("# synthetic campaign (bench/synthetic.py)\n", encoding="utf-8")
    tpl = Templates(work or root.parent / ".synthetic-templates")
    conds, reps = grid(n_runs)
    out = []
    for rep in range(1, reps + 1):
        for f in conds:
            if len(out) == n_runs:
                return out
            out.append(write_run(root, tpl, f, rep, seed))
    return out


def add_run(root: Path, n_runs: int, seed: int = 1, work: Path | None = None) -> Path:
    """One more repetition of the first condition (the campaign of ``n_runs`` runs must exist)."""
    conds, reps = grid(n_runs)
    rep = reps + 1
    while run_dir(root, conds[0], rep).exists():
        rep += 1
    return write_run(root, Templates(work or root.parent / ".synthetic-templates"), conds[0], rep, seed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="campaign directory to write (emptied first)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    t0 = time.monotonic()
    runs = write_campaign(args.dir, args.runs, args.seed)
    print(f"{len(runs)} runs written under {args.dir} in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
