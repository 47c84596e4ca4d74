"""Languages are declared once: a site's languages are its i18n/<lang>.toml files. A third, pseudo-translated
language added as one file builds a small report with every word in it (none missing from the page-ready
data, none missing in Hugo's templates: the build fails on a missing translation)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT
from test_build_incremental import SCALEUP, SPEC

PSEUDO = "xx"
PLACEHOLDER = re.compile(r"(\{\{.*?\}\}|%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]|<[^>]*>|&\w+;)")


def pseudo(text: str) -> str:
    """Pseudo-translation: every letter outside placeholders replaced by an accented one, framed by ⟦ ⟧."""
    table = str.maketrans("aeiouAEIOU", "àéîõüÀÉÎÕÜ")
    return "⟦" + "".join(p if PLACEHOLDER.fullmatch(p) else p.translate(table)
                         for p in PLACEHOLDER.split(text)) + "⟧"


def write_pseudo_language(site: Path) -> None:
    with open(site / "i18n" / "en.toml", "rb") as fh:
        en = tomllib.load(fh)
    lines = ["# pseudo-translation of en.toml (tests/test_languages.py)"]
    for key, forms in en.items():
        lines.append(f"[{key}]")
        for form, text in forms.items():
            value = "3" if key == "language_weight" else "Pseudo" if key == "language_name" else pseudo(text)
            lines.append(f"{form} = {json.dumps(value, ensure_ascii=False)}")
    (site / "i18n" / f"{PSEUDO}.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(site: Path, tool: str, *args) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(site / "tools" / tool), *map(str, args)], cwd=site,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A copy of the site with a third language: i18n/xx.toml and nothing else added."""
    site = tmp_path_factory.mktemp("three-languages")
    for d in ("tools", "layouts", "static", "i18n", "assets"):
        if (ROOT / d).is_dir():
            shutil.copytree(ROOT / d, site / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "config.toml", site / "config.toml")
    write_pseudo_language(site)
    camp = site / "campaign"
    shutil.copytree(SCALEUP, camp / "study=scaleup")
    (camp / ".kansoku-campaign").write_text("# test campaign\n", encoding="utf-8")
    (site / "specs").mkdir()
    (site / "specs" / "inc.toml").write_text(SPEC, encoding="utf-8")
    (site / "content" / "reports").mkdir(parents=True)
    db = site / "kansoku.duckdb"
    run(site, "ingest", "--db", db, camp)
    run(site, "build", "--db", db, "--out", site / "public", "--specs", site / "specs", "--content",
        site / "content", "--generated", site / "generated")
    return site


def test_the_languages_are_the_i18n_files(site):
    proc = subprocess.run([sys.executable, "-c", "from kansoku.words import LANGS; print(' '.join(LANGS))"],
                          cwd=site / "tools", capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["ja", "en", PSEUDO]


def test_every_text_of_the_computed_report_is_in_every_language(site):
    data = json.loads((site / "generated" / "data" / "reports" / "inc.json").read_text(encoding="utf-8"))
    missing = []

    def walk(v, where):
        if isinstance(v, dict):
            if "ja" in v and "en" in v and PSEUDO not in v:
                missing.append(where)
            for k, x in v.items():
                walk(x, f"{where}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{where}[{i}]")

    walk(data, "inc")
    assert missing == []


def test_every_page_exists_in_the_third_language_with_its_words(site):
    ja = {p.relative_to(site / "public" / "ja") for p in (site / "public" / "ja").rglob("*.html")}
    xx = {p.relative_to(site / "public" / PSEUDO) for p in (site / "public" / PSEUDO).rglob("*.html")}
    assert ja and ja == xx
    for rel in xx:
        html = (site / "public" / PSEUDO / rel).read_text(encoding="utf-8")
        assert "⟦" in html, rel
        assert f'lang="{PSEUDO}"' in html, rel
        # a word asked for and missing would be empty: no empty table or figure label
        assert not re.search(r'<span class="label">\s*</span>', html), rel
        assert "%!" not in html and "<no value>" not in html, rel


def test_a_word_missing_in_one_language_fails_the_build(site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns("public", "__pycache__"))
    path = copy / "i18n" / f"{PSEUDO}.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index("[on_this_page]\n")
    path.write_text(text[:start] + text[text.index("\n[", start) + 1:], encoding="utf-8")
    proc = subprocess.run([sys.executable, str(copy / "tools" / "build"), "--db", copy / "kansoku.duckdb", "--out",
                           copy / "public", "--specs", copy / "specs", "--content", copy / "content",
                           "--generated", copy / "generated"], cwd=copy, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "on_this_page" in proc.stdout + proc.stderr
