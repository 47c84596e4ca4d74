"""`--wait SECONDS` while another process holds the store as a writer (an ingest): every command that opens the
store says it waits, then goes on once the store is free, never exit 4 at once (build and pdf:
tests/test_site_links.py, with their preflight)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, held_elsewhere, hold_store, run_tool

COMMANDS = {
    "ingest": ["ingest", str(FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off"
                             / "clients=1")],
    "compare": ["compare", "--metric", "tps", "clients=1", "clients=8"],
    "check": ["kansoku", "check"],
    "info": ["kansoku", "info"],
    "list": ["kansoku", "list", "runs"],
}


KANSOKU = "import sys; from kansoku.cli import main; sys.exit(main(sys.argv[1:]))"  # the installed `kansoku`


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("wait") / "k.duckdb"
    proc = run_tool("ingest", "--db", db, "-q", FIXTURES / "pgbench" / "study=scaleup")
    assert proc.returncode == 0, proc.stderr
    return db


@pytest.mark.quick_sample(2)  # the quick run: the writer (ingest) and a reader of the kansoku command
@pytest.mark.parametrize("command", list(COMMANDS))
def test_wait_is_honoured_while_an_ingest_holds_the_store(store, command):
    tool, *args = COMMANDS[command]
    with held_elsewhere(hold_store, str(store)) as release:
        argv = [sys.executable, "-c", KANSOKU] if tool == "kansoku" else [sys.executable, str(ROOT / "tools" / tool)]
        proc = subprocess.Popen([*argv, *args, "--db", str(store), "--wait", "60"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT / "tools")
        first = proc.stderr.readline()  # the first thing said: that it waits
        release.set()
        _, err = proc.communicate(timeout=300)
    assert "waiting" in first, first + err
    assert proc.returncode not in (1, 4) and "Traceback" not in err, (proc.returncode, err)
