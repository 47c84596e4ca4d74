#!/usr/bin/env python3
"""Benchmark: a rebuild after one new run at 1,000 runs (target < 5 s), paired with other checkouts.

    python3 bench/rebuild_one.py --dir /tmp/rb5 [--runs 1000] [--reps 3] [--tree /work/wt/rebuild5-main ...]
    python3 bench/rebuild_one.py --example --dir /tmp/rb5-ex [--reps 3] [--tree ...]   # the example (target <= 4 s CPU)

Setup (once, kept in ``--dir``): the synthetic campaign of ``bench/campaign_build.py`` (``bench/synthetic.py``,
N runs), its store ``store-N.duckdb`` (``tools/ingest``), a copy ``store-N+1.duckdb`` with one more run
written and ingested (``synthetic.add_run``: one more repetition of the first condition), the campaign's spec
(12 tables, 12 figures) and content. Stores already there are reused as they are. ``--example``: the
checkout's example (``data/runs``, ``data/published``) ingested into ``store-0.duckdb``, and a copy
``store-1.duckdb`` with one more run (a copy of a scaleup run as a sixth repetition of its condition); the
builds use each checkout's own specs (``data/reports``) and content.

Then, per repetition and per checkout (this one first, then each ``--tree``, interleaved): an empty generated
directory and site, ``tools/build`` of that checkout on the N-run store (**full**), then on the N+1-run copy into
the same generated directory and site (**rebuild-one**); each prints its wall time, CPU (user + sys, Hugo and
every child it waited for included; the background delete of the replaced site is not waited for) and the
peak RSS of its largest process, with the load average. ``--diff``: after the last repetition, ``diff -r`` of
every checkout's site against this one's (the same store, the same site: byte for byte). A checkout whose store
schema is another (before a schema change) builds from stores of its own: the same inputs ingested by it.
``--profile DIR``: a cProfile of this checkout's rebuild-one (``DIR/rebuild-one.prof``), once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import campaign_build  # noqa: E402
import proc_tree  # noqa: E402
import synthetic  # noqa: E402
from record import Figure, Load, record  # noqa: E402


def run(tree: Path, name: str, *args: object, profile: Path | None = None) -> tuple[float, float, float, str]:
    """tools/NAME of checkout ``tree``: wall s, CPU s (user + sys, waited-for children included), peak MB, stdout."""
    cmd = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else [])
    cmd += [str(tree / "tools" / name), *map(str, args)]
    m = proc_tree.measure(cmd, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=campaign_build.tool_env())
    out = m.stdout.decode(errors="replace")
    if m.returncode != 0:
        raise SystemExit(f"{tree}/tools/{name} {' '.join(map(str, args))} failed:\n{out[-3000:]}")
    return m.wall_s, m.cpu_s, m.peak_mb, out.strip()


def setup(base: Path, n: int) -> tuple[Path, Path, Path, Path]:
    base.mkdir(parents=True, exist_ok=True)
    camp, work = base / "campaign", base / "templates"
    db0, db1 = base / f"store-{n}.duckdb", base / f"store-{n + 1}.duckdb"
    if not db0.exists():
        shutil.rmtree(camp, ignore_errors=True)
        db1.unlink(missing_ok=True)
        synthetic.write_campaign(camp, n, work=work)
        tmp = db0.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        dt, cpu, _, _ = run(ROOT, "ingest", "--db", tmp, camp)
        os.rename(tmp, db0)
        print(f"setup: {n} runs ingested into {db0} in {dt:.1f} s ({cpu:.1f} s CPU)")
    if not db1.exists():
        tmp = db1.with_suffix(".tmp")
        shutil.copyfile(db0, tmp)
        new = synthetic.add_run(camp, n, work=work)
        (base / "new-run.txt").write_text(str(new), encoding="utf-8")
        dt, cpu, _, _ = run(ROOT, "ingest", "--db", tmp, new)
        os.rename(tmp, db1)
        print(f"setup: one more run ({new.name}) ingested into {db1} in {dt:.1f} s ({cpu:.1f} s CPU)")
    specs = base / "specs"
    specs.mkdir(exist_ok=True)
    (specs / "campaign.toml").write_text(campaign_build.campaign_spec("campaign", n, 12, 12), encoding="utf-8")
    content = base / "content"
    if not content.exists():
        campaign_build.content_dir(base, "campaign")
    return db0, db1, specs, content


def inputs(base: Path, example: bool) -> tuple[list[Path], Path]:
    """What setup ingested into the first store, and the one more run of the second."""
    if example:
        return [ROOT / "data/runs", ROOT / "data/published"], base / "add"
    return [base / "campaign"], Path((base / "new-run.txt").read_text(encoding="utf-8"))


def fingerprint(tree: Path) -> str:
    """The store schema a checkout reads (a store of another schema is refused by its read-only build)."""
    return subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'tools'); "
                           "from kansoku.store.db import schema_fingerprint; print(schema_fingerprint())"],
                          cwd=tree, capture_output=True, text=True, check=True, env=campaign_build.tool_env()).stdout.strip()


def stores_of(tree: Path, base: Path, db0: Path, db1: Path, example: bool) -> tuple[Path, Path]:
    """The two stores a checkout builds from: setup's, or, when its store schema is another (a checkout before
    a schema change), the same inputs ingested by that checkout into stores of its own (kept in ``--dir``)."""
    if tree == ROOT or fingerprint(tree) == fingerprint(ROOT):
        return db0, db1
    tag = fingerprint(tree)[:12]
    own0, own1 = db0.with_name(f"{db0.stem}.{tag}.duckdb"), db1.with_name(f"{db1.stem}.{tag}.duckdb")
    first, more = inputs(base, example)
    for db, args in ((own0, first), (own1, [more])):
        if db.exists():
            continue
        tmp = db.with_suffix(".tmp")
        aside = None
        if db == own1:
            shutil.copyfile(own0, tmp)
        else:
            tmp.unlink(missing_ok=True)
            if more.is_relative_to(base / "campaign"):  # the one more run is not in the first store
                aside = base / "aside-new-run"
                shutil.rmtree(aside, ignore_errors=True)
                os.rename(more, aside)
        try:
            dt, cpu, _, _ = run(tree, "ingest", "--db", tmp, *args)
        finally:
            if aside is not None:
                os.rename(aside, more)
        os.rename(tmp, db)
        print(f"setup: {tree.name}'s own store {db.name} (another store schema) in {dt:.1f} s ({cpu:.1f} s CPU)")
    return own0, own1


EXAMPLE_RUN = "campaign=example-2026-11/study=scaleup/workload=read/config=checksums-off/clients=8"


def setup_example(base: Path) -> tuple[Path, Path, list]:
    base.mkdir(parents=True, exist_ok=True)
    db0, db1 = base / "store-0.duckdb", base / "store-1.duckdb"
    if not db0.exists():
        db1.unlink(missing_ok=True)
        tmp = db0.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        dt, cpu, _, _ = run(ROOT, "ingest", "--db", tmp, ROOT / "data/runs", ROOT / "data/published")
        os.rename(tmp, db0)
        print(f"setup: the example ingested into {db0} in {dt:.1f} s ({cpu:.1f} s CPU)")
    if not db1.exists():
        add = base / "add"
        shutil.rmtree(add, ignore_errors=True)
        src = ROOT / "data/runs/example"
        (add / EXAMPLE_RUN).mkdir(parents=True)
        shutil.copy(src / ".kansoku-campaign", add)  # the run id is the path under the campaign root
        new = add / EXAMPLE_RUN / "rep=6"
        shutil.copytree(src / EXAMPLE_RUN / "rep=5", new)
        toml = new / "run.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace('\nrep = "5"\n', '\nrep = "6"\n'), encoding="utf-8")
        tmp = db1.with_suffix(".tmp")
        shutil.copyfile(db0, tmp)
        dt, cpu, _, _ = run(ROOT, "ingest", "--db", tmp, add)
        os.rename(tmp, db1)
        print(f"setup: one more run ({EXAMPLE_RUN}/rep=6) ingested into {db1} in {dt:.1f} s ({cpu:.1f} s CPU)")
    return db0, db1, []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="setup kept here (stores, specs, content, sites)")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--example", action="store_true", help="the checkout's example instead of a campaign")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tree", type=Path, action="append", default=[], help="another checkout to pair with")
    ap.add_argument("--diff", action="store_true", help="diff -r every checkout's site against this one's")
    ap.add_argument("--profile", type=Path, help="write a cProfile of this checkout's first rebuild-one here")
    args = ap.parse_args()
    load = Load(args.dir)
    base = args.dir.resolve()
    if args.example:
        db0, db1, site = setup_example(base)
    else:
        db0, db1, specs, content = setup(base, args.runs)
        site = ["--specs", specs, "--content", content]
    trees = [ROOT] + [t.resolve() for t in args.tree]
    stores = [stores_of(tree, base, db0, db1, args.example) for tree in trees]
    results: dict[tuple[Path, str], list[tuple[float, float, float]]] = {}
    for rep in range(args.reps):
        for i, tree in enumerate(trees):
            gen, out = base / f"generated-{i}", base / f"public-{i}"
            shutil.rmtree(gen, ignore_errors=True)
            campaign_build.remove_site(out)
            common = ["--out", out, "--generated", gen, *site]
            for step, db in (("full", stores[i][0]), ("rebuild-one", stores[i][1])):
                prof = None
                if args.profile and step == "rebuild-one" and i == 0 and rep == 0:
                    args.profile.mkdir(parents=True, exist_ok=True)
                    prof = args.profile / "rebuild-one.prof"
                load = os.getloadavg()[0]
                dt, cpu, mb, msg = run(tree, "build", "--db", db, *common, profile=prof)
                results.setdefault((tree, step), []).append((dt, cpu, mb))
                last = msg.splitlines()[-1] if msg else ""
                print(f"rep {rep + 1} {tree.name:>16} {step:>12}: {dt:6.2f} s wall  {cpu:6.2f} s CPU  "
                      f"{mb:6.0f} MB  (load {load:.1f}){'' if prof is None else '  [profiled]'}  [{last}]",
                      flush=True)
    print("\nmedians (wall, CPU):")
    figures: list[Figure] = []
    size = "the example" if args.example else f"{args.runs} runs"
    for (tree, step), rows in results.items():
        walls, cpus = sorted(r[0] for r in rows), sorted(r[1] for r in rows)
        print(f"  {tree.name:>16} {step:>12}: {walls[len(walls) // 2]:6.2f} s  {cpus[len(cpus) // 2]:6.2f} s CPU   "
              f"(wall {min(walls):.2f}-{max(walls):.2f}, CPU {min(cpus):.2f}-{max(cpus):.2f})")
        ref = "" if tree == ROOT else f"checkout {tree}"
        spread = {"reps": len(rows), "min": min(walls), "max": max(walls)}
        figures += [Figure(f"{step} of {size}, wall ({tree.name})", round(walls[len(walls) // 2], 3), "s",
                           reference=ref, extra=spread),
                    Figure(f"{step} of {size}, CPU with children ({tree.name})", round(cpus[len(cpus) // 2], 3), "s",
                           reference=ref, extra={"min": min(cpus), "max": max(cpus)}),
                    Figure(f"{step} of {size}, peak RSS of the largest process ({tree.name})",
                           round(max(r[2] for r in rows), 1), "MB", reference=ref)]
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.diff:
        for i in range(1, len(trees)):
            r = subprocess.run(["diff", "-r", "-q", base / "public-0", base / f"public-{i}"],
                               capture_output=True, text=True)
            print(f"diff -r public-0 ({trees[0].name}) public-{i} ({trees[i].name}): "
                  f"{'identical' if r.returncode == 0 else 'DIFFERENT'}\n{r.stdout[:2000]}")
            figures.append(Figure(f"site identical to {trees[i].name}'s", float(r.returncode == 0), "bool",
                                  target="1", met=r.returncode == 0, reference=f"checkout {trees[i]}"))
    raw = [{"tree": str(tree), "step": step, "runs": [{"wall_s": w, "cpu_s": c, "peak_mb": m} for w, c, m in rows]}
           for (tree, step), rows in results.items()]
    record("rebuild_one", figures, raw=raw, load=load)
    return 0


if __name__ == "__main__":
    sys.exit(main())
