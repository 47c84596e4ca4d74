"""The computed report is the renderers' only input: a ComputedReport built by hand (no store, no spec)
renders to Hugo data and a Hugo page, and to typst that compiles to a PDF; measured strings stay text."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

# A measured string that is markup in every target: typst (#, *, [ ]), HTML (<, &), Markdown, CSV formula.
HOSTILE = '=cmd|x #strong[bold] *star* <b>&amp; $x$ `code`'


def handmade_report(content_root: Path):
    from kansoku.report.model import (Cell, Chapter, Column, ComputedReport, Environment, Figure, HeaderCell,
                                      Provenance, ProvenanceGroup, ProvenanceRun, RunInfo, SourceFile, Table)
    from kansoku.report.structure import Page

    def w(s: str) -> dict[str, str]:
        return {"ja": s, "en": s}

    rows = [
        [Cell(w("1"), kind="factor", flags=["baseline"]),
         Cell(w("1,000.5"), 1000.5, "value", ["run-a", "run-b"], "run-a", run_values={"run-a": 1000.0, "run-b": 1001.0},
              exact="1000.5"),
         Cell({"ja": "比なし (基準値 0)", "en": "no ratio (baseline 0)"}, None, "compare", flags=["no-ratio"])],
        [Cell(w(HOSTILE), kind="factor"),
         Cell(w("53.133"), 53.133, "value", ["run-c"], "run-c", ["transcribed"], exact="53.133"),
         Cell({"ja": "▲12.3%", "en": "\u221212.3 %"}, -0.123, "compare", flags=["transcribed", "mismatch"],
              exact="-0.123")],
    ]
    table = Table(
        id="t1", number="1.1", label={"ja": "表 1.1", "en": "Table 1.1"}, caption=w("A table made by hand"),
        footnote=w("footnote " + HOSTILE),
        header=[[HeaderCell(w("clients"), rowspan=2), HeaderCell(w("checksums on"), colspan=2, baseline=False)],
                [HeaderCell(w("TPS"), kind="value", baseline=False), HeaderCell(w("change"), kind="compare")]],
        columns=[Column(w("clients"), "factor"), Column(w("TPS"), "value"), Column(w("change"), "compare")],
        rows=rows, runs=["run-a", "run-b", "run-c"], citations=["a report, table 9"],
        checks={"checked": 1, "mismatch": 1}, marks=["mismatch", "transcribed"],
        provenance=Provenance(common=[(w("scale"), w("100"))], factors=[w("clients")],
                              groups=[ProvenanceGroup([w("1")], [ProvenanceRun("run-a", "run-aaaa", "1", True)])],
                              runs=3))
    figure = Figure(id="f1", number="1.1", chart="line", label={"ja": "図 1.1", "en": "Figure 1.1"},
                    caption=w("A figure made by hand"), footnote=None,
                    figure={lang: {"data": [{"type": "scatter", "x": [1, 2], "y": [3.0, 4.0], "name": HOSTILE}],
                                   "layout": {"xaxis": {"title": {"text": "x"}}}} for lang in ("ja", "en")},
                    runs=["run-a"])
    chapter = Chapter("one", 1, w("Chapter one"), tables={"t1": table}, figures={"f1": figure}, order=["t1", "f1"])
    page = Page("one", "chapter", 1, w("Chapter one"), {"ja": None, "en": None}, number=1)
    return ComputedReport(
        id="handmade", fiscal_year=2030, title=w("Handmade report"), subtitle=None, organisation=w("Org"),
        revision="1.0", copyright="(c) nobody", license=None, revision_history=[], authors=[],
        themes={"ja": [], "en": []}, publish_raw=False, chapters=[chapter],
        runs={"run-a": RunInfo("run-a", "measured", "ok", None, None, "host", "run-aaaa", {"clients": "1"},
                               [SourceFile("pgbench.log", 10, "ab" * 32, "pgbench", "stdout", "15", "10 B")])},
        environment=Environment(), pages=[page], pdf_pages=[page],
        generated_bodies={"one": '{{< tbl "t1" >}}\n\n{{< fig "f1" >}}\n'}, content_dir=content_root / "handmade")


def test_renderers_import_neither_the_store_nor_the_analysis():
    for path in [ROOT / "tools/kansoku/render/hugo.py", ROOT / "tools/kansoku/render/typst.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [n.module for n in top if isinstance(n, ast.ImportFrom)] + [a.name for n in top
                                                                              if isinstance(n, ast.Import)
                                                                              for a in n.names]
        bad = [m for m in names if m and m.startswith(("kansoku.store", "kansoku.analysis", "kansoku.spec"))]
        assert not bad, f"{path.name} imports {bad}"
        src = path.read_text(encoding="utf-8")
        assert ".execute(" not in src and "load_report" not in src.split("def build_pdfs")[0]
        assert "load_all" not in src


def test_handmade_report_to_hugo_data_and_page(tmp_path):
    from kansoku.render.hugo import csv_text, run_hugo, write_generated

    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    rep = handmade_report(content / "reports")
    gen, out = tmp_path / "generated", tmp_path / "public"
    write_generated([rep], gen)
    data = json.loads((gen / "data" / "reports" / "handmade.json").read_text("utf-8"))
    t = data["chapters"][0]["tables"]["t1"]
    assert t["rows"][1][0]["t"] == HOSTILE and t["rows"][0][2]["flags"] == ["no-ratio"]
    assert t["prov"]["groups"][0]["runs"][0] == {"id": "run-a", "a": "run-aaaa", "rep": "1", "r": True}
    # plotly.js reads names as pseudo-HTML: escaped in the data
    assert data["chapters"][0]["figures"]["f1"]["figure"]["en"]["data"][0]["name"].count("&lt;b&gt;") == 1
    csv = (gen / "static" / "csv" / "handmade" / "t1.en.csv").read_text("utf-8")
    assert csv == "\ufeff" + csv_text(rep.chapters[0].tables["t1"], "en")
    lines = csv.lstrip("\ufeff").splitlines()
    assert lines[1] == "1,1000.5,no ratio (baseline 0)"
    assert lines[2].startswith("'=cmd|x") and lines[2].endswith(",53.133,-0.123"), lines[2]
    run_hugo(out, gen, content, site_root=ROOT)
    html = (out / "en" / "reports" / "handmade" / "one" / "index.html").read_text("utf-8")
    assert "Table 1.1" in html and "1,000.5" in html and "no ratio (baseline 0)" in html
    assert "<b>&amp;" not in html and "&lt;b&gt;&amp;amp;" in html  # the measured string stays text


def test_handmade_report_to_typst_and_pdf(tmp_path):
    from kansoku.render.typst import Document, render_pdfs

    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    rep = handmade_report(content / "reports")
    typ = Document(rep, "en", tmp_path).table(rep.chapters[0].tables["t1"])
    # every occurrence is inside a typst string literal (closed right after it), none is markup
    assert typ.count("#strong[bold]") == typ.count(HOSTILE.replace('"', '\\"') + '"') == 2
    results = render_pdfs(rep, ["en"], out={"en": tmp_path / "handmade.en.pdf"})
    assert results[0].pages >= 2
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "handmade.en.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    flat = " ".join(text.split())
    assert "=cmd|x #strong[bold] *star* <b>&amp; $x$ `code`" in flat  # printed as is, not as markup
    assert "1,000.5" in flat and "no ratio (baseline 0)" in flat and "Table 1.1" in flat and "Figure 1.1" in flat


@pytest.mark.parametrize("value,text", [(53.132999999999996, "53.133"), (18.109999999999996, "18.11"),
                                        (3.0, "3"), (2.04e-05, "0.0000204"), (-0.12300000000000001, "-0.123"),
                                        (7471.238842, "7471.238842")])
def test_download_numbers_are_stable_decimals(value, text):
    from kansoku.analysis.tables import exact_text

    assert exact_text(value) == text


def test_report_model_doc_is_current():
    from kansoku.report.model_doc import render

    assert (ROOT / "docs" / "report_model.md").read_text(encoding="utf-8") == render(), (
        "docs/report_model.md is out of date: cd tools && python -m kansoku.report.model_doc > ../docs/report_model.md")


def test_every_model_field_is_in_the_doc():
    import dataclasses

    from kansoku.report.model_doc import records

    doc = (ROOT / "docs" / "report_model.md").read_text(encoding="utf-8")
    for cls in records():
        assert f"## {cls.__name__}" in doc
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in doc, (cls.__name__, f.name)
