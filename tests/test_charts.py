"""Chart kinds of tools/kansoku/charts/ (docs/charts.md), built from real ingested runs: traces, axis
titles in both languages, provenance, and numbers checked against the raw files (pgbench progress
lines and per-transaction logs, strace -c tables, fio JSON, pg_test_fsync output) read here without
kansoku. Bad options are spec errors naming the spec file and the figure."""

from __future__ import annotations

import json
import re
import shutil
import statistics
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from drawing import drawn_figure
from kansoku.analysis import figures
from kansoku.analysis import tables as analysis
from kansoku.errors import SpecError
from kansoku.ingest.pipeline import ingest
from kansoku.spec.model import load_report
from kansoku.store.db import open_store

EXAMPLE = ROOT / "data" / "runs" / "example" / "campaign=example-2026-11"
UPDATE_OFF = EXAMPLE / "study=scaleup" / "workload=update" / "config=checksums-off"
SYSCALLS = EXAMPLE / "study=syscalls" / "workload=update"
FIO = EXAMPLE / "study=fio"
FSYNC_FILE = FIXTURES / "pg_test_fsync" / "pg_test_fsync15.18_s1.txt"
BASIC_TRACES = {"scatter", "bar"}  # the site's plotly.js "basic" bundle (site.py BUNDLE_TRACES)

SPEC_HEAD = """
[report]
id = "charts-test"
fiscal_year = 2026
title = { ja = "図のテスト", en = "Chart test" }
organisation = { ja = "kansoku", en = "kansoku" }

[factors.config]
name = { ja = "構成", en = "Configuration" }
order = ["checksums-off", "checksums-on"]
labels."checksums-off" = { ja = "チェックサム無効", en = "checksums off" }
labels."checksums-on" = { ja = "チェックサム有効", en = "checksums on" }

[factors.clients]
name = { ja = "クライアント数", en = "Clients" }

[[chapter]]
id = "c"
title = { ja = "章", en = "Chapter" }
"""

FIGS = {
    "tps": """chart = "tps_over_time"
metric = "tps"
where = { study = "scaleup", workload = "update", config = "checksums-off" }
series = "clients"
options = { latency = true }""",
    "tps-all": """chart = "tps_over_time"
metric = "tps"
where = { study = "scaleup", workload = "update", config = "checksums-off" }
series = "clients"
options = { runs = "all" }""",
    "pct": """chart = "latency_percentiles"
metrics = ["latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms"]
where = { study = "scaleup", workload = "update" }
x = "clients"
series = "config" """,
    "cpu": """chart = "cpu_stacked"
metric = "tps"
where = { study = "scaleup", workload = "update", config = "checksums-off", clients = 8 }""",
    "percpu": """chart = "cpu_per_cpu"
metric = "tps"
where = { study = "scaleup", workload = "update", config = "checksums-off", clients = 8 }
options = { column = "usr" }""",
    "sys-top": """chart = "syscalls_top"
metric = "strace_total_seconds"
where = { study = "syscalls" }
series = "config"
options = { top = 10 }""",
    "sys-err": """chart = "syscalls_calls_errors"
metric = "strace_total_seconds"
where = { study = "syscalls" }
series = "config"
options = { syscalls = ["futex", "recvfrom", "sendto"] }""",
    "fio": """chart = "fio_bandwidth"
metric = "fio_read_bw_kib_s"
where = { study = "fio" }
options = { baseline = "hdd", ratio_digits = 2 }""",
    "fsync": """chart = "fsync_methods"
metric = "pg_test_fsync_fdatasync_ops_s"
where = { bench = "fsync" }""",
    "two": """chart = "two_metrics"
metrics = ["tps", "cpu_idle_pct"]
where = { study = "scaleup", workload = "update", config = "checksums-off" }
x = "clients" """,
    "shares": """chart = "stacked_shares"
metrics = ["cpu_usr_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_soft_pct"]
where = { study = "scaleup", workload = "update", config = "checksums-off" }
x = "clients"
options = { rest = { ja = "idle ほか", en = "idle etc." } }""",
    "ratio": """chart = "ratio"
metric = "tps"
where = { study = "scaleup", workload = "update" }
x = "clients"
series = "config"
options = { baseline = { factor = "config", value = "checksums-off" } }""",
    "disk": """chart = "disk_over_time"
metric = "tps"
where = { study = "scaleup", workload = "update", config = "checksums-off", clients = 8 }""",
}


