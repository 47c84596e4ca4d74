"""Profiles and query studies in reports: the flamegraph and profile_diff chart kinds, the
``rows = "functions"`` and ``rows = "queries"`` tables, computed from real runs made with tools/collect
(tests/fixtures/profiles/collected: perf record -g on the postmaster during pgbench at 1 and 8 clients, 2 runs
each; tests/fixtures/queries/collected: tools/collect queries with max_parallel_workers_per_gather 0 and 2,
3 runs each), checked against the raw files read here without kansoku."""

from __future__ import annotations

import gzip
import re
import statistics
from pathlib import Path

import pytest

from conftest import FIXTURES
from kansoku.analysis import figures
from kansoku.analysis.table_kinds import compute_table
from kansoku.errors import SpecError
from kansoku.ingest.pipeline import ingest
from kansoku.render.charts import DOWNLOADS, draw
from kansoku.spec.model import load_report
from kansoku.store.db import open_store

PROFILES = FIXTURES / "profiles" / "collected"
QUERIES = FIXTURES / "queries" / "collected"

SPEC = """
[report]
id = "profiles-test"
fiscal_year = 2026
title = { ja = "プロファイル", en = "Profiles" }
organisation = { ja = "kansoku", en = "kansoku" }

[factors.clients]
name = { ja = "クライアント数", en = "Clients" }

[factors.workers]
name = { ja = "ワーカー数", en = "Workers" }

[[chapter]]
id = "c"
title = { ja = "章", en = "Chapter" }

[[chapter.figure]]
id = "flame"
caption = { ja = "フレームグラフ", en = "Flame graph" }
chart = "flamegraph"
metric = "profile_samples"
series = "clients"
options = { min_pct = 1.0 }

[[chapter.figure]]
id = "diff"
caption = { ja = "差分", en = "Differential" }
chart = "profile_diff"
metric = "profile_samples"
series = "clients"
options = { a = "1", b = "8", top = 10 }

[[chapter.figure]]
id = "qt"
caption = { ja = "クエリ", en = "Queries" }
chart = "query_times"
metric = "query_elapsed_ms"
series = "workers"

[[chapter.figure]]
id = "qs"
caption = { ja = "高速化率", en = "Speed-up" }
chart = "query_times"
metric = "query_elapsed_ms"
series = "workers"
options = { baseline = "0" }

[[chapter.table]]
id = "top"
caption = { ja = "上位の関数", en = "Top functions" }
rows = "functions"
metric = "profile_samples"
columns = "clients"
options = { top = 8 }

[[chapter.table]]
id = "q"
caption = { ja = "クエリ", en = "Queries" }
rows = "queries"
metric = "query_elapsed_ms"
columns = "workers"
baseline = { factor = "workers", value = "0" }
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    base = tmp_path_factory.mktemp("profrep")
    db = base / "k.duckdb"
    rep = ingest([PROFILES, QUERIES], db)
    assert rep.ok, rep.errors
    spec = base / "profiles-test.toml"
    spec.write_text(SPEC)
    report = load_report(spec)
    store = open_store(db, read_only=True)
    yield store, report, spec
    store.close()


def _item(report, item_id):
    return next(it for ch in report.chapters for it in ch.tables + ch.figures if it.id == item_id)


def _stack_counts(path: Path) -> dict[str, int]:
    """Samples per stack (root first) read from a perf script file without kansoku."""
    out: dict[str, int] = {}
    for block in gzip.decompress(path.read_bytes()).decode().split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines:
            continue
        frames = [re.sub(r"\+0x[0-9a-f]+$", "", l.split(None, 1)[1].rsplit(" (", 1)[0]) for l in lines[1:]]
        out_key = ";".join(reversed(frames))
        out[out_key] = out.get(out_key, 0) + 1
    return out


def test_flamegraph_is_the_mean_share_of_each_condition(env):
    store, report, _ = env
    cd = figures.chart_data(store, report, _item(report, "flame"))
    trees = cd.data["trees"]
    assert len(trees) == 2 and cd.words["en"]["names"] == ["Clients 1", "Clients 8"]
    for t in trees:
        assert t["values"][0] == pytest.approx(100.0) and t["parents"][0] == -1
        # callees sit inside their caller: from its left edge, never wider than it
        for i, p in enumerate(t["parents"]):
            if p >= 0:
                assert t["starts"][p] - 1e-6 <= t["starts"][i] and \
                       t["starts"][i] + t["values"][i] <= t["starts"][p] + t["values"][p] + 1e-3
                assert t["depth"][i] == t["depth"][p] + 1
        assert min(t["values"]) >= 1.0
    # the share of PostgresMain at 1 client, from the raw files: the mean over the two runs
    shares = []
    for rep in ("rep=1", "rep=2"):
        counts = _stack_counts(PROFILES / "study=profile" / "clients=1" / rep / "perf-script.txt.gz")
        total = sum(counts.values())
        shares.append(100 * sum(n for s, n in counts.items() if "PostgresMain" in s.split(";")) / total)
    t = trees[0]
    i = next(k for k, (l, d) in enumerate(zip(t["labels"], t["depth"])) if l == "PostgresMain")
    assert t["values"][i] == pytest.approx(statistics.mean(shares), abs=1e-3)
    fig = draw(cd, "ja")
    assert {tr["type"] for tr in fig["data"]} == {"bar"}  # the site's plotly bundle draws it
    assert "全サンプル" in fig["data"][0]["text"]


def test_profile_diff_uses_the_verdict_language(env):
    store, report, _ = env
    cd = figures.chart_data(store, report, _item(report, "diff"))
    rows = cd.data["rows"]
    assert len(rows) == 10 and all(r["delta"] == pytest.approx(r["b"] - r["a"]) for r in rows)
    assert abs(rows[0]["delta"]) >= abs(rows[-1]["delta"])
    # two runs per side: fewer than the verdict needs
    assert {r["verdict"] for r in rows} == {"too_few_runs"}
    assert set(cd.words["en"]["verdicts"]) == {"too few runs for a verdict"}
    assert cd.words["ja"]["x_title"].startswith("self 比率の変化")
    fig = draw(cd, "en")
    # the legend's empty traces overlay the bars: grouped, each took a slot and thinned every bar and its label
    assert fig["layout"]["barmode"] == "overlay"
    # each bar's function and change is a label above it, inside the plot (not a tick label beside it)
    labels = [a["text"] for a in fig["layout"]["annotations"]]
    assert len(labels) == len(rows) and all(f"{r['delta']:+.2f}" in t for r, t in zip(rows, labels))
    lo, hi = fig["layout"]["xaxis"]["range"]  # the labels outside the bars stay inside the plot
    assert lo < min(0, *(r["delta"] for r in rows)) and hi > max(0, *(r["delta"] for r in rows))


def test_top_functions_table_holds_each_runs_self_and_total_share(env):
    store, report, _ = env
    t = compute_table(store, report, _item(report, "top")).to_model()
    assert [c.text["en"] for c in t.columns] == ["function", "Clients 1: self (%)", "Clients 1: total (%)",
                                                 "Clients 8: self (%)", "Clients 8: total (%)"]
    assert len(t.rows) == 8 and len(t.header) == 2
    con = store
    for row in t.rows:
        f = row[0].text["en"]
        cell = row[1]
        per_run = dict(con.query("SELECT run_id, self_pct FROM profile_functions WHERE function = ? "
                                 "AND run_id LIKE '%clients=1/%'", [f]))
        vals = [per_run.get(r, 0.0) for r in cell.runs]
        assert cell.value == pytest.approx(statistics.median(vals)) and len(cell.runs) == 2
        assert cell.spread is not None and "n = 2" in cell.spread["en"]
    # unresolved symbols are rows like any other, never dropped
    assert any(r[0].text["en"].startswith("[unknown]") for r in t.rows)


def _times(workers: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for rep in sorted((QUERIES / "study=parallel" / f"workers={workers}").iterdir()):
        text = (rep / "queries-timing.txt").read_text()
        for q, ms in re.findall(r"query=(\w+) repetition=1\nTime: ([\d.]+) ms", text):
            out.setdefault(q, []).append(float(ms))
    return out


def test_query_table_speedup_against_the_baseline(env):
    store, report, _ = env
    t = compute_table(store, report, _item(report, "q")).to_model()
    assert [c.text["en"] for c in t.columns] == ["query", "Workers 0: elapsed (ms)", "Workers 2: elapsed (ms)",
                                                 "Workers 2: speed-up", "Workers 2: dominant plan node"]
    t0, t2 = _times(0), _times(2)
    for row in t.rows:
        q = row[0].text["en"]
        assert row[1].value == pytest.approx(statistics.median(t0[q]))
        assert row[2].value == pytest.approx(statistics.median(t2[q]))
        assert row[3].value == pytest.approx(statistics.median(t0[q]) / statistics.median(t2[q]))
        assert row[3].text["en"] == f"×{row[3].value:.2f}" and row[3].verdict["n"] == [3, 3]
        assert row[4].text["en"] in ("Aggregate", "Gather", "Gather Merge", "Index Only Scan", "Parallel Seq Scan",
                                     "Seq Scan", "Sort", "Finalize Aggregate", "Partial Aggregate", "HashAggregate")


def test_bad_options_are_spec_errors(env, tmp_path):
    store, report, spec = env
    bad = tmp_path / "profiles-test.toml"
    bad.write_text(spec.read_text().replace('options = { a = "1", b = "8", top = 10 }', 'options = { a = "1", b = "3" }'))
    with pytest.raises(SpecError, match="option b must be a value of clients"):
        figures.chart_data(store, load_report(bad), _item(load_report(bad), "diff"))


def test_query_times_chart_draws_median_range_and_speed_up(env):
    store, report, _ = env
    t0, t2 = _times(0), _times(2)
    cd = figures.chart_data(store, report, _item(report, "qt"))
    order = cd.data["order"]
    assert sorted(order) == sorted(t0) and cd.words["en"]["names"] == ["Workers 0", "Workers 2"]
    for k, q in enumerate(order):
        assert cd.data["bars"][0][k] == pytest.approx(statistics.median(t0[q]))
        assert cd.data["low"][1][k] == pytest.approx(min(t2[q])) and cd.data["high"][1][k] == pytest.approx(max(t2[q]))
    sp = figures.chart_data(store, report, _item(report, "qs"))
    for k, q in enumerate(sp.data["order"]):
        assert sp.data["bars"][0][k] == pytest.approx(1.0)
        assert sp.data["bars"][1][k] == pytest.approx(statistics.median(t0[q]) / statistics.median(t2[q]))
    assert sp.words["en"]["y_title"].startswith("speed-up")
    fig = draw(sp, "en")
    assert {tr["type"] for tr in fig["data"]} == {"bar"}
    # labels inside the bars, none on the baseline's (×1.00 by definition); the range bars fit the axis
    assert fig["data"][0]["textposition"] == "inside" and not any(fig["data"][0]["text"])
    assert all(t.startswith("×") for t in fig["data"][1]["text"])
    assert fig["layout"]["yaxis"]["range"][1] >= max(h for hs in sp.data["high"] for h in hs if h is not None)


def test_folded_download_parses_back_to_the_stored_samples(env):
    """Each condition's folded stacks (``a;b;c 123``) are its runs' stacks and samples as stored, summed over
    the runs: what flamegraph.pl, speedscope or inferno would draw from them is what the store holds."""
    store, report, _ = env
    cd = figures.chart_data(store, report, _item(report, "flame"))
    files = DOWNLOADS["flamegraph"](cd, "en")
    assert [f[0] for f in files] == ["-1.folded", "-2.folded"] and files[1][1] == "Folded stacks: Clients 8"
    for (_, _, text), clients in zip(files, ("1", "8")):
        parsed: dict[str, int] = {}
        for line in text.splitlines():
            stack, count = line.rsplit(" ", 1)  # frames may hold spaces ("[unknown] (postgres)"): the count is last
            parsed[stack] = parsed.get(stack, 0) + int(count)
        stored = dict(store.query(
            """SELECT stack, sum(samples)::BIGINT FROM profile_stacks WHERE profile = 'cpu' AND run_id IN
               (SELECT run_id FROM run_factors WHERE factor = 'clients' AND value = ?) GROUP BY stack""", [clients]))
        assert parsed == stored and len(parsed) > 20
    # the raw files, read without kansoku: as many samples, and as many of them through each function
    raw = [_stack_counts(PROFILES / "study=profile" / "clients=1" / rep / "perf-script.txt.gz") for rep in ("rep=1", "rep=2")]
    text = files[0][2]
    assert sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()) == sum(sum(r.values()) for r in raw)
    for fn in ("PostgresMain", "XLogFlush"):
        assert sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if fn in line.rsplit(" ", 1)[0].split(";")) \
            == sum(n for r in raw for k, n in r.items() if fn in k.split(";"))


def _diff_env(tmp_path: Path, a: dict[str, int], b: dict[str, int], options: str):
    """Two runs of folded stacks (side=a, side=b), ingested, and a spec drawing their differential flame graph."""
    for side, stacks in (("a", a), ("b", b)):
        d = tmp_path / "runs" / f"side={side}"
        d.mkdir(parents=True)
        (d / "stacks.folded").write_text("".join(f"{k} {v}\n" for k, v in stacks.items()))
    rep = ingest([tmp_path / "runs"], tmp_path / "k.duckdb")
    assert rep.ok, rep.errors
    spec = tmp_path / "diff.toml"
    spec.write_text(SPEC.split("[[chapter]]")[0].replace("[factors.clients]", "[factors.side]") + f"""
