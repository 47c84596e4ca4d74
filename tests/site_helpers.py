"""Helpers for the tests that build a small site or compute from a small report spec (the spec text they write,
the home pages a site needs) and for those that read a built site in a headless Chromium. Several modules wrote
each of these out in full."""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from conftest import ROOT, run_tool

# the tests' fixture run of a read workload at one client (three repetitions of pgbench)
READ_RUN = ROOT / "tests/fixtures/runs/campaign=corpus-2026-11/study=scaleup/workload=read/config=checksums-off/clients=1"


def _texts(ja: str, en: str) -> str:
    return f'{{ ja = "{ja}", en = "{en}" }}'


def report_head(report_id: str = "mini", title: tuple[str, str] = ("小さな報告", "A small report"),
                fiscal_year: int = 2026, extra: str = "") -> str:
    """A spec's [report] table as the site tests write it: test organisation, revision, copyright and licence;
    ``extra``, lines added at its end (``publish_raw = true``)."""
    return f'''
[report]
id = "{report_id}"
fiscal_year = {fiscal_year}
title = {_texts(*title)}
organisation = {{ ja = "テスト", en = "Test" }}
revision = "0.1"
copyright = "© test"
license = {{ ja = "テスト用", en = "for tests" }}
{extra}'''


def table_chapter(chapter: str = "a", title: tuple[str, str] = ("章 A", "Chapter A"), table: str = "t",
                  caption: tuple[str, str] = ("表", "Table"), where: str = '{ workload = "read", clients = 1 }',
                  extra: str = "") -> str:
    """A chapter holding one table of the median TPS by configuration; ``extra``, lines added to the table."""
    return f'''
[[chapter]]
id = "{chapter}"
title = {_texts(*title)}

[[chapter.table]]
id = "{table}"
caption = {_texts(*caption)}
metric = "tps"
where = {where}
rows = "config"
aggregate = "median"
{extra}'''


# the small report the site tests build: one chapter ("a") of one table ("t")
MINI_SPEC = report_head() + table_chapter()


def one_table_spec(report_id: str, table: str, head: str = "") -> str:
    """A spec of one chapter ("c") holding one table ("t"), its words placeholders, for the tests of what a
    table computes: ``table`` is the table's lines after its id and caption; ``head``, what stands between
    [report] and the chapter ([device_groups] …)."""
    return f'''
[report]
id = "{report_id}"
fiscal_year = 2026
title = "t"
organisation = "o"
{head}
[[chapter]]
id = "c"
title = "c"

[[chapter.table]]
id = "t"
caption = "t"
{table}'''


def copy_home_pages(content: Path) -> None:
    """The repository's home pages into a site's ``content`` (its _index pages and those of content/reports):
    what a site needs besides its reports' own pages."""
    (content / "reports").mkdir(parents=True, exist_ok=True)
    for p in (ROOT / "content").glob("_index.*.md"):
        shutil.copy(p, content)
    for p in (ROOT / "content" / "reports").glob("_index.*.md"):
        shutil.copy(p, content / "reports")


@contextlib.contextmanager
def served_in_chromium(public: Path):
    """A built site (``public``) served on 127.0.0.1 and Debian's chromium, headless, that reaches no other host:
    yields (browser, base URL). Skips without playwright or chromium. For a module's fixture."""
    pw_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(public)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    with pw_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium",
                               args=["--no-sandbox", "--disable-gpu",
                                     "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        yield b, base
        b.close()
    srv.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def build_one_report(db: Path, tmp_path: Path, report_id: str, spec_text: str):
    """tools/build of one report of the repository with its spec changed: ``spec_text`` in tmp_path/reports, the
    report's prose copied from content/reports into tmp_path/content, the output under tmp_path. Returns the
    finished process (not checked)."""
    specs = tmp_path / "reports"
    specs.mkdir()
    (specs / f"{report_id}.toml").write_text(spec_text, encoding="utf-8")
    shutil.copytree(ROOT / "content" / "reports" / report_id, tmp_path / "content" / "reports" / report_id)
    return run_tool("build", "--db", db, "--specs", specs, "--out", tmp_path / "public",
                    "--generated", tmp_path / "generated", "--content", tmp_path / "content")
