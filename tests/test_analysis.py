"""The analysis engine on a small synthetic data set (a transcribed table with repetitions, built
inline: selection, aggregation, representative runs, pivots, ordering and every kind of baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPORT_HEAD
from drawing import drawn_figure
from kansoku.analysis import tables as analysis
from kansoku.analysis.table_kinds import compute_table
from kansoku.analysis.tables import fmt_compare, fmt_printed
from kansoku.ingest.pipeline import ingest
from kansoku.spec.model import load_report
from kansoku.store.db import open_store

# clients x config x rep; tps and a companion metric, and a lower-is-better time
ROWS = [
    # clients, config, rep, tps, cpu_idle_pct, elapsed_s
    (1, "off", 1, 100.0, 90.0, 10.0), (1, "off", 2, 110.0, 91.0, 9.0), (1, "off", 3, 130.0, 92.0, 8.0),
    (1, "on", 1, 90.0, 80.0, 12.0), (1, "on", 2, 95.0, 81.0, 11.0), (1, "on", 3, 99.0, 82.0, 10.5),
    (2, "off", 1, 200.0, 70.0, 5.0), (2, "off", 2, 220.0, 71.0, 4.0), (2, "off", 3, 260.0, 72.0, 4.5),
    (2, "on", 1, 180.0, 60.0, 6.0), (2, "on", 2, 170.0, 61.0, 6.5), (2, "on", 3, 175.0, 62.0, 7.0),
    (16, "off", 1, 800.0, 10.0, 1.0), (16, "on", 1, 400.0, 5.0, 2.0),
]

SIDECAR = """
[published]
id = "synthetic"
csv = "synthetic.csv"
[published.citation]
report = "A synthetic report for tests"
table = "Table 9.9"
[published.factors]
study = "engine"
[published.columns]
clients = { factor = "clients" }
config = { factor = "config" }
rep = { factor = "rep" }
tps = { metric = "tps" }
cpu_idle_pct = { metric = "cpu_idle_pct", unit = "%" }
elapsed_s = { metric = "elapsed_s", unit = "s" }
"""

HEAD = "\n" + REPORT_HEAD + """[metrics.elapsed_s]
label = { ja = "時間", en = "Time" }
unit = "s"
higher_is_better = false
[factors.config]
name = { ja = "構成", en = "Configuration" }
order = ["on", "off"]
labels.off = { ja = "無効", en = "off" }
labels.on = { ja = "有効", en = "on" }
[[chapter]]
id = "c"
title = "C"
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("syn")
    (d / "synthetic.toml").write_text(SIDECAR, encoding="utf-8")
    lines = ["clients,config,rep,tps,cpu_idle_pct,elapsed_s"] + [",".join(map(str, r)) for r in ROWS]
    (d / "synthetic.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = d / "k.duckdb"
    assert ingest([d], db).ok
    st = open_store(db, read_only=True)
    yield st
    st.close()


def spec(tmp_path: Path, body: str):
    p = tmp_path / "t.toml"
    p.write_text(HEAD + body, encoding="utf-8")
    return load_report(p)


def compute(store, tmp_path, body: str, item="x"):
    r = spec(tmp_path, body)
    return compute_table(store, r, r.item(item))


def texts(t, lang="en"):
    return [[c.text[lang] for c in row] for row in t.rows]


def test_median_count_and_representative_companion(store, tmp_path):
    t = compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metrics = ["tps", "cpu_idle_pct"]
where = { study = "engine" }
rows = "clients"
columns = "config"
count = true
companions = "representative"
digits = { tps = 1, cpu_idle_pct = 0 }
""")
    # the companion column says it is one run's value, the first metric's a median
    assert [c.get("aggregation") for c in t.columns if c["kind"] == "value"] == ["median", "representative"] * 2
    # declared order: on before off; rows numeric: 1, 2, 16 (not '16' < '2')
    assert [h["text"]["en"] for h in t.header[0][1:]] == ["on", "off"]
    assert [row[0].text["en"] for row in t.rows] == ["1", "2", "16"]
    assert texts(t)[0] == ["1", "95.0", "3", "81", "110.0", "3", "91"]
    # the companion comes from the run whose TPS is the median
    cell = t.rows[1][4]  # clients 2, off, tps median 220 (rep 2)
    assert cell.representative == "published/synthetic/clients=2/config=off/rep=2"
    assert t.rows[1][6].value == 71.0 and t.rows[1][6].runs == [cell.representative]
    assert t.rows[2][2].text["en"] == "1"  # count for 16 clients
    assert all("transcribed" in c.flags for row in t.rows for c in row if c.kind == "value")
    assert t.citations == ["A synthetic report for tests, Table 9.9"]


@pytest.mark.parametrize("agg,expected", [("median", 110.0), ("mean", 340 / 3), ("min", 100.0), ("max", 130.0)])
def test_a_cell_aggregates_its_runs_as_the_spec_says(store, tmp_path, agg, expected):
    t = compute(store, tmp_path, f"""
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
where = {{ config = "off", clients = 1 }}
rows = "clients"
aggregate = "{agg}"
""")
    assert t.rows[0][1].value == pytest.approx(expected)
    assert len(t.rows[0][1].runs) == 3


def test_single_refuses_several_runs(store, tmp_path):
    with pytest.raises(Exception, match=r"t.toml: chapter 'c', table 'x' \(1.1\): aggregate = 'single' but 3 runs"):
        compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
where = { config = "off", clients = 1 }
rows = "clients"
aggregate = "single"
""")