def spec_text(figs: dict[str, str]) -> str:
    out = [SPEC_HEAD]
    for fid, body in figs.items():
        out.append(f'[[chapter.figure]]\nid = "{fid}"\ncaption = {{ ja = "{fid}", en = "{fid}" }}\n{body}\n')
    return "\n".join(out)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Ingest a few real runs: update/checksums-off with 1 and 8 clients (3 reps each; rep 1 has a
    10 % per-transaction log, reps 2-3 progress lines only), update/checksums-on rep 1 (for the
    percentiles' series), the two strace runs, four fio runs laid out as two devices (read and
    randwrite, rep 1 as 'hdd', rep 2 as 'ssd': two real measurements), and the real pg_test_fsync output."""
    base = tmp_path_factory.mktemp("charts")
    fio_root = base / "fio"
    for dev, rep in (("hdd", "1"), ("ssd", "2")):
        for rw in ("read", "randwrite"):
            shutil.copytree(FIO / f"rw={rw}" / f"rep={rep}", fio_root / f"device={dev}" / f"rw={rw}" / f"rep={rep}")
    fsync_dir = base / "misc" / "bench=fsync" / "rep=1"
    fsync_dir.mkdir(parents=True)
    shutil.copy(FSYNC_FILE, fsync_dir / "pg_test_fsync.txt")
    paths = [UPDATE_OFF / f"clients={c}" / f"rep={r}" for c in (1, 8) for r in (1, 2, 3)]
    paths += [EXAMPLE / "study=scaleup" / "workload=update" / "config=checksums-on" / f"clients={c}" / "rep=1"
              for c in (1, 8)]
    paths += [SYSCALLS / f"config={c}" / "clients=8" / "variant=c_f" for c in ("checksums-off", "checksums-on")]
    paths += [fio_root, fsync_dir]
    db = base / "k.duckdb"
    rep = ingest(paths, db)
    assert rep.ok, [f for f in rep.files if f.status == "failed"]
    spec = base / "charts.toml"
    spec.write_text(spec_text(FIGS), encoding="utf-8")
    store = open_store(db, read_only=True)
    report = load_report(spec)
    built = {it.id: drawn_figure(store, report, it) for ch in report.chapters for it in ch.items}
    yield {"store": store, "report": report, "built": built, "base": base, "db": db}
    store.close()


def fig(env, fid: str, lang: str = "en") -> dict:
    return env["built"][fid].figure[lang]


def axis_title(f: dict, axis: str = "xaxis") -> str:
    return f["layout"][axis]["title"]["text"]


def test_every_kind_is_registered_and_uses_the_basic_bundle(env):
    for k in ("tps_over_time", "latency_percentiles", "cpu_stacked", "cpu_per_cpu", "syscalls_top",
              "syscalls_calls_errors", "fio_bandwidth", "fsync_methods"):
        assert k in figures.KINDS
    for fid, f in env["built"].items():
        for lang in ("ja", "en"):
            data = f.figure[lang]["data"]
            assert data, fid
            assert {t.get("type", "scatter") for t in data} <= BASIC_TRACES, fid
        assert f.runs, f"{fid}: the figure names its runs"


# -- tps_over_time ------------------------------------------------------------------------

PROGRESS = re.compile(r"^progress: ([0-9.]+) s, ([0-9.]+) tps", re.M)
PROCESSED = re.compile(r"^number of transactions actually processed: (\d+)", re.M)


def run_dir_of(run_id: str) -> Path:
    return ROOT / "data" / "runs" / "example" / run_id


def independent_tps_series(run_dir: Path) -> list[tuple[float, float]]:
    """(elapsed_s, tps) from the raw files: the per-transaction log when there is one (counted per
    wall-clock second, divided by the sampled fraction, seconds reaching outside run.toml's start/end
    dropped), else pgbench's progress lines."""
    meta = tomllib.loads((run_dir / "run.toml").read_text())
    start, end = meta["start"].timestamp(), meta["end"].timestamp()
    out = (run_dir / "pgbench.log").read_text()
    logs = sorted(run_dir.glob("pgbench_log.*"))
    if not logs:
        return [(float(t), float(v)) for t, v in PROGRESS.findall(out)]
    per_sec: Counter = Counter()
    ok = 0
    for log in logs:
        for line in log.read_text().splitlines():
            f = line.split()
            if f[2].isdigit():
                ok += 1
                per_sec[int(f[4])] += 1
    fraction = ok / int(PROCESSED.search(out).group(1))
    series = []
    for sec in sorted(per_sec):
        if sec - start >= -0.001 and sec + 1 - start <= end - start + 0.001:
            series.append((sec + 1 - start, per_sec[sec] / fraction))
    return series


