"""Every page of every PDF as a reader meets it: the example's and the past reports', in every
language. The checks are tests/pdf_reader.py (poppler's tools on the built PDF); each test names the pages.

The PDFs are built once per session (conftest.example_pdfs_all), as tests/test_pdf.py reads them.
"""

from __future__ import annotations

import json
import shutil

import pytest

import pdf_reader as reader
from conftest import ROOT

SPECS = sorted(p.stem for p in (ROOT / "data" / "reports").glob("*.toml"))
LANGS = ("ja", "en")

pytestmark = [pytest.mark.skipif(not (shutil.which("pdftotext") and shutil.which("pdftohtml")),
                                 reason="poppler-utils not installed"),
              pytest.mark.slow]


@pytest.fixture(scope="module")
def pdfs(example_pdfs_all):
    return example_pdfs_all


@pytest.fixture(scope="module")
def site_json(example_site):
    db, _ = example_site
    return {rid: json.loads((db.parent / "generated" / "data" / "reports" / f"{rid}.json").read_text("utf-8"))
            for rid in SPECS}


def recorded_commands(report: dict, lang: str, rid: str) -> list[str]:
    """Every command of the chapters whose page places the commands block, as typed at a prompt."""
    out = []
    for ch in report["chapters"]:
        page = ROOT / "content" / "reports" / rid / f"{ch['id']}.{lang}.md"
        if not page.is_file() or "{{< commands" not in page.read_text("utf-8"):
            continue
        for b in ch["views"]["commands"][lang]["blocks"]:  # each "$ " and the command (render/views.py)
            out += b["setup"] + [b["command"]]
    return out


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_invisible_characters(pdfs, rid, lang):
    """A copied file name or word is the word: no zero-width space, word joiner or soft hyphen."""
    assert reader.invisible_characters(pdfs[rid][lang]) == []


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_commands_copy_back_whole(pdfs, site_json, rid, lang):
    """Every recorded command is printed so that its lines, joined at their explicit continuations, are the
    command: never broken between an option and its value or inside a quoted argument."""
    recorded = recorded_commands(site_json[rid], lang, rid)
    assert reader.broken_commands(pdfs[rid][lang], recorded) == []


def test_the_command_check_sees_commands(pdfs, site_json):
    """The example prints commands, so the check above is not vacuous."""
    assert len(recorded_commands(site_json["example"], "ja", "example")) > 5
    assert len(reader.printed_commands(pdfs["example"]["ja"])) > 5


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_heading_stranded_at_a_pages_foot(pdfs, rid, lang):
    assert reader.stranded_headings(pdfs[rid][lang]) == []


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_page_holding_only_a_small_table(pdfs, rid, lang, tmp_path):
    assert reader.nearly_empty_pages(pdfs[rid][lang], tmp_path) == []


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_has_alternative_text(pdfs, rid, lang):
    assert reader.figures_without_alt(pdfs[rid][lang]) == []


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_range_or_count_broken_inside(pdfs, rid, lang):
    """"[10,623.7–12,126.3]" and "n = 5" each stay on one line."""
    assert reader.broken_values(pdfs[rid][lang]) == []


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_structure_warning_of_ours(pdfs, rid, lang):
    """pdfinfo -struct finds nothing wrong in the tags a screen reader follows, but poppler's misreadings of
    values that are valid PDF (each allowed only as often as the file holds the valid value)."""
    assert reader.structure_warnings(pdfs[rid][lang]) == []


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_headings_start_at_h1_and_skip_no_level(pdfs, rid, lang):
    assert reader.heading_skips(pdfs[rid][lang]) == []


def _typst_pdf(tmp_path, source: str):
    typst = pytest.importorskip("typst")
    src = tmp_path / "doc.typ"
    src.write_text(source, encoding="utf-8")
    out = tmp_path / "doc.pdf"
    typst.compile(str(src), output=str(out))
    return out


def test_structure_check_fails_on_a_value_poppler_rightly_refuses(tmp_path):
    """A table's border colour typst writes (one RGB colour) passes; the same colour out of range fails."""
    pdf = _typst_pdf(tmp_path, "#table(columns: 2, stroke: 0.4pt + luma(140), [a], [b])\n")
    assert reader.structure_warnings(pdf) == []
    data = pdf.read_bytes()
    at = data.index(b"/BorderColor[0.")
    pdf.write_bytes(data[:at] + b"/BorderColor[2." + data[at + 15:])  # the same length: the offsets hold
    assert reader.structure_warnings(pdf) != []


def test_heading_check_fails_on_a_skipped_level(tmp_path):
    assert reader.heading_skips(_typst_pdf(tmp_path, "= One\n== Two\n=== Three\n= Four\n")) == []
    assert reader.heading_skips(_typst_pdf(tmp_path, "= One\n=== Three\n")) == ["H3 “Three” after H1"]
    assert reader.heading_skips(_typst_pdf(tmp_path, "== Two\n= One\n")) == ["H2 “Two” after no heading"]
