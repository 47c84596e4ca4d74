"""Collecting on several hosts: the monitors of a run on every host of the plan, over SSH.

A run is measured from one host (the one tools/collect runs on; its files stay at the top of the run
directory, run.toml describes it). Every other host of the plan (``[hosts.NAME]`` with ``ssh = "..."``, or
``tools/collect --hosts FILE``) is reached with the OpenSSH client and gets its own subdirectory,
``<run>/host=<name>/`` (the layout ingest reads: docs/ingest.md), holding what its monitors wrote and
``host.toml``::

    hostname = "dbserver"          # what `hostname` printed on that host
    role = "server"
    clock_offset_s = 0.0021        # that host's clock minus this host's, measured at the start of the run
    clock_offset_error_s = 0.0004  # half the round trip of the best of the measurements
    [machine]  [versions]  [server]   # the same probes as run.toml's, run on that host
    [collect]                      # ssh target, monitor commands, how they stopped, errors, times

How, step by step. dbt2's ``dbt2-run`` starts its stats collectors on the client and database hosts with
``ssh host "... &"`` and rsyncs ``<host>/`` directories back afterwards; this is the same idea with the failure
cases closed: dbt2 turns host key checking off (``StrictHostKeyChecking=no``, ``UserKnownHostsFile=/dev/null``),
finds an unreachable host only when its collector fails to start, measures no clock offset, and stops remote
collectors only from its own Ctrl-C trap, so a killed driver leaves them running.

1. **Reach every host before anything runs.** One master connection per host (``ssh -N`` with
   ``ControlMaster=yes``, a child of collect named to its lifeline (collect/lifetime.py), so it ends with collect
   however collect ends; its control socket in a temporary directory the lifeline removes too; ``BatchMode=yes``:
   keys from the agent, ``identity`` or the ssh config, never a password prompt). A host that cannot be reached is a
   :class:`CollectError` (exit 2) naming the host, its target and ssh's own words, raised before the run directory
   is created. Every later command goes through the master (no new handshake during the benchmark).
2. **Clocks.** Over one session, the remote ``date +%s.%N`` is read 7 times (Cristian's method: the offset from
   the midpoint of each round trip, the error half the round trip, the sample with the shortest round trip
   kept). A host whose clock is further from this host's than the monitors' sampling interval (1 s) is an
   error naming the host: its samples could not be lined up with the benchmark's.
3. **Inventory:** one ssh command prints the files a machine describes itself in (os-release, cpuinfo,
   meminfo, mounts, /sys/block) and the tools' versions; ``run.machine_from`` reads them as it reads the local
   ones. With ``conninfo``, psql runs on that host: ``[server]``, ``pg_settings.csv`` and the pg_stat snapshots.
4. **Monitors:** one long ssh session per host runs a small ``sh`` supervisor in a fresh ``mktemp -d``
   directory: it starts each monitor in its own session (``setsid``, ``LC_ALL=C S_TIME_FORMAT=ISO``), says
   ``ready`` and waits on its standard input. A ``stop`` line — or the end of its input, which is what it sees
   when this collect dies, is killed or loses the connection — stops every monitor's process group (SIGINT,
   SIGTERM after 3 s, SIGKILL after 2 s more), renders ``sa.bin`` with that host's ``sadf`` and exits. So the
   monitors stop on every host whatever happens to this process. A host with ``perf_pidfile`` (probed when the
   host is reached: :func:`perf_probe_script`) runs ``perf record -g`` the same way, stopped first with more
   time, then ``perf script | gzip`` there; with ``server_log`` the part of that log written meanwhile is
   copied to ``server.log``. Every file name reaching the remote shell is quoted (``shlex.quote``).
5. **Fetch:** ``tar`` of the remote directory into ``host=<name>/``, then the remote directory is removed and
   collect says ``fetched``. A supervisor whose input ended without ``stop``, or after ``stop`` without
   ``fetched`` (this collect killed, the connection lost), writes ``.kansoku-orphaned`` into its directory once
   its monitors stopped: nobody will fetch it, and the next collect to that host removes such directories before
   its inventory (``[collect] removed_orphaned``).

The ssh sessions run in their own session (Ctrl-C at the terminal reaches collect, which stops them in order).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.collect import lifetime, profile
from kansoku.collect import run as R
from kansoku.collect.pg_stat_series import PgStatSeries
from kansoku.collect.processes import STOP_SIGNALS, stop_group
from kansoku.collect.server_log import OUTPUT as SERVER_LOG_OUTPUT

SAMPLING_INTERVAL_S = 1.0  # the monitors sample every second (run.MONITORS)
CLOCK_SAMPLES = 7
HOST_TOML = "host.toml"
HOST_MONITORS = R.MONITOR_NAMES  # what a host may run; by default R.DEFAULT_MONITORS
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
               "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR")
SEP = "@@kansoku@@"
CONTROL_PREFIX = "kansoku-ssh-"  # the ssh control sockets' temporary directory: kansoku-ssh-<collect's PID>-XXXX


@dataclass
class Host:
    """One host of a plan's [hosts] (docs: plan.py). ``target`` None: the host collect runs on."""

    name: str
    role: str
    target: str | None = None
    identity: str | None = None
    ssh_config: str | None = None
    monitors: tuple[str, ...] = R.DEFAULT_MONITORS
    conninfo: str | None = None
    strace_pidfile: str | None = None
    pg_stat_replication: bool = False
    # perf record -g on that host (collect/profile.py, run there by the supervisor): the postmaster whose
    # postmaster.pid this is and its processes, or every CPU
    perf_pidfile: str | None = None
    perf_system_wide: bool = False
    perf_frequency: int = 99
    perf_event: str | None = None
    server_log: str | None = None  # the PostgreSQL log on that host: the part written during the run

    @property
    def profiled(self) -> bool:
        return bool(self.perf_pidfile) or self.perf_system_wide

    @property
    def dir_name(self) -> str:
        return f"host={self.name}"


