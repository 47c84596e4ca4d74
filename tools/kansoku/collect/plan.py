"""Campaign mode of tools/collect: a declarative plan, run in a reproducible random order, resumable.

A plan is a TOML file (``tools/collect --plan PLAN.toml``; see data/runs/example/*.toml)::

    root = "."                 # where run directories go, relative to the plan file
    seed = 2022                # random order is reproducible from this seed
    order = "random"           # "random" (default) or "listed"
    group_by = ["config"]      # runs sharing these factors stay together; groups are shuffled, then the runs
                               # inside each group (so setups below run once per group, not per run)
    repetitions = 3            # adds the factor rep = 1..N after the factors below
    settle_s = 1               # monitors run this long before and after each benchmark
    pg_stat_interval_s = 5     # with conninfo: checkpoint counters every this many seconds (0: none)
    monitors = true            # sar, iostat, vmstat

    [factors]                  # the directory order is this order: study=.../workload=.../clients=...
    study = ["scaleup"]
    workload = ["read", "update"]
    clients = [1, 2, 4, 8]

    [run]                      # one benchmark run; strings are templates, see below
    command = "pgbench -n -c {clients} -j {threads} -T 5 {mode} -f {plan_dir}/scripts/{workload}.sql bench"
    output = "pgbench.log"     # optional; default <program>.log
    conninfo = "host=127.0.0.1 port=5433 user=postgres dbname=bench"     # optional
    strace_pidfile = "/tmp/pgdata/postmaster.pid"                         # optional
    server_log = "/tmp/pgdata/server.log"      # optional: the part written during the run -> server.log
    note = "..."               # optional

    [vars]                     # template variables and their defaults
    mode = ""
    threads = 1

    [[when]]                   # overrides for the runs that match (later entries win)
    match = { workload = "update" }          # a value or a list of values per factor
    mode = "-M prepared"

    [[setup]]                  # a shell command run before the first run of each group
    on = ["config", "workload", "clients"]   # a group = runs with the same values of these factors
    match = { workload = "update" }          # optional: only for these runs
    command = "pgbench -i -s 10 -F 80 -h 127.0.0.1 -p 5433 -U postgres bench"
    log = ".setup/init_{config}_{clients}.log"   # optional, relative to root; default .setup/setup.log

Templates are Python ``str.format`` strings; the names are the factors (``{clients}``, ``{rep}``), the
vars, ``{plan_dir}`` (directory of the plan file), ``{root}`` and ``{run_dir}`` (absolute paths).
The benchmark command is split like a shell would (``shlex``) after the substitution, but it is not run
by a shell: write ``sh -c '...'`` if a shell is needed. Setup commands are run by ``/bin/sh -c`` in the
plan directory; their output is appended to their log with ``#`` lines giving the command, start, end
and exit status (logs go under ``.setup/`` by default: a dot-directory, so ingest skips them). A
failing setup stops the campaign.

Resuming: the order is computed from the seed over all runs, done or not; a run whose directory
holds a run.toml with status ok is skipped, any other earlier attempt (failed, interrupted) is moved
aside to a hidden ``.NAME.attempt-<utc>`` directory and measured again. Setups run again before the
first run of each group in every session. Ctrl-C stops the campaign after recording the current run
as interrupted; the same command resumes it.
"""

from __future__ import annotations

import itertools
import os
import random
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kansoku.collect.run import EXIT_INTERRUPTED, KEY, default_signals, CollectError, RunRequest, collect_run, run_path, run_state
from kansoku.values import canon

TOP_KEYS = {"root", "seed", "order", "group_by", "repetitions", "rep_factor", "settle_s", "pg_stat_interval_s", "monitors",
            "factors", "run", "vars", "when", "setup", "description"}
RUN_KEYS = {"command", "output", "conninfo", "strace_pidfile", "strace_pid", "note", "server_log"}
SETUP_KEYS = {"on", "match", "command", "log"}


class PlanError(CollectError):
    pass


@dataclass
class Setup:
    on: list[str]
    match: dict[str, list[str]]
    command: str
    log: str


