"""Numbers a reader can trust: spread in the table CSV and (spec spread = "range") in the PDF,
steady-state notes on the cells whose runs drift or stall (each note listed once per table), the generated
methods page the comparison legends point to, and the honest cross-year view (comparable runs only;
machine, run length and origin per point; no line between machines; years without data and why; table and
CSV under the chart), and citations that name the original report, not a file.

Checked on the example site (conftest.example_site: data/runs + data/published, a real build), on real
PDFs (pdftotext), and on synthetic per-second series whose truth is known (steady notes)."""

from __future__ import annotations

import csv
import io
import json
import random
import re
import shutil
import subprocess
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import REPORT_HEAD, ROOT, computed_report, run_tool

NBSP = "\u00a0"


def read_csv(p: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(p.read_text(encoding="utf-8-sig"))))


def report_json(example_site, rid: str) -> dict:
    db, _ = example_site
    return json.loads((db.parent / "generated" / "data" / "reports" / f"{rid}.json").read_text("utf-8"))


# -- spread in the table CSV ------------------------------------------------------------------------------

def test_table_csv_carries_min_max_and_n_beside_each_aggregate(example_site):
    """Beside every aggregated column: the runs' min, max and n, equal to the runs CSV of the same table."""
    _, public = example_site
    checked = 0
    for lang, suffix in (("en", " (min over runs)"), ("ja", " (実行間の最小)")):
        for table_csv in sorted((public / "csv" / "example").glob(f"*.{lang}.csv")):
            if ".runs." in table_csv.name or table_csv.name.startswith("figure-"):
                continue
            rows = read_csv(table_csv)
            head = rows[0]
            mins = [i for i, h in enumerate(head) if h.endswith(suffix)]
            if not mins:
                continue
            runs = defaultdict(list)
            for row, col, _, v in read_csv(table_csv.with_name(table_csv.name.replace(f".{lang}.", f".runs.{lang}.")))[1:]:
                runs[(row, col)].append(float(v))
            for i in mins:
                label = head[i - 1]
                assert head[i][: -len(suffix)] == label
                # the table CSV's column says its aggregation ("TPS (checksums off) [median]"); the runs CSV
                # lists each run's own value under the column's plain label
                plain = re.sub(r" \[[^\]]+\]$", "", label)
                for row in rows[1:]:
                    if not row[i]:
                        continue
                    vals = runs[(row[0], plain)]
                    assert vals, (table_csv.name, row[0], label)
                    assert float(row[i]) == pytest.approx(min(vals)) and float(row[i + 1]) == pytest.approx(max(vals))
                    assert int(row[i + 2]) == len(vals) >= 1
                    assert float(row[i]) <= float(row[i - 1]) <= float(row[i + 1])  # the median lies inside
                    checked += 1
    assert checked >= 10


# -- spread printed in the PDF and on the site (spec spread = "range") -----------------------------------

@pytest.fixture(scope="module")
def spread_build(example_site, tmp_path_factory):
    """The example report with spread = "range" on its first table: a site build and the English PDF."""
    db, _ = example_site
    base = tmp_path_factory.mktemp("spread")
    specs = base / "specs"
    shutil.copytree(ROOT / "data" / "reports", specs)  # every report (their prose pages need their specs)
    text = (ROOT / "data" / "reports" / "example.toml").read_text(encoding="utf-8")
    assert "[[chapter.table]]\n" in text
    (specs / "example.toml").write_text(text.replace("[[chapter.table]]\n", "[[chapter.table]]\nspread = \"range\"\n", 1),
                                        encoding="utf-8")
    out = base / "public"
    run_tool("build", "--db", db, "--out", out, "--generated", base / "gen", "--specs", specs, check=True)
    run_tool("pdf", "example", "--lang", "en", "--db", db, "--out", base / "pdf" / "example.en.pdf", "--specs", specs,
             check=True, timeout=600)
    rep = json.loads((base / "gen" / "data" / "reports" / "example.json").read_text("utf-8"))
    return rep, out, base / "pdf" / "example.en.pdf"


