"""The table grammar beyond one factor per axis (docs/spec.md "Table grammar"), on the example's real runs:
row groups (a second factor on rows), per-run columns beside the aggregate, number presentation."""

from __future__ import annotations

import re
import statistics

import pytest

from conftest import ROOT
from kansoku.analysis import tables as analysis
from kansoku.analysis.table_kinds import compute_table
from kansoku.errors import SpecError
from kansoku.spec.model import load_report
from kansoku.store.db import open_store

TABLE = """
[[chapter.table]]
id = "g"
caption = { ja = "g", en = "g" }
metrics = ["tps"]
where = { campaign = "example-2026-11", study = "scaleup", workload = ["update", "read"], rep = ["1", "2", "3"] }
rows = "clients"
columns = "config"
row_groups = "workload"
per_run = true
number_format = { tps = "thousands" }
baseline = { factor = "config", value = "checksums-off", compare = "ratio", format = "percent", digits = 2 }
digits = { tps = 1 }
"""


@pytest.fixture(scope="module")
def store(example_db):
    st = open_store(example_db, read_only=True)  # the example's runs, ingested once per session
    yield st
    st.close()


def spec(tmp_path, extra: str = "", table: str = TABLE):
    text = (ROOT / "data" / "reports" / "example.toml").read_text("utf-8")
    head = text.split("[[chapter]]")[0]
    head = "\n".join(l for l in head.splitlines() if not l.startswith("chapters = "))  # the authors' chapters
    p = tmp_path / "grammar.toml"
    p.write_text(head + '\n[[chapter]]\nid = "c"\nnumber = 1\ntitle = { ja = "c", en = "c" }\n' + table + extra,
                 encoding="utf-8")
    return load_report(p)


def test_row_groups_per_run_columns_and_thousands(store, tmp_path):
    r = spec(tmp_path)
    t = compute_table(store, r, r.item("g")).to_model()
    # two blocks (update, read), labelled in the report's words, each with its own rows
    assert [g.label["en"] for g in t.row_groups] == ["update", "read-only"]
    assert t.row_groups[0].first_row == 0 and t.row_groups[1].first_row == t.row_groups[0].rows
    assert sum(g.rows for g in t.row_groups) == len(t.rows)
    # header: stub, then per config: run 1..3, the median, the ratio
    leaf = [h.text["en"] for h in t.header[1]]
    assert leaf[:4] == ["run 1", "run 2", "run 3", "median"], leaf
    assert [h.text["ja"] for h in t.header[1][:4]] == ["1 回目", "2 回目", "3 回目", "中央値"]
    checked = 0
    for row in t.rows:
        runs = [c for c in row if c.kind == "run"]
        values = [c for c in row if c.kind == "value"]
        assert len(runs) == 3 * len(values)
        for k, agg in enumerate(values):
            per = runs[3 * k:3 * k + 3]
            # the printed median is the median of the printed runs' values, and each run is its own run
            assert agg.value == pytest.approx(statistics.median(c.value for c in per), rel=1e-12)
            assert sorted(c.runs[0] for c in per) == sorted(agg.runs)
            assert [re.search(r"rep=(\d)", c.runs[0]).group(1) for c in per] == ["1", "2", "3"]
            for c in per + [agg]:
                assert re.fullmatch(r"\d{1,3}(,\d{3})*\.\d", c.text["en"]), c.text  # 13,097.4
                assert c.text["en"].replace(",", "") == analysis.round_text(c.value, 1)
                checked += 1
    assert checked >= 16
    # the CSV has the group first and plain decimals
    csv = t.csv_rows("en")
    assert csv[0][0] == "Workload" or csv[0][0]  # the grouping factor's name
    assert csv[1][0] == "update" and csv[-1][0] == "read-only"
    assert all("," not in v for row in csv[1:] for v in row[2:])


def test_exponent_number_format_prints_one_decimal_mantissa(store, tmp_path):
    r = spec(tmp_path, table=TABLE.replace('number_format = { tps = "thousands" }', 'number_format = { default = "exponent" }')
             .replace("per_run = true\n", "").replace('row_groups = "workload"\n', "").replace('["update", "read"]', '"update"'))
    t = compute_table(store, r, r.item("g")).to_model()
    vals = [c for row in t.rows for c in row if c.kind == "value"]
    assert vals and all(re.fullmatch(r"\d\.\dE\+0\d", c.text["en"]) for c in vals), [c.text for c in vals]


