"""The published site, built from real runs, read as a reader would.

One build per session (module fixture `site`): the example report (its spec and prose from the
repository) over its real measurements in data/runs/example, plus a hostile report ("evil") whose run directory has HTML, quotes and a script in its factor
values, hostname, settings and versions, and whose prose exists only in Japanese (one chapter has no
prose at all). Static checks read the HTML and CSV files; the `browser` tests drive Debian's chromium
through playwright against the site served on 127.0.0.1.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import html
import http.server
import io
import json
import re
import shutil
import sys
import threading
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, copy_store, run_tool
from site_helpers import copy_home_pages, report_head, table_chapter

sys.path.insert(0, str(ROOT / "tools"))

CORPUS_SCALEUP = ROOT / "tests/fixtures/runs/campaign=corpus-2026-11/study=scaleup"
EVIL_HOST = '<script>window.__xss="host"</script>"quoted\'host'
EVIL_CONFIG = '<img src=x onerror=window.__xss=1>"q\'&amp'
EVIL_SETTING = '</code><script>window.__xss="setting"</script>'
EVIL_PROSE = "<script>window.__xss='prose'</script>"
LANGS = ("ja", "en")


def _evil_run(root: Path, config: str, rep: int, src_run: Path) -> Path:
    d = root / "study=evil" / f"rep={rep}"  # the run id comes from the key=value path segments
    d.mkdir(parents=True)
    shutil.copyfile(src_run / "pgbench.log", d / "pgbench.log")
    meta = tomllib.loads((src_run / "run.toml").read_text())
    toml = (src_run / "run.toml").read_text()
    # factors from run.toml: a hostile configuration name, a hostname, settings and versions
    head = (f'config = {json.dumps(config)}\nrep = {rep}\nclients = {meta["clients"]}\nhostname = {json.dumps(EVIL_HOST)}\n'
            f'start = {meta["start"].isoformat()}\nend = {meta["end"].isoformat()}\n')
    tail = (f'\n[machine]\nhostname = {json.dumps(EVIL_HOST)}\nnproc = 2\n'
            f'[versions]\npgbench = {json.dumps("pgbench <b>15</b>")}\n'
            f'[server]\nshared_buffers = {json.dumps(EVIL_SETTING)}\nwork_mem = "4MB"\n')
    assert "clients" in toml
    (d / "run.toml").write_text(head + tail, encoding="utf-8")
    return d


EVIL_SPEC = report_head("evil", ("悪意のある入力 <b>太字</b>", "Hostile input <b>bold</b>"), 2020) + table_chapter(
    where='{ study = "evil" }', extra="count = true\n") + '''
[[chapter.figure]]
id = "f"
caption = { ja = "図", en = "Figure" }
chart = "bar"
metric = "tps"
where = { study = "evil" }
x = "config"
series = "config"

[[chapter]]
id = "b"
title = { ja = "章 B", en = "Chapter B" }

[[chapter.table]]
id = "t2"
caption = { ja = "表 2", en = "Table 2" }
metric = "tps"
where = { study = "evil" }
rows = "config"
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory, example_db) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    if not CORPUS_SCALEUP.is_dir():
        pytest.skip("tests/fixtures/runs is not present")
    # runs: the real scale-up pgbench outputs (and their run.toml), plus two hostile runs
    evil_root = tmp / "runs"
    src = sorted(CORPUS_SCALEUP.glob("workload=read/config=checksums-off/clients=1/rep=*"))
    _evil_run(evil_root, EVIL_CONFIG, 1, src[0])
    _evil_run(evil_root, "plain", 2, src[1])
    # the example report's own measurements (the campaign its spec selects: the session's ingest, copied),
    # and the hostile runs ingested into the copy
    db = copy_store(example_db, tmp / "store")
    run_tool("ingest", "--db", db, evil_root, check=True)
    # specs: the repository's example report, and the hostile one
    specs = tmp / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "data/reports/example.toml", specs)
    (specs / "evil.toml").write_text(EVIL_SPEC, encoding="utf-8")
    # content: the repository's home and example report; the hostile report in Japanese only
    content = tmp / "content"
    copy_home_pages(content)
    shutil.copytree(ROOT / "content/reports/example", content / "reports/example")
    ev = content / "reports/evil"
    ev.mkdir()
    (ev / "_index.ja.md").write_text('---\ntitle: "悪意のある入力"\nreport: evil\nfiscal_year: 2020\n'
                                     'themes: ["テスト"]\n---\n表紙の本文。\n', encoding="utf-8")
    (ev / "a.ja.md").write_text('---\ntitle: "章 A"\nreport: evil\nchapter: a\nchapter_number: 1\nweight: 1\n---\n'
                                f'## 目的\n\n日本語だけの本文。{EVIL_PROSE}\n\n{{{{< tbl "t" >}}}}\n\n{{{{< fig "f" >}}}}\n',
                                encoding="utf-8")
    out = tmp / "public"
    gen = tmp / "generated"
    from kansoku.app import build_site as build

    res = build(db, out, spec_dir=specs, generated=gen, content=content)
    assert res.reports == ["example", "evil"]
    return out


def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("index.html") if p.parent != site)


def read(p: Path) -> str:
    return p.read_text(encoding="utf-8")


# -- structure --------------------------------------------------------------------------------------

def test_every_page_exists_in_both_languages_and_switch_lands_on_the_same_page(site):
    ja = {p.relative_to(site / "ja") for p in (site / "ja").rglob("index.html")}
    en = {p.relative_to(site / "en") for p in (site / "en").rglob("index.html")}
    assert ja == en and len(ja) >= 15
    for rel in ja:
        page = read(site / "ja" / rel)
        links = re.findall(r'<a class="lang-link" hreflang="en" lang="en" href="([^"]+)"', page)
        assert len(links) == 1, rel
        target = (site / "ja" / rel).parent / links[0]
        assert target.resolve() / "index.html" == (site / "en" / rel).resolve(), rel


def test_every_address_in_a_reports_data_is_a_page_hugo_wrote(site):
    """render/page_data.py page_path: the templates link a report's pages (cover, pages, data-sources parts) by
    the addresses its data gives, not by looking the pages up; each is where Hugo wrote that page."""
    gen = site.parent / "generated"
    seen = 0
    for f in sorted((gen / "data" / "reports").glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        for by_lang in [d["path"], *(p["path"] for p in d["pages"]), *d.get("sources_paths", [])]:
            for lang, path in by_lang.items():
                assert path.startswith(f"{lang}/") and (site / path / "index.html").is_file(), (f.name, path)
                seen += 1
    assert seen >= 40


def test_report_reading_order_cover_toc_and_prev_next(site):
    cover = read(site / "ja/reports/example/index.html")
    for text_ in ("改訂履歴", "ライセンス", "CC BY 4.0", "2026 年度", "kansoku プロジェクト", "新規作成"):
        assert text_ in cover
    order = ["introduction", "scaleup", "syscalls", "disk", "parallel", "profile", "replication", "client-server", "versions", "walsync", "softirq", "partition", "fdw", "fts", "compare-checksums", "closing", "authors", "methods",
             "appendix", "sources"]
    toc = re.findall(r'href="\.\./\.\./\.\./ja/reports/example/([a-z-]+)/"', cover)
    assert [t for t in dict.fromkeys(toc)] == order
    for i, pid in enumerate(order):
        page = read(site / f"en/reports/example/{pid}/index.html")
        assert 'class="report-toc"' in page and 'aria-current="page"' in page
        nxt = re.search(r'<a class="next" rel="next" href="[./]*en/reports/example/([a-z-]+)/"', page)
        prv = re.search(r'<a class="prev" rel="prev" href="[./]*en/reports/example/(?:([a-z-]+)/)?"', page)
        assert (nxt.group(1) if nxt else None) == (order[i + 1] if i + 1 < len(order) else None)
        assert prv.group(1) == (order[i - 1] if i else None)


def test_chapter_has_sections_and_page_toc(site):
    ja = read(site / "ja/reports/example/scaleup/index.html")
    en = read(site / "en/reports/example/scaleup/index.html")
    for h in ("目的", "構成", "方法", "結果", "考察"):
        assert f">{h}</h2>" in ja and f'href="#{h}"' in ja
    for h in ("Purpose", "Setup", "Method", "Results", "Discussion"):
        assert f">{h}</h2>" in en
    assert "表 1.1" in ja and "図 1.1" in ja and "Table 1.1" in en and "Figure 1.1" in en


def test_home_lists_reports_newest_first_with_themes(site):
    home = read(site / "ja/index.html")
    assert home.index("2026 年度") < home.index("2020 年度")
    assert "スケールアップ (定点観測)" in home and "テスト" in home
    assert "FY2026" in read(site / "en/index.html")


def test_missing_translation_falls_back_with_notice(site):
    en = read(site / "en/reports/evil/a/index.html")
    assert "has no English version yet" in en and "日本語だけの本文" in en
    assert 'id="table-t"' in en and "Chapter A" in en
    # a chapter without prose in either language still shows its tables, with a notice
    for lang, notice in (("ja", "本文はまだありません"), ("en", "has no text yet")):
        b = read(site / f"{lang}/reports/evil/b/index.html")
        assert notice in b and 'id="table-t2"' in b
    cover_en = read(site / "en/reports/evil/index.html")
    assert "has no English version yet" in cover_en and "表紙の本文" in cover_en
    # the example report is complete: no notices
    for p in (site / "en/reports/example").rglob("index.html"):
        assert "missing-translation" not in read(p), p


def test_environment_appendix_from_run_captures(site):
    ja = read(site / "ja/reports/example/appendix/index.html")
    en = read(site / "en/reports/example/appendix/index.html")
    assert "ハードウェアと OS" in ja and "Hardware and OS" in en
    assert "23.5 GiB" in en and "Debian GNU/Linux 12" in en
    assert "pgbench (PostgreSQL) 15.18" in en  # the example campaign ran Debian 15.18
    for setting in ("shared_buffers", "max_wal_size", "data_checksums"):
        assert f"<code>{setting}</code>" in en


def test_tables_right_aligned_marked_and_csv_matches(site):
    page = read(site / "ja/reports/example/scaleup/index.html")
    tbl = page[page.index('id="table-read-tps"'):page.index("</table>", page.index('id="table-read-tps"'))]
    td_classes = re.findall(r'<td class="([^"]*)"', tbl)
    assert td_classes and all(c.split()[0] == "num" for c in td_classes)  # every number cell is a num cell
    assert len(td_classes) == tbl.count("<td")
    css = (site / "css" / "kansoku.css").read_text(encoding="utf-8")
    assert re.search(r"td\.num\s*\{[^}]*text-align:\s*right", css)  # ... and num cells are right-aligned
    assert any("baseline" in c.split() for c in td_classes)  # baseline column marked
    assert "(基準)" in tbl
    rows = re.findall(r"<tr>(.*?)</tr>", tbl[tbl.index("<tbody>"):], re.S)
    shown = [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>([^<]*)", r)] for r in rows]
    for lang in LANGS:
        text_ = (site / f"csv/example/read-tps.{lang}.csv").read_text(encoding="utf-8-sig")
        data = printed_columns(list(csv.reader(io.StringIO(text_))), lang)
        assert len(data) == len(shown) + 1
        for csv_row, html_row in zip(data[1:], shown):
            assert len(csv_row) == len(html_row)
            assert csv_row[0] == html_row[0]
            for c, h in zip(csv_row[1:], html_row[1:]):
                assert_csv_matches(c, h)


def printed_columns(data: list[list[str]], lang: str) -> list[list[str]]:
    """The CSV without the spread columns (min, max, n of the runs) written beside each aggregated column:
    the columns the table prints."""
    from kansoku import words

    head, keep, label = data[0], [], None
    for i, h in enumerate(head):
        if label is not None and h in {words.t(lang, f"csv_spread_{k}", label) for k in ("min", "max", "n")}:
            continue
        keep.append(i)
        label = h
    return [[row[i] for i in keep] for row in data]


def assert_csv_matches(c: str, shown: str) -> None:
    """The CSV holds the full-precision number; rounded as the table shows it, it is the shown text."""
    if shown in ("—", ""):
        assert c in ("—", ""), (c, shown)
        return
    num = re.sub(r"[^\d.\-]", "", shown.replace("\u2212", "-"))
    digits = len(num.split(".")[1]) if "." in num else 0
    v = float(c)
    if shown.endswith("%"):
        v *= 100
    elif shown.startswith("×"):
        pass
    # reports round half away from zero, on the number as written (9.045 -> 9.05)
    from decimal import ROUND_HALF_UP, Decimal

    rounded = Decimal(repr(v)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    assert f"{abs(rounded) if rounded == 0 else rounded:f}" == num, (c, shown)


def test_provenance_panels_link_runs_and_files(site):
    page = read(site / "en/reports/example/scaleup/index.html")
    spec = tomllib.loads((ROOT / "data/reports/example.toml").read_text())
    scaleup = next(c for c in spec["chapter"] if c["id"] == "scaleup")
    assert page.count('<details class="provenance">') == len(scaleup.get("table", [])) + len(scaleup.get("figure", []))
    start = page.index('<details class="provenance">')
    panel = page[start:page.index("</details>", start)]
    assert "★" in panel and "Repetitions" in panel
    anchors = set(re.findall(r'/runs/(run-[0-9a-f]{12})\.html"', panel))  # each run links to its own page
    assert len(anchors) == 40  # table 1.1: 2 configurations x 4 client counts x 5 repetitions
    sources = read(site / "en/reports/example/sources/index.html")
    for a in anchors:
        assert f'id="{a}"' in sources
        assert (site / "en/reports/example/runs" / f"{a}.html").is_file()
    # files: name, size, sha256, tool, version; the raw file is downloadable and is the file ingested
    shas = re.findall(r'<code class="sha">([0-9a-f]{64})</code>', sources)
    links = re.findall(r'<a href="([^"]+/pgbench\.log)" download>', sources)
    assert len(shas) >= 12 and len(links) >= 12 and "pgbench-stdout" in sources and "15.18" in sources
    raw = (site / "en/reports/example/sources" / links[0]).resolve()
    assert hashlib.sha256(raw.read_bytes()).hexdigest() in shas
    assert (raw.parent / "run.toml").is_file()
    # a report without publish_raw lists files but does not copy them
    evil = read(site / "en/reports/evil/sources/index.html")
    assert "does not publish the raw files" in evil and not (site / "raw/evil").exists()


def test_hostile_strings_are_escaped_everywhere(site):
    for p in pages(site):
        text_ = read(p)
        assert "<script>window.__xss" not in text_, p
        assert "<img src=x" not in text_, p
        assert "<b>15</b>" not in text_ and "<b>bold</b>" not in text_ and "<b>太字</b>" not in text_, p
    env = read(site / "en/reports/evil/appendix/index.html")
    assert html.escape(EVIL_SETTING, quote=False) in env.replace("&#34;", '"').replace("&#39;", "'")
    sources = read(site / "ja/reports/evil/sources/index.html")
    assert "&lt;script&gt;window.__xss=&#34;host&#34;&lt;/script&gt;" in sources
    # Markdown: raw HTML in prose is not passed through (goldmark unsafe = false)
    assert "raw HTML omitted" in read(site / "ja/reports/evil/a/index.html")


def test_chart_data_is_compact_json_and_escaped_for_plotly(site):
    page = read(site / "ja/reports/evil/a/index.html")
    m = re.search(r'<script type="application/json" class="chart-data" data-for="f">(.*?)</script>', page, re.S)
    fig = json.loads(m.group(1))
    names = [t["name"] for t in fig["data"]]
    assert any(n.startswith("&lt;img src=x") for n in names)  # plotly shows entities as text
    assert ", " not in m.group(1)[:200] and "\n" not in m.group(1)


def test_no_request_leaves_the_site_static(site):
    pat = re.compile(r'(?:src|href|action)\s*=\s*"(?!\.|/|#|data:)([^"]*)"')
    for p in pages(site):
        bad = [u for u in pat.findall(read(p)) if not u.startswith(("mailto:",))]
        assert not bad, (p, bad[:3])
    assert not re.search(r"https?://", (site / "css/kansoku.css").read_text())


def test_plotly_bundle_matches_python_plotly_and_is_small(site):
    from plotly.offline import get_plotlyjs_version

    from kansoku.render.hugo import PLOTLY_BUNDLE, PLOTLY_JS_VERSION

    assert PLOTLY_JS_VERSION == get_plotlyjs_version()
    bundle = ROOT / "static" / PLOTLY_BUNDLE
    assert bundle.stat().st_size < 1_500_000
    assert f"v{PLOTLY_JS_VERSION}" in bundle.read_text(encoding="utf-8")[:200]
    assert (site / PLOTLY_BUNDLE).is_file() and not (site / "js/plotly.min.js").exists()
    # loaded once, only on pages with charts
    chapter = read(site / "ja/reports/example/scaleup/index.html")
    assert chapter.count("plotly-basic") == 1
    assert "plotly-basic" not in read(site / "ja/reports/example/closing/index.html")


def test_trends_page_plots_metric_across_years(site):
    for lang, word in (("ja", "年度"), ("en", "Fiscal year")):
        page = read(site / f"{lang}/trends/index.html")
        m = re.search(r'class="chart-data" data-for="peak-read-tps">(.*?)</script>', page, re.S)
        fig = json.loads(m.group(1))
        xs = {x for t in fig["data"] for x in t["x"]}
        assert 2026 in xs and fig["layout"]["xaxis"]["title"]["text"] == word
        assert any(t["name"].startswith("PostgreSQL 15") for t in fig["data"])  # version captured with the runs
        assert any(t["name"].startswith("PostgreSQL 18") for t in fig["data"])  # the versions study's other side
        # the runs behind it are named as the reports name their factors, never by their keys
        heads = re.findall(r"<th scope=\"col\">([^<]*)</th>", page.split('class="provenance"', 1)[1])
        assert word in heads and not {"fiscal_year", "published_table", "clients", "version"} & set(heads)
        # the table under the chart is a table
        assert re.search(r'id="trend-table-peak-read-tps">\s*<figcaption><span class="label">(表|Table) T\.1<', page)


def test_i18n_files_have_the_same_keys():
    ja = tomllib.loads((ROOT / "i18n/ja.toml").read_text())
    en = tomllib.loads((ROOT / "i18n/en.toml").read_text())
    assert set(ja) == set(en)


def test_structure_orders_pages_and_reports_missing_prose(tmp_path):
    from kansoku.report.structure import generated_body, report_pages
    from kansoku.spec.model import load_report

    spec = tmp_path / "evil.toml"
    spec.write_text(EVIL_SPEC, encoding="utf-8")
    rep = load_report(spec)
    d = tmp_path / "content/reports/evil"
    d.mkdir(parents=True)
    (d / "a.ja.md").write_text("---\ntitle: \"A!\"\n---\nbody\n", encoding="utf-8")
    (d / "closing.en.md").write_text("---\ntitle: Bye\n---\nbye\n", encoding="utf-8")
    (d / "extra.ja.md").write_text("---\ntitle: Extra\nweight: 920\n---\nx\n", encoding="utf-8")
    pages_ = report_pages(rep, tmp_path / "content/reports")
    assert [p.id for p in pages_] == ["a", "b", "closing", "extra", "appendix", "sources"]
    a = pages_[0]
    assert a.title == {"ja": "A!", "en": "Chapter A"} and a.source_lang("en") == "ja" and a.missing("en")
    assert pages_[1].source_lang("ja") is None and '{{< tbl "t2" >}}' in generated_body(pages_[1], rep)
    assert pages_[2].title == {"ja": "おわりに", "en": "Bye"}
    assert [p.id for p in report_pages(rep, tmp_path / "content/reports", site=False)][-1] == "appendix"


# -- in a real browser ------------------------------------------------------------------------------

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    pw_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    with pw_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


class Reader:
    """A browser page that records console errors and every request that is not to the local site."""

    def __init__(self, browser, base: str, **ctx):
        self.base = base
        self.ctx = browser.new_context(accept_downloads=True, **ctx)
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.ctx.route("**/*", self._route)
        self.page = self.ctx.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route):
        url = route.request.url
        if url.startswith(self.base + "/") or url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, path: str):
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        return self.page

    def charts_rendered(self) -> list[int]:
        """Number of traces drawn in each chart (waits for every chart to render)."""
        n = self.page.locator("div.chart[data-figure]").count()
        if n:
            self.page.wait_for_function(
                "n => document.querySelectorAll('div.chart[data-rendered=\"true\"]').length === n", arg=n,
                timeout=10000)
        return self.page.evaluate("""() => [...document.querySelectorAll('div.chart[data-figure]')].map(d => {
            const want = JSON.parse(d.parentNode.querySelector('script.chart-data').textContent).data.length;
            const drawn = d.querySelectorAll('g.trace').length;
            return want > 0 && drawn >= want ? drawn : -1; })""")

    def close(self):
        self.ctx.close()


@pytest.mark.browser
def test_every_page_loads_without_errors_and_charts_render(site, served, browser):
    reader = Reader(browser, served)
    # every page, but of the run pages (one per run, all from one template) only the first two per report
    # and language: tests/test_run_pages.py checks every run page's data and links
    runs_seen: dict[Path, int] = {}
    checked = []
    for p in pages(site):
        if p.parent.parent.name == "runs":
            runs_seen[p.parent.parent] = runs_seen.get(p.parent.parent, 0) + 1
            if runs_seen[p.parent.parent] > 2:
                continue
        checked.append(p)
    try:
        for p in checked:
            path = "/" + p.parent.relative_to(site).as_posix() + "/"
            reader.open(path)
            counts = reader.charts_rendered()
            assert all(c > 0 for c in counts), (path, counts)
            assert reader.page.evaluate("window.__xss") is None, path
            assert not reader.errors, (path, reader.errors)
        assert not reader.outside, reader.outside
    finally:
        reader.close()


@pytest.mark.browser
def test_language_switch_chapter_navigation_and_csv_download(site, served, browser, tmp_path):
    reader = Reader(browser, served)
    try:
        page = reader.open("/ja/reports/example/scaleup/")
        page.click("a.lang-link")
        assert page.url == served + "/en/reports/example/scaleup/"
        page.click("a.lang-link")
        assert page.url == served + "/ja/reports/example/scaleup/"
        # next, next, ... from the cover through every page, then back
        page = reader.open("/en/reports/example/")
        seen = []
        page.click(".cover-toc a >> nth=0")
        while True:
            seen.append(page.url.removeprefix(served))
            nxt = page.locator("a.next")
            if not nxt.count():
                break
            nxt.click()
        assert seen == [f"/en/reports/example/{p}/" for p in
                        ("introduction", "scaleup", "syscalls", "disk", "parallel", "profile", "replication", "client-server", "versions", "walsync", "softirq", "partition", "fdw", "fts", "compare-checksums", "closing", "authors",
                         "methods", "appendix", "sources")]
        page.click("a.prev")
        assert page.url.endswith("/en/reports/example/appendix/")
        # the CSV download is the table
        page = reader.open("/en/reports/example/scaleup/")
        with page.expect_download() as dl:
            page.click("#table-read-tps a.csv")
        path = tmp_path / "t.csv"
        dl.value.save_as(path)
        data = printed_columns(list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig")))), "en")
        shown = page.evaluate("""() => [...document.querySelectorAll('#table-read-tps > .table-scroll > table > tbody > tr')]
            .map(tr => [...tr.children].map(c => c.firstChild ? c.firstChild.textContent.trim() : ''))""")
        assert len(data) - 1 == len(shown)
        for csv_row, row in zip(data[1:], shown):
            assert csv_row[0] == row[0]
            for c, h in zip(csv_row[1:], row[1:]):
                assert_csv_matches(c, h)
        # provenance: open the panel, follow a run to its page and its files (tests/test_run_pages.py: the rest)
        page.click("#table-read-tps details.provenance summary")
        page.click("#table-read-tps .reps a >> nth=0")
        assert "/en/reports/example/runs/run-" in page.url
        assert page.locator("article.page-run table.files code.sha").count() >= 1
        # hostile legend text is shown as text by plotly, not as markup
        page = reader.open("/en/reports/evil/a/")
        reader.charts_rendered()
        legend = page.locator("#figure-f .legendtext").all_text_contents()
        assert any(t.startswith("<img src=x") for t in legend), legend
        assert page.evaluate("window.__xss") is None
        assert not reader.errors and not reader.outside
    finally:
        reader.close()


@pytest.mark.browser
def test_screenshots_of_main_pages(site, served, browser, tmp_path_factory):
    """Screenshots for a human to look at (path printed with -s); on a phone and on a desktop."""
    out = tmp_path_factory.mktemp("screenshots")
    shots = [("/ja/", 1280), ("/en/reports/example/", 1280), ("/ja/reports/example/scaleup/", 1280),
             ("/en/reports/example/appendix/", 1280), ("/ja/trends/", 1280), ("/en/reports/example/scaleup/", 390)]
    for path, width in shots:
        reader = Reader(browser, served, viewport={"width": width, "height": 900})
        try:
            reader.open(path)
            reader.charts_rendered()
            name = (path.strip("/").replace("/", "_") or "root") + f"_{width}.png"
            reader.page.screenshot(path=str(out / name), full_page=True)
            if width < 600:  # nothing wider than the phone
                assert reader.page.evaluate("document.documentElement.scrollWidth") <= width + 1
        finally:
            reader.close()
    print(f"screenshots in {out}")
    assert len(list(out.glob("*.png"))) == len(shots)
