"""sa files never make an ingest wait — converted, concatenated and damaged files are ingested or
refused in seconds, a file that begins with a LINUX-RESTART record ingests, and Ctrl-C during the sa parse
of a serial ingest ends it at once with a true message. Every sa file here is written by the real sadc."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, ro_con, run_tool

SADC = next((p for p in ("/usr/lib/sysstat/sadc", "/usr/lib64/sa/sadc", "/usr/libexec/sysstat/sadc")
             if Path(p).is_file()), None)
pytestmark = pytest.mark.skipif(shutil.which("sadf") is None or SADC is None, reason="sysstat not installed")
ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
BOUND_S = 60  # "in seconds": far below this even under load; a hang is caught by the timeout


def _sadc(*args) -> None:
    subprocess.run([SADC, "-S", "ALL", *map(str, args)], check=True, env=ENV, timeout=60)


def _ingest(db: Path, run: Path) -> subprocess.CompletedProcess:
    t0 = time.monotonic()
    p = run_tool("ingest", "--db", db, "--jobs", "1", run, timeout=BOUND_S)
    assert time.monotonic() - t0 < BOUND_S
    assert "Traceback" not in p.stderr, p.stderr
    return p


@pytest.fixture(scope="module")
def restart_first(tmp_path_factory) -> Path:
    """`sadc -S ALL r/sa.bin; sadc -S ALL 1 3 r/sa.bin`: the file begins with a LINUX-RESTART record, as
    every daily file started by `sa1 --boot` or sysstat-collect after a reboot does."""
    run = tmp_path_factory.mktemp("restart") / "r"
    run.mkdir()
    _sadc(run / "sa.bin")
    _sadc(1, 3, run / "sa.bin")
    out = subprocess.run(["sadf", "-d", str(run / "sa.bin"), "--", "-A"], capture_output=True, text=True,
                         env=ENV).stdout
    assert "LINUX-RESTART" in out.splitlines()[0]  # sadf prints it before the first section's header
    return run


def test_an_sa_file_that_begins_with_a_restart_record_ingests(restart_first, tmp_path):
    db = tmp_path / "k.duckdb"
    p = _ingest(db, restart_first)
    assert p.returncode == 0, p.stderr
    con = ro_con(db)
    try:
        restarts = con.execute("SELECT count(*), min(value) FROM sys_metrics WHERE activity = 'restart'").fetchone()
        assert restarts[0] == 1 and restarts[1] >= 1  # its CPU count
        # sadc 1 3: three records, the first the base of the rates: two samples of every activity
        assert con.execute("SELECT count(DISTINCT sample) FROM sys_metrics WHERE activity = 'cpu'").fetchone() == (2,)
    finally:
        con.close()


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_an_sa_file_concatenated_to_itself_is_refused_in_seconds(restart_first, tmp_path):
    """`cat sa.bin sa.bin > run/sa.bin`: sadf reads past the first file's records into garbage; the check
    that fails on the last batch must not leave the ingest waiting for the splitter."""
    for name, src in (("with-restart", restart_first / "sa.bin"), ("plain", None)):
        run = tmp_path / name
        run.mkdir()
        if src is None:
            _sadc(1, 3, tmp_path / f"{name}.bin")
            src = tmp_path / f"{name}.bin"
        (run / "sa.bin").write_bytes(src.read_bytes() * 2)
        db = tmp_path / f"{name}.duckdb"
        p = _ingest(db, run)
        assert p.returncode in (0, 2), (p.returncode, p.stderr)
        if p.returncode == 2:
            assert "sa.bin" in p.stderr and "concatenated" in p.stderr, p.stderr
            assert "nothing was stored" in p.stderr


def _parse_bounded(sa: Path):
    """parse() in a thread that must end within BOUND_S: the exception it raised, or None."""
    import threading

    from sys_helpers import parse

    got: list = []

    def target():
        try:
            parse("sa-binary", sa)
            got.append(None)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test
            got.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(BOUND_S)
    assert not t.is_alive(), f"{sa}: still parsing after {BOUND_S} s"
    return got[0]


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_damaged_sa_files_are_ingested_or_refused_in_seconds(tmp_path):
    """Truncated files and bytes overwritten at many places of a real sadc file: parsed or refused with a
    ParseError naming the file, never a hang; one through tools/ingest: exit 2, the store as it was."""
    from kansoku.errors import ParseError

    base = tmp_path / "base.bin"
    _sadc(1, 4, base)
    data = base.read_bytes()
    size = len(data)
    mutants = {"cut-half": data[: size // 2], "cut-header": data[:700], "cut-last-byte": data[:-1],
               "twice": data * 2}
    for i, at in enumerate(range(600, size, max(1, size // 6))):
        b = bytearray(data)
        b[at:at + 8] = b"\xff" * 8
        mutants[f"ff-{i}"] = bytes(b)
        b = bytearray(data)
        b[at:at + 4] = b"\x00\x00\x00\x00"
        mutants[f"zero-{i}"] = bytes(b)
    refused = []
    for name, blob in mutants.items():
        sa = tmp_path / f"{name}.bin"
        sa.write_bytes(blob)
        exc = _parse_bounded(sa)
        assert exc is None or isinstance(exc, ParseError), (name, repr(exc))
        if exc is not None:
            assert sa.name in str(exc), (name, str(exc))
            refused.append(name)
    assert refused  # some of them are damaged beyond reading
    run = tmp_path / "run"
    run.mkdir()
    (run / "sa.bin").write_bytes(mutants[refused[0]])
    first = tmp_path / "first"
    first.mkdir()
    shutil.copy(base, first / "sa.bin")
    db = tmp_path / "k.duckdb"
    assert _ingest(db, first).returncode == 0
    p = _ingest(db, run)
    assert p.returncode == 2 and "sa.bin" in p.stderr and "nothing was stored" in p.stderr, p.stderr
    con = ro_con(db)
    try:
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 1
    finally:
        con.close()


def _parse_with_sadf(monkeypatch, argv: list[str]):
    """Parse the fixture's sa file with ``argv`` run in place of ``sadf -d``, given a second; the ParseError."""
    from kansoku.errors import ParseError
    from kansoku.parsers.sysstat import sa_binary
    from sys_helpers import parse

    real = subprocess.Popen

    def sadf(cmd, *a, **kw):
        return real(argv if cmd[1] == "-d" else cmd, *a, **kw)

    monkeypatch.setattr(sa_binary.subprocess, "Popen", sadf)
    monkeypatch.setattr(sa_binary, "sadf_timeout", lambda path: 1.0)
    t0 = time.monotonic()
    with pytest.raises(ParseError) as ei:
        parse("sa-binary", FIXTURES / "sar" / "run1" / "sa.bin")
    assert time.monotonic() - t0 < 30
    assert "sa.bin" in str(ei.value) and "within 1 s" in str(ei.value), str(ei.value)
    return ei.value


