"""tools/collect on several hosts, for real: an OpenSSH server on 127.0.0.1 at a free port, with a throw-away
host key and a throw-away user key, is the "remote" database server of a run whose client is this host.

Skips when sshd, ssh or sysstat are absent (.ci/setup installs openssh-server, openssh-client, sysstat).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import pytest

from kansoku.collect import hosts as collect_hosts

ROOT = Path(__file__).resolve().parents[1]
SERVER_HOSTNAME = "kansoku-test-server"  # what `hostname` prints in the second host's sessions (as root)
REMOTE_HOSTNAME = (SERVER_HOSTNAME if os.geteuid() == 0 and shutil.which("unshare") else socket.gethostname())
SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
MISSING = [p for p, ok in (("sshd", SSHD), ("ssh", shutil.which("ssh")), ("ssh-keygen", shutil.which("ssh-keygen")),
                           ("sar", shutil.which("sar")), ("iostat", shutil.which("iostat"))) if not ok]
needs_ssh = pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed "
                                                      "(apt-get install openssh-server openssh-client sysstat)")
ALIAS = "kansoku-test-server"


@pytest.fixture(autouse=True)
def _one_test_of_this_module_at_a_time():
    """This module's tests look for monitors left in any supervisor directory of the machine
    (_remote_leftovers), and a collect removes every orphaned one: two of them at once (two xdist processes,
    or two test sessions) would see each other's. A lock file serialises them, across processes."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / "kansoku-test-collect-hosts.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"sshd exited {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("sshd is not listening")


@pytest.fixture(scope="module")
def sshd():
    """sshd -D on 127.0.0.1:<free port>, its own config, host key and authorized key; an ssh config naming it."""
    base = Path(tempfile.mkdtemp(prefix="kansoku_sshd_"))
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"kansoku-test-{name}",
                        "-f", str(base / name)], check=True, capture_output=True)
    (base / "authorized_keys").write_text((base / "user_key.pub").read_text())
    port = _free_port()
    login = "root" if os.geteuid() == 0 else os.environ.get("USER") or __import__("pwd").getpwuid(os.geteuid()).pw_name
    (base / "sshd_config").write_text(f"""\
ListenAddress 127.0.0.1
Port {port}
HostKey {base}/host_key
PidFile {base}/sshd.pid
AuthorizedKeysFile {base}/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowUsers {login}
LogLevel ERROR
""")
    (base / "known_hosts").write_text(f"[127.0.0.1]:{port} " + " ".join((base / "host_key.pub").read_text().split()[:2]) + "\n")
    (base / "ssh_config").write_text(f"""\
Host {ALIAS}
    HostName 127.0.0.1
    Port {port}
    User {login}
    IdentityFile {base}/user_key
    IdentitiesOnly yes
    IdentityAgent none
    UserKnownHostsFile {base}/known_hosts
    StrictHostKeyChecking yes
""")
    proc = _start_sshd(base / "sshd_config", port)
    try:
        yield {"port": port, "base": base, "ssh_config": base / "ssh_config"}
    finally:
        _stop(proc)
        shutil.rmtree(base, ignore_errors=True)


def _start_sshd(config: Path, port: int) -> subprocess.Popen:
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    argv = [SSHD, "-D", "-e", "-f", str(config)]
    if os.geteuid() == 0 and shutil.which("unshare"):
        # the second host answers with a hostname of its own, as another machine would: kansoku refuses two
        # hosts of one run with one hostname (docs/ingest.md)
        argv = ["unshare", "--uts", "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh", SERVER_HOSTNAME, *argv]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_listening(port, proc)
    except AssertionError:
        _stop(proc)
        raise
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _hosts_file(tmp_path: Path, ssh_config: Path, extra: str = "", target: str = ALIAS) -> Path:
    p = tmp_path / "hosts.toml"
    p.write_text(f"""\
[hosts.pgclient]
role = "client"

[hosts.dbserver]
role = "server"
ssh = "{target}"
ssh_config = "{ssh_config}"
{extra}""")
    return p


def _collect(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "collect"), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _remote_leftovers() -> list[str]:
    """Live processes working in a supervisor's directory (monitors a run left behind on the 'remote' host)."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cwd = os.readlink(p / "cwd")
            if "/kansoku-collect." in cwd and (p / "stat").read_text().split()[2] != "Z":
                out.append((p / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return out


def _local_leftovers(run: Path, ssh_config: Path) -> list[str]:
    """Live processes working in ``run`` (the benchmark, the monitors) and ssh master connections made with
    ``ssh_config``."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            if not p.name.isdigit() or (p / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            if Path(os.readlink(p / "cwd")) == run or (b"ControlMaster=yes" in cmd and str(ssh_config).encode() in cmd):
                out.append(b" ".join(cmd).decode(errors="replace"))
        except OSError:
            continue
    return out


