"""Numbers of the prose printed from the data (report/values.py, {{< val … >}}): each form resolves to what
the table prints, a value naming no single cell is a problem with its page and line, the check of numbers
stated as text finds them in Results and Discussion only, and a run left out moves the sentence."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, computed_report
from kansoku import shortcodes
from kansoku.report.values import Unbound, page_values, resolve, stated_numbers
from kansoku.spec.validate import Problem
from site_helpers import build_one_report

SPEC = ROOT / "data" / "reports" / "example.toml"


@pytest.fixture(scope="module")
def report(example_db):
    return computed_report(example_db, SPEC)


def table(report, table_id: str):
    return next(ch.tables[table_id] for ch in report.chapters if table_id in ch.tables)


def val(args: str):
    (sc,) = shortcodes.parse("{{< val " + args + " >}}")
    return sc


def cell(t, kind: str, **coords):
    (c,) = [c for row in t.rows for c in row if c.kind == kind and all(c.coords.get(k) == v for k, v in coords.items())]
    return c


def test_a_value_prints_the_cell_as_the_table_prints_it(report):
    t = table(report, "replication-tps")
    v = resolve(t, val('table="replication-tps" row="none" metric="tps"'))
    assert v.text == cell(t, "value", row="none", metric="tps").text
    assert v.anchor == "table-replication-tps"
    assert "Table 6.1" in v.title["en"] and "表 6.1" in v.title["ja"]


def test_compare_verdict_p_min_max_and_n(report):
    t = table(report, "replication-tps")
    c = cell(t, "compare", row="async-1", metric="tps")
    a = 'table="replication-tps" row="async-1" metric="tps"'
    assert resolve(t, val(a + ' show="compare"')).text == c.text
    kind = c.verdict["kind"].replace("-", "_")
    from kansoku import words
    assert resolve(t, val(a + ' show="verdict"')).text == {lang: words.t(lang, f"verdict_{kind}") for lang in ("ja", "en")}
    assert resolve(t, val(a + ' show="p"')).text["en"] == f"{c.verdict['p']:.3f}"
    runs = cell(t, "value", row="async-1", metric="tps").run_values.values()
    assert resolve(t, val(a + ' show="min"')).value == pytest.approx(min(runs))
    assert resolve(t, val(a + ' show="max"')).value == pytest.approx(max(runs))
    assert resolve(t, val(a + ' show="n"')).text["en"] == str(len(runs))


def test_difference_ratio_and_change_of_two_cells(report):
    t = table(report, "replication-tps")
    a, b = cell(t, "value", row="async-1", metric="tps").value, cell(t, "value", row="none", metric="tps").value
    base = 'table="replication-tps" row="async-1" metric="tps" vs_row="none"'
    assert resolve(t, val(base + ' op="diff"')).value == pytest.approx(a - b)
    assert resolve(t, val(base + ' op="ratio"')).text["en"] == f"×{a / b:.2f}"
    assert resolve(t, val(base + ' op="change"')).text["en"] == f"{(a / b - 1) * 100:+.1f} %".replace("-", "−")


@pytest.mark.parametrize("args, says", [
    ('table="replication-tps" row="nobody" metric="tps"', "no value cell of table 'replication-tps' is at"),
    ('table="replication-tps" row="none"', "3 value cells"),
    ('table="replication-tps" row="none" metric="tps" show="median"', "show='median': one of"),
    ('table="replication-tps" row="none" metric="tps" show="verdict"', "no verdict"),
    ('table="replication-tps" row="none" metric="tps" op="diff"', "needs the second cell"),
    ('table="replication-tps" row="none" metric="tps" colour="red"', "unknown argument(s) ['colour']"),
])
def test_a_value_naming_no_single_cell_says_what_there_is(report, args, says):
    with pytest.raises(Unbound, match=re.escape(says)):
        resolve(table(report, "replication-tps"), val(args))


def test_a_page_naming_a_missing_table_is_a_problem_with_its_line(report, tmp_path):
    page = tmp_path / "replication.en.md"
    page.write_text('---\ntitle: x\n---\n## Results\n\nTPS was {{< val table="replication-tsp" row="none" metric="tps" >}}.\n',
                    encoding="utf-8")
    from kansoku.model import Page

    values, problems = page_values([Page("replication", "chapter", 6, {}, {"en": page})], report.chapters)
    assert values == {}
    assert [(p.spec_file, p.line) for p in problems] == [(page, 6)]
    assert isinstance(problems[0], Problem) and 'did you mean "replication-tps"' in problems[0].message


def test_numbers_stated_as_text_in_results_and_discussion_only():
    body = ("## Setup\n\n2 vCPUs, 23.5 GiB, PostgreSQL 15.4.\n\n## Results\n\nTPS was 7481.0 at 4 clients, 72.2 % of "
            "table 6.1 and figures 8.8–8.10 in FY2017 (2026).\n\n"
            "`pgbench -T 300` and {{< val table=\"t\" row=\"1\" >}} and [a](../x/1.5/).\n\n## 考察\n\n1,234 TPS.\n")
    assert stated_numbers(body, "en") == [(7, "7481.0"), (7, "72.2 %")]
    assert stated_numbers(body.replace("## 考察", "## Discussion"), "en")[-1] == (13, "1,234")


def test_the_cover_lists_each_key_cell_with_its_comparison_and_verdict(report):
    t = table(report, "replication-tps")
    found = [f for f in report.findings if f.chapter_id == "replication"]
    assert [f.label["en"] for f in found] == ["update TPS with one asynchronous standby",
                                              "update TPS with one synchronous standby"]
    c = cell(t, "compare", row="sync-1", metric="tps")
    # away from the table's header, the value says its unit and the comparison what it compares with
    v = cell(t, "value", row="sync-1", metric="tps")
    assert found[1].value.text == {lang: v.text[lang] + " TPS" for lang in ("ja", "en")}
    assert found[1].compare.text["en"].endswith(": " + c.text["en"]) and c.text["ja"] in found[1].compare.text["ja"]
    assert found[1].verdict_kind == c.verdict["kind"].replace("-", "_")
    assert found[1].table == t.label and found[1].value.anchor == "table-replication-tps"


def test_every_key_result_on_the_cover_says_its_unit(report):
    """A bare number on the cover ("partitioned table: 3.3") does not say what it is."""
    for f in report.findings:
        for lang in ("ja", "en"):
            assert not re.fullmatch(r"[-+\d.,\s]+", f.value.text[lang]), (f.label[lang], f.value.text[lang])
    partition = next(f for f in report.findings if f.chapter_id == "partition")
    assert partition.value.text["en"].endswith(" ms")

@pytest.mark.slow  # a long test of what quicker ones check too: --all (CI) runs it

def test_a_key_naming_no_cell_is_an_error_of_its_table(example_db, tmp_path):
    text = SPEC.read_text(encoding="utf-8").replace('{ row = "sync-1", metric = "tps", label',
                                                     '{ row = "sync-9", metric = "tps", label')
    r = build_one_report(example_db, tmp_path, "example", text)
    assert r.returncode == 3, r.stderr
    assert "table 'replication-tps'" in r.stderr and "key[1]: no value cell" in r.stderr
    assert "Traceback" not in r.stderr


# -- tables and figures named in the prose: {{< ref … >}} ------------------------------------------------------

def test_a_reference_prints_the_items_label_and_links_its_chapter(report):
    ref = report.values['ref:figure=update-cpu']
    fig = next(ch.figures["update-cpu"] for ch in report.chapters if "update-cpu" in ch.figures)
    assert ref.text == fig.label and ref.anchor == "figure-update-cpu" and ref.chapter == "scaleup"
    assert ref.title["ja"].startswith(fig.label["ja"] + " " + fig.caption["ja"])
    table = report.values['ref:table=read-tps']
    assert table.text == {"ja": "表 1.1", "en": "Table 1.1"}
    # a number quoted from another chapter's table links to that chapter's page
    assert all(v.chapter for v in report.values.values())


def test_a_reference_naming_no_item_is_a_problem_with_its_line(report, tmp_path):
    page = tmp_path / "scaleup.en.md"
    page.write_text('---\ntitle: x\n---\n## Results\n\nAs {{< ref figure="update-cpus" >}} shows.\n'
                    'And {{< ref table="read-tps" figure="update-cpu" >}}.\n', encoding="utf-8")
    from kansoku.model import Page

    values, problems = page_values([Page("scaleup", "chapter", 1, {}, {"en": page})], report.chapters)
    assert values == {}
    assert [(p.line, p.message) for p in problems] == [
        (6, '{{< ref figure="update-cpus" >}}: no figure \'update-cpus\' in this report; did you mean "update-cpu" '
            'or "update-disk" or "update-tps-disk"?'),
        (7, '{{< ref table="read-tps" figure="update-cpu" >}}: a reference takes one of table= or figure= and '
            'nothing else')]


@pytest.mark.slow  # the example computed again: --all (CI); test_a_reference_prints_the_items_label_and_links_its_chapter is quick
def test_a_figure_added_before_renumbers_the_prose_that_names_its_neighbour(example_db, tmp_path):
    """The prose follows the report's numbering: a figure inserted at the head of chapter 1 moves every
    reference to a later figure of that chapter."""
    from kansoku.app import compute_one

    spec = tmp_path / "example.toml"
    text = SPEC.read_text(encoding="utf-8")
    first = text.index("[[chapter.figure]]")
    extra = ('[[chapter.figure]]\nid = "added"\ncaption = { ja = "追加", en = "Added" }\nchart = "line"\n'
             'metric = "tps"\nwhere = { campaign = "example-2026-11", study = "scaleup", workload = "read" }\n'
             'x = "clients"\n\n')
    spec.write_text(text[:first] + extra + text[first:], encoding="utf-8")
    before = computed_report(example_db, SPEC).values['ref:figure=update-cpu'].text
    after = compute_one(example_db, spec, ROOT / "content" / "reports").values['ref:figure=update-cpu'].text
    n = int(before["en"].rsplit(".", 1)[1])
    assert after == {"ja": f"図 1.{n + 1}", "en": f"Figure 1.{n + 1}"}


def test_literal_references_to_this_reports_items_are_problems_and_other_reports_are_not(tmp_path):
    from kansoku.model import Page
    from kansoku.report.structure import report_pages
    from kansoku.report.values import literal_refs
    from kansoku.spec.model import load_report

    rep = load_report(SPEC)
    assert literal_refs(report_pages(rep, ROOT / "content" / "reports"), rep) == []
    page = tmp_path / "scaleup.en.md"
    page.write_text("---\ntitle: x\n---\n## Discussion\n\nAs tables 1.1 and 1.2 show, and figure 1.3. "
                    "The FY2017 report's table 1.1 is its own.\n`table 1.2` in code.\n", encoding="utf-8")
    ja = tmp_path / "scaleup.ja.md"
    ja.write_text("---\ntitle: x\n---\n## 考察\n\n表 1.1 と表 1.2 が示す。FY2017 の表 1.1 は別である。\n", encoding="utf-8")
    found = literal_refs([Page("scaleup", "chapter", 1, {}, {"en": page, "ja": ja})], rep)
    assert [(p.spec_file.name, p.line, p.message.split(":")[0]) for p in found] == [
        ("scaleup.en.md", 6, "names table 1.1 as text"), ("scaleup.en.md", 6, "names table 1.2 as text"),
        ("scaleup.en.md", 6, "names figure 1.3 as text"),
        ("scaleup.ja.md", 6, "names table 1.1 as text"), ("scaleup.ja.md", 6, "names table 1.2 as text")]
    assert 'write {{< ref table="read-tps" >}}' in found[0].message
