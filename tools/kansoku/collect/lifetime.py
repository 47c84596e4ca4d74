"""Nothing tools/collect starts outlives it, however it ends (Ctrl-C, an error, SIGKILL, a crash).

**The lifeline.** A small process started with collect's first child, in a session of its own and deaf to the
terminal's signals, reads a pipe whose writing end only collect holds. Every process group collect starts —
the monitors, strace, perf, the benchmark, a setup, the ssh master connections — names itself on that pipe
before it runs: its preexec function writes ``group PGID`` between fork and exec, so no kill of collect can fall
between a start and its registration. The temporary directories collect makes are named there too (``path``).
Once collect has stopped a group or removed a directory itself it says so (``ended``, ``kept``). When the pipe
reads end of file — collect exited, was killed or crashed — the lifeline stops every group still named with
collect's own rule (SIGINT, then SIGTERM, then SIGKILL, each after its grace: ``processes.STOP_SIGNALS``, as the
supervisor of a remote host does when its ssh session ends), removes the directories and exits. sar's sadc and
whatever a benchmark forked are in their leader's group, so they go too.

**The run directory's lock.** collect holds an ``flock`` on the directory of the run it measures, and every
process it starts that writes there inherits it; the lock is free only when the last of them has ended. A run
directory is moved aside (a resumed or replaced run) only under that lock, so a new attempt never shares a
directory with an old monitor, and two collects never measure one run at once.

This file is also the lifeline's program (``python -I -S lifetime.py INT:3 TERM:2 KILL:2``): standard library
only.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

LOCK_WAIT_S = 30.0  # longer than the lifeline's own rule takes to stop what a killed collect left


# ---------------------------------------------------------------- the lifeline (collect's side)

class Lifeline:
    """collect's end of the pipe (one per collect process: :func:`lifeline`)."""

    def __init__(self, rule: tuple[tuple[signal.Signals, float], ...]):
        self.fd = -1
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        argv = [sys.executable, "-I", "-S", str(Path(__file__).resolve()),
                *(f"{sig.name.removeprefix('SIG')}:{grace:g}" for sig, grace in rule)]
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)
        except OSError:  # collect still runs; what it starts is then stopped only by collect itself
            return
        assert self.proc.stdin is not None
        self.fd = self.proc.stdin.fileno()

    def say(self, word: str, arg: str | int) -> None:
        line = f"{word} {arg}\n".encode(errors="surrogateescape")
        with self._lock:
            try:
                os.write(self.fd, line)
            except OSError:  # the lifeline is gone (killed by hand): nothing more to tell it
                pass

    def ended(self, pgid: int) -> None:
        """The group ``pgid`` was stopped and reaped by collect: the lifeline forgets it (its number may be
        reused by an unrelated process)."""
        self.say("ended", pgid)

    def path(self, p: Path) -> None:
        self.say("path", os.fspath(p))

    def kept(self, p: Path) -> None:
        self.say("kept", os.fspath(p))


_LIFELINE: Lifeline | None = None
_START = threading.Lock()


def lifeline() -> Lifeline:
    global _LIFELINE
    with _START:
        if _LIFELINE is None:
            # not at the top: this file is also the lifeline's program, standard library only
            from kansoku.collect.processes import STOP_SIGNALS

            _LIFELINE = Lifeline(STOP_SIGNALS)
        return _LIFELINE


def _registering(fd: int, then: Callable[[], None] | None) -> Callable[[], None]:
    def preexec() -> None:  # between fork and exec, in the child: its group is set already
        try:
            os.write(fd, b"group %d\n" % os.getpgrp())
        except OSError:
            pass
        if then is not None:
            then()
    return preexec


def child(*, lock: "RunLock | None" = None, then: Callable[[], None] | None = None) -> dict[str, Any]:
    """Popen keywords for a process collect starts: a session and process group of its own, named to the
    lifeline before it runs, ``then`` run after (default signal dispositions), and with ``lock`` the run
    directory's lock inherited."""
    kw: dict[str, Any] = {"preexec_fn": _registering(lifeline().fd, then), "start_new_session": True}
    if lock is not None:
        kw["pass_fds"] = (lock.fd,)
    return kw


def ended(proc: subprocess.Popen | None) -> None:
    """``proc``'s group has been stopped and reaped: forget it."""
    if proc is not None and proc.returncode is not None:
        lifeline().ended(proc.pid)


class TempDir:
    """A temporary directory that goes when collect goes: removed on leaving the ``with``, or by the lifeline
    if collect dies first. Its name holds collect's PID, so :func:`sweep` knows whose it was."""

    def __init__(self, prefix: str):
        self.path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
        lifeline().path(self.path)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: Any) -> None:
        self.remove()

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        lifeline().kept(self.path)


def sweep(prefix: str) -> list[Path]:
    """Remove this user's temporary directories ``<prefix><pid>-*`` whose collect is not running (what a collect
    left when its lifeline could not remove them: both killed at once); the directories removed."""
    removed = []
    for d in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = d.name[len(prefix):].split("-", 1)[0]
        try:
            if not pid.isdigit() or d.is_symlink() or d.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if not Path(f"/proc/{pid}").exists():
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


# ---------------------------------------------------------------- the run directory's lock

class RunLock:
    """An flock on a run directory (module docstring)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def acquire(self, wait_s: float | None = None, on_wait: Callable[[], None] | None = None) -> bool:
        deadline = time.monotonic() + (LOCK_WAIT_S if wait_s is None else wait_s)
        said = False
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
            if time.monotonic() >= deadline:
                return False
            if not said and on_wait is not None:
                on_wait()
                said = True
            time.sleep(0.1)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def holders(path: Path) -> list[str]:
    """The processes holding ``path`` open, as 'PID (command)'."""
    target = os.fspath(path.resolve())
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if any(os.readlink(fd) == target for fd in (p / "fd").iterdir()):
                out.append(f"{p.name} ({(p / 'comm').read_text().strip()})")
        except OSError:
            continue
    return out


# ---------------------------------------------------------------- the lifeline's program

def live_groups() -> set[int]:
    """The process groups that have a member that has not exited (a zombie waiting for its parent is gone)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            out.add(int(fields[2]))
    return out


def stop_groups(groups: set[int], rule: list[tuple[signal.Signals, float]]) -> None:
    live = groups & live_groups()
    for sig, grace in rule:
        for g in live:
            try:
                os.killpg(g, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while live and time.monotonic() < deadline:
            time.sleep(0.05)
            live &= live_groups()
        if not live:
            return


def _main(args: list[str]) -> None:
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN,
              signal.SIGTTOU, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    rule = [(signal.Signals["SIG" + name], float(grace)) for name, grace in (a.split(":") for a in args)]
    groups: set[int] = set()
    paths: dict[bytes, None] = {}
    for raw in sys.stdin.buffer:
        word, _, arg = raw.rstrip(b"\n").partition(b" ")
        if word == b"group" and arg.isdigit():
            groups.add(int(arg))
        elif word == b"ended" and arg.isdigit():
            groups.discard(int(arg))
        elif word == b"path":
            paths[arg] = None
        elif word == b"kept":
            paths.pop(arg, None)
    stop_groups(groups, rule)
    for p in paths:
        shutil.rmtree(os.fsdecode(p), ignore_errors=True)


if __name__ == "__main__":
    _main(sys.argv[1:])