def _printed_tables(rep: dict) -> list[dict]:
    """The tables that print each aggregate's range under it (not only on demand)."""
    return [t for ch in rep["chapters"] for t in ch["tables"].values()
            if any(not x["on_demand"] for row in t["view"]["en"]["rows"] for c in row["cells"] for x in c["lines"])]


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils not installed")
@pytest.mark.slow
def test_spread_range_is_printed_under_the_median_in_the_pdf_and_on_the_site(spread_build):
    rep, out, pdf = spread_build
    spec = tomllib.loads((ROOT / "data" / "reports" / "example.toml").read_text(encoding="utf-8"))
    declared = {t["id"] for ch in spec["chapter"] for t in ch.get("table", []) if t.get("spread") == "range"}
    tables = {t["id"]: t for t in _printed_tables(rep)}
    # the first table (switched on by the fixture) and those the example spec itself prints; no other
    assert "read-tps" not in declared and set(tables) == declared | {"read-tps"}
    t = tables["read-tps"]
    view = t["view"]["en"]  # what the table shows (render/views.py)
    ranges = [x["text"].strip("[]") for row in view["rows"] for c in row["cells"] for x in c["lines"]
              if not x["on_demand"]]
    assert ranges, "no aggregated cell with two runs or more"
    for row in view["rows"]:  # every aggregated cell of two runs or more has it, and it brackets the value
        for c in row["cells"]:
            if "value" in c["css"].split() and c["title"]:  # its hover: the runs' spread
                (line,) = [x for x in c["lines"] if not x["on_demand"]]
                lo, hi = (float(x) for x in line["text"].strip("[]").split("–"))
                assert lo <= float(c["text"].replace(",", "")) <= hi
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    flat = re.sub(r"\s+", "", text.replace(NBSP, " "))
    for r in ranges:
        assert f"[{r}]" in flat, r
    # the other tables keep the range off the page: on the site it is behind the spread switch (cell-spread)
    others = {(ch["id"], x["text"][1:x["text"].index("]")]) for ch in rep["chapters"] for tt in ch["tables"].values()
              if tt not in _printed_tables(rep) for row in tt["view"]["en"]["rows"] for c in row["cells"]
              for x in c["lines"] if x["on_demand"] and x["text"].startswith("[")}
    assert others
    for ch_id, r in others:
        page = (out / "en" / "reports" / "example" / ch_id / "index.html").read_text(encoding="utf-8")
        assert f'<span class="cell-range cell-spread">[{r}] n = ' in page, r
        if r not in ranges:
            assert f'<span class="cell-range">[{r}]</span>' not in page, r
    # on the site, under the median
    chapter = next(ch for ch in rep["chapters"] if t["id"] in ch["tables"])
    html = (out / "en" / "reports" / "example" / chapter["id"] / "index.html").read_text(encoding="utf-8")
    for r in ranges:
        assert f'<span class="cell-range">[{r}]</span>' in html


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils not installed")
@pytest.mark.slow
def test_pdf_has_the_methods_section_and_the_legends_point_to_it(spread_build):
    rep, _, pdf = spread_build
    text = re.sub(r"\s+", " ", subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                                              check=True).stdout.replace(NBSP, " "))
    notes = rep["views"]["methods"]["en"]["notes"]
    assert notes
    for m in notes:
        assert m["title"] in text
    assert "rank-sum test (level 0.1)" in text
    assert "Method, level and runs: see “Methods”." in text


def test_spread_option_is_declared_and_checked(example_site, tmp_path):
    from kansoku.spec.schema import schema

    db, _ = example_site
    s = json.dumps(schema())
    assert '"range"' in s and "spread" in s
    spec = (ROOT / "data" / "reports" / "example.toml").read_text(encoding="utf-8")
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "data" / "reports", specs)
    bad = specs / "example.toml"
    bad.write_text(spec.replace("[[chapter.table]]\n", "[[chapter.table]]\nspread = \"ranges\"\n", 1), encoding="utf-8")
    p = run_tool("build", "--specs", specs, "--db", db, "--out", tmp_path / "o", "--generated", tmp_path / "g")
    assert p.returncode == 3 and "spread" in p.stderr, p.stderr


# -- the methods page ----------------------------------------------------------------------------------