def _load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


@needs_ssh
def test_collect_from_a_second_host_over_ssh(sshd, tmp_path):
    hosts = _hosts_file(tmp_path, sshd["ssh_config"])
    p = _collect("--root", tmp_path / "runs", "--hosts", hosts, "--settle", "0.5",
                 "study=hosts", "rep=1", "--", "sh", "-c", "sleep 3; echo benchmark done")
    assert p.returncode == 0, p.stderr
    run = tmp_path / "runs" / "study=hosts" / "rep=1"
    meta = _load(run / "run.toml")
    assert meta["status"] == "ok" and meta["role"] == "client"
    assert meta["commands"]["hosts"] == [f"dbserver (server): host=dbserver/, ssh {ALIAS}"]
    assert "monitor_errors" not in meta["commands"], meta["commands"]["monitor_errors"]
    hd = run / "host=dbserver"
    for name in ("sa.bin", "sadf.json", "iostat_x.txt", "vmstat.txt", "host.toml"):
        assert (hd / name).is_file() and (hd / name).stat().st_size > 0, name
    assert (run / "sa.bin").is_file()  # this host's own monitors stay at the top
    host = _load(hd / "host.toml")
    assert host["role"] == "server" and host["hostname"] == REMOTE_HOSTNAME
    assert abs(host["clock_offset_s"]) < 0.5 and 0 < host["clock_offset_error_s"] < 0.5
    assert abs(host["collect"]["clock_offset_end_s"]) < 0.5  # measured again when the run ended
    assert host["machine"]["cpu_count"] == os.cpu_count() and host["machine"]["mem_total_kib"] > 0
    assert host["machine"]["kernel"] == meta["machine"]["kernel"]
    assert host["versions"]["sysstat"].startswith("sysstat version")
    coll = host["collect"]
    assert coll["ssh"] == ALIAS and "errors" not in coll, coll.get("errors")
    assert coll["collectors_stop_signal"] == "sar:INT iostat:INT vmstat:INT"
    assert coll["collectors_start"] < meta["start"] < meta["end"] < coll["collectors_stop"]
    # the remote monitors sampled over the benchmark: vmstat printed one line a second for >= 3 s
    samples = [ln for ln in (hd / "vmstat.txt").read_text().splitlines() if ln.strip()[:1].isdigit()]
    assert len(samples) >= 3
    assert not list(Path(tempfile.gettempdir()).glob(coll["fetched_from"].rsplit("/", 1)[-1]))  # removed there
    assert not _remote_leftovers()


@needs_ssh
def test_unreachable_host_stops_the_run_before_the_benchmark(sshd, tmp_path):
    cfg = tmp_path / "ssh_config"
    cfg.write_text(sshd["ssh_config"].read_text().replace(f"Port {sshd['port']}", f"Port {_free_port()}"))
    hosts = _hosts_file(tmp_path, cfg)
    marker = tmp_path / "benchmark-ran"
    p = _collect("--root", tmp_path / "runs", "--hosts", hosts, "study=hosts", "rep=1", "--", "touch", marker)
    assert p.returncode == 2, p.stderr
    assert "host 'dbserver'" in p.stderr and "cannot be reached" in p.stderr and "Connection refused" in p.stderr
    assert "Traceback" not in p.stderr
    assert not marker.exists() and not (tmp_path / "runs").exists()


@needs_ssh
def test_unknown_host_key_is_refused_without_a_prompt(sshd, tmp_path):
    cfg = tmp_path / "ssh_config"
    (tmp_path / "known_hosts").write_text("")
    cfg.write_text(sshd["ssh_config"].read_text().replace(str(sshd["base"] / "known_hosts"),
                                                          str(tmp_path / "known_hosts")))
    p = _collect("--root", tmp_path / "runs", "--hosts", _hosts_file(tmp_path, cfg), "study=hosts", "rep=1",
                 "--", "true", timeout=60)
    assert p.returncode == 2 and "Host key verification failed" in p.stderr, p.stderr


