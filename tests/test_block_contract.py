"""The site and the PDF say the same in every block: each table, comparison and figure of the example and of a
past report, each chapter's machines, figures not drawn and commands, and the report's authors, methods, key
results, environment appendix and data-sources summary, and the numbers and labels each page's prose prints
({{< val >}}, {{< ref >}}), rendered by Hugo (the built site's HTML) and
by its typst template (the PDF's source), reads as the same sequence of visible texts — caption, headers,
cells with their marks, the lines printed under them, legend lines, notes — in each language; and a chapter's
page places its blocks in the same order in both.

What only one output has is left out on purpose: on the site the links (CSV downloads, run links), the
spread switch and what it shows, the provenance panel, the chart's drawing and its data, the sources page's
list of every run and file; in the PDF the
split of a wide table into parts and the cut of a long one (both made larger than any table here, so that a
table is one piece), the exported chart's file, the appendix's opening paragraph giving the site's sources
page; in both a link's address. A command reads the same in both: the same lines, each but the last ending
with the shell's continuation (" \").
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT, computed_report

REPORTS = ("example", "past-fy2013")
LANGS = ("ja", "en")
# what the site shows and the PDF does not (module docstring)
SITE_ONLY = {"provenance", "spread-toggle", "spread-switch", "cell-spread", "csv", "side-runs", "chart",
             "chart-data"}
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


TYPST_STRING = re.compile(r'(rgb\(|image\(|link\(|[\w-]+:\s*)?"((?:[^"\\]|\\.)*)"')


def typst_text(source: str) -> str:
    """The texts a typst block prints: its string literals in order (the templates place every value as
    one), without colours, image files, link addresses and named arguments (a font weight, an image's
    alternative text)."""
    out = [re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), s)
           for setting, s in TYPST_STRING.findall(source) if not setting]
    return INVISIBLE.sub("", "".join(out))


def first_difference(site: str, pdf: str) -> str:
    i = next((k for k, (a, b) in enumerate(zip(site, pdf)) if a != b), min(len(site), len(pdf)))
    return f"site …{site[max(0, i - 60):i + 60]}…\n pdf …{pdf[max(0, i - 60):i + 60]}…"


# a block's element on a chapter's page: a table, comparison or figure (by its id), the chapter's machines, the
# chapter's figures not drawn
BLOCK_ELEMENT = re.compile(r'<(?:figure|section) class="[^"]*" id="((?:table|compare|figure)-[^"]+|chapter-machines'
                           r'|figures-not-drawn)"')
CHAPTER_BLOCKS = {"chapter-machines": "machines", "figures-not-drawn": "missing_figures"}


@pytest.fixture(scope="module")
def outputs(example_site, tmp_path_factory):
    """Per report: the computed report and the built site's pages by (language, block element): a table's,
    comparison's or figure's by its id, a chapter's own blocks by (their element id, the chapter)."""
    db, public = example_site
    out = {}
    for rid in REPORTS:
        rep = computed_report(db, ROOT / "data" / "reports" / f"{rid}.toml")
        pages: dict[tuple[str, str], Path] = {}
        for lang in LANGS:
            for p in (public / lang / "reports" / rid).glob("*/index.html"):
                for element in BLOCK_ELEMENT.findall(p.read_text("utf-8")):
                    pages[(lang, f"{element}@{p.parent.name}" if element in CHAPTER_BLOCKS else element)] = p
        out[rid] = (rep, pages)
    return out


@pytest.fixture
def one_piece(monkeypatch):
    """Tables set in one piece (no parts, no cut): the contract is about what is said, not about paper."""
    from kansoku.render import blocks

    monkeypatch.setattr(blocks, "LANDSCAPE_WIDTH_PT", 10 ** 9)
    monkeypatch.setattr(blocks, "PDF_MAX_ROWS", 10 ** 9)


