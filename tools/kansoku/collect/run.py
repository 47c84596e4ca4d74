"""tools/collect: capture one benchmark run (or a campaign of them) as a run directory.

A run directory is named by its factors, hive style (``study=scaleup/workload=read/
clients=4/rep=1``, in the order given), and holds:

``<prog>.log``      stdout and stderr of the benchmark together (``pgbench.log`` for pgbench;
                    ``--output NAME`` chooses another name). The command runs with the run
                    directory as its working directory, so ``pgbench -l`` writes its
                    per-transaction logs there.
``sa.bin``          ``sar -A -o sa.bin 1`` (sysstat binary file; ingest renders it with sadf)
``sadf.json``       ``sadf -j sa.bin -- -A`` rendered after the run by the sysstat that wrote sa.bin
``iostat_x.txt``    ``iostat -x -t -k 1``
``vmstat.txt``      ``vmstat -t -w 1``
``strace_c.txt``    with ``--strace-pid``/``--strace-pidfile``: ``strace -c -f -p PID -o strace_c.txt``
                    (its own messages in ``strace_stderr.txt``)
``pg_settings.csv`` with ``--conninfo``: the result of
                    ``SELECT name, setting, unit, source FROM pg_settings
                    WHERE source NOT IN ('default','override') ORDER BY name``
                    (``psql --csv``: header line ``name,setting,unit,source``, values as the server
                    stores them, e.g. ``shared_buffers,131072,8kB,configuration file``)
``pg_stat_*.before.csv`` / ``pg_stat_*.after.csv``  with ``--conninfo``: ``psql --csv`` of
                    ``SELECT now() AS snapshot_at, *`` from pg_stat_bgwriter, pg_stat_checkpointer (17+),
                    pg_stat_wal (14+) and pg_stat_database (this database), just before and after the
                    benchmark (views the server lacks are listed in [commands] pg_stat_missing)
``pg_stat_checkpointer.series.csv`` / ``pg_stat_bgwriter.series.csv``  with ``--conninfo``: the same query
                    every ``--pg-stat-interval`` seconds (default 5; 0: none) while the benchmark runs, one
                    row per snapshot, so that checkpoints can be placed on the run's time axis
                    (collect/pg_stat_series.py)
``pg_stat_replication.before.csv`` / ``.series.csv`` / ``.after.csv``  with ``--pg-stat-replication``: the
                    primary's standbys and their lags (``REPLICATION_VIEW``; parsers/pg_stat_replication.py)
``host=<name>/``    with ``--hosts`` (or a plan's [hosts]): another host's monitors, pg_stat snapshots and
                    ``host.toml`` (role, clock offset, inventory), collected over ssh (collect/hosts.py)
``run.toml``        metadata, see below.

The monitors are started (each in its own session, with default signal dispositions, even when
collect itself was started with SIGINT ignored) ``--settle`` seconds (default 1) before the
benchmark and stopped ``--settle`` seconds after it ended: SIGINT to each monitor's process
group, SIGTERM if it is still alive 3 s later, SIGKILL after 2 s more. Which signal was needed is
recorded (``collectors_stop_signal = "sar:INT iostat:INT vmstat:INT"``). Ctrl-C (SIGINT), SIGTERM or
SIGHUP to collect is forwarded to the benchmark (its process group: it runs in a session of its own); the
monitors are then stopped the same way and the run is recorded as ``status = "interrupted"``. Every process
collect starts is named to collect's lifeline and inherits the run directory's lock (collect/lifetime.py): if
collect itself is killed, they are stopped all the same, and the directory is moved aside by a later collect only
once they have ended.

run.toml (readable by :mod:`kansoku.runs`; every top-level key is one of runs.METADATA_KEYS, so no
metadata is mistaken for a factor)::

    status = "ok" | "failed" | "interrupted"   # failed: non-zero exit code, the command could not start, or a
                                               # host stopped measuring before the run ended (a monitor exited
                                               # early, an ssh connection lost, files not fetched: hosts.py)
    status_note = "..."                        # only when status is not ok
    exit_code = 0                              # benchmark exit status; 128+N when killed by signal N
    start = 2026-11-21T23:53:05.911050+00:00   # benchmark process only (TOML datetimes, UTC)
    end = ...
    collectors_start = ...                     # monitors
    collectors_stop = ...
    hostname = "vm"
    role = "client"                            # --role, or the plan's [hosts] entry without ssh
    notes = "..."                              # --note
    [factors]      key = "value", every factor as a string, in directory order
    [commands]     benchmark (shell-quoted), argv, cwd, output, sar, iostat, vmstat, strace, hosts,
                   collectors_stop_signal, strace_stop_signal, scripts (the pgbench -f scripts copied
                   into the run directory, so the run keeps the script it ran)
    [machine]      hostname, kernel (uname -srvm), os, cpu_model, cpu_count (online logical CPUs),
                   nproc (usable by this process), mem_total_kib, swap_total_kib, virtualization,
                   [machine.virtualization_layers] vm, container (systemd-detect-virt --vm, --container:
                   both layers, where virtualization is the innermost only),
                   [machine.filesystem] of the run directory (device, mount, fstype, options),
                   [machine.disks.NAME] size_bytes, rotational, model
    [versions]     first line of ``--version``/``-V`` of the tools the run used: sysstat and vmstat (monitors),
                   strace, the benchmark program (pgbench, fio, ...), and pgbench/psql/postgres when the
                   benchmark is a PostgreSQL client or --conninfo is given; a benchmark given by its
                   absolute path (``/opt/pg18/bin/pgbench``) is asked there, the others in PATH
    [env]          LANG, LC_ALL, TZ, PGUSER, PGHOST, PGPORT, PGDATABASE, timezone
    [server]       with --conninfo, read right before the benchmark:
                   conninfo (password removed), version (``SELECT version()``),
                   NAME = current_setting(NAME) for every setting of the query above plus a few key
                   settings that are always shown (server_version, data_checksums, block_size, fsync,
                   synchronous_commit, full_page_writes, wal_level, shared_buffers, max_connections),
                   non_default = [names returned by the query], capture_error when psql failed
    [campaign]     in plan mode: plan file, seed, position, total

While a run is in progress its run.toml says ``status = "interrupted"`` with a note, so a run whose
collect process was killed outright is never mistaken for a good one.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kansoku.collect import lifetime
from kansoku.collect.pg_stat_series import PgStatSeries
from kansoku.collect.processes import STOP_SIGNALS, stop_group
from kansoku.collect.profile import ProfileError, Profiler, ProfileRequest
from kansoku.collect.server_log import ServerLogTail
from kansoku.ingest.runs import METADATA_KEYS

RUN_TOML = "run.toml"
KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
SETTINGS_QUERY = ("SELECT name, setting, unit, source FROM pg_settings "
                  "WHERE source NOT IN ('default','override') ORDER BY name")
KEY_SETTINGS = ("server_version", "data_checksums", "block_size", "fsync", "synchronous_commit",
                "full_page_writes", "wal_level", "shared_buffers", "max_connections")
ENV_KEYS = ("LANG", "LC_ALL", "TZ", "PGUSER", "PGHOST", "PGPORT", "PGDATABASE")
# name, argv (run in the run directory), output file (None: /dev/null)
MONITORS = (
    ("sar", ["sar", "-A", "-o", "sa.bin", "1"], None),
    ("iostat", ["iostat", "-x", "-t", "-k", "1"], "iostat_x.txt"),
    ("vmstat", ["vmstat", "-t", "-w", "1"], "vmstat.txt"),
    # per-CPU utilisation and software interrupts by type (FY2022's %soft analysis); asked for by name
    ("mpstat", ["mpstat", "-u", "-I", "SCPU", "-P", "ALL", "1"], "mpstat.txt"),
)
MONITOR_NAMES = tuple(n for n, _, _ in MONITORS)
DEFAULT_MONITORS = ("sar", "iostat", "vmstat")  # a plan's monitors = true, a host's default
# Monitors print in the C locale and ISO times, so that their files are unambiguous (decimal points,
# 24-hour times, iostat -t with the UTC offset): docs/formats.md §0, §2.2.
MONITOR_ENV = {"LC_ALL": "C", "S_TIME_FORMAT": "ISO"}
# Renderings of sa.bin written at collect time, with the sysstat that wrote it (a later sysstat may not
# read the binary format): name in [commands] -> argv, output file.
SA_RENDERINGS = (("sadf_json", ["sadf", "-j", "sa.bin", "--", "-A"], "sadf.json"),)
# name in [versions] -> command printing the version. Which ones are read for a run: see run_tools().
VERSION_PROBES = {
    "sysstat": ["sar", "-V"], "procps_vmstat": ["vmstat", "-V"], "strace": ["strace", "-V"],
    "fio": ["fio", "--version"], "pgbench": ["pgbench", "--version"], "psql": ["psql", "--version"],
    "postgres": ["postgres", "--version"], "sysbench": ["sysbench", "--version"],
    "pg_test_fsync": ["pg_test_fsync", "--version"], "perf": ["perf", "--version"],
}
POSTGRES_CLIENTS = {"pgbench", "psql", "pg_test_fsync"}
EXIT_INTERRUPTED = 130


class CollectError(Exception):
    """A problem with the request (bad factor, existing run): exit status 2."""


# ---------------------------------------------------------------- TOML writer (tomllib reads only)

def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_str(k)


def _toml_str(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return _toml_str(str(v))


def toml_dumps(data: dict[str, Any], header: str = "") -> str:
    lines = [f"# {h}" for h in header.splitlines()] if header else []

    def table(prefix: list[str], d: dict[str, Any]) -> None:
        scalars = {k: v for k, v in d.items() if not isinstance(v, dict) and v is not None}
        subs = {k: v for k, v in d.items() if isinstance(v, dict)}
        if prefix and (scalars or not subs):
            lines.append("")
            lines.append("[" + ".".join(_toml_key(p) for p in prefix) + "]")
        for k, v in scalars.items():
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
        for k, v in subs.items():
            table(prefix + [k], v)

    table([], data)
    return "\n".join(lines) + "\n"


def write_run_toml(run_dir: Path, meta: dict[str, Any]) -> None:
    bad = [k for k, v in meta.items() if not isinstance(v, dict) and k not in METADATA_KEYS]
    assert not bad, f"top-level run.toml keys would be read as factors: {bad}"
    tmp = run_dir / (RUN_TOML + ".tmp")
    tmp.write_text(toml_dumps(meta, "written by kansoku tools/collect; see tools/kansoku/collect/run.py"),
                   encoding="utf-8")
    os.replace(tmp, run_dir / RUN_TOML)


# ---------------------------------------------------------------- factors and directories

def parse_factors(items: list[str]) -> dict[str, str]:
    factors: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not KEY.match(key):
            raise CollectError(f"{item!r}: a factor is KEY=VALUE, KEY a name like clients or config")
        if not value or "/" in value or value.startswith(".") or value != value.strip():
            raise CollectError(f"{item!r}: the value must be non-empty, without '/', leading '.' or spaces")
        if key in factors:
            raise CollectError(f"factor {key!r} given twice")
        factors[key] = value
    return factors


def run_path(root: Path, factors: dict[str, str]) -> Path:
    return root.joinpath(*(f"{k}={v}" for k, v in factors.items()))


def run_state(run_dir: Path) -> str | None:
    """'ok' | 'failed' | 'interrupted' | 'unknown' for an existing run directory, None if absent/empty."""
    if not run_dir.is_dir() or not any(p for p in run_dir.iterdir() if p.is_file()):
        return None
    try:
        with open(run_dir / RUN_TOML, "rb") as fh:
            meta = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return "unknown"
    st = meta.get("status")
    if st == "ok" and meta.get("exit_code", 0) == 0:
        return "ok"
    return st if st in ("failed", "interrupted") else "unknown"


def move_aside(run_dir: Path) -> Path:
    """Keep an earlier attempt, hidden (ingest skips dot-directories): clients=4/.rep=1.attempt-<utc>."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    dest = run_dir.with_name(f".{run_dir.name}.attempt-{stamp}")
    run_dir.rename(dest)
    return dest