def test_methods_page_states_method_level_change_interval_and_runs(example_site):
    _, public = example_site
    db, _ = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / "example.toml")
    runs = {len(c.runs) for t in rep.tables() for row in t.rows for c in row if c.kind == "value" and c.runs}
    for lang, needles in (("en", ["rank-sum test (level 0.1)", "at least 2 %", "bootstrap", "Runs per condition"]),
                          ("ja", ["順位和検定 (有意水準 0.1)", "ブートストラップ", "実行数"])):
        html = (public / lang / "reports" / "example" / "methods" / "index.html").read_text(encoding="utf-8")
        for n in needles:
            assert n in html, (lang, n)
        span = str(min(runs)) if min(runs) == max(runs) else f"{min(runs)}–{max(runs)}"
        assert span in html
        # the example's runs have a steady state: the page says how it was found (steady.any_steady); a past
        # report's transcribed runs have none
        assert '<section id="method-steady">' in html
        past = (public / lang / "reports" / "past-fy2017" / "methods" / "index.html").read_text(encoding="utf-8")
        assert 'id="method-steady"' not in past
        # the comparison legends point to it
        chapter = (public / lang / "reports" / "example" / "scaleup" / "index.html").read_text(encoding="utf-8")
        assert re.search(r'<a class="methods-link" href="[^"]*methods/">', chapter)


# -- steady-state notes on cells, listed once -------------------------------------------------------------

def test_steady_notes_mark_the_cells_of_drifting_and_stalling_runs_once_per_table(tmp_db, tmp_path):
    from kansoku.analysis.table_kinds import compute_table
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store
    from test_steady import load_series, noisy

    rng = random.Random(17)
    series, factors = {}, []
    for clients in (1, 2, 4):
        for rep in (1, 2, 3):
            run = f"clients={clients}/rep={rep}"
            tps = noisy(rng, 1000.0 * clients, 0.02, 60)
            if (clients, rep) in ((1, 1), (2, 2)):  # +30 % over the run
                tps = [v * (1 + 0.3 * i / 59) for i, v in enumerate(tps)]
            if (clients, rep) == (2, 3):  # a checkpoint-like dip
                tps[29:33] = [50.0, 40.0, 60.0, 45.0]
            series[run] = tps
            factors += [{"run_id": run, "factor": "clients", "value": str(clients), "origin": "path"},
                        {"run_id": run, "factor": "rep", "value": str(rep), "origin": "path"},
                        {"run_id": run, "factor": "study", "value": "steady", "origin": "path"}]
    load_series(tmp_db, series)
    st = open_store(tmp_db)
    st.insert_rows("run_factors", factors)
    st.close()
    spec = tmp_path / "t.toml"
    spec.write_text("\n" + REPORT_HEAD + """[[chapter]]
id = "c"
title = "C"
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps_steady"
rows = "clients"
where = { study = "steady" }
cell_notes = [{ row = 1, note = { ja = "同じ注", en = "the same note" } },
              { row = 4, note = { ja = "同じ注", en = "the same note" } }]
""", encoding="utf-8")
    report = load_report(spec)
    store = open_store(tmp_db, read_only=True)
    try:
        t = compute_table(store, report, report.item("x")).to_model()
    finally:
        store.close()
    notes = {n.text["en"]: n for n in t.notes}
    assert len(notes) == len(t.notes) == len({n.mark for n in t.notes}) == 3, [n.text["en"] for n in t.notes]
    drift = next(n for n in t.notes if "drift" in n.text["en"])
    stall = next(n for n in t.notes if "stall" in n.text["en"])
    same = notes["the same note"]
    by_row = {row[0].text["en"]: row[1] for row in t.rows}
    assert drift in by_row["1"].notes and drift in by_row["2"].notes and drift not in by_row["4"].notes
    assert stall in by_row["2"].notes and stall not in by_row["1"].notes and stall not in by_row["4"].notes
    assert same in by_row["1"].notes and same in by_row["4"].notes and same not in by_row["2"].notes
    assert drift.text["en"].startswith("Steady state: 2 runs") and "+" in drift.text["en"]
    assert stall.text["en"].startswith("Steady state: 1 run ")
    assert "定常状態" in drift.text["ja"]


