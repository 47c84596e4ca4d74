"""A unit or label never begins a line apart from its number or word in the PDF ("13.53⏎%", "CPU⏎%idle",
"3⏎回"): the PDF template's rule keeps them together, and tests/pdf_reader.py's ``breaks`` check
(``broken_values``) finds the kind. Both on a small real PDF, set by typst in a column narrow enough that the
break would fall there."""

from __future__ import annotations

import re
import shutil

import pytest

import pdf_reader as reader
from conftest import ROOT

typst = pytest.importorskip("typst")
pytestmark = pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils not installed")

TEMPLATE = ROOT / "tools" / "kansoku" / "render" / "templates" / "report.typ"
# each in a column that holds the word before the space but not the whole
SPLITS = ["CPU %idle", "13.53 %", "3 回", "8 ms"]


def keep_together_rule() -> str:
    """The template's show rule that makes the space before a unit unbreakable."""
    [rule] = [line for line in TEMPLATE.read_text(encoding="utf-8").splitlines()
              if line.startswith("#show regex(") and "%" in line]
    return rule


def narrow_pdf(tmp_path, rule: str):
    body = "\n".join(f"#context block(width: measure[{s.split()[0]}].width + 0.3em)[{s}]" for s in SPLITS)
    src = tmp_path / "narrow.typ"
    src.write_text(f'#set page(width: 60mm, height: auto, margin: 4mm)\n#set text(lang: "ja")\n{rule}\n{body}\n',
                   encoding="utf-8")
    out = tmp_path / "narrow.pdf"
    typst.compile(str(src), output=str(out))
    return out


def test_breaks_check_finds_a_unit_on_the_line_after_its_number_or_word(tmp_path):
    found = reader.broken_values(narrow_pdf(tmp_path, ""))
    for s in SPLITS:
        word, unit = s.split()
        assert any(re.search(rf"'{re.escape(word)}' / '{re.escape(unit)}", f) for f in found), (s, found)


def test_pdf_template_keeps_a_unit_with_its_number_or_word(tmp_path):
    pdf = narrow_pdf(tmp_path, keep_together_rule())
    assert reader.broken_values(pdf) == []
    printed = "".join(reader.text(pdf, layout=False).split())
    assert all("".join(s.split()) in printed for s in SPLITS), printed
