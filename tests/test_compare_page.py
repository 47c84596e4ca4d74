"""The compare page of a report ([[compare]] in a spec): the same rows as tools/compare, in ja and en, on the
site (verdict marks, legend, method, CSV, run links, table of contents) and in the PDF."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import shlex
import shutil
import subprocess
from html import unescape

import pytest

from conftest import ROOT, computed_report, run_tool
from test_compare import TRUTH, _pgbench_log

EXAMPLE = ROOT / "data" / "reports" / "example.toml"
SYMBOLS = {"better": "✓", "worse": "✗", "changed": "Δ", "within-noise": "≈", "too-few-runs": "?"}


@pytest.fixture(scope="module")
def example(example_site):
    """The example's comparison computed from the example site's store, and that site."""
    db, public = example_site
    rep = computed_report(db, EXAMPLE)  # once per session (conftest)
    assert [c.id for c in rep.compares] == ["checksums"]
    return rep, rep.compares[0], db, public


def _cli(db, command: str, *extra: str) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "tools/compare"
    return run_tool("compare", "--db", db, *argv[1:], *extra, check=True)


def test_page_rows_are_tools_compare_json(example):
    """The page shows the command it equals; running that command gives exactly the page's rows."""
    rep, c, db, _ = example
    doc = json.loads(_cli(db, c.selections, "--json").stdout)
    assert [r.record() for r in c.rows] == doc["comparisons"]
    assert c.not_compared == doc["not_compared"]
    # the environment differences beside the results, as the command lists them: here the one
    # setting the comparison is about, as each side's runs recorded it (psql's pg_settings at capture)
    from kansoku.analysis.tables import role_label

    assert [(e.role, e.key, e.a, e.b) for e in c.environment] == [
        (d["role"] and {lang: role_label(d["role"], lang) for lang in ("ja", "en")}, d["key"], d["a"], d["b"])
        for d in doc["environment"]]
    assert [(e.key, e.a, e.b) for e in c.environment] == [("server.data_checksums", ["off"], ["on"])]
    scaleup = [r for r in c.rows if r.metric == "tps"]
    assert len(scaleup) == 8 and {r.condition["workload"] for r in scaleup} == {"read", "update"}
    # every run of either side is a run of the report (its sources page lists it)
    assert set(c.runs) <= set(rep.runs) and len(c.runs) == len({r for x in c.rows for r in x.a.runs + x.b.runs})


def test_rows_lead_with_tps_then_the_listed_metrics_with_their_direction_and_verdict(example):
    """The study's primary metric first (TPS), then the others as the spec lists them; a metric with no better
    direction (CPU %idle, disk KB/s) is "changed" beyond noise, never better or worse."""
    _, c, _, _ = example
    order = list(dict.fromkeys(r.metric for r in c.rows))
    assert order == ["tps", "latency_avg_ms", "latency_p95_ms", "cpu_idle_pct", "disk_write_kb_s"]
    assert [r.metric for r in c.rows] == sorted((r.metric for r in c.rows), key=order.index)  # grouped
    direction = {"tps": "higher_is_better", "latency_avg_ms": "lower_is_better", "latency_p95_ms": "lower_is_better",
                 "cpu_idle_pct": "neither", "disk_write_kb_s": "neither"}
    for r in c.rows:
        assert r.direction == direction[r.metric]
        if r.direction == "neither":
            assert r.verdict in ("changed", "within_noise", "too_few_runs") and r.flag != "better"
    assert {r.verdict for r in c.rows if r.direction == "neither"} >= {"changed"}
    assert all(r.ratio is not None for r in c.rows)
    for r in c.rows:
        if min(r.a.n, r.b.n) < 3:
            assert r.verdict == "too_few_runs" and r.flag == "too-few-runs" and r.interval == {"ja": "", "en": ""}
        else:
            assert r.verdict in ("better", "worse", "changed", "within_noise") and r.ratio_low <= r.ratio_high
            assert r.flag == r.verdict.replace("_", "-") and "…" in r.interval["en"]
        # the printed change is the ratio's, in each language's sign convention (ja ▲ for a decrease)
        shown = f"{(r.ratio - 1) * 100:+.1f}"
        mag = shown[1:]
        if float(mag) == 0:
            assert r.change == {"ja": f"{mag}%", "en": f"{mag} %"}
        elif shown.startswith("-"):
            assert r.change == {"ja": f"▲{mag}%", "en": f"−{mag} %"}
        else:
            assert r.change == {"ja": f"+{mag}%", "en": f"+{mag} %"}
        assert r.a.text["en"].endswith(f"n = {r.a.n}") and r.a.median == r.record()["baseline"]["median"]