def test_tps_over_time_matches_the_raw_logs(env):
    f = fig(env, "tps-all")
    assert len(f["data"]) == 6  # 2 conditions x 3 runs
    sources = set()
    for run_id, tr in zip(sorted(env["built"]["tps-all"].runs, key=lambda r: (int(r.split("clients=")[1][0]), r)),
                          f["data"]):
        expected = independent_tps_series(run_dir_of(run_id))
        sources.add(bool(list(run_dir_of(run_id).glob("pgbench_log.*"))))
        assert len(tr["x"]) == len(expected) >= 3, run_id
        for x, y, (ex, ey) in zip(tr["x"], tr["y"], expected):
            assert x == pytest.approx(ex, abs=2e-3)
            assert y == pytest.approx(ey, rel=1e-9)
    assert sources == {True, False}, "both the per-transaction log and the progress lines are checked"


def test_tps_over_time_representative_runs_and_labels(env):
    built = env["built"]["tps"]
    store, report = env["store"], env["report"]
    item = report.item("tps", "figure")
    groups = analysis.aggregate(store, item, "tps", ["clients"])
    assert sorted(built.runs) == sorted(g.representative_run_id for g in groups)
    en, ja = built.figure["en"], built.figure["ja"]
    assert [t["name"] for t in en["data"] if t.get("yaxis") != "y2"] == ["Clients 1", "Clients 8"]
    assert [t["name"] for t in ja["data"] if t.get("yaxis") != "y2"] == ["クライアント数 1", "クライアント数 8"]
    assert axis_title(en) == "Time since the run's start (s)" and axis_title(ja) == "実行開始からの経過時間 (秒)"
    assert axis_title(en, "yaxis") == "TPS (transactions/s)" and "トランザクション/秒" in axis_title(ja, "yaxis")
    assert axis_title(en, "yaxis2") == "Mean latency (ms)" and axis_title(ja, "yaxis2") == "平均レイテンシ (ms)"
    assert sum(t.get("yaxis") == "y2" for t in en["data"]) == 2


# -- latency_percentiles -------------------------------------------------------------------

def test_latency_percentiles_against_the_transaction_log(env):
    f = fig(env, "pct")
    names = [t["name"] for t in f["data"]]
    assert len(names) == 8 and names[0].startswith("Latency p50") and "checksums off" in names[0]
    assert axis_title(f) == "Clients" and axis_title(f, "yaxis") == "Latency (ms)"
    assert axis_title(fig(env, "pct", "ja"), "yaxis") == "レイテンシ (ms)"
    lat = []
    for log in sorted((UPDATE_OFF / "clients=8" / "rep=1").glob("pgbench_log.*")):
        lat += [int(line.split()[2]) / 1000 for line in log.read_text().splitlines() if line.split()[2].isdigit()]
    q = statistics.quantiles(lat, n=100, method="inclusive")
    p50 = next(t for t in f["data"] if t["name"].startswith("Latency p50") and "checksums off" in t["name"])
    p99 = next(t for t in f["data"] if t["name"].startswith("Latency p99") and "checksums off" in t["name"])
    assert p50["x"][-1] == 8 and p50["y"][-1] == pytest.approx(statistics.median(lat))
    assert p99["y"][-1] == pytest.approx(q[98])