class SshError(R.CollectError):
    """A host cannot be reached or answered wrongly: exit 2, naming the host and ssh's words."""


def _words(stderr: str, limit: int = 400) -> str:
    text = " ".join(stderr.split())
    return text[:limit] if text else "no message"


class Ssh:
    """The OpenSSH client for one host, through a master connection opened by :meth:`open`."""

    def __init__(self, host: Host, control_dir: Path, index: int):
        self.host = host
        self.control = control_dir / f"{index}.sock"
        self.opened = False
        self.master: subprocess.Popen | None = None

    def _base(self) -> list[str]:
        argv = ["ssh", *SSH_OPTIONS, "-o", f"ControlPath={self.control}"]
        if self.host.ssh_config:
            argv += ["-F", str(Path(self.host.ssh_config).expanduser())]
        if self.host.identity:
            argv += ["-i", str(Path(self.host.identity).expanduser())]
        return argv

    def argv(self, script: str) -> list[str]:
        """ssh running ``sh -c SCRIPT`` on the host (through the master connection)."""
        return self._base() + ["-o", "ControlMaster=no", "-T", str(self.host.target), "sh -c " + shlex.quote(script)]

    def where(self) -> str:
        return f"host {self.host.name!r} (ssh {self.host.target})"

    def open(self, timeout: float = 40.0) -> None:
        """The master connection; an unreachable host raises SshError with ssh's message. The master is collect's
        child in a process group named to collect's lifeline (not an ``ssh -f`` daemon), so that it ends with
        collect however collect ends; it is ready when its control socket exists."""
        err = tempfile.TemporaryFile()
        try:
            self.master = subprocess.Popen(self._base() + ["-o", "ControlMaster=yes", "-N", str(self.host.target)],
                                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                           **lifetime.child(then=R.default_signals))
        except OSError as exc:
            err.close()
            raise SshError(f"{self.where()}: ssh could not be started: {exc}; the run was not started") from None
        deadline = time.monotonic() + timeout
        with err:
            while not self.control.exists():
                if self.master.poll() is not None:
                    err.seek(0)
                    words = err.read().decode(errors="replace")
                    rc = self.master.returncode
                    lifetime.ended(self.master)
                    self.master = None
                    raise SshError(f"{self.where()}: cannot be reached: ssh says: {_words(words)} (ssh exit status "
                                   f"{rc}; keys come from the ssh agent, identity or the ssh "
                                   f"config, BatchMode: no password prompt); the run was not started")
                if time.monotonic() > deadline:
                    self._end_master()
                    raise SshError(f"{self.where()}: cannot be reached: no answer in {timeout:g} s; the run was not "
                                   "started")
                time.sleep(0.02)
        self.opened = True

    def run(self, script: str, timeout: float = 60, input: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(script), input=input, capture_output=True, timeout=timeout,
                              stdin=None if input is not None else subprocess.DEVNULL, start_new_session=True)

    def close(self) -> None:
        if self.opened:
            try:
                subprocess.run(self._base() + ["-O", "exit", str(self.host.target)], capture_output=True, timeout=15,
                               stdin=subprocess.DEVNULL)
            finally:
                self.opened = False
        self._end_master()

    def _end_master(self) -> None:
        """Wait for the master to leave after ``-O exit`` (else stop it as the lifeline would), and reap it."""
        if self.master is None:
            return
        try:
            self.master.wait(timeout=5)
        except subprocess.TimeoutExpired:
            stop_group(self.master, STOP_SIGNALS)
        lifetime.ended(self.master)
        self.master = None

    def psql(self, conninfo: str, sql: str) -> subprocess.CompletedProcess:
        """psql --csv on the host, as run._psql runs it here (text output)."""
        script = ("PGAPPNAME=kansoku-collect PGCONNECT_TIMEOUT=10 exec psql -X -q --csv -d "
                  f"{shlex.quote(conninfo)} -c {shlex.quote(sql)}")
        p = self.run(script, timeout=40)
        return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(errors="replace"),
                                           p.stderr.decode(errors="replace"))


# ---------------------------------------------------------------- clocks

