"""Spec errors name the spec file and the table or figure; numbering follows the spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from kansoku.analysis import figures, tables as analysis
from kansoku.errors import SpecError
from kansoku.ingest.pipeline import ingest
from kansoku.spec.model import load_all, load_report
from kansoku.store.db import open_store

ROOT = Path(__file__).resolve().parents[1]

HEAD = """
[report]
id = "t"
fiscal_year = 2030
title = "T"
organisation = "O"
[[chapter]]
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


@pytest.mark.parametrize("body,message", [
    (TABLE + 'colour = "red"\n', r"table 't1' \(2.1\): unknown key\(s\) \['colour'\]"),
    (TABLE + 'aggregate = "mode"\n', r"table 't1' \(2.1\): aggregate 'mode' is not one of"),
    (TABLE + 'baseline = { factor = "config" }\n', r"table 't1' \(2.1\): baseline factor needs a value"),
    (TABLE + 'baseline = { row = "first", fixed = 2 }\n', r"table 't1' \(2.1\): baseline needs exactly one of"),
    (TABLE + 'baseline = { row = "last" }\n', r"table 't1' \(2.1\): baseline row must be \"first\""),
    (TABLE + 'baseline = { fixed = 1, compare = "quotient" }\n', r"table 't1' \(2.1\): baseline compare 'quotient'"),
    (TABLE + 'baseline = { fixed = 1, colour = 1 }\n', r"table 't1' \(2.1\): baseline: unknown key"),
    (TABLE + 'baseline = { fixed = 1, metric = "latency_avg_ms" }\n', r"baseline metric 'latency_avg_ms' is not one"),
    (TABLE + 'where = { clients = { above = 3 } }\n', r"table 't1' \(2.1\): where clients: a range is"),
    (TABLE + 'digits = { tps = "many" }\n', r"table 't1' \(2.1\) digits: digits must be"),
    (TABLE.replace('rows = "clients"\n', ""), r"table 't1' \(2.1\): a table needs rows"),
    (TABLE.replace('metric = "tps"\n', ""), r"table 't1' \(2.1\): needs metric"),
    (TABLE + TABLE, r"table id 't1' is used twice"),
    (TABLE + 'number = "3.1"\n', r"table 't1'.*number '3.1' must be \"2.<n>\""),
    (TABLE.replace('id = "t1"', 'id = "t1"\nnumber = 4') + TABLE.replace('"t1"', '"t2"\nnumber = 3'),
     r"table 't2'.*would not follow 2.4"),
    ('[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nshape = "round"\n',
     r"figure 'f1' \(2.1\): unknown key\(s\) \['shape'\]"),
])
def test_spec_errors_at_load_name_file_and_item(tmp_path, body, message):
    p = write(tmp_path, body)
    with pytest.raises(SpecError, match=message) as ei:
        load_report(p)
    assert str(ei.value).startswith(str(p) + ": chapter 'c'")


@pytest.mark.parametrize("head,message", [
    (HEAD.replace('organisation = "O"', 'organisation = "O"\nauthor_count = 3'), r"\[report\]: unknown key\(s\) \['author_count'\]"),
    (HEAD + '[metrics.tps]\nlabel = "TPS"\nscale = 2\n', r"\[metrics.tps\]: unknown key\(s\) \['scale'\]"),
    (HEAD + '[metrics.tps]\nhigher_is_better = "yes"\n', r"\[metrics.tps\]: higher_is_better must be true or false"),
    (HEAD + '[factors.clients]\nsort = "desc"\n', r"\[factors.clients\]: unknown key\(s\) \['sort'\]"),
    (HEAD.replace('title = "C"', 'title = "C"\nsubtitle = "S"'), r"chapter 'c': unknown key\(s\) \['subtitle'\]"),
    (HEAD.replace("fiscal_year = 2030", 'fiscal_year = "FY2030"'), r"\[report\] fiscal_year: expected an integer"),
])
def test_report_level_errors(tmp_path, head, message):
    p = write(tmp_path, "", head=head)
    with pytest.raises(SpecError, match=message) as ei:
        load_report(p)
    assert str(p) in str(ei.value)


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
        analysis.compute_table(store, r, r.item("t1"))
        return
    r = load_report(p)
    with pytest.raises(SpecError, match=message) as ei:
        analysis.compute_table(store, r, r.item("t1"))
    assert str(ei.value).startswith(str(p) + ": chapter 'c', table 't1' (2.1)")


def test_auto_compare_needs_a_direction(store, tmp_path):
    p = write(tmp_path, TABLE.replace('metric = "tps"', 'metric = "published_x"') +
              'baseline = { fixed = 1, compare = "auto" }\n')
    r = load_report(p)
    with pytest.raises(SpecError, match=r"table 't1' \(2.1\): (unknown metric|baseline compare = 'auto' needs)"):
        analysis.compute_table(store, r, r.item("t1"))


def test_figure_errors_name_the_figure(store, tmp_path):
    p = write(tmp_path, '[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nx = "clients"\nchart = "pie"\n')
    r = load_report(p)
    with pytest.raises(SpecError, match=r"figure 'f1' \(2.1\): unknown chart kind 'pie'"):
        figures.build_figure(store, r, r.item("f1", "figure"))
    p = write(tmp_path, '[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nx = "colour"\n')
    r = load_report(p)
    with pytest.raises(SpecError, match=rf"{p}: chapter 'c', figure 'f1' \(2.1\): grouping: unknown factor 'colour'"):
        figures.build_figure(store, r, r.item("f1", "figure"))


def test_numbering_explicit_and_continued(tmp_path):
    body = (TABLE.replace('id = "t1"', 'id = "t1"\nnumber = "2.2"') + TABLE.replace('"t1"', '"t2"')
            + TABLE.replace('"t1"', '"t3"\nnumber = 5')
            + '[[chapter.figure]]\nid = "f1"\ncaption = "x"\nmetric = "tps"\nx = "clients"\n')
    r = load_report(write(tmp_path, body))
    assert [(i.kind, i.id, i.number) for i in r.chapters[0].items] == [
        ("table", "t1", "2.2"), ("table", "t2", "2.3"), ("table", "t3", "2.5"), ("figure", "f1", "2.1")]
    assert r.item("t1").prefix("ja") == "表 2.2" and r.item("f1", "figure").prefix("en") == "Figure 2.1"


def test_repository_specs_load():
    reports = load_all(ROOT / "data" / "reports")
    ids = [r.id for r in reports]
    assert {"example", "past-fy2013", "past-fy2017"} <= set(ids)
    past = {r.id: r for r in reports}
    numbers = {(r, c.id): [i.number for i in c.tables] for r in past for c in past[r].chapters}
    assert numbers[("past-fy2013", "scaleup")] == ["2.2", "2.3", "2.4", "2.5"]
    assert numbers[("past-fy2013", "ssd")] == ["4.5", "4.6", "4.7", "4.8", "4.9"]
    assert numbers[("past-fy2017", "parallel-query")] == [f"6.{n}" for n in range(8, 20)]
    assert numbers[("past-fy2017", "replication")] == ["8.8", "8.9", "8.10"]


def test_build_exits_3_naming_the_spec(tmp_path, tool):
    specs = tmp_path / "specs"
    specs.mkdir()
    p = specs / "bad.toml"
    p.write_text(HEAD + TABLE + 'colour = "red"\n', encoding="utf-8")
    proc = tool("build", "--db", tmp_path / "none.duckdb", "--specs", specs, "--out", tmp_path / "out")
    assert proc.returncode == 3
    assert f"{p}: chapter 'c', table 't1' (2.1): unknown key(s) ['colour']" in proc.stderr