# -- cpu ----------------------------------------------------------------------------------

def test_cpu_stacked_one_representative_run_with_disk_util(env):
    built = env["built"]["cpu"]
    store, report = env["store"], env["report"]
    (g,) = analysis.aggregate(store, report.item("cpu", "figure"), "tps", [])
    assert built.runs == [g.representative_run_id]
    en, ja = built.figure["en"], built.figure["ja"]
    stacked = [t for t in en["data"] if t.get("stackgroup")]
    assert [t["name"] for t in stacked] == ["%usr", "%sys", "%iowait", "%soft", "%steal"]
    util = [t for t in en["data"] if t.get("yaxis") == "y2"]
    assert [t["name"] for t in util] == ["vda %util"]
    # the stack never exceeds 100 % (sar's columns of one sample add up to 100 with %idle)
    for i in range(len(stacked[0]["x"])):
        assert sum(t["y"][i] for t in stacked) <= 100.5
    rows = store.con.execute("SELECT count(*) FROM cpu_in_run WHERE run_id = ? AND tool = 'sar' AND cpu = 'all'",
                             [g.representative_run_id]).fetchone()[0]
    assert len(stacked[0]["x"]) == rows >= 4
    assert axis_title(en, "yaxis") == "CPU usage (all CPUs, sar) (%)"
    assert axis_title(ja, "yaxis") == "CPU 使用率 (全 CPU 平均, sar) (%)"
    assert axis_title(en, "yaxis2") == "Disk %util (%)" and axis_title(ja, "yaxis2") == "ディスク %util (%)"


def test_cpu_per_cpu_small_multiples(env):
    en, ja = fig(env, "percpu"), fig(env, "percpu", "ja")
    assert [t["name"] for t in en["data"]] == ["CPU 0", "CPU 1"]  # the machine has 2 vCPUs
    assert en["data"][1]["xaxis"] == "x2"
    assert [a["text"] for a in en["layout"]["annotations"]] == ["CPU 0", "CPU 1"]
    assert en["layout"]["yaxis"]["title"]["text"] == "%usr (%)"
    assert en["layout"]["xaxis"]["title"]["text"] == "Time since the run's start (s)"
    assert ja["layout"]["xaxis"]["title"]["text"] == "実行開始からの経過時間 (秒)"


# -- strace -----------------------------------------------------------------------------

STRACE_ROW = re.compile(r"^\s*([0-9.]+)\s+([0-9.]+)\s+(\d+)?\s+(\d+)\s+(\d+)?\s+(\w+)\s*$")


def strace_table(config: str) -> dict[str, dict]:
    """strace -c rows read here: '% time  seconds  usecs/call  calls  errors syscall'."""
    text = (SYSCALLS / f"config={config}" / "clients=8" / "variant=c_f" / "strace_c.txt").read_text()
    out = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) < 5 or cols[-1] == "total" or not re.match(r"^\d", cols[0]):
            continue
        errors = int(cols[4]) if len(cols) == 6 else 0
        out[cols[-1]] = {"pct": float(cols[0]), "calls": int(cols[3]), "errors": errors}
    return out


