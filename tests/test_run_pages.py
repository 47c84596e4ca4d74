"""A page for every run (and its per-second time series as CSV), on the example campaign: real
data, a real Hugo build (conftest.example_site), a real Chromium. Expectations come from the store and the
raw files, never from counts written here (the example is re-measured with other repetitions)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
import subprocess
import tomllib
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from conftest import REPORT_HEAD, ROOT, ro_con, run_tool
from site_helpers import served_in_chromium

CAMPAIGN = ROOT / "data" / "runs" / "example"
TPS_LINE = re.compile(r"^tps = ([0-9.]+) \((?:without initial connection time|excluding connections establishing)\)", re.M)
PROGRESS = re.compile(r"^progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms", re.M)
PROCESSED = re.compile(r"^number of transactions actually processed: (\d+)", re.M)


@pytest.fixture(scope="module")
def site(example_site):
    db, public = example_site
    gen = db.parent / "generated"
    rep = json.loads((gen / "data" / "reports" / "example.json").read_text(encoding="utf-8"))
    return db, public, gen, rep


def _report_runs(rep: dict) -> set[str]:
    """Every run behind a table or figure of the computed report (what the store selected for the spec)."""
    out = set()
    for ch in rep["chapters"]:
        for t in ch["tables"].values():
            out |= set(t["runs"])
        for f in ch["figures"].values():
            out |= set(f["runs"])
    return out


def _run_data(gen: Path, anchor: str) -> dict:
    """A run page's data, with what its condition's file holds for it (render/run_pages.py: its uses, machine,
    versions and settings)."""
    runs = gen / "assets" / "runs" / "example"
    data = json.loads((runs / f"{anchor}.json").read_text(encoding="utf-8"))
    cond = json.loads((runs / "conditions" / f"{data['cond']}.json").read_text(encoding="utf-8"))
    return {**data, **cond["shared"][data["shared"]]}


def _page(public: Path, lang: str, anchor: str) -> str:
    return (public / lang / "reports" / "example" / "runs" / f"{anchor}.html").read_text(encoding="utf-8")


def test_every_run_of_the_example_has_a_page(site):
    db, public, gen, rep = site
    runs = _report_runs(rep)
    assert runs and set(rep["runs"]) == runs
    with ro_con(db) as con:  # the runs are the store's, and the example has measured runs of every study
        stored = {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}
    assert runs <= stored
    for lang in ("ja", "en"):
        pages = sorted((public / lang / "reports" / "example" / "runs").glob("*.html"))
        assert len(pages) == len(runs), lang
        for run_id, info in rep["runs"].items():
            html = _page(public, lang, info["anchor"])
            assert f'<code class="run-id">{run_id}</code>' in html
            assert f'lang="{lang}"' in html
            # its title in words: the study and what its condition varied, its repetition; never key=value
            h1 = re.sub(r"<[^>]+>", "", re.search(r"<h1>(.*?)</h1>", html, re.S).group(1))
            assert "=" not in h1 and run_id not in h1, h1
            if "rep" in info["factors"]:
                assert ("回目" if lang == "ja" else "run ") in h1, h1


def _condition(rep: dict, run_id: str) -> list[str]:
    key = {f: v for f, v in rep["runs"][run_id]["factors"].items() if f != "rep"}
    return [r for r, info in rep["runs"].items()
            if {f: v for f, v in info["factors"].items() if f != "rep"} == key]


def _raw_tps(run_id: str) -> float | None:
    log = CAMPAIGN / run_id / "pgbench.log"
    m = TPS_LINE.search(log.read_text()) if log.is_file() else None
    return float(m.group(1)) if m else None


def _metric_row(html: str, metric: str) -> list[str]:
    m = re.search(rf'<tr data-metric="{metric}">(.*?)</tr>', html, re.S)
    assert m, metric
    return [c.strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", m.group(1), re.S)]


def _close(printed: str, value: float) -> bool:
    """``printed`` is ``value`` rounded to the decimals it shows."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(float(printed) - value) <= 0.5 * 10 ** -decimals + 1e-9


