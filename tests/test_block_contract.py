"""The site and the PDF say the same in every table and comparison: each block of the example and of a past
report, rendered by Hugo (the built site's HTML) and by its typst template (the PDF's source), reads as the
same sequence of visible texts — caption, headers, cells with their marks, the lines printed under them,
legend lines, notes — in each language.

What only one output has is left out on purpose: on the site the links (CSV downloads, run links), the
spread switch and what it shows, the provenance panel; in the PDF the split of a wide table into parts and
the cut of a long one (both made larger than any table here, so that a table is one piece).
"""

from __future__ import annotations

import copy
import difflib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT, computed_report

REPORTS = ("example", "past-fy2013")
LANGS = ("ja", "en")
# what the site shows and the PDF does not (module docstring)
SITE_ONLY = {"provenance", "spread-toggle", "spread-switch", "cell-spread", "csv", "side-runs"}
VOID = {"input", "br", "img", "meta", "link", "hr", "wbr"}
INVISIBLE = re.compile(r"[\s\u00a0\u200b\u2060]+")


class _BlockText(HTMLParser):
    """The visible text of the element with id ``target``, site-only parts left out."""

    def __init__(self, target: str):
        super().__init__(convert_charrefs=True)
        self.target, self.depth, self.skip, self.out = target, 0, 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if not self.depth:
            if a.get("id") == self.target:
                self.depth = 1
            return
        if tag in VOID:
            return
        self.depth += 1
        if self.skip or SITE_ONLY & set((a.get("class") or "").split()):
            self.skip += 1

    def handle_endtag(self, tag):
        if not self.depth or tag in VOID:
            return
        self.depth -= 1
        if self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.out.append(data)


def html_text(page: str, element_id: str) -> str:
    p = _BlockText(element_id)
    p.feed(page)
    assert p.out, f"no element {element_id!r} on the page"
    return INVISIBLE.sub("", "".join(p.out))


TYPST_STRING = re.compile(r'(rgb\(|[\w-]+:\s*)?"((?:[^"\\]|\\.)*)"')


def typst_text(source: str) -> str:
    """The texts a typst block prints: its string literals in order (the templates place every value as
    one), without colours and named arguments (a font weight)."""
    out = [re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), s)
           for setting, s in TYPST_STRING.findall(source) if not setting]
    return INVISIBLE.sub("", "".join(out))


def first_difference(site: str, pdf: str) -> str:
    i = next((k for k, (a, b) in enumerate(zip(site, pdf)) if a != b), min(len(site), len(pdf)))
    return f"site …{site[max(0, i - 60):i + 60]}…\n pdf …{pdf[max(0, i - 60):i + 60]}…"


@pytest.fixture(scope="module")
def outputs(example_site, tmp_path_factory):
    """Per report: the computed report and the built site's pages by the block ids they hold."""
    db, public = example_site
    out = {}
    for rid in REPORTS:
        rep = computed_report(db, ROOT / "data" / "reports" / f"{rid}.toml")
        pages: dict[tuple[str, str], Path] = {}
        for lang in LANGS:
            for p in (public / lang / "reports" / rid).glob("*/index.html"):
                for block_id in re.findall(r'<figure class="kansoku-table[^"]*" id="([^"]+)"', p.read_text("utf-8")):
                    pages[(lang, block_id)] = p
        out[rid] = (rep, pages)
    return out


@pytest.fixture
def one_piece(monkeypatch):
    """Tables set in one piece (no parts, no cut): the contract is about what is said, not about paper."""
    from kansoku.render import blocks

    monkeypatch.setattr(blocks, "LANDSCAPE_WIDTH_PT", 10 ** 9)
    monkeypatch.setattr(blocks, "PDF_MAX_ROWS", 10 ** 9)


def blocks_of(rep) -> list[tuple[str, str, str | None, str]]:
    """(block, its argument, its chapter, its element id on the site) for every table and comparison."""
    out = [("tbl", t.id, ch.id, f"table-{t.id}") for ch in rep.chapters for t in ch.tables.values()]
    return out + [("compare", c.id, None, f"compare-{c.id}") for c in rep.compares]


def typst_source(rep, lang: str, tmp: Path, name: str, arg: str, chapter: str | None) -> str:
    from kansoku.render.typst import Document

    return Document(rep, lang, tmp).block(name, arg, chapter=chapter)


@pytest.mark.parametrize("rid", REPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_table_and_comparison_reads_the_same_on_the_site_and_in_the_pdf(outputs, one_piece, rid, lang,
                                                                               tmp_path):
    rep, pages = outputs[rid]
    checked = 0
    for name, arg, chapter, element in blocks_of(rep):
        page = pages.get((lang, element))
        if page is None:  # declared, not placed by the prose: neither output shows it
            continue
        site = html_text(page.read_text("utf-8"), element)
        pdf = typst_text(typst_source(rep, lang, tmp_path, name, arg, chapter))
        assert site == pdf, f"{rid} {lang} {element}:\n{first_difference(site, pdf)}"
        checked += 1
    assert checked >= (10 if rid == "example" else 5)


def _with_a_mark_dropped(rep):
    """The report with the first verdict mark of its tables' cells gone (a copy: the shared one stays whole)."""
    from kansoku.model import Cell

    rep = copy.copy(rep)
    rep.chapters = copy.deepcopy(rep.chapters)
    for ch in rep.chapters:
        for t in ch.tables.values():
            for row in t.rows:
                for i, c in enumerate(row):
                    if c.verdict:
                        row[i] = Cell(**{**c.__dict__, "verdict": None,
                                         "flags": [f for f in c.flags if f != c.verdict["kind"]]})
                        return rep, ch.id, t.id
    raise AssertionError("no verdict in the report")


@pytest.mark.parametrize("side", ["pdf", "site"])
def test_the_contract_fails_when_one_side_drops_a_mark(outputs, one_piece, side, tmp_path):
    """A deliberate mutation: one output loses a verdict's mark, and the two no longer read the same."""
    rep, pages = outputs["example"]
    mutated, chapter, table = _with_a_mark_dropped(rep)
    element = f"table-{table}"
    page = pages[("en", element)].read_text("utf-8")
    site = html_text(page, element)
    pdf = typst_text(typst_source(rep, "en", tmp_path, "tbl", table, chapter))
    assert site == pdf  # whole, they agree
    if side == "pdf":
        pdf = typst_text(typst_source(mutated, "en", tmp_path, "tbl", table, chapter))
    else:
        page = re.sub(r'<sup class="mark-verdict [^"]*"[^>]*>[^<]*</sup>', "", page, count=1)
        site = html_text(page, element)
    assert site != pdf
    changed = [op for op in difflib.SequenceMatcher(None, site, pdf).get_opcodes() if op[0] != "equal"]
    assert len(changed) == 1 and changed[0][0] in ("delete", "insert")  # only the mark
