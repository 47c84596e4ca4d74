"""A command run and measured as the bench measures every tool: wall time, CPU (user + sys of the process and
the children it waited for) and peak memory of its process tree, sampled from /proc.

Peak memory is not the rusage's ``ru_maxrss``: a child that Python starts with vfork and exec inherits the
high-water RSS of the process that started it (a bench holding a large store reported that figure for
every tool it ran). Each process's own peak (VmHWM, kept by the kernel since its exec) is read instead.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass

SAMPLE_S = 0.05


@dataclass
class Measured:
    returncode: int
    wall_s: float
    cpu_s: float    # user + sys of the process and the children it waited for
    peak_mb: float  # the largest peak RSS of one process of the tree
    tree_mb: float  # the largest RSS of the whole tree at once (sampled)
    stdout: str | bytes | None = None  # what it printed, when run with stdout=subprocess.PIPE


def tree_rss_mb(pid: int, hwm: dict[int, float] | None = None) -> float:
    """RSS of ``pid`` and its descendants (Linux /proc), in MB; 0 when they are gone. ``hwm`` gets each
    process's peak RSS since its exec (VmHWM), the largest seen."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                fields = {k: v for k, _, v in (ln.partition(":") for ln in fh)}
            total += int(fields.get("VmRSS", "0 kB").split()[0]) / 1024
            if hwm is not None:
                hwm[p] = max(hwm.get(p, 0.0), int(fields.get("VmHWM", "0 kB").split()[0]) / 1024)
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return total


def sample_tree(pid: int, stop: threading.Event, out: dict) -> None:
    """Until ``stop``: ``out["tree_mb"]``, the peak of the tree's summed RSS; ``out["peak_mb"]``, the largest
    process's peak RSS (exact for a process seen alive)."""
    hwm: dict[int, float] = {}
    while True:
        out["tree_mb"] = max(out.get("tree_mb", 0.0), tree_rss_mb(pid, hwm))
        out["peak_mb"] = max(hwm.values(), default=0.0)
        if stop.wait(SAMPLE_S):
            return


def measure(cmd: list, **popen) -> Measured:
    """Run ``cmd`` (``subprocess.Popen`` keywords: stdout, stderr, cwd, env) to its end, measured."""
    t0 = time.monotonic()
    proc = subprocess.Popen(list(map(str, cmd)), **popen)
    stop, seen = threading.Event(), {"tree_mb": 0.0, "peak_mb": 0.0}
    sampler = threading.Thread(target=sample_tree, args=(proc.pid, stop, seen), daemon=True)
    sampler.start()
    captured = proc.stdout.read() if popen.get("stdout") == subprocess.PIPE else None  # (a full pipe stops it)
    _, status, ru = os.wait4(proc.pid, 0)  # the child's rusage, with the children it waited for
    stop.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measured(proc.returncode, time.monotonic() - t0, ru.ru_utime + ru.ru_stime, seen["peak_mb"],
                    seen["tree_mb"], captured)