def test_a_conditions_median_and_range_read_the_same_on_each_of_its_pages_with_no_needless_decimals(site):
    """A condition's median, min–max and count are one text on every page of it (its file holds them once), with
    no trailing zero all three print ("0.0–0.4", not "0.0000–0.4000" because one run's value is 0.0333); a
    run's own value keeps the digits it needs."""
    _, public, _, rep = site
    shown: dict[tuple, set] = {}
    for run_id, info in sorted(rep["runs"].items()):
        html = _page(public, "en", info["anchor"])
        cond = tuple(sorted(_condition(rep, run_id)))
        for m in re.finditer(r'<tr data-metric="([^"]+)">(.*?)</tr>', html, re.S):
            cells = [c.strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", m.group(2), re.S)]
            value, median, rng, n = cells[1:]
            shown.setdefault((cond, m.group(1)), set()).add((median, rng, n))
            three = [median, *rng.split("–")]
            decimals = {len(x.split(".")[1]) if "." in x else 0 for x in three}
            assert len(decimals) == 1, (run_id, m.group(1), three)
            if decimals != {0}:
                assert not all(x.endswith("0") for x in three), (run_id, m.group(1), three)
            assert (len(value.split(".")[1]) if "." in value else 0) >= decimals.pop(), (run_id, m.group(1), value)
    assert len(shown) > 100
    assert all(len(texts) == 1 for texts in shown.values()), {k: v for k, v in shown.items() if len(v) > 1}


def test_a_new_run_that_changes_its_conditions_decimals_leaves_the_other_runs_data_as_it_was():
    """report/runs.py _metrics: a run's own data (render/run_pages.py MetricData: its value printed with each
    number of decimals its condition can give it) does not depend on its condition, whose file holds each
    run's decimals: a new run that changes them (a condition printed "10.5 | 10.0–11.0", then
    "10.25 | 9.88–11.00") changes only its own data and its condition's file, while each page prints its value
    as the row's rule says (RunMetric.text: "10.0", then "10.00")."""
    from types import SimpleNamespace

    from kansoku.render.run_pages import MetricData, condition_json
    from kansoku.report.runs import _metrics

    def computed(values: dict[str, float]) -> tuple[dict, dict]:
        runs = [SimpleNamespace(id=rid, anchor=f"run-{rid}", rep=i) for i, rid in enumerate(values, 1)]
        pages = {rid: SimpleNamespace(condition=runs, metrics=[], info=SimpleNamespace(anchor=f"run-{rid}"))
                 for rid in values}
        _metrics(None, list(values), pages, {rid: {"tps": v} for rid, v in values.items()})
        return {rid: page.metrics[0] for rid, page in pages.items()}, condition_json(runs, list(pages.values()), {})
    before, before_file = computed({"a": 10.0, "b": 10.5, "c": 11.0})
    after, after_file = computed({"a": 10.0, "b": 10.5, "c": 11.0, "d": 9.875})
    assert [(m.median, m.low, m.high) for m in (before["a"], after["a"])] == [("10.5", "10.0", "11.0"),
                                                                           ("10.25", "9.88", "11.00")]
    assert [before[r].text for r in "abc"] == ["10.0", "10.5", "11.0"]
    assert [after[r].text for r in "abcd"] == ["10.00", "10.50", "11.00", "9.88"]
    for rid in "abc":  # what the run's own file holds: the same
        assert MetricData(rid, before[rid].texts_from, before[rid].texts) == \
            MetricData(rid, after[rid].texts_from, after[rid].texts)
    assert before_file["stats"]["tps"]["decimals"] == {"run-a": 1, "run-b": 1, "run-c": 1}
    assert after_file["stats"]["tps"]["decimals"] == {"run-a": 2, "run-b": 2, "run-c": 2, "run-d": 2}


def test_run_page_shows_factors_and_metrics_beside_its_condition(site):
    """TPS of a run and the median, min and max of its condition, computed here from the runs' own pgbench.log."""
    _, public, _, rep = site
    checked = 0
    for run_id, info in sorted(rep["runs"].items()):
        if info["factors"].get("study") != "scaleup" or _raw_tps(run_id) is None:
            continue
        cond = [_raw_tps(r) for r in _condition(rep, run_id)]
        cond = [v for v in cond if v is not None]
        html = _page(public, "en", info["anchor"])
        label, value, median, rng, n = _metric_row(html, "tps")
        assert label == "TPS"
        assert _close(value, _raw_tps(run_id))
        assert _close(median, statistics.median(cond))
        lo, hi = rng.split("–")
        assert _close(lo, min(cond)) and _close(hi, max(cond))
        assert int(n) == len(cond) >= 1
        # every factor with the report's labels: "Clients" and its value, "Configuration": "checksums off"
        rows = dict(re.findall(r'<tr><th scope="row">([^<]*)</th><td>([^<]*)</td></tr>',
                               html.split('class="plain run-factors"')[1].split("</table>")[0]))
        assert rows["Clients"] == info["factors"]["clients"]
        assert rows["Configuration"] == {"checksums-off": "checksums off", "checksums-on": "checksums on"}[
            info["factors"]["config"]]
        assert rows["Repetition"] == info["factors"]["rep"]
        ja = _page(public, "ja", info["anchor"])
        assert "クライアント数" in ja and "条件の中央値" in ja
        # its condition's runs link to each other's pages
        for other in _condition(rep, run_id):
            if other != run_id:
                assert f'href="../{rep["runs"][other]["anchor"]}/"' in html or \
                    f'/runs/{rep["runs"][other]["anchor"]}.html"' in html
        checked += 1
    assert checked >= 4


def _csv(public: Path, anchor: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((public / "csv" / "example" / "runs" / f"{anchor}.csv").read_text())))


