"""The documented interfaces match the code."""

from __future__ import annotations

import re

from conftest import ROOT


def test_database_doc_is_current():
    from kansoku.store.schema_doc import render

    assert (ROOT / "docs" / "database.md").read_text(encoding="utf-8") == render(), (
        "docs/database.md is out of date: cd tools && python -m kansoku.store.schema_doc > ../docs/database.md")


def test_cli_reference_is_current():
    from kansoku import cli_docs

    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert cli_docs.page(page) == page, "docs/cli.md is out of date: cd tools && python3 -m kansoku.cli_docs"


def test_cli_reference_follows_the_parsers(monkeypatch):
    """The reference is each command's own parser: an option added to one appears in it, under its command."""
    import argparse

    from kansoku import cli, cli_docs

    def probe_main(argv, prog):
        ap = argparse.ArgumentParser(prog=prog, description="a command made for this test")
        ap.add_argument("--depth", metavar="N", help="how deep the probe goes")
        ap.parse_args(argv)
        return 0

    monkeypatch.setitem(cli.COMMANDS, "probe", (probe_main, "probe the reference"))
    text = cli_docs.render()
    assert "| [`kansoku probe`](#kansoku-probe) | probe the reference |" in text
    section = text.split("### kansoku probe\n", 1)[1].split("\n### ", 1)[0]
    assert "usage: kansoku probe [-h] [--depth N]" in section and "how deep the probe goes" in section


def test_readme_starts_with_the_setup_commands_and_stays_short():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1).splitlines()
    assert first_block[0].startswith("bash .ci/setup && tools/example")
    assert first_block[1].startswith("bash .ci/setup && python3 -m pytest -q")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash .ci/setup && python3 -m pytest -q" in ci
    # CI runs every test (the quick run skips the PDF renders and browser tests); the README says so
    assert "python3 -m pytest -q --all" in ci and "python3 -m pytest -q --all" in first_block[2]
    # a README, not the manual: the manual is docs/, reached from its index
    assert len(readme.splitlines()) <= 200 and "(docs/README.md)" in readme


def test_readme_screenshot_is_small():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", readme)
    assert images, "the README shows a report page"
    for image in images:
        assert (ROOT / image).stat().st_size < 200_000, image


def test_the_store_guide_names_the_core_tables():
    guide = (ROOT / "docs" / "howto.md").read_text(encoding="utf-8")
    for name in ("runs", "run_factors", "sources", "run_metrics", "pgbench_summary"):
        assert f"`{name}`" in guide


def test_every_chart_kind_is_documented():
    from kansoku.analysis import figures

    docs = (ROOT / "docs" / "charts.md").read_text(encoding="utf-8") + (ROOT / "docs" / "spec.md").read_text(
        encoding="utf-8")
    missing = [k for k in figures.KINDS if f"`{k}`" not in docs and f"## {k} " not in docs]
    assert not missing, f"chart kinds without documentation: {missing}"


def test_links_between_the_docs_resolve():
    """Every relative Markdown link and every docs/*.md or docs/*.json path named in the README and the docs
    names a file that exists."""
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" not in target and not (doc.parent / target).exists():
                broken.append(f"{doc.name}: ({target})")
        for name in re.findall(r"\bdocs/([\w.-]+\.(?:md|json))\b", text):
            if not (ROOT / "docs" / name).exists():
                broken.append(f"{doc.name}: docs/{name}")
    assert not broken, broken


def test_the_docs_index_links_every_page_and_schema():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "README.md"]
    pages += [p.name for p in sorted((ROOT / "docs").glob("*.schema.json"))]
    missing = [name for name in pages if f"]({name})" not in index]
    assert not missing, f"docs the index (docs/README.md) does not link: {missing}"


# pages about the checkout (its tests and benchmarks run tools/X), and what names the spellings on purpose
CHECKOUT_PAGES = {"testing.md", "performance.md", "ingest-performance.md", "build-performance.md", "install.md",
                  "cli.md"}
# written whole from the code's comments: their words are fixed in the code
GENERATED_PAGES = {"database.md", "report_model.md"}


def test_the_user_docs_spell_each_command_kansoku_x():
    """One spelling per command for a user: `kansoku X`, never `tools/X` or `kansoku-X` (hand-written text;
    a generated section is as its code writes it)."""
    from kansoku.cli import COMMANDS

    names = "|".join(COMMANDS)
    other = re.compile(rf"\btools/(?:{names})\b(?![/.\w])|\bkansoku-(?:{names})\b(?![/.\w-])")
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if doc.parent.name == "docs" and doc.name in CHECKOUT_PAGES | GENERATED_PAGES:
            continue
        text = re.sub(r"<!-- generated:\w+ -->.*?<!-- /generated -->", "", doc.read_text(encoding="utf-8"),
                      flags=re.S)
        text = re.sub(r"\]\([^)]*\)", "]", text)  # a link's anchor (#kansoku-ingest) is no spelling
        if doc.name == "README.md" and doc.parent == ROOT:  # its first commands run in the checkout
            text = re.sub(r"```sh\n.*?```", "", text, count=1, flags=re.S)
        found += [f"{doc.name}: {m.group(0)}" for m in other.finditer(text)]
    assert not found, found