def test_csv_download_equals_tools_compare_csv(example):
    _, c, db, public = example
    page_csv = (public / "csv" / "example" / "compare-checksums.csv").read_text(encoding="utf-8")
    assert page_csv.startswith("\ufeff")
    cli_csv = _cli(db, c.selections, "--csv").stdout
    assert list(csv.reader(io.StringIO(page_csv[1:]))) == list(csv.reader(io.StringIO(cli_csv)))
    assert len(c.csv) == len(c.rows) + 1


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_site_page_in_both_languages(example, lang):
    rep, c, _, public = example
    page = public / lang / "reports" / "example" / "compare-checksums" / "index.html"
    html = page.read_text(encoding="utf-8")
    words = {"ja": ("比較: チェックサム有効と無効", "チェックサム無効", "順位和検定", "ブートストラップ"),
             "en": ("Comparison: checksums on against off", "checksums off", "rank-sum test", "bootstrap")}[lang]
    for w in words:
        assert w in html, w
    rows = re.findall(r'<tr data-metric="([^"]+)" data-verdict="([^"]+)">(.*?)</tr>', html, re.S)
    assert [(m, v) for m, v, _ in rows] == [(r.metric, r.verdict) for r in c.rows]
    sources = (public / lang / "reports" / "example" / "sources" / "index.html").read_text(encoding="utf-8")
    for (_, _, inner), r in zip(rows, c.rows):
        assert r.change[lang] in unescape(inner)  # Hugo writes + as &#43;
        cell = re.search(r'<td class="num compare([^"]*)"[^>]*>(.*?)</td>', inner, re.S)
        if r.flag:  # the tables' visual language: the cell's class (fill) and the symbol
            assert r.flag in cell.group(1).split() and f"{SYMBOLS[r.flag]}</sup>" in cell.group(2)
        # run links on each side land on the runs' own pages (every compared run is behind a table here)
        anchors = re.findall(r'href="[^"#]*/runs/(run-[0-9a-f]+)\.html" title="([^"]+)"', inner)
        assert sorted(unescape(t) for _, t in anchors) == sorted(r.a.runs + r.b.runs)
        for a, _ in anchors:
            assert f'id="{a}"' in sources
            assert (public / lang / "reports" / "example" / "runs" / f"{a}.html").is_file()
    notes = re.search(r'<p class="table-notes">(.*?)</p>', html, re.S).group(1)
    for flag in {r.flag for r in c.rows if r.flag}:  # the legend names every mark used
        assert f"mark-verdict {flag}" in notes
    assert "/csv/example/compare-checksums.csv" in notes
    # the command in lines broken only between arguments, at the shell's continuations: joined, it is the command
    shown = unescape(re.search(r'<p class="compare-command">.*?</p>\s*<pre[^>]*><code>(.*?)</code></pre>', html,
                               re.S).group(1))
    assert shown.replace(" \\\n", " ") == c.selections and "\n" in shown
    # the environment table: one row per recorded difference, A then B
    env = re.search(r'<div class="compare-environment">(.*?)</table>', html, re.S)
    assert env and {"ja": "環境の違い", "en": "Environment differences"}[lang] in env.group(1)
    cells = re.findall(r'<tr data-key="([^"]+)"><th scope="row">.*?</th><td>([^<]*)</td><td>([^<]*)</td></tr>',
                       env.group(1))
    assert cells == [(e.key, " | ".join(e.a), " | ".join(e.b)) for e in c.environment]
    # the report's table of contents links the page (cover and every page)
    cover = (public / lang / "reports" / "example" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'href="[^"]*reports/example/compare-checksums/"', cover)


def test_pdf_has_the_comparison(example, tmp_path):
    """The compare page in the PDF (alone: no chart export needed), with the site's numbers and marks."""
    if not shutil.which("pdftotext"):
        pytest.skip("poppler-utils not installed")
    from kansoku.render.typst import render_pdfs
    from kansoku.render.views import command_lines

    rep, c, _, _ = example
    rep = copy.copy(rep)  # the fixture's report stays whole for the other tests
    rep.pdf_pages = [p for p in rep.pdf_pages if p.kind == "compare"]
    assert [p.id for p in rep.pdf_pages] == ["compare-checksums"]
    rep.chapters = []
    for res in render_pdfs(rep, ["ja", "en"], out_dir=tmp_path):
        text = subprocess.run(["pdftotext", str(res.path), "-"], capture_output=True, text=True,
                              check=True).stdout.replace("\u00a0", " ")
        flat = re.sub(r"\s+", "", text)
        assert re.sub(r"\s+", "", c.title[res.lang]) in flat
        def tokens(s: str) -> set[str]:
            return set(re.split(r"[\s–=]+", s)) - {""}  # "n = 5" is set unbreakable: "n=5" in the text

        for r in c.rows[:4]:  # cells wrap in narrow columns (after an en dash too): each number of a cell is there
            assert re.sub(r"\s+", "", r.change[res.lang]) in flat
            assert tokens(r.a.text[res.lang]) | tokens(r.b.text[res.lang]) <= tokens(text)
        for flag in {r.flag for r in c.rows if r.flag}:
            assert SYMBOLS[flag] in text
        assert "server.data_checksumsoffon" in flat  # the environment differences, a table under the notes
        # the same comparison on the terminal: the site's lines, never broken between "--metric" and its value
        printed = [x.strip() for x in text.splitlines()]
        assert all(line in printed for line in command_lines(c.selections)), command_lines(c.selections)