# ---------------------------------------------------------------- environment capture

def _first_line(argv: list[str], timeout: float = 5.0) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in (p.stdout + "\n" + p.stderr).splitlines():
        if line.strip():
            return line.strip()
    return None


def run_tools(program: str, monitors: bool, strace: bool, conninfo: bool) -> list[str]:
    """The tools whose versions describe a run: monitors, strace, the benchmark, PostgreSQL when involved."""
    names = ["sysstat", "procps_vmstat"] if monitors else []
    names += ["strace"] if strace else []
    if program in VERSION_PROBES:
        names.append(program)
    if program in POSTGRES_CLIENTS or conninfo:
        names += [n for n in ("pgbench", "psql", "postgres") if n not in names]
    return names


def tool_versions(names: list[str] | None = None, paths: dict[str, str] | None = None) -> dict[str, str]:
    """First line of each tool's version output, read right before each run (packages do get upgraded
    in the middle of a campaign; see shared/corpus/real/README.md, Deviations 1). ``paths`` names the
    program a probe runs instead of the one in PATH (the benchmark given by its absolute path: the version
    of the program that ran, e.g. a pgbench built elsewhere than the packaged one)."""
    names = list(VERSION_PROBES) if names is None else names
    paths = paths or {}
    if not names:
        return {}

    def probe(n: str) -> str | None:
        argv = VERSION_PROBES[n]
        return _first_line([paths.get(n, argv[0])] + argv[1:])

    with ThreadPoolExecutor(max_workers=len(names)) as ex:
        found = list(ex.map(probe, names))
    return {n: v for n, v in zip(names, found) if v}


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def machine_info(run_dir: Path) -> dict[str, Any]:
    """The inventory of the machine collect runs on ([machine] of run.toml)."""
    from kansoku.parsers.sysstat.common import machine_zone  # the parsers (DuckDB) are not loaded at collect's start

    u = platform.uname()
    try:
        nproc: int | None = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = None
    blocks = [d.name for d in sorted(Path("/sys/block").glob("*"))] if Path("/sys/block").is_dir() else []
    # the IANA zone: sar/mpstat/pidstat/vmstat print local times without a zone; ingest reads them in this
    # zone (summer time right), docs/formats.md §2.2
    return machine_from(_read, hostname=socket.gethostname(), kernel=f"{u.system} {u.release} {u.version} {u.machine}",
                        cpu_count=os.cpu_count(), nproc=nproc, virtualization=_virtualization(),
                        virtualization_layers=_virtualization_layers(), timezone=machine_zone().key,
                        path=str(run_dir.resolve()), block_devices=blocks)


