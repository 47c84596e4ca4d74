"""tools/collect's command line: one run (``collect.run``) or a whole campaign (``--plan``, ``collect.plan``)."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import signal
import sys
from pathlib import Path

from kansoku import resources
from kansoku.collect.hosts import RemoteHosts
from kansoku.collect.plan import load_hosts, run_plan
from kansoku.collect.profile import ProfileRequest
from kansoku.collect.run import (
    DEFAULT_MONITORS,
    EXIT_INTERRUPTED,
    MONITOR_NAMES,
    MONITORS,
    CollectError,
    RunRequest,
    collect_run,
    parse_factors,
)

EXIT_MEASUREMENT_LOST = 1  # the benchmark exited 0 but a host stopped measuring: the run is failed


def log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"collect: {msg}", file=sys.stderr, flush=True)


USAGE = """%(prog)s [options] KEY=VALUE... -- COMMAND [ARG...]
       %(prog)s --plan PLAN.toml [--dry-run] [--limit N]"""

DESCRIPTION = """\
Capture a benchmark run as a kansoku run directory: ROOT/KEY=VALUE/.../ named by the factors,
with sar (sa.bin), iostat (iostat_x.txt) and vmstat (vmstat.txt) sampling every second over
exactly the run, the command's stdout+stderr in <prog>.log (pgbench.log), optional strace -c
on a PID, the server's version and non-default settings (--conninfo), and run.toml (start/end,
machine, tool versions, exact command, exit code and status). The command runs in the run
directory. With --hosts (or a plan's [hosts]), the monitors also run on other hosts over ssh and
their files come back under <run>/host=<name>/ with host.toml (role, clock offset, inventory).
With --plan, run a whole campaign (factors x repetitions, randomized with a seed, resumable).
`kansoku collect queries --help`: the benchmark of a query study (statements timed, EXPLAIN).

The manual, installed with kansoku (`kansoku docs collect` prints it):
  the plan format, several hosts:  {collect_md}
  the plan's JSON schema:          {schema}
  example plans (scale-up, perf profile, query study, client/server, ...; `kansoku docs` lists them):
                                   {examples}"""

EXAMPLES = """\
examples:
  %(prog)s --root runs --conninfo 'host=127.0.0.1 port=5433 user=postgres dbname=bench' \\
      workload=read clients=4 rep=1 -- pgbench -n -h 127.0.0.1 -p 5433 -U postgres -c 4 -j 2 -T 60 -P 1 -r bench
  %(prog)s --root runs --output fio_output.json study=fio rw=randread rep=1 -- \\
      fio --name=randread --rw=randread --filename=/tmp/fio.dat --size=256M --bs=8k --direct=1 --output-format=json+
  %(prog)s --plan data/runs/example/scaleup.toml

exit status: the benchmark's exit status; 1 when it exited 0 but a host stopped measuring before
the run ended (a monitor exited early, an ssh connection was lost, files not fetched: the run is
failed and a plan runs it again); 130 if interrupted; 2 bad request (bad factor,
run directory already holds a run, a host that cannot be reached or whose clock is off); 3 the
plan or hosts file has problems (all listed, with lines); 5 a monitor program is missing
(use --no-monitors)"""


def _monitor_names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in MONITOR_NAMES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown monitor(s) {', '.join(unknown)}: of {', '.join(MONITOR_NAMES)}")
    return names


def build_parser(prog: str = "kansoku collect") -> argparse.ArgumentParser:
    description = DESCRIPTION.format(collect_md=resources.doc("collect.md"), schema=resources.PLAN_SCHEMA,
                                     examples=resources.EXAMPLES_DIR)
    ap = argparse.ArgumentParser(prog=prog, usage=USAGE, description=description, epilog=EXAMPLES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("factors", nargs="*", metavar="KEY=VALUE",
                    help="factors naming the run directory, in this order (e.g. workload=read clients=4 rep=1)")
    ap.add_argument("--root", type=Path, default=Path("."), help="directory under which runs are created "
                    "(default: the current directory)")
    ap.add_argument("--output", metavar="NAME", help="file for the command's stdout+stderr "
                    "(default: <program>.log, e.g. pgbench.log)")
    ap.add_argument("--conninfo", metavar="CONNSTR", help="libpq connection string of the server under test: "
                    "SELECT version() and non-default pg_settings are saved (needs psql)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--strace-pid", type=int, metavar="PID", help="run strace -c -f -p PID during the benchmark")
    g.add_argument("--strace-pidfile", type=Path, metavar="FILE",
                   help="like --strace-pid, PID from the first line of FILE (e.g. $PGDATA/postmaster.pid)")
    pf = ap.add_argument_group("CPU profile (perf record -g; collect/profile.py)")
    pt = pf.add_mutually_exclusive_group()
    pt.add_argument("--perf-pid", type=int, metavar="PID", help="profile PID and its processes (the postmaster)")
    pt.add_argument("--perf-pidfile", type=Path, metavar="FILE", help="like --perf-pid, PID from the first line of "
                    "FILE ($PGDATA/postmaster.pid)")
    pt.add_argument("--perf-system-wide", action="store_true", help="profile every CPU (perf record -a)")
    pf.add_argument("--perf-frequency", type=int, default=99, metavar="HZ", help="samples per second (default 99)")
    pf.add_argument("--perf-event", metavar="EVENT", help="perf event (default: cycles if available, else cpu-clock)")
    ap.add_argument("--server-log", type=Path, metavar="FILE",
                    help="the PostgreSQL server log: the part written during the run is copied to server.log "
                         "(checkpoints on the TPS charts; log_checkpoints = on)")
    ap.add_argument("--pg-stat-interval", type=float, default=5.0, metavar="SECONDS",
                    help="with --conninfo: read the checkpointer's counters (pg_stat_checkpointer, or "
                         "pg_stat_bgwriter before PostgreSQL 17) every SECONDS during the benchmark, so that "
                         "checkpoints appear on the TPS charts (default 5; 0: only before and after)")
    ap.add_argument("--settle", type=float, default=1.0, metavar="SECONDS",
                    help="monitors start this long before the benchmark and stop this long after it (default 1)")
    ap.add_argument("--no-monitors", action="store_true", help="do not run sar, iostat, vmstat")
    ap.add_argument("--monitors", metavar="NAMES", type=_monitor_names, default=DEFAULT_MONITORS,
                    help=f"the monitors to run, comma-separated, of {', '.join(MONITOR_NAMES)} "
                         f"(default {','.join(DEFAULT_MONITORS)})")
    ap.add_argument("--pg-stat-replication", action="store_true",
                    help="with --conninfo: pg_stat_replication (the standbys' write/flush/replay lags) before, "
                         "during (every --pg-stat-interval) and after the benchmark")
    ap.add_argument("--hosts", type=Path, metavar="HOSTS.toml",
                    help="other hosts of the run, reached over ssh ([hosts.NAME] tables as in a plan, "
                         f"{resources.doc('collect.md')}): their monitors, clock offset and inventory go to "
                         "<run>/host=NAME/")
    ap.add_argument("--role", help="role of this host in the run (server, client, ...; run.toml role)")
    ap.add_argument("--replace", action="store_true",
                    help="if the run directory already holds a run, move it aside (hidden .attempt dir) and rerun")
    ap.add_argument("--note", help="free text stored as notes in run.toml")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p = ap.add_argument_group("campaign mode")
    p.add_argument("--plan", type=Path, metavar="PLAN.toml", help="run the campaign described by this plan")
    p.add_argument("--dry-run", action="store_true", help="with --plan: print the runs in order, run nothing")
    p.add_argument("--limit", type=int, metavar="N", help="with --plan: stop after N runs")
    return ap


def main(argv: list[str] | None = None, prog: str = "kansoku collect") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1:]
    ap = build_parser(prog)
    args = ap.parse_args(argv)
    # Ctrl-C works between runs too, even if our parent started us with SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if args.plan is not None:
            if command or args.factors:
                ap.error("--plan takes no KEY=VALUE factors and no command")
            try:
                return run_plan(args.plan, dry_run=args.dry_run, limit=args.limit, quiet=args.quiet)
            except BrokenPipeError:  # --dry-run | head
                sys.stdout = None
                return 0
        if not command:
            ap.error("give the benchmark command after --")
        if args.pg_stat_interval < 0:
            ap.error("--pg-stat-interval must be 0 (none) or a number of seconds")
        if args.pg_stat_replication and not args.conninfo:
            ap.error("--pg-stat-replication needs --conninfo (the primary psql reads pg_stat_replication from)")
        if args.role is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", args.role):
            ap.error(f"--role {args.role!r}: a name like server, client or standby")
        chosen = () if args.no_monitors else args.monitors
        missing = [a[0] for n, a, _ in MONITORS if n in chosen and shutil.which(a[0]) is None]
        if args.strace_pid is not None or args.strace_pidfile is not None:
            missing += ["strace"] if shutil.which("strace") is None else []
        if missing:
            print(f"error: {', '.join(missing)} not found in PATH (Debian: apt-get install sysstat procps strace)",
                  file=sys.stderr)
            return 5
        hosts, role = [], args.role
        if args.hosts is not None:
            hosts, file_role = load_hosts(args.hosts)
            role = role or file_role
        req = RunRequest(root=args.root, factors=parse_factors(args.factors), command=command,
                         hosts=hosts, role=role, pg_stat_replication=args.pg_stat_replication,
                         output=args.output, conninfo=args.conninfo, strace_pid=args.strace_pid,
                         strace_pidfile=args.strace_pidfile, server_log=args.server_log, settle_s=args.settle,
                         pg_stat_interval_s=args.pg_stat_interval,
                         monitors=chosen, replace=args.replace, note=args.note, quiet=args.quiet,
                         profile=ProfileRequest(args.perf_frequency, args.perf_pid, args.perf_pidfile,
                                                args.perf_system_wide, args.perf_event)
                         if (args.perf_pid or args.perf_pidfile or args.perf_system_wide) else None)
        log(f"run {req.run_dir}: {shlex.join(command)}", args.quiet)
        res = collect_run(req, RemoteHosts(req.hosts, req.quiet) if req.hosts else None)
    except CollectError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        print("collect: interrupted (between runs); run the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if res.status == "failed" and res.exit_code == 0:  # the benchmark ran, a host stopped measuring
        print(f"collect: run failed: {res.run_dir}: {res.note}", file=sys.stderr)
        return EXIT_MEASUREMENT_LOST
    log(f"{res.status} (exit code {res.exit_code}, {res.seconds:.1f} s): {res.run_dir}", args.quiet)
    return EXIT_INTERRUPTED if res.interrupted else res.exit_code
