#!/usr/bin/env python3
"""Check: this tree's build writes the same generated data as another revision's, and a second build with
nothing changed writes nothing.

    python3 bench/same_output.py [--rev main] [--keep DIR] [--site-only]

The revision's tree is exported (``git archive``) into a temporary directory; the repository's example
measurements (data/runs, data/published) are ingested once, with the revision's tools, into one database;
both trees build the revision's reports (data/reports: every table and figure of every report) from it (this
tree from a copy its ingest of the same runs, all unchanged, brought to its own store schema)
into their own generated directories and sites; every file under ``data/``, ``static/``, ``content/`` and
``assets/`` (the run pages' data) of the two generated directories, and every file of the two sites, is
compared byte for byte. Then this tree builds again: no generated file may be written and the output must be
the same. Exit 1 on any difference (listed); the counts are recorded with ``record()`` under bench/results/.
``--site-only``: compare the sites alone (for a revision before a
deliberate change of the generated files that must not change a page).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from record import Figure, Load, record

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ("data", "static", "content", "assets")


def export(rev: str, dest: Path) -> None:
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def run(tree: Path, name: str, *args: object) -> str:
    proc = subprocess.run([sys.executable, str(tree / "tools" / name), *map(str, args)], cwd=tree,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}/tools/{name} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout.strip()


def snapshot(gen: Path, roots: tuple[str, ...] = ROOTS) -> dict[str, tuple[str, int]]:
    """relative path -> (sha256, mtime_ns) of every generated file (``roots``: the folders to walk)."""
    out = {}
    for root in roots:
        for p in sorted((gen / root).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(gen))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


def differences(a: dict, b: dict, rev: str, prefix: str) -> list[str]:
    out = [f"{prefix}only in {rev}: {p}" for p in sorted(set(a) - set(b))]
    out += [f"{prefix}only in this tree: {p}" for p in sorted(set(b) - set(a))]
    return out + [f"{prefix}differs: {p}" for p in sorted(set(a) & set(b)) if a[p][0] != b[p][0]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default="main", help="the revision to compare with (default main)")
    ap.add_argument("--keep", type=Path, help="work here and keep everything")
    ap.add_argument("--site-only", action="store_true",
                    help="compare the two sites alone, not the generated files (a deliberate format change)")
    args = ap.parse_args()
    load = Load(args.keep)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="kansoku-same-output-"))
    try:
        base = tmp / "base"
        if not base.exists():
            export(args.rev, base)
        db = tmp / "kansoku.duckdb"
        if not db.exists():
            inputs = [base / "data" / "runs"] + ([base / "data" / "published"]
                                                 if (base / "data" / "published").is_dir() else [])
            run(base, "ingest", "--db", db, *inputs)
        common = ["--db", db, "--specs", base / "data" / "reports", "--content", base / "content"]
        # the same store as this tree reads it: a revision before a schema change made it in its layout, which
        # this tree's ingest upgrades (its rows moved, nothing else changed) in a copy
        mine = tmp / "kansoku-this-tree.duckdb"
        if not mine.exists():
            shutil.copyfile(db, mine)
            run(ROOT, "ingest", "-q", "--db", mine, base / "data" / "runs")
        mine_common = ["--db", mine, *common[2:]]
        for d in ("gen-base", "gen-new", "public-base", "public-new"):
            shutil.rmtree(tmp / d, ignore_errors=True)
        print(f"{args.rev}: " + run(base, "build", *common, "--out", tmp / "public-base", "--generated",
                                    tmp / "gen-base"))
        print("this tree: " + run(ROOT, "build", *mine_common, "--out", tmp / "public-new", "--generated",
                                  tmp / "gen-new"))
        a, b = snapshot(tmp / "gen-base"), snapshot(tmp / "gen-new")
        generated = [] if args.site_only else differences(a, b, args.rev, "")
        problems = list(generated)
        if not args.site_only:
            print(f"{len(a)} generated files compared: {len(problems)} differences")
        site = differences(snapshot(tmp / "public-base", (".",)), snapshot(tmp / "public-new", (".",)), args.rev,
                           "site: ")
        print(f"the sites: {len(site)} differences")
        problems += site
        print("this tree, again: " + run(ROOT, "build", *mine_common, "--out", tmp / "public-new", "--generated",
                                         tmp / "gen-new"))
        c = snapshot(tmp / "gen-new")
        rewritten = [p for p in c if p in b and c[p][1] != b[p][1]]
        changed = [p for p in c if p not in b or c[p][0] != b[p][0]] + [p for p in b if p not in c]
        print(f"second build: {len(rewritten)} files rewritten, {len(changed)} changed")
        problems += [f"rewritten by a build with nothing changed: {p}" for p in rewritten]
        problems += [f"changed by a build with nothing changed: {p}" for p in changed]
        for p in problems[:50]:
            print("  " + p)
        again = len(rewritten) + len(changed)
        figures = [Figure("site files differing", len(site), "files", "0", not site, f"revision {args.rev}"),
                   Figure("files written by a build with nothing changed", again, "files", "0", not again)]
        if not args.site_only:
            figures.insert(0, Figure("generated files differing", len(generated), "files", "0", not generated,
                                     f"revision {args.rev}", {"compared": len(a)}))
        record("same_output", figures, load=load, raw={"rev": args.rev, "problems": problems})
        return 1 if problems else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