def machine_from(read: Any, *, hostname: str, kernel: str, cpu_count: int | None, nproc: int | None,
                 virtualization: str | None, timezone: str | None, path: str | None,
                 block_devices: list[str], virtualization_layers: dict[str, str | None] | None = None
                 ) -> dict[str, Any]:
    """[machine] from the files a Linux machine describes itself in, read by ``read(path) -> text`` (local
    files here, the same files over ssh for another host: collect/hosts.py), and the facts given."""
    m: dict[str, Any] = {"hostname": hostname, "kernel": kernel}
    osr = dict(re.findall(r'^(\w+)="?(.*?)"?$', read("/etc/os-release"), re.M))
    if osr.get("PRETTY_NAME"):
        m["os"] = osr["PRETTY_NAME"]
    cpu = re.search(r"^model name\s*:\s*(.+)$", read("/proc/cpuinfo"), re.M)
    if cpu:
        m["cpu_model"] = cpu.group(1).strip()
    m["cpu_count"] = cpu_count
    if nproc is not None:
        m["nproc"] = nproc
    meminfo = dict(re.findall(r"^(\w+):\s+(\d+) kB$", read("/proc/meminfo"), re.M))
    for key, name in (("MemTotal", "mem_total_kib"), ("SwapTotal", "swap_total_kib")):
        if key in meminfo:
            m[name] = int(meminfo[key])
    if virtualization:
        m["virtualization"] = virtualization
    layers = {k: v for k, v in (virtualization_layers or {}).items() if v}
    if layers:
        m["virtualization_layers"] = layers
    if timezone:
        m["timezone"] = timezone
    fs = _filesystem_of(path, read("/proc/self/mounts")) if path else None
    if fs:
        m["filesystem"] = fs
    disks = {}
    for name in block_devices:
        if name.startswith(("loop", "ram", "zram", "dm-")):
            continue
        d: dict[str, Any] = {}
        size = read(f"/sys/block/{name}/size").strip()
        if size.isdigit():
            d["size_bytes"] = int(size) * 512
        rot = read(f"/sys/block/{name}/queue/rotational").strip()
        if rot in ("0", "1"):
            d["rotational"] = rot == "1"
        model = read(f"/sys/block/{name}/device/model").strip()
        if model:
            d["model"] = model
        disks[name] = d
    if disks:
        m["disks"] = disks
    return {k: v for k, v in m.items() if v is not None}


