"""The page blocks (render/blocks.py): each has its Hugo template and its typst template, the PDF's typst is
written by templates only, prose pages' shortcodes are parsed in one place, the verdict marks spelled once."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from kansoku import shortcodes
from kansoku.render.blocks import BLOCKS
from kansoku.render.typst_markup import TEMPLATES_DIR

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "tools" / "kansoku"


def test_every_block_has_a_hugo_and_a_typst_template():
    assert {"tbl", "fig", "commands", "environment", "methods", "sources", "compare", "authors"} <= set(BLOCKS)
    for name, b in BLOCKS.items():
        assert (ROOT / b.hugo).is_file(), f"block {name}: no Hugo template {b.hugo}"
        assert (TEMPLATES_DIR / b.typst).is_file(), f"block {name}: no typst template {b.typst}"


def test_no_template_looks_up_a_page_of_a_report():
    """A page links the pages of its report by the addresses in the report's data (layouts/partials/page-url.html,
    report-links.html), never by ``site.GetPage``: under kansoku serve Hugo renders again every page that looked
    up a page being edited (all of a report's run pages, after an edit of its cover). Only a comparison looks up
    a run page, to link it when it was made."""
    looked_up = []
    for f in sorted((ROOT / "layouts").rglob("*.html")):
        for m in re.finditer(r'GetPage\s*\(?\s*(?:printf\s*)?"([^"]*)"', f.read_text(encoding="utf-8")):
            if m.group(1).startswith("/reports/") and m.group(1) != "/reports/%s/runs/%s":
                looked_up.append(f"{f.relative_to(ROOT)}: {m.group(0)}")
    assert not looked_up, looked_up


def test_a_run_page_reads_only_the_words_its_partial_looks_up():
    """layouts/partials/run-words.html looks a run page's words up once a language; a word the page reads
    (``$w.key``) that the partial does not list would print nothing. Every key listed is in every language."""
    import tomllib

    page = (ROOT / "layouts" / "runs" / "single.html").read_text(encoding="utf-8")
    partial = (ROOT / "layouts" / "partials" / "run-words.html").read_text(encoding="utf-8")
    listed = set(re.findall(r'"([a-z0-9_]+)"', partial.split("range slice", 1)[1].split("}}", 1)[0]))
    read = set(re.findall(r"\$w\.([A-Za-z0-9_]+)", page))
    assert read and read <= listed, sorted(read - listed)
    assert not re.search(r'i18n "[a-z0-9_]+" \}\}', page)  # a plain word of the page is read from $w
    for lang in ("ja", "en"):
        words = tomllib.loads((ROOT / "i18n" / f"{lang}.toml").read_text(encoding="utf-8"))
        assert listed <= set(words), (lang, sorted(listed - set(words)))


def test_every_shortcode_of_the_site_is_a_block_and_every_typst_template_is_used():
    hugo = {p.stem for p in (ROOT / "layouts" / "shortcodes").glob("*.html")}
    placed = {n for n, b in BLOCKS.items() if b.shortcode}
    assert hugo == placed, f"shortcodes without a typst template: {hugo - placed}; blocks without a shortcode: " \
                           f"{placed - hugo}"
    typst = {p.name.removesuffix(".typ.j2") for p in (TEMPLATES_DIR / "blocks").glob("*.typ.j2")}
    assert typst == set(BLOCKS)


TYPST_CODE = re.compile(r"#(?:[a-z][\w-]*(?:\.[\w-]+)*[\[(]|super\b|strong\b|linebreak\b)|\btable\.(?:cell|header)\(")


def _literals(path: Path):
    src = path.read_text(encoding="utf-8")
    docstrings = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(first.lineno)
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.STRING and tok.start[0] not in docstrings:
            yield tok.start[0], tok.string


def test_no_typst_is_written_in_python():
    """The renderers place values into templates; no Python string holds typst code."""
    offenders = [f"{p.relative_to(ROOT)}:{line}: {text[:60]}"
                 for p in (PKG / "render").glob("*.py") for line, text in _literals(p) if TYPST_CODE.search(text)]
    assert offenders == []


def test_the_verdict_marks_are_spelled_once():
    places = [str(p.relative_to(ROOT)) for base in ("tools", "layouts", "i18n", "static/js")
              for p in (ROOT / base).rglob("*") if p.is_file() and p.suffix in (".py", ".html", ".j2", ".typ", ".toml", ".js")
              and "vendor" not in p.parts and "✓" in p.read_text(encoding="utf-8", errors="replace")]
    assert places == ["tools/kansoku/model.py"]


@pytest.mark.parametrize("body, expected", [
    ('a {{< tbl "t1" >}} b', [("tbl", ("t1",), 1)]),
    ('x\n\n{{% fig `f 1` %}}\n', [("fig", ("f 1",), 3)]),
    ('{{< compare "c" >}}{{< methods >}}', [("compare", ("c",), 1), ("methods", (), 1)]),
])
def test_shortcodes_are_parsed_once_for_every_reader(body, expected):
    assert [(s.name, s.args, s.line) for s in shortcodes.parse(body)] == expected


def test_an_escaped_shortcode_prints_itself():
    assert shortcodes.expand('see {{</* tbl "x" */>}}', lambda sc: "BLOCK") == 'see {{< tbl "x" >}}'
    assert shortcodes.expand('see {{< tbl "x" >}}.', lambda sc: f"[{sc.name}:{sc.args[0]}]") == "see [tbl:x]."


@pytest.mark.parametrize("spec_url, base, printed, warned", [
    (None, "https://reports.example.org/", "https://reports.example.org/", None),
    (None, "/", None, "prints no web address"),
    ("http://127.0.0.1:1313/", "/", "http://127.0.0.1:1313/", "a local address"),
    ("https://a.example/", "https://b.example/", "https://a.example/", None),
    (None, "http://localhost:1313/", "http://localhost:1313/", "a local address"),
])
def test_the_pdf_prints_the_sites_address_and_says_when_it_is_local(spec_url, base, printed, warned):
    from types import SimpleNamespace

    from kansoku.app.build import site_address

    rep, said = SimpleNamespace(id="r", site_url=spec_url), []
    site_address(rep, {"baseURL": base}, said.append)
    assert rep.site_url == printed
    assert (warned is None and said == []) or (len(said) == 1 and warned in said[0]), said


@pytest.mark.parametrize("site_url, printed", [
    ("https://reports.example.org/", "https://reports.example.org/en/reports/r/sources/"),
    ("http://127.0.0.1:1313/", "/en/reports/r/sources/"),
    (None, "/en/reports/r/sources/"),
])
def test_the_pdf_prints_an_address_only_of_a_public_site(site_url, printed):
    """A local preview's address opens nowhere for a reader: a local build's PDF prints the path within the site."""
    from types import SimpleNamespace

    from kansoku.render.typst import Document

    doc = SimpleNamespace(rep=SimpleNamespace(site_url=site_url))
    assert Document.site_link(doc, "en/reports/r/sources/") == printed


@pytest.mark.parametrize("url, local", [("http://127.0.0.1:1313/", True), ("http://localhost:1313/", True),
                                        ("https://reports.example.org/", False), (None, False)])
def test_a_local_address_is_not_printed_as_the_web_edition(url, local):
    """The PDF's front matter prints the web edition's address, or says that it comes from a local build."""
    from kansoku.model import is_local_address

    assert is_local_address(url) is local


@pytest.mark.parametrize("command", [
    "$ pgbench -n -h 127.0.0.1 -p 5433 -U postgres -c [Clients] -j [Threads] -T 30 -P 1 -r -M prepared "
    "-f scripts/update.sql -s 10 [-l --sampling-rate=0.02] bench_update",
    "$ python3 ../../../tools/collect queries --conninfo 'host=127.0.0.1 port=5433 user=postgres "
    "dbname=bench_query' --set [設定] --mode timing,explain --order random --seed [シード] queries/parallel.sql",
])
def test_a_long_command_breaks_only_between_arguments_with_continuations(command):
    from kansoku.render.views import command_lines

    lines = command_lines(command, columns=60)
    assert len(lines) > 1 and all(x.endswith(" \\") for x in lines[:-1])
    assert " ".join(x[:-2] if x.endswith(" \\") else x for x in lines) == command
    starts = [x.split(" ")[0] for x in lines[1:]]
    assert not any(s in ("scripts/update.sql", "10", "dbname=bench_query'", "prepared") for s in starts)