def clock_offset(argv: list[str], samples: int = CLOCK_SAMPLES, timeout: float = 20.0) -> tuple[float, float]:
    """(offset, error) in seconds of the clock that ``argv`` reads (a shell printing ``date +%s.%N`` for each
    line it is given) against this host's: the remote time minus the midpoint of the round trip, for the
    round trip that was shortest; the error is half that round trip."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    best: tuple[float, float] | None = None
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for _ in range(samples):
            t0 = time.time()
            proc.stdin.write(b"t\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            t1 = time.time()
            try:
                remote = float(line.decode().strip())
            except ValueError:
                raise ValueError(f"'date +%s.%N' printed {line[:60]!r}") from None
            offset, error = remote - (t0 + t1) / 2, (t1 - t0) / 2
            if best is None or error < best[1]:
                best = (offset, error)
    except (BrokenPipeError, OSError) as exc:
        raise ValueError(f"the clock could not be read: {exc}") from None
    finally:
        timer.cancel()
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert best is not None
    return best


CLOCK_SCRIPT = "while read x; do date +%s.%N; done"


def check_clock(name: str, where: str, offset: float, error: float,
                interval: float = SAMPLING_INTERVAL_S) -> None:
    if abs(offset) > interval:
        raise SshError(f"{where}: its clock is {offset:+.3f} s (± {error:.3f} s) from this host's, more than the "
                       f"monitors' sampling interval ({interval:g} s): the samples of the two hosts could not be "
                       f"lined up; synchronise the clocks (chrony or systemd-timesyncd) and run again")


# ---------------------------------------------------------------- inventory

def _inventory_script(version_names: list[str]) -> str:
    files = "/etc/os-release /proc/cpuinfo /proc/meminfo /proc/self/mounts"
    lines = [
        f'for f in {files}; do echo "{SEP} file $f"; cat "$f" 2>/dev/null; done',
        'for d in /sys/block/*; do [ -e "$d" ] || continue; n=${d##*/}; echo "{SEP} block $n"; '
        'for x in size queue/rotational device/model; do echo "{SEP} file /sys/block/$n/$x"; cat "$d/$x" 2>/dev/null; '
        'done; done'.replace("{SEP}", SEP),
        f'echo "{SEP} fact hostname"; hostname',
        f'echo "{SEP} fact kernel"; uname -s -r -v -m',
        f'echo "{SEP} fact cpu_count"; getconf _NPROCESSORS_ONLN',
        f'echo "{SEP} fact nproc"; nproc 2>/dev/null',
        f'echo "{SEP} fact virtualization"; systemd-detect-virt 2>/dev/null',
        *(f'echo "{SEP} fact virtualization_{layer}"; systemd-detect-virt --{layer} 2>/dev/null'
          for layer in R.VIRTUALIZATION_LAYERS),
        f'echo "{SEP} fact localtime"; readlink /etc/localtime 2>/dev/null',
        f'echo "{SEP} fact timezone"; cat /etc/timezone 2>/dev/null',
        f'echo "{SEP} fact tmp"; echo "${{TMPDIR:-/tmp}}"',
    ]
    for name in version_names:
        argv = R.VERSION_PROBES[name]
        lines.append(f'echo "{SEP} version {name}"; command -v {shlex.quote(argv[0])} >/dev/null 2>&1 && '
                     f'{shlex.join(argv)} 2>&1 | head -n 5')
    return "\n".join(lines)


def parse_inventory(text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """([machine], [versions]) from the output of the inventory script."""
    files: dict[str, str] = {}
    facts: dict[str, str] = {}
    versions: dict[str, str] = {}
    blocks: list[str] = []
    kind = name = None
    buf: list[str] = []

    def flush() -> None:
        body = "\n".join(buf)
        if kind == "file":
            files[name] = body + "\n" if body else ""
        elif kind == "fact":
            facts[name] = body.strip()
        elif kind == "version":
            first = next((ln.strip() for ln in buf if ln.strip()), "")
            if first:
                versions[name] = first
        elif kind == "block":
            blocks.append(name)

    for line in text.splitlines():
        if line.startswith(SEP + " "):
            flush()
            _, kind, name = line.split(" ", 2)
            buf = []
        else:
            buf.append(line)
    flush()
    tz = facts.get("localtime", "")
    tz = tz.split("zoneinfo/", 1)[1] if "zoneinfo/" in tz else facts.get("timezone") or None
    num = lambda k: int(facts[k]) if facts.get(k, "").isdigit() else None  # noqa: E731
    machine = R.machine_from(lambda p: files.get(p, ""), hostname=facts.get("hostname", ""),
                             kernel=facts.get("kernel", ""), cpu_count=num("cpu_count"), nproc=num("nproc"),
                             virtualization=facts.get("virtualization") or None, timezone=tz,
                             virtualization_layers={layer: facts.get(f"virtualization_{layer}") or None
                                                    for layer in R.VIRTUALIZATION_LAYERS},
                             path=facts.get("tmp") or None, block_devices=sorted(blocks))
    return machine, versions


# ---------------------------------------------------------------- perf on a host

def perf_probe_script(host: Host) -> str:
    """The sh program that checks perf can record on the host (profile.probe, there) and, with a pidfile, that
    the process it names runs. Prints ``ok EVENT`` (the event perf really recorded), or ``fail WORDS`` and
    ``paranoid N``, or ``nopid WORDS``."""
    events = " ".join(shlex.quote(e) for e in profile.candidate_events(host.perf_event))
    check_pid = ""
    if host.perf_pidfile and not host.perf_system_wide:
        f = shlex.quote(host.perf_pidfile)
        check_pid = (f'pid=$(head -n 1 {f} 2>/dev/null)\n'
                     f'if [ -z "$pid" ]; then echo "nopid cannot read a PID from "{f}; exit 0; fi\n'
                     f'if [ ! -d "/proc/$pid" ]; then echo "nopid no process $pid to profile (is the server '
                     f'running?)"; exit 0; fi\n')
    return f"""set -u
if ! command -v perf >/dev/null 2>&1; then echo "fail perf not found in PATH (Debian: apt-get install linux-perf)"; exit 0; fi
{check_pid}t=$(mktemp -d "${{TMPDIR:-/tmp}}/kansoku-perf.XXXXXX") || exit 97
for ev in {events}; do
    if perf record -q -g -F {int(host.perf_frequency)} -e "$ev" -o "$t/probe.data" -- true 2>"$t/err" </dev/null; then
        real=$(perf evlist -i "$t/probe.data" 2>/dev/null | head -n 1 | cut -d: -f1)
        echo "ok ${{real:-$ev}}"; rm -rf "$t"; exit 0
    fi
