"""The reader's typography (issue: the reader's experience): fonts per language, Japanese line breaks
in the Markdown source that must not become spaces, header cells that do not break inside a word.
Checked on the example site built once per session (conftest.example_site), in a real Chromium."""

import json
import re
from pathlib import Path

import pytest

from conftest import REPORT_SPECS, ROOT, computed_report
from site_helpers import served_in_chromium

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


# a word or a punctuation mark glued to inline markup that starts the next line of the source
GLUED_TO_MARKUP = re.compile(r"[A-Za-z0-9,;:.)]<(?:code|strong|em|a)[ >]")


def test_english_line_breaks_before_inline_markup_stay_spaces(example_site):
    """A source line starting with a code span, bold text or a link keeps the space of its line break
    ("with `fastupdate`", never "with<code>"): the East Asian line-break rule is for Japanese pages only."""
    _, public = example_site
    pages = sorted((public / "en" / "reports").rglob("*.html"))
    found = [(str(p.relative_to(public)), block[max(0, m.start() - 20):m.end() + 10]) for p in pages
             for block in _prose_blocks(p.read_text(encoding="utf-8")) for m in GLUED_TO_MARKUP.finditer(block)]
    assert not found, found[:5]


@pytest.fixture(scope="module")
def page(example_site):
    _, public = example_site
    with served_in_chromium(public) as (b, base):
        p = b.new_page()
        yield lambda path: (p.goto(base + path), p.wait_for_load_state("load"), p)[-1]


@pytest.mark.browser
def test_each_language_is_set_in_its_own_font(page):
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


@pytest.mark.slow
def test_site_links_its_pdfs_and_the_pdf_names_the_site(example_site, tmp_path):
    """tools/build --pdf writes the report's PDFs into the site and links them from every page of the report;
    the PDF names the web edition: a local preview's address (the example's site_url) is not printed, the PDF
    says it comes from a local build."""
    import subprocess

    from conftest import run_tool
    from kansoku import words

    db, _ = example_site
    out = tmp_path / "public"
    run_tool("build", "--db", db, "--out", out, "--generated", tmp_path / "gen", "--pdf", "example", check=True)
    for lang in ("ja", "en"):
        pdf = out / "pdf" / f"example.{lang}.pdf"
        assert pdf.read_bytes()[:5] == b"%PDF-"
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        # the spec's site_url is a local preview: no address a reader cannot open, the front page says so
        assert "127.0.0.1:1313" not in text
        assert re.sub(r"\s+", "", words.t(lang, "pdf_local_build")) in re.sub(r"\s+", "", text)
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
    assert rows[0] == ["series", "x", "y", "min", "max", "n"]  # the spread columns of a table's CSV
    runs = independent_runs("read")
    names = {"checksums off": "checksums-off", "checksums on": "checksums-on"}
    points = {(names[s], x): float(y) for s, x, y, *_ in rows[1:]}
    assert points == {k: pytest.approx(statistics.median(v)) for k, v in runs.items()}
    spread = {(names[s], x): (float(lo), float(hi), int(n)) for s, x, _, lo, hi, n in rows[1:]}
    assert spread == {k: (pytest.approx(min(v)), pytest.approx(max(v)), len(v)) for k, v in runs.items()}


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
    assert figure_csv(fig).splitlines() == ["series,x,y,min,max,n", "'=run 1,1,100.5,,,", "'=run 1,2,0.3,,,"]


# -- charts: hover, ticks, legend and toolbar (charts) -----------------------------------------------

def _chart(p, fig_id: str):
    p.wait_for_selector(f'div.chart[data-figure="{fig_id}"][data-rendered="true"]', timeout=30000)
    return f'document.querySelector(\'div.chart[data-figure="{fig_id}"]\')'


