"""External programs (hugo, pandoc, typst, sadf, chromium through kaleido) run with a time bound.

Nothing waits without a bound: each program gets a timeout proportional to its input (a base for its start
plus seconds per MB), after which it is stopped and the command ends with a message saying which program,
how long it was given and for how much input. ``KANSOKU_TIMEOUT_SCALE`` multiplies every bound (a slow or
busy machine: ``KANSOKU_TIMEOUT_SCALE=4``).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from kansoku.errors import KansokuError, MissingToolError

SCALE_ENV = "KANSOKU_TIMEOUT_SCALE"

# program -> (seconds to start and finish a tiny input, seconds per MB of input): generous, an order of
# magnitude above what this project measures (bench/), so that only a program that is stuck is stopped.
BOUNDS: dict[str, tuple[float, float]] = {
    "hugo": (120.0, 10.0),
    "pandoc": (60.0, 20.0),
    "typst": (120.0, 30.0),
    "sadf": (60.0, 10.0),
    "kaleido": (90.0, 30.0),  # per figure, chromium's start included
}


class ExternalTimeout(KansokuError):
    """An external program did not finish within its bound: stopped."""

    exit_code = 1


def input_bytes(paths: Iterable[Path | str]) -> int:
    """Bytes of the files (directories walked) a program reads."""
    total = 0
    for p in map(Path, paths):
        if p.is_file():
            total += p.stat().st_size
        elif p.is_dir():
            for root, _, files in os.walk(p):  # (not pathlib: a run page's files are many)
                for name in files:
                    st = os.lstat(os.path.join(root, name))
                    if stat.S_ISREG(st.st_mode):
                        total += st.st_size
    return total


def scale() -> float:
    try:
        v = float(os.environ.get(SCALE_ENV, "1"))
    except ValueError:
        return 1.0
    return v if v > 0 else 1.0


def timeout_for(program: str, nbytes: int) -> float:
    base, per_mb = BOUNDS[program]
    return (base + per_mb * nbytes / 1e6) * scale()


def run(program: str, cmd: list[str], *, nbytes: int | Callable[[], int], **kwargs: Any
        ) -> subprocess.CompletedProcess:
    """subprocess.run with the program's bound for ``nbytes`` of input; a program that does not finish in
    time is killed and an ExternalTimeout names it. ``nbytes`` a function: counted once the program has
    started (a walk over many files need not delay it), its bound counted from the start all the same."""
    bound: list[tuple[float, int]] = []

    def timeout() -> float:
        n = nbytes() if callable(nbytes) else nbytes
        bound.append((timeout_for(program, n), n))
        return bound[0][0]

    try:
        return run_group(cmd, timeout, **kwargs)
    except subprocess.TimeoutExpired:
        raise ExternalTimeout(timeout_message(program, *bound[0])) from None
    except FileNotFoundError as exc:
        raise MissingToolError(f"{program} not found ({exc.filename})") from None


def kill_group(proc: subprocess.Popen) -> None:
    """Stop a program started in a session of its own and everything it started: a wrapper's child that keeps
    the output pipe open would otherwise keep its reader waiting after the wrapper is gone."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_group(cmd: list[str], timeout: float | Callable[[], float], *, input: Any = None,
              capture_output: bool = False, **kwargs: Any) -> subprocess.CompletedProcess:
    """``subprocess.run`` with the program in a session of its own, whose whole group is killed at the
    timeout (or on any exception, Ctrl-C included): no child of it outlives the wait. ``timeout`` a function:
    asked once the program has started, the seconds it gives counted from the start."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    started = time.monotonic()
    proc = subprocess.Popen(cmd, start_new_session=True, **kwargs)
    try:
        limit = timeout() if callable(timeout) else timeout
        out, err = proc.communicate(input, timeout=max(0.0, limit - (time.monotonic() - started)))
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def timeout_message(program: str, t: float, nbytes: int) -> str:
    return (f"{program} did not finish within {t:.0f} s (its bound for {nbytes / 1e6:.1f} MB of input) and was "
            f"stopped; on a slow or busy machine set {SCALE_ENV}=4 to allow four times as long")