@functools.lru_cache(maxsize=1)
def _virtualization() -> str | None:  # does not change during a campaign; the probe is a process start
    return _first_line(["systemd-detect-virt"])


VIRTUALIZATION_LAYERS = ("vm", "container")


@functools.lru_cache(maxsize=1)
def _virtualization_layers() -> dict[str, str | None]:
    """Both layers: systemd-detect-virt alone names the innermost (a container, even inside a virtual machine)."""
    return {layer: _first_line(["systemd-detect-virt", f"--{layer}"]) for layer in VIRTUALIZATION_LAYERS}


def _filesystem_of(target: str, mounts: str) -> dict[str, str] | None:
    best = None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        mnt = parts[1].replace("\\040", " ")
        if target == mnt or target.startswith(mnt.rstrip("/") + "/"):
            if best is None or len(mnt) > len(best["mount"]):
                best = {"device": parts[0], "mount": mnt, "fstype": parts[2], "options": parts[3]}
    return best


def env_info() -> dict[str, str]:
    env = {k: os.environ.get(k, "") for k in ENV_KEYS}
    off = datetime.now().astimezone().strftime("%z")
    env["timezone"] = f"{time.tzname[0]}{off[:3]}:{off[3:]}"
    return env


def redact_conninfo(conninfo: str) -> str:
    s = re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", conninfo, flags=re.I)
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", s)


def _psql(conninfo: str, sql: str) -> subprocess.CompletedProcess:
    return subprocess.run(["psql", "-X", "-q", "--csv", "-d", conninfo, "-c", sql], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PGAPPNAME": "kansoku-collect", "PGCONNECT_TIMEOUT": "10"})


def _psql_csv(conninfo: str, sql: str, psql: Any = _psql) -> list[dict[str, str]]:
    p = psql(conninfo, sql)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() or f"psql exited {p.returncode}")
    return list(csv.DictReader(io.StringIO(p.stdout)))


# Statistics views snapshotted before and after the benchmark (docs/formats.md §8); a view the server does
# not have (pg_stat_wal before 14, pg_stat_checkpointer before 17) is skipped.
PG_STAT_VIEWS = (
    ("pg_stat_bgwriter", "SELECT now() AS snapshot_at, * FROM pg_stat_bgwriter"),
    ("pg_stat_checkpointer", "SELECT now() AS snapshot_at, * FROM pg_stat_checkpointer"),
    ("pg_stat_wal", "SELECT now() AS snapshot_at, * FROM pg_stat_wal"),
    ("pg_stat_database", "SELECT now() AS snapshot_at, * FROM pg_stat_database WHERE datname = current_database()"),
)
# The standbys of a primary, one row each (parsers/pg_stat_replication.py): lags as seconds and bytes, so that
# the CSV needs no interval parsing. Before/after a run and, with a series interval, during it.
REPLICATION_VIEW = ("pg_stat_replication", (
    "SELECT now() AS snapshot_at, pid, application_name, client_addr, state, sync_state, sync_priority, "
    "pg_current_wal_lsn() AS current_lsn, sent_lsn, write_lsn, flush_lsn, replay_lsn, "
    "pg_wal_lsn_diff(pg_current_wal_lsn(), sent_lsn) AS sent_lag_bytes, "
    "pg_wal_lsn_diff(pg_current_wal_lsn(), write_lsn) AS write_lag_bytes, "
    "pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn) AS flush_lag_bytes, "
    "pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn) AS replay_lag_bytes, "
    "extract(epoch FROM write_lag) AS write_lag_s, extract(epoch FROM flush_lag) AS flush_lag_s, "
    "extract(epoch FROM replay_lag) AS replay_lag_s "
    "FROM pg_stat_replication ORDER BY application_name, pid"))


def snapshot_pg_stat(conninfo: str, run_dir: Path, moment: str, psql: Any = _psql,
                     replication: bool = False) -> list[str]:
    """Write pg_stat_<view>.<moment>.csv for each view the server has; the views it lacks, by name.

    ``psql(conninfo, sql)`` runs the query (here, or on another host: collect/hosts.py); with
    ``replication``, pg_stat_replication too (one row per standby, lags in seconds)."""
    missing: list[str] = []
    if psql is _psql and shutil.which("psql") is None:
        return ["psql not found in PATH"]
    for view, sql in PG_STAT_VIEWS + ((REPLICATION_VIEW,) if replication else ()):
        try:
            p = psql(conninfo, sql)
        except (OSError, subprocess.TimeoutExpired) as exc:
            missing.append(f"{view}: {exc}")
            continue
        if p.returncode != 0 or not p.stdout.strip():
            missing.append(view)
            continue
        (run_dir / f"{view}.{moment}.csv").write_text(p.stdout)
    return missing