@pytest.mark.parametrize("bad,msg", [
    ('number_format = { tps = "roman" }', 'number_format.tps (table \'g\'): expected one of "plain", "thousands", "exponent", found "roman"'),
    ('number_format = { nosuch = "plain" }', "number_format.nosuch: not one of"),
    ('per_run = "yes"', 'per_run (table \'g\'): expected true or false, found "yes"'),
    ('row_groups = "clients"', "already the table's rows"),
])
def test_grammar_errors_name_the_key(store, tmp_path, bad, msg):
    table = TABLE.replace('number_format = { tps = "thousands" }\n', "").replace("per_run = true\n", "") \
        .replace('row_groups = "workload"\n', "") + bad + "\n"
    with pytest.raises(SpecError, match=re.escape(msg)):  # when the spec is read (schema) or computed
        r = spec(tmp_path, table=table)
        compute_table(store, r, r.item("g"))


def test_row_groups_render_on_the_site_and_in_typst(store, tmp_path):
    from kansoku.render.hugo import run_hugo, write_generated
    from kansoku.render.typst import Document
    from kansoku.report.build import compute_report

    r = spec(tmp_path)
    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    rep = compute_report(store, r, content / "reports")
    typ = Document(rep, "en", tmp_path).block("tbl", "g", chapter=rep.chapters[0].id)
    assert typ.count('align: left, fill: luma(245))[*#"update"*]') == 1 and '#"read-only"' in typ
    gen, out = tmp_path / "gen", tmp_path / "public"
    write_generated([rep], gen)
    run_hugo(out, gen, content, site_root=ROOT)
    html = (out / "en" / "reports" / "example" / "c" / "index.html").read_text("utf-8")
    assert html.count('<tr class="row-group">') == 2 and ">run 1<" in html and ">median<" in html


def test_value_and_change_in_one_cell(store, tmp_path):
    table = TABLE.replace("per_run = true\n", "").replace('row_groups = "workload"\n', "") \
        .replace('["update", "read"]', '"update"').replace('compare = "ratio", format = "percent", digits = 2 }',
                                                           'compare = "change", format = "change", digits = 1, inline = true }')
    r = spec(tmp_path, table=table)
    t = compute_table(store, r, r.item("g")).to_model()
    assert [c.kind for c in t.columns] == ["factor", "value", "value"]  # no comparison column of its own
    plain = spec(tmp_path, table=table.replace(", inline = true", "")).item("g")
    ref = compute_table(store, r, plain).to_model()
    for row, ref_row in zip(t.rows, ref.rows):
        base, on = row[1], row[2]
        assert " (" not in base.text["en"]  # the baseline column shows the value only
        comp = [c for c in ref_row if c.kind == "compare"][0]
        assert on.text["en"] == f"{ref_row[2].text['en']} ({comp.text['en']})"  # 9,928.0 (−24.2 %)
        assert on.text["ja"] == f"{ref_row[2].text['ja']} ({comp.text['ja']})"
        assert on.value == ref_row[2].value  # the cell's number stays the value
    assert any("▲" in row[2].text["ja"] for row in t.rows)


METRIC_ROWS = """
[[chapter.table]]
id = "m"
caption = { ja = "m", en = "m" }
metrics = ["disk_read_kb_s", "disk_write_kb_s"]
where = { campaign = "example-2026-11", study = "scaleup", workload = ["update", "read"], config = "checksums-on", rep = ["1", "2", "3"] }
rows = "metrics"
columns = "clients"
row_groups = "workload"
sum_column = { ja = "合計", en = "total" }
digits = { default = 1 }
baseline = { factor = "config", value = "checksums-off", compare = "ratio", format = "times", digits = 2, inline = true }
"""


