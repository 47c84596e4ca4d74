"""The PDF as a reader sees it: tools/pdf REPORT --lang all for every report spec, then pdftotext,
pdffonts, pdfimages and pdftoppm on the result, checked against the site's own data
(generated/data/reports/<id>.json written by tools/build from the same database).

Every PDF is built once per test session (one tools/pdf run per report, both languages in it:
conftest.example_pdfs_all); the module is marked slow (the README's quick run skips it, CI runs it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_tool

SPECS = sorted(p.stem for p in (ROOT / "data" / "reports").glob("*.toml"))
LANGS = ("ja", "en")
TOC = {"ja": "目次", "en": "Contents"}
NBSP = "\u00a0"

pytestmark = [pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils not installed"),
              pytest.mark.slow]


@pytest.fixture(scope="module")
def built(example_pdfs_all, example_site):
    """{report id: {lang: pdf}} for every spec in data/reports (built once per session: conftest), and the
    site's JSON per report."""
    db, _ = example_site
    site = {rid: json.loads((db.parent / "generated" / "data" / "reports" / f"{rid}.json").read_text("utf-8"))
            for rid in SPECS}
    return {rid: example_pdfs_all[rid] for rid in SPECS}, site, db


def pages_text(pdf: Path, layout: bool = True) -> list[str]:
    """The text of each page (pdftotext separates pages with form feeds)."""
    args = ["pdftotext"] + (["-layout"] if layout else []) + [str(pdf), "-"]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    # typst puts a word joiner before a contents entry's page number; soft breaks are zero-width spaces
    return [p.replace(NBSP, " ").replace("\u2060", "").replace("\u200b", "") for p in text.split("\f")[:-1]]


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace(NBSP, " ")).strip()


def flat(s: str) -> str:
    """Without any white space: typst spaces Japanese from Latin (pdftotext reads that as a space) and
    wraps lines anywhere in Japanese text."""
    return re.sub(r"\s+", "", s.replace(NBSP, " "))


def ui(lang: str) -> dict:
    import tomllib

    with open(ROOT / "i18n" / f"{lang}.toml", "rb") as fh:
        return {k: v.get("other") for k, v in tomllib.load(fh).items()}


# -- structure: title page, front matter, contents, pages in the site's order ----------------------------

@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_title_page_front_matter_and_contents(built, rid, lang):
    pdfs, site, _ = built
    rep = site[rid]
    pages = pages_text(pdfs[rid][lang])
    assert flat(rep["title"][lang]) in flat(pages[0]), "title page shows the report title"
    assert rep["revision"] in pages[0]
    s = ui(lang)
    front = flat(pages[1])
    assert flat(s["revision_history"]) in front and flat(s["license"]) in front
    if rep.get("license"):
        assert flat(rep["license"][lang]) in front
    assert flat(rep["copyright"]) in front
    toc_page = next(i for i, p in enumerate(pages) if re.search(rf"^\s*{TOC[lang]}\s*$", p, re.M))
    assert toc_page <= 3, "the contents come right after the front matter"
    # the contents may run over more than one page (the example's five chapters with their sections do)
    plain = pages_text(pdfs[rid][lang], layout=False)
    end = toc_page + 1
    while end < len(plain) and re.search(r"(\. ){5,}", plain[end]) and not re.search(TOC[lang], plain[end]):
        end += 1
    toc = flat(" ".join(plain[toc_page:end]))
    # every page of the site that the PDF carries, in the same order, with the page it starts on
    expected = [p for p in rep["pages"] if p["in_pdf"]]
    assert [p["id"] for p in rep["pages"] if not p["in_pdf"]] == ["sources"]
    pos = 0
    for p in expected:
        label = (f"{p['number']}. " if p["kind"] == "chapter" else "") + p["title"][lang]
        m = re.search(re.escape(flat(label)) + r"\.*(\d+)", toc[pos:])
        assert m, f"contents of {rid}.{lang}: {label!r} missing or out of order"
        pos += m.end()
        start = int(m.group(1))
        heading_zone = flat(" ".join(pages[start - 1].splitlines()[:6]))
        assert flat(label) in heading_zone, f"{label!r} does not start on page {start}"


