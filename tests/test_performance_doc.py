"""bench/performance_doc.py: docs/performance.md is written from the files under bench/results/ alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import performance_doc  # noqa: E402
from record import Figure, record  # noqa: E402

PAGE = ROOT / "docs" / "performance.md"
# a measured quantity: a number with a unit of time, size or a ratio
MEASURED = re.compile(r"\d[\d,]*(?:\.\d+)?(?:\s?(?:s|ms|min|MB|GB|kB|MiB|GiB)\b|\s?×)")


def _write(results: Path, folder: str, name: str, part: str, date: str, figures: list[Figure],
           command: str = "bench/x.py", machine: dict | None = None) -> Path:
    from dataclasses import asdict

    path = results / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "part": part, "date": date, "command": command, "revision": "abc1234",
        "machine": machine or {"cpus": 2, "cpu_model": "Test CPU", "kernel": "6.1", "memory_gib": 4.0},
        "load": {"before": 0.5, "after": 0.7}, "figures": [asdict(f) for f in figures], "raw": []}), encoding="utf-8")
    return path


def _rows(text: str) -> list[list[str]]:
    """The cells of the figures table's body rows."""
    lines = [ln for ln in text.splitlines() if ln.startswith("| `")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]


def _value(cell: str) -> float:
    return float(re.match(r"\**([\d,]+(?:\.\d+)?)", cell).group(1).replace(",", ""))


def _half_unit(cell: str) -> float:
    """Half the last printed digit's unit: a figure rounded for the page is the file's figure within it."""
    decimals = re.match(r"\**[\d,]+(?:\.(\d+))?", cell).group(1)
    return 0.5 * 10 ** -len(decimals or "") + 1e-12


def test_the_page_is_what_the_generator_writes_from_the_committed_results():
    assert PAGE.read_text(encoding="utf-8") == performance_doc.render(), (
        "docs/performance.md is out of date: python3 bench/performance_doc.py")


def test_every_figure_on_the_page_comes_from_a_results_file():
    rows = _rows(PAGE.read_text(encoding="utf-8"))
    assert rows, "no figures table on docs/performance.md"
    for part, measurement, figure, _target, _ref, date, link in rows:
        target = re.search(r"\]\(\.\./(bench/results/[^)]+)\)", link).group(1)
        data = json.loads((ROOT / target).read_text(encoding="utf-8"))
        assert data["part"] == part.strip("`") and data["date"].startswith(date), (target, part, date)
        assert any(measurement.startswith(f["name"]) and abs(f["value"] - _value(figure)) <= _half_unit(figure)
                   for f in data["figures"]), f"{measurement} = {figure} is not a figure of {target}"


def test_the_hand_written_parts_hold_no_measured_figure():
    text = performance_doc.TEMPLATE.read_text(encoding="utf-8")
    prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))
    assert not MEASURED.findall(prose), "figures belong in bench/results/, not in bench/performance_template.md"


def test_the_check_finds_a_figure_written_by_hand_into_the_page(tmp_path):
    results = tmp_path / "results"
    _write(results, "2026-01-02-2cpu-test", "txlog-000000.json", "txlog", "2026-01-02T00:00:00+00:00",
           [Figure("ingest / DuckDB read_csv, CPU", 1.1, "x", "<= 1.2", True, "DuckDB read_csv")])
    page = tmp_path / "performance.md"
    script = [sys.executable, str(ROOT / "bench" / "performance_doc.py"), "--results", str(results), "--page", str(page)]
    assert subprocess.run(script, capture_output=True).returncode == 0
    assert "| **1.1×** |" in page.read_text(encoding="utf-8")
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 0
    page.write_text(page.read_text(encoding="utf-8").replace("**1.1×**", "**1.0×**"), encoding="utf-8")
    check = subprocess.run([*script, "--check"], capture_output=True, text=True)
    assert check.returncode == 1 and "out of date" in check.stderr


def test_the_latest_file_gives_each_part_and_figure_name(tmp_path):
    _write(tmp_path, "2026-01-01-2cpu-test", "sa_day-010000.json", "sa_day", "2026-01-01T01:00:00+00:00",
           [Figure("ingest / sadf, CPU", 1.4, "x", "<= 1.5", True, "sadf"), Figure("ingest peak RSS", 200, "MB")])
    _write(tmp_path, "2026-01-03-2cpu-test", "sa_day-020000.json", "sa_day", "2026-01-03T02:00:00+00:00",
           [Figure("ingest / sadf, CPU", 1.6, "x", "<= 1.5", False, "sadf")])
    rows = _rows(performance_doc.figures_text(performance_doc.load_results(tmp_path, tmp_path)))
    got = {r[1]: (r[2], r[3], r[5], r[6]) for r in rows}
    assert got["ingest / sadf, CPU"] == ("**1.6×**", "≤ 1.5×: **missed**", "2026-01-03",
                                         "[sa_day-020000.json](../2026-01-03-2cpu-test/sa_day-020000.json)")
    assert got["ingest peak RSS"][0] == "**200 MB**" and got["ingest peak RSS"][2] == "2026-01-01"
    assert len(rows) == 2


def test_a_measurement_without_a_results_file_is_listed_with_its_command(tmp_path):
    _write(tmp_path, "2026-01-01-2cpu-test", "campaign-010000.json", "campaign", "2026-01-01T01:00:00+00:00",
           [Figure("full build", 20.0, "s", "< 30", True, extra={"runs": 1000})],
           command="bench/campaign_build.py --runs 10000 --ingest-only")
    results = performance_doc.load_results(tmp_path, tmp_path)
    listed = performance_doc.not_measured_text(results)
    assert "`bench/campaign_build.py --runs 10000 --ingest-only`" not in listed
    assert "`bench/campaign_build.py --runs 10000 --replicate 10`" in listed
    assert "`bench/sa_day.py`" in listed
    assert [r[0] for r in _rows(performance_doc.figures_text(results))] == ["`campaign`"]


