"""app/forked.py: the build's computation in a child process, its memory the system's again once it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT
from kansoku.app.forked import run_forked
from kansoku.errors import KansokuError, ParseError


def _peak_rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
    return bool(stat) and stat.split(") ")[1][0] != "Z"


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_the_childs_memory_is_never_the_callers():
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from the present size
    before = _peak_rss_kib()

    def work():
        held = [bytearray(1 << 20) for _ in range(300)]  # 300 MiB, touched
        return sum(len(b) for b in held)

    assert run_forked(work) == 300 << 20
    assert _peak_rss_kib() - before < 50 << 10  # the caller's peak: far less than what the child held


def test_an_error_of_the_child_is_raised_with_its_class_text_and_exit_code():
    def work():
        raise ParseError("pgbench.log", 12, "a latency in microseconds", "abc")

    with pytest.raises(ParseError) as got:
        run_forked(work)
    assert got.value.exit_code == 2 and "pgbench.log" in str(got.value) and "12" in str(got.value)


def test_an_unexpected_error_of_the_child_carries_the_childs_traceback():
    def compute_the_thing():
        return {}["missing"]

    with pytest.raises(KeyError) as got:
        run_forked(compute_the_thing)
    assert any("compute_the_thing" in note for note in got.value.__notes__)


def test_a_result_that_cannot_cross_is_an_error_that_says_so():
    with pytest.raises(KansokuError, match="cannot be handed back"):
        run_forked(lambda: threading.Lock())


def test_a_ctrl_c_of_the_caller_alone_stops_the_child(tmp_path):
    pid_file = tmp_path / "child.pid"

    def work():
        pid_file.write_text(str(os.getpid()))
        time.sleep(60)

    def interrupt():
        deadline = time.monotonic() + 10
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_forked(work)
    assert time.monotonic() - t0 < 10
    assert _wait_gone(int(pid_file.read_text()), 1.0)


def test_a_caller_killed_leaves_no_child_computing(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(ROOT / 'tools')!r})
        from kansoku.app.forked import run_forked

        def work():
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            time.sleep(60)

        run_forked(work)
    """)
    caller = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 20
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        caller.kill()
        caller.wait(10)
        assert _wait_gone(child), "the child outlived its killed caller"
    finally:
        caller.kill()


def test_the_childs_work_is_profiled_into_the_file_the_environment_names(tmp_path, monkeypatch):
    import pstats

    from kansoku.app.forked import PROFILE_ENV

    monkeypatch.setenv(PROFILE_ENV, str(tmp_path / "child.prof"))

    def add_up_the_numbers():
        return sum(range(1000))

    assert run_forked(add_up_the_numbers) == 499500
    names = {fn for (_, _, fn) in pstats.Stats(str(tmp_path / "child.prof")).stats}
    assert "add_up_the_numbers" in names