def test_syscalls_top_matches_the_strace_tables(env):
    en, ja = fig(env, "sys-top"), fig(env, "sys-top", "ja")
    tables = {c: strace_table(c) for c in ("checksums-off", "checksums-on")}
    expected = set()
    for t in tables.values():
        expected |= set(sorted(t, key=lambda s: -t[s]["pct"])[:10])
    assert [t["name"] for t in en["data"]] == ["checksums off", "checksums on"]
    assert [t["name"] for t in ja["data"]] == ["チェックサム無効", "チェックサム有効"]
    for tr, config in zip(en["data"], tables):
        assert set(tr["y"]) == expected
        assert tr["orientation"] == "h"
        for s, x in zip(tr["y"], tr["x"]):
            if s in tables[config]:
                assert x == tables[config][s]["pct"], (config, s)
            else:  # in the other condition's top 10, never called in this one
                assert x in (0, None), (config, s, x)
    first = en["data"][0]["y"]
    assert first[0] == "wait4"  # largest share on top (autorange reversed)
    assert en["layout"]["yaxis"]["autorange"] == "reversed"
    assert axis_title(en) == "Share of system-call time (%)" and axis_title(ja) == "システムコール時間に占める割合 (%)"


def test_syscalls_calls_errors_matches_the_strace_tables(env):
    en, ja = fig(env, "sys-err"), fig(env, "sys-err", "ja")
    assert [t["name"] for t in en["data"]] == ["checksums off: calls", "checksums off: errors",
                                               "checksums on: calls", "checksums on: errors"]
    assert ja["data"][1]["name"] == "チェックサム無効: エラー回数"
    for i, config in enumerate(("checksums-off", "checksums-on")):
        t = strace_table(config)
        calls, errors = en["data"][2 * i], en["data"][2 * i + 1]
        assert calls["y"] == ["futex", "recvfrom", "sendto"]
        assert calls["x"] == [t[s]["calls"] for s in calls["y"]]
        assert errors["x"] == [t[s]["errors"] for s in calls["y"]]
        assert errors["marker"]["pattern"]["shape"] == "/"
    assert axis_title(en) == "Count (calls)" and axis_title(ja) == "回数 (回)"


# -- disk -------------------------------------------------------------------------------

def test_fio_bandwidth_per_pattern_and_ratio_to_the_baseline_device(env):
    en, ja = fig(env, "fio"), fig(env, "fio", "ja")
    bw = {}
    for dev, rep in (("hdd", "1"), ("ssd", "2")):
        for rw, direction in (("read", "read"), ("randwrite", "write")):
            doc = json.loads((FIO / f"rw={rw}" / f"rep={rep}" / "fio_output.json").read_text())
            bw[(dev, rw)] = sum(j[direction]["bw"] for j in doc["jobs"])  # KiB/s
    assert [t["name"] for t in en["data"]] == ["hdd (baseline)", "ssd"]
    assert ja["data"][0]["name"] == "hdd (基準)"
    hdd, ssd = en["data"]
    assert hdd["x"] == ["Sequential read", "Random write"] == ssd["x"]
    assert ja["data"][0]["x"] == ["シーケンシャル読み込み", "ランダム書き込み"]
    assert hdd["y"] == pytest.approx([bw[("hdd", "read")] / 1024, bw[("hdd", "randwrite")] / 1024])
    ratios = [bw[("ssd", "read")] / bw[("hdd", "read")], bw[("ssd", "randwrite")] / bw[("hdd", "randwrite")]]
    assert ssd["text"] == [f"×{r:.2f}" for r in ratios]
    assert axis_title(en, "yaxis") == "Bandwidth (MiB/s)" and axis_title(ja, "yaxis") == "帯域 (MiB/s)"
    assert axis_title(en) == "Access pattern" and axis_title(ja) == "アクセスパターン"
    assert len(env["built"]["fio"].runs) == 4
    # one run per bar here: no error bar (an aggregate of several runs gets its min–max, as line charts do)
    assert hdd.get("error_y") in (None, {}) and hdd["meta"] == {"n": [1, 1]}


