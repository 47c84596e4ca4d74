"""Activity charts' data over runs: disk throughput over time (``disk_over_time``) and software interrupts by
type from mpstat (``softirq_types``), docs/charts.md. Drawn by render/charts/activity.py.

Data: the ``disk_in_run`` view (sar -d / iostat: samples cut to the run's window, since-boot samples left
out) and the ``sys_metrics`` rows of mpstat's softirq block (``mpstat -I SCPU`` / ``-A``: per CPU, one
column per type, ``NET_RX/s`` ...), cut to the run's window the same way. A condition (a value of
``series``) is shown by its representative run, as the other one-run charts do.
"""

from __future__ import annotations

from typing import Any

from kansoku import words
from kansoku.analysis.charts import _select as c
from kansoku.analysis.tables import factor_name, factor_value_label
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

DISK_HAS_DATA = "SELECT DISTINCT run_id FROM disk_in_run WHERE read_kb_s IS NOT NULL OR write_kb_s IS NOT NULL"
# the same runs without the pivot: the disk view's read_kb_s (write_kb_s) is not NULL when one of these metrics
# has a value in the sample (a coalesce of max() FILTERs, scaled), in the run's window as disk_in_run cuts it
c.WITHOUT_PIVOT[DISK_HAS_DATA] = ("disk_in_run", """
SELECT DISTINCT m.run_id FROM sys_metrics_auth m JOIN runs r ON r.run_id = m.run_id
WHERE m.activity = 'disk' AND m.value IS NOT NULL
  AND m.metric IN ('rkB/s', 'kB_read/s', 'rMB/s', 'MB_read/s', 'rd_sec/s', 'rsec/s', 'Blk_read/s',
                   'wkB/s', 'kB_wrtn/s', 'wMB/s', 'MB_wrtn/s', 'wr_sec/s', 'wsec/s', 'Blk_wrtn/s')
  AND epoch(m.ts) - coalesce(m.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time)""")
SOFTIRQ_HAS_DATA = "SELECT DISTINCT run_id FROM sys_metrics WHERE activity = 'softirq'"
DIRECTIONS = {"read": "read_kb_s", "write": "write_kb_s", "discard": "discard_kb_s"}
UNITS = {"kB/s": 1.0, "MB/s": 1024.0}  # sysstat's kB are 1024 bytes; MB/s = kB/s / 1024 (sar -h prints M)
# mpstat's softirq columns in the kernel's order (include/linux/interrupt.h)
SOFTIRQ_ORDER = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"]

# the softirq samples of a run inside its window (no window: all), since-boot rows left out
_SOFTIRQ_SQL = """
SELECT s.instance, s.metric, avg(s.value) AS rate, count(*) AS samples
FROM sys_metrics s JOIN runs r ON r.run_id = s.run_id
WHERE s.run_id = ? AND s.activity = 'softirq' AND NOT coalesce(s.since_boot, false)
  AND s.instance IS NOT NULL AND s.instance <> 'all'
  AND (r.start_time IS NULL OR r.end_time IS NULL OR s.ts IS NULL
       OR epoch(s.ts) - coalesce(s.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time))
GROUP BY s.instance, s.metric
"""


def _pick_runs(store: Store, report: Report | None, item: Item, has_data: str) -> list[c.Pick]:
    return c.picks(store, report, item, item.series, "representative", has_data=has_data)


def _cond_name(report: Report, item: Item, p: c.Pick, lang: str) -> str | None:
    if item.series is None or p.key is None:
        return None
    name = factor_value_label(report, item.series, p.key, lang)
    return name if item.series in report.factor_labels else f"{factor_name(report, item.series, lang)} {name}"


# -- disk throughput over time -----------------------------------------------------------------

@c.kind("disk_over_time", runs=lambda store, item: [
    p.representative for p in _pick_runs(store, None, item, DISK_HAS_DATA)])