@pytest.mark.parametrize("where,rows", [
    ('{ clients = 2 }', ["2"]),
    ('{ clients = [1, 16] }', ["1", "16"]),
    ('{ clients = { min = 2 } }', ["2", "16"]),
    ('{ clients = { min = 1.5, max = 10 } }', ["2"]),
    ('{ clients = { max = 2 }, rep = "3" }', ["1", "2"]),
])
def test_where_equal_in_and_ranges(store, tmp_path, where, rows):
    t = compute(store, tmp_path, f"""
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
where = {where}
rows = "clients"
""")
    assert [r[0].text["en"] for r in t.rows] == rows


def test_baseline_column_ratio_and_direction_flags(store, tmp_path):
    t = compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
rows = "clients"
columns = "config"
baseline = { factor = "config", value = "off", compare = "ratio", format = "percent", digits = 2 }
""")
    # columns: clients | on: tps, ratio | off (baseline): tps
    assert texts(t)[0] == ["1", "95.00", "86.36 %", "110.00"]
    assert t.header[0][2]["baseline"] is True
    assert "worse" in t.rows[0][2].flags  # tps is higher-is-better and dropped


def test_baseline_rows_first_row_fixed_and_formats(store, tmp_path):
    body = """
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
where = {{ config = "off" }}
rows = "clients"
baseline = {{ {b} }}
"""
    t = compute(store, tmp_path, body.format(b='row = "first", compare = "ratio", format = "times", digits = 2'))
    assert [r[2].text["en"] for r in t.rows] == ["×1.00", "×2.00", "×7.27"]
    assert "baseline" in t.rows[0][0].flags
    t = compute(store, tmp_path, body.format(b='factor = "clients", value = 16, compare = "change", format = "change", digits = 1'))
    assert [r[2].text["ja"] for r in t.rows] == ["▲86.3%", "▲72.5%", "0.0%"]
    assert [r[2].text["en"] for r in t.rows] == ["\u221286.3 %", "\u221272.5 %", "0.0 %"]
    t = compute(store, tmp_path, body.format(b='fixed = 55, compare = "ratio", format = "percent", digits = 0'))
    assert [r[2].text["en"] for r in t.rows] == ["200 %", "400 %", "1455 %"]


def test_baseline_outside_the_pivot_and_hidden_baseline_column(store, tmp_path):
    # only 'on' shown, compared with 'off' (another value of a factor that is not rows nor columns)
    t = compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
where = { config = "on" }
rows = "clients"
baseline = { factor = "config", value = "off", format = "percent", digits = 1 }
""")
    assert texts(t)[0] == ["1", "95.00", "86.4 %"]
    t2 = compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
rows = "clients"
columns = "config"
baseline = { factor = "config", value = "off", format = "percent", digits = 1, show_baseline = false }
""")
    assert texts(t2) == texts(t)


def test_auto_compare_follows_the_metric_direction(store, tmp_path):
    t = compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metric = "elapsed_s"
rows = "clients"
columns = "config"
baseline = { factor = "config", value = "off", compare = "auto", format = "times", digits = 3 }
""")
    # elapsed_s is lower-is-better ([metrics.elapsed_s]): auto = speed-up baseline / value
    assert t.rows[0][2].text["en"] == "×" + f"{9.0 / 11.0:.3f}"
    assert "worse" in t.rows[0][2].flags
    assert t.columns[2]["text"]["en"] == "speed-up over off (on)"
    assert t.columns[1]["text"]["en"] == "Time (s) (on)"


def test_show_factors_and_row_labels(store, tmp_path):
    t = compute(store, tmp_path, """
[[chapter.table]]
id = "x"
caption = "x"
metric = "tps"
where = { rep = "1" }
rows = "clients"
show_factors = ["config", "rep"]
row_labels."16" = { ja = "16 (最大)", en = "16 (max)" }
""")
    assert texts(t)[2] == ["16 (max)", "on / off", "1", "600.00"]
    assert texts(t, "ja")[2][:2] == ["16 (最大)", "有効 / 無効"]


def test_compared_and_printed_numbers_read_as_each_language_prints_them():
    # a percent as each language prints every percent, a change's too: "103.82%" beside "▲92.3%" in Japanese
    assert fmt_compare(1.0382, "percent", 2, "ja") == "103.82%"
    assert fmt_compare(1.0382, "percent", 2, "en") == "103.82 %"
    assert fmt_compare(30.2149, "times", 2, "en") == "×30.21"
    assert fmt_compare(-0.923, "change", 1, "ja") == "▲92.3%"
    assert fmt_compare(-0.923, "change", 1, "en") == "\u221292.3 %"
    assert fmt_compare(0.25, "change", 1, "en") == "+25.0 %"
    assert fmt_compare(3783.554, "number", 2, "en", significant=5) == "3783.6"
    assert fmt_compare(0.931640, "number", 2, "en", significant=5) == "0.93164"
    assert fmt_printed("-92.3", "change", "ja") == "▲92.3%"
    # half away from zero, as printed reports round (Python's format would give 86.2 and 0.12)
    assert analysis.fmt_number(86.25, 1) == "86.3" and analysis.fmt_number(0.125, 2) == "0.13"
    assert analysis.fmt_number(-0.001, 2) == "0.00"


def test_figure_of_transcribed_values_is_marked_transcribed(store, tmp_path):
    r = spec(tmp_path, """
[[chapter.figure]]
id = "x"
caption = "x"
metric = "tps"
x = "clients"
series = "config"
options = { x_log = true }
""")
    f = drawn_figure(store, r, r.item("x", "figure"))
    assert f.transcribed is True and f.label == {"ja": "図 1.1", "en": "Figure 1.1"}
    names = [tr["name"] for tr in f.figure["ja"]["data"]]
    assert names == ["有効", "無効"]
    assert f.figure["en"]["layout"]["xaxis"]["type"] == "log"
    assert "(transcribed)" in f.figure["en"]["data"][0]["hovertext"][0]