def test_steady_notes_reach_the_site_and_pdf_marks(example_site):
    """Every table note of the example is listed once and used by a cell; a cell's marks name listed notes."""
    rep = report_json(example_site, "example")
    for ch in rep["chapters"]:
        for t in ch["tables"].values():
            for view in t["view"].values():  # what the table shows in each language (render/views.py)
                marks = [n["mark"] for n in view["cell_notes"]]
                assert len(marks) == len(set(marks))
                texts = [n["text"] for n in view["cell_notes"]]
                assert len(texts) == len(set(texts))
                used = {m for row in view["rows"] for c in row["cells"] for m in c["notes"]}
                assert used == set(marks)


# -- citations and the footer of transcribed reports -------------------------------------------------------

def test_citations_name_the_original_report_not_a_file(example_site):
    db, public = example_site
    rep = computed_report(db, ROOT / "data" / "reports" / "past-fy2013.toml")
    cits = {c for t in rep.tables() for c in t.citations}
    assert cits
    for c in cits:
        assert ".txt" not in c and "seeds/" not in c, c
        # the original's place: a table, or a figure whose numbers the text states
        assert "FY2013 WG1 activity report (2014)" in c and re.search(r"[表図] \d", c), c
    for lang, needle in (("en", "transcribed from PGECons FY2013 WG1 activity report (2014)"),
                         ("ja", "PGECons 2013年度 WG1 活動報告書 (2014) からの転記")):
        html = (public / lang / "reports" / "past-fy2013" / "index.html").read_text(encoding="utf-8")
        footer = re.search(r'<footer class="site-footer">(.*?)</footer>', html, re.S).group(1)
        assert needle in footer, footer
    example = (public / "en" / "reports" / "example" / "index.html").read_text(encoding="utf-8")
    assert "footer-transcribed" not in example  # measured numbers: nothing to say


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils not installed")
def test_pdf_footer_of_a_transcribed_report_says_so(example_pdfs_all):
    pdf = example_pdfs_all["past-fy2013"]["en"]  # built once per session (conftest)
    pages = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True,
                           text=True, check=True).stdout.split("\f")[:-1]
    assert len(pages) > 3
    for p in pages:
        assert "transcribed from PGECons FY2013 WG1 activity report (2014)" in re.sub(r"\s+", " ", p)


# -- the cross-year view ------------------------------------------------------------------------------------

def _trend(public: Path, lang: str) -> tuple[str, dict]:
    page = (public / lang / "trends" / "index.html").read_text(encoding="utf-8")
    m = re.search(r'class="chart-data" data-for="peak-read-tps">(.*?)</script>', page, re.S)
    return page, json.loads(m.group(1))


def test_trend_points_say_machine_length_and_origin_and_lines_never_join_machines(example_site):
    _, public = example_site
    for lang in ("en", "ja"):
        _, fig = _trend(public, lang)
        traces = fig["data"]
        assert len(traces) >= 3
        names = [t["name"] for t in traces]
        assert any(n.startswith("PostgreSQL 15") for n in names), names
        assert any(n.startswith("PostgreSQL 9.2") for n in names) and any(n.startswith("PostgreSQL 9.3") for n in names)
        symbols = {}
        for t in traces:
            machines = {cd[3] for cd in t["customdata"]}
            assert len(machines) == 1, machines  # a line never joins two machines
            for cd in t["customdata"]:
                assert re.search(r"\d+ (s|秒) × \d+", cd[4]), cd[4]  # run length and runs
                assert ("transcribed" in cd[5] or "転記" in cd[5]) == ("-open" in t["marker"]["symbol"])
            symbols.setdefault(t["marker"]["symbol"].replace("-open", ""), set()).update(machines)
        assert all(len(m) == 1 for m in symbols.values()), symbols  # one marker shape per machine
        assert len(symbols) >= 2
        # points of one year sit side by side, never on top of each other
        xs = [x for t in traces for x in t["x"]]
        assert len(xs) == len(set(xs))
        assert len(fig["layout"]["yaxis"]["tickvals"]) >= 4
    _, fig = _trend(public, "en")
    cd = [c for t in fig["data"] for c in t["customdata"]]
    assert any("80 cores" in c[3] and "2 TB" in c[3] for c in cd)
    assert any("vCPUs" in c[3] and "GiB" in c[3] and "virtio disk" in c[3] for c in cd)
    assert any("300 s × 3 runs" in c[4] for c in cd)
    assert any(c[5] == "Origin: transcribed from PGECons FY2013 WG1 activity report (2014), 表 2.2, §2.3" for c in cd)


