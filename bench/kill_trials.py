#!/usr/bin/env python3
"""Kill ingests and builds at random points (SIGKILL after a random delay) and check what is left.

Ingest trials: a store holding campaign A; `tools/ingest` of campaign B is stopped at a random moment, in
turn by SIGKILL (kill -9) and by SIGINT to its process group (Ctrl-C), serial (--jobs 1) and parallel
(--jobs 2). Afterwards the store must hold exactly A or exactly A+B (counted table by table), every kept
copy under blobs/ must match its sha256, and the next ingest must complete to A+B and leave no scratch
files. A Ctrl-C must end with exit 130 and one line that tells the truth about the store ("nothing was
stored" = A, "had committed" = A+B), never a traceback, within a bounded time (no lock-up); a kill -9 must
leave no worker traceback behind.

Build trials: an output directory holding a complete site; `tools/build` into it is killed at a random
moment. Afterwards the output must be a complete site (the same files as a reference build, every raw
file matching its sha256), and the next build must succeed (no stale lock, leftovers cleaned).

    bench/kill_trials.py [--ingest N] [--build N] [--seed S] [--keep DIR]

The ingest trials cycle through (SIGKILL, serial), (SIGKILL, parallel), (SIGINT, serial), (SIGINT, parallel).

Prints, per kind, the trials, how many processes were still running when killed, and the failures, records
them with ``record()`` under bench/results/, and exits 1 when any trial failed. Real tools, real fixtures (tests/fixtures), a real DuckDB file, real Hugo.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import Figure, Load, record

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from kansoku.render.publish import MANIFEST  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"

SPEC = '''
[report]
id = "mini"
fiscal_year = 2026
title = { ja = "小さな報告", en = "A small report" }
organisation = { ja = "テスト", en = "Test" }
revision = "0.1"
copyright = "© test"
license = { ja = "テスト用", en = "for tests" }
publish_raw = true

[[chapter]]
id = "a"
title = { ja = "章 A", en = "Chapter A" }

[[chapter.table]]
id = "t"
caption = { ja = "表", en = "Table" }
metric = "tps"
where = { workload = "read" }
rows = "config"
columns = "clients"
aggregate = "median"
'''


def tool(name: str, *args, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / name), *map(str, args)], capture_output=True,
                          text=True, timeout=600)
    if check and proc.returncode != 0:
        raise RuntimeError(f"tools/{name} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc


def fingerprint(db: Path) -> dict[str, int]:
    import duckdb

    con = duckdb.connect(str(db))  # read-write: replays the WAL as the next ingest would
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema = 'main' AND table_type = 'BASE TABLE'").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in sorted(tables)
                if t != "kansoku_meta"}
    finally:
        con.close()


def blobs_ok(blobs: Path) -> list[str]:
    bad = []
    for p in blobs.rglob("*"):
        if p.is_file() and not p.name.startswith("."):
            if hashlib.sha256(p.read_bytes()).hexdigest() != p.name:
                bad.append(str(p))
    return bad


def _left_behind(d: Path, wait_s: float = 30.0) -> list[str]:
    """Scratch directories of the output left after a build returned. The replaced site is deleted in the
    background (.public.trash-*, publish._discard_replaced): it may take a moment to go, never longer. Its raw
    tree, kept for the next build (.public.raw-kept, publish.take_kept_raw), is not scratch."""
    deadline = time.monotonic() + wait_s
    while list(d.glob(".public.trash-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    return sorted(p.name for p in d.glob(".public.*-*") if p.name != ".public.raw-kept")


def site_manifest(out: Path) -> set[str]:
    """The site's files (paths below the output directory)."""
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


def kill_at(cmd: list[str], delay: float) -> bool:
    """Run cmd, SIGKILL it after delay seconds; True when it was still running."""
    return stop_at(cmd, delay, signal.SIGKILL)[0]


# A Ctrl-C must end the ingest within this many seconds (a lock-up is a failure, not a hang of the bench).
INTERRUPT_BOUND_S = 60