def blocks_of(rep) -> list[tuple[str, str | None, str | None, str]]:
    """(block, its argument, its chapter, its key in ``outputs``) for every table, figure and comparison, and
    every chapter's machines and figures not drawn."""
    out = []
    for ch in rep.chapters:
        out += [("tbl", t.id, ch.id, f"table-{t.id}") for t in ch.tables.values()]
        out += [("fig", f.id, ch.id, f"figure-{f.id}") for f in ch.figures.values()]
        out += [(name, None, ch.id, f"{element}@{ch.id}") for element, name in CHAPTER_BLOCKS.items()]
    return out + [("compare", c.id, None, f"compare-{c.id}") for c in rep.compares]


def typst_source(rep, lang: str, tmp: Path, name: str, arg: str | None, chapter: str | None) -> str:
    from kansoku.render.typst import Document

    return Document(rep, lang, tmp).block(name, *([arg] if arg else []), chapter=chapter)


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("rid", REPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_block_reads_the_same_on_the_site_and_in_the_pdf(outputs, one_piece, rid, lang, tmp_path):
    rep, pages = outputs[rid]
    checked: dict[str, int] = {}
    for name, arg, chapter, key in blocks_of(rep):
        page = pages.get((lang, key))
        if page is None:  # declared, not placed by the prose (or a chapter without it): neither output shows it
            continue
        element = key.split("@")[0]
        site = html_text(page.read_text("utf-8"), element)
        pdf = typst_text(typst_source(rep, lang, tmp_path, name, arg, chapter))
        assert site == pdf, f"{rid} {lang} {key}:\n{first_difference(site, pdf)}"
        checked[name] = checked.get(name, 0) + 1
    assert checked.get("tbl", 0) >= (10 if rid == "example" else 5) and checked.get("fig")
    assert checked.get("machines" if rid == "example" else "missing_figures")


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


def site_sequence(page: str) -> list[str]:
    """The blocks a chapter's page of the site places, in order (their element ids)."""
    return BLOCK_ELEMENT.findall(page)


def pdf_sequence(rep, lang: str, tmp: Path, chapter) -> list[str]:
    """The blocks the PDF's page of ``chapter`` places, in order: where each block's typst source stands in
    the page's source (as element ids, the site's names)."""
    from kansoku.render.typst import Document
    from kansoku.render.views import CHAPTER_VIEWS

    doc = Document(rep, lang, tmp)
    source = doc.page(next(p for p in rep.pdf_pages if p.id == chapter.id))
    found = []
    for name, arg, ch, key in blocks_of(rep):
        if ch != chapter.id or (name in CHAPTER_VIEWS and CHAPTER_VIEWS[name](chapter, lang) is None):
            continue
        block = doc.block(name, *([arg] if arg else []), chapter=ch)
        if block in source:
            found.append((source.index(block), key.split("@")[0]))
    return [element for _, element in sorted(found)]


def chapter_pages(outputs, rid: str, lang: str):
    rep, pages = outputs[rid]
    for ch in rep.chapters:
        page = next((p for (lg, _), p in pages.items() if lg == lang and p.parent.name == ch.id), None)
        if page is not None and any(p.id == ch.id for p in rep.pdf_pages):
            yield rep, ch, page.read_text("utf-8")


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("rid", REPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_chapter_places_its_blocks_in_the_same_order_on_the_site_and_in_the_pdf(outputs, one_piece, rid,
                                                                                      lang, tmp_path):
    checked = 0
    for rep, ch, page in chapter_pages(outputs, rid, lang):
        site = site_sequence(page)
        assert site == pdf_sequence(rep, lang, tmp_path, ch), f"{rid} {lang} {ch.id}"
        checked += len(site) > 1
    assert checked


def test_the_contract_fails_when_the_pdf_places_a_chapter_block_elsewhere(outputs, one_piece, tmp_path,
                                                                          monkeypatch):
    """A deliberate mutation: the PDF walks the chapter's layout in another order than the site."""
    from kansoku.render import typst

    rep, ch, page = next((r, c, p) for r, c, p in chapter_pages(outputs, "example", "en")
                         if "chapter-machines" in site_sequence(p) and len(site_sequence(p)) > 1)
    assert site_sequence(page) == pdf_sequence(rep, "en", tmp_path, ch)
    monkeypatch.setattr(typst, "CHAPTER_LAYOUT", tuple(reversed(typst.CHAPTER_LAYOUT)))
    assert site_sequence(page) != pdf_sequence(rep, "en", tmp_path, ch)


# per block kind: one visible piece, dropped from the site's page, and a report that has the block
SITE_MUTATIONS = {
    "fig": (r'(<figcaption><span class="label">)[^<]*', "example"),
    "machines": (r'(<td class="num">)[^<]*', "example"),
    "missing_figures": (r"(<em>)[^<]*", "past-fy2013"),
}


@pytest.mark.parametrize("block", SITE_MUTATIONS)
def test_the_contract_fails_when_the_site_drops_a_text_of_a_block(outputs, one_piece, block, tmp_path):
    """A deliberate mutation: the site's figure loses its label, the machines block a run count, the list of
    figures not drawn a reason, and the two outputs no longer read the same."""
    pattern, rid = SITE_MUTATIONS[block]
    rep, pages = outputs[rid]
    name, arg, chapter, key = next(b for b in blocks_of(rep) if b[0] == block and ("en", b[3]) in pages)
    block_id = key.split("@")[0]
    page = pages[("en", key)].read_text("utf-8")
    pdf = typst_text(typst_source(rep, "en", tmp_path, name, arg, chapter))
    assert html_text(page, block_id) == pdf  # whole, they agree
    start = page.index(f'id="{block_id}"')
    mutated = page[:start] + re.sub(pattern, r"\1", page[start:], count=1)
    assert html_text(mutated, block_id) != pdf


# the report's own blocks and each chapter's commands: (block, its page, its element id on the site)
def report_blocks(rep) -> list[tuple[str, str | None, str]]:
    out = [("authors", "authors", "authors"), ("methods", "methods", "methods"), ("findings", None, "findings-block"),
           ("environment", "appendix", "environment")]
    return out + [("commands", ch.id, f"commands-{ch.id}") for ch in rep.chapters]


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("rid", REPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_the_report_blocks_and_commands_read_the_same_on_the_site_and_in_the_pdf(example_site, rid, lang,
                                                                                 tmp_path):
    from kansoku.render.typst import Document

    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / f"{rid}.toml")
    checked = set()
    for name, page, element in report_blocks(rep):
        path = public / lang / "reports" / rid / (f"{page}/index.html" if page else "index.html")
        if not path.is_file() or f'id="{element}"' not in (html := path.read_text("utf-8")):
            continue  # not placed by this report's prose (or a report without key results)
        source = Document(rep, lang, tmp_path).block(name, chapter=page if name == "commands" else None)
        pdf = typst_text(source)
        site = html_text(html, element)
        assert site == pdf, f"{rid} {lang} {name} {page}:\n{first_difference(site, pdf)}"
        checked.add(name)
    assert checked >= ({"authors", "methods", "findings", "commands", "environment"} if rid == "example"
                       else {"methods", "environment"})


def test_the_contract_fails_when_the_site_drops_a_command_line(example_site, tmp_path):
    """A deliberate mutation: a command's label gone from the site, and the two outputs no longer read alike."""
    from kansoku.render.typst import Document

    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / "example.toml")
    ch = next(c for c in rep.chapters if c.commands)
    html = (public / "en" / "reports" / "example" / ch.id / "index.html").read_text("utf-8")
    pdf = typst_text(Document(rep, "en", tmp_path).block("commands", chapter=ch.id))
    assert html_text(html, f"commands-{ch.id}") == pdf  # whole, they agree
    mutated = re.sub(r'(<p class="command-label">)[^<]*', r"\1", html, count=1)
    assert html_text(mutated, f"commands-{ch.id}") != pdf


def sources_texts(public: Path, rep, lang: str, tmp: Path) -> tuple[str, str]:
    """The data-sources summary as the site's sources page and the PDF's appendix read (the appendix from its
    first heading: the paragraph before it gives the site's page)."""
    from kansoku.render.typst import Document

    page = (public / lang / "reports" / rep.id / "sources" / "index.html").read_text("utf-8")
    source = Document(rep, lang, tmp).sources_appendix()
    return html_text(page, "sources-summary"), typst_text(source[source.index("#heading(level: 2"):])


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("rid", REPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_the_sources_summary_reads_the_same_on_the_site_and_in_the_pdf(example_site, rid, lang, tmp_path):
    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / f"{rid}.toml")
    site, pdf = sources_texts(public, rep, lang, tmp_path)
    assert site == pdf, f"{rid} {lang}:\n{first_difference(site, pdf)}"
    assert "R1" in site and (rid != "example" or "SHA256SUMS" in site)


@pytest.mark.parametrize("side", ["pdf", "site"])
def test_the_contract_fails_when_one_side_drops_a_source(example_site, side, tmp_path, monkeypatch):
    """A deliberate mutation: one output loses a condition's row of the summary, and the two no longer read
    the same."""
    from kansoku.render import blocks, views

    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / "example.toml")
    page = public / "en" / "reports" / "example" / "sources" / "index.html"
    site, pdf = sources_texts(public, rep, "en", tmp_path)
    assert site == pdf  # whole, they agree
    if side == "pdf":
        def fewer(*args):
            view = views.sources_view(*args)
            return dataclasses.replace(view, runs=view.runs[1:])

        monkeypatch.setattr(blocks, "sources_view", fewer)
        _, pdf = sources_texts(public, rep, "en", tmp_path)
    else:
        html = page.read_text("utf-8")
        start = html.index('class="plain sources-conditions"')
        mutated = html[:start] + re.sub(r"<tr><td>[^<]*</td>", "<tr><td></td>", html[start:], count=1)
        site = html_text(mutated, "sources-summary")
    assert site != pdf


