"""A report speaks only for the runs of its scope ([report.scope], docs/spec.md "Report scope"): every bundled
report's tables, figures, compare pages and appendix hold no other run; a selection reaching outside is a
spec error with its line; a cell never mixes transcribed and measured values."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from conftest import REPORT_SPECS, ROOT, computed_report, run_tool
from kansoku.spec.model import load_report
from kansoku.store.selection import scope_condition
from site_helpers import build_one_report

SPECS = ROOT / "data" / "reports"


def scope_runs(db: Path, spec: Path) -> set[str]:
    report = load_report(spec)
    params: list = []
    cond = scope_condition("run_id", report.scope, params)
    with duckdb.connect(str(db), read_only=True) as con:
        return {r for (r,) in con.execute(f"SELECT run_id FROM runs WHERE {cond}", params).fetchall()}


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("report_id", REPORT_SPECS)
def test_every_bundled_report_holds_only_the_runs_of_its_scope(example_db, report_id):
    spec = SPECS / f"{report_id}.toml"
    assert load_report(spec).scope.declared, f"{report_id} declares no [report.scope]"
    allowed = scope_runs(example_db, spec)
    assert allowed, f"{report_id}'s scope matches no run of the example store"
    computed = computed_report(example_db, spec)
    for ch in computed.chapters:
        for item_id, item in [*ch.tables.items(), *ch.figures.items()]:
            outside = set(item.runs) - allowed
            assert not outside, f"{report_id} {ch.id}/{item_id} holds runs outside its scope: {sorted(outside)[:3]}"
    assert set(computed.runs) <= allowed


def test_past_reports_hold_transcribed_values_only(example_db):
    with duckdb.connect(str(example_db), read_only=True) as con:
        origin = dict(con.execute("SELECT run_id, origin FROM runs").fetchall())
    for report_id in REPORT_SPECS:
        if report_id.startswith("past-"):
            runs = computed_report(example_db, SPECS / f"{report_id}.toml").runs
            assert {origin[r] for r in runs} == {"transcribed"}, report_id


def test_fy2017_table_8_10_baseline_is_the_printed_tps_and_no_printed_ratio_is_flagged(example_db):
    computed = computed_report(example_db, SPECS / "past-fy2017.toml")
    table = next(ch.tables["mixed"] for ch in computed.chapters if "mixed" in ch.tables)
    texts = [c.text["en"] for row in table.rows for c in row]
    assert "9254.0" in texts
    assert "8004.0" not in texts
    flags = {f for row in table.rows for c in row for f in c.flags}
    assert "mismatch" not in flags
    assert {"77.9 %", "43.7 %", "41.3 %", "39.8 %"} <= set(texts)


def spec_without_published_table(tmp_path: Path) -> tuple[Path, int]:
    """The FY2017 spec with table 8.10's `where` no longer naming its published table: it then reaches the
    example campaign's replication runs. Returns the spec directory and the line of that `where`."""
    specs = tmp_path / "reports"
    specs.mkdir()
    text = (SPECS / "past-fy2017.toml").read_text(encoding="utf-8")
    lines = text.split("\n")
    line = next(i for i, x in enumerate(lines, 1) if x.startswith('where = { published_table = "fy2017-t8.8-8.10"'))
    lines[line - 1] = lines[line - 1].replace('published_table = "fy2017-t8.8-8.10", ', "")
    (specs / "past-fy2017.toml").write_text("\n".join(lines), encoding="utf-8")
    return specs, line


def test_a_selection_reaching_outside_the_scope_is_a_spec_error_with_its_line(example_db, tmp_path):
    specs, line = spec_without_published_table(tmp_path)
    r = run_tool("build", "--db", example_db, "--specs", specs, "--out", tmp_path / "public",
                 "--generated", tmp_path / "generated")
    assert r.returncode == 3, r.stderr
    assert f"past-fy2017.toml:{line}:" in r.stderr
    assert re.search(r"reaches \d+ runs outside the report's scope .*campaign 'example-2026-11'", r.stderr)
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "public").exists()


def test_an_item_naming_another_campaign_takes_its_runs_in_and_says_so(example_db, tmp_path):
    specs, line = spec_without_published_table(tmp_path)
    spec = specs / "past-fy2017.toml"
    lines = spec.read_text(encoding="utf-8").split("\n")
    lines[line - 1] = lines[line - 1].replace('where = { ', 'where = { campaign = "example-2026-11", ')
    spec.write_text("\n".join(lines), encoding="utf-8")
    report = load_report(spec)
    item = report.item("mixed")
    from kansoku.analysis import tables
    from kansoku.report.build import scope_footnote
    from kansoku.store.db import open_store

    store = open_store(example_db, read_only=True)
    try:
        assert tables.outside_scope(store, item) == []
        named = tables.outside_scope(store, item, named=True)
        assert [(k, n) for k, n, _ in named] == [("campaign", "example-2026-11")]
        note = scope_footnote(store, item, {"ja": "脚注。", "en": "Footnote."})
    finally:
        store.close()
    assert note["en"].startswith("Footnote. ") and "example-2026-11" in note["en"]
    assert "example-2026-11" in note["ja"]


def test_a_cell_mixing_transcribed_and_measured_runs_is_refused(example_db, tmp_path):
    """Both origins in scope and one cell taking a run of each: an error naming the item, never a mean of a
    printed number and a measured one."""
    text = (SPECS / "past-fy2017.toml").read_text(encoding="utf-8")
    text = text.replace('transcribed = ["fy2017-*"]', 'transcribed = ["fy2017-*"]\ncampaigns = ["example-2026-11"]')
    text = text.replace('where = { published_table = "fy2017-t8.8-8.10", study = "replication", pattern = ["none", "async-3"',
                        'where = { study = "replication", pattern = ["none", "async-3"')
    r = build_one_report(example_db, tmp_path, "past-fy2017", text)
    assert r.returncode == 3, r.stderr
    assert "mixes transcribed and measured runs" in r.stderr
    assert "table 'mixed'" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_revision_dated_before_the_runs_it_reports_is_a_spec_error_with_its_line(example_db):
    """The cover prints the report's revision and its date: a measured report cannot be issued before the
    last run it speaks for."""
    from kansoku.analysis.spec_check import store_problems
    from kansoku.store.db import open_store

    report = load_report(SPECS / "example.toml")
    store = open_store(example_db, read_only=True)
    try:
        assert [p for p in store_problems(report, store) if "dated" in p.message] == []
        history = report.raw["report"]["revision_history"]
        at = next(i for i, h in enumerate(history) if h["revision"] == report.revision)
        history[at] = {**history[at], "date": "2026-11-01"}
        (problem,) = [p for p in store_problems(report, store) if "dated" in p.message]
    finally:
        store.close()
    assert problem.path == ("report", "revision_history", at, "date")
    assert re.match(r"revision \S+ is dated 2026-11-01, before the last run the report speaks for \(2026-11-\d\d, "
                    r"campaign=example-2026-11/study=", problem.message)