@pytest.mark.browser
def test_line_chart_hover_names_its_axes_and_prints_the_tables_digits(page):
    """Hovering a point of figure 1.1 reads "Clients: 2", "TPS …: <median as table 1.1 prints it>" and the
    runs' range with their number: no markup, no plotly default "(2, 842.6058)"."""
    import statistics
    from decimal import ROUND_HALF_UP, Decimal

    from test_example_report import independent_runs

    p = page("/en/reports/example/scaleup/")
    div = _chart(p, "read-tps")
    data = p.evaluate(f"{div}.data.map(t => ({{name: t.name, x: t.x}}))")
    y_title = p.evaluate(f"{div}.layout.yaxis.title.text")
    runs = independent_runs("read")
    names = {"checksums off": "checksums-off", "checksums on": "checksums-on"}
    checked = 0
    for curve, tr in enumerate(data):
        for point, x in enumerate(tr["x"]):
            p.wait_for_timeout(120)  # plotly throttles hover events
            p.evaluate(f"Plotly.Fx.hover({div}, [{{curveNumber: {curve}, pointNumber: {point}}}])")
            text = p.evaluate(f"{div}.querySelector('.hoverlayer').textContent")
            vals = runs[(names[tr["name"]], str(x))]
            # table 1.1 prints TPS with 2 decimals, rounded half away from zero
            table_text = str(Decimal(str(statistics.median(vals))).quantize(Decimal("0.01"), ROUND_HALF_UP))
            assert f"Clients: {x}" in text, text
            assert f"{y_title}: {table_text}" in text, text
            assert f"{min(vals):.2f}–{max(vals):.2f} (n = {len(vals)})" in text, text
            assert "<br>" not in text and "<extra>" not in text and "n=" not in text
            assert not re.search(r"\d+\.\d{3,}", text), text  # no more digits than the table prints
            checked += 1
    assert checked >= 4
    # the hover of the percentile chart and of the per-second chart name their axes too
    ja = page("/ja/reports/example/scaleup/")
    div = _chart(ja, "update-tps-per-second")
    ja.evaluate(f"Plotly.Fx.hover({div}, [{{curveNumber: 0, pointNumber: 3}}])")
    text = ja.evaluate(f"{div}.querySelector('.hoverlayer').textContent")
    assert "実行開始からの時間" in text or "経過" in text, text
    assert "<br>" not in text and "TPS" in text


def _tick_boxes(p, div: str) -> list[dict]:
    return p.evaluate(f"""[...{div}.querySelectorAll('.xtick text')].map(t => {{
        const r = t.getBoundingClientRect(); return {{text: t.textContent, l: r.left, r: r.right}}; }})""")


@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(1280, 900), (390, 844)])
def test_client_count_ticks_sit_at_the_measured_values_and_never_touch(page, width, height):
    """"1 2" must not read "12": every line chart against clients has one tick per measured value and no
    two tick labels touch, on a desktop and on a phone."""
    checked = 0
    for path in ("/en/reports/example/scaleup/", "/en/reports/past-fy2013/scaleup/"):  # linear, log axes
        p = page(path)
        p.set_viewport_size({"width": width, "height": height})
        p.reload()
        p.wait_for_load_state("load")
        figs = p.evaluate("[...document.querySelectorAll('div.chart[data-figure]')].map(d => d.dataset.figure)")
        for fig_id in figs:
            div = _chart(p, fig_id)
            title = p.evaluate(f"({div}.layout.xaxis.title || {{}}).text || ''")
            if title != "Clients":
                continue
            xs = p.evaluate(f"[...new Set({div}.data.flatMap(t => (t.x || []).map(String)))]")
            vals = p.evaluate(f"({div}._fullLayout.xaxis._vals || []).map(v => String(v.x))")
            boxes = [b for b in _tick_boxes(p, div) if b["text"]]
            labels = [b["text"].replace(",", "") for b in boxes]
            if p.evaluate(f"{div}._fullLayout.xaxis.type") == "category":
                assert sorted(labels) == sorted(xs), (fig_id, labels, xs)  # every measured value, evenly spaced
            else:  # a tick at each measured value, only there; labels only at measured values
                log = p.evaluate(f"{div}._fullLayout.xaxis.type") == "log"
                ticks = {round(10 ** float(v) if log else float(v), 6) for v in vals}
                assert ticks == {float(x) for x in xs}, (fig_id, vals, xs)
                assert set(labels) <= set(xs) and len(labels) >= len(xs) / 2, (fig_id, labels, xs)
            boxes.sort(key=lambda b: b["l"])
            for a, b in zip(boxes, boxes[1:]):
                assert b["l"] - a["r"] >= 3, (path, fig_id, width, a, b)
            checked += 1
    assert checked >= 3
    p.set_viewport_size({"width": 1280, "height": 900})