PDF_INLINE = re.compile(r'`+ ?(#"(?:[^"\\]|\\.)*") ?`+\{=typst\}')
SITE_INLINE = re.compile(r'<a class="(?:bound-value|item-ref)"[^>]*>([^<]*)</a>')


def inline_values(public: Path, rep, lang: str, tmp: Path):
    """Per page of the report in both outputs: the numbers and labels its prose prints ({{< val >}},
    {{< ref >}}) in order, as the site's page shows them and as the PDF's page sets them."""
    import html

    from kansoku.render.typst import Document

    doc = Document(rep, lang, tmp)
    for p in rep.pdf_pages:
        page = public / lang / "reports" / rep.id / p.id / "index.html"
        if page.is_file():
            site = [INVISIBLE.sub("", html.unescape(t)) for t in SITE_INLINE.findall(page.read_text("utf-8"))]
            pdf = [typst_text(s) for s in PDF_INLINE.findall(doc.page_prose(p))]
            yield p.id, site, pdf


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("rid", REPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_value_of_the_prose_reads_the_same_on_the_site_and_in_the_pdf(example_site, rid, lang, tmp_path):
    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / f"{rid}.toml")
    checked = 0
    for page, site, pdf in inline_values(public, rep, lang, tmp_path):
        assert site == pdf, f"{rid} {lang} {page}"
        checked += len(site)
    assert checked >= (100 if rid == "example" else 1)


def test_the_contract_fails_when_the_site_prints_another_value(example_site, tmp_path):
    """A deliberate mutation: one number of a page's prose changed on the site, and the lists differ."""
    import html as html_lib

    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / "example.toml")
    page, site, pdf = next(x for x in inline_values(public, rep, "en", tmp_path) if x[1])
    assert site == pdf
    html = (public / "en" / "reports" / "example" / page / "index.html").read_text("utf-8")
    mutated = SITE_INLINE.sub(lambda m: m.group(0).replace(f">{m.group(1)}<", ">0<"), html, count=1)
    changed = [INVISIBLE.sub("", html_lib.unescape(t)) for t in SITE_INLINE.findall(mutated)]
    assert changed != pdf and sum(a != b for a, b in zip(changed, pdf)) == 1