done
echo "fail $(head -c 400 "$t/err" | tr '\\n' ' ')"
echo "paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
rm -rf "$t"
"""


def perf_target(host: Host) -> str:
    """The perf record options naming what it profiles, as sh words (``$pids``: set by the supervisor)."""
    return "-a" if host.perf_system_wide else '-p "$pids"'


def perf_argv_text(host: Host, event: str) -> str:
    return (f"perf record -g -F {int(host.perf_frequency)} -e {shlex.quote(event)} {perf_target(host)} "
            f"-o {profile.DATA}")


# ---------------------------------------------------------------- monitors on a host

# what a supervisor whose input ended without "stop" leaves in its directory (the time, UTC): no collect will
# fetch that directory; the next collect to the host removes it (SWEEP_SCRIPT)
ORPHANED = ".kansoku-orphaned"
SWEEP_SCRIPT = (f'for d in "${{TMPDIR:-/tmp}}"/kansoku-collect.*; do '
                f'if [ -f "$d/{ORPHANED}" ] && rm -rf "$d"; then echo "$d"; fi; done; true')


def supervisor_script(host: Host, pidfile: str | None, perf_event: str | None = None) -> str:
    """The sh program that runs a host's monitors for one run (module docstring, step 4); with ``perf_event``,
    perf record -g too (stopped apart, with more time to write its data, then ``perf script | gzip``), and with
    the host's ``server_log`` the part of that log written while the monitors ran."""
    starts = []
    log_start = log_stop = ""
    if host.server_log:
        f = shlex.quote(host.server_log)
        log_start = (f'sl_start=$(wc -c < {f} 2>/dev/null) || {{ sl_start=""; echo "error server_log: cannot read '
                     f'"{f}; }}\n')
        log_stop = f"""if [ -n "$sl_start" ]; then
    if sl_size=$(wc -c < {f} 2>/dev/null); then
        sl_from=$sl_start
        if [ "$sl_size" -lt "$sl_start" ]; then sl_from=0; echo "serverlog shrank"; fi
        if tail -c +$((sl_from + 1)) {f} > {SERVER_LOG_OUTPUT} 2>/dev/null; then
            echo "serverlog bytes $((sl_size - sl_from))"
        else echo "error server_log: cannot copy "{f}; fi
    else echo "error server_log: cannot read "{f}" any more"; fi
fi
"""
    for name, argv, out in R.MONITORS:
        if name in host.monitors:
            starts.append(f"start {name} {out or '/dev/null'} /dev/null {shlex.join(argv)}")
    if pidfile:
        starts.append(f'pid=$(head -n 1 {shlex.quote(pidfile)} 2>/dev/null)\n'
                      f'if [ -n "$pid" ]; then start strace /dev/null strace_stderr.txt strace -c -f -p "$pid" '
                      f'-o strace_c.txt; else echo "error strace: no PID in "{shlex.quote(pidfile)}; fi')
    perf_start = perf_stop = ""
    if perf_event:
        if not host.perf_system_wide:
            f = shlex.quote(host.perf_pidfile or "")
            # perf -p follows the processes forked after it attached, not the children already running: named too
            perf_start = (f'pid=$(head -n 1 {f} 2>/dev/null); pids=""\n'
                          f'if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then pids=$pid; '
                          f'for c in $(ps -o pid= --ppid "$pid" 2>/dev/null); do pids="$pids,$c"; done; fi\n'
                          'if [ -z "$pids" ]; then echo "error perf: no process to profile in "' + f + '; else\n')
        perf_start += (f"start perf /dev/null perf-record.log {perf_argv_text(host, perf_event)}\n"
                       'if [ -n "${pid_perf:-}" ]; then\n'
                       '    names=${names% perf}; perfs=perf  # stopped apart, before the monitors\n'
                       '    # wait until perf has opened its events: the first connections are then followed\n'
                       '    i=0; while [ "$i" -lt 100 ] && alive "$pid_perf"; do\n'
                       '        if ls -l "/proc/$pid_perf/fd" 2>/dev/null | grep -q perf_event; then break; fi\n'
                       '        sleep 0.1; i=$((i + 1))\n    done\nfi\n')
        if not host.perf_system_wide:
            perf_start += "fi\n"
        perf_stop = f"""if [ -n "$perfs" ] && [ -z "$orphaned" ]; then
    if [ -s {profile.DATA} ]; then
        {{ perf script -i {profile.DATA} 2> .perf-script.err; echo $? > .perf-script.rc; }} | gzip -c > {profile.OUTPUT}
        gz=$?; rc=$(cat .perf-script.rc 2>/dev/null)
        if [ "$rc" = 0 ] && [ "$gz" = 0 ]; then rm -f {profile.DATA}; echo "perfscript ok"
        else echo "error perf: perf script exited $rc, gzip $gz: $(head -c 300 .perf-script.err | tr '\\n' ' ')"; rm -f {profile.OUTPUT}; fi
        rm -f .perf-script.err .perf-script.rc
    else echo "error perf: perf record wrote no {profile.DATA}: $(head -c 300 perf-record.log | tr '\\n' ' ')"; fi
fi
"""
    env = " ".join(f"{k}={v}" for k, v in R.MONITOR_ENV.items())
    render = " ".join(f"{k}={v}" for k, v in R.MONITOR_ENV.items())
    return f"""set -u
# the session may end at any moment (collect killed, the connection lost): a write to the closed channel must
# not kill this shell before its monitors are stopped and its directory is marked
trap '' PIPE HUP
d=$(mktemp -d "${{TMPDIR:-/tmp}}/kansoku-collect.XXXXXX") || exit 97
cd "$d" || exit 97
echo "dir $d"
export {env}
names=""; perfs=""
# an asynchronous command of a non-interactive sh ignores SIGINT, and this shell SIGPIPE and SIGHUP: give the
# monitors the defaults back
ds=""; if env --default-signal=INT,QUIT,PIPE,HUP true 2>/dev/null; then ds="env --default-signal=INT,QUIT,PIPE,HUP"; fi
start() {{
    n=$1; o=$2; e=$3; shift 3
    if ! command -v "$1" >/dev/null 2>&1; then echo "error $n: $1 not found in PATH"; return; fi
    $ds setsid "$@" >"$o" 2>"$e" </dev/null &
    eval "pid_$n=$!"
    names="$names $n"
    echo "started $n $!"
}}
alive() {{  # a process that has not exited (a zombie waiting for its parent counts as gone)
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case "$st" in Z*|"") return 1;; esac
}}
if ! command -v ps >/dev/null 2>&1; then alive() {{ sleep 1; return 1; }}; fi
settle() {{  # wait up to $2 tenths of a second until none of the processes named $1 is alive
    i=0
    while [ "$i" -lt "$2" ]; do
        any=""
        for n in $1; do eval "p=\\$pid_$n"; if alive "$p"; then any=1; fi; done
        [ -z "$any" ] && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}}
stop_all() {{  # SIGINT to the process group of each process named $1 (default: the monitors), SIGTERM after $2
    set_names=${{1-$names}}; t_int=${{2:-30}}; t_term=${{3:-20}}  # tenths (3 s), SIGKILL after $3 (2 s) more
    for n in $set_names; do
        eval "p=\\$pid_$n"
        if alive "$p"; then kill -INT "-$p" 2>/dev/null; eval "sig_$n=INT"; else eval "sig_$n=exited"; fi
    done
    if ! settle "$set_names" "$t_int"; then
        for n in $set_names; do
            eval "p=\\$pid_$n"; if alive "$p"; then kill -TERM "-$p" 2>/dev/null; eval "sig_$n=TERM"; fi
        done
        if ! settle "$set_names" "$t_term"; then
            for n in $set_names; do eval "p=\\$pid_$n"; if alive "$p"; then eval "sig_$n=KILL"; fi; done
        fi
    fi
    for n in $set_names; do  # the rest of each group (sar's sadc) goes too
        eval "p=\\$pid_$n"; kill -KILL "-$p" 2>/dev/null; wait "$p" 2>/dev/null
        eval "echo \\"stopped $n \\$sig_$n\\""
    done
}}
{log_start}{chr(10).join(starts)}
{perf_start}echo ready
# a "stop" line: collect fetches this directory next; the end of the input instead (collect killed, the
# connection lost): nobody will, and the directory is marked for the next collect to this host to remove
orphaned=""
read line || orphaned=1
# perf first, with time to write its data (SIGINT: 30 s, SIGTERM: 5 s more), as collect/profile.py does here
if [ -n "$perfs" ]; then stop_all "$perfs" 300 50; fi
stop_all
{log_stop}{perf_stop}if [ -s sa.bin ]; then
    if command -v sadf >/dev/null 2>&1; then
        {render} sadf -j sa.bin -- -A > sadf.json 2> .sadf.err || {{ echo "error sadf_json: $(head -c 300 .sadf.err | tr '\\n' ' ')"; rm -f sadf.json; }}
        rm -f .sadf.err
    else echo "error sadf_json: sadf not found in PATH"; fi
fi
echo done
# after "stop", collect fetches this directory, removes it and says "fetched"; an input that ends first (collect
# killed meanwhile) leaves it to nobody: marked like the others
if [ -z "$orphaned" ]; then read line || line=""; [ "$line" = fetched ] || orphaned=1; fi
if [ -n "$orphaned" ] && [ -d "$d" ]; then date -u +%Y-%m-%dT%H:%M:%SZ > "$d/{ORPHANED}"; fi
"""