def _overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(1280, 900), (390, 844)])
def test_legend_is_never_under_the_toolbar_nor_cut(page, width, height):
    """The plotly toolbar (shown on hover) and the legend are placed apart on every chart of the chapters,
    and the legend lies inside its chart's box (not cut off)."""
    checked = 0
    for path in ("/ja/reports/example/scaleup/", "/en/reports/example/syscalls/", "/en/reports/example/disk/"):
        p = page(path)
        p.set_viewport_size({"width": width, "height": height})
        p.reload()
        p.wait_for_load_state("load")
        figs = p.evaluate("[...document.querySelectorAll('div.chart[data-figure]')].map(d => d.dataset.figure)")
        for fig_id in figs:
            div = _chart(p, fig_id)
            p.evaluate(f"{div}.scrollIntoView()")
            p.hover(f'div.chart[data-figure="{fig_id}"] .nsewdrag', force=True)
            rects = p.evaluate(f"""(() => {{ const d = {div}; const box = e => e && e.getBoundingClientRect().toJSON();
                return {{bar: box(d.querySelector('.modebar')), legend: box(d.querySelector('g.legend')),
                         chart: box(d), shown: getComputedStyle(d.querySelector('.modebar-container') || d).opacity}}; }})()""")
            if not rects["legend"]:
                continue  # a chart without a legend (small multiples)
            assert rects["bar"] and rects["bar"]["width"] > 0, fig_id
            assert not _overlap(rects["bar"], rects["legend"]), (path, fig_id, width, rects)
            c, lg = rects["chart"], rects["legend"]
            assert lg["left"] >= c["left"] - 1 and lg["right"] <= c["right"] + 1 and lg["bottom"] <= c["bottom"] + 1, \
                (path, fig_id, width, rects)
            checked += 1
    assert checked >= 5
    p.set_viewport_size({"width": 1280, "height": 900})


def test_many_series_make_a_taller_figure_with_a_smaller_legend():
    """A legend that scales: twenty series do not squeeze the plot (the figure grows by the legend's rows)."""
    from kansoku.model import ChartData
    from kansoku.render.charts import draw

    def chart(n: int) -> dict:
        traces = [{"x": [1, 2, 4], "y": [1.0, 2.0, 3.0], "n": [1] * 3, "runs": [[]] * 3, "transcribed": [False] * 3,
                   "lo": [None] * 3, "hi": [None] * 3, "y_text": ["1.00", "2.00", "3.00"]} for _ in range(n)]
        words = {lang: {"names": [f"series number {i}" for i in range(n)], "x": [None] * n,
                        "hover": [["1 run"] * 3] * n, "x_title": "Clients", "y_title": "TPS"} for lang in ("ja", "en")}
        data = {"bar": False, "numeric_x": True, "x_ticks": [1, 2, 4], "traces": traces, "spread": False}
        return draw(ChartData("line", {}, data, words), "en")

    few, many = chart(2), chart(20)
    assert (few["layout"].get("height") or 450) == 450
    assert many["layout"]["height"] > 520 and many["layout"]["legend"]["font"]["size"] < 13
    assert many["layout"]["legend"]["y"] == 0 and many["layout"]["legend"]["yref"] == "container"