def _epoch(v) -> float:
    return v.timestamp()


def _txlog_tps(run_dir: Path, meta: dict) -> dict[int, float]:
    """Per-second TPS from the pgbench -l files (completed transactions per epoch second, divided by the
    sampling fraction, i.e. logged over processed), on the run's time axis, inside its window."""
    per_epoch: Counter = Counter()
    logged = 0
    for f in run_dir.iterdir():
        if not f.name.startswith("pgbench_log."):
            continue
        for line in f.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 6 and parts[2].isdigit():  # "failed" / "skipped" in place of a latency
                per_epoch[int(parts[4])] += 1
                logged += 1
    processed = int(PROCESSED.search((run_dir / "pgbench.log").read_text()).group(1))
    fraction = logged / processed if logged < 0.99 * processed else 1.0
    start, end = _epoch(meta["start"]), _epoch(meta["end"])
    out = {}
    for epoch, n in per_epoch.items():
        elapsed = epoch + 1 - start
        if elapsed - 1 >= -0.001 and elapsed <= end - start + 0.001:
            out[math.floor(elapsed + 0.5)] = n / fraction
    return out


def test_time_series_csv_matches_the_raw_files(site):
    """Each run's per-second CSV: TPS equal to pgbench's own progress lines (-P), or to the transaction log
    (-l) counted here; CPU %usr among the values sar recorded (sadf); fixed decimals; linked from the page."""
    _, public, gen, rep = site
    by_source: Counter = Counter()
    for run_id, info in sorted(rep["runs"].items()):
        run_dir = CAMPAIGN / run_id
        if not (run_dir / "pgbench.log").is_file():
            continue
        data = _run_data(gen, info["anchor"])
        rows = _csv(public, info["anchor"])
        assert rows and data["csv"] == f"/csv/example/runs/{info['anchor']}.csv"
        for lang in ("ja", "en"):
            assert f'href="../../../csv/example/runs/{info["anchor"]}.csv"' in _page(public, lang, info["anchor"]) \
                or f'/csv/example/runs/{info["anchor"]}.csv"' in _page(public, lang, info["anchor"])
        header = list(rows[0])
        assert header[:2] == ["second", "tps"]
        for r in rows:  # stable decimals: 3 for TPS and latency, 2 for CPU and disk
            for col, v in r.items():
                if v:
                    want = 0 if col == "second" else 3 if col in ("tps", "latency_avg_ms", "latency_max_ms") else 2
                    assert re.fullmatch(rf"-?\d+(\.\d{{{want}}})?" if want == 0 else rf"-?\d+\.\d{{{want}}}", v), (col, v)
        tps = {int(r["second"]): float(r["tps"]) for r in rows if r["tps"]}
        meta = tomllib.loads((run_dir / "run.toml").read_text())
        source = data["series"]["tps_source"]
        by_source[source] += 1
        if source == "progress":
            want = {round(float(s)): float(t) for s, t, _ in PROGRESS.findall((run_dir / "pgbench.log").read_text())}
            assert tps == want, run_id
            lat = {int(r["second"]): float(r["latency_avg_ms"]) for r in rows if r["latency_avg_ms"]}
            assert lat == {round(float(s)): float(l) for s, _, l in
                           PROGRESS.findall((run_dir / "pgbench.log").read_text())}
        else:
            assert source == "txlog", source
            want = _txlog_tps(run_dir, meta)
            assert set(tps) == set(want), run_id
            assert all(abs(tps[s] - want[s]) <= 0.0005 + 1e-9 for s in want), run_id
        # at most one row per second of the run: aggregated, never a transaction row
        assert len(rows) <= (_epoch(meta["end"]) - _epoch(meta["start"])) + 3
        # a run of several hosts charts its server's CPU (the host whose host.toml says role = "server")
        cpu_dir = next((h.parent for h in run_dir.glob("host=*/host.toml")
                        if tomllib.loads(h.read_text()).get("role") == "server"), run_dir)
        if (cpu_dir / "sa.bin").is_file() and "cpu_usr_pct" in header and data["series"]["cpu_tool"] == "sar":
            doc = json.loads(subprocess.run(["sadf", "-j", str(cpu_dir / "sa.bin"), "--", "-u", "ALL"],
                                            capture_output=True, text=True, check=True).stdout)
            stats = doc["sysstat"]["hosts"][0]["statistics"]
            usr = {f"{c.get('usr', c.get('user')):.2f}" for s in stats
                   for c in s.get("cpu-load-all", s.get("cpu-load", [])) if c["cpu"] == "all"}
            shown = [r["cpu_usr_pct"] for r in rows if r["cpu_usr_pct"]]
            assert shown and set(shown) <= usr, run_id
            by_source["sar"] += 1
    assert by_source["progress"] and by_source["sar"], by_source