def test_fio_bars_of_several_runs_have_error_bars():
    from kansoku.model import ChartData
    from kansoku.render.charts.disk import fio_bandwidth

    words = {"names": ["hdd"], "x": [["Sequential read"]], "hover": [["x"]], "x_title": "a", "y_title": "b"}
    chart = ChartData("fio_bandwidth", {}, {"bars": [{"device": "hdd", "y": [10.0], "text": ["10"], "lo": [8.0],
                                                      "hi": [13.0], "n": [3]}]}, {"en": words})
    fig = fio_bandwidth(chart, "en")
    bar, label = fig["data"]
    assert bar["error_y"]["array"] == [3.0] and bar["error_y"]["arrayminus"] == [2.0] and bar["meta"] == {"n": [3]}
    # its value above the whisker's top, never on the whisker: a clear bar in the same place carries it
    assert bar.get("text") is None
    assert label["y"] == [13.0] and label["text"] == ["10"] and label["textposition"] == "outside"
    assert label["offsetgroup"] == bar["offsetgroup"] and label["legendgroup"] == bar["legendgroup"]
    assert label["showlegend"] is False and label["hoverinfo"] == "skip"
    # the figure's CSV holds the bar's data alone, not the clear bar that carries its label
    from kansoku.render.hugo import figure_csv
    assert figure_csv(fig).splitlines()[1:] == ["hdd,Sequential read,10,8,13,3"]


def test_fsync_methods_from_the_real_output(env):
    """Each method's rate as pg_test_fsync printed it; a method the machine could not use (fsync_writethrough on
    Linux) is no empty row but named in the legend, drawing nothing."""
    en, ja = fig(env, "fsync"), fig(env, "fsync", "ja")
    one = en["data"][0]
    assert [t["name"] for t in en["data"]] == ["one 8kB write", "two 8kB writes",
                                               "not usable here: fsync_writethrough"]
    assert ja["data"][0]["name"] == "8kB 1 回書き込み"
    assert ja["data"][-1]["name"] == "ここでは使えない方式: fsync_writethrough"
    assert en["data"][-1]["x"] == [None] and en["data"][-1]["hoverinfo"] == "skip"
    assert one["y"] == ["open_datasync", "fdatasync", "fsync", "open_sync"]
    text = FSYNC_FILE.read_text().split("two 8kB writes")[0]
    assert re.search(r"^\s+fsync_writethrough\s+n/a", text, re.M)
    for method, x in zip(one["y"], one["x"]):
        m = re.search(rf"^\s+{method}\s+([0-9.]+) ops/sec", text, re.M)
        assert m and x == float(m.group(1))
    assert axis_title(en) == "Operations per second (ops/s)" and axis_title(ja) == "1 秒あたりの操作数 (ops/s)"