def test_trend_plots_only_what_the_config_declares_comparable(example_site):
    import tomllib

    import duckdb

    db, _ = example_site
    spec = tomllib.loads((ROOT / "config.toml").read_text(encoding="utf-8"))["params"]["trends"][0]
    trends = json.loads((db.parent / "generated" / "data" / "trends.json").read_text("utf-8"))
    fig = next(f for f in trends["figures"] if f["id"] == spec["id"])
    assert fig["runs"]
    con = duckdb.connect(str(db), read_only=True)
    try:
        for run in fig["runs"]:
            fs = dict(con.execute("SELECT factor, value FROM run_factors WHERE run_id = ?", [run]).fetchall())
            assert fs["study"] in spec["where"]["study"] and fs["workload"] in spec["where"]["workload"]
            c = spec["where"]["clients"]
            assert c["min"] <= float(fs["clients"]) <= c["max"]
        # runs of the same workload outside the declared studies exist and are left out
        other = con.execute("SELECT count(*) FROM run_factors f JOIN run_factors s USING (run_id) WHERE "
                            "f.factor = 'workload' AND f.value = 'read-custom' AND s.factor = 'study' AND "
                            "s.value NOT IN (SELECT unnest(?::VARCHAR[]))", [spec["where"]["study"]]).fetchone()[0]
        assert other > 0
        assert not set(fig["runs"]) & {r for (r,) in con.execute(
            "SELECT run_id FROM run_factors WHERE factor = 'study' AND value NOT IN (SELECT unnest(?::VARCHAR[]))",
            [spec["where"]["study"]]).fetchall()}
    finally:
        con.close()
    assert "pgbench scale 10, 1000" in fig["trend"]["compared"]["en"]


def test_trend_page_has_table_csv_and_years_without_data(example_site):
    _, public = example_site
    for lang, fy2017, lost in (("en", "FY2017", "charts"), ("ja", "2017 年度", "グラフ")):
        page, fig = _trend(public, lang)
        n_points = sum(len(t["x"]) for t in fig["data"])
        table = re.search(r'<figure class="kansoku-table trend-table"[^>]*>(.*?)</figure>', page, re.S).group(1)
        assert len(re.findall(r"<tr>", table)) == n_points + 1
        missing = re.search(r'<section class="trend-missing">(.*?)</section>', page, re.S).group(1)
        assert fy2017 in missing and lost in missing
        href = re.search(r'<a class="csv" download href="([^"]+)"', table).group(1)
        rows = read_csv((public / lang / "trends" / href).resolve() if not href.startswith("/")
                        else public / href.lstrip("/"))
        assert len(rows) == n_points + 1 and len(rows[0]) == 10
        for r in rows[1:]:
            assert float(r[3]) <= float(r[2]) <= float(r[4]) and int(r[5]) >= 1
            assert r[7] and r[8] and r[9]  # machine, run length, origin


@pytest.mark.browser
def test_trend_page_in_a_browser(example_site):
    """Drawn by plotly.js: one trace per (version, origin, machine), legend names the version."""
    import functools
    import http.server
    import threading

    pw_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    _, public = example_site

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(public)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with pw_api.sync_playwright() as pw:
            b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            p = b.new_page(viewport={"width": 1100, "height": 900})
            p.goto(f"http://127.0.0.1:{srv.server_address[1]}/en/trends/")
            p.wait_for_selector(".chart .main-svg", timeout=20000)
            legend = p.evaluate("[...document.querySelectorAll('.legendtext')].map(e => e.textContent)")
            traces = p.evaluate("document.querySelectorAll('.scatterlayer .trace').length")
            ticks = p.evaluate("[...document.querySelectorAll('.ytick text')].map(e => e.textContent)")
            b.close()
    finally:
        srv.shutdown()
    assert traces == len(legend) >= 3
    assert any(t.startswith("PostgreSQL 15") for t in legend) and not any(t.strip() == "15" for t in legend)
    assert len(ticks) >= 4