@dataclass
class Plan:
    path: Path
    root: Path
    seed: int | None
    order: str
    group_by: list[str]
    factors: dict[str, list[str]]
    run: dict[str, Any]
    vars: dict[str, Any]
    when: list[tuple[dict[str, list[str]], dict[str, Any]]]
    setups: list[Setup]
    settle_s: float = 1.0
    monitors: bool = True
    pg_stat_interval_s: float = 5.0


@dataclass
class PlannedRun:
    position: int
    factors: dict[str, str]
    values: dict[str, Any] = field(default_factory=dict)


def _match(spec: Any, where: str) -> dict[str, list[str]]:
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise PlanError(f"{where}: match must be a table like {{ workload = \"update\" }}")
    return {k: [canon(x) for x in (v if isinstance(v, list) else [v])] for k, v in spec.items()}


def _matches(match: dict[str, list[str]], factors: dict[str, str]) -> bool:
    return all(factors.get(k) in vals for k, vals in match.items())


def load_plan(path: Path) -> Plan:
    try:
        with open(path, "rb") as fh:
            d = tomllib.load(fh)
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the plan ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{path}: not valid TOML: {exc}") from None
    unknown = set(d) - TOP_KEYS
    if unknown:
        raise PlanError(f"{path}: unknown key(s) {sorted(unknown)}; known: {sorted(TOP_KEYS)}")
    factors_in = d.get("factors")
    if not isinstance(factors_in, dict) or not factors_in:
        raise PlanError(f"{path}: [factors] is required, e.g. clients = [1, 2, 4]")
    factors: dict[str, list[str]] = {}
    for k, v in factors_in.items():
        vals = v if isinstance(v, list) else [v]
        if not KEY.match(k) or not vals:
            raise PlanError(f"{path}: [factors] {k}: a factor name with a non-empty list of values")
        factors[k] = [canon(x) for x in vals]
        for x in factors[k]:
            if "/" in x or x.startswith(".") or not x:
                raise PlanError(f"{path}: [factors] {k}: value {x!r} cannot name a directory")
    reps = d.get("repetitions")
    if reps is not None:
        if not isinstance(reps, int) or reps < 1:
            raise PlanError(f"{path}: repetitions must be a positive integer")
        rep_factor = d.get("rep_factor", "rep")
        if rep_factor in factors:
            raise PlanError(f"{path}: repetitions adds the factor {rep_factor!r}, which [factors] already has")
        factors[rep_factor] = [str(i) for i in range(1, reps + 1)]
    run = d.get("run")
    if not isinstance(run, dict) or "command" not in run:
        raise PlanError(f"{path}: [run] with a command is required")
    if set(run) - RUN_KEYS:
        raise PlanError(f"{path}: [run]: unknown key(s) {sorted(set(run) - RUN_KEYS)}; known: {sorted(RUN_KEYS)}")
    order = d.get("order", "random")
    if order not in ("random", "listed"):
        raise PlanError(f"{path}: order must be \"random\" or \"listed\"")
    group_by = list(d.get("group_by", []))
    for g in group_by:
        if g not in factors:
            raise PlanError(f"{path}: group_by names {g!r}, which is not a factor")
    when = []
    for i, w in enumerate(d.get("when", []), 1):
        if not isinstance(w, dict) or "match" not in w:
            raise PlanError(f"{path}: [[when]] #{i} needs a match table")
        when.append((_match(w["match"], f"{path}: [[when]] #{i}"), {k: v for k, v in w.items() if k != "match"}))
    setups = []
    for i, s in enumerate(d.get("setup", []), 1):
        where = f"{path}: [[setup]] #{i}"
        if not isinstance(s, dict) or "command" not in s:
            raise PlanError(f"{where} needs a command")
        if set(s) - SETUP_KEYS:
            raise PlanError(f"{where}: unknown key(s) {sorted(set(s) - SETUP_KEYS)}")
        on = s.get("on", [])
        on = [on] if isinstance(on, str) else list(on)
        for g in on:
            if g not in factors:
                raise PlanError(f"{where}: on names {g!r}, which is not a factor")
        setups.append(Setup(on, _match(s.get("match"), where), s["command"], s.get("log", ".setup/setup.log")))
    seed = d.get("seed")
    if order == "random" and not isinstance(seed, int):
        raise PlanError(f"{path}: a random order needs an integer seed (it makes the order reproducible)")
    plan_dir = path.resolve().parent
    return Plan(path=path.resolve(), root=(plan_dir / d.get("root", ".")).resolve(), seed=seed, order=order,
                group_by=group_by, factors=factors, run=run, vars=dict(d.get("vars", {})), when=when,
                setups=setups, settle_s=float(d.get("settle_s", 1.0)), monitors=bool(d.get("monitors", True)),
                pg_stat_interval_s=_interval(d.get("pg_stat_interval_s", 5.0), path))