# -- synthetic campaigns whose truth is known (tests/test_compare.py) --------------------------------------

SPEC = """\
[report]
id = "cmp"
fiscal_year = 2026
title = { ja = "比較", en = "Comparison" }
organisation = { ja = "kansoku", en = "kansoku" }

[factors.version]
name = { ja = "版", en = "Version" }
labels."15" = { ja = "PostgreSQL 15", en = "PostgreSQL 15" }

[[chapter]]
id = "one"
title = { ja = "一", en = "One" }

[[chapter.table]]
id = "t"
caption = { ja = "TPS", en = "TPS" }
metric = "tps"
rows = "clients"
columns = "version"

[[compare]]
id = "versions"
title = { ja = "15 と 14", en = "15 against 14" }
a = { version = "14" }
b = { version = 15 }
metrics = ["tps"]
"""


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare_page")
    for clients, sides in TRUTH.items():
        for version, values in zip(("14", "15"), sides):
            for rep, tps in enumerate(values, 1):
                d = tmp / "runs" / f"version={version}" / f"clients={clients}" / f"rep={rep}"
                d.mkdir(parents=True)
                (d / "pgbench.log").write_text(_pgbench_log(clients, tps))
    db = tmp / "k.duckdb"
    run_tool("ingest", "--db", db, tmp / "runs", check=True)
    (tmp / "specs").mkdir()
    (tmp / "specs" / "cmp.toml").write_text(SPEC, encoding="utf-8")
    return tmp, db


def test_synthetic_verdicts_on_the_page(synthetic):
    from kansoku.app import compute_one

    tmp, db = synthetic
    rep = compute_one(db, tmp / "specs" / "cmp.toml", tmp / "content")
    c = rep.compares[0]
    got = {int(r.condition["clients"]): (r.verdict, r.flag) for r in c.rows}
    assert got == {8: ("better", "better"), 16: ("worse", "worse"), 32: ("within_noise", "within-noise"),
                   64: ("too_few_runs", "too-few-runs")}
    assert c.marks == ["better", "too-few-runs", "within-noise", "worse"]
    assert c.a_label == {"ja": "14", "en": "14"} and c.b_label == {"ja": "PostgreSQL 15", "en": "PostgreSQL 15"}
    assert c.factors == [{"ja": "clients", "en": "clients"}] and c.selections == "tools/compare version=14 version=15 --metric tps"
    assert [p.id for p in rep.pages][-3:] == ["compare-versions", "appendix", "sources"]
    assert rep.pages[-3].kind == "compare" and '{{< compare "versions" >}}' in rep.generated_bodies["compare-versions"]


BAD = SPEC.replace('b = { version = 15 }', 'b = { verison = "15" }\nwhere = { version = "14", clients = "9" }')


def test_bad_compare_is_a_spec_error_naming_file_and_item(synthetic, tmp_path):
    tmp, db = synthetic
    spec = tmp_path / "specs" / "cmp.toml"
    spec.parent.mkdir()
    spec.write_text(BAD + '\n[[compare]]\nid = "versions"\ntitle = "again"\na = { version = "14" }\nb = { version = "16" }\n',
                    encoding="utf-8")
    p = run_tool("build", "--db", db, "--specs", spec.parent, "--out", tmp_path / "public",
                 "--generated", tmp_path / "generated")
    assert p.returncode == 3 and "Traceback" not in p.stderr
    err = p.stderr
    assert "cmp.toml:" in err and "compare 'versions'" in err
    assert "factor 'version' is in where too" in err
    assert "compare id 'versions' is used twice" in err
    assert "unknown factor 'verison'" in err and "did you mean \"version\"" in err
    assert "clients = '9' matches no run" in err and "version = '16' matches no run" in err


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_common_factors_read_in_words_with_the_study_as_its_chapter(example, lang):
    """What every run shares is said with the report's words: the study by its chapter's title (the spec's
    chapter about it), the campaign by its name (it has no title), never as factor syntax ``study = scaleup``."""
    from kansoku import words

    rep, c, _, public = example
    chapter = next(ch for ch in rep.chapters if ch.id == "scaleup")
    html = (public / lang / "reports" / "example" / "compare-checksums" / "index.html").read_text(encoding="utf-8")
    line = unescape(re.search(r'<p class="common">(.*?)</p>', html, re.S).group(1))
    pair = lambda name, value: words.t(lang, "factor_value", name=words.t(lang, f"run_factor_{name}"), value=value)
    assert pair("study", chapter.title[lang]) in line and pair("campaign", "example-2026-11") in line
    assert " = " not in line and "scaleup" not in line
