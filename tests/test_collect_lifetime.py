"""Nothing tools/collect starts outlives it, however it ends: kill -9 here, and over the tests' sshd; a resumed run
never shares its directory with an old monitor; no ssh control directory or temporary directory is left."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import pytest

from kansoku.collect import lifetime
from kansoku.collect.run import CollectError, RunRequest, collect_run
from test_collect_hosts import (  # noqa: F401  (the fixtures)
    ALIAS,
    _one_test_of_this_module_at_a_time,
    _remote_leftovers,
    needs_ssh,
    sshd,
)

ROOT = Path(__file__).resolve().parents[1]
TMP = Path(tempfile.gettempdir())
needs_monitors = pytest.mark.skipif(not all(shutil.which(p) for p in ("sar", "iostat", "vmstat", "strace")),
                                    reason="sysstat, procps and strace are installed by .ci/setup")


def _collect(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), *map(str, args)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _processes() -> dict[int, tuple[int, bytes, str]]:
    """Every live process (a zombie is gone): pid -> (parent, command line, working directory)."""
    out = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            out[int(p.name)] = (int(fields[1]), (p / "cmdline").read_bytes().replace(b"\0", b" "),
                                os.readlink(p / "cwd"))
        except OSError:
            continue
    return out


def _working_under(root: Path) -> list[str]:
    """Processes working in ``root`` or below (run directories and the attempts moved aside), or holding a file
    or directory there open."""
    root_s = str(root.resolve())
    out = []
    for pid, (_, cmd, cwd) in _processes().items():
        inside = cwd == root_s or cwd.startswith(root_s + "/")
        if not inside:
            try:
                inside = any((t := os.readlink(fd)) == root_s or t.startswith(root_s + "/")
                             for fd in Path(f"/proc/{pid}/fd").iterdir())
            except OSError:
                pass
        if inside:
            out.append(f"{pid} {cmd.decode(errors='replace')}")
    return out


def _lifelines(collect_pid: int) -> list[int]:
    return [pid for pid, (ppid, cmd, _) in _processes().items() if ppid == collect_pid and b"lifetime.py" in cmd]


def _masters(ssh_config: Path | None) -> list[str]:
    if ssh_config is None:
        return []
    return [cmd.decode() for _, cmd, _ in _processes().values()
            if b"ControlMaster=yes" in cmd and str(ssh_config).encode() in cmd]


def _until(what, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while (left := what()):
        assert time.monotonic() < deadline, left
        time.sleep(0.1)


def _kill_by_pid(pids) -> None:  # what a failing test left behind, ended by PID
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _perf_can_record() -> bool:
    from kansoku.collect.profile import ProfileError, probe

    try:
        return shutil.which("perf") is not None and bool(probe(None, 99))
    except ProfileError:
        return False


@needs_monitors
def test_a_killed_collect_leaves_nothing_it_started_running(tmp_path):
    """sar (and its sadc), iostat, vmstat, strace, perf and the benchmark (a shell and what it forked) end with a
    collect killed by SIGKILL, which can stop nothing itself."""
    target = subprocess.Popen(["sleep", "120"])  # what strace (and perf) attach to
    profile = ["--perf-pid", target.pid, "--perf-event", "cpu-clock"] if _perf_can_record() else []
    run = tmp_path / "runs" / "t=kill"
    proc = _collect("--root", tmp_path / "runs", "--settle", "0.2", "--strace-pid", target.pid, *profile, "t=kill",
                    "--", "sh", "-c", "sleep 100 & sleep 100; wait")
    wanted = {b"sar ", b"sadc ", b"iostat ", b"vmstat ", b"strace ", b"sh -c", b"sleep 100"} | (
        {b"perf record"} if profile else set())
    try:
        def missing():
            running = " ".join(_working_under(run)).encode()
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            return [w for w in wanted if w not in running]
        _until(missing, timeout=30)
        lifelines = _lifelines(proc.pid)
        proc.kill()
        proc.wait()
        _until(lambda: _working_under(run))
        _until(lambda: [p for p in lifelines if p in _processes()])  # its work done, the lifeline went too
    finally:
        _kill_by_pid(int(line.split()[0]) for line in _working_under(run))
        target.kill()
        target.wait()


@needs_monitors
def test_a_resumed_run_never_shares_its_directory_with_an_old_monitor(tmp_path):
    """The run is measured again (--replace, as a plan's resume does) right after collect was killed: the attempt
    moved aside holds no live process, and nothing writes into it any more."""
    run = tmp_path / "runs" / "t=again"
    proc = _collect("--root", tmp_path / "runs", "--settle", "0.2", "t=again", "--", "sleep", "100")
    try:
        _until(lambda: [] if any(b"vmstat" in line.encode() for line in _working_under(run)) else ["vmstat"], 30)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        p = subprocess.run([sys.executable, str(ROOT / "tools" / "collect"), "--root", str(tmp_path / "runs"),
                            "--replace", "--settle", "0.2", "t=again", "--", "true"], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        attempts = list(run.parent.glob(".t=again.attempt-*"))
        assert len(attempts) == 1, attempts
        assert _working_under(attempts[0]) == []
        sizes = {f.name: f.stat().st_size for f in attempts[0].iterdir()}
        assert sizes.get("vmstat.txt", 0) > 0
        time.sleep(2.5)  # vmstat and iostat print every second: a monitor still running would have written
        assert {f.name: f.stat().st_size for f in attempts[0].iterdir()} == sizes
        with open(run / "run.toml", "rb") as fh:
            assert tomllib.load(fh)["status"] == "ok"
    finally:
        _kill_by_pid(int(line.split()[0]) for line in _working_under(tmp_path / "runs"))


def test_a_run_directory_still_written_is_not_moved_aside(tmp_path, monkeypatch):
    """A process an earlier collect started there (inheriting the run directory's lock) keeps the attempt in place:
    the new collect waits for it, then refuses, naming it; once it has ended the run is measured again."""
    run = tmp_path / "t=busy"
    run.mkdir()
    (run / "run.toml").write_text('status = "interrupted"\n')
    with lifetime.RunLock(run) as lock:
        assert lock.acquire()
        holder = subprocess.Popen(["sleep", "60"], cwd=run, **lifetime.child(lock=lock))
    try:
        monkeypatch.setattr(lifetime, "LOCK_WAIT_S", 0.5)
        req = RunRequest(root=tmp_path, factors={"t": "busy"}, command=["true"], replace=True, monitors=(),
                         settle_s=0, quiet=True)
        with pytest.raises(CollectError, match=rf"in use by {holder.pid} \(sleep\): another collect"):
            collect_run(req)
        assert (run / "run.toml").read_text() == 'status = "interrupted"\n'
        assert not list(tmp_path.glob(".t=busy.attempt-*"))
    finally:
        holder.kill()
        holder.wait()
        lifetime.ended(holder)
    assert collect_run(req).status == "ok"
    assert len(list(tmp_path.glob(".t=busy.attempt-*"))) == 1


def test_temporary_directories_of_collects_no_longer_running_are_swept():
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = Path(tempfile.mkdtemp(prefix=f"kansoku-test-sweep-{gone.pid}-"))
    mine = Path(tempfile.mkdtemp(prefix=f"kansoku-test-sweep-{os.getpid()}-"))
    try:
        (stale / "0.sock").write_text("")
        assert lifetime.sweep("kansoku-test-sweep-") == [stale]
        assert not stale.exists() and mine.is_dir()
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(mine, ignore_errors=True)


# ---------------------------------------------------------------- kill -9 at random moments

PLAN = """\
root = "runs"
seed = 11
settle_s = 0.2
pg_stat_interval_s = 0

[factors]
study = ["kill"]
clients = [1, 2, 3]

[run]
command = "sh -c 'sleep 1 & sleep 1; wait'"

[[setup]]
on = ["clients"]
command = "sleep 0.3"
"""

SSH = """
[hosts.pgclient]
role = "client"

[hosts.dbserver]
role = "server"
ssh = "{alias}"
ssh_config = "{config}"
"""


def _kill_at_a_random_moment(tmp_path: Path, seed: int, ssh_config: Path | None, span_s: float) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN + (SSH.format(alias=ALIAS, config=ssh_config) if ssh_config else ""))
    runs = tmp_path / "runs"
    remote_before = set(TMP.glob("kansoku-collect.*"))
    at = random.Random(seed).uniform(0.3, span_s)
    proc = _collect("--plan", plan)
    try:
        deadline = time.monotonic() + at
        lifelines: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None:
            lifelines = _lifelines(proc.pid) or lifelines
            time.sleep(0.02)
        proc.kill()
        proc.wait()
        # nothing of that collect runs any more, here or on the other host; its temporary directories are gone
        _until(lambda: _working_under(runs) + _masters(ssh_config) + _remote_leftovers()
               + [str(p) for p in lifelines if p in _processes()])
        for prefix in ("kansoku-ssh-", "kansoku-perf-"):
            assert not list(TMP.glob(f"{prefix}{proc.pid}-*")), f"killed after {at:.2f} s"
        # the same command finishes the campaign, and leaves nothing behind either
        p = subprocess.run([sys.executable, str(ROOT / "tools" / "collect"), "--plan", str(plan)],
                           capture_output=True, text=True, timeout=180)
        assert p.returncode == 0, f"killed after {at:.2f} s: {p.stderr}"
        for d in runs.glob("study=kill/clients=*"):
            with open(d / "run.toml", "rb") as fh:
                assert tomllib.load(fh)["status"] == "ok", d
        assert len(list(runs.glob("study=kill/clients=*"))) == 3
        assert _working_under(runs) + _masters(ssh_config) + _remote_leftovers() == []
        assert not set(TMP.glob("kansoku-collect.*")) - remote_before, f"killed after {at:.2f} s"
    finally:
        _kill_by_pid(int(line.split()[0]) for line in _working_under(runs))


@pytest.mark.slow
@needs_monitors
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_a_random_moment_here(tmp_path, seed):
    _kill_at_a_random_moment(tmp_path, seed, None, span_s=7.0)


@pytest.mark.slow
@needs_ssh
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_a_random_moment_with_a_host_over_ssh(sshd, tmp_path, seed):  # noqa: F811
    _kill_at_a_random_moment(tmp_path, seed, sshd["ssh_config"], span_s=14.0)