def server_info(conninfo: str, run_dir: Path, psql: Any = _psql) -> dict[str, Any]:
    """Capture SELECT version() and the non-default settings; see the module docstring."""
    info: dict[str, Any] = {"conninfo": redact_conninfo(conninfo)}
    if psql is _psql and shutil.which("psql") is None:
        info["capture_error"] = "psql not found in PATH"
        return info
    try:
        info["version"] = _psql_csv(conninfo, "SELECT version()", psql)[0]["version"]
        p = psql(conninfo, SETTINGS_QUERY)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip())
        (run_dir / "pg_settings.csv").write_text(p.stdout, encoding="utf-8")
        names = [r["name"] for r in csv.DictReader(io.StringIO(p.stdout))]
        wanted = sorted(set(names) | set(KEY_SETTINGS))
        in_list = ",".join("'" + n.replace("'", "''") + "'" for n in wanted)
        rows = _psql_csv(conninfo, f"SELECT name, current_setting(name) AS value FROM pg_settings "
                                   f"WHERE name IN ({in_list}) ORDER BY name", psql)
        for r in rows:
            if r["name"] not in ("conninfo", "version", "non_default", "capture_error"):
                info[r["name"]] = r["value"]
        info["non_default"] = names
    except (RuntimeError, OSError, subprocess.SubprocessError, KeyError, IndexError) as exc:
        info["capture_error"] = str(exc)[:500]
    return info


# ---------------------------------------------------------------- processes

def default_signals() -> None:
    """Default signal handling and an empty signal mask for a child; runs between fork and exec."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


@dataclass
class Monitor:
    name: str
    argv: list[str]
    output: str | None
    proc: subprocess.Popen | None = None
    stop_signal: str = ""
    error: str | None = None

    @property
    def shell(self) -> str:
        env = " ".join(f"{k}={v}" for k, v in MONITOR_ENV.items())
        return f"{env} " + shlex.join(self.argv) + f" > {self.output or '/dev/null'}"

    def start(self, run_dir: Path, stderr_name: str | None = None, lock: lifetime.RunLock | None = None) -> None:
        if shutil.which(self.argv[0]) is None:
            self.error = f"{self.argv[0]} not found in PATH"
            return
        out = open(run_dir / self.output, "wb") if self.output else subprocess.DEVNULL
        err = open(run_dir / stderr_name, "wb") if stderr_name else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(self.argv, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err, env={**os.environ, **MONITOR_ENV},
                                         **lifetime.child(lock=lock, then=default_signals))
        except OSError as exc:
            self.error = str(exc)
        finally:
            for fh in (out, err):
                if hasattr(fh, "close"):
                    fh.close()

    def stop(self) -> None:
        if self.proc is None:
            self.stop_signal = "not-started"
            return
        if self.proc.poll() is not None:
            self.stop_signal = f"exited({self.proc.returncode})"
        else:
            self.stop_signal = stop_group(self.proc, STOP_SIGNALS) or self.stop_signal
        try:  # the rest of the group (sar's sadc child) must not outlive the run
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        lifetime.ended(self.proc)


class _Interrupt:
    """Signal handlers for the duration of a run: remember the signal, forward it to the benchmark."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.received: int | None = None
        self.at: float | None = None
        self.child: subprocess.Popen | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> "_Interrupt":
        for s in self.SIGNALS:
            self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received is None:
            self.received, self.at = signum, time.monotonic()
        if self.child is not None:
            _signal_group(self.child, signum)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"collect: {msg}", file=sys.stderr, flush=True)


@dataclass
class RunRequest:
    root: Path
    factors: dict[str, str]
    command: list[str]
    output: str | None = None
    conninfo: str | None = None
    strace_pid: int | None = None
    strace_pidfile: Path | None = None
    server_log: Path | None = None  # PostgreSQL server log: the part written during the run is kept
    pg_stat_interval_s: float = 5.0  # with conninfo: checkpoint counters every this many seconds (0: none)
    settle_s: float = 1.0
    monitors: tuple[str, ...] = DEFAULT_MONITORS  # names of MONITORS; () none
    replace: bool = False
    note: str | None = None
    campaign: dict[str, Any] = field(default_factory=dict)
    quiet: bool = False
    hosts: list[Any] = field(default_factory=list)  # collect.hosts.Host: the other hosts, reached over ssh
    role: str | None = None  # role of this host in the run (run.toml role); None: the campaign's default
    pg_stat_replication: bool = False  # with conninfo: pg_stat_replication before, during and after
    profile: ProfileRequest | None = None  # perf record -g during the benchmark (collect/profile.py)

    @property
    def run_dir(self) -> Path:
        return run_path(self.root, self.factors)

    @property
    def output_name(self) -> str:
        if self.output:
            return self.output
        return Path(self.command[0]).name + ".log"


@dataclass
class RunResult:
    run_dir: Path
    status: str
    exit_code: int
    interrupted: bool
    seconds: float
    note: str | None = None  # why the run is not ok (run.toml status_note)


def _strace_target(req: RunRequest) -> int | None:
    if req.strace_pid is not None:
        return req.strace_pid
    if req.strace_pidfile is not None:
        try:
            return int(req.strace_pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError) as exc:
            raise CollectError(f"{req.strace_pidfile}: cannot read a PID from it ({exc})") from None
    return None


def script_args(argv: list[str]) -> list[str]:
    """The script files a pgbench command line names (``-f FILE``, ``-fFILE``, ``--file=FILE``; ``@weight`` cut)."""
    if not argv or Path(argv[0]).name != "pgbench":
        return []
    out = []
    for i, tok in enumerate(argv):
        if tok in ("-f", "--file") and i + 1 < len(argv):
            val = argv[i + 1]
        elif tok.startswith("--file="):
            val = tok.split("=", 1)[1]
        elif tok.startswith("-f") and len(tok) > 2 and not tok.startswith("--"):
            val = tok[2:]
        else:
            continue
        out.append(re.sub(r"@\d+$", "", val))
    return out


