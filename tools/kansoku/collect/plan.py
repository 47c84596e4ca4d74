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
    monitors = true            # sar, iostat, vmstat (or names, mpstat among them)

    [factors]                  # the directory order is this order: study=.../workload=.../clients=...
    study = ["scaleup"]
    workload = ["read", "update"]
    clients = [1, 2, 4, 8]

    [run]                      # one benchmark run; strings are templates, see below
    command = "pgbench -n -c {clients} -j {threads} -T 5 {mode} -f {plan_dir}/scripts/{workload}.sql bench"
    output = "pgbench.log"     # optional; default <program>.log
    conninfo = "host=127.0.0.1 port=5433 user=postgres dbname=bench"     # optional
    strace_pidfile = "/tmp/pgdata/postmaster.pid"                         # optional
    perf_pidfile = "/tmp/pgdata/postmaster.pid"   # optional: perf record -g on the postmaster's processes
    # perf_system_wide = true; perf_frequency = 99; perf_event = "cpu-clock"    (collect/profile.py)
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
    host = "dbserver"                        # optional: run it on that host of [hosts] over ssh (sh -c there)

    [hosts.pgclient]           # the hosts of each run (optional; collect/hosts.py). No ssh: this host,
    role = "client"            # whose files stay at the top of the run directory (run.toml role)

    [hosts.dbserver]           # reached over ssh: its monitors' files go to <run>/host=dbserver/
    role = "server"
    ssh = "postgres@db1"       # ssh destination (or ssh://user@host:port, or an alias of the ssh config)
    identity = "~/.ssh/id_ed25519"           # optional (default: the ssh agent / ssh config); BatchMode
    ssh_config = "ssh_config"                # optional, relative to the plan
    monitors = ["sar", "iostat", "vmstat"]   # optional (default all three)
    conninfo = "dbname=bench_{workload}"      # optional: psql there: [server], pg_stat snapshots
    strace_pidfile = "/var/lib/postgresql/15/main/postmaster.pid"   # optional: strace -c there
    pg_stat_replication = false               # optional: the standbys' lags (with conninfo)
    perf_pidfile = "/var/lib/postgresql/15/main/postmaster.pid"   # optional: perf record -g there (template)
    server_log = "/var/log/postgresql/postgresql-15-main.log"     # optional: its part written during the run

The plan is checked before anything runs (collect/plan_schema.py, schema in docs/collect-plan.schema.json):
every problem at once, with its line and "did you mean", exit status 3.

Templates are Python ``str.format`` strings; the names are the factors (``{clients}``, ``{rep}``), the
vars, ``{plan_dir}`` (directory of the plan file), ``{root}`` and ``{run_dir}`` (absolute paths).
The benchmark command is split like a shell would (``shlex``) after the substitution, but it is not run
by a shell: write ``sh -c '...'`` if a shell is needed. Setup commands are run by ``/bin/sh -c`` in the
plan directory, every value placed in them quoted as one word of the command (``shlex.quote``: a factor value
``$(touch x)`` is the text ``'$(touch x)'``, never run; write the shell syntax in the template); their output is appended to their log with ``#`` lines giving the command, start, end
and exit status (logs go under ``.setup/`` by default: a dot-directory, so ingest skips them). A
failing setup stops the campaign.

Resuming: the order is computed from the seed over all runs, done or not; a run whose directory
holds a run.toml with status ok is skipped, any other earlier attempt (failed, interrupted) is moved
aside to a hidden ``.NAME.attempt-<utc>`` directory and measured again. Setups run again before the
first run of each group in every session. Ctrl-C stops the campaign after recording the current run
as interrupted; the same command resumes it.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kansoku.collect import lifetime
from kansoku.collect.hosts import CONTROL_PREFIX, Host, RemoteHosts, Ssh
from kansoku.collect.profile import ProfileRequest
from kansoku.collect.run import (
    DEFAULT_MONITORS,
    EXIT_INTERRUPTED,
    CollectError,
    RunRequest,
    collect_run,
    default_signals,
    run_path,
    run_state,
)
from kansoku.values import canon


class PlanError(CollectError):
    pass


HOST_TEMPLATES = ("conninfo", "strace_pidfile", "perf_pidfile", "server_log")  # [hosts.NAME] keys rendered per run


@dataclass
class Setup:
    on: list[str]
    match: dict[str, list[str]]
    command: str
    log: str
    host: str | None = None  # a host of [hosts] reached over ssh: the command runs there (None: here)


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
    monitors: tuple[str, ...] = DEFAULT_MONITORS  # monitors = true: the default three; false: none; or names
    pg_stat_interval_s: float = 5.0
    hosts: list[Host] = field(default_factory=list)  # the hosts reached over ssh
    role: str | None = None  # the role of the host collect runs on ([hosts.NAME] without ssh)


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


def _monitors(value: bool | list[str]) -> tuple[str, ...]:
    """A plan's ``monitors``: true (sar, iostat, vmstat), false (none), or the names of the monitors to run."""
    if isinstance(value, bool):
        return DEFAULT_MONITORS if value else ()
    return tuple(value)