@pytest.mark.slow  # a Ctrl-C trial: --all (CI); test_collect.py's test_sigint_stops_benchmark_and_monitors is quick
@needs_ssh
def test_ctrl_c_stops_the_monitors_on_every_host(sshd, tmp_path):
    hosts = _hosts_file(tmp_path, sshd["ssh_config"])
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), "--root", str(tmp_path / "runs"),
                             "--hosts", str(hosts), "--settle", "0.2", "study=hosts", "rep=1", "--", "sleep", "30"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _remote_leftovers():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=40)
    assert proc.returncode == 130, err
    run = tmp_path / "runs" / "study=hosts" / "rep=1"
    assert _load(run / "run.toml")["status"] == "interrupted"
    host = _load(run / "host=dbserver" / "host.toml")
    assert host["collect"]["collectors_stop_signal"] == "sar:INT iostat:INT vmstat:INT"
    assert (run / "host=dbserver" / "sa.bin").is_file()
    assert not _remote_leftovers()



@pytest.mark.slow  # a kill -9 trial: --all (CI); test_collect_lifetime.py's killed collect test is quick
@needs_ssh
def test_a_killed_collect_leaves_no_monitor_running_on_the_other_host(sshd, tmp_path):
    """SIGKILL gives collect no chance to stop anything: the end of the supervisor's ssh session does."""
    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("kansoku-collect.*"))
    hosts = _hosts_file(tmp_path, sshd["ssh_config"])
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), "--root", str(tmp_path / "runs"),
                             "--hosts", str(hosts), "--no-monitors", "study=hosts", "rep=1", "--", "sleep", "30"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _remote_leftovers():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 20
    while _remote_leftovers():
        assert time.monotonic() < deadline, _remote_leftovers()
        time.sleep(0.2)
    # and here: the benchmark and the ssh master connection end with collect (its lifeline), and the ssh control
    # directory goes with them
    run = (tmp_path / "runs" / "study=hosts" / "rep=1").resolve()
    deadline = time.monotonic() + 20
    while _local_leftovers(run, sshd["ssh_config"]) or list(tmp.glob(f"kansoku-ssh-{proc.pid}-*")):
        # (the lifeline removes the control directory once the processes are gone: a moment later under load)
        assert time.monotonic() < deadline, (_local_leftovers(run, sshd["ssh_config"]),
                                             list(tmp.glob(f"kansoku-ssh-{proc.pid}-*")))
        time.sleep(0.2)
    # what a killed collect cannot remove: the remote files (never fetched: the supervisor marks them, as its
    # input ended without "stop")
    left = set(tmp.glob("kansoku-collect.*")) - before
    assert len(left) == 1, left
    orphan = left.pop()
    assert (orphan / collect_hosts.ORPHANED).is_file()
    # the next collect to that host removes the marked directory before its inventory, and says so
    p = _collect("--root", tmp_path / "runs", "--hosts", hosts, "--no-monitors", "study=hosts", "rep=2", "--", "true")
    assert p.returncode == 0, p.stderr
    assert not orphan.exists()
    assert "that a killed or disconnected collect left" in p.stderr and str(orphan) in p.stderr
    host = _load(tmp_path / "runs" / "study=hosts" / "rep=2" / "host=dbserver" / "host.toml")
    assert str(orphan) in host["collect"]["removed_orphaned"]
    assert not set(tmp.glob("kansoku-collect.*")) - before  # its own directory was fetched and removed