def copy_scripts(argv: list[str], run_dir: Path) -> list[str]:
    """Copy the pgbench scripts of the command into the run directory: the run keeps the script it ran.

    A script is copied under its own name unless a different file of that name is already there. The names
    kept are returned (run.toml [commands] scripts)."""
    kept = []
    for arg in script_args(argv):
        src = Path(arg) if Path(arg).is_absolute() else run_dir / arg
        if not src.is_file():
            continue  # pgbench itself will say so
        target = run_dir / src.name
        if target.resolve() == src.resolve():
            kept.append(src.name)
            continue
        if target.exists() and target.read_bytes() != src.read_bytes():
            continue
        shutil.copyfile(src, target)
        kept.append(src.name)
    return kept


def collect_run(req: RunRequest, remote: Any = None) -> RunResult:
    """Run one benchmark with monitors; always leaves a run.toml saying how it ended."""
    if not req.command:
        raise CollectError("no command given after --")
    if not req.factors:
        raise CollectError("give at least one factor KEY=VALUE (it names the run directory)")
    run_dir = req.run_dir
    state = run_state(run_dir)
    if state is not None and not req.replace:
        raise CollectError(f"{run_dir} already holds a run (status {state}); use --replace to keep it "
                           f"aside as a hidden .attempt directory and measure again")
    strace_pid = _strace_target(req)
    try:  # perf is probed before anything is written: a machine where it cannot record stops here
        profiler = Profiler.prepare(req.profile) if req.profile is not None else None
    except ProfileError as exc:
        raise CollectError(str(exc)) from None
    if remote is None:  # no other host: nothing to reach
        if req.hosts:
            raise CollectError("the run has other hosts: collect_run needs their collect.hosts.RemoteHosts")
        remote = NoRemoteHosts()
    try:
        remote.open()  # every other host reached and its clock checked before anything is started or written
        if state is not None:
            with lifetime.RunLock(run_dir) as lock:  # nothing an earlier collect started may still write there
                _lock_or_refuse(lock, req.quiet)
                aside = move_aside(run_dir)
            _log(f"earlier attempt moved to {aside}", req.quiet)
        return _measure(req, run_dir, strace_pid, remote, profiler)
    finally:
        remote.close()  # supervisors still running are stopped, ssh masters closed, whatever happened


def _lock_or_refuse(lock: lifetime.RunLock, quiet: bool) -> None:
    def waiting() -> None:
        _log(f"waiting for what an earlier collect started in {lock.path} to end", quiet)

    if not lock.acquire(on_wait=waiting):
        raise CollectError(f"{lock.path} is in use by {', '.join(lifetime.holders(lock.path)) or 'another process'}: "
                           f"another collect is measuring this run, or what a killed one started has not ended "
                           f"after {lifetime.LOCK_WAIT_S:g} s; nothing was changed")


class NoRemoteHosts:
    """A run without other hosts: the remote-hosts interface of collect.hosts.RemoteHosts, doing nothing (the
    caller that has hosts builds their RemoteHosts and hands it to collect_run: hosts.py builds on this module)."""

    def __bool__(self) -> bool:
        return False

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass


def _measure(req: RunRequest, run_dir: Path, strace_pid: int | None, remote: Any, profiler: Any) -> RunResult:
    """The run itself, once collect_run has checked the request and reached the other hosts, under the run
    directory's lock (collect/lifetime.py), which every process started there inherits."""
    run_dir.mkdir(parents=True, exist_ok=True)
    run_dir = run_dir.resolve()
    with lifetime.RunLock(run_dir) as lock:
        _lock_or_refuse(lock, req.quiet)
        remote.lock = lock
        return _measure_locked(req, run_dir, strace_pid, remote, profiler, lock)


@dataclass
class _Collectors:
    """What this host runs beside the benchmark: the monitors, strace, perf and the server log's tail."""
    monitors: list[Monitor]
    strace: Monitor | None
    profiler: Any
    tail: ServerLogTail | None

    def start(self, run_dir: Path, lock: lifetime.RunLock) -> list[str]:
        """Each collector started; the errors of those that did not start."""
        if self.tail is not None:
            self.tail.start()
        for mon in self.monitors:
            mon.start(run_dir, lock=lock)
        if self.strace is not None:
            self.strace.start(run_dir, "strace_stderr.txt", lock=lock)
        if self.profiler is not None:
            self.profiler.start(run_dir, lock)
        return [f"{m.name}: {m.error}" for m in self.monitors + ([self.strace] if self.strace else []) if m.error]


@dataclass
class _Benchmark:
    """How the benchmark's process ended: its exit code (None: never started), when it ran, why it failed."""
    proc: subprocess.Popen | None = None
    exit_code: int | None = None
    start: datetime | None = None
    end: datetime | None = None
    note: str | None = None


