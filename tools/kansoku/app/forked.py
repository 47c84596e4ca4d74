"""A step of the build run in a child process of its own, whose memory goes back to the system when it ends.

Computing a campaign's reports and run pages leaves the Python heap fragmented (freed objects scattered among
live ones), so the process would hold that memory while Hugo renders beside it. The build computes in a forked
child and gets back only the step's small result (pickled through a pipe); Hugo then runs beside a small
parent. An error in the child is raised in the parent (the child's traceback attached as a note); a Ctrl-C
stops both; the child dies with the parent (a parent killed leaves no computation running on).

Only the command line forks (``build_site(in_child=True)``): its process is kansoku's alone, one thread when it
forks. A library caller's process may run threads that hold locks (an output stream's, a database's) at the
moment of the fork, and the child would wait on them forever.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import TypeVar

from kansoku.errors import KansokuError

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1
STOP_GRACE_S = 5.0  # a child asked to stop (Ctrl-C of the parent alone) is killed after this
# a file to write a cProfile of the child's work into (bench/ profiles a build: the parent's profiler ends with
# the parent's code, and the child leaves by os._exit)
PROFILE_ENV = "KANSOKU_PROFILE_CHILD"


def run_forked(work: Callable[[], T]) -> T:
    """``work()`` run in a forked child; its result (picklable) returned, its exception raised here.
    Where the system cannot fork, ``work()`` runs in this process."""
    if not hasattr(os, "fork"):
        return work()
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(work, write_end, parent)  # never returns
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:  # a Ctrl-C (or any error) here: the child stops too, before the caller goes on
        _stop(pid)
        raise
    if not data:
        raise KansokuError(f"the build's computation (process {pid}) ended without a result "
                           f"({_how_it_ended(status)})")
    kind, value = pickle.loads(data)
    if kind == "interrupted":
        raise KeyboardInterrupt
    if kind == "error":
        raise value
    return value


def _child(work: Callable[[], T], write_end: int, parent: int) -> None:
    code = 0
    try:
        _die_with_parent(parent)
        try:
            payload = ("ok", _profiled(work) if os.environ.get(PROFILE_ENV) else work())
        except KeyboardInterrupt:
            payload = ("interrupted", None)
        except BaseException as exc:  # raised again in the parent
            payload = ("error", _portable(exc))
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 (a result that cannot cross: the parent says why)
            data = pickle.dumps(("error", KansokuError(f"the build's computation gave a result that cannot be "
                                                       f"handed back: {exc}")))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
    except BaseException:  # noqa: BLE001 (nothing of the child may run on into the parent's code)
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _profiled(work: Callable[[], T]) -> T:
    import cProfile

    prof = cProfile.Profile()
    try:
        return prof.runcall(work)
    finally:
        prof.dump_stats(os.environ[PROFILE_ENV])


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it pickles (an unexpected one with its traceback attached as a note), else a KansokuError with its
    text and exit code."""
    if not isinstance(exc, KansokuError):
        exc.add_note("in the build's computation (a child process):\n" + "".join(traceback.format_exception(exc)))
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 (an exception type whose arguments do not round-trip)
        err = KansokuError(str(exc) or type(exc).__name__)
        err.exit_code = getattr(exc, "exit_code", err.exit_code)
        return err


def _die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the child may outlive a killed parent
        pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _stop(pid: int) -> None:
    """The child asked to stop (SIGINT: it ends its step as a Ctrl-C does), killed if it has not after a grace."""
    try:
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        pass


def _how_it_ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