@needs_ssh
def test_a_host_whose_clock_is_off_stops_the_run_before_the_benchmark(sshd, tmp_path):
    """A second sshd whose sessions find a `date` running 5 s ahead first in their PATH (sshd's SetEnv)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "date").write_text('#!/bin/sh\nif [ "$1" = "+%s.%N" ]; then t=$(/bin/date +%s.%N); '
                               'echo "$(( ${t%.*} + 5 )).${t#*.}"; else exec /bin/date "$@"; fi\n')
    (fake / "date").chmod(0o755)
    port = _free_port()
    base = sshd["base"]
    config = tmp_path / "sshd_config"
    config.write_text((base / "sshd_config").read_text().replace(f"Port {sshd['port']}", f"Port {port}")
                      .replace(f"PidFile {base}/sshd.pid", f"PidFile {tmp_path}/sshd.pid")
                      + f"SetEnv PATH={fake}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\n")
    (tmp_path / "known_hosts").write_text((base / "known_hosts").read_text().replace(f"]:{sshd['port']} ", f"]:{port} "))
    cfg = tmp_path / "ssh_config"
    cfg.write_text(sshd["ssh_config"].read_text().replace(f"Port {sshd['port']}", f"Port {port}")
                   .replace(str(base / "known_hosts"), str(tmp_path / "known_hosts")))
    proc = _start_sshd(config, port)
    try:
        marker = tmp_path / "benchmark-ran"
        p = _collect("--root", tmp_path / "runs", "--hosts", _hosts_file(tmp_path, cfg), "study=hosts", "rep=1",
                     "--", "touch", marker)
    finally:
        _stop(proc)
    assert p.returncode == 2, p.stderr
    assert "host 'dbserver'" in p.stderr and "sampling interval" in p.stderr, p.stderr
    # the offset as measured: 5 s give or take the round trip's error (+4.996 s under a load of 10-13)
    said = re.search(r"its clock is ([+-]\d+\.\d+) s", p.stderr)
    assert said and 4.9 < float(said.group(1)) < 5.1, p.stderr
    assert not marker.exists() and not (tmp_path / "runs").exists()

def test_a_clock_further_off_than_the_sampling_interval_is_an_error():
    # a "host" whose date runs 5 s ahead: the offset is measured, then refused naming the host
    fake = ["sh", "-c", "while read x; do echo $(( $(date +%s) + 5 )).$(date +%N); done"]
    offset, error = collect_hosts.clock_offset(fake)
    assert 4.9 < offset < 5.1 and 0 <= error < 0.1
    with pytest.raises(collect_hosts.SshError) as exc:
        collect_hosts.check_clock("dbserver", "host 'dbserver' (ssh db1)", offset, error)
    assert "host 'dbserver'" in str(exc.value) and "sampling interval" in str(exc.value)
    collect_hosts.check_clock("dbserver", "host 'dbserver'", 0.2, 0.01)  # within: no error


def test_inventory_of_a_host_is_read_like_this_hosts():
    from kansoku.collect.run import machine_info

    script = collect_hosts._inventory_script(["sysstat"])
    p = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30)
    machine, versions = collect_hosts.parse_inventory(p.stdout)
    local = machine_info(Path(tempfile.gettempdir()))
    for key in ("hostname", "kernel", "os", "cpu_model", "cpu_count", "mem_total_kib", "disks", "filesystem",
                "virtualization", "virtualization_layers"):
        assert machine.get(key) == local.get(key), key
    assert versions["sysstat"].startswith("sysstat version")


def test_inventory_records_both_virtualisation_layers():
    """systemd-detect-virt alone names the innermost layer (a container inside a virtual machine is the
    container): the inventory also holds what --vm and --container print."""
    import shutil

    from kansoku.collect.run import machine_info

    if shutil.which("systemd-detect-virt") is None:
        pytest.skip("systemd-detect-virt not installed")
    printed = {layer: subprocess.run(["systemd-detect-virt", f"--{layer}"], capture_output=True,
                                     text=True).stdout.strip() for layer in ("vm", "container")}
    machine = machine_info(Path(tempfile.gettempdir()))
    assert machine["virtualization_layers"] == {k: v for k, v in printed.items() if v}
    script = collect_hosts._inventory_script([])
    remote, _ = collect_hosts.parse_inventory(subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                                                             timeout=30).stdout)
    assert remote["virtualization_layers"] == machine["virtualization_layers"]


# a plan's two hosts: this one the client, the tests' sshd (ALIAS) the server
SSH_HOSTS = """\
[hosts.pgclient]
role = "client"

[hosts.dbserver]
role = "server"
ssh = "{alias}"
ssh_config = "{config}"
"""


PLAN = """\
root = "runs"
order = "listed"
settle_s = 0.2
monitors = false

[factors]
study = ["hosts"]
clients = [1, 2]

[run]
command = "sh -c 'sleep 1; echo {{clients}} >> {{plan_dir}}/ran.txt'"

[[setup]]
on = ["study"]
command = "echo setup >> ran.txt"