def _measure_locked(req: RunRequest, run_dir: Path, strace_pid: int | None, remote: Any, profiler: Any,
                    lock: lifetime.RunLock) -> RunResult:
    t0 = time.monotonic()
    coll = _collectors(req, strace_pid, profiler)
    meta, commands = _describe_run(req, run_dir, coll, remote)
    write_run_toml(run_dir, meta)  # status "interrupted" until we know better
    if req.conninfo:
        meta["server"] = server_info(req.conninfo, run_dir)
        if "capture_error" in meta["server"]:
            _log(f"warning: server capture failed: {meta['server']['capture_error']}", req.quiet)

    bench = _Benchmark()
    with _Interrupt() as intr:
        meta["collectors_start"] = _now()
        errors = coll.start(run_dir, lock)
        if remote and intr.received is None:
            errors += remote.start_monitors()
        for e in errors:
            _log(f"warning: monitor not started: {e}", req.quiet)
        _sleep_unless(intr, req.settle_s)
        if req.conninfo and intr.received is None:
            commands["pg_stat_missing"] = snapshot_pg_stat(req.conninfo, run_dir, "before",
                                                           replication=req.pg_stat_replication)
        if remote and intr.received is None:
            remote.snapshot("before")
        if intr.received is None:
            bench = _run_benchmark(req, run_dir, lock, intr, remote, commands)
        if intr.received is None:
            _sleep_unless(intr, req.settle_s)
        lost = _stop_collectors(coll, run_dir, lock, remote, meta, commands, errors)
        received = intr.received
    render_errors = render_sa(run_dir, commands, lock) if coll.monitors else []

    if bench.start:
        meta["start"] = bench.start
    if bench.end:
        meta["end"] = bench.end
    status, note, exit_code = _run_status(received, bench, lost)
    meta["status"] = status
    if note:
        meta["status_note"] = note
    else:
        meta.pop("status_note", None)
    meta["exit_code"] = exit_code
    commands["collectors_stop_signal"] = " ".join(f"{m.name}:{m.stop_signal}" for m in coll.monitors)
    if coll.strace is not None:
        commands["strace_stop_signal"] = coll.strace.stop_signal
    if errors or render_errors:
        commands["monitor_errors"] = errors + render_errors
    write_run_toml(run_dir, _status_first(meta))
    if remote:
        remote.write_host_tomls()
    return RunResult(run_dir, status, exit_code, received is not None, time.monotonic() - t0, note)


def _collectors(req: RunRequest, strace_pid: int | None, profiler: Any) -> _Collectors:
    monitors = [Monitor(n, list(a), o) for n, a, o in MONITORS if n in req.monitors]
    strace = None
    if strace_pid is not None:
        strace = Monitor("strace", ["strace", "-c", "-f", "-p", str(strace_pid), "-o", "strace_c.txt"], None)
    tail = ServerLogTail(req.server_log) if req.server_log is not None else None
    return _Collectors(monitors, strace, profiler, tail)


def _describe_run(req: RunRequest, run_dir: Path, coll: _Collectors, remote: Any) -> tuple[dict, dict]:
    """run.toml as it stands before the benchmark starts (status "interrupted"), and its [commands] table
    (inside it), which the rest of the run fills in."""
    meta: dict[str, Any] = {
        "status": "interrupted",
        "status_note": "collect has not finished this run (still running, or collect was killed)",
        "hostname": socket.gethostname(),
    }
    if req.role:
        meta["role"] = req.role
    if req.note:
        meta["notes"] = req.note
    meta["factors"] = dict(req.factors)
    commands: dict[str, Any] = {
        "benchmark": shlex.join(req.command), "argv": list(req.command), "cwd": str(run_dir),
        "output": f"{req.output_name} (stdout and stderr)",
    }
    for mon in coll.monitors:
        commands[mon.name] = mon.shell
    if coll.strace is not None:
        commands["strace"] = shlex.join(coll.strace.argv) + " 2> strace_stderr.txt"
    if coll.profiler is not None:
        commands.update(coll.profiler.commands())
    scripts = copy_scripts(req.command, run_dir)
    if scripts:
        commands["scripts"] = scripts
    meta["commands"] = commands
    meta["machine"] = machine_info(run_dir)
    program = Path(req.command[0]).name
    tools = run_tools(program, bool(req.monitors), coll.strace is not None, bool(req.conninfo))
    # a benchmark given by its absolute path is probed there, not in PATH
    paths = {program: req.command[0]} if os.path.isabs(req.command[0]) and program in VERSION_PROBES else None
    meta["versions"] = tool_versions(tools + (["perf"] if coll.profiler else []), paths)
    meta["env"] = env_info()
    if remote:
        commands["hosts"] = [f"{h.name} ({h.role}): {h.dir_name}/, ssh {h.target}" for h in req.hosts if h.target]
        remote.inventory(run_dir)
    if req.campaign:
        meta["campaign"] = dict(req.campaign)
    return meta, commands


def _run_benchmark(req: RunRequest, run_dir: Path, lock: lifetime.RunLock, intr: _Interrupt, remote: Any,
                   commands: dict[str, Any]) -> _Benchmark:
    """The benchmark run to its end, with the pg_stat series sampled meanwhile and snapshotted after it."""
    bench = _Benchmark()
    series = []
    if req.conninfo and req.pg_stat_interval_s > 0 and shutil.which("psql"):
        series.append(PgStatSeries(req.conninfo, run_dir, req.pg_stat_interval_s, _psql))
        if req.pg_stat_replication:
            series.append(PgStatSeries(req.conninfo, run_dir, req.pg_stat_interval_s, _psql, *REPLICATION_VIEW))
    for s in series:
        s.start()
    if remote:
        remote.start_series(req.pg_stat_interval_s)
    try:
        with open(run_dir / req.output_name, "wb") as out:
            bench.start = _now()
            # a process group of its own, stopped whole (a benchmark that is a shell stops with what it
            # started); named to the lifeline, so that it does not outlive a killed collect
            bench.proc = proc = subprocess.Popen(req.command, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=out,
                                                 stderr=subprocess.STDOUT,
                                                 env={**os.environ, "KANSOKU_RUN_DIR": str(run_dir)},
                                                 **lifetime.child(lock=lock, then=default_signals))
        intr.child = proc
        if intr.received is not None:  # arrived while the process was being started
            _signal_group(proc, intr.received)
        bench.exit_code = _wait_benchmark(proc, intr)
        if lifetime.live_groups() & {proc.pid}:  # what it left running would write into the run
            _log("warning: the benchmark left processes running; stopped", req.quiet)
            lifetime.stop_groups({proc.pid}, list(STOP_SIGNALS))
        lifetime.ended(proc)
    except OSError as exc:
        bench.note = f"the command could not be started: {exc}"
        bench.exit_code = 127
    bench.end = _now()
    for s in series:
        commands.update(s.stop())
    if remote:
        remote.stop_series()
    if req.conninfo and intr.received is None:
        snapshot_pg_stat(req.conninfo, run_dir, "after", replication=req.pg_stat_replication)
    if remote and intr.received is None:
        remote.snapshot("after")
    return bench