# -- spec errors --------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    (FIGS["sys-top"].replace("top = 10", "top = 10, colour = \"red\""), "unknown option(s) ['colour']"),
    (FIGS["sys-top"].replace("top = 10", "top = \"ten\""), "option top must be an integer"),
    (FIGS["percpu"].replace("\"usr\"", "\"bogus\""), "option column = 'bogus'"),
    (FIGS["cpu"] + "\noptions = { tool = \"perf\" }", "option tool = 'perf'"),
    (FIGS["sys-err"].replace("\"sendto\"", "\"nosuchcall\""), "option syscalls: ['nosuchcall']"),
    (FIGS["fio"].replace("\"hdd\"", "\"tape\""), "option baseline = 'tape'"),
    (FIGS["tps"].replace("latency = true", "runs = \"some\""), "option runs = 'some'"),
    (FIGS["tps"].replace("latency = true", "run = \"no/such/run\""), "no run 'no/such/run'"),
    (FIGS["pct"].replace("x = \"clients\"", ""), "needs x ="),
    (FIGS["cpu"] + "\noptions = { run = \"bench=fsync/rep=1\" }", "has no data for chart 'cpu_stacked'"),
    (FIGS["fsync"] + "\nseries = \"colour\"", "unknown factor 'colour'"),
])
def test_bad_options_name_the_spec_file_and_the_figure(env, tmp_path, body, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(spec_text({"broken": body}), encoding="utf-8")
    report = load_report(spec)
    item = report.item("broken", "figure")
    with pytest.raises(SpecError) as exc:
        drawn_figure(env["store"], report, item)
    text = str(exc.value)
    assert str(spec) in text and "figure 'broken' (1.1)" in text and message in text, text


# -- ratio, two_metrics, stacked_shares, disk_over_time, softirq_types (charts/derived.py, activity.py) ----

def medians(env, metric: str, where: str) -> dict[str, float]:
    """metric per client count: the median over the runs, straight from run_metrics."""
    rows = env["store"].query(
        "SELECT f.value, median(m.value) FROM run_metrics m JOIN run_factors f ON f.run_id = m.run_id "
        "AND f.factor = 'clients' WHERE m.metric = ? AND m.run_id IN (SELECT run_id FROM run_factors "
        "WHERE factor = 'config' AND value = ?) AND m.run_id IN (SELECT run_id FROM run_factors "
        "WHERE factor = 'study' AND value = 'scaleup') GROUP BY 1", [metric, where])
    return {str(c): v for c, v in rows}


def test_ratio_two_metrics_and_stacked_shares_on_real_runs(env):
    off = medians(env, "tps", "checksums-off")
    on = medians(env, "tps", "checksums-on")
    f = fig(env, "ratio")
    on_trace = next(t for t in f["data"] if t["name"] == "checksums on")
    assert [float(y) for y in on_trace["y"]] == pytest.approx([on[c] / off[c] for c in ("1", "8")])
    assert next(t for t in f["data"] if t["name"] == "checksums off")["y"] == [1, 1]
    assert f["layout"]["xaxis"]["type"] == "category"
    # two metrics: TPS on the left axis, CPU idle on the right
    f = fig(env, "two")
    axes = {t["name"]: t.get("yaxis") or "y" for t in f["data"]}
    assert axes == {"TPS": "y", "CPU idle (%)": "y2"} or set(axes.values()) == {"y", "y2"}
    assert f["layout"]["yaxis2"]["side"] == "right" and f["layout"]["yaxis2"]["overlaying"] == "y"
    left = next(t for t in f["data"] if (t.get("yaxis") or "y") == "y")
    assert [float(y) for y in left["y"]] == pytest.approx([off["1"], off["8"]])
    # stacked shares: usr + sys + iowait + soft + the rest = 100 per client count, each the median of its runs
    f = fig(env, "shares")
    assert f["layout"]["barmode"] == "stack"
    totals = [sum(t["y"][i] or 0 for t in f["data"]) for i in range(2)]
    assert totals == pytest.approx([100, 100])
    usr = medians(env, "cpu_usr_pct", "checksums-off")
    assert [float(y) for y in f["data"][0]["y"]] == pytest.approx([usr["1"], usr["8"]])
    assert env["built"]["shares"].runs and env["built"]["ratio"].runs


def test_disk_over_time_reads_the_runs_disk_samples(env):
    built = env["built"]["disk"]
    run = built.chart_data.data["runs"][0]
    rows = env["store"].query(
        "SELECT device, t_s, write_kb_s FROM disk_in_run WHERE run_id = ? AND tool = ? AND NOT is_virtual "
        "AND NOT is_partition ORDER BY device, t_s", [run, built.chart_data.data["lines"][0]["tool"]])
    f = fig(env, "disk")
    writes = [t for t in f["data"] if t["name"].endswith(" write")]
    assert writes and f["layout"]["yaxis"]["title"]["text"] == "Disk throughput (kB/s)"
    dev = writes[0]["name"].split()[0]
    assert [float(y) for y in writes[0]["y"]] == pytest.approx([w for d, _, w in rows if d == dev])
    assert fig(env, "disk", "ja")["layout"]["yaxis"]["title"]["text"] == "ディスクスループット (kB/s)"
    assert built.runs == [run]


def test_softirq_types_from_mpstat(tmp_path):
    """mpstat -A's softirq block: the mean rate of each type over the samples (per CPU and summed)."""
    from conftest import one_file_run

    text = (FIXTURES / "sysstat_variants" / "mpstat_A.txt").read_text()
    run_toml = ('status = "ok"\nstart = 2026-11-22T00:00:00+00:00\nend = 2026-11-24T00:00:00+00:00\n'
                '[factors]\nstudy = "irq"\n')
    d = one_file_run(tmp_path, "mpstat.txt", text, run_toml)
    db = tmp_path / "k.duckdb"
    assert ingest([d], db).ok
    # expected, read here without kansoku: every softirq row of the samples (not the Average lines)
    expected: dict[tuple[str, str], list[float]] = {}
    header = None
    for line in text.splitlines():
        cols = line.split()
        if len(cols) > 2 and cols[1] == "CPU":
            header = cols[2:] if "NET_RX/s" in cols else None
        elif header and cols and cols[0] != "Average:" and len(cols) == len(header) + 2:
            for name, v in zip(header, cols[2:]):
                expected.setdefault((cols[1], name.removesuffix("/s")), []).append(float(v))
    mean = {k: statistics.mean(v) for k, v in expected.items()}
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC_HEAD + """
[[chapter.figure]]
id = "irq"
caption = { ja = "softirq", en = "softirq" }
chart = "softirq_types"
metric = "cpu_soft_pct"
where = { study = "irq" }

[[chapter.figure]]
id = "irq-cpu"
caption = { ja = "softirq", en = "softirq" }
chart = "softirq_types"
metric = "cpu_soft_pct"
where = { study = "irq" }
options = { by = "cpu" }
""", encoding="utf-8")
    store = open_store(db, read_only=True)
    try:
        report = load_report(spec)
        built = {it.id: drawn_figure(store, report, it) for ch in report.chapters for it in ch.items}
    finally:
        store.close()
    f = built["irq"].figure["en"]
    types = f["data"][0]["x"]
    assert types == ["TIMER", "BLOCK", "SCHED", "RCU"]  # kernel order, the types that occur
    assert f["data"][0]["y"] == pytest.approx([mean[("0", t)] + mean[("1", t)] for t in types])
    g = built["irq-cpu"].figure["ja"]
    assert g["layout"]["barmode"] == "stack" and [t["name"] for t in g["data"]] == types
    block = next(t for t in g["data"] if t["name"] == "BLOCK")
    assert block["x"] == ["0", "1"] and block["y"] == pytest.approx([mean[("0", "BLOCK")], mean[("1", "BLOCK")]])
    assert built["irq"].runs


