#!/usr/bin/env python3
"""Benchmark: the writer's loop at N runs: a full build, a spec item edit, a new run, then a prose edit, a spec item
edit and a new run under serve.

    python3 bench/loop.py --runs 10000 --dir /tmp/loop10k [--reps 3] [--no-serve] [--profile DIR] [--tree CHECKOUT]

Setup (once, kept in ``--dir``): the synthetic campaign of ``bench/campaign_build.py``, 1,000 runs (or N when
N < 1,000) written and ingested, its store copied to N runs in SQL (``campaign_build.replicate_store``), the
campaign's spec (12 tables, 12 figures) and content, and a site directory for ``kansoku serve``. A store already
there is reused, brought to this kansoku's schema first (as ``tools/ingest`` brings a user's store).

Then, per repetition, each step as a user runs it (kansoku's bytecode kept, as an installed package keeps it:
``campaign_build.tool_env``), with its wall time, CPU (user + sys, Hugo and every child
included) and peak memory of the whole process tree (its processes' PSS summed, sampled: bench/proc_tree.py) — the targets at 10,000 runs:

1. **full build**: ``tools/build`` from an empty generated directory and site (< 60 s, < 1 GB);
2. **spec item edit**: one table's caption changed in the spec, ``tools/build`` (< 3 s);
3. **new run**: one more run written and ingested (not counted), ``tools/build`` (< 5 s);
4. **prose edit**: ``kansoku serve`` on the built data; a sentence written into the report's cover, timed until
   the page served holds it (< 1 s), ``PROSE_EDITS`` times a repetition. Its CPU is the serve tree's (kansoku
   and Hugo's server) over that time.
5. **spec item edit under serve**: in the same ``kansoku serve``, one table's caption changed in the spec, timed
   until its chapter's page served holds it (the writer's loop; the target of step 2, < 3 s);
6. **new run under serve**: in the same ``kansoku serve``, one more run written and ingested (not counted), timed
   from the ingest's end until the run's page served holds its id (the target of step 3, < 5 s).

``--tree CHECKOUT`` (repeatable): each step is also run by that checkout's ``tools/build`` on the same store,
specs and content (a site of its own), interleaved with this one's repetition by repetition, and the steps under
serve by that checkout's ``kansoku serve`` after this one's; the figures add each step's median over the other
checkout's (``... / reference``, wall and CPU).

The results are written by ``bench/record.py`` (part ``loop``); the exit status is 1 when a target is missed at
10,000 runs. ``bench/growth.py`` runs the same steps at several sizes.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import campaign_build  # noqa: E402
import proc_tree  # noqa: E402
import synthetic  # noqa: E402
from record import Figure, Load, record  # noqa: E402

INGESTED = 1000  # runs ingested; a larger store is this one's runs copied (campaign_build.replicate_store)
TARGET_RUNS = 10000
# the targets at 10,000 runs on 2 cores: seconds (and the full build's MB, Hugo included)
PROSE_EDITS = 3  # prose edits a repetition (each costs about a second)
TARGETS = {"full": 60.0, "spec_item": 3.0, "new_run": 5.0, "prose": 1.0, "spec_serve": 3.0, "new_run_serve": 5.0}
TARGET_FULL_MB = 1024.0
STEPS = tuple(TARGETS)
# `kansoku` of a checkout (the installed command may be another's)
def kansoku_code(tree: Path = ROOT) -> str:
    """``python3 -c`` code that runs ``kansoku`` from checkout ``tree`` (its own code first on sys.path)."""
    return f"import sys; sys.path.insert(0, {str(tree / 'tools')!r}); from kansoku.cli import main; sys.exit(main())"


@dataclass
class Setup:
    base: Path
    n: int
    db: Path
    camp: Path
    specs: Path
    content: Path
    site: Path
    memory_limit: str | None = None  # the builds' --memory-limit (None: the default a user gets)
    tree: Path = ROOT  # the checkout whose tools/build builds it (--tree: another one, paired)

    @property
    def generated(self) -> Path:
        return self.site / "data" / "generated"  # where kansoku serve looks for it

    @property
    def out(self) -> Path:
        return self.site / "public"

    def build_args(self) -> list:
        return ["--db", self.db, "--out", self.out, "--specs", self.specs, "--generated", self.generated,
                "--content", self.content] + (["--memory-limit", self.memory_limit] if self.memory_limit else [])


def base_store(base: Path, n_ingest: int) -> tuple[Path, Path]:
    """The ingested campaign of ``n_ingest`` runs and its store (made once, kept in ``base``)."""
    camp, db = base / f"campaign-{n_ingest}", base / f"ingested-{n_ingest}.duckdb"
    if not db.exists():
        shutil.rmtree(camp, ignore_errors=True)
        synthetic.write_campaign(camp, n_ingest, work=base / "templates")
        tmp = db.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        dt, _ = campaign_build.tool("ingest", "--db", tmp, camp)
        os.rename(tmp, db)
        print(f"setup: {n_ingest} runs ingested in {dt:.1f} s", flush=True)
    else:
        upgraded(db)
    return camp, db


def upgraded(db: Path) -> None:
    """A store kept from an earlier bench brought to this kansoku's schema, as tools/ingest brings a user's
    (a build refuses a store of another version: it opens it read-only)."""
    from kansoku.store.db import open_store

    store = open_store(db)
    store.close()


def setup(base: Path, n: int) -> Setup:
    """The N-run store (the ingested one's runs copied), spec, content and site directory, kept in ``base``."""
    base.mkdir(parents=True, exist_ok=True)
    n_ingest = min(n, INGESTED)
    if n % n_ingest or synthetic.grid(n_ingest)[0] != synthetic.grid(n)[0]:
        raise SystemExit(f"--runs {n}: not a multiple of {n_ingest} runs with the same conditions "
                         "(bench/synthetic.py grid)")
    camp, ingested = base_store(base, n_ingest)
    work = base / f"runs-{n}"
    work.mkdir(exist_ok=True)
    db = base / f"store-{n}.duckdb"  # beside the ingested store: the raw files' copies (blobs/) are shared
    if not db.exists():
        tmp = db.with_suffix(".tmp")
        shutil.copyfile(ingested, tmp)
        if n > n_ingest:
            t0 = time.monotonic()
            campaign_build.replicate_store(tmp, n // n_ingest)
            print(f"setup: {n} runs copied in SQL in {time.monotonic() - t0:.1f} s", flush=True)
        os.rename(tmp, db)
    else:
        upgraded(db)
    specs = work / "specs"
    specs.mkdir(exist_ok=True)
    (specs / "campaign.toml").write_text(campaign_build.campaign_spec("campaign", n, 12, 12), encoding="utf-8")
    content = campaign_build.content_dir(work, "campaign")
    site = work / "site"
    (site / "data").mkdir(parents=True, exist_ok=True)
    return Setup(work, n, db, camp, specs, content, site)


def measured(name: str, *args: object, profile: Path | None = None, tree: Path = ROOT) -> dict:
    """tools/NAME (of checkout ``tree``) as a user runs it: wall s, CPU s (children included), the peak of the
    process tree's memory (its processes' PSS summed, sampled) and the largest process's own peak RSS (its
    VmHWM: the pages it shares with another process counted whole)."""
    dt, msg = campaign_build.tool(name, *args, profile=profile, tree=tree)
    last = campaign_build.LAST
    return {"wall_s": round(dt, 3), "cpu_s": round(last["cpu"], 3), "peak_mb": round(last["tree_mb"], 1),
            "largest_rss_mb": round(last["peak_mb"], 1), "said": msg.splitlines()[-1] if msg else ""}


def full_build(s: Setup, profile: Path | None = None) -> dict:
    shutil.rmtree(s.generated, ignore_errors=True)
    campaign_build.remove_site(s.out)
    return measured("build", *s.build_args(), profile=profile, tree=s.tree)


def build(s: Setup, profile: Path | None = None) -> dict:
    return measured("build", *s.build_args(), profile=profile, tree=s.tree)


def edit_spec_item(s: Setup, k: int) -> None:
    """One table's caption changed (a different text each time): ``Table 1 (k)``, in chapter ``SPEC_PAGE``."""
    spec = s.specs / "campaign.toml"
    text = spec.read_text(encoding="utf-8")
    edited = re.sub(r'caption = \{ ja = "表 1[^"]*", en = "Table 1[^"]*" \}',
                    f'caption = {{ ja = "表 1 ({k})", en = "Table 1 ({k})" }}', text, count=1)
    if edited == text:
        raise SystemExit(f"{spec}: no caption of table 1 to edit")
    spec.write_text(edited, encoding="utf-8")


SPEC_PAGE = "en/reports/campaign/c1/"  # the chapter that shows the table edit_spec_item edits


def write_run(s: Setup) -> Path:
    """One more run written (a repetition of the first condition); its directory."""
    return synthetic.add_run(s.camp, s.n, work=s.base.parent / "templates")


def ingest_run(s: Setup, run: Path) -> float:
    """``run`` ingested (by this checkout); the ingest's wall time (not counted). It waits for a store another
    process reads (under serve, the recomputation after the last run may still hold it)."""
    dt_i, _ = campaign_build.tool("ingest", "--db", s.db, "--wait", "600", run)
    return dt_i


def add_run(s: Setup) -> float:
    """One more run written and ingested; the ingest's wall time (not counted)."""
    return ingest_run(s, write_run(s))


def paired(s: Setup, trees: list[Path]) -> list[Setup]:
    """This setup and one per other checkout: the same store, specs and content, a site of its own."""
    return [s] + [dataclasses.replace(s, site=s.base / f"site-ref{i}", tree=t.resolve())
                  for i, t in enumerate(trees, 1)]


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return out


def tree_cpu(pid: int) -> float:
    """User + sys CPU seconds of ``pid`` and its living descendants (with the children they waited for)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            pass
    return total / tick


def _page(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.read().decode("utf-8", errors="replace")
    except (urllib.error.URLError, OSError):
        return ""


def serve_edits(s: Setup, reps: int, timeout_s: float = 60.0) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """``kansoku serve`` on the site; ``reps`` sentences written into the cover, then ``reps`` captions edited in
    the spec, then ``reps`` runs added (each ingested, not counted), each timed until the page served holds it."""
    from kansoku.report.provenance import run_anchor
    cmd = [sys.executable, "-c", kansoku_code(s.tree), "serve", "--site", s.site, "--db", s.db, "--specs",
           s.specs, "--content", s.content, "--port", "0"]
    t0 = time.monotonic()
    proc = subprocess.Popen(list(map(str, cmd)), cwd=s.tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=campaign_build.tool_env())
    lines: list[str] = []
    errs: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    threading.Thread(target=lambda: errs.extend(proc.stderr), daemon=True).start()
    stop, peak = threading.Event(), {"tree_mb": 0.0}
    sampler = threading.Thread(target=proc_tree.sample_tree, args=(proc.pid, stop, peak), daemon=True)
    sampler.start()
    cover = s.content / "reports" / "campaign" / "_index.en.md"
    original = cover.read_text(encoding="utf-8")

    def timed(base: str, page: str, token: str, write=None, before=None) -> dict:
        """The change ``write()`` made (after ``before()``, not counted: a new run's ingest, which serve sees
        and waits for; its figures join the result) timed until ``page`` served holds ``token``."""
        time.sleep(1.0)  # the watchers' debounce of the last edit has passed
        said = len(lines)  # (serve's lines before this edit: "recomputed" is looked for after them)
        cpu0 = tree_cpu(proc.pid)
        extra = before() if before is not None else {}
        t1 = time.monotonic()
        if write is not None:
            write()
        while token not in _page(base + page):
            if proc.poll() is not None or time.monotonic() - t1 > timeout_s:
                raise SystemExit(f"{token!r} was not served on {page} within {timeout_s:.0f} s:\n"
                                 f"{''.join(errs)[-3000:]}")
            time.sleep(0.02)
        return {"wall_s": round(time.monotonic() - t1, 3), "cpu_s": round(tree_cpu(proc.pid) - cpu0, 3),
                "peak_mb": round(peak["tree_mb"], 1), "recomputed": any("recomputed" in ln for ln in lines[said:]),
                **extra}
    try:
        base = None
        while base is None:
            if proc.poll() is not None or time.monotonic() - t0 > 1800:
                raise SystemExit(f"kansoku serve did not start:\n{''.join(errs)[-3000:]}")
            base = next((m.group(0) for ln in list(lines) for m in [re.search(r"http://127\.0\.0\.1:\d+/", ln)] if m),
                        None)
            time.sleep(0.1)
        started = {"wall_s": round(time.monotonic() - t0, 3), "cpu_s": round(tree_cpu(proc.pid), 3),
                   "peak_mb": round(peak["tree_mb"], 1)}
        url = base + "en/reports/campaign/"
        while "Synthetic campaign" not in _page(url):  # (its address is printed before its first render is served)
            if proc.poll() is not None or time.monotonic() - t0 > 1800:
                raise SystemExit(f"kansoku serve does not serve {url}:\n{''.join(errs)[-3000:]}")
            time.sleep(0.2)
        started["wall_s"] = round(time.monotonic() - t0, 3)
        prose = []
        for k in range(PROSE_EDITS * reps):  # (a second each: the writer's most frequent step, its median steadier)
            token = f"Loop edit {k} at {time.time_ns()}."
            prose.append(timed(base, "en/reports/campaign/", token,
                               lambda: cover.write_text(original + f"\n{token}\n", encoding="utf-8")))
        specs = []
        for _ in range(reps):
            k = time.time_ns()
            specs.append(timed(base, SPEC_PAGE, f"Table 1 ({k})", lambda: edit_spec_item(s, k)))
        runs = []
        for _ in range(reps):
            run = write_run(s)
            run_id = run.relative_to(s.camp).as_posix()  # (the campaign's root: its runs' ids are relative to it)
            runs.append(timed(base, f"en/reports/campaign/runs/{run_anchor(run_id)}.html", run_id,
                              before=lambda: {"ingest_s": round(ingest_run(s, run), 3)}))
    finally:
        cover.write_text(original, encoding="utf-8")
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        stop.set()
        sampler.join()
    return started, prose, specs, runs


def _revision(tree: Path) -> str:
    got = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return got.stdout.strip() or "?"


def median(xs: list[float]) -> float:
    """The median (of an even count, the mean of the middle two: not the larger of them)."""
    return statistics.median(xs) if xs else float("nan")


def run_steps(s: Setup, reps: int, serve: bool = True, profile: Path | None = None,
              refs: list[Setup] | None = None) -> dict[str, list[dict]]:
    """Every step ``reps`` times at this size: {step: [one dict a repetition]}. ``refs``: the same steps by
    other checkouts on the same inputs, interleaved with this one's (which goes first on even repetitions,
    last on odd ones), into ``ref<i>:<step>``."""
    rows: dict[str, list[dict]] = {step: [] for step in STEPS}
    prof = (lambda name, k: profile / f"{s.n}-{name}-{k}.prof") if profile else (lambda name, k: None)
    every = [(s, "")] + [(r, f"ref{i}:") for i, r in enumerate(refs or [], 1)]
    for k in range(reps):
        order = every if k % 2 == 0 else every[::-1]
        for one, tag in order:
            rows.setdefault(f"{tag}full", []).append(full_build(one, None if tag else prof("full", k)))
            print(f"  {tag}full build:      {rows[tag + 'full'][-1]}", flush=True)
            # a first rebuild settles what a full build leaves to the next (nothing changed): not a step
            build(one)
        edit_spec_item(s, k)
        for one, tag in order:
            rows.setdefault(f"{tag}spec_item", []).append(build(one, None if tag else prof("spec-item", k)))
            print(f"  {tag}spec item edit:  {rows[tag + 'spec_item'][-1]}", flush=True)
        dt_i = add_run(s)
        for one, tag in order:
            rows.setdefault(f"{tag}new_run", []).append({**build(one, None if tag else prof("new-run", k)),
                                                         "ingest_s": round(dt_i, 3)})
            print(f"  {tag}new run:         {rows[tag + 'new_run'][-1]}", flush=True)
    if serve:  # each checkout's server in turn (a server a checkout: the reference's after this one's)
        for one, tag in every:
            started, *edits = serve_edits(one, reps)
            for step, got in zip(("prose", "spec_serve", "new_run_serve"), edits):
                rows[f"{tag}{step}"] = got
            rows[f"{tag}serve_start"] = [started]
            print(f"  {tag}serve started:   {started}\n  {tag}prose edits:     {rows[tag + 'prose']}\n"
                  f"  {tag}spec edits under serve: {rows[tag + 'spec_serve']}\n"
                  f"  {tag}new runs under serve: {rows[tag + 'new_run_serve']}", flush=True)
    return rows


def figures(n: int, rows: dict[str, list[dict]], trees: list[Path] | None = None) -> list[Figure]:
    """The median of each step (wall, CPU, peak MB), held to the targets at 10,000 runs; with ``trees``, each
    step's median over the other checkout's (wall and CPU)."""
    out = []
    for i, tree in enumerate(trees or [], 1):
        ref = f"revision {_revision(tree)}"
        for step in STEPS:
            mine, theirs = rows.get(step) or [], rows.get(f"ref{i}:{step}") or []
            if not mine or not theirs:
                continue
            for what, col in (("wall", "wall_s"), ("CPU", "cpu_s")):
                a, b = median([r[col] for r in mine]), median([r[col] for r in theirs])
                out.append(Figure(f"{step} at {n} runs / reference, {what}", round(a / b, 3), "×", reference=ref,
                                  extra={"this_s": a, "reference_s": b, "reps": len(mine)}))
    at_target = n == TARGET_RUNS
    for step in STEPS:
        got = rows.get(step) or []
        if not got:
            continue
        wall = median([r["wall_s"] for r in got])
        target = f"< {TARGETS[step]:g} s at {TARGET_RUNS} runs"
        out.append(Figure(f"{step} at {n} runs, wall", wall, "s", target=target,
                          met=(wall < TARGETS[step]) if at_target else None,
                          extra={"reps": len(got), "min": min(r["wall_s"] for r in got),
                                 "max": max(r["wall_s"] for r in got)}))
        out.append(Figure(f"{step} at {n} runs, CPU with children", median([r["cpu_s"] for r in got]), "s"))
        mb = max(r["peak_mb"] for r in got)
        if step == "full":
            out.append(Figure(f"full at {n} runs, peak memory (PSS) of the process tree", mb, "MB",
                              target=f"< {TARGET_FULL_MB:g} MB at {TARGET_RUNS} runs",
                              met=(mb < TARGET_FULL_MB) if at_target else None))
        else:
            out.append(Figure(f"{step} at {n} runs, peak memory (PSS) of the process tree", mb, "MB"))
    return out


@contextlib.contextmanager
def workdir(given: Path | None):
    """``given`` (kept), or a temporary directory removed at the end."""
    if given is not None:
        yield given.resolve()
        return
    tmp = Path(tempfile.mkdtemp(prefix="kansoku-loop-bench-"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=TARGET_RUNS, help=f"runs in the store (default {TARGET_RUNS})")
    ap.add_argument("--dir", type=Path, help="setup kept here: stores, specs, content, site (default: a temporary "
                                             "directory, removed at the end)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each step (default 3)")
    ap.add_argument("--no-serve", action="store_true",
                    help="leave out the steps under kansoku serve (prose, spec item, new run)")
    ap.add_argument("--profile", type=Path, metavar="DIR", help="write a cProfile of each build into DIR")
    ap.add_argument("--tree", type=Path, action="append", default=[], metavar="CHECKOUT",
                    help="pair each step with this checkout's tools/build (and kansoku serve) on the same "
                         "inputs, interleaved (repeatable; its store schema must be this one's)")
    args = ap.parse_args()
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    load = Load(args.dir)
    with workdir(args.dir) as base:
        s = setup(base, args.runs)
        print(f"== the writer's loop at {args.runs} runs ({s.base})", flush=True)
        rows = run_steps(s, args.reps, serve=not args.no_serve, profile=args.profile,
                         refs=paired(s, args.tree)[1:])
    figs = figures(args.runs, rows, args.tree)
    for f in figs:
        print(f"{f.name:55} {f.value:9.2f} {f.unit:3} {f.target}  {'' if f.met is None else 'met' if f.met else 'MISSED'}")
    record("loop", figs, raw={"runs": args.runs, "steps": rows}, load=load)
    return 1 if any(f.met is False for f in figs) else 0


if __name__ == "__main__":
    sys.exit(main())