def test_sadf_that_never_finishes_is_ended_with_a_clear_error(monkeypatch):
    """Nothing waits without a bound: sadf is ended after its time (proportional to the file's size)."""
    _parse_with_sadf(monkeypatch, ["/bin/sleep", "600"])


def test_a_failing_last_batch_raises_instead_of_waiting(tmp_path, monkeypatch):
    """A hang seen once: the splitter's final marker is taken, then the last batch's check fails."""
    from kansoku.errors import ParseError
    from kansoku.parsers.sysstat import sa_binary
    from sys_helpers import parse

    def failing_batch(self, batch):
        raise ParseError(self.path, None, "a batch that passes its checks", "a failed check")

    monkeypatch.setattr(sa_binary._Loader, "_load_batch", failing_batch)
    t0 = time.monotonic()
    with pytest.raises(ParseError):
        parse("sa-binary", FIXTURES / "sar" / "run1" / "sa.bin")
    assert time.monotonic() - t0 < 30


def _runs_sadf(pid: int) -> bool:
    """Whether the ingest ``pid`` runs sadf (a child of its own: sadf runs in a session of its own, so that a
    stop ends whatever it starts too)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
            if comm == "sadf" and int(fields[1].split()[1]) == pid:
                return True
        except (OSError, IndexError, ValueError):
            continue
    return False


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_ctrl_c_during_the_sa_parse_of_a_serial_ingest_ends_it_at_once(tmp_path):
    """SIGINT to the process group (as a terminal sends it) at several moments of the sa parse of a serial
    ingest of a long sa file (once sadf runs): each ends within seconds with exit 130 and 'interrupted:
    nothing was stored', no traceback, no 'could not be ingested', and the store as it was."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import sa_day
    finally:
        sys.path.remove(str(ROOT / "bench"))
    run = tmp_path / "run"
    run.mkdir()
    sa_day.make_day_file(run / "sa.bin", 20000)
    for k, delay in enumerate((0.0, 0.2, 0.6, 1.2, 2.0)):
        db = tmp_path / f"k{k}.duckdb"
        proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "ingest"), "--db", str(db), "--jobs", "1",
                                 str(run)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + BOUND_S
        while not _runs_sadf(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(delay)
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:  # the parse was over before the Ctrl-C (a quiet fast machine)
            proc.communicate()
            continue
        t0 = time.monotonic()
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"a Ctrl-C {delay} s into the sa parse did not end the ingest within 20 s")
        assert time.monotonic() - t0 < 20
        assert "Traceback" not in err, err
        if proc.returncode == 0:  # the parse was over before the Ctrl-C (a quiet fast machine)
            continue
        assert proc.returncode == 130, (delay, proc.returncode, err)
        assert "interrupted: nothing was stored" in err and "could not be ingested" not in err, err
        con = ro_con(db)
        try:
            assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
        finally:
            con.close()


