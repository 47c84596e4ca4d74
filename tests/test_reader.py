"""The reader's typography (issue: the reader's experience): fonts per language, Japanese line breaks
in the Markdown source that must not become spaces, header cells that do not break inside a word.
Checked on the example site built once per session (conftest.example_site), in a real Chromium."""

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest

CJK = "\u3040-\u30ff\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
BREAK_NEXT_TO_CJK = re.compile(f"[{CJK}]\n|\n[{CJK}]")


def _prose_blocks(html: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"<(?:p|li)>(.*?)</(?:p|li)>", html, re.S)]


def test_japanese_source_line_breaks_are_not_spaces(example_site):
    _, public = example_site
    pages = sorted((public / "ja").rglob("*.html"))
    assert len(pages) > 10
    found = [(p.relative_to(public), m.group(0)) for p in pages
             for block in _prose_blocks(p.read_text(encoding="utf-8")) for m in BREAK_NEXT_TO_CJK.finditer(block)]
    assert not found, found[:5]
    # and English prose keeps its line breaks as spaces (the CJK rule must not glue English words)
    en = (public / "en/reports/example/scaleup/index.html").read_text(encoding="utf-8")
    assert re.search(r"\)\.\s+The TPS of a condition", en)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page(example_site):
    pw_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    _, public = example_site
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(public)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    with pw_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium",
                               args=["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        p = b.new_page()
        yield lambda path: (p.goto(base + path), p.wait_for_load_state("load"), p)[-1]
        b.close()
    srv.shutdown()


@pytest.mark.browser
def test_fonts_per_language(page):
    en = page("/en/reports/example/scaleup/").evaluate("getComputedStyle(document.body).fontFamily")
    ja = page("/ja/reports/example/scaleup/").evaluate("getComputedStyle(document.body).fontFamily")
    assert not en.startswith('"IPAex') and "IPAex" not in en.split(",")[0], en
    assert ja.split(",")[0].strip('" ') == "IPAexGothic", ja


@pytest.mark.browser
def test_japanese_header_cells_do_not_break_inside_words(page):
    p = page("/ja/reports/example/scaleup/")
    styles = p.evaluate("[...document.querySelectorAll('thead th')].map(th => getComputedStyle(th).wordBreak)")
    assert styles and set(styles) == {"keep-all"}
    # no header cell is drawn narrower than its longest word ("回数" on one line)
    broken = p.evaluate("""[...document.querySelectorAll('thead th')].filter(th => {
        const r = document.createRange(); r.selectNodeContents(th);
        const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
        return th.textContent.trim().length <= 3 && lines.size > 1; }).map(th => th.textContent)""")
    assert broken == []


def test_every_comparison_has_a_verdict_a_legend_and_the_method(example_site):
    _, public = example_site
    for lang, method in (("en", "rank-sum test (level 0.1)"), ("ja", "順位和検定 (有意水準 0.1)")):
        html = (public / lang / "reports/example/scaleup/index.html").read_text(encoding="utf-8")
        cells = re.findall(r'<td class="num compare([^"]*)"[^>]*>(.*?)</td>', html)
        assert cells
        for classes, inner in cells:
            kinds = [k for k in ("better", "worse", "within-noise", "too-few-runs") if k in classes.split()]
            assert len(kinds) == 1, classes
            assert f'class="mark-verdict {kinds[0]}"' in inner
        notes = re.findall(r'<p class="table-notes">(.*?)</p>', html, re.S)
        used = {k for c, _ in cells for k in c.split() if k in ("better", "worse", "within-noise", "too-few-runs")}
        for k in used:  # the legend explains every mark the page uses
            assert any(f'mark-verdict {k}' in n for n in notes), k
        assert method in html


def test_aggregated_cells_carry_their_spread(example_site):
    """The runs' range is on each median (hover), matching the runs' own pgbench.log."""
    from test_example_report import independent_runs

    _, public = example_site
    html = (public / "en/reports/example/scaleup/index.html").read_text(encoding="utf-8")
    runs = independent_runs("read")
    lo, hi = min(runs[("checksums-off", "2")]), max(runs[("checksums-off", "2")])
    assert f'title="range over runs {lo:.2f}–{hi:.2f} (n = {len(runs[("checksums-off", "2")])})"' in html


def test_site_links_its_pdfs_and_the_pdf_names_the_site(example_site, tmp_path):
    """tools/build --pdf writes the report's PDFs into the site and links them from every page of the report;
    the PDF prints the web edition's address (spec [report] site_url)."""
    import subprocess

    from conftest import run_tool

    db, _ = example_site
    out = tmp_path / "public"
    run_tool("build", "--db", db, "--out", out, "--generated", tmp_path / "gen", "--pdf", "example", check=True)
    for lang in ("ja", "en"):
        pdf = out / "pdf" / f"example.{lang}.pdf"
        assert pdf.read_bytes()[:5] == b"%PDF-"
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        assert f"http://127.0.0.1:1313/{lang}/reports/example/" in text.replace("\n", "")
        pages = [p for p in (out / lang / "reports" / "example").rglob("index.html")]
        assert len(pages) >= 6
        for page in pages:  # cover and every chapter: both PDFs, the page's own language first
            html = page.read_text(encoding="utf-8")
            links = re.findall(r'<a href="([^"]+\.pdf)" hreflang="(\w\w)"', html)
            assert [h for _, h in links] == ["ja", "en"], page
            for href, _ in links:
                assert (page.parent / href).resolve() == (out / "pdf" / Path(href).name).resolve()
    # a report not asked for gets no link
    other = (out / "ja/reports/past-fy2013/index.html").read_text(encoding="utf-8")
    assert ".pdf" not in other
    p = run_tool("build", "--db", db, "--out", out, "--generated", tmp_path / "gen", "--pdf", "nosuch")
    assert p.returncode != 0 and "no report 'nosuch'" in p.stderr


def test_hover_templates_are_markup_and_measured_text_is_text(example_site):
    """The charts' own hover templates keep their <br> (they were escaped into visible markup); a measured
    string (a trace name, a category) is escaped wherever it enters, for the site and the PDF export."""
    import json

    from kansoku.render.charts._draw import esc, escape_plotly

    _, public = example_site
    html = (public / "en/reports/example/scaleup/index.html").read_text(encoding="utf-8")
    blobs = re.findall(r'<script type="application/json" class="chart-data"[^>]*>(.*?)</script>', html, re.S)
    templates = [t.get("hovertemplate") for b in blobs for t in json.loads(b)["data"] if t.get("hovertemplate")]
    assert templates and all("&lt;br&gt;" not in t for t in templates)
    assert any("<br>" in t for t in templates)
    fig = {"data": [{"name": "<b>x</b>", "y": ["a&b"], "hovertemplate": f"{esc('<i>run</i>')}<br>%{{y}}"}],
           "layout": {"title": {"text": "<sup>t</sup>"}}}
    out = escape_plotly(fig)
    assert out["data"][0]["name"] == "&lt;b&gt;x&lt;/b&gt;" and out["data"][0]["y"] == ["a&amp;b"]
    assert out["data"][0]["hovertemplate"] == "&lt;i&gt;run&lt;/i&gt;<br>%{y}"
    assert out["layout"]["title"]["text"] == "&lt;sup&gt;t&lt;/sup&gt;"


def test_every_figure_has_its_data_as_csv(example_site):
    """Each figure links a CSV of what it plots; the read-TPS figure's points are the medians the raw
    pgbench.log files give (the table's numbers, unrounded)."""
    import csv
    import statistics

    from test_example_report import independent_runs

    _, public = example_site
    for lang in ("ja", "en"):
        html = (public / lang / "reports/example/scaleup/index.html").read_text(encoding="utf-8")
        figures = re.findall(r'<figure class="kansoku-figure" id="figure-([^"]+)"', html)
        links = re.findall(r'href="([^"]*/csv/example/figure-[^"]+\.' + lang + r'\.csv)"', html)
        assert figures and len(links) == len(figures)
        for href in links:
            assert (public / "csv" / "example" / Path(href).name).is_file()
    rows = list(csv.reader((public / "csv/example/figure-read-tps.en.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert rows[0] == ["series", "x", "y"]
    runs = independent_runs("read")
    names = {"checksums off": "checksums-off", "checksums on": "checksums-on"}
    points = {(names[s], x): float(y) for s, x, y in rows[1:]}
    assert points == {k: pytest.approx(statistics.median(v)) for k, v in runs.items()}


def test_each_table_offers_the_runs_behind_its_medians(example_site):
    """The spread as a download: every run's own TPS behind each median of table 1.1, as the raw logs say."""
    import csv

    from test_example_report import independent_runs

    _, public = example_site
    html = (public / "ja/reports/example/scaleup/index.html").read_text(encoding="utf-8")
    assert "/csv/example/read-tps.runs.ja.csv" in html
    rows = list(csv.reader((public / "csv/example/read-tps.runs.en.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert rows[0] == ["row", "column", "run", "value"]
    got: dict = {}
    for clients, column, run, value in rows[1:]:
        if column.startswith("TPS ("):
            config = "checksums-off" if "off" in column else "checksums-on"
            assert f"config={config}/clients={clients}/" in run
            got.setdefault((config, clients), []).append(float(value))
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in independent_runs("read").items()}


def test_line_charts_draw_their_runs_range(example_site):
    """Figure 1.1's error bars span each median's runs, min to max, as the raw logs give them."""
    import json

    from test_example_report import independent_runs

    _, public = example_site
    html = (public / "en/reports/example/scaleup/index.html").read_text(encoding="utf-8")
    blob = re.search(r'<script type="application/json" class="chart-data" data-for="read-tps">(.*?)</script>',
                     html, re.S).group(1)
    runs = independent_runs("read")
    configs = {"checksums off": "checksums-off", "checksums on": "checksums-on"}
    for tr in json.loads(blob)["data"]:
        err = tr["error_y"]
        for x, y, up, down in zip(tr["x"], tr["y"], err["array"], err["arrayminus"]):
            vals = runs[(configs[tr["name"]], str(x))]
            assert y + up == pytest.approx(max(vals)) and y - down == pytest.approx(min(vals))


def test_figure_csv_holds_data_not_event_marks():
    from kansoku.render.charts.events import EVENT_META
    from kansoku.render.hugo import figure_csv

    fig = {"data": [{"name": "=run 1", "x": [1.0, 2.0], "y": [100.5, 0.1 + 0.2]},
                    {"name": "Checkpoint", "x": [1.5], "y": [0], "mode": "markers", "meta": EVENT_META}]}
    assert figure_csv(fig).splitlines() == ["series,x,y", "'=run 1,1,100.5", "'=run 1,2,0.3"]