@pytest.mark.parametrize("lang", LANGS)
def test_chapters_keep_their_sections(built, lang):
    pdfs, _, _ = built
    text = "\n".join(pages_text(pdfs["example"][lang], layout=False))
    src = (ROOT / "content" / "reports" / "example" / f"scaleup.{lang}.md").read_text("utf-8")
    sections = re.findall(r"^##\s+(.+)$", src, re.M)
    assert len(sections) >= 4
    pos = text.index(f"1. {'スケールアップ' if lang == 'ja' else 'Scale-up'}")
    for sec in sections:
        i = text.find(sec, pos)
        assert i > 0, f"section {sec!r} missing or out of order"
        pos = i


# -- tables and figures: same numbering, captions and numbers as the site -----------------------------------

@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_table_and_figure_numbered_and_in_order(built, rid, lang):
    pdfs, site, _ = built
    text = flat("\n".join(pages_text(pdfs[rid][lang])))
    for ch in site[rid]["chapters"]:
        for item in [*ch["tables"].values(), *ch["figures"].values()]:
            cap = flat(f"{item['label'][lang]} {item['caption'][lang]}")
            assert cap in text, f"{rid}.{lang}: {cap!r} missing"
    # labels in reading order per chapter: 表 1.1 before 表 1.2 ... (a label with its caption: the summary at
    # the front of a report may mention a table in its prose)
    for ch in site[rid]["chapters"]:
        labels = [f"{t['label'][lang]} {t['caption'][lang]}" for t in ch["tables"].values()]
        found = [next((m.start() for m in re.finditer(re.escape(flat(lab)), text)), -1) for lab in labels]
        assert all(f >= 0 for f in found) and found == sorted(found), (rid, lang, labels, found)


def raw_text(pdf: Path) -> str:
    """pdftotext -raw (content order: a typst table row by row), white space collapsed."""
    text = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    return re.sub(r"\s+", " ", text.replace(NBSP, " ").replace("\u200b", "").replace("\u2060", ""))


def loose(v: str) -> str:
    """A pattern for v that allows a space anywhere (typst spaces Japanese from Latin: '1台' reads '1 台')."""
    return " ?".join(re.escape(ch) for ch in flat(v))


@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_table_rows_have_the_sites_numbers(built, rid, lang):
    """Each row of each table reads, left to right after its caption, the same rounded numbers as the
    site's JSON, each transcribed value with its † and each mismatch with its !."""
    pdfs, site, _ = built
    text = raw_text(pdfs[rid][lang])
    checked = 0
    for ch in site[rid]["chapters"]:
        for t in ch["tables"].values():
            view = t["view"][lang]  # what the site shows (render/views.py)
            # the caption line (typst may wrap it or space Japanese from Latin: match its label and start)
            cap = loose(view["label"]) + r" ?" + loose(view["caption"][:6])
            at = re.search(cap, text).start()
            for row in view["rows"]:
                parts = []
                for c in row["cells"]:
                    v = squash(c["text"])
                    if c["header"]:
                        parts.append(loose(v) + (" ?" + loose(c["baseline"]) if c["baseline"] else ""))
                    elif v:
                        mark = "".join(m["symbol"] for m in c["marks"])
                        notes = "".join(f"({n})" for n in c["notes"])  # cell_notes marks follow
                        # a range printed under the value (spec spread = "range")
                        spread = r"(?: ?\[[^\]]*\])?" if any(not x["on_demand"] for x in c["lines"]) else ""
                        parts.append(loose(v) + re.escape(mark) + re.escape(notes) + r"(?![\d.†!✓✗≈?])" + spread)
                m = re.compile(r"(?<![\d.])" + r" ".join(parts)).search(text, at)
                assert m, f"{rid}.{lang} {view['label']}: row {[c['text'] for c in row['cells']]} not found"
                at = m.end()  # rows in order
                checked += 1
    assert checked > 0


def test_example_numbers_against_compute_report(built, example_site):
    """A few numbers straight from the computed report (not the site's JSON) appear in both PDFs."""
    from kansoku.app import compute_one

    db, _ = example_site
    rep = compute_one(db, ROOT / "data" / "reports" / "example.toml", ROOT / "content" / "reports")
    t = rep.chapters[0].tables["read-tps"]
    vals = [c.text["en"] for row in t.rows for c in row if c.kind == "value"]
    assert len(vals) >= 8
    pdfs, _, _ = built
    for lang in LANGS:
        text = flat("\n".join(pages_text(pdfs["example"][lang])))
        for v in vals:
            assert flat(v) in text, (lang, v)