def _file_of(public: Path, url: str) -> Path:
    path = unquote(urlparse(url).path)  # as a web server reads it: host%3Dserver/ is host=server/
    return public / path.lstrip("/") / "index.html" if path.endswith("/") else public / path.lstrip("/")


def test_every_run_link_lands_on_the_run_page_and_back(site):
    """Provenance panels (tables and figures) and the sources page link each run to its page; the page links
    every table and figure that uses it, each to an anchor that exists on its chapter page."""
    _, public, gen, rep = site
    anchors = {info["anchor"]: run_id for run_id, info in rep["runs"].items()}
    for lang in ("ja", "en"):
        base = f"http://x/{lang}/reports/example/"
        reached = set()
        for ch in rep["chapters"]:
            url = f"{base}{ch['id']}/"
            html = _file_of(public, url).read_text(encoding="utf-8")
            cells = re.findall(r'<td class="reps">(.*?)</td>', html, re.S)
            assert cells or not (ch["tables"] or ch["figures"])
            for cell in cells:
                for h in re.findall(r'href="([^"]+)"', cell):
                    target = urljoin(url, h)
                    assert "/runs/run-" in target and "#" not in target, target
                    assert _file_of(public, target).is_file(), target
                    reached.add(target.rsplit("/", 1)[1].removesuffix(".html"))
        assert reached == set(anchors), lang  # every run is reached from a table or figure that cites it
        from_sources = set()  # the data-sources page and its parts (sources-2, …: render/hugo.py sources_part_runs)
        for part in sorted((public / lang / "reports" / "example").glob("sources*/index.html")):
            src_url = f"{base}{part.parent.name}/"
            src = part.read_text(encoding="utf-8")
            from_sources |= {urljoin(src_url, h).rsplit("/", 1)[1].removesuffix(".html")
                             for h in re.findall(r'<h2 class="run-id"><a href="([^"]+)"', src)}
        assert from_sources == set(anchors)
        # and back: each use on a run page is a link to an element that exists
        for anchor, run_id in anchors.items():
            url = f"{base}runs/{anchor}.html"
            html = _file_of(public, url).read_text(encoding="utf-8")
            uses = re.findall(r'<ul class="run-uses">(.*?)</ul>', html, re.S)[0]
            hrefs = re.findall(r'href="([^"]+)"', uses)
            assert hrefs, run_id
            data = _run_data(gen, anchor)
            assert len(hrefs) == len(data["uses"]) == len({(u["kind"], u["id"]) for u in data["uses"]})
            for h, use in zip(hrefs, data["uses"]):
                target = urljoin(url, h)
                page, frag = target.split("#")
                assert frag == use["anchor"]
                assert f'id="{frag}"' in _file_of(public, page).read_text(encoding="utf-8"), target
                assert run_id in _table_or_figure_runs(rep, use)


def _table_or_figure_runs(rep: dict, use: dict) -> list[str]:
    for ch in rep["chapters"]:
        item = ch["tables" if use["kind"] == "table" else "figures"].get(use["id"])
        if item is not None:
            return item["runs"]
    return []