def _stop_collectors(coll: _Collectors, run_dir: Path, lock: lifetime.RunLock, remote: Any, meta: dict[str, Any],
                     commands: dict[str, Any], errors: list[str]) -> list[str]:
    """Every collector stopped (perf's errors join ``errors``); what was lost: the monitors that had ended
    before the run did, which measured only part of it."""
    if coll.strace is not None:
        coll.strace.stop()
    if coll.profiler is not None:
        errors += [f"perf: {e}" for e in coll.profiler.stop(run_dir, lock)]
        commands["perf_stop_signal"] = coll.profiler.stop_signal
    for mon in coll.monitors:
        mon.stop()
    if remote:
        remote.stop_monitors()
    meta["collectors_stop"] = _now()
    lost = [f"monitor {m.name} on this host ended before the run did ({m.stop_signal})"
            for m in coll.monitors if m.stop_signal.startswith("exited")]
    if remote:
        lost += remote.failures()
    if coll.tail is not None:
        commands.update(coll.tail.stop(run_dir))
    return lost


def _run_status(received: int | None, bench: _Benchmark, lost: list[str]) -> tuple[str, str | None, int | None]:
    """The run's status, why it is not ok, and the exit code run.toml records (128 + the signal collect received
    before the benchmark ended)."""
    exit_code, note = bench.exit_code, bench.note
    if received is not None:
        note = f"collect received SIG{signal.Signals(received).name.removeprefix('SIG')}" + \
               ("" if bench.proc is not None else " before the benchmark started") + \
               (f"; benchmark exit code {exit_code}" if exit_code is not None else "")
        return "interrupted", note, exit_code if exit_code is not None else 128 + received
    if exit_code == 0 and not lost:
        return "ok", note, exit_code
    if note is None and exit_code != 0:
        note = f"benchmark exit code {exit_code}" + (
            f" (killed by signal {signal.Signals(exit_code - 128).name})" if exit_code > 128 else "")
    if lost:  # the benchmark may have run well: its measurements did not
        note = "; ".join(([note] if note else []) + lost)
    return "failed", note, exit_code


def _status_first(meta: dict[str, Any]) -> dict[str, Any]:
    """run.toml's keys with how the run ended first in the file."""
    order = ["status", "status_note", "exit_code", "start", "end", "collectors_start", "collectors_stop",
             "hostname", "role", "notes"]
    final = {k: meta[k] for k in order if k in meta}
    final.update({k: v for k, v in meta.items() if k not in final})
    return final


def render_sa(run_dir: Path, commands: dict[str, Any], lock: lifetime.RunLock | None = None) -> list[str]:
    """Render sa.bin with the sysstat that wrote it (sadf -j beside it); errors as 'name: sadf's words'."""
    errors: list[str] = []
    if not (run_dir / "sa.bin").exists():
        return errors
    for name, argv, out_name in SA_RENDERINGS:
        if shutil.which(argv[0]) is None:
            errors.append(f"{name}: {argv[0]} not found in PATH")
            continue
        commands[name] = " ".join(f"{k}={v}" for k, v in MONITOR_ENV.items()) + " " + shlex.join(argv) + \
            f" > {out_name}"
        try:
            with open(run_dir / out_name, "wb") as out:
                proc = subprocess.Popen(argv, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.PIPE, env={**os.environ, **MONITOR_ENV},
                                        **lifetime.child(lock=lock))
                try:
                    _, stderr = proc.communicate(timeout=120)
                except subprocess.TimeoutExpired as exc:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.communicate()
                    errors.append(f"{name}: {exc}")
                    continue
                finally:
                    lifetime.ended(proc)
        except OSError as exc:
            errors.append(f"{name}: {exc}")
            continue
        if proc.returncode != 0:
            (run_dir / out_name).unlink(missing_ok=True)
            errors.append(f"{name}: " + " ".join(stderr.decode(errors="replace").split())[:300])
    return errors


def _sleep_unless(intr: _Interrupt, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while intr.received is None and time.monotonic() < deadline:
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))


def _wait_benchmark(proc: subprocess.Popen, intr: _Interrupt) -> int:
    """Wait for the benchmark; after an interrupt, escalate to SIGTERM (5 s) and SIGKILL (10 s)."""
    escalated = set()
    while True:
        try:
            rc = proc.wait(timeout=0.2)
            return rc if rc >= 0 else 128 - rc
        except subprocess.TimeoutExpired:
            pass
        if intr.at is not None:
            waited = time.monotonic() - intr.at
            for after, sig in ((5.0, signal.SIGTERM), (10.0, signal.SIGKILL)):
                if waited > after and sig not in escalated:
                    escalated.add(sig)
                    _signal_group(proc, sig)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """A signal to the benchmark's process group (what a terminal's Ctrl-C reaches), while its leader runs."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


# ---------------------------------------------------------------- command line