def hosts_of(d: dict, base: Path) -> tuple[list[Host], str | None]:
    """The [hosts] of a checked plan or hosts file: those reached over ssh, and the role of this host."""
    remote, role = [], None
    for name, h in d.get("hosts", {}).items():
        if "ssh" not in h:
            role = h["role"]
            continue
        cfg, ident = h.get("ssh_config"), h.get("identity")
        remote.append(Host(name=name, role=h["role"], target=h["ssh"],
                           identity=str((base / Path(ident).expanduser()).resolve()) if ident else None,
                           ssh_config=str((base / Path(cfg).expanduser()).resolve()) if cfg else None,
                           monitors=tuple(h.get("monitors", Host.monitors)), conninfo=h.get("conninfo"),
                           strace_pidfile=h.get("strace_pidfile"),
                           pg_stat_replication=bool(h.get("pg_stat_replication", False)),
                           perf_pidfile=h.get("perf_pidfile"), perf_system_wide=bool(h.get("perf_system_wide", False)),
                           perf_frequency=int(h.get("perf_frequency", 99)), perf_event=h.get("perf_event"),
                           server_log=h.get("server_log")))
    return remote, role


def load_hosts(path: Path) -> tuple[list[Host], str | None]:
    """tools/collect --hosts FILE: a file of [hosts.NAME] tables, checked like a plan's."""
    from kansoku.collect.plan_schema import check  # the spec validator it brings is not loaded at every start

    return hosts_of(check(path, hosts_only=True), path.resolve().parent)


def load_plan(path: Path) -> Plan:
    from kansoku.collect.plan_schema import check  # as in load_hosts: only when a plan is read

    d = check(path)  # every problem at once, with lines (PlanProblems, exit 3); what follows only converts
    factors: dict[str, list[str]] = {k: [canon(x) for x in (v if isinstance(v, list) else [v])]
                                     for k, v in d["factors"].items()}
    reps = d.get("repetitions")
    if reps is not None:
        factors[d.get("rep_factor", "rep")] = [str(i) for i in range(1, reps + 1)]
    run = d["run"]
    order = d.get("order", "random")
    group_by = list(d.get("group_by", []))
    when = [(_match(w["match"], f"{path}: [[when]] #{i}"), {k: v for k, v in w.items() if k != "match"})
            for i, w in enumerate(d.get("when", []), 1)]
    setups = []
    for s in d.get("setup", []):
        on = s.get("on", [])
        setups.append(Setup([on] if isinstance(on, str) else list(on), _match(s.get("match"), str(path)),
                            s["command"], s.get("log", ".setup/setup.log"), s.get("host")))
    seed = d.get("seed")
    plan_dir = path.resolve().parent
    hosts, role = hosts_of(d, plan_dir)
    return Plan(path=path.resolve(), root=(plan_dir / d.get("root", ".")).resolve(), seed=seed, order=order,
                group_by=group_by, factors=factors, run=run, vars=dict(d.get("vars", {})), when=when,
                setups=setups, settle_s=float(d.get("settle_s", 1.0)), monitors=_monitors(d.get("monitors", True)),
                pg_stat_interval_s=float(d.get("pg_stat_interval_s", 5.0)), hosts=hosts, role=role)


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
    hosts = [dataclasses.replace(h, **{k: _render(getattr(h, k), v, f"{plan.path}: [hosts.{h.name}]")
                                       for k in HOST_TEMPLATES if getattr(h, k)})
             for h in plan.hosts]
    return RunRequest(
        hosts=hosts, role=plan.role, pg_stat_replication=bool(plan.run.get("pg_stat_replication", False)),
        root=plan.root, factors=pr.factors, command=command, output=opt.get("output"),
        conninfo=opt.get("conninfo"), strace_pid=int(opt["strace_pid"]) if "strace_pid" in opt else None,
        strace_pidfile=Path(opt["strace_pidfile"]) if "strace_pidfile" in opt else None,
        server_log=Path(opt["server_log"]) if "server_log" in opt else None, settle_s=plan.settle_s, pg_stat_interval_s=plan.pg_stat_interval_s, monitors=plan.monitors, replace=True, note=opt.get("note"), quiet=quiet,
        campaign={"plan": str(plan.path), "seed": plan.seed, "order": plan.order, "position": pr.position,
                  "total": total, "setup": setups}, profile=_profile(plan, v, where))


def _profile(plan: Plan, v: dict[str, Any], where: str) -> ProfileRequest | None:
    """[run] perf_pidfile / perf_system_wide (with perf_frequency, perf_event): perf record -g during the run."""
    r = plan.run
    if "perf_pidfile" not in r and not r.get("perf_system_wide"):
        return None
    return ProfileRequest(int(r.get("perf_frequency", 99)), None,
                          Path(_render(str(r["perf_pidfile"]), v, where)) if "perf_pidfile" in r else None,
                          bool(r.get("perf_system_wide", False)), r.get("perf_event"))


