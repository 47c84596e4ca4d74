"""How much of each run's window each monitor covers: the store view monitor_coverage,
ingest's warning naming file, host and coverage, the campaign's coverage_threshold, and the note on every
table cell whose metric reads a monitor below it.

The sysstat file is real `sar -u 1 4` output (made by sar when the test runs): four one-second samples. One
run's window is the four seconds the samples cover; the other's is 15 s long from the same start, as when sar
died (or the connection to its host was lost) four seconds into a 15 s benchmark."""

from __future__ import annotations

import re
import socket
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import ro_con, run_tool
from site_helpers import one_table_spec
from sys_helpers import needs_sar
from sys_helpers import real_sar_u as sar_u

HOST = socket.gethostname()  # as sar prints it
pytestmark = needs_sar


@pytest.fixture(scope="module")
def real_sar_u() -> str:
    return sar_u(4)


def _first_last(sar: str) -> tuple[datetime, datetime]:
    day = re.search(r"(\d{4}-\d{2}-\d{2})", sar.splitlines()[0]).group(1)
    times = [ln.split()[0] for ln in sar.splitlines()[2:] if re.match(r"^\d\d:\d\d:\d\d\s+all", ln)]
    assert len(times) == 4, sar
    at = lambda t: datetime.fromisoformat(f"{day}T{t}").replace(tzinfo=timezone.utc)  # noqa: E731
    return at(times[0]), at(times[-1])


def _run(camp: Path, clients: int, sar: str, start: datetime, end: datetime) -> None:
    run = camp / f"clients={clients}"
    run.mkdir(parents=True)
    (run / "run.toml").write_text(f'status = "ok"\nstart = {start.isoformat()}\nend = {end.isoformat()}\n'
                                  f'hostname = "{HOST}"\n\n[machine]\nhostname = "{HOST}"\n')
    (run / "sar_u.txt").write_text(sar)


@pytest.fixture
def campaign(tmp_path, real_sar_u):
    camp = tmp_path / "campaign"
    camp.mkdir()
    (camp / ".kansoku-campaign").write_text("# the campaign root\n")
    first, last = _first_last(real_sar_u)
    start = first - timedelta(seconds=1)  # the first sample covers the second before it
    _run(camp, 4, real_sar_u, start, start + timedelta(seconds=15))  # sar stopped 4 s into 15 s
    _run(camp, 8, real_sar_u, start, last)  # sar covered the whole run
    return camp, tmp_path / "k.duckdb"


SPEC = one_table_spec("coverage", """\
metrics = ["cpu_idle_pct"]
where = { clients = [4, 8] }
rows = "clients"
digits = { default = 2 }
""")


def _table(db: Path, tmp_path: Path):
    from kansoku.analysis.table_kinds import compute_table
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    p = tmp_path / "coverage.toml"
    p.write_text(SPEC, encoding="utf-8")
    report = load_report(p)
    store = open_store(db, read_only=True)
    try:
        return compute_table(store, report, report.item("t"))
    finally:
        store.close()


def test_a_monitor_covering_part_of_its_run_is_stored_warned_and_flagged(campaign, tmp_path):
    camp, db = campaign
    p = run_tool("ingest", "--db", db, camp, "-v")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    partial = camp / "clients=4" / "sar_u.txt"
    assert f"{partial}: server sar covers 4 of 15 s of the run (27 %; the campaign's threshold is 90 %): " \
           f"host {HOST}" in p.stdout, p.stdout
    assert str(camp / "clients=8" / "sar_u.txt") + ": server sar covers" not in p.stdout
    con = ro_con(db)
    try:
        rows = con.execute("SELECT run_id, file_name, host, role, tool, samples, window_s, covered_s, "
                           "round(coverage, 3), threshold, below FROM monitor_coverage ORDER BY run_id").fetchall()
    finally:
        con.close()
    assert rows == [("clients=4", "sar_u.txt", HOST, "server", "sar", 4, 15.0, 4.0, 0.267, 0.9, True),
                    ("clients=8", "sar_u.txt", HOST, "server", "sar", 4, 4.0, 4.0, 1.0, 0.9, False)]
    # the cell keeps its value and carries a note in every language; the fully covered run's cell none
    t = _table(db, tmp_path)
    by_row = {row[0].text["en"]: row[1] for row in t.rows}
    part, whole = by_row["4"], by_row["8"]
    assert part.value is not None and part.value == pytest.approx(whole.value)
    assert "partial-coverage" in part.flags and not whole.notes and "partial-coverage" not in whole.flags
    (note,) = part.notes
    assert "sar samples cover 4 of 15 s of run clients=4 (27 %" in note.text["en"], note.text
    assert "15 秒のうち 4 秒" in note.text["ja"] and "sar" in note.text["ja"], note.text
    assert t.to_model().notes == [note]


def _scans(plan: list[dict]):
    for node in plan:
        if node.get("name", "").endswith("SCAN"):
            yield node.get("extra_info", {})
        yield from _scans(node.get("children", []))


def test_a_few_runs_coverage_reads_their_samples_alone(campaign):
    """Ingest asks the coverage of the runs it stored (and a rebuild of the cells of a new run): the run filter
    reaches the scans of the tall tables below the view's windows, which are partitioned by run, so a campaign
    of thousands of runs does not compute every run's coverage to warn about one."""
    import json

    camp, db = campaign
    assert run_tool("ingest", "--db", db, camp).returncode == 0
    con = ro_con(db)
    try:
        (_, text), = con.execute("EXPLAIN (FORMAT json) SELECT * FROM monitor_coverage "
                                 "WHERE run_id IN ('clients=4')").fetchall()
        rows = con.execute("SELECT run_id, covered_s FROM monitor_coverage WHERE run_id IN ('clients=4')").fetchall()
    finally:
        con.close()
    scans = {info.get("Table", "").rsplit(".", 1)[-1]: str(info.get("Filters", "")) for info in _scans(json.loads(text))}
    assert "sys_metrics" in scans, scans
    assert "run_id" in scans["sys_metrics"], scans
    assert rows == [("clients=4", 4.0)]


def test_the_campaign_declares_its_threshold(campaign, tmp_path):
    camp, db = campaign
    (camp / ".kansoku-campaign").write_text("# the campaign root\ncoverage_threshold = 0.25\n")
    p = run_tool("ingest", "--db", db, camp, "-v")
    assert p.returncode == 0 and "covers" not in p.stdout, p.stdout + p.stderr
    con = ro_con(db)
    try:
        assert con.execute("SELECT bool_or(below), min(threshold) FROM monitor_coverage").fetchone() == (False, 0.25)
    finally:
        con.close()
    assert not _table(db, tmp_path).notes
    # changed: the runs are stored again with the new threshold
    (camp / ".kansoku-campaign").write_text("# the campaign root\ncoverage_threshold = 0.5\n")
    p = run_tool("ingest", "--db", db, camp, "-v")
    assert p.returncode == 0 and "server sar covers 4 of 15 s of the run (27 %; the campaign's threshold is 50 %)" \
        in p.stdout, p.stdout


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("value", ["1.5", "0", "\"most\"", "true"])
def test_a_threshold_that_is_not_a_share_is_refused_with_its_line(campaign, value):
    camp, db = campaign
    (camp / ".kansoku-campaign").write_text(f"# the campaign root\n\ncoverage_threshold = {value}\n")
    p = run_tool("ingest", "--db", db, camp)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"{camp / '.kansoku-campaign'}:3: coverage_threshold = " in p.stderr and "Traceback" not in p.stderr