def test_rows_that_are_metrics_with_a_sum_column_against_another_condition(store, tmp_path):
    """FY2013 表 4.8's shape: blocks (row_groups), rows that are metrics (read and write KB/s), a column
    per device (here: per client count), their sum, each cell with its ratio to the baseline condition."""
    r = spec(tmp_path, table=METRIC_ROWS)
    t = compute_table(store, r, r.item("m")).to_model()
    assert [g.label["en"] for g in t.row_groups] == ["update", "read-only"]
    assert [row[0].text["en"] for row in t.rows][:2] == [
        analysis.metric_label("disk_read_kb_s", "en", report=r), analysis.metric_label("disk_write_kb_s", "en", report=r)]
    assert [c.text["en"] for c in t.columns] == ["Item", "1", "2", "4", "8", "total"]
    base = spec(tmp_path, table=METRIC_ROWS.replace('config = "checksums-on"', 'config = "checksums-off"')
                .replace(", inline = true", "").replace("baseline = {", "# baseline = {"))
    bt = compute_table(store, base, base.item("m")).to_model()
    checked_zero = False
    for row, brow in zip(t.rows, bt.rows):
        values = row[1:5]
        assert row[5].value == pytest.approx(sum(c.value for c in values), rel=1e-12)  # the sum column
        assert sorted(row[5].runs) == sorted({r for c in values for r in c.runs})
        for c, bc in zip(row[1:], brow[1:]):
            shown, ratio = c.text["en"].split(" (", 1)
            assert shown == analysis.round_text(c.value, 1)
            if bc.value == 0:  # the real runs read nothing from disk now and then
                assert ratio == "no ratio (baseline 0))" and "no-ratio" in c.flags
                checked_zero = True
            else:
                assert ratio == "×" + analysis.round_text(c.value / bc.value, 2) + ")", (c.text, bc.value)
    # the example's 10-second runs read nothing from disk now and then (a zero baseline: "no ratio"); its
    # re-measured 30-second runs always do, so that branch is checked only when the data has it
    assert checked_zero or all(bc.value for brow in bt.rows for bc in brow[1:])


def test_rows_that_are_metrics_need_columns(store, tmp_path):
    r = spec(tmp_path, table=METRIC_ROWS.replace('columns = "clients"\n', ""))
    with pytest.raises(SpecError, match='rows = "metrics" needs columns'):
        compute_table(store, r, r.item("m"))


def test_cell_notes_mark_the_cells_and_print_under_the_table(store, tmp_path):
    from kansoku.render.hugo import run_hugo, write_generated
    from kansoku.render.typst import Document
    from kansoku.report.build import compute_report

    notes = ('cell_notes = [{ row = 4, column = "checksums-on", note = { ja = "注 <b>", en = "a note <b>" } },\n'
             '  { group = "read", metric = "tps", mark = "#2", note = "every read cell" }]\n')
    r = spec(tmp_path, table=TABLE.replace("per_run = true\n", "") + notes)
    t = compute_table(store, r, r.item("g")).to_model()
    # the spec's two notes; notes the data adds (steady state: the example's runs that drift or stall) follow
    steady = {n.mark for n in t.notes if n.text["en"].startswith("Steady state")}
    marked = {(c.coords.get("group"), c.coords["row"], c.coords.get("column"), c.kind):
              [n.mark for n in c.notes if n.mark not in steady] for row in t.rows for c in row if c.notes}
    assert [n.mark for n in t.notes if n.mark not in steady] == ["*1", "#2"]
    assert marked[("update", "4", "checksums-on", "value")] == ["*1"]
    assert marked[("read", "4", "checksums-on", "value")] == ["*1", "#2"]
    assert all("#2" in m for (g, *_), m in marked.items() if g == "read")
    assert not any("#2" in m for (g, *_), m in marked.items() if g == "update")
    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    rep = compute_report(store, r, content / "reports")
    typ = Document(rep, "en", tmp_path).block("tbl", "g", chapter=rep.chapters[0].id)
    assert '#super[#"(*1)"]' in typ and '[#"(*1) a note <b>"]' in typ and '#"(#2) every read cell"' in typ
    gen, out = tmp_path / "gen", tmp_path / "public"
    write_generated([rep], gen)
    run_hugo(out, gen, content, site_root=ROOT)
    html = (out / "ja" / "reports" / "example" / "c" / "index.html").read_text("utf-8")
    assert '<sup class="cell-note">(*1)</sup>' in html and "(*1)</span> 注 &lt;b&gt;" in html


def test_cell_note_that_names_no_cell_is_an_error(store, tmp_path):
    r = spec(tmp_path, table=TABLE + 'cell_notes = [{ row = 3, note = "x" }]\n')
    with pytest.raises(SpecError, match=r"cell_notes\[0\]: no cell of the table is at \{'row': '3'\}"):
        compute_table(store, r, r.item("g"))


def test_a_decimal_tie_prints_the_same_whatever_the_float_noise():
    """The mean CPU %idle of a real example run is 33.865 in decimal; DuckDB's parallel sum gives
    33.864999999999995 or 33.865000000000002 depending on the order it adds the samples. Both must print
    33.87, or the site and the PDF (two computations) disagree on the same run."""
    from kansoku.analysis.tables import round_text

    assert round_text(33.864999999999995, 2) == round_text(33.865000000000002, 2) == "33.87"
    assert round_text(-33.864999999999995, 2) == "-33.87"
    assert round_text(0.125, 2) == "0.13" and round_text(1.0382 * 100, 2) == "103.82"