def test_log_axes_get_enough_ticks_and_bar_labels_fit():
    from kansoku.render.charts._draw import crowded, log_ticks

    assert log_ticks([120, 950]) == [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
    assert len(log_ticks([3, 40000])) >= 10
    assert crowded([1, 2, 4, 8, 16, 32, 64]) and not crowded([1, 2, 4, 8])


# -- appendix and home page ----------------------------------------------------------------------

def test_appendix_groups_runs_by_configuration(example_site):
    """The settings that differ between runs are one column per configuration, not a "(study=…, 12 runs)"
    repeated on every row; runs without a PostgreSQL server (fio) are named once."""
    _, public = example_site
    for lang in ("ja", "en"):
        html = (public / lang / "reports/example/appendix/index.html").read_text(encoding="utf-8")
        rows = re.findall(r'<tr><th scope="row"><code>([^<]+)</code></th>(.*?)</tr>', html, re.S)
        names = [n for n, _ in rows]
        assert names and len(names) == len(set(names)), "each setting once"
        for _, cells in rows:
            assert not re.search(r"\(\s*\w+=[^,)]+,\s*\d+", cells), cells  # no "(study=fio, 12 runs)" in a cell
        assert html.count("study=fio") <= 2, html.count("study=fio")
        if "env-settings-varying" in html:
            head = re.search(r'<table class="plain env-settings env-settings-varying">\s*<thead>(.*?)</thead>', html, re.S)
            assert head.group(1).count("<th") >= 3  # a parameter column and at least two configurations


def test_home_page_says_the_year_once(example_site):
    """A title that already says its fiscal year ("2017年度 WG1 …", "FY2017 …") is not preceded by it again."""
    _, public = example_site
    for lang in ("ja", "en"):
        html = (public / lang / "index.html").read_text(encoding="utf-8")
        items = re.findall(r'<ul class="report-list">(.*)</ul>', html, re.S)[0]
        links = re.findall(r"<a href=[^>]+>(.*?)</a>", items, re.S)
        assert len(links) >= 3
        for link in links:
            fy = re.search(r'<span class="fy">(.*?)</span>', link)
            title = re.search(r'<span class="report-title">(.*?)</span>', link).group(1)
            if fy:
                assert fy.group(1).replace(" ", "") not in title.replace(" ", ""), link
        flat = re.sub(r"<[^>]+>|\s+", "", items)
        assert flat.count("2017年度" if lang == "ja" else "FY2017") == 1
    assert "2017 年度 2017年度" not in (public / "ja/index.html").read_text(encoding="utf-8")


def test_trends_page_names_factors_and_values_as_the_reports_do(example_site):
    """The cross-year view's factors carry the names and value labels the report specs give them: no factor
    key ("checksums") heads a column of its runs, and no value with a label ("checksums-off", "read-custom")
    is printed raw in what was compared or in a point's condition."""
    import duckdb

    db, public = example_site
    trends = json.loads((db.parent / "generated" / "data" / "trends.json").read_text(encoding="utf-8"))
    con = duckdb.connect(str(db), read_only=True)
    try:
        for f in trends["figures"]:
            rows = con.execute("SELECT DISTINCT factor, value FROM run_factors WHERE run_id IN "
                               "(SELECT unnest(?::VARCHAR[]))", [f["runs"]]).fetchall()
            keys = {k for k, _ in rows}
            assert "checksums" in keys  # the run transcribed with this factor is in the view
            for name in f["prov"]["factors"]:
                for lang in ("ja", "en"):
                    assert name[lang] not in keys or name[lang] == "version", (name, keys)
            for lang in ("ja", "en"):
                shown = f["trend"]["compared"][lang] + " | " + " | ".join(r[4] for r in f["trend"]["rows"][lang])
                for raw in ("checksums-off", "read-custom", "checksums: "):
                    assert raw not in shown, (raw, shown)
    finally:
        con.close()
    for lang in ("ja", "en"):
        page = (public / lang / "trends/index.html").read_text(encoding="utf-8")
        # a measured machine in the words of a chapter's machines block: virtual CPUs, a virtio disk (its
        # hypervisor's "rotational" flag is no spinning drive)
        text = re.sub(r"<script.*?</script>|<[^>]+>", " ", page, flags=re.S)
        assert "vCPU" in text and "virtio" in text and "回転型" not in text and "rotational" not in text
        # (a run's id, in a title or a script, is its directory: not a reader's word)
        assert ">checksums<" not in page and "checksums-off" not in re.sub(r"<script.*?</script>|(?:data-[a-z]+|title)=\"[^\"]*\"", "", page, flags=re.S)


# -- the PDF: data-sources appendix, the site's address, wide tables ------------------------------

def _pdf_text(pdf: Path, *args: str) -> str:
    import subprocess

    out = subprocess.run(["pdftotext", *args, str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return out.replace("\u200b", "").replace("\u2060", "").replace("\u00a0", " ")


@pytest.fixture(scope="module")
def example_pdfs(example_pdfs_all):
    """The example report's PDFs, built once per session with the others (conftest.example_pdfs_all)."""
    return example_pdfs_all["example"]


@pytest.mark.slow
def test_pdf_lists_its_data_sources_with_one_digest_and_the_sites_address(example_site, example_pdfs):
    """The PDF's last appendix names, for every table and figure, its runs; instead of pages of file hashes it
    prints one digest, that of the manifest of every raw file (computed here from the published manifest),
    and the manifest's address; it gives the address of the site's data-sources page, and the "how to read"
    text says the appendix is there."""
    import hashlib

    from kansoku import words

    _, public = example_site
    manifest = (public / "raw/example/SHA256SUMS").read_bytes()
    digest = hashlib.sha256(manifest).hexdigest()
    a_file = manifest.split(b" ", 1)[0].decode()
    rep = json.loads((example_site[0].parent / "generated" / "data" / "reports" / "example.json").read_text("utf-8"))
    labels = {lang: [item["label"][lang] for ch in rep["chapters"] for kind in ("tables", "figures")
                     for item in ch[kind].values()] for lang in example_pdfs}
    assert all(len(v) >= 20 for v in labels.values()), labels
    for lang, pdf in example_pdfs.items():
        text = _pdf_text(pdf)
        title = words.t(lang, "pdf_sources_title")
        start = text.index(title, text.index(title) + 1)  # after its entry in the contents
        appendix = re.sub(r"\s+", "", text[start:])
        # a local build's PDF (the example's site_url is a local preview) prints the paths within the site
        assert f"{lang}/reports/example/sources/" in appendix and "127.0.0.1" not in appendix
        assert "raw/example/SHA256SUMS" in appendix
        assert re.findall(r"[0-9a-f]{16,}", appendix) == [digest]  # one digest, no file's hash
        assert a_file[:12] not in appendix
        # every table and figure of this report (the prose also cites past reports' tables: not these)
        for label in labels[lang]:
            assert label in re.sub(r"\s+", " ", text[:start]), label
            assert re.sub(r"\s+", "", label) in appendix, label
        assert re.search(r"R1[–,]", appendix)
        name = title.split(":")[-1].strip().lower().replace(" ", "")  # "datasources", "元データ"
        assert name in re.sub(r"\s+", "", text[:start]).lower()  # named in "how to read"


def test_sources_manifest_verifies_the_published_raw_files(example_site, tmp_path):
    """The manifest beside a report's published raw files lists every file the sources page lists, one line
    each as sha256sum prints it, and ``sha256sum -c`` run there verifies every one of them; the sources page
    links it and prints its digest."""
    import hashlib
    import subprocess

    _, public = example_site
    raw = public / "raw/example"
    manifest = (raw / "SHA256SUMS").read_text(encoding="utf-8")
    lines = manifest.splitlines()
    listed = {line.split("  ", 1)[1] for line in lines}
    published = {str(p.relative_to(raw)) for p in raw.rglob("*") if p.is_file() and p.name != "SHA256SUMS"}
    assert len(lines) > 100 and listed == published
    done = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=raw, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-500:] + done.stderr[-500:]
    assert done.stdout.count(": OK\n") == len(lines)
    digest = hashlib.sha256(manifest.encode("utf-8")).hexdigest()
    for lang in ("ja", "en"):
        page = (public / lang / "reports/example/sources/index.html").read_text(encoding="utf-8")
        assert re.search(r'<a href="[^"]*/raw/example/SHA256SUMS" download>', page)
        assert f'<code class="sha">{digest}</code>' in page
        assert f"{len(lines)}" in re.search(r'<p class="sources-manifest">(.*?)</p>', page, re.S).group(1)
    # a file changed after publishing is what the check exists to catch
    copy = tmp_path / "raw"
    subprocess.run(["cp", "-r", str(raw), str(copy)], check=True)
    victim = copy / sorted(listed)[0]
    victim.unlink()
    victim.write_bytes(b"changed\n")
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=copy, capture_output=True).returncode == 1


def _wide_spec(tmp_path: Path, metrics: list[str], rep_id: str) -> Path:
    src = (Path(__file__).resolve().parents[1] / "data" / "reports" / "example.toml").read_text(encoding="utf-8")
    head = src[:src.index("[[chapter]]")].replace('id = "example"', f'id = "{rep_id}"')
    head = re.sub(r'chapters = \[[^\]]*\]', 'chapters = ["wide"]', head)
    specs = tmp_path / "specs"
    specs.mkdir(exist_ok=True)
    (specs / f"{rep_id}.toml").write_text(head + f'''
[[chapter]]
id = "wide"
title = {{ ja = "広い表", en = "A wide table" }}

[[chapter.table]]
id = "wide"
caption = {{ ja = "多くの列", en = "Many columns" }}
metrics = {json_list(metrics)}
where = {{ campaign = "example-2026-11", study = "scaleup", workload = "update", rep = ["1", "2", "3"] }}
rows = "clients"
columns = "config"
aggregate = "median"
count = true
digits = {{ default = 2 }}
''', encoding="utf-8")
    return specs


def json_list(xs: list[str]) -> str:
    return "[" + ", ".join(f'"{x}"' for x in xs) + "]"


@pytest.mark.slow
def test_wide_tables_turn_the_page_or_split_instead_of_shrinking(example_site, tmp_path):
    """A table wider than the page is set on a landscape page, and one wider than that is split by columns
    with its row labels repeated: the text stays at 8 pt or more (a 7 pt block was unreadable)."""
    import subprocess

    from conftest import run_tool

    db, _ = example_site
    # (every column a median: numbers, not the long "not measured" of a representative run
    # without a transaction log, so wide1 needs two columns more than it did to be wider than a portrait page)
    cases = {"wide1": ["tps", "cpu_idle_pct", "latency_avg_ms", "latency_p50_ms", "latency_p90_ms", "latency_p95_ms",
                       "latency_stddev_ms"],
             "wide2": ["tps", "cpu_idle_pct", "latency_avg_ms", "latency_p50_ms", "latency_p90_ms", "latency_p95_ms",
                       "latency_p99_ms", "cpu_usr_pct", "cpu_sys_pct", "cpu_iowait_pct"]}
    for rep_id, metrics in cases.items():
        specs = _wide_spec(tmp_path, metrics, rep_id)
        pdf = tmp_path / f"{rep_id}.en.pdf"
        run_tool("pdf", rep_id, "--lang", "en", "--db", db, "--specs", specs, "--out", pdf, check=True, timeout=600)
        info = subprocess.run(["pdfinfo", "-f", "1", "-l", "99", str(pdf)], capture_output=True, text=True,
                              check=True).stdout
        sizes = re.findall(r"Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)", info)
        landscape = [int(n) for n, w, h in sizes if float(w) > float(h)]
        assert landscape, f"{rep_id}: no landscape page"
        page_text = _pdf_text(pdf, "-f", str(landscape[0]), "-l", str(landscape[-1]))
        assert "Many columns" in page_text
        if rep_id == "wide2":
            assert "part 1 of" in page_text and "part 2 of" in page_text
        # glyph size: the table's numbers are drawn at 8 pt or more (pdftotext -bbox gives each word's box)
        bbox = _pdf_text(pdf, "-bbox", "-f", str(landscape[0]), "-l", str(landscape[0]))
        heights = [float(y2) - float(y1) for y1, y2, w in re.findall(
            r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([\d,]+\.\d\d)</word>', bbox)]
        assert heights and min(heights) >= 8 * 1.1, (rep_id, min(heights or [0]))


@pytest.mark.parametrize("rid", REPORT_SPECS)
def test_a_chapter_is_called_the_same_everywhere(example_site, rid):
    """The spec's chapter title (the cover's key results, a study's name) is the title of the chapter's page
    (the navigation, the contents): one chapter, one name."""
    rep = computed_report(example_site[0], ROOT / "data" / "reports" / f"{rid}.toml")
    pages = {p.id: p for p in rep.pages if p.kind == "chapter"}
    for ch in rep.chapters:
        for lang in ("ja", "en"):
            assert pages[ch.id].title[lang] == ch.title[lang], (ch.id, lang)
