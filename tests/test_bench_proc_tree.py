"""bench/proc_tree.py: the memory a bench reports is the measured command's own, not its parent's."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import proc_tree  # noqa: E402


def test_a_small_child_of_a_large_bench_reports_its_own_peak_memory():
    held = b"x" * (300 << 20)  # resident in the bench process, which the child's rusage would inherit
    small = proc_tree.measure([sys.executable, "-c", "import time; time.sleep(0.3)"])
    large = proc_tree.measure([sys.executable, "-c", "import time; b = b'x' * (150 << 20); time.sleep(0.3)"])
    assert len(held) and small.returncode == 0 and large.returncode == 0
    assert small.peak_mb < 100 and small.tree_mb < 100
    assert 150 <= large.peak_mb < 300 and large.tree_mb >= 150


def test_the_peak_of_a_tree_counts_a_grandchild_and_the_output_is_kept():
    code = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "\"import time; b = b'y' * (120 << 20); time.sleep(0.3)\"]); print('done')")
    m = proc_tree.measure([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert m.stdout.strip() == "done" and m.peak_mb >= 120 and m.cpu_s > 0


def test_a_process_being_spawned_does_not_count_its_parents_memory_twice():
    """A child started by vfork reads its parent's memory as its own until its exec: a command spawning programs
    all along is measured at its own size, not twice it."""
    code = ("import subprocess, time\nb = bytearray(200 << 20)\nb[::4096] = b'x' * len(b[::4096])\n"
            "t = time.time()\nwhile time.time() - t < 1.0: subprocess.run(['true'])")
    for _ in range(3):
        m = proc_tree.measure([sys.executable, "-c", code])
        assert m.returncode == 0 and 200 <= m.tree_mb < 300, m


def test_the_sampler_waits_longer_after_a_costly_sample():
    """A sample of a large tree costs the kernel milliseconds of a core the measured command also uses: the wait
    after it grows so that the sampling's share of a core stays at SAMPLER_SHARE; a cheap sample waits SAMPLE_S."""
    assert proc_tree.sample_wait(0.0001) == proc_tree.SAMPLE_S
    cost = 0.02
    wait = proc_tree.sample_wait(cost)
    assert wait > proc_tree.SAMPLE_S and cost / wait <= proc_tree.SAMPLER_SHARE + 1e-12