class _ShellWord:
    """A value placed in a shell command: formatted as the template asks (``{clients:03d}``), then quoted, so
    that a factor, a var or a path is one word of the command, never shell text (``$(…)``, backticks, ``;``)."""

    def __init__(self, value: Any):
        self.value = value

    def __format__(self, spec: str) -> str:
        return shlex.quote(format(self.value, spec))


def _setup_commands(plan: Plan, pr: PlannedRun) -> list[tuple[Setup, str]]:
    v = {k: _ShellWord(x) for k, x in _values(plan, pr).items()}  # run by /bin/sh -c: every value quoted
    return [(s, _render(s.command, v, f"{plan.path}: [[setup]]")) for s in plan.setups if _matches(s.match, pr.factors)]


def _setup_host(plan: Plan, setup: Setup) -> Host | None:
    """The host a setup runs on over ssh (None: this host)."""
    return next((h for h in plan.hosts if h.name == setup.host), None) if setup.host else None


def _run_setup(plan: Plan, setup: Setup, command: str, pr: PlannedRun, quiet: bool) -> int:
    host = _setup_host(plan, setup)
    if host is None:
        return _run_setup_with(plan, setup, command, pr, quiet, ["/bin/sh", "-c", command], None)
    with lifetime.TempDir(CONTROL_PREFIX) as control:
        ssh = Ssh(host, control, 0)
        try:
            ssh.open()  # an unreachable host: SshError (exit 2) naming it, before the command starts
            return _run_setup_with(plan, setup, command, pr, quiet, ssh.argv(command), host)
        finally:
            ssh.close()


def _run_setup_with(plan: Plan, setup: Setup, command: str, pr: PlannedRun, quiet: bool, argv: list[str],
                    host: Host | None) -> int:
    """Run a setup command (``argv``: sh here, or ssh running sh on ``host``), its output into its log."""
    log = plan.root / _render(setup.log, _values(plan, pr), f"{plan.path}: [[setup]] log")
    log.parent.mkdir(parents=True, exist_ok=True)
    where = f" (on host {host.name}, ssh {host.target})" if host else ""
    if not quiet:
        print(f"collect: setup{where}: {command}", file=sys.stderr, flush=True)
    with open(log, "ab") as fh:
        fh.write(f"# command: {command}\n".encode())
        if host is not None:
            fh.write(f"# host: {host.name} ({host.role}, ssh {host.target})\n".encode())
        fh.write(f"# start: {datetime.now(timezone.utc).isoformat()}\n".encode())
        fh.flush()
        # Ctrl-C is held back while the setup starts: pressed inside Popen it would leave a started
        # setup nobody stops. Unblocked inside the try below, where a pending Ctrl-C is then raised.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        proc = None
        try:
            # a server a setup starts (pg_ctl) leaves its group; the setup itself is stopped if collect dies
            proc = subprocess.Popen(argv, cwd=plan.path.parent, stdin=subprocess.DEVNULL,
                                    stdout=fh, stderr=subprocess.STDOUT, **lifetime.child(then=default_signals))
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
            lifetime.ended(proc)  # what it left running in its group (a server) is the campaign's to keep
        fh.write(f"# exit code: {rc}\n# end: {datetime.now(timezone.utc).isoformat()}\n".encode())
    if rc != 0:
        print(f"error: setup command exited {rc}{where}: {command} (output in {log}); campaign stopped",
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
    if plan.hosts:
        print("hosts: " + (f"this host ({plan.role}), " if plan.role else "this host, ")
              + ", ".join(f"{h.name} ({h.role}, ssh {h.target})" for h in plan.hosts),
              file=sys.stderr if not dry_run else sys.stdout, flush=True)
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
    if todo and plan.hosts:  # and an unreachable host before the first setup (each run checks again)
        hosts = RemoteHosts(plan.hosts, quiet)
        try:
            hosts.open(check_profiles=False)  # perf is probed before each run, once its server runs
        finally:
            hosts.close()
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
        res = collect_run(req, RemoteHosts(req.hosts, req.quiet) if req.hosts else None)
        if res.interrupted:
            print(f"collect: interrupted; {res.run_dir} recorded as interrupted. Run the same command to resume "
                  f"({len(done) + n - 1} of {total} runs done).", file=sys.stderr)
            return EXIT_INTERRUPTED
        if res.status != "ok":
            why = res.note or f"exit code {res.exit_code}"
            failed.append(f"{res.run_dir}: {why}")
            print(f"collect: run failed: {res.run_dir}: {why}", file=sys.stderr, flush=True)
    if not quiet:
        print(f"collect: {len(todo) - len(failed)} runs ok, {len(failed)} failed, in "
              f"{_fmt_s(time.monotonic() - t0)}; {total - len(done) - len(todo)} not run (--limit)"
              if limit is not None else
              f"collect: {len(todo) - len(failed)} runs ok, {len(failed)} failed, in {_fmt_s(time.monotonic() - t0)}",
              file=sys.stderr)
    for f in failed:
        print(f"  failed: {f}", file=sys.stderr)
    return 1 if failed else 0
