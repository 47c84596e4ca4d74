"""kill -9 and Ctrl-C at random points of ingests (serial and parallel) and builds; the store
and the site stay whole, every Ctrl-C message is true, nothing locks up, no scratch file or traceback is left.

A bounded run of bench/kill_trials.py (the full run: `bench/kill_trials.py`, figures in the README)."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import ROOT


@pytest.mark.slow  # a fault-injection trial of half a minute or more: --all (CI) runs it
def test_killed_ingests_and_builds_leave_store_and_site_whole(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))  # the bench script imports its sibling record.py
    spec = importlib.util.spec_from_file_location("kill_trials", ROOT / "bench" / "kill_trials.py")
    kill_trials = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kill_trials)
    lines: list[str] = []
    res = kill_trials.run(4, 3, seed=19, work=tmp_path, out=lines.append)
    assert res["ingest"]["trials"] == 4 and res["build"]["trials"] == 3
    assert res["ingest"]["sigint"] == 2 and res["ingest"]["parallel"] == 2
    assert res["ingest"]["failures"] == 0 and res["build"]["failures"] == 0, lines
