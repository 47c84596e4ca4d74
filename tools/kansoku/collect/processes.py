"""Stopping a process group that tools/collect started (a monitor, perf record): the gentle signal first, then
harder ones, each with its grace period."""

from __future__ import annotations

import os
import signal
import subprocess

# collect's rule for stopping what it started (a monitor, the benchmark, what a killed collect left): each
# signal to the process group, then the next after its grace
STOP_SIGNALS = ((signal.SIGINT, 3.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0))


def stop_group(proc: subprocess.Popen, signals: tuple[tuple[signal.Signals, float], ...]) -> str | None:
    """Send each (signal, grace seconds) to the process group until the process exits; the name of the signal
    that ended it ("INT", "TERM", "KILL"), or None when none did within its grace."""
    for sig, grace in signals:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
            return sig.name.removeprefix("SIG")
        except subprocess.TimeoutExpired:
            continue
    return None
