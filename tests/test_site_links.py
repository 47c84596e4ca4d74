"""A build publishes nothing from outside its site. A symbolic link among the files a build reads
(prose, specs, the site's config and static files, the generated directory) is refused with its path, exit 2,
before anything is written; Hugo is never run over one (kansoku/site_links.py). And the builds' --wait is
honoured by their preflight too. One real ingest, real builds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, held_elsewhere, hold_store, run_tool
from kansoku.errors import SiteLinkError
from site_helpers import MINI_SPEC, READ_RUN, copy_home_pages

SPEC = MINI_SPEC

SECRET = "root:x:0:0:kansoku-secret-line"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """One ingested store, shared (read only) by the sites of the tests."""
    tmp = tmp_path_factory.mktemp("links-store")
    shutil.copytree(READ_RUN, tmp / "runs" / "clients=1")
    db = tmp / "kansoku.duckdb"
    run_tool("ingest", "--db", db, tmp / "runs", check=True)
    return db


@pytest.fixture
def site(tmp_path, store) -> Path:
    """A small site (spec, home pages) and, outside it, a secret file a link may point at."""
    s = tmp_path / "site"
    (s / "data" / "reports").mkdir(parents=True)
    (s / "data" / "reports" / "mini.toml").write_text(SPEC, encoding="utf-8")
    copy_home_pages(s / "content")
    (s / "config.toml").write_text('baseURL = "/"\n', encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text(SECRET + "\n", encoding="utf-8")
    return s


def build(site: Path, store: Path, *extra):
    return run_tool("build", "--site", site, "--db", store, *extra)


def published(site: Path) -> list[Path]:
    return [p for p in (site / "public").rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def assert_refused(proc, site: Path, named: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "symbolic link" in proc.stderr and named in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    # refused before anything was written
    assert not (site / "public").exists() and not (site / "data" / "generated").exists()


def test_a_prose_file_linked_out_of_the_site_is_refused_and_never_published(site, store):
    # a prose page linked to /etc/passwd (content/reports/<report>/zz.en.md) is never published
    (site / "content/reports/mini").mkdir()
    link = site / "content/reports/mini/zz.en.md"
    link.symlink_to(site.parent / "outside" / "secret.md")
    proc = build(site, store)
    assert_refused(proc, site, str(link))
    assert str(site.parent / "outside" / "secret.md") in proc.stderr  # where it points, too


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("where", ["content-dir", "reports-dir", "spec", "static", "config", "content-root"])
def test_every_link_a_build_would_read_is_refused(site, store, where):
    outside = site.parent / "outside"
    if where == "content-dir":  # a linked directory of prose
        (site / "content/reports/mini").symlink_to(outside, target_is_directory=True)
    elif where == "reports-dir":  # the specs' directory itself
        shutil.move(site / "data/reports", outside / "reports")
        (site / "data/reports").symlink_to(outside / "reports", target_is_directory=True)
    elif where == "spec":
        shutil.move(site / "data/reports/mini.toml", outside / "mini.toml")
        (site / "data/reports/mini.toml").symlink_to(outside / "mini.toml")
    elif where == "static":
        (site / "static").mkdir()
        (site / "static" / "key.txt").symlink_to(outside / "secret.md")
    elif where == "config":
        shutil.move(site / "config.toml", outside / "config.toml")
        (site / "config.toml").symlink_to(outside / "config.toml")
    else:  # content/ is a real directory reached through a linked parent: the site's prose leads out
        (outside / "prose").mkdir()
        shutil.move(site / "content", outside / "prose" / "content")
        (site / "content").symlink_to(outside / "prose" / "content", target_is_directory=True)
    proc = build(site, store)
    assert_refused(proc, site, str(site))
    assert not published(site)


def test_a_link_that_stays_inside_the_site_is_refused_too(site, store):
    """The documented choice: every link is refused (Hugo's sandbox cannot tell one staying inside from one
    leading out, and a copied file is what a reader of the site's tree sees)."""
    (site / "content/reports/mini").mkdir()
    (site / "notes.md").write_text("---\ntitle: notes\n---\nnotes\n", encoding="utf-8")
    (site / "content/reports/mini/zz.en.md").symlink_to(site / "notes.md")
    assert_refused(build(site, store), site, "zz.en.md")


def test_pdf_refuses_a_linked_prose_file(site, store):
    (site / "content/reports/mini").mkdir()
    link = site / "content/reports/mini/zz.ja.md"
    link.symlink_to(site.parent / "outside" / "secret.md")
    proc = run_tool("pdf", "--site", site, "--db", store, "mini", "--lang", "ja")
    assert_refused(proc, site, str(link))


def test_a_clean_site_builds_and_a_link_in_its_generated_files_never_reaches_hugo(site, store, tmp_path):
    proc = build(site, store)
    assert proc.returncode == 0, proc.stderr
    assert (site / "public" / "ja" / "index.html").is_file()
    # Hugo is never run over a link, whoever planted it: the generated directory is checked just before Hugo
    from kansoku.render import hugo

    gen = site / "data" / "generated"
    (gen / "static" / "leak.txt").symlink_to(site.parent / "outside" / "secret.md")
    with pytest.raises(SiteLinkError, match="leak.txt"):
        hugo.run_hugo(tmp_path / "out", gen, site / "content", site_root=site, config=site / "config.toml")
    assert not (tmp_path / "out").exists()
    os.unlink(gen / "static" / "leak.txt")


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("command", ["build", "pdf"])
def test_wait_is_honoured_by_the_preflight_while_an_ingest_holds_the_store(site, store, tmp_path, command):
    """`tools/build --wait N` and `tools/pdf --wait N` while an ingest holds the store: the preflight waits too,
    so they say they wait and go on once it is free (not exit 4 at once)."""
    import subprocess
    import sys

    db = tmp_path / "held.duckdb"
    shutil.copy(store, db)
    with held_elsewhere(hold_store, str(db)) as release:
        # the pdf's report is refused after the store is read (no such report): its preflight got the store
        args = ["--site", str(site), "--db", str(db), "--wait", "60"] + (["nosuch", "--lang", "ja"]
                                                                           if command == "pdf" else [])
        proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / command), *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        first = []
        while not any("waiting" in ln for ln in first):
            line = proc.stderr.readline()
            if not line:
                break
            first.append(line)
        release.set()
        _, err = proc.communicate(timeout=300)
        err = "".join(first) + err
    assert "waiting" in err and proc.returncode != 4, err
    if command == "build":
        assert proc.returncode == 0, err
    else:
        assert proc.returncode == 3 and "nosuch" in err, err