@pytest.mark.parametrize("lang", LANGS)
def test_transcribed_and_mismatch_marks_with_legend(built, lang):
    pdfs, site, _ = built
    s = ui(lang)
    rep = site["past-fy2013"]
    # content order (-raw): -layout may set a superscript † on a line of its own (FY2013 表 4.5, en)
    text = flat(raw_text(pdfs["past-fy2013"][lang]))
    marked = {"transcribed": 0, "mismatch": 0}
    for ch in rep["chapters"]:
        for t in ch["tables"].values():
            for row in t["view"][lang]["rows"]:
                for c in row["cells"]:
                    kinds = [m["kind"] for m in c["marks"]]
                    if c["header"] or not ({"transcribed", "mismatch"} & set(kinds)):
                        continue
                    marks = "".join(m["symbol"] for m in c["marks"])
                    assert re.search(re.escape(flat(c["text"]) + marks), text), (c["text"], marks)
                    marked["mismatch" if "mismatch" in kinds else "transcribed"] += 1
    assert marked["transcribed"] > 20 and marked["mismatch"] >= 1
    assert f"†{flat(s['transcribed'])}" in text
    assert f"!{flat(s['mismatch'])}" in text
    # the example report has measured values only: no marks, no legend
    ex = flat("\n".join(pages_text(pdfs["example"][lang])))
    assert f"†{flat(s['transcribed'])}" not in ex


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_marks_the_baseline_condition(built, lang):
    pdfs, _, _ = built
    text = flat("\n".join(pages_text(pdfs["example"][lang])))
    assert flat(f"{'チェックサム無効' if lang == 'ja' else 'checksums off'} ({ui(lang)['baseline']})") in text


def test_charts_are_vector_and_in_the_languages_labels(built):
    pdfs, site, _ = built
    for rid in SPECS:
        for lang in LANGS:
            pdf = pdfs[rid][lang]
            listing = subprocess.run(["pdfimages", "-list", str(pdf)], check=True, capture_output=True,
                                     text=True).stdout.splitlines()[2:]
            assert listing == [], f"{pdf.name}: raster images in the PDF: {listing[:3]}"
    # axis titles of the first figure, in each language, are text in the PDF (SVG text kept as glyphs)
    fig = site["example"]["chapters"][0]["figures"]["read-tps"]["figure"]
    for lang in LANGS:
        text = flat("\n".join(pages_text(pdfs["example"][lang])))
        xt = fig[lang]["layout"]["xaxis"]["title"]
        xt = xt["text"] if isinstance(xt, dict) else xt
        assert flat(xt) in text, (lang, xt)


# -- print furniture: page numbers, header, footer, fonts --------------------------------------------------