def test_run_page_prints_commands_relative_to_the_campaign_directory(site):
    """A run's commands and working directory as they read on any machine: the collecting machine's campaign
    directory (its recorded cwd less the run's id) taken out, the absolute form kept in the run.toml."""
    _, public, gen, rep = site
    checked = 0
    for run_id, info in sorted(rep["runs"].items()):
        raw = (ROOT / "data" / "runs" / "example" / run_id / "run.toml")
        if not raw.exists():
            continue
        recorded = tomllib.loads(raw.read_text(encoding="utf-8")).get("commands", {})
        if not str(recorded.get("cwd", "")).endswith(run_id):
            continue
        root = recorded["cwd"][: -len(run_id)].rstrip("/")
        cmds = {c["name"]: " ".join(u for u, _ in c["units"]) for c in _run_data(gen, info["anchor"])["commands"]}
        assert cmds["cwd"] == run_id
        assert not any(root in v for v in cmds.values()), (run_id, cmds)
        if root + "/" in str(recorded.get("benchmark", "")):
            assert cmds["benchmark"] == recorded["benchmark"].replace(root + "/", "")
        for lang in ("ja", "en"):
            assert root not in _page(public, lang, info["anchor"]).split('id="commands"')[1].split("</table>")[0]
        checked += 1
    assert checked > 100


def test_run_pages_are_small_and_list_raw_files_with_sha256(site):
    db, public, gen, rep = site
    with ro_con(db) as con:
        files = con.execute("SELECT run_id, file_name, sha256 FROM sources").fetchall()
    by_run: dict[str, list] = {}
    for run_id, name, sha in files:
        by_run.setdefault(run_id, []).append((name, sha))
    for run_id, info in rep["runs"].items():
        html = _page(public, "en", info["anchor"])
        assert len(html) < 150_000, (run_id, len(html))
        for name, sha in by_run.get(run_id, []):
            assert sha in html and name in html, (run_id, name)
        if rep["publish_raw"]:  # the published copies are linked, and exist with those bytes
            for h in re.findall(r'<a href="([^"]+)" download><code>', html):
                target = urljoin(f"http://x/en/reports/example/runs/{info['anchor']}.html", h)
                assert _file_of(public, target).is_file(), target


@pytest.mark.slow
def test_pdf_has_no_run_pages(site, tmp_path):
    """Run pages are site-only: the PDF's computed report has none and its text has none of their words."""
    from kansoku.app import compute_one
    from kansoku.render.page_data import report_data

    db, _, _, rep = site
    one = compute_one(db, ROOT / "data" / "reports" / "example.toml", ROOT / "content" / "reports")
    assert one.run_pages == {} and "run_pages" not in report_data(one)
    out = tmp_path / "example.en.pdf"
    run_tool("pdf", "example", "--lang", "en", "--db", db, "--out", out, check=True)
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True, check=True).stdout
    for phrase in ("Runs of its condition", "Per-second series", "Where the report uses this run"):
        assert phrase not in text


@pytest.fixture(scope="module")
def browser(site):
    _, public, _, _ = site
    with served_in_chromium(public) as (b, base):
        yield base, b.new_page()


@pytest.mark.browser
def test_browser_follows_a_table_cell_to_its_run_page_and_back(browser, site):
    base, page = browser
    _, _, _, rep = site
    table = rep["chapters"][0]["tables"]["read-tps"]
    for lang in ("en", "ja"):
        page.goto(f"{base}/{lang}/reports/example/scaleup/")
        page.wait_for_load_state("load")
        panel = page.locator("#table-read-tps details.provenance")
        panel.locator("summary").click()
        link = panel.locator("td.reps a").first
        run_id = link.get_attribute("title")
        assert run_id in table["runs"]
        link.click()
        page.wait_for_load_state("load")
        assert f"/{lang}/reports/example/runs/{rep['runs'][run_id]['anchor']}.html" in page.url
        assert page.locator(".run-meta code.run-id").inner_text() == run_id
        # its charts are drawn from the page's own data (per second): the TPS trace is the CSV's columns
        page.wait_for_selector("div.chart[data-figure='run-tps'][data-rendered='true']", timeout=15000)
        drawn = page.evaluate("(() => { const t = document.querySelector(\"div[data-figure='run-tps']\").data[0];"
                              " return [t.x, t.y, 'xcol' in t || 'ycol' in t]; })()")
        rows = _csv(site[1], rep["runs"][run_id]["anchor"])
        assert drawn[0] == [float(r["second"]) for r in rows] and drawn[2] is False
        want = [float(r["tps"]) if r["tps"] else None for r in rows]
        assert len(drawn[1]) == len(want) and all(
            (y is None) == (w is None) and (w is None or abs(y - w) <= 0.0005 + 1e-9) for y, w in zip(drawn[1], want))
        back = page.locator("ul.run-uses a[href$='#table-read-tps']")
        assert back.count() == 1
        back.click()
        page.wait_for_load_state("load")
        assert page.url.endswith(f"/{lang}/reports/example/scaleup/#table-read-tps")
        assert page.locator("#table-read-tps").is_visible()
        assert page.evaluate("document.querySelector('#table-read-tps').getBoundingClientRect().top") < 200


