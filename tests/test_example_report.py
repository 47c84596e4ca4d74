"""The example report end to end: numbers on the site equal numbers computed
independently from the raw pgbench outputs. (The PDF of the same report: tests/test_pdf.py.)"""

from __future__ import annotations

import html
import re
import statistics
import tomllib
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT

RUNS = ROOT / "data" / "runs"
TPS_LINE = re.compile(r"^tps = ([0-9.]+) \((?:without initial connection time|excluding connections establishing)\)", re.M)


def independent_runs(workload: str) -> dict[tuple[str, str], list[float]]:
    """(config, clients) -> each run's TPS, straight from pgbench.log files and directory names."""
    tps = defaultdict(list)
    for log in RUNS.rglob("pgbench.log"):
        parts = dict(p.split("=", 1) for p in log.parent.parts if "=" in p)
        if parts.get("campaign") != "example-2026-11" or parts.get("study") != "scaleup" or parts.get("workload") != workload or parts.get("rep") not in ("1", "2", "3", "4", "5"):
            continue
        meta = tomllib.loads((log.parent / "run.toml").read_text()) if (log.parent / "run.toml").exists() else {}
        if meta.get("status", "ok") not in ("ok", "success") or meta.get("exit_code", meta.get("pgbench_exit_code", 0)):
            continue
        m = TPS_LINE.search(log.read_text())
        if m:
            tps[(parts["config"], parts["clients"])].append(float(m.group(1)))
    return dict(tps)


VERDICT_WORDS = {"en": {"✓": "better (beyond run-to-run noise)", "✗": "worse (beyond run-to-run noise)", "≈": "within noise"},
                 "ja": {"✓": "改善 (ばらつきを超える差)", "✗": "悪化 (ばらつきを超える差)", "≈": "ばらつきの範囲内"}}


def rendered_discussion(public: Path, chapter: str, lang: str) -> str:
    """The Discussion section of a chapter of the example as the built page prints it: the numbers the prose
    states through the data ({{< val >}}) printed, code spans in backquotes, whitespace folded (ja: removed,
    as the prose wraps anywhere), typographic quotes back to plain ones."""
    page = (public / lang / "reports" / "example" / chapter / "index.html").read_text(encoding="utf-8")
    head = {"en": '<h2 id="discussion">', "ja": '<h2 id="考察">'}[lang]
    section = page.split(head, 1)[1].split("</h2>", 1)[1].split("<h2", 1)[0]
    section = re.sub(r"<code>(.*?)</code>", r"`\1`", section, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "", section))
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}))
    return " ".join(text.split()) if lang == "en" else "".join(text.split())


def independent_medians(workload: str) -> dict[tuple[str, str], tuple[float, int]]:
    """(config, clients) -> (median TPS, runs)."""
    return {k: (statistics.median(v), len(v)) for k, v in independent_runs(workload).items()}


def rank_sum_p(a: list[float], b: list[float]) -> float:
    """Exact two-sided Wilcoxon rank-sum p-value, by enumerating every split of the pooled runs (no ties
    expected in TPS values); written here again so the test does not trust analysis/noise.py."""
    import itertools

    pooled = sorted(a + b)
    rank = {v: i + 1 for i, v in enumerate(pooled)}
    expected = len(a) * (len(pooled) + 1) / 2
    observed = abs(sum(rank[v] for v in a) - expected)
    splits = list(itertools.combinations(range(1, len(pooled) + 1), len(a)))
    return sum(abs(sum(s) - expected) >= observed - 1e-9 for s in splits) / len(splits)


def independent_verdict(value: list[float], base: list[float]) -> str:
    """The documented rule (README, tools/compare): better or worse only when the exact rank-sum test's
    p <= 0.10 and the medians differ by at least 2 %; TPS: higher is better."""
    assert len(value) == len(base) == 5
    ratio = statistics.median(value) / statistics.median(base)
    if rank_sum_p(value, base) <= 0.10 and abs(ratio - 1) >= 0.02:
        return "✓" if ratio > 1 else "✗"
    return "≈"


class TableGrabber(HTMLParser):
    """Collects the text of every cell of the table with the given id."""

    def __init__(self, table_id: str):
        super().__init__()
        self.table_id, self.depth, self.rows, self.cell = table_id, 0, [], None
        self.caption, self.in_caption = "", False
        self.tables_seen, self.in_table = 0, False  # only the first <table> of the figure: the data table
        self.skip = 0

    # what a cell says besides its printed value: the spread line behind the switch, the header's aggregation
    SKIP = ("cell-spread", "col-agg")

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "span" and (self.skip or any(k in (a.get("class") or "").split() for k in self.SKIP)):
            self.skip += 1
            return
        if tag == "figure" and a.get("id") == f"table-{self.table_id}":
            self.depth = 1
        elif self.depth:
            if tag == "figure":
                self.depth += 1
            if tag == "table":
                self.tables_seen += 1
                self.in_table = self.tables_seen == 1
            if not self.in_table and tag != "figcaption":
                return
            if tag == "tr":
                self.rows.append([])
            if tag in ("td", "th"):
                self.cell = ""
            if tag == "figcaption":
                self.in_caption = True

    def handle_endtag(self, tag):
        if tag == "span" and self.skip:
            self.skip -= 1
            return
        if not self.depth:
            return
        if tag == "table":
            self.in_table = False
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None
        if tag == "figcaption":
            self.in_caption = False
        if tag == "figure":
            self.depth -= 1

    def handle_data(self, data):
        if self.skip:
            return
        if self.depth and self.cell is not None:
            self.cell += data
        if self.depth and self.in_caption:
            self.caption += data