def _interval(v: Any, path: Path) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise PlanError(f"{path}: pg_stat_interval_s must be a number of seconds >= 0 (0: no snapshots during "
                        f"a run), got {v!r}")
    return float(v)


def plan_runs(plan: Plan) -> list[PlannedRun]:
    """All runs in execution order (independent of which are done, so a resumed campaign keeps its order)."""
    names = list(plan.factors)
    combos = [dict(zip(names, vals)) for vals in itertools.product(*plan.factors.values())]
    if plan.order == "random":
        rng = random.Random(plan.seed)
        groups: dict[tuple, list[dict[str, str]]] = {}
        for c in combos:
            groups.setdefault(tuple(c[g] for g in plan.group_by), []).append(c)
        keys = list(groups)
        rng.shuffle(keys)
        combos = []
        for k in keys:
            members = groups[k]
            rng.shuffle(members)
            combos.extend(members)
    out = []
    for i, f in enumerate(combos, 1):
        values: dict[str, Any] = dict(plan.vars)
        for match, over in plan.when:
            if _matches(match, f):
                values.update(over)
        values.update(f)
        out.append(PlannedRun(i, f, values))
    return out


def _render(template: str, values: dict[str, Any], where: str) -> str:
    try:
        return template.format_map(values)
    except (KeyError, IndexError, ValueError) as exc:
        raise PlanError(f"{where}: template {template!r}: unknown or bad name {exc}") from None


def _values(plan: Plan, pr: PlannedRun) -> dict[str, Any]:
    return {**pr.values, "plan_dir": str(plan.path.parent), "root": str(plan.root),
            "run_dir": str(run_path(plan.root, pr.factors).resolve())}


def request_for(plan: Plan, pr: PlannedRun, total: int, setups: list[str], quiet: bool) -> RunRequest:
    v = _values(plan, pr)
    where = f"{plan.path}: [run]"
    command = [a for a in shlex.split(_render(plan.run["command"], v, where))]
    opt = {k: _render(str(plan.run[k]), v, where) for k in ("output", "conninfo", "strace_pidfile", "note",
                                                              "strace_pid", "server_log") if k in plan.run}
    return RunRequest(
        root=plan.root, factors=pr.factors, command=command, output=opt.get("output"),
        conninfo=opt.get("conninfo"), strace_pid=int(opt["strace_pid"]) if "strace_pid" in opt else None,
        strace_pidfile=Path(opt["strace_pidfile"]) if "strace_pidfile" in opt else None,
        server_log=Path(opt["server_log"]) if "server_log" in opt else None, settle_s=plan.settle_s, pg_stat_interval_s=plan.pg_stat_interval_s, monitors=plan.monitors, replace=True, note=opt.get("note"), quiet=quiet,
        campaign={"plan": str(plan.path), "seed": plan.seed, "order": plan.order, "position": pr.position,
                  "total": total, "setup": setups})


def _setup_commands(plan: Plan, pr: PlannedRun) -> list[tuple[Setup, str]]:
    v = _values(plan, pr)
    return [(s, _render(s.command, v, f"{plan.path}: [[setup]]")) for s in plan.setups if _matches(s.match, pr.factors)]