def test_one_machine_line_per_machine_folder(tmp_path):
    fig = [Figure("a", 1.0, "s")]
    _write(tmp_path, "2026-01-01-2cpu-test-cpu", "p-010000.json", "p", "2026-01-01T01:00:00+00:00", fig,
           machine={"cpus": 2, "cpu_model": "Test CPU", "kernel": None, "memory_gib": None})
    _write(tmp_path, "2026-01-02-2cpu-test-cpu", "p-010000.json", "p", "2026-01-02T01:00:00+00:00", fig,
           machine={"cpus": 2, "cpu_model": "Test CPU", "kernel": "6.1", "memory_gib": 4.0})
    _write(tmp_path, "2026-01-02-8cpu-other", "p-020000.json", "p", "2026-01-02T02:00:00+00:00", fig,
           machine={"cpus": 8, "cpu_model": "unknown"})
    lines = performance_doc.machines_text(performance_doc.load_results(tmp_path, tmp_path)).splitlines()
    assert lines == ["- `2cpu-test-cpu`: 2 vCPUs, Test CPU, 4 GiB of memory, Linux 6.1",
                     "- `8cpu-other`: 8 vCPUs, CPU model not recorded"]


def test_a_part_writes_a_file_the_page_reads(tmp_path, capsys):
    path = record("txlog", [Figure("ingest / DuckDB read_csv, CPU", 1.18, "x", "<= 1.2", True, "DuckDB")],
                  raw=[1, 2], argv=["--lines", "1000"], results=tmp_path)
    rows = _rows(performance_doc.figures_text(performance_doc.load_results(tmp_path, tmp_path)))
    assert [r[2] for r in rows] == ["**1.18×**"] and path.name in rows[0][6]


@pytest.mark.parametrize("content, expected", [
    ("{not json", "not a JSON results file"),
    (json.dumps({"part": "txlog", "date": "2026-01-01"}), "missing command, machine, figures"),
    (json.dumps({"part": "x", "date": "d", "command": "c", "machine": {}, "figures": [{"name": "a"}]}),
     "figure 1: expected name, value and unit"),
])
def test_a_damaged_results_file_is_named_and_the_command_exits_2(tmp_path, content, expected):
    bad = tmp_path / "2026-01-01-2cpu-test" / "txlog-000000.json"
    bad.parent.mkdir()
    bad.write_text(content, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "performance_doc.py"), "--results", str(tmp_path),
                           "--page", str(tmp_path / "p.md")], capture_output=True, text=True)
    assert proc.returncode == 2 and str(bad) in proc.stderr and expected in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "p.md").exists()


def test_a_figure_whose_words_span_lines_is_one_row_of_the_table(tmp_path):
    """A failed step's figure carries the tool's error, lines and all (bench/growth.py): its row stays one line
    of the table, its pipes escaped."""
    _write(tmp_path, "2026-01-01-2cpu-test", "growth-010000.json", "growth", "2026-01-01T01:00:00+00:00",
           [Figure("steps at 30000 runs that failed", 1, "", "0", False,
                   extra={"error": "tools/build exited 1:\n\n[ 1.0 s] computing | the reports\nerror: out of memory"})])
    text = performance_doc.figures_text(performance_doc.load_results(tmp_path, tmp_path))
    rows = _rows(text)
    assert len(rows) == 1 and len(rows[0]) == 7
    assert "exited 1: [ 1.0 s] computing \\| the reports error: out of memory" in rows[0][1]


def test_a_count_without_a_unit_has_no_space_inside_its_bold_or_before_its_verdict():
    """A figure whose unit is empty (the growth bench's failed steps) reads "**0**" and "0: met"."""
    f = {"name": "steps at 30000 runs that failed", "value": 0, "unit": "", "target": "0", "met": True}
    assert performance_doc._figure(f) == "0" and performance_doc._target(f) == "0: met"


def test_a_target_that_names_its_unit_says_it_once():
    """The loop's targets carry their unit inside ("< 5 s at 10000 runs"): the page does not add it again at the
    end, while a bare target ("< 300") gets its unit."""
    f = {"name": "new_run at 10000 runs, wall", "value": 21.8, "unit": "s", "target": "< 5 s at 10000 runs",
         "met": False}
    assert performance_doc._target(f) == "< 5 s at 10000 runs: **missed**"
    bare = {"name": "sa file, peak memory", "value": 174, "unit": "MB", "target": "< 300", "met": True}
    assert performance_doc._target(bare) == "< 300 MB: met"


def test_a_part_records_the_time_to_make_a_folder_where_it_works_and_the_page_shows_it(tmp_path):
    from record import Load

    load = Load(tmp_path / "work" / "made-later")  # (a part's --dir made later: its nearest existing parent)
    assert load.where == tmp_path.resolve()
    path = record("loop", [Figure("full at 10 runs, wall", 1.5, "s")], load=load, results=tmp_path / "results")
    got = json.loads(path.read_text(encoding="utf-8"))["load"]
    before, after = got["probe_folder_us"]
    assert before > 0 and after > 0 and got["probe_dir"] == str(tmp_path.resolve())
    assert [p.name for p in tmp_path.iterdir()] == ["results"]  # the probe's folders removed
    text = performance_doc.figures_text(performance_doc.load_results(tmp_path / "results", tmp_path))
    assert f"a folder {performance_doc.number(before)} µs → {performance_doc.number(after)} µs" in text