[[chapter]]
id = "c"
title = {{ ja = "章", en = "Chapter" }}

[[chapter.figure]]
id = "d"
caption = {{ ja = "差分", en = "Differential" }}
chart = "flamegraph_diff"
metric = "profile_samples"
series = "side"
options = {{ a = "a", b = "b", min_pct = 0{options} }}
""")
    report = load_report(spec)
    store = open_store(tmp_path / "k.duckdb", read_only=True)
    return store, report


def _rgb(s: str) -> tuple[int, int, int]:
    return tuple(int(v) for v in re.findall(r"\d+", s))


def test_differential_flame_graph_colours_follow_the_share_changes(tmp_path):
    """A constructed pair: from a to b, x's share grows by 30 points, y's shrinks by 30, z's by 10, and main
    and f hold no samples of their own. Frames are b's; red where the share grew, blue where it shrank, the
    larger change the more saturated; the hover gives both shares."""
    a = {"main;f;x": 20, "main;f;y": 50, "main;z": 30}
    b = {"main;f;x": 50, "main;f;y": 20, "main;z": 20, "main;w": 10}
    store, report = _diff_env(tmp_path, a, b, "")
    try:
        cd = figures.chart_data(store, report, _item(report, "d"))
    finally:
        store.close()
    t = cd.data["tree"]
    by = {lab: i for i, lab in enumerate(t["labels"])}
    assert t["delta"][by["x"]] == pytest.approx(30) and t["delta"][by["y"]] == pytest.approx(-30)
    assert t["delta"][by["z"]] == pytest.approx(-10) and t["delta"][by["w"]] == pytest.approx(10)
    assert t["delta"][by["main"]] == 0 and t["delta"][by["f"]] == 0
    assert t["values"][by["f"]] == pytest.approx(70)  # the widths are b's
    fig = draw(cd, "en")
    bars = fig["data"][0]
    colors = {lab: _rgb(c) for lab, c in zip(t["labels"], bars["marker"]["color"])}
    r, g, bl = colors["x"]
    assert r == 255 and g == bl < 30                       # grew most: deep red
    assert colors["y"][2] == 255 and colors["y"][0] < 30   # shrank most: deep blue
    assert colors["w"][0] == 255 and colors["w"][1] > colors["x"][1]  # grew less: paler red
    assert colors["z"][2] == 255 and colors["z"][0] > colors["y"][0]  # shrank less: paler blue
    assert colors["main"] == colors["f"] == (245, 245, 245)          # unchanged: near white
    custom = dict((c[0], c) for c in bars["customdata"])
    assert custom["x"][1:4] == ["20.00", "50.00", "+30.00"]          # the share in a, in b, the change
    names = [tr.get("name") for tr in fig["data"][1:]]
    assert names == [cd.words["en"]["grew"], cd.words["en"]["shrank"]]
    # the download is difffolded.pl's: each stack with its samples in a and in b
    (_, _, text), = DOWNLOADS["flamegraph_diff"](cd, "en")
    assert "main;f;x 20 50\n" in text and "main;w 0 10\n" in text


def test_differential_flame_graph_matches_functions_across_call_chains(tmp_path):
    """Two builds whose call chains differ (a caller renamed): with match = "function" the frame of x is
    compared with x wherever a had it."""
    store, report = _diff_env(tmp_path, {"main;old;x": 60, "main;y": 40}, {"main;new;x": 30, "main;y": 70},
                              ', match = "function"')
    try:
        t = figures.chart_data(store, report, _item(report, "d")).data["tree"]
    finally:
        store.close()
    by = {lab: i for i, lab in enumerate(t["labels"])}
    assert t["a_share"][by["x"]] == pytest.approx(60) and t["delta"][by["x"]] == pytest.approx(-30)


def test_print_view_keeps_its_labels_readable(env):
    """The PDF cannot zoom: its flame graph keeps the frames above a threshold it names, each label at a size
    that prints at 7 pt or more (the figure short enough to be printed at the text's full width)."""
    from kansoku.render.charts import draw_print
    from kansoku.render.typst import CHART_WIDTH_PX, MAX_CHART_HEIGHT_PT, TEXT_WIDTH_PT

    store, report, _ = env
    cd = figures.chart_data(store, report, _item(report, "flame"))
    fig = draw_print(cd, "en")
    lay = fig["layout"]
    assert TEXT_WIDTH_PT * lay["height"] / CHART_WIDTH_PX <= MAX_CHART_HEIGHT_PT  # printed at the text width
    scale = TEXT_WIDTH_PT / CHART_WIDTH_PX
    assert lay["uniformtext"]["minsize"] * scale >= 7  # a label that would shrink below is hidden instead
    frames = [tr for tr in fig["data"] if (tr.get("meta") or {}).get("flame")]
    assert all(tr["textfont"]["size"] * scale >= 7 for tr in frames)
    assert "%" in lay["xaxis2"]["title"]["text"] and "{pct}" not in lay["xaxis2"]["title"]["text"]
    # the web's figure is the whole graph, with the reader's tools' words
    web = draw(cd, "en")
    assert sum(len(tr["x"]) for tr in web["data"] if (tr.get("meta") or {}).get("flame")) == \
        sum(len(t["labels"]) for t in cd.data["trees"])
    assert web["layout"]["meta"]["flame"]["search"] == "Search a function"
