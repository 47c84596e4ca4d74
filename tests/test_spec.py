"""Spec errors name the spec file and the table or figure; numbering follows the spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPORT_HEAD
from drawing import drawn_figure
from kansoku.analysis.table_kinds import compute_table
from kansoku.errors import SpecError
from kansoku.ingest.pipeline import ingest
from kansoku.spec.model import load_all, load_report
from kansoku.store.db import open_store

ROOT = Path(__file__).resolve().parents[1]

HEAD = "\n" + REPORT_HEAD + """[[chapter]]
id = "c"
number = 2
title = "C"
"""
TABLE = """
[[chapter.table]]
id = "t1"
caption = "x"
metric = "tps"
rows = "clients"
"""


def write(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    p = tmp_path / "bad.toml"
    p.write_text(head + body, encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("pub")
    (d / "s.toml").write_text("""
[published]
id = "s"
csv = "s.csv"
[published.citation]
report = "R"
table = "1"
[published.columns]
clients = { factor = "clients" }
config = { factor = "config" }
tps = { metric = "tps" }
""", encoding="utf-8")
    (d / "s.csv").write_text("clients,config,tps\n1,a,10\n2,a,20\n1,b,11\n", encoding="utf-8")
    db = d / "k.duckdb"
    assert ingest([d], db).ok
    st = open_store(db, read_only=True)
    yield st
    st.close()


def line_of(p: Path, needle: str) -> int:
    """Line (1-based) of the last occurrence of ``needle`` in the file."""
    text = p.read_text(encoding="utf-8")
    return text.count("\n", 0, text.rindex(needle)) + 1


T1 = r"chapter\[0\]\.table\[0\]"
F1 = r"chapter\[0\]\.figure\[0\]"


# body appended to HEAD, the text on the line the error must name (its last occurrence), the message
@pytest.mark.parametrize("body,at,message", [
    (TABLE + 'colour = "red"\n', "colour", rf'{T1}\.colour \(table \'t1\'\): unknown key "colour"'),
    (TABLE + 'aggregate = "mode"\n', "aggregate",
     rf'{T1}\.aggregate \(table \'t1\'\): expected one of "median", .*found "mode"'),
    (TABLE + 'baseline = { factor = "config" }\n', "baseline", rf'{T1}\.baseline \(table \'t1\'\): factor needs value'),
    (TABLE + 'baseline = { row = "first", fixed = 2 }\n', "baseline",
     r"gives row and fixed; give exactly one of factor, row, fixed"),
    (TABLE + 'baseline = { compare = "ratio" }\n', "baseline", r"baseline \(table 't1'\): needs one of factor, row"),
    (TABLE + 'baseline = { row = "last" }\n', "baseline", rf'{T1}\.baseline\.row \(table \'t1\'\): expected "first", found "last"'),
    (TABLE + 'baseline = { fixed = 1, compare = "quotient" }\n', "baseline", r'baseline\.compare .*found "quotient"'),
    (TABLE + 'baseline = { fixed = 0 }\n', "baseline", r"baseline\.fixed .*cannot compare with zero"),
    (TABLE + 'baseline = { fixed = 1, colour = 1 }\n', "baseline", r'baseline\.colour .*unknown key "colour"'),
    (TABLE + 'baseline = { fixed = 1, digits = "two" }\n', "baseline",
     rf'{T1}\.baseline\.digits \(table \'t1\'\): expected an integer, found "two"'),
    (TABLE + 'baseline = { fixed = 1, metric = "latency_avg_ms" }\n', "baseline",
     r"baseline\.metric .*'latency_avg_ms' is not one of the table's metrics \['tps'\]"),
    (TABLE + 'where = { clients = { above = 3 } }\n', "where", rf'{T1}\.where\.clients\.above .*unknown key "above"'),
    (TABLE + 'where = "clients = 3"\n', "where", rf'{T1}\.where .*expected a table, found "clients = 3"'),
    (TABLE + 'digits = { tps = "many" }\n', "digits", r'digits\.tps .*expected a number of decimals .*found "many"'),
    (TABLE + 'metrics = "tps"\n', "metrics", r'\.metrics .*expected an array, found "tps"'),
    (TABLE.replace('rows = "clients"\n', ""), "[[chapter.table]]", rf'{T1} \(table \'t1\'\): missing key "rows"'),
    (TABLE.replace('metric = "tps"\n', ""), "[[chapter.table]]", rf'{T1} \(table \'t1\'\): needs metric = '),
    (TABLE + TABLE, 'id = "t1"', r"chapter\[0\]\.table\[1\]\.id \(table 't1'\): table id 't1' is used twice"),
    (TABLE + 'number = "3.1"\n', "number", r"number '3.1' must be \"2.<n>\""),
    (TABLE.replace('id = "t1"', 'id = "t1"\nnumber = 4') + TABLE.replace('"t1"', '"t2"\nnumber = 3'), "number = 3",
     r"table\[1\]\.number \(table 't2'\): number 2.3 would not follow 2.4"),
    ('[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nshape = "round"\n', "shape",
     rf'{F1}\.shape \(figure \'f1\'\): unknown key "shape"'),
    ('[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nrows = "clients"\n', "rows",
     rf'{F1}\.rows \(figure \'f1\'\): "rows" is a key of tables, not of figures'),
    (TABLE + 'series = "config"\n', "series", rf'{T1}\.series \(table \'t1\'\): "series" is a key of figures, not of tables'),
    ('[[chapter.figure]]\nid = "f1"\ncaption = { ja = "x", fr = "y" }\nmetric = "tps"\n', "caption",
     rf'{F1}\.caption\.fr \(figure \'f1\'\): unknown key "fr"'),
])
def test_spec_errors_at_load_name_file_line_and_item(tmp_path, body, at, message):
    p = write(tmp_path, body)
    with pytest.raises(SpecError, match=message) as ei:
        load_report(p)
    assert ei.value.exit_code == 3
    assert f"{p}:{line_of(p, at)}: chapter[0]" in str(ei.value), str(ei.value)


@pytest.mark.parametrize("head,at,message", [
    (HEAD.replace('organisation = "O"', 'organisation = "O"\nauthor_count = 3'), "author_count",
     r'report\.author_count: unknown key "author_count"'),
    (HEAD + '[metrics.tps]\nlabel = "TPS"\nscale = 2\n', "scale", r'metrics\.tps\.scale: unknown key "scale"'),
    (HEAD + '[metrics.tps]\nhigher_is_better = "yes"\n', "higher_is_better",
     r'metrics\.tps\.higher_is_better: expected true or false, found "yes"'),
    (HEAD + '[factors.clients]\nsort = "desc"\n', "sort", r'factors\.clients\.sort: unknown key "sort"'),
    (HEAD + '[factors.clients]\norder = "1, 2"\n', "order", r'factors\.clients\.order: expected an array'),
    (HEAD + '[device_groups]\nhdd = "sdb"\n', "hdd", r'device_groups\.hdd: expected a list of device names, e.g. \["sdb", "sdc"\], found "sdb"'),
    (HEAD.replace('title = "C"', 'title = "C"\nsubtitle = "S"'), "subtitle",
     r"chapter\[0\]\.subtitle \(chapter 'c'\): unknown key \"subtitle\""),
    (HEAD.replace("fiscal_year = 2030", 'fiscal_year = "FY2030"'), "fiscal_year",
     r'report\.fiscal_year: expected an integer, found "FY2030"'),
    (HEAD.replace('organisation = "O"\n', ""), "[report]", r'report: missing key "organisation"'),
    (HEAD.lstrip("\n").replace("[report]", "[reports]"), "[reports]", r'bad\.toml:1: missing key "report"'),
    (HEAD.replace('organisation = "O"', 'organisation = { ja = "", en = "" }'), "organisation",
     r'report\.organisation: expected a text in ja or en \(or both\), found a table'),
    (HEAD + '[[chapter]]\nid = "c"\ntitle = "D"\n', 'id = "c"',
     r"chapter\[1\]\.id \(chapter 'c'\): chapter id 'c' is used twice"),
    (HEAD.replace('organisation = "O"', 'organisation = "O"\nauthor = [{ name = "A", chapters = ["d"] }]'),
     "author", r"report\.author\[0\]\.chapters\[0\]: no chapter 'd' in this spec"),
    (HEAD + "title = \n", "title = \n", r"not valid TOML"),
])
def test_report_level_spec_errors_name_their_line(tmp_path, head, at, message):
    p = write(tmp_path, "", head=head)
    with pytest.raises(SpecError, match=message) as ei:
        load_report(p)
    assert f"{p}:{line_of(p, at)}: " in str(ei.value), str(ei.value)


@pytest.mark.parametrize("body,message", [
    (TABLE.replace('rows = "clients"', 'rows = "clients"\nwhere = { colour = "red" }'),
     r"table 't1' \(2.1\): where: unknown factor 'colour'; the database has \[.*'clients'"),
    (TABLE.replace('rows = "clients"', 'rows = "threads"'), r"table 't1' \(2.1\): rows: unknown factor 'threads'"),
    (TABLE.replace('rows = "clients"', 'rows = "clients"\ncolumns = "colour"'), r"columns: unknown factor 'colour'"),
    (TABLE.replace('metric = "tps"', 'metric = "bogomips"'), r"table 't1' \(2.1\): unknown metric 'bogomips'"),
    (TABLE.replace('metric = "tps"', 'metrics = ["tps", "bogomips"]'), r"table 't1' \(2.1\): unknown metric 'bogomips'"),
    (TABLE + 'columns = "config"\nbaseline = { factor = "config", value = "z" }\n',
     r"table 't1' \(2.1\): baseline config = 'z' has no data; values: \['a', 'b'\]"),
    (TABLE + 'baseline = { factor = "clients", value = 64 }\n', r"baseline clients = '64' has no data"),
    (TABLE + 'where = { config = "b" }\nbaseline = { factor = "config", value = "z" }\n',
     r"table 't1' \(2.1\): baseline config = 'z' has no data for metric 'tps'"),
    (TABLE + 'baseline = { factor = "colour", value = "red" }\n', r"baseline: unknown factor 'colour'"),
    (TABLE + 'baseline = { fixed = 1, published = "published_tps" }\n', r"baseline published: unknown metric 'published_tps'"),
    (TABLE + 'baseline = { fixed = 1, compare = "auto" }\n', None),
    (TABLE + 'where = { clients = { min = 100 } }\n', r"table 't1' \(2.1\): no runs match"),
    (TABLE + 'show_factors = ["colour"]\n', r"show_factors: unknown factor 'colour'"),
])
def test_spec_errors_at_compute_name_file_and_item(store, tmp_path, body, message):
    p = write(tmp_path, body)
    if message is None:  # compare = auto on tps (higher is better) is fine
        r = load_report(p)
        compute_table(store, r, r.item("t1"))
        return
    r = load_report(p)
    with pytest.raises(SpecError, match=message) as ei:
        compute_table(store, r, r.item("t1"))
    assert str(ei.value).startswith(str(p) + ": chapter 'c', table 't1' (2.1)")


def test_auto_compare_needs_a_direction(store, tmp_path):
    p = write(tmp_path, TABLE.replace('metric = "tps"', 'metric = "published_x"') +
              'baseline = { fixed = 1, compare = "auto" }\n')
    r = load_report(p)
    with pytest.raises(SpecError, match=r"table 't1' \(2.1\): (unknown metric|baseline compare = 'auto' needs)"):
        compute_table(store, r, r.item("t1"))


def test_figure_errors_name_the_figure(store, tmp_path):
    p = write(tmp_path, '[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nx = "clients"\nchart = "pie"\n')
    r = load_report(p)
    with pytest.raises(SpecError, match=r"figure 'f1' \(2.1\): unknown chart kind 'pie'"):
        drawn_figure(store, r, r.item("f1", "figure"))
    p = write(tmp_path, '[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nx = "colour"\n')
    r = load_report(p)
    with pytest.raises(SpecError, match=rf"{p}: chapter 'c', figure 'f1' \(2.1\): grouping: unknown factor 'colour'"):
        drawn_figure(store, r, r.item("f1", "figure"))


def test_numbering_explicit_and_continued(tmp_path):
    body = (TABLE.replace('id = "t1"', 'id = "t1"\nnumber = "2.2"') + TABLE.replace('"t1"', '"t2"')
            + TABLE.replace('"t1"', '"t3"\nnumber = 5')
            + '[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nx = "clients"\n')
    r = load_report(write(tmp_path, body))
    assert [(i.kind, i.id, i.number) for i in r.chapters[0].items] == [
        ("table", "t1", "2.2"), ("table", "t2", "2.3"), ("table", "t3", "2.5"), ("figure", "f1", "2.1")]
    assert r.item("t1").prefix("ja") == "表 2.2" and r.item("f1", "figure").prefix("en") == "Figure 2.1"


def test_repository_specs_load_with_their_item_numbers():
    reports = load_all(ROOT / "data" / "reports")
    ids = [r.id for r in reports]
    assert {"example", "past-fy2013", "past-fy2017"} <= set(ids)
    past = {r.id: r for r in reports}
    numbers = {(r, c.id): [i.number for i in c.tables] for r in past for c in past[r].chapters}
    assert numbers[("past-fy2013", "scaleup")] == ["2.2", "2.3", "2.4", "2.5"]
    # 4.10 and 5.9 are kansoku's tables of numbers the text states, numbered clear of the original's tables
    assert numbers[("past-fy2013", "ssd")] == ["4.5", "4.6", "4.7", "4.8", "4.9", "4.10"]
    assert numbers[("past-fy2013", "postgres-xc")] == ["5.5", "5.6", "5.9"]
    assert numbers[("past-fy2017", "parallel-query")] == [f"6.{n}" for n in range(8, 20)]
    assert numbers[("past-fy2017", "replication")] == ["8.8", "8.9", "8.10"]


FIVE = HEAD.replace("fiscal_year = 2030", 'fiscal_year = "2030"') + """
[factors.config]
order = "a"