@pytest.mark.parametrize("rid", SPECS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_page_has_its_number_and_the_copyright_footer(built, rid, lang):
    pdfs, site, _ = built
    rep = site[rid]
    pages = pages_text(pdfs[rid][lang])
    assert len(pages) >= 5
    title = flat(rep["title"][lang])
    for i, p in enumerate(pages, start=1):
        lines = [ln for ln in p.splitlines() if ln.strip()]
        last = lines[-1]
        assert re.search(rf"\s{i}\s*$", last), f"{rid}.{lang} page {i}: footer {last!r}"
        assert flat(rep["copyright"]) in flat(last)
        if i > 1:
            assert flat(lines[0]).startswith(title[:20]), f"page {i}: header {lines[0]!r}"


@pytest.mark.parametrize("lang", LANGS)
def test_fonts_embedded_japanese_and_latin(built, lang):
    pdfs, _, _ = built
    for rid in SPECS:
        out = subprocess.run(["pdffonts", str(pdfs[rid][lang])], check=True, capture_output=True, text=True).stdout
        rows = out.splitlines()[2:]
        assert rows
        for row in rows:
            cols = row.split()
            assert cols[-5] == "yes", f"{rid}.{lang}: font not embedded: {row}"
        names = " ".join(r.split()[0] for r in rows)
        if lang == "ja":
            assert "IPAexMincho" in names or "NotoSerifCJK" in names
        else:
            assert "Libertinus" in names or "LiberationSerif" in names, names


def test_japanese_text_is_whole_and_broken_properly(built):
    pdfs, site, _ = built
    text = "\n".join(pages_text(pdfs["example"]["ja"], layout=False))
    assert "\ufffd" not in text
    # line starts never carry closing punctuation (kinsoku); Japanese lines are not cut inside a word by spaces
    bad = [ln for ln in text.splitlines() if ln and ln[0] in "、。）」』"]
    assert not bad, bad[:3]
    src = (ROOT / "content" / "reports" / "example" / "scaleup.ja.md").read_text("utf-8")
    sentence = "クライアント数を増やしたときに"
    if sentence in src:
        assert sentence in text.replace("\n", "")


def test_japanese_line_breaks_in_the_source_are_not_spaces(built):
    """A line break inside a Japanese paragraph of the Markdown is no space in the PDF ('求めた。1 秒…'),
    while list items, fences and Latin line breaks stay as they are."""
    from kansoku.render.typst import join_cjk_lines

    assert join_cjk_lines("求めた。\n1 秒ごと\n- 項目\n\n```\nコード\nです\n```\nabc\ndef\n") == \
        "求めた。1 秒ごと\n- 項目\n\n```\nコード\nです\n```\nabc\ndef\n"
    assert join_cjk_lines("値。\n1. 次\n2. その次") == "値。\n1. 次\n2. その次"
    text = "\n".join(pages_text(built[0]["example"]["ja"], layout=False))
    # (a figure's caption wrapped in the sources appendix sits beside its run count, "18 実行", in the next column:
    # the text extraction puts them on one line with a space; that is no space inside a sentence)
    found = re.findall(r".{10}[。、] (?!\d+ 実行)\S.{5}", text)
    assert not found, found[:3]


def test_pages_render_to_png(built, tmp_path):
    """Every page rasterises (a broken page would fail here); the PNGs are there to look at."""
    pdf = built[0]["example"]["ja"]
    subprocess.run(["pdftoppm", "-r", "20", "-png", str(pdf), str(tmp_path / "p")], check=True)
    pngs = sorted(tmp_path.glob("p-*.png"))
    assert len(pngs) == len(pages_text(pdf))
    assert all(p.stat().st_size > 500 for p in pngs)


# -- appendix, authors -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_environment_appendix_and_authors(built, lang):
    pdfs, site, _ = built
    rep = site["example"]
    s = ui(lang)
    text = flat("\n".join(pages_text(pdfs["example"][lang], layout=False)))
    env = rep["views"]["environment"][lang]
    assert env["none"] is None and env["versions"] and env["settings"]
    for key in ("env_hardware", "env_software", "env_settings"):
        assert flat(s[key]) in text
    for row in env["versions"] + env["settings"]:
        assert flat(row["label"]) in text and flat(row["cells"][0][0]["text"]) in text
    authors = rep["views"]["authors"][lang]["rows"]
    assert authors
    for a in authors:
        assert flat(a[0]) in text
    # past reports measured nothing: the appendix says so and shows the environment their sources state
    past = flat("\n".join(pages_text(pdfs["past-fy2013"][lang], layout=False)))
    assert flat(s["env_none_measured"]) in past and flat(s["env_transcribed"]) in past


# -- errors a user can act on --------------------------------------------------------------------------------------

def _py_only_path(tmp_path: Path) -> dict:
    """A PATH holding python3 only (no chromium): tools/pdf starts, chromium is not found."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    return {"PATH": str(bindir)}


def test_missing_chromium_says_what_to_install(example_site, tmp_path):
    db, _ = example_site
    proc = run_tool("pdf", "example", "--lang", "ja", "--db", db, "--out", tmp_path / "x.pdf",
                    env=_py_only_path(tmp_path))
    assert proc.returncode == 5, proc.stderr
    assert "chromium" in proc.stderr and "apt-get install chromium" in proc.stderr
    assert not (tmp_path / "x.pdf").exists()


def test_missing_japanese_font_says_what_to_install(example_site, tmp_path):
    db, _ = example_site
    empty = tmp_path / "fonts"
    empty.mkdir()
    proc = run_tool("pdf", "example", "--lang", "ja", "--db", db, "--out", tmp_path / "x.pdf",
                    env={"KANSOKU_FONT_DIRS": str(empty)})
    assert proc.returncode == 5, proc.stderr
    assert "Japanese font" in proc.stderr and "fonts-ipaexfont" in proc.stderr and str(empty) in proc.stderr
    # the English example holds no Japanese text: typst's own Latin fonts and DejaVu suffice
    dejavu = Path("/usr/share/fonts/truetype/dejavu")
    if dejavu.is_dir():
        ok = run_tool("pdf", "past-fy2013", "--lang", "en", "--db", db, "--out", tmp_path / "y.pdf",
                      env={"KANSOKU_FONT_DIRS": str(dejavu)})
        assert ok.returncode == 5 and "Japanese font" in ok.stderr, "its citations are Japanese"


@pytest.fixture
def doc_factory(built, tmp_path):
    """A Document over a copy of the example's content (to break it), computed from the example's store."""
    from kansoku.app import compute_one
    from kansoku.render.typst import Document

    db = built[2]
    content = tmp_path / "content"
    shutil.copytree(ROOT / "content" / "reports" / "example", content / "example")

    def make(lang: str):
        rep = compute_one(db, ROOT / "data" / "reports" / "example.toml", content)
        return Document(rep, lang, tmp_path), rep.pdf_pages

    return make, content


def test_unknown_shortcode_names_page_and_line(doc_factory):
    from kansoku.errors import KansokuError

    make, content = doc_factory
    page = content / "example" / "closing.en.md"
    lines = page.read_text("utf-8").splitlines()
    lines.insert(len(lines), "Some text {{< gallery \"x\" >}} more.")
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc, pages = make("en")
    with pytest.raises(KansokuError) as exc:
        doc.markdown(pages)
    msg = str(exc.value)
    assert f"closing.en.md:{len(lines)}" in msg and "gallery" in msg and "tbl, fig, authors, environment" in msg


def test_table_not_in_chapter_names_page_and_line(doc_factory):
    from kansoku.errors import KansokuError

    make, content = doc_factory
    page = content / "example" / "disk.ja.md"
    text = page.read_text("utf-8") + "\n{{< tbl \"read-tps\" >}}\n"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(KansokuError) as exc:  # found with the pages (spec error, exit 3), else by the markdown
        doc, pages = make("ja")
        doc.markdown(pages)
    assert f"disk.ja.md:{text.count(chr(10))}" in str(exc.value) and "'read-tps'" in str(exc.value)


def test_missing_translation_shows_the_other_text_with_a_notice(doc_factory):
    make, content = doc_factory
    (content / "example" / "scaleup.en.md").unlink()
    (content / "example" / "closing.en.md").unlink()
    (content / "example" / "closing.ja.md").unlink()
    doc, pages = make("en")
    md = doc.markdown(pages)
    s = ui("en")
    assert s["translation_missing_from_ja"] in md
    assert "## 目的" in md  # the Japanese prose, never an empty chapter
    assert '{=typst}' in md and "Table 1.1" in md
    assert "closing" not in [p.id for p in pages]  # no prose in any language: left out, as on the site


def test_escaped_shortcode_is_printed_verbatim(doc_factory):
    make, content = doc_factory
    page = content / "example" / "closing.en.md"
    page.write_text(page.read_text("utf-8") + "\nWrite {{</* tbl \"id\" */>}} in a page.\n", encoding="utf-8")
    doc, pages = make("en")
    assert '{{< tbl "id" >}}' in doc.markdown(pages)


def test_a_heading_before_a_landscape_table_page_moves_onto_that_page():
    """A wide table gets a landscape page of its own; the section heading just before it goes with it, never
    left as the last line of the portrait page."""
    from kansoku.render.typst import heading_onto_landscape_page

    typ = "text\n== Results\n<results-12>\n#page(flipped: true)[\n#data-table()\n]\n== Discussion\nmore\n"
    assert heading_onto_landscape_page(typ) == (
        "text\n#page(flipped: true)[\n== Results\n<results-12>\n#data-table()\n]\n== Discussion\nmore\n")
    kept = "text\n== Results\nA paragraph.\n#page(flipped: true)[\n#data-table()\n]\n"
    assert heading_onto_landscape_page(kept) == kept  # only a heading right before the page moves