def stop_at(cmd: list[str], delay: float, sig: int) -> tuple[bool, int | None, str]:
    """Run cmd, send sig after delay seconds (SIGKILL to the process, SIGINT to its process group as a terminal
    does); (was still running, exit code or None when it did not end in time, its stderr)."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        running = True
        try:
            proc.wait(timeout=delay)
            running = False
        except subprocess.TimeoutExpired:
            if sig == signal.SIGKILL:
                proc.send_signal(signal.SIGKILL)
            else:
                os.killpg(proc.pid, sig)
        try:
            code = proc.wait(timeout=INTERRUPT_BOUND_S)
        except subprocess.TimeoutExpired:  # locked up: end it (and its workers) for the next trial
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        time.sleep(0.5)  # a killed ingest's workers would write their tracebacks now
        err.seek(0)
        return running, code, err.read()


def run(n_ingest: int, n_build: int, seed: int, work: Path, out=print) -> dict[str, dict[str, int]]:
    rng = random.Random(seed)
    results = {"ingest": {"trials": 0, "killed": 0, "failures": 0, "as_before": 0, "complete": 0,
                          "sigint": 0, "parallel": 0},
               "build": {"trials": 0, "killed": 0, "failures": 0}}
    # campaign A: 24 pgbench runs; campaign B: pgbench with per-transaction logs, and sar
    runs_a = work / "A"
    shutil.copytree(FIXTURES / "runs", runs_a)
    runs_b = work / "B"
    shutil.copytree(FIXTURES / "pgbench", runs_b / "pgbench")
    shutil.copytree(FIXTURES / "sar", runs_b / "sar")
    shutil.copytree(FIXTURES / "sysstat_variants", runs_b / "sysstat_variants")  # small files: a pool's work
    base = work / "base" / "kansoku.duckdb"
    tool("ingest", "--db", base, runs_a)
    state_a = fingerprint(base)
    full = work / "full" / "kansoku.duckdb"
    shutil.copytree(base.parent, full.parent)
    t0 = time.monotonic()
    tool("ingest", "--db", full, runs_b)
    t_ingest = time.monotonic() - t0
    state_ab = fingerprint(full)
    assert state_a != state_ab

    for i in range(n_ingest):
        results["ingest"]["trials"] += 1
        d = work / f"ingest-{i}"
        shutil.copytree(base.parent, d)
        db = d / "kansoku.duckdb"
        delay = rng.uniform(0, t_ingest * 1.2)
        sig = signal.SIGKILL if i % 4 < 2 else signal.SIGINT
        jobs = "1" if i % 2 == 0 else "2"
        results["ingest"]["sigint"] += sig == signal.SIGINT
        results["ingest"]["parallel"] += jobs == "2"
        killed, code, err = stop_at([sys.executable, str(ROOT / "tools" / "ingest"), "--db", str(db), "--jobs", jobs,
                                     str(runs_b)], delay, sig)
        results["ingest"]["killed"] += killed
        problems = []
        if "Traceback" in err:
            problems.append(f"a traceback: {err[-3000:]}")
        if code is None:
            problems.append(f"still running {INTERRUPT_BOUND_S} s after the signal (locked up)")
        try:
            state = fingerprint(db)
            if state not in (state_a, state_ab):
                problems.append(f"store holds neither A nor A+B: {state}")
            results["ingest"]["as_before"] += state == state_a
            results["ingest"]["complete"] += state == state_ab
            if sig == signal.SIGINT and killed and code is not None:
                said = [ln for ln in err.splitlines() if ln.strip()]
                truth = {"nothing was stored": state_a, "had committed": state_ab, "interrupted": state_a}
                claim = next((k for k in truth if len(said) == 1 and k in said[0]), None)
                if code == 130 and (claim is None or truth[claim] != state):
                    problems.append(f"the message is not the truth about the store "
                                    f"({'A' if state == state_a else 'A+B'}): {err!r}")
                elif code not in (0, 130):
                    problems.append(f"Ctrl-C ended with exit {code}: {err[-500:]}")
                elif code == 0 and state != state_ab:
                    problems.append("exit 0 but the store does not hold the ingest")
            problems += [f"kept copy does not match its name: {b}" for b in blobs_ok(d / "blobs")]
            again = tool("ingest", "--db", db, runs_b, check=False)
            if again.returncode != 0:
                problems.append(f"next ingest exited {again.returncode}: {again.stderr[-500:]}")
            elif fingerprint(db) != state_ab:
                problems.append("next ingest did not reach A+B")
            left = [p.name for p in (d / ".kansoku-scratch").rglob("*") if not p.is_dir()]
            if left:
                problems.append(f"scratch files left after the next ingest: {left}")
        except Exception as exc:  # a store that cannot be opened is a failure, not a crash of the bench
            problems.append(f"{type(exc).__name__}: {exc}")
        if problems:
            results["ingest"]["failures"] += 1
            what = f"{'kill -9' if sig == signal.SIGKILL else 'Ctrl-C'} after {delay:.2f} s, --jobs {jobs}"
            out(f"ingest trial {i} ({what}): FAILED: " + "; ".join(problems))
        shutil.rmtree(d, ignore_errors=True)

    if n_build:
        specs = work / "specs"
        specs.mkdir()
        (specs / "mini.toml").write_text(SPEC, encoding="utf-8")
        content = work / "content"
        (content / "reports").mkdir(parents=True)
        for p in (ROOT / "content").glob("_index.*.md"):
            shutil.copy(p, content)
        for p in (ROOT / "content" / "reports").glob("_index.*.md"):
            shutil.copy(p, content / "reports")
        ref = work / "ref" / "public"

        def build_cmd(o: Path) -> list[str]:
            return [sys.executable, str(ROOT / "tools" / "build"), "--db", str(full), "--out", str(o), "--specs",
                    str(specs), "--content", str(content), "--generated", str(o.parent / "generated")]

        subprocess.run(build_cmd(ref), check=True, capture_output=True)
        t0 = time.monotonic()  # the kill delays span a second (warm) build, like the trials' builds
        subprocess.run(build_cmd(ref), check=True, capture_output=True)
        t_build = time.monotonic() - t0
        ref_files = site_manifest(ref)
        raw = [f for f in ref_files if f.startswith("raw/")]
        assert raw, "the reference build published no raw files"

        for i in range(n_build):
            results["build"]["trials"] += 1
            d = work / f"build-{i}"
            o = d / "public"
            shutil.copytree(ref, o)
            delay = rng.uniform(0, t_build * 1.2)
            killed = kill_at(build_cmd(o), delay)
            results["build"]["killed"] += killed
            problems = []
            files = site_manifest(o) if o.is_dir() else set()
            if files != ref_files:
                problems.append(f"output is not a complete site: {len(ref_files - files)} files missing, "
                                f"{len(files - ref_files)} extra")
            for f in raw:
                p = o / f
                if not p.is_file():
                    continue
                if p.name == MANIFEST:  # the digests of the copies beside it: each one a stored file's
                    listed = {ln.split()[0] for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()}
                    if not listed <= _stored_shas(full):
                        problems.append(f"{f} lists a digest of no stored file")
                elif hashlib.sha256(p.read_bytes()).hexdigest() not in _stored_shas(full):
                    problems.append(f"{f} does not match a stored sha256")
            again = subprocess.run(build_cmd(o), capture_output=True, text=True)
            if again.returncode != 0:
                problems.append(f"next build exited {again.returncode}: {again.stderr[-500:]}")
            elif site_manifest(o) != ref_files:
                problems.append("next build is not a complete site")
            elif _left_behind(d):
                problems.append(f"next build left a directory behind: {_left_behind(d)}")
            if problems:
                results["build"]["failures"] += 1
                out(f"build trial {i} (kill after {delay:.2f} s): FAILED: " + "; ".join(problems))
            shutil.rmtree(d, ignore_errors=True)
    return results


_SHAS: dict[Path, set[str]] = {}


def _stored_shas(db: Path) -> set[str]:
    if db not in _SHAS:
        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        try:
            _SHAS[db] = {r[0] for r in con.execute(
                "SELECT sha256 FROM sources UNION SELECT run_toml_sha256 FROM runs").fetchall()}
        finally:
            con.close()
    return _SHAS[db]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ingest", type=int, default=20, help="ingest trials (default 20)")
    ap.add_argument("--build", type=int, default=10, help="build trials (default 10)")
    ap.add_argument("--seed", type=int, default=16, help="random seed of the kill delays (default 16)")
    ap.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it")
    args = ap.parse_args(argv)
    load = Load()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        work = args.keep
        res = run(args.ingest, args.build, args.seed, work)
    else:
        with tempfile.TemporaryDirectory(prefix="kansoku-kill-") as tmp:
            res = run(args.ingest, args.build, args.seed, Path(tmp))
    for kind, r in res.items():
        extra = (f" ({r['sigint']} by Ctrl-C, {r['parallel']} parallel; store left as before {r['as_before']}, "
                 f"with the whole ingest {r['complete']})" if kind == "ingest" else "")
        print(f"{kind}: {r['trials']} trials, {r['killed']} killed while running{extra}, {r['failures']} failures")
    record("kill_trials", [Figure(f"{kind} trials failed", r["failures"], "trials", "0", r["failures"] == 0,
                                  extra={"trials": r["trials"], "killed": r["killed"]})
                           for kind, r in res.items() if r["trials"]], load=load, raw=res)
    return 1 if any(r["failures"] for r in res.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