""" + SSH_HOSTS + """\
identity = "{identity}"
monitors = ["vmstat"]
"""


@pytest.mark.slow  # a long test of what quicker ones check too: --all (CI) runs it
@needs_ssh
def test_a_plan_with_hosts(sshd, tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(alias=ALIAS, config=sshd["ssh_config"], identity=sshd["base"] / "user_key"))
    dry = _collect("--plan", plan, "--dry-run")
    assert dry.returncode == 0 and f"hosts: this host (client), dbserver (server, ssh {ALIAS})" in dry.stdout
    p = _collect("--plan", plan)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "ran.txt").read_text().split() == ["setup", "1", "2"]
    for clients in (1, 2):
        run = tmp_path / "runs" / "study=hosts" / f"clients={clients}"
        assert _load(run / "run.toml")["role"] == "client"
        host = _load(run / "host=dbserver" / "host.toml")
        assert host["role"] == "server" and host["collect"]["collectors_stop_signal"] == "vmstat:INT"
        assert (run / "host=dbserver" / "vmstat.txt").stat().st_size > 0
        assert not (run / "host=dbserver" / "sa.bin").exists()  # only the monitors the host asks for


@needs_ssh
def test_a_plan_with_an_unreachable_host_stops_before_its_first_setup(sshd, tmp_path):
    cfg = tmp_path / "ssh_config"
    cfg.write_text(sshd["ssh_config"].read_text().replace(f"Port {sshd['port']}", f"Port {_free_port()}"))
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(alias=ALIAS, config=cfg, identity=sshd["base"] / "user_key"))
    p = _collect("--plan", plan)
    assert p.returncode == 2 and "host 'dbserver'" in p.stderr and "cannot be reached" in p.stderr, p.stderr
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "runs").exists()


# ---------------------------------------------------------------- a PostgreSQL server on the "remote" host

from test_collect_integration import _skip_reason as _pg_skip_reason  # noqa: E402
from test_collect_integration import server  # noqa: E402,F401  (the fixture)

needs_pg = pytest.mark.skipif(_pg_skip_reason() is not None, reason=_pg_skip_reason() or "")


@pytest.mark.slow  # a long test of what quicker ones check too: --all (CI) runs it
@needs_ssh
@needs_pg
def test_pgbench_here_against_a_server_monitored_over_ssh(sshd, server, tmp_path):  # noqa: F811
    """This host runs pgbench (client); the server's settings and pg_stat snapshots are read by psql ON the
    server host, over ssh, and land in host=dbserver/ beside its monitors' files."""
    port = server["port"]
    conninfo = f"host=127.0.0.1 port={port} user=postgres dbname=bench"
    subprocess.run(["pgbench", "-i", "-q", "-s", "1", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "bench"],
                   check=True, capture_output=True)
    strace = shutil.which("strace") is not None
    hosts = _hosts_file(tmp_path, sshd["ssh_config"],
                        extra=f'conninfo = "{conninfo}"\npg_stat_replication = true\n'
                              + (f'strace_pidfile = "{server["data"]}/postmaster.pid"\n' if strace else ""))
    p = _collect("--root", tmp_path / "runs", "--hosts", hosts, "--settle", "0.5", "--pg-stat-interval", "1",
                 "study=hosts", "clients=2", "rep=1", "--",
                 "pgbench", "-n", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", "2", "-T", "3", "bench")
    assert p.returncode == 0, p.stderr
    run = tmp_path / "runs" / "study=hosts" / "clients=2" / "rep=1"
    assert "tps = " in (run / "pgbench.log").read_text()
    hd = run / "host=dbserver"
    host = _load(hd / "host.toml")
    assert host["server"]["version"].startswith("PostgreSQL ") and host["server"]["port"] == str(port)
    assert "capture_error" not in host["server"] and host["versions"]["psql"].startswith("psql (PostgreSQL)")
    assert (hd / "pg_settings.csv").read_text().startswith("name,setting,unit,source")
    for moment in ("before", "after"):
        assert (hd / f"pg_stat_bgwriter.{moment}.csv").read_text().startswith("snapshot_at,checkpoints_timed")
        # a primary without standbys: the header alone
        assert (hd / f"pg_stat_replication.{moment}.csv").read_text().startswith("snapshot_at,pid,application_name")
    series = (hd / "pg_stat_bgwriter.series.csv").read_text().splitlines()
    assert len(series) - 1 == host["collect"]["pg_stat_series_snapshots"] >= 1
    assert host["collect"]["pg_stat_replication_series_snapshots"] >= 1 and "errors" not in host["collect"]
    assert not (run / "pg_settings.csv").exists()  # nothing of the server's at the top: this host had no conninfo
    if strace:  # strace -c -f on the server host's postmaster, stopped like the monitors
        assert "% time" in (hd / "strace_c.txt").read_text()
        assert host["collect"]["strace_stop_signal"] == "INT" and host["versions"]["strace"].startswith("strace")


# ---------------------------------------------------------------- a host that stops measuring mid-run

def _pids(match) -> list[int]:
    """Live processes (not zombies) for which match(cmdline: bytes, cwd: str) is true."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if (p / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            if match((p / "cmdline").read_bytes(), os.readlink(p / "cwd")):
                out.append(int(p.name))
        except OSError:
            continue
    return out


def _wait_for(match, proc: subprocess.Popen, timeout: float = 40) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        found = _pids(match)
        if found:
            return found
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(p.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


LOST_PLAN = """\
root = "runs"
order = "listed"
settle_s = 0.2
monitors = false

[factors]
study = ["lost"]
clients = [1]

[run]
command = "sleep 4"

""" + SSH_HOSTS + """\
monitors = ["vmstat"]
"""


@pytest.mark.slow  # a fault trial: --all (CI); test_collect_from_a_second_host_over_ssh is quick
@needs_ssh
def test_a_connection_cut_mid_run_fails_the_run_and_a_resume_measures_it_again(sshd, tmp_path):
    """The ssh session of the server's supervisor is killed while the benchmark runs: its monitors stop there,
    the run is failed (never "ok"), the summary and the exit status say so, and the same command runs it again."""
    plan = tmp_path / "plan.toml"
    plan.write_text(LOST_PLAN.format(alias=ALIAS, config=sshd["ssh_config"]))
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), "--plan", str(plan)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    config = str(sshd["ssh_config"]).encode()
    session = _wait_for(lambda cmd, cwd: config in cmd and b"echo ready" in cmd and b"ControlMaster=no" in cmd, proc)
    _wait_for(lambda cmd, cwd: "/kansoku-collect." in cwd and cmd.startswith(b"vmstat"), proc)
    for pid in session:  # the supervisor's ssh session here: its channel closes, the supervisor sees its input end
        os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    run = tmp_path / "runs" / "study=lost" / "clients=1"
    meta = _load(run / "run.toml")
    assert meta["status"] == "failed" and meta["exit_code"] == 0
    assert "host dbserver: monitors: the connection to the host was lost" in meta["status_note"], meta["status_note"]
    assert "collect: 0 runs ok, 1 failed" in err and f"failed: {run.resolve()}: host dbserver" in err, err
    host = _load(run / "host=dbserver" / "host.toml")
    assert any("connection to the host was lost" in e for e in host["collect"]["errors"])
    assert not _remote_leftovers()
    # the same command again: the failed run is moved aside and measured again
    p = _collect("--plan", plan)
    assert p.returncode == 0, p.stderr
    assert "0 already done, 1 to run" in p.stderr and "collect: 1 runs ok, 0 failed" in p.stderr, p.stderr
    assert _load(run / "run.toml")["status"] == "ok"
    assert len(list(run.parent.glob(".clients=1.attempt-*"))) == 1


@pytest.mark.slow  # a fault trial: --all (CI); test_collect_from_a_second_host_over_ssh is quick
@needs_ssh
def test_monitors_that_end_early_here_and_there_fail_the_run(sshd, tmp_path):
    """vmstat killed on the server host and iostat killed here, mid-run: the benchmark exited 0, the run did not
    measure what it says: failed, exit status 1, both named."""
    hosts = _hosts_file(tmp_path, sshd["ssh_config"])
    run = (tmp_path / "runs" / "study=early" / "rep=1")
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), "--root", str(tmp_path / "runs"),
                             "--hosts", str(hosts), "--settle", "0.2", "study=early", "rep=1", "--", "sleep", "4"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    remote = _wait_for(lambda cmd, cwd: "/kansoku-collect." in cwd and cmd.startswith(b"vmstat"), proc)
    local = _wait_for(lambda cmd, cwd: cwd == str(run.resolve()) and cmd.startswith(b"iostat"), proc)
    for pid in remote + local:
        os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    meta = _load(run / "run.toml")
    assert meta["status"] == "failed" and meta["exit_code"] == 0
    note = meta["status_note"]
    assert "monitor iostat on this host ended before the run did" in note, note
    assert "host dbserver: monitor vmstat ended before the run did" in note, note
    assert "run failed" in err and "host dbserver" in err
    assert not _remote_leftovers()


@pytest.mark.slow  # a fault trial: --all (CI); test_collect_from_a_second_host_over_ssh is quick
@needs_ssh
def test_sshd_stopped_mid_run_fails_the_run_and_once_back_the_run_is_measured_again(sshd, tmp_path):
    """A second sshd, killed with every session it serves while the benchmark runs: the supervisor's session and
    the master connection are gone, the files cannot be fetched (host.toml alone): failed, exit status 1."""
    port = _free_port()
    base = sshd["base"]
    config = tmp_path / "sshd_config"
    config.write_text((base / "sshd_config").read_text().replace(f"Port {sshd['port']}", f"Port {port}")
                      .replace(f"PidFile {base}/sshd.pid", f"PidFile {tmp_path}/sshd.pid"))
    (tmp_path / "known_hosts").write_text((base / "known_hosts").read_text().replace(f"]:{sshd['port']} ", f"]:{port} "))
    cfg = tmp_path / "ssh_config"
    cfg.write_text(sshd["ssh_config"].read_text().replace(f"Port {sshd['port']}", f"Port {port}")
                   .replace(str(base / "known_hosts"), str(tmp_path / "known_hosts")))
    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("kansoku-collect.*"))
    daemon = _start_sshd(config, port)
    try:
        proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), "--root", str(tmp_path / "runs"),
                                 "--hosts", str(_hosts_file(tmp_path, cfg)), "--no-monitors", "--settle", "0.2",
                                 "study=stopped", "rep=1", "--", "sleep", "4"],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda cmd, cwd: "/kansoku-collect." in cwd and cmd.startswith(b"vmstat"), proc)
        sshds = [daemon.pid] + [pid for pid in _descendants(daemon.pid)  # sshd's processes, not the sessions' own
                                if _cmdline(pid).startswith(b"sshd")]
        for pid in sshds:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        daemon.wait()
        out, err = proc.communicate(timeout=90)
    finally:
        if daemon.poll() is None:
            _stop(daemon)
    assert proc.returncode == 1, err
    run = tmp_path / "runs" / "study=stopped" / "rep=1"
    meta = _load(run / "run.toml")
    assert meta["status"] == "failed" and "host dbserver: monitors: the connection to the host was lost" \
        in meta["status_note"], meta["status_note"]
    assert "host dbserver" in err and "run failed" in err
    assert "fetch" in meta["status_note"], meta["status_note"]  # sshd is gone: nothing came back
    assert sorted(p.name for p in (run / "host=dbserver").iterdir()) == ["host.toml"]
    deadline = time.monotonic() + 20
    while _remote_leftovers():
        assert time.monotonic() < deadline, _remote_leftovers()
        time.sleep(0.2)
    for left in set(tmp.glob("kansoku-collect.*")) - before:  # never fetched: marked by its supervisor
        assert (left / collect_hosts.ORPHANED).is_file()
        shutil.rmtree(left, ignore_errors=True)
    # sshd back: the same command with --replace (as the failed run's refusal says) measures the run again, the
    # failed attempt kept aside
    daemon = _start_sshd(config, port)
    try:
        again = subprocess.run([sys.executable, str(ROOT / "tools" / "collect"), "--root", str(tmp_path / "runs"),
                                "--hosts", str(_hosts_file(tmp_path, cfg)), "--no-monitors", "--settle", "0.2",
                                "--replace", "study=stopped", "rep=1", "--", "sleep", "1"],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        _stop(daemon)
    assert again.returncode == 0, again.stderr
    assert _load(run / "run.toml")["status"] == "ok"
    assert len(list(run.parent.glob(".rep=1.attempt-*"))) == 1
    assert not _remote_leftovers()


# ---------------------------------------------------------------- perf, the server log and setups on a host

REMOTE_PLAN = """\
root = "runs"
order = "listed"
settle_s = 0.3
pg_stat_interval_s = 0

[factors]
study = ["remote"]
clients = [2]

[run]
command = "sh -c 'pgbench -n -h 127.0.0.1 -p {port} -U postgres -c {{clients}} -j 1 -T 2 -b select-only bench && psql -X -q -h 127.0.0.1 -p {port} -U postgres -d bench -c CHECKPOINT'"
output = "pgbench.log"

[[setup]]                   # runs on the server host, over ssh
on = ["study"]
host = "dbserver"
command = "pgbench -i -q -s 1 -h 127.0.0.1 -p {port} -U postgres bench && echo \\"$SSH_CONNECTION\\" > {{plan_dir}}/setup-ssh.txt"
log = ".setup/init.log"

""" + SSH_HOSTS + """\
monitors = ["vmstat"]
perf_pidfile = "{pidfile}"
perf_frequency = 199
server_log = "{log}"
"""


def _perf_can_record() -> bool:
    from kansoku.collect.profile import ProfileError, probe

    if shutil.which("perf") is None:
        return False
    try:
        probe(None, 99)
        return True
    except ProfileError:
        return False


@pytest.mark.slow  # a long test of what quicker ones check too: --all (CI) runs it
@needs_ssh
@needs_pg
@pytest.mark.skipif(not _perf_can_record(), reason="perf missing or cannot record here (perf_event_paranoid)")
def test_perf_the_server_log_and_a_setup_on_the_server_host(sshd, server, tmp_path):  # noqa: F811
    """A plan whose server host is reached over ssh: its [[setup]] runs there, perf records its postmaster there and
    the part of its log written during the run comes back with its monitors; ingest stores the profile and the
    checkpoints under that host's role, none under the client's."""
    from kansoku.ingest.pipeline import ingest

    plan = tmp_path / "plan.toml"
    plan.write_text(REMOTE_PLAN.format(port=server["port"], alias=ALIAS, config=sshd["ssh_config"],
                                       pidfile=server["data"] / "postmaster.pid", log=server["base"] / "server.log"))
    p = _collect("--plan", plan, timeout=240)
    assert p.returncode == 0, p.stderr
    assert "setup (on host dbserver, ssh kansoku-test-server)" in p.stderr
    assert (tmp_path / "setup-ssh.txt").read_text().strip().endswith(f" {sshd['port']}")  # it ran in an ssh session
    assert "# host: dbserver (server, ssh kansoku-test-server)" in (tmp_path / "runs" / ".setup" / "init.log").read_text()
    run = tmp_path / "runs" / "study=remote" / "clients=2"
    hd = run / "host=dbserver"
    assert not (run / "perf-script.txt.gz").exists() and not (run / "server.log").exists()  # not the client's
    assert (hd / "perf-script.txt.gz").stat().st_size > 0 and not (hd / "perf.data").exists()
    assert "checkpoint starting:" in (hd / "server.log").read_text()
    host = _load(hd / "host.toml")
    coll = host["collect"]
    assert "errors" not in coll, coll.get("errors")
    assert coll["perf_record"].startswith("perf record -g -F 199 -e ") and coll["perf_stop_signal"] == "INT"
    assert coll["perf_target"] == "postmaster and its processes" and coll["collectors_stop_signal"] == "vmstat:INT"
    assert coll["server_log"] == str(server["base"] / "server.log") and coll["server_log_bytes"] > 0
    assert host["versions"]["perf"].startswith("perf version")
    db = tmp_path / "k.duckdb"
    report = ingest([tmp_path / "runs"], db)
    assert report.ok
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        hosts = con.execute("SELECT DISTINCT host, role FROM profile_stacks").fetchall()
        assert hosts == [(REMOTE_HOSTNAME, "server")], hosts
        assert con.execute("SELECT role, samples > 0 FROM profile_hosts").fetchall() == [("server", True)]
        procs = con.execute("SELECT list(DISTINCT process) FROM profile_stacks").fetchone()[0]
        assert procs == ["postgres"]  # the postmaster's processes only
        assert con.execute("SELECT DISTINCT role FROM pg_checkpoints").fetchall() == [("server",)]
    finally:
        con.close()
    # the profile's table and flame graph name the host profiled, its role and its machine, in each language
    from kansoku.report.build import compute_figure_model, compute_table_model
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    spec = tmp_path / "remote-test.toml"
    spec.write_text(PROFILE_SPEC)
    report = load_report(spec)
    items = {it.id: it for ch in report.chapters for it in ch.tables + ch.figures}
    store = open_store(db, read_only=True)
    try:
        table = compute_table_model(store, report, items["top"])
        figure = compute_figure_model(store, report, items["flame"])
    finally:
        store.close()
    from kansoku.report.machines import cpus

    cpu = cpus(host["machine"])  # "2 vCPUs (AMD EPYC)", the machine block's words
    for notes in (table.footnote, figure.footnote):
        assert notes["en"] == f"Profiled on host {REMOTE_HOSTNAME} (server; {cpu['en']}, " \
                              f"{notes['en'].rsplit(', ', 1)[1]}", notes
        assert notes["en"].endswith(" GiB).") or notes["en"].endswith(" MiB).")
        assert notes["ja"].startswith(f"プロファイルの取得先: ホスト {REMOTE_HOSTNAME}（サーバ、{cpu['ja']}, ")


PROFILE_SPEC = """
[report]
id = "remote-test"
fiscal_year = 2026
title = { ja = "遠隔", en = "Remote" }
organisation = { ja = "kansoku", en = "kansoku" }

[[chapter]]
id = "c"
title = { ja = "章", en = "Chapter" }

[[chapter.table]]
id = "top"
caption = { ja = "上位の関数", en = "Top functions" }
rows = "functions"
metric = "profile_samples"
columns = "clients"
options = { top = 5 }

[[chapter.figure]]
id = "flame"
caption = { ja = "フレームグラフ", en = "Flame graph" }
chart = "flamegraph"
metric = "profile_samples"
series = "clients"
"""


def test_a_setup_on_an_unknown_host_and_perf_on_this_host_are_plan_errors(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text("""\
order = "listed"
[factors]
x = [1]
[run]
command = "true"
[[setup]]
host = "dbservr"
command = "true"
[hosts.pgclient]
role = "client"
perf_pidfile = "/tmp/postmaster.pid"
[hosts.dbserver]
role = "server"
ssh = "db1"
perf_event = "cpu-clock"
""")
    p = _collect("--plan", plan, "--dry-run")
    assert p.returncode == 3, p.stderr
    assert 'setup[0].host: host "dbservr" is not a host of [hosts]; did you mean "dbserver"?' in p.stderr, p.stderr
    assert "hosts.pgclient.perf_pidfile: perf_pidfile is for a host reached over ssh" in p.stderr
    assert "hosts.dbserver.perf_event: perf_event without perf_pidfile or perf_system_wide" in p.stderr