[[chapter.table]]
id = "t1"
caption = "x"
metric = "tps"
rows = "clients"
where = "study = scaleup"
baseline = { factor = "config", value = "a", digits = "two" }
colour = "red"
"""


def test_build_reports_five_mistakes_in_one_run_with_lines_exit_3(tmp_path, tool):
    specs = tmp_path / "specs"
    specs.mkdir()
    for f in (ROOT / "data" / "reports").glob("*.toml"):  # the reports of content/, unchanged
        (specs / f.name).write_bytes(f.read_bytes())
    p = specs / "bad.toml"
    p.write_text(FIVE, encoding="utf-8")
    proc = tool("build", "--db", tmp_path / "none.duckdb", "--specs", specs, "--out", tmp_path / "out")
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    expected = [
        f'{p}:{line_of(p, "fiscal_year")}: report.fiscal_year: expected an integer, found "2030"',
        f'{p}:{line_of(p, "order")}: factors.config.order: expected an array, found "a"',
        f'{p}:{line_of(p, "where")}: chapter[0].table[0].where (table \'t1\'): expected a table, found "study = scaleup"',
        f'{p}:{line_of(p, "baseline")}: chapter[0].table[0].baseline.digits (table \'t1\'): expected an integer, '
        'found "two"',
        f'{p}:{line_of(p, "colour")}: chapter[0].table[0].colour (table \'t1\'): unknown key "colour"',
    ]
    lines = [ln.strip() for ln in proc.stderr.splitlines()]
    assert lines[0] == f"error: {p}: 5 problems in the report spec:"
    for e in expected:
        assert any(ln.startswith(e) for ln in lines), (e, proc.stderr)
    assert len(lines) == 6, proc.stderr
    assert not (tmp_path / "out").exists()  # nothing was built