def test_ctrl_c_in_the_last_batch_ends_the_parse_at_once(monkeypatch):
    """Ctrl-C that lands while the last batch is stored (the splitter's final marker already taken): the
    parse ends with the KeyboardInterrupt at once instead of waiting for a marker that never comes."""
    from kansoku.parsers.sysstat import sa_binary
    from sys_helpers import parse

    real = sa_binary._Loader.flush

    def interrupted_flush(self):
        if not self.pending:
            return real(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(sa_binary._Loader, "flush", interrupted_flush)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        parse("sa-binary", FIXTURES / "sar" / "run1" / "sa.bin")
    assert time.monotonic() - t0 < 30


def test_duckdbs_query_interrupted_is_a_ctrl_c_not_a_damaged_file(tmp_path):
    """DuckDB answers a Ctrl-C during a statement with RuntimeError('Query interrupted'): the parser's net
    passes it on as the interrupt it is, never as 'expected a valid ... file'."""
    from kansoku import parsers

    def parse_stmt(path, sink):
        raise RuntimeError("Query interrupted")

    with pytest.raises(KeyboardInterrupt):
        parsers.guarded("sa-binary", parse_stmt)(tmp_path / "sa.bin", None)


def test_a_sadf_whose_child_keeps_its_output_open_is_ended_with_it(tmp_path, monkeypatch):
    """A wrapper in place of sadf that leaves a child holding stdout: the watchdog ends the whole group, so
    the reader sees the pipe close and the ingest gives its clear error in seconds."""
    wrapper = tmp_path / "sadf"
    child = tmp_path / "child.pid"
    wrapper.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {child}\nexec sleep 600\n")
    wrapper.chmod(0o755)
    _parse_with_sadf(monkeypatch, [str(wrapper)])
    pid = int(child.read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:  # (a zombie until init reaps it)
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