def grab(html_file: Path, table_id: str) -> TableGrabber:
    g = TableGrabber(table_id)
    g.feed(html_file.read_text(encoding="utf-8"))
    assert g.rows, f"table {table_id} not found in {html_file}"
    return g


@pytest.mark.parametrize("lang,label,caption", [
    ("ja", "表 1.1", "参照系ワークロードのクライアント数別 TPS"),
    ("en", "Table 1.1", "Read-only workload: TPS by number of clients"),
])
def test_site_table_matches_raw_files(example_site, lang, label, caption):
    _, public = example_site
    page = public / lang / "reports" / "example" / "scaleup" / "index.html"
    assert page.is_file(), sorted(p.name for p in (public / lang).rglob("*"))[:20]
    g = grab(page, "read-tps")
    assert label in g.caption and caption in g.caption
    expected = independent_medians("read")
    runs = independent_runs("read")
    configs = sorted({c for c, _ in expected}, key=lambda c: (c != "checksums-off", c))
    body = [r for r in g.rows if r and re.fullmatch(r"\d+", r[0])]
    assert [r[0] for r in body] == sorted({cl for _, cl in expected}, key=int)
    for row in body:
        clients = row[0]
        col = 1
        base = None
        row = [re.sub(r"(\(\*\d+\))+$", "", c) for c in row]  # cell-note marks (steady state) after a value
        for config in configs:
            med, n = expected[(config, clients)]
            assert row[col] == f"{med:.2f}", (clients, config, row)
            assert row[col + 1] == str(n)
            assert 0 <= float(row[col + 2]) <= 100  # median CPU %idle (tests/test_honest_columns.py recomputes it)
            col += 3
            if base is None:
                base, base_config = med, config
            else:
                mark = independent_verdict(runs[(config, clients)], runs[(base_config, clients)])
                pct = "%" if lang == "ja" else " %"  # a percent as the page's language prints it
                assert row[col] == f"{med / base * 100:.2f}{pct}{mark}", (clients, config, row)
                col += 1
        assert col == len(row)


def test_language_switch_points_to_same_page(example_site):
    _, public = example_site
    ja = (public / "ja" / "reports" / "example" / "scaleup" / "index.html").read_text(encoding="utf-8")
    en = (public / "en" / "reports" / "example" / "scaleup" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'hreflang="en"[^>]*href="[^"]*en/reports/example/scaleup/', ja)
    assert re.search(r'hreflang="ja"[^>]*href="[^"]*ja/reports/example/scaleup/', en)


def test_plotly_is_served_by_the_site(example_site):
    _, public = example_site
    page = (public / "ja" / "reports" / "example" / "scaleup" / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', page)
    assert scripts and all(not s.startswith(("http:", "https:", "//")) for s in scripts)
    assert any("plotly" in s for s in scripts)


def test_discussion_says_what_the_verdicts_say(example_site):
    """The example's conclusions (its discussion, ja and en) state exactly the comparisons and verdicts its tables
    print, recomputed here from the raw pgbench.log files: the prose prints them through the data
    ({{< val … show="verdict" >}}), so they follow the runs; this test checks what the built page says."""
    _, public = example_site
    said = {}
    for workload in ("read", "update"):
        runs = independent_runs(workload)
        for clients in ("1", "2", "4", "8"):
            on, off = runs[("checksums-on", clients)], runs[("checksums-off", clients)]
            ratio = f"{statistics.median(on) / statistics.median(off) * 100:.2f} %"
            said[(workload, clients)] = (ratio, independent_verdict(on, off))
    en = rendered_discussion(public, "scaleup", "en")
    ja = rendered_discussion(public, "scaleup", "ja")
    w = {lang: {k: (r, VERDICT_WORDS[lang][v]) for k, (r, v) in said.items()} for lang in ("en", "ja")}
    r = {k: w["en"][("read", k)] for k in ("1", "2", "4", "8")}
    u = {k: w["en"][("update", k)] for k in ("1", "2", "4", "8")}
    assert (f"For the read-only workload, checksums on gave {r['1'][0]} of the TPS of checksums off at 1 client, "
            f"{r['1'][1]}; {r['2'][0]} at 2 clients, {r['2'][1]}; {r['4'][0]} at 4, {r['4'][1]}; "
            f"and {r['8'][0]} at 8, {r['8'][1]}.") in en, en
    assert (f"For the update workload it gave {u['1'][0]} at 1 client, {u['1'][1]}; {u['2'][0]} at 2 clients, "
            f"{u['2'][1]}; {u['4'][0]} at 4, {u['4'][1]}; and {u['8'][0]} at 8, {u['8'][1]}.") in en, en
    for workload, name in (("read", "参照系"), ("update", "更新系")):
        seq = "".join(f"{c}クライアントで{w['ja'][(workload, c)][0]}、判定は{w['ja'][(workload, c)][1]}。"
                      for c in ("1", "2", "4", "8"))
        assert "".join(f"{name}では{seq}".split()) in ja, (seq, ja)