def disk_over_time(store: Store, report: Report, item: Item) -> ChartData:
    """Read and write throughput of each physical disk over the seconds of one run (per condition with
    ``series``): where the I/O of a run goes and when (a checkpoint's write burst, a read-bound scan)."""
    c.check_options(item, {"run", "devices", "values", "unit"})
    dirs = c.opt_str_list(item, "values") or ["read", "write"]
    bad = [d for d in dirs if d not in DIRECTIONS]
    if bad:
        raise item.error(f"option values: unknown direction(s) {bad}; known: {list(DIRECTIONS)}")
    unit = c.opt_choice(item, "unit", "kB/s", tuple(UNITS))
    devices = c.opt_str_list(item, "devices")
    lines: list[dict[str, Any]] = []
    names: dict[str, list[str]] = {lang: [] for lang in LANGS}
    runs = []
    for p in _pick_runs(store, report, item, DISK_HAS_DATA):
        run_id = p.representative
        runs.append(run_id)
        have = {r[0] for r in store.query("SELECT DISTINCT tool FROM disk_in_run WHERE run_id = ?", [run_id])}
        tool = "sar" if "sar" in have else "iostat"
        params: list[Any] = [run_id, tool]
        cond = "NOT is_virtual AND NOT is_partition"
        if devices:
            cond = "device IN (SELECT unnest(?::VARCHAR[]))"
            params.append(devices)
        rows = store.query(
            f"SELECT device, t_s, {', '.join(DIRECTIONS[d] for d in dirs)} FROM disk_in_run "
            f"WHERE run_id = ? AND tool = ? AND {cond} ORDER BY device, t_s", params)
        by_dev: dict[str, list] = {}
        for r in rows:
            by_dev.setdefault(r[0], []).append(r[1:])
        if devices:
            missing = [d for d in devices if d not in by_dev]
            if missing:
                raise item.error(f"option devices: run {run_id!r} has no {tool} samples for {missing}")
        if not by_dev:
            raise item.error(f"run {run_id!r} has no samples of a physical disk inside its window "
                             "(name the devices with option devices)")
        for dev, pts in sorted(by_dev.items()):
            for j, d in enumerate(dirs):
                ys = [None if r[j + 1] is None else r[j + 1] / UNITS[unit] for r in pts]
                if all(v is None for v in ys):
                    continue
                lines.append({"run": run_id, "device": dev, "direction": d, "tool": tool,
                              "x": [round(r[0], 3) for r in pts], "y": ys})
                for lang in LANGS:
                    cn = _cond_name(report, item, p, lang)
                    nm = f"{dev} {words.t(lang, f'chart_disk_{d}')}"
                    names[lang].append(f"{cn}: {nm}" if cn else nm)
    w = {lang: {"names": names[lang], "x_title": words.t(lang, "chart_elapsed_s"),
                "y_title": words.t(lang, "chart_disk_throughput_axis", unit)} for lang in LANGS}
    return c.chart(item, {"runs": runs, "lines": lines}, w)


# -- software interrupts by type ---------------------------------------------------------------

@c.kind("softirq_types", runs=lambda store, item: [
    p.representative for p in _pick_runs(store, None, item, SOFTIRQ_HAS_DATA)])
def softirq_types(store: Store, report: Report, item: Item) -> ChartData:
    """Software interrupts per second by type (NET_RX, TIMER, SCHED, ...), the mean over the run's samples:
    ``by = "type"`` sums the CPUs and draws one bar per condition for each type; ``by = "cpu"`` draws one
    stacked bar per CPU of one run, a segment per type (which CPUs take the network's softirqs)."""
    c.check_options(item, {"run", "by", "types"})
    by = c.opt_choice(item, "by", "type", ("type", "cpu"))
    wanted = c.opt_str_list(item, "types")
    picks = _pick_runs(store, report, item, SOFTIRQ_HAS_DATA)
    if by == "cpu" and len(picks) > 1:
        raise item.error("option by = \"cpu\" draws one run: name it with option run, or select one condition")
    per_run: list[tuple[c.Pick, dict[tuple[str, str], float]]] = []
    types_seen: set[str] = set()
    for p in picks:
        rows = store.query(_SOFTIRQ_SQL, [p.representative])
        if not rows:
            raise item.error(f"run {p.representative!r} has no mpstat softirq samples inside its window "
                             "(mpstat -I SCPU or -A records them)")
        vals = {(inst, metric.removesuffix("/s")): rate for inst, metric, rate, _ in rows}
        types_seen |= {t for _, t in vals}
        per_run.append((p, vals))
    known = [t for t in SOFTIRQ_ORDER if t in types_seen] + sorted(types_seen - set(SOFTIRQ_ORDER))
    if wanted:
        missing = [t for t in wanted if t not in types_seen]
        if missing:
            raise item.error(f"option types: no samples of {missing}; the runs have {known}")
        types = wanted
    else:  # the types that occur (a type that is 0 everywhere says nothing)
        types = [t for t in known if any(v for vals in (pr[1] for pr in per_run)
                                         for (_, tt), v in vals.items() if tt == t)]
    w: dict[str, dict[str, Any]] = {lang: {"x_title": "", "y_title": words.t(lang, "chart_softirq_axis")}
                                    for lang in LANGS}
    if by == "type":
        bars = []
        for p, vals in per_run:
            bars.append({"run": p.representative,
                         "y": [sum(v for (_, t), v in vals.items() if t == ty) for ty in types]})
        for lang in LANGS:
            w[lang]["names"] = [(_cond_name(report, item, p, lang) or p.representative) for p, _ in per_run]
            w[lang]["x_title"] = words.t(lang, "chart_softirq_type")
        return c.chart(item, {"by": by, "categories": types, "bars": bars,
                              "runs": [p.representative for p, _ in per_run]}, w)
    p, vals = per_run[0]
    cpus = sorted({i for i, _ in vals}, key=lambda x: (0, int(x)) if x.isdigit() else (1, x))
    segs = [{"type": ty, "y": [vals.get((cpu, ty), 0.0) for cpu in cpus]} for ty in types]
    for lang in LANGS:
        w[lang]["names"] = list(types)
        w[lang]["x_title"] = "CPU"
    return c.chart(item, {"by": by, "categories": cpus, "segments": segs, "runs": [p.representative]}, w)
