"""A command run and measured as the bench measures every tool: wall time, CPU (user + sys of the process and
the children it waited for) and peak memory of its process tree, sampled from /proc.

Peak memory is not the rusage's ``ru_maxrss``: a child that Python starts with vfork and exec inherits the
high-water RSS of the process that started it (a bench holding a large store reported that figure for
every tool it ran). Each process's own peak (VmHWM, kept by the kernel since its exec) is read instead.

The tree's memory at once is the sum of each process's PSS (``/proc/PID/smaps_rollup``: a page shared by n
processes counts 1/n in each), not of their RSS: a build's child forked for its computation shares the
parent's pages, which a sum of RSS would count twice. Where PSS cannot be read, RSS is summed. A process
started by vfork shares its parent's memory until its exec, and its PSS then reads the parent's whole: a
sample that caught one counted the parent twice. A process younger than ``SPAWN_S`` is not counted (its
children are): by then it has run its program, or it is a fork whose pages are mostly its parent's.

Reading a process's PSS walks its page tables in the kernel: milliseconds for a build's gigabyte, taken from the
same two cores as the build (and holding its memory map's lock meanwhile). The sampler waits at least
``1 / SAMPLER_SHARE`` times as long as its last sample took before the next one, so that it takes at most that
share of a core from what it measures.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass

SAMPLE_S = 0.05
SAMPLER_SHARE = 0.05  # of one core, at most, for the sampling itself
SPAWN_S = 0.1
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    returncode: int
    wall_s: float
    cpu_s: float    # user + sys of the process and the children it waited for
    peak_mb: float  # the largest peak RSS of one process of the tree
    tree_mb: float  # the largest memory of the whole tree at once (PSS summed, sampled)
    stdout: str | bytes | None = None  # what it printed, when run with stdout=subprocess.PIPE


def _pss_kb(pid: int) -> int | None:
    """The PSS of ``pid`` in kB (its share of every page it maps), or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for ln in fh:
                if ln.startswith("Pss:"):
                    return int(ln.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _age_s(pid: int) -> float:
    """Seconds since ``pid`` started (/proc/PID/stat's start time against the system's uptime)."""
    with open(f"/proc/{pid}/stat") as fh:
        started = int(fh.read().rsplit(")", 1)[1].split()[19]) / _TICKS
    with open("/proc/uptime") as fh:
        return float(fh.read().split()[0]) - started


def tree_rss_mb(pid: int, hwm: dict[int, float] | None = None) -> float:
    """The memory of ``pid`` and its descendants (Linux /proc), in MB: their PSS summed (RSS where PSS cannot
    be read), a process just started (``SPAWN_S``) left out; 0 when they are gone. ``hwm`` gets each process's
    peak RSS since its exec (VmHWM), the largest seen."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                fields = {k: v for k, _, v in (ln.partition(":") for ln in fh)}
            if p == pid or _age_s(p) >= SPAWN_S:
                pss = _pss_kb(p)
                total += (pss if pss is not None else int(fields.get("VmRSS", "0 kB").split()[0])) / 1024
            if hwm is not None:
                hwm[p] = max(hwm.get(p, 0.0), int(fields.get("VmHWM", "0 kB").split()[0]) / 1024)
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return total


def sample_tree(pid: int, stop: threading.Event, out: dict) -> None:
    """Until ``stop``: ``out["tree_mb"]``, the peak of the tree's summed PSS; ``out["peak_mb"]``, the largest
    process's peak RSS (exact for a process seen alive)."""
    hwm: dict[int, float] = {}
    while True:
        t0 = time.thread_time()
        out["tree_mb"] = max(out.get("tree_mb", 0.0), tree_rss_mb(pid, hwm))
        out["peak_mb"] = max(hwm.values(), default=0.0)
        if stop.wait(sample_wait(time.thread_time() - t0)):
            return


def sample_wait(cost_s: float) -> float:
    """The wait before the next sample, after one that cost ``cost_s`` of CPU: SAMPLE_S, or long enough that the
    sampling takes at most SAMPLER_SHARE of a core."""
    return max(SAMPLE_S, cost_s / SAMPLER_SHARE)


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