def _run_setup(plan: Plan, setup: Setup, command: str, pr: PlannedRun, quiet: bool) -> int:
    log = plan.root / _render(setup.log, _values(plan, pr), f"{plan.path}: [[setup]] log")
    log.parent.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"collect: setup: {command}", file=sys.stderr, flush=True)
    with open(log, "ab") as fh:
        fh.write(f"# command: {command}\n# start: {datetime.now(timezone.utc).isoformat()}\n".encode())
        fh.flush()
        # Ctrl-C is held back while the setup starts: pressed inside Popen it would leave a started
        # setup nobody stops. Unblocked inside the try below, where a pending Ctrl-C is then raised.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=plan.path.parent, stdin=subprocess.DEVNULL,
                                    stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=default_signals)
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                rc = proc.wait()
            except KeyboardInterrupt:  # stop the whole setup (sh and what it started), then let collect stop
                for sig, grace in ((signal.SIGINT, 3.0), (signal.SIGKILL, 3.0)):
                    try:
                        os.killpg(proc.pid, sig)
                        proc.wait(timeout=grace)
                        break
                    except (ProcessLookupError, subprocess.TimeoutExpired):
                        continue
                fh.write(f"# interrupted: {datetime.now(timezone.utc).isoformat()}\n".encode())
                raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        fh.write(f"# exit code: {rc}\n# end: {datetime.now(timezone.utc).isoformat()}\n".encode())
    if rc != 0:
        print(f"error: setup command exited {rc}: {command} (output in {log}); campaign stopped",
              file=sys.stderr)
    return rc


def _fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def run_plan(path: Path, *, dry_run: bool = False, limit: int | None = None, quiet: bool = False) -> int:
    plan = load_plan(path)
    runs = plan_runs(plan)
    total = len(runs)
    done = {pr.position for pr in runs if run_state(run_path(plan.root, pr.factors)) == "ok"}
    todo = [pr for pr in runs if pr.position not in done]
    head = (f"plan {plan.path}: {total} runs ({plan.order} order, seed {plan.seed}), {len(done)} already done, "
            f"{len(todo)} to run; runs under {plan.root}")
    print(head, file=sys.stderr if not dry_run else sys.stdout, flush=True)
    if dry_run:
        for pr in runs:
            req = request_for(plan, pr, total, [c for _, c in _setup_commands(plan, pr)], True)
            mark = "done" if pr.position in done else "todo"
            print(f"{pr.position:4d} {mark} {run_path(Path('.'), pr.factors).as_posix()}: {shlex.join(req.command)}")
        return 0
    if limit is not None:
        todo = todo[:limit]
    for pr in todo:  # template errors show up now, not after an hour of measurements
        request_for(plan, pr, total, [c for _, c in _setup_commands(plan, pr)], quiet)
    t0 = time.monotonic()
    failed: list[str] = []
    prev_groups: dict[int, tuple | None] = {}
    for n, pr in enumerate(todo, 1):
        setups = _setup_commands(plan, pr)
        req = request_for(plan, pr, total, [c for _, c in setups], quiet)
        for i, (s, cmd) in enumerate(setups):
            key = tuple(pr.factors[g] for g in s.on)
            if prev_groups.get(id(s)) != key:
                if _run_setup(plan, s, cmd, pr, quiet) != 0:
                    return 1
                prev_groups[id(s)] = key
        if not quiet:
            elapsed = time.monotonic() - t0
            left = f", about {_fmt_s(elapsed / (n - 1) * (len(todo) - n + 1))} left" if n > 1 else ""
            name = run_path(Path("."), pr.factors).as_posix()
            print(f"collect: [{len(done) + n}/{total}] {name} (elapsed {_fmt_s(elapsed)}{left})",
                  file=sys.stderr, flush=True)
        res = collect_run(req)
        if res.interrupted:
            print(f"collect: interrupted; {res.run_dir} recorded as interrupted. Run the same command to resume "
                  f"({len(done) + n - 1} of {total} runs done).", file=sys.stderr)
            return EXIT_INTERRUPTED
        if res.status != "ok":
            failed.append(f"{res.run_dir} (exit code {res.exit_code})")
            print(f"collect: run failed: {res.run_dir} (exit code {res.exit_code})", file=sys.stderr, flush=True)
    if not quiet:
        print(f"collect: {len(todo) - len(failed)} runs ok, {len(failed)} failed, in "
              f"{_fmt_s(time.monotonic() - t0)}; {total - len(done) - len(todo)} not run (--limit)"
              if limit is not None else
              f"collect: {len(todo) - len(failed)} runs ok, {len(failed)} failed, in {_fmt_s(time.monotonic() - t0)}",
              file=sys.stderr)
    for f in failed:
        print(f"  failed: {f}", file=sys.stderr)
    return 1 if failed else 0
