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