@dataclass
class RemoteHost:
    """One host of a run: its ssh, what was measured there and what goes into its host.toml."""

    host: Host
    ssh: Ssh
    offset: float | None = None
    error: float | None = None
    machine: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    server: dict[str, Any] | None = None
    collect: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # what makes the run failed (also among errors): a monitor that ended before the run did, the supervisor's
    # session lost, the files not fetched
    failures: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    remote_dir: str | None = None
    started: dict[str, str] = field(default_factory=dict)
    series: list[Any] = field(default_factory=list)
    perf_event: str | None = None  # the event perf records there (probed when the host was reached)
    _lines: list[str] = field(default_factory=list)
    _reader: threading.Thread | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _done: threading.Event = field(default_factory=threading.Event)  # "done" said, or the session ended


class RemoteHosts:
    """The other hosts of one run (module docstring). Use :meth:`open` before the run directory exists, then the
    steps in order; :meth:`close` (always, in a finally) stops what is still running and closes the masters."""

    def __init__(self, hosts: list[Host], quiet: bool = False):
        self.quiet = quiet
        self.run_dir = Path(".")
        self.control_dir: lifetime.TempDir | None = None
        self.lock: lifetime.RunLock | None = None  # the run directory's (run._measure): the fetch inherits it
        self.hosts: list[RemoteHost] = []
        self._wanted = [h for h in hosts if h.target]

    def __bool__(self) -> bool:
        return bool(self._wanted)

    def open(self, check_profiles: bool = True) -> None:
        """Reach every host and measure its clock, and (``check_profiles``) check that perf can record where a
        host is profiled; SshError (exit 2) names the first that fails."""
        if not self._wanted:
            return
        if shutil.which("ssh") is None:
            raise R.CollectError("ssh not found in PATH (Debian: apt-get install openssh-client); the plan has "
                                 "hosts reached over ssh: " + ", ".join(h.name for h in self._wanted))
        lifetime.sweep(CONTROL_PREFIX)  # what collects killed with their lifeline left
        self.control_dir = lifetime.TempDir(CONTROL_PREFIX)
        for i, h in enumerate(self._wanted):
            ssh = Ssh(h, self.control_dir.path, i)
            rh = RemoteHost(h, ssh)
            self.hosts.append(rh)
            ssh.open()
            try:
                rh.offset, rh.error = clock_offset(ssh.argv(CLOCK_SCRIPT))
            except ValueError as exc:
                raise SshError(f"{ssh.where()}: its clock could not be read: {exc}; the run was not started") from None
            check_clock(h.name, ssh.where(), rh.offset, rh.error)
            if h.profiled and check_profiles:
                rh.perf_event = self._probe_perf(rh)
            R._log(f"host {h.name} ({h.role}, ssh {h.target}): reached; clock offset {rh.offset * 1000:+.1f} ms "
                   f"(± {rh.error * 1000:.1f} ms)", self.quiet)

    @staticmethod
    def _probe_perf(rh: RemoteHost) -> str:
        """The event perf records on the host (profile.probe, there); SshError when it cannot record or the
        server to profile does not run, before anything is started."""
        try:
            p = rh.ssh.run(perf_probe_script(rh.host), timeout=90)
        except (subprocess.SubprocessError, OSError) as exc:
            raise SshError(f"{rh.ssh.where()}: perf could not be probed: {exc}; the run was not started") from None
        said = dict(ln.split(" ", 1) if " " in ln else (ln, "") for ln in
                    p.stdout.decode(errors="replace").splitlines() if ln.strip())
        if p.returncode == 0 and said.get("ok"):
            return said["ok"].strip()
        if "nopid" in said:
            raise SshError(f"{rh.ssh.where()}: perf: {said['nopid']}; the run was not started")
        words = said.get("fail") or _words(p.stderr.decode(errors="replace"))
        raise SshError(f"{rh.ssh.where()}: perf cannot record there (event "
                       f"{', '.join(profile.candidate_events(rh.host.perf_event))}): {words.strip() or 'no output'}; "
                       f"{profile.paranoid_hint(said.get('paranoid', '').strip() or None)}; the run was not started")

    def inventory(self, run_dir: Path) -> None:
        """[machine], [versions] and (with a conninfo) [server] of every host; creates host=<name>/."""
        self.run_dir = run_dir
        for rh in self.hosts:
            h = rh.host
            hd = run_dir / h.dir_name
            hd.mkdir(exist_ok=True)
            tools = ["sysstat", "procps_vmstat"] if h.monitors else []
            tools += ["strace"] if h.strace_pidfile else []
            tools += ["psql", "postgres"] if h.conninfo else []
            tools += ["perf"] if rh.perf_event else []
            self._sweep(rh)
            try:
                p = rh.ssh.run(_inventory_script(tools), timeout=60)
                rh.machine, rh.versions = parse_inventory(p.stdout.decode(errors="replace"))
            except (subprocess.SubprocessError, OSError) as exc:
                rh.errors.append(f"inventory: {exc}")
            if rh.host.conninfo:
                rh.server = R.server_info(rh.host.conninfo, hd, psql=rh.ssh.psql)
                if "capture_error" in rh.server:
                    R._log(f"warning: host {rh.host.name}: server capture failed: {rh.server['capture_error']}",
                           self.quiet)

    def _sweep(self, rh: RemoteHost) -> None:
        """Remove the directories that killed collects left on the host (marked ORPHANED by their supervisor
        when its input ended without "stop"; never a directory whose supervisor still runs)."""
        try:
            p = rh.ssh.run(SWEEP_SCRIPT, timeout=60)
        except (subprocess.SubprocessError, OSError) as exc:
            rh.errors.append(f"removing what killed collects left: {exc}")
            return
        removed = [ln for ln in p.stdout.decode(errors="replace").splitlines() if ln.strip()]
        if removed:
            rh.collect["removed_orphaned"] = removed
            R._log(f"host {rh.host.name}: removed {len(removed)} director{'y' if len(removed) == 1 else 'ies'} "
                   f"that a killed or disconnected collect left ({', '.join(removed)})", self.quiet)

    def start_monitors(self, timeout: float = 30.0) -> list[str]:
        """Start every host's supervisor and wait until each says ready; the problems, as 'host: words'."""
        for rh in self.hosts:
            argv = rh.ssh.argv(supervisor_script(rh.host, rh.host.strace_pidfile, rh.perf_event))
            rh.collect["collectors_start"] = R._now()
            try:
                rh.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, start_new_session=True)
            except OSError as exc:
                self._fail(rh, f"monitors: {exc}")
                continue
            rh._reader = threading.Thread(target=self._read, args=(rh,), daemon=True)
            rh._reader.start()
        deadline = time.monotonic() + timeout
        for rh in self.hosts:
            if rh.proc is not None and not rh._ready.wait(max(0.0, deadline - time.monotonic())):
                rh.errors.append("monitors: the host did not say ready in time")
            elif rh.proc is not None and "ready" not in rh._lines:
                self._fail(rh, "monitors: the supervisor's ssh session ended before its monitors started "
                               f"({self._session_words(rh)})")
        out = []
        for rh in self.hosts:
            for e in rh.errors:
                out.append(f"host {rh.host.name}: {e}")
        return out

    def _read(self, rh: RemoteHost) -> None:
        assert rh.proc is not None and rh.proc.stdout is not None
        for raw in rh.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            rh._lines.append(line)
            word, _, rest = line.partition(" ")
            if word == "dir":
                rh.remote_dir = rest
            elif word == "started":
                n, _, pid = rest.partition(" ")
                rh.started[n] = pid
            elif word == "error":
                rh.errors.append(rest)
            elif word == "serverlog":
                what, _, value = rest.partition(" ")
                if what == "bytes" and value.isdigit():
                    rh.collect["server_log_bytes"] = int(value)
                elif what == "shrank":
                    rh.collect["server_log_note"] = ("the log shrank during the run (rotated or truncated): copied "
                                                     "from its start")
            elif word == "ready":
                rh._ready.set()
            elif word == "done":
                rh._done.set()
        rh._ready.set()
        rh._done.set()

    def snapshot(self, moment: str) -> None:
        for rh in self.hosts:
            if rh.host.conninfo:
                missing = R.snapshot_pg_stat(rh.host.conninfo, self._dir(rh), moment, psql=rh.ssh.psql,
                                             replication=rh.host.pg_stat_replication)
                if moment == "before":
                    rh.collect["pg_stat_missing"] = missing

    def start_series(self, interval_s: float) -> None:
        for rh in self.hosts:
            if not rh.host.conninfo or interval_s <= 0:
                continue
            rh.series = [PgStatSeries(rh.host.conninfo, self._dir(rh), interval_s, rh.ssh.psql)]
            if rh.host.pg_stat_replication:
                rh.series.append(PgStatSeries(rh.host.conninfo, self._dir(rh), interval_s, rh.ssh.psql,
                                              *R.REPLICATION_VIEW))
            for s in rh.series:
                s.start()

    def stop_series(self) -> None:
        for rh in self.hosts:
            for s in rh.series:
                rh.collect.update(s.stop())
            rh.series = []

    def _dir(self, rh: RemoteHost) -> Path:
        return self.run_dir / rh.host.dir_name

    @staticmethod
    def _fail(rh: RemoteHost, words: str) -> None:
        rh.failures.append(words)
        rh.errors.append(words)

    @staticmethod
    def _session_words(rh: RemoteHost) -> str:
        """How the supervisor's ssh session ended: its exit status and ssh's own words."""
        if rh.proc is None:
            return "not started"
        try:
            rh.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "still running"
        words = ""
        if rh.proc.stderr is not None:
            try:
                words = rh.proc.stderr.read().decode(errors="replace")
            except (OSError, ValueError):
                pass
        return f"ssh exit status {rh.proc.returncode}; ssh says: {_words(words)}"

    def failures(self) -> list[str]:
        """What makes the run failed, as 'host NAME: words' (a monitor ended early, the connection lost, the
        files not fetched)."""
        return [f"host {rh.host.name}: {f}" for rh in self.hosts for f in rh.failures]

    def stop_monitors(self) -> None:
        """Say stop to every supervisor (all at once), wait for them, fetch their files. A supervisor whose
        session ended before the stop (the connection lost, sshd stopped, the supervisor killed), a monitor
        that had exited before it, or files that could not be fetched are failures of the run (:meth:`failures`)."""
        for rh in self.hosts:
            if rh.proc is not None and rh.proc.poll() is not None and "ready" in rh._lines:
                self._fail(rh, "monitors: the connection to the host was lost before the run ended, its monitors "
                               f"stopped with it ({self._session_words(rh)})")
            if rh.proc is not None and rh.proc.poll() is None:
                self._tell(rh, b"stop\n")
        for rh in self.hosts:
            if rh.proc is None:
                continue
            # perf: up to 35 s to stop, then perf script | gzip (bounded like profile.Profiler.script's)
            wait_s = 30 + (1835 if rh.perf_event else 0)
            if not rh._done.wait(wait_s):
                rh.proc.kill()
                rh.proc.wait()
                self._fail(rh, f"monitors: the host did not stop them in {wait_s} s (the connection was closed)")
            rh.collect["collectors_stop"] = R._now()
            stopped = dict(ln.split(" ", 2)[1:] for ln in rh._lines if ln.startswith("stopped ") and ln.count(" ") == 2)
            apart = ("strace", "perf")  # not monitors: their own stop signals
            rh.collect["collectors_stop_signal"] = " ".join(
                f"{n}:{stopped.get(n, 'unknown')}" for n in rh.started if n not in apart)
            for n in apart:
                if n in rh.started:
                    rh.collect[f"{n}_stop_signal"] = stopped.get(n, "unknown")
            for n in rh.started:
                if n not in apart and stopped.get(n) == "exited":
                    self._fail(rh, f"monitor {n} ended before the run did")
            if "done" not in rh._lines and not rh.failures:
                self._fail(rh, "monitors: the supervisor did not finish (" + self._session_words(rh) + ")")
            self._fetch(rh)
            self._release(rh)
            try:  # measured again at the end: a clock that drifted during the run is seen (host.toml [collect])
                off, err = clock_offset(rh.ssh.argv(CLOCK_SCRIPT))
                rh.collect["clock_offset_end_s"], rh.collect["clock_offset_end_error_s"] = round(off, 6), round(err, 6)
                if rh.offset is not None and abs(off - rh.offset) > SAMPLING_INTERVAL_S:
                    rh.errors.append(f"its clock drifted by {off - rh.offset:+.3f} s during the run")
            except (ValueError, OSError, subprocess.SubprocessError) as exc:
                rh.collect["clock_offset_end_error"] = str(exc)[:200]

    @staticmethod
    def _tell(rh: RemoteHost, line: bytes, close: bool = False) -> None:
        try:
            assert rh.proc is not None and rh.proc.stdin is not None
            rh.proc.stdin.write(line)
            rh.proc.stdin.flush()
            if close:
                rh.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def _release(self, rh: RemoteHost) -> None:
        """Tell the supervisor its directory was fetched (else it marks it for the next collect to remove) and
        let its session end."""
        if rh.proc is None:
            return
        if rh.proc.poll() is None:
            self._tell(rh, b"fetched\n" if rh.remote_dir is None else b"", close=True)
            try:
                rh.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                rh.proc.kill()
                rh.proc.wait()
        if rh._reader is not None:
            rh._reader.join(timeout=5)
        rh.proc = None

    def _fetch(self, rh: RemoteHost) -> None:
        if not rh.remote_dir:
            if not any(ln.startswith("dir ") for ln in rh._lines):
                self._fail(rh, "fetch: the supervisor never named its directory: nothing to fetch")
            return
        hd = self._dir(rh)
        q = shlex.quote(rh.remote_dir)
        try:
            with subprocess.Popen(rh.ssh.argv(f"tar -C {q} -cf - . && rm -rf {q}"), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as src:
                untar = subprocess.run(["tar", "-x", "-f", "-", "-C", str(hd), "--no-same-owner"], stdin=src.stdout,
                                       capture_output=True, timeout=600,
                                       pass_fds=(self.lock.fd,) if self.lock is not None else ())
                err = src.stderr.read().decode(errors="replace") if src.stderr else ""
                src.wait(timeout=60)
            if src.returncode != 0 or untar.returncode != 0:
                self._fail(rh, f"fetch from {rh.remote_dir}: "
                               + _words(err + untar.stderr.decode(errors="replace")))
            else:
                rh.collect["fetched_from"] = rh.remote_dir
                rh.remote_dir = None
        except (OSError, subprocess.SubprocessError) as exc:
            self._fail(rh, f"fetch from {rh.remote_dir}: {exc}")

    def write_host_tomls(self) -> None:
        for rh in self.hosts:
            h = rh.host
            commands = {n: (f"{' '.join(f'{k}={v}' for k, v in R.MONITOR_ENV.items())} {shlex.join(a)} > "
                            f"{o or '/dev/null'}") for n, a, o in R.MONITORS if n in h.monitors}
            data: dict[str, Any] = {"hostname": rh.machine.get("hostname", ""), "role": h.role,
                                    "clock_offset_s": round(rh.offset or 0.0, 6),
                                    "clock_offset_error_s": round(rh.error or 0.0, 6)}
            data["machine"] = rh.machine
            data["versions"] = rh.versions
            if rh.server is not None:
                data["server"] = rh.server
            coll: dict[str, Any] = {"ssh": h.target, "name": h.name, **commands}
            if h.strace_pidfile:
                coll["strace"] = f"strace -c -f -p $(head -n 1 {shlex.quote(h.strace_pidfile)}) -o strace_c.txt"
            if rh.perf_event:  # the keys profile.Profiler.commands gives this host's run.toml
                coll["perf_record"] = perf_argv_text(h, rh.perf_event).replace(
                    '"$pids"', f"$(head -n 1 {shlex.quote(h.perf_pidfile or '')}),<its children>") + " 2> perf-record.log"
                coll["perf_script"] = f"perf script -i {profile.DATA} | gzip > {profile.OUTPUT}"
                coll["perf_frequency_hz"] = h.perf_frequency
                coll["perf_event"] = rh.perf_event
                coll["perf_target"] = "system-wide" if h.perf_system_wide else "postmaster and its processes"
            if h.server_log:
                coll["server_log"] = h.server_log
                coll["server_log_output"] = SERVER_LOG_OUTPUT
            coll.update(rh.collect)
            if rh.errors:
                coll["errors"] = list(rh.errors)
            data["collect"] = coll
            path = self._dir(rh) / HOST_TOML
            tmp = path.with_suffix(".toml.tmp")
            tmp.write_text(R.toml_dumps(data, "written by kansoku tools/collect for a host of the run; see "
                                              "tools/kansoku/collect/hosts.py"), encoding="utf-8")
            os.replace(tmp, path)

    def close(self) -> None:
        """Whatever happened: stop running supervisors (end of input stops their monitors), close masters."""
        for rh in self.hosts:
            for s in rh.series:
                s.stop()
            if rh.proc is not None and rh.proc.poll() is None:
                try:
                    rh.proc.stdin.close()  # type: ignore[union-attr]
                    rh.proc.wait(timeout=15)
                except (OSError, subprocess.TimeoutExpired):
                    rh.proc.kill()
                    rh.proc.wait()
            if rh.remote_dir:
                # its supervisor, told neither "stop" nor "fetched", marked the directory ORPHANED
                R._log(f"warning: host {rh.host.name}: its files were left in {rh.remote_dir} (the next "
                       f"tools/collect to this host removes them)", self.quiet)
            try:
                rh.ssh.close()
            except (OSError, subprocess.SubprocessError):
                pass
        if self.control_dir is not None:
            self.control_dir.remove()
            self.control_dir = None