def test_a_kind_registers_the_runs_its_figures_show_with_it():
    from types import SimpleNamespace

    from kansoku.analysis.charts import RUNS_OF

    def runs(store, item):
        return ["run-a", "run-b"]

    figures.kind("kind_with_its_runs", runs=runs)(lambda store, report, item: None)
    try:
        assert RUNS_OF["kind_with_its_runs"] is runs
        assert figures.figure_runs(None, SimpleNamespace(chart="kind_with_its_runs")) == ["run-a", "run-b"]
        with pytest.raises(ValueError, match="registered twice"):
            figures.kind("kind_with_its_runs")(lambda store, report, item: None)
    finally:
        del figures.KINDS["kind_with_its_runs"], RUNS_OF["kind_with_its_runs"]
    # the kinds whose figures show their own selection of runs registered it with the kind
    assert {"flamegraph", "profile_diff", "query_times", "tps_over_time", "ratio", "fsync_methods"} <= set(RUNS_OF)


def test_every_chart_kind_is_drawn_by_a_bundled_report():
    """A chart kind no report uses is one no reader has looked at: each is placed by a chapter of the example
    or of a past report."""
    from kansoku.analysis.figures import KINDS

    used = set()
    for spec in (ROOT / "data" / "reports").glob("*.toml"):
        for ch in tomllib.loads(spec.read_text(encoding="utf-8")).get("chapter", []):
            used |= {f.get("chart", "line") for f in ch.get("figure", [])}
    assert set(KINDS) - used == set()