def test_every_chart_trace_finds_its_columns_in_the_page(site):
    """A run page writes its per-second columns once (render/run_pages.py series_text, CHART_COLUMNS) and each
    chart's traces name theirs (xcol, ycol): every name a trace gives is a column the page holds, of the
    length of its seconds, and no trace carries its numbers itself."""
    _, public, _, rep = site
    checked = 0
    for info in rep["runs"].values():
        for lang in ("ja", "en"):
            html = _page(public, lang, info["anchor"])
            m = re.search(r'<script type="application/json" class="run-series" id="run-series">(.*?)</script>', html, re.S)
            charts = re.findall(r'<script type="application/json" class="chart-data" data-for="run-[a-z]+">(.*?)</script>',
                                html, re.S)
            if m is None:
                assert not charts
                continue
            series = json.loads(m.group(1))
            assert "second" in series and all(len(v) == len(series["second"]) for v in series.values())
            for chart in charts:
                for trace in json.loads(chart)["data"]:
                    assert "x" not in trace and "y" not in trace, trace
                    assert trace["xcol"] == "second" and trace["ycol"] in series, (trace["ycol"], sorted(series))
                    checked += 1
    assert checked > 100, checked


def test_a_run_title_names_what_its_condition_varied_in_words(tmp_path):
    """report/runs.py label_runs: the study first, then the factors that differ between the report's runs in
    the report's words (a bare number with its factor's name), the repetition last; a factor every run
    shares is left out; a run with nothing to tell is titled by its id."""
    from kansoku.model import RunInfo
    from kansoku.report.runs import label_runs
    from kansoku.spec.model import load_report

    spec = tmp_path / "t.toml"
    spec.write_text("\n" + REPORT_HEAD + """[factors.config]
name = { ja = "構成", en = "Configuration" }
labels.on = { ja = "有効", en = "checksums on" }
[factors.clients]
name = { ja = "クライアント数", en = "Clients" }
[[chapter]]
id = "scaleup"
title = { ja = "スケールアップ", en = "Scale-up" }
[[chapter.table]]
id = "x"
caption = "x"
metrics = ["tps"]
where = { study = "scaleup" }
rows = "clients"
""", encoding="utf-8")
    report = load_report(spec)

    def info(rid: str, **factors) -> RunInfo:
        return RunInfo(id=rid, origin="measured", status="ok", start=None, citation=None, hostname=None,
                       anchor=rid, factors={"campaign": "c1", **factors})
    runs = {"a": info("a", study="scaleup", config="on", clients="16", rep="2"),
            "b": info("b", study="other", config="off", clients="1", rep="1")}
    label_runs(report, runs)
    assert runs["a"].title == {"en": "Scale-up, checksums on, Clients: 16, run 2",
                               "ja": "スケールアップ、有効、クライアント数: 16、2 回目"}
    alone = {"x": RunInfo(id="x", origin="measured", status="ok", start=None, citation=None, hostname=None,
                          anchor="x", factors={"campaign": "c1"})}
    label_runs(report, alone)
    assert alone["x"].title == {"en": "x", "ja": "x"}


def test_a_run_command_breaks_between_its_arguments_never_inside_an_option_and_its_value():
    """render/run_pages.py run_command: the units a run page's command cell breaks between; a unit longer than
    a phone's column may break inside, and is marked so."""
    from kansoku.render.run_pages import UNIT_COLUMNS, run_command

    path = "campaign=example-2026-11/study=replication/pattern=mixed-1s1a/rep=2"
    units = run_command("benchmark", f"pgbench -n -c 4 -j 2 -r -f scripts/read.sql 'a b' {path}").units
    assert [u for u, _ in units] == ["pgbench", "-n", "-c 4", "-j 2", "-r", "-f scripts/read.sql", "'a b'", path]
    assert [u for u, long in units if long] == [path] and len(path) > UNIT_COLUMNS
    assert run_command("interval", 1.0).units == [["1.0", False]]
