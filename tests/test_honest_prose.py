"""Prose and words: a prose page that places an undeclared table or figure is said in words by
kansoku's own check before Hugo runs (Hugo alone printed `report %!q(<nil>)` and exited 1); "within noise"
in the example's prose only where a verdict exists (fewer than 3 runs a side: "too few runs")."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_spec_validate import _pages

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("page,body,expected", [
    ("introduction.en.md", '{{< fig "read-tps" >}}',
     "introduction.en.md:7: places figure 'read-tps', but introduction.en.md is not the page of a chapter"),
    ("closing.ja.md", '{{< tbl t1 >}}', "closing.ja.md:7: places table 't1', but closing.ja.md is not the page"),
    ("scaleup.en.md", '{{< fig nope >}}', "scaleup.en.md:7: figure 'nope' is not declared in chapter 'scaleup'"),
])
def test_a_page_placing_what_its_chapter_does_not_declare_is_a_spec_problem(tmp_path, page, body, expected):
    from kansoku.report.structure import page_problems
    from kansoku.spec.model import load_report

    front = "---\ntitle: X\nreport: r\n" + ("chapter: scaleup\n" if page.startswith("scaleup") else "") + "---\n"
    front += "\n" * (6 - front.count("\n"))  # the shortcode on line 7
    spec, content = _pages(tmp_path, {page: front + body + "\n"})
    problems = [str(p) for p in page_problems(load_report(spec), content)]
    assert any(expected in p for p in problems), problems


def test_build_says_it_in_words_and_exits_3(tmp_path, tool):
    spec, content = _pages(tmp_path, {"introduction.en.md": '---\ntitle: X\n---\n{{< fig "read-tps" >}}\n'})
    specs = tmp_path / "specs"
    specs.mkdir()
    spec.rename(specs / "r.toml")
    p = tool("build", "--db", tmp_path / "none.duckdb", "--specs", specs, "--content", content.parent,
             "--out", tmp_path / "public", "--generated", tmp_path / "gen")
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert "introduction.en.md:4: places figure 'read-tps'" in p.stderr and "%!q" not in p.stderr


def test_within_noise_in_the_example_prose_only_where_a_verdict_exists():
    """The syscall chapter has one run per configuration: its prose says too few runs, never within noise."""
    for lang, noise, few in (("en", "within the noise", "too few runs"), ("ja", "ばらつきの範囲内", "判定に必要な実行数")):
        text = (ROOT / "content/reports/example" / f"syscalls.{lang}.md").read_text(encoding="utf-8")
        assert noise not in text and few in text
