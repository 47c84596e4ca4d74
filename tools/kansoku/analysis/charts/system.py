"""System charts' data over one run: stacked CPU usage with disk %util, and per-CPU small multiples
(docs/charts.md). Drawn by render/charts/system.py.

Data: the ``cpu_in_run`` and ``disk_in_run`` views (sysstat parsers): samples cut to the run's window,
since-boot samples excluded, one file per (run, tool, activity). Once its run is chosen, a chart reads them
over that run's rows alone (``Store.runs_only``: a run filter does not reach through the views' windows, so
without it each query would compute the views over every run; docs/build-performance.md). A run may have CPU
samples from sar, iostat and vmstat: the chart uses one tool, by default the best the run has (sar, which has
%soft and per-CPU rows, then iostat, then vmstat), as the ``cpu_in_run_mean`` metrics do.
"""

from __future__ import annotations

from kansoku import words
from kansoku.analysis.charts import _select as c
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

CPU_COLUMNS = ("usr", "nice", "sys", "iowait", "steal", "irq", "soft", "guest", "gnice", "idle")
DEFAULT_STACK = ["usr", "sys", "iowait", "soft", "steal"]
TOOLS = ("sar", "iostat", "vmstat")
CPU_HAS_DATA = "SELECT DISTINCT run_id FROM cpu_in_run"
# the same runs without the pivot: a run has a row of cpu_in_run when one of its chosen (sys_metrics_auth) CPU
# samples lies in its window (the view's condition: the middle of the interval it covers in [start, end])
c.WITHOUT_PIVOT[CPU_HAS_DATA] = ("cpu_in_run", """
SELECT DISTINCT m.run_id FROM sys_metrics_auth m JOIN runs r ON r.run_id = m.run_id
WHERE m.activity = 'cpu'
  AND epoch(m.ts) - coalesce(m.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time)""")


def one_run(store: Store, report: Report | None, item: Item) -> str:
    """The run a one-run chart shows: option ``run``, else the representative run of the selection."""
    return c.picks(store, report, item, None, "representative", has_data=CPU_HAS_DATA)[0].representative


def host_role(store: Store, item: Item, run_id: str, table: str = "cpu_in_run") -> str | None:
    """The role of the host a one-run chart shows: option ``role``, else the run's only host with samples,
    else the campaign's default_role; a run with several hosts and no role chosen is a spec error naming
    them (never a mix of hosts' samples; docs/spec.md, "Hosts and roles")."""
    hosts = store.query(f"SELECT DISTINCT host, role FROM {table} WHERE run_id = ? ORDER BY ALL", [run_id])
    role = item.options.get("role")
    if role is not None:
        if role not in {r for _, r in hosts}:
            raise item.error(f"option role = {role!r}: run {run_id!r} has no host with role {role!r} "
                             f"(its hosts: {', '.join(f'{h} ({r})' for h, r in hosts) or 'none'})")
        return role
    if len(hosts) <= 1:
        return hosts[0][1] if hosts else None
    default = store.query("SELECT default_role FROM runs WHERE run_id = ?", [run_id])
    if default and default[0][0] in {r for _, r in hosts}:
        return default[0][0]
    raise item.error(f"run {run_id!r} has samples from {len(hosts)} hosts, "
                     f"{', '.join(f'{h} ({r})' for h, r in hosts)}; a chart never mixes hosts: choose one with "
                     f"option role = \"{hosts[0][1]}\" (or declare default_role in the campaign's .kansoku-campaign)")


def cpu_tool(store: Store, item: Item, run_id: str, table: str = "cpu_in_run", role: str | None = None) -> str:
    have = [r[0] for r in store.query(f"SELECT DISTINCT tool FROM {table} WHERE run_id = ? "
                                      "AND role IS NOT DISTINCT FROM ?", [run_id, role])]
    tool = item.options.get("tool")
    if tool is not None:
        if tool not in TOOLS:
            raise item.error(f"option tool = {tool!r} is not one of {list(TOOLS)}")
        if tool not in have:
            raise item.error(f"option tool = {tool!r}: run {run_id!r} has CPU samples from {sorted(have)} only")
        return tool
    for t in TOOLS:
        if t in have:
            return t
    raise item.error(f"run {run_id!r} has no CPU samples inside its window")


def _columns(item: Item, key: str, default: list[str]) -> list[str]:
    cols = c.opt_str_list(item, key) or default
    bad = [x for x in cols if x not in CPU_COLUMNS]
    if bad:
        raise item.error(f"option {key}: unknown CPU column(s) {bad}; known: {list(CPU_COLUMNS)}")
    return cols


@c.kind("cpu_stacked", runs=lambda store, item: [one_run(store, None, item)])
def cpu_stacked(store: Store, report: Report, item: Item) -> ChartData:
    """Stacked areas of CPU usage (%usr, %sys, %iowait, %soft, %steal) over one run's seconds, with each
    physical disk's %util as a line on a second y axis."""
    c.check_options(item, {"run", "tool", "cpu", "columns", "util", "devices", "role"})
    run_id = one_run(store, report, item)
    with store.runs_only([run_id]) as own:
        return _cpu_stacked(own, item, run_id)


def _cpu_stacked(store: Store, item: Item, run_id: str) -> ChartData:
    """cpu_stacked over the store of ``run_id`` alone (``Store.runs_only``)."""
    role = host_role(store, item, run_id)
    tool = cpu_tool(store, item, run_id, role=role)
    cpu = str(c.opt(item, "cpu", "all", (str, int), "a CPU number or \"all\""))
    cols = _columns(item, "columns", DEFAULT_STACK)
    rows = store.query(
        f"SELECT t_s, {', '.join(x + '_pct' for x in cols)} FROM cpu_in_run "
        "WHERE run_id = ? AND tool = ? AND cpu = ? AND role IS NOT DISTINCT FROM ? ORDER BY t_s",
        [run_id, tool, cpu, role])
    if not rows:
        cpus = [r[0] for r in store.query("SELECT DISTINCT cpu FROM cpu_in_run WHERE run_id = ? AND tool = ? "
                                          "AND role IS NOT DISTINCT FROM ?", [run_id, tool, role])]
        raise item.error(f"option cpu = {cpu!r}: run {run_id!r} has {tool} CPU rows for {sorted(cpus)}")
    xs = [round(r[0], 3) for r in rows]
    stack = []
    for j, col in enumerate(cols):
        ys = [r[j + 1] for r in rows]
        if all(v is None for v in ys):
            continue  # this tool does not report the column (vmstat has no %soft)
        stack.append({"column": col, "y": ys})
    show_util = c.opt(item, "util", True, bool, "true or false")
    util = []
    if show_util:
        devices = c.opt_str_list(item, "devices")
        dtool = _disk_tool(store, run_id, role)
        params = [run_id, dtool, role]
        cond = "NOT is_virtual AND NOT is_partition"
        if devices:
            cond = "device IN (SELECT unnest(?::VARCHAR[]))"
            params.append(devices)
        drows = store.query(
            f"SELECT device, t_s, util_pct FROM disk_in_run WHERE run_id = ? AND tool = ? "
            f"AND role IS NOT DISTINCT FROM ? AND {cond} "
            "AND util_pct IS NOT NULL ORDER BY device, t_s", params) if dtool else []
        by_dev: dict[str, list] = {}
        for dev, t, u in drows:
            by_dev.setdefault(dev, []).append((t, u))
        if devices:
            missing = [d for d in devices if d not in by_dev]
            if missing:
                raise item.error(f"option devices: run {run_id!r} has no %util samples for {missing}")
        util = [{"device": dev, "x": [round(t, 3) for t, _ in pts], "y": [u for _, u in pts]}
                for dev, pts in sorted(by_dev.items())]
    w = {}
    for lang in LANGS:
        cpu_label = words.t(lang, "chart_all_cpus") if cpu == "all" else f"CPU {cpu}"
        w[lang] = {"x_title": words.t(lang, "chart_elapsed_s"),
                   "y_title": words.t(lang, "chart_cpu_usage_axis", f"{cpu_label}, {tool}"),
                   "y2_title": words.t(lang, "chart_disk_util_axis")}
    return c.chart(item, {"run": run_id, "x": xs, "stack": stack, "util": util, "show_util": show_util}, w)


def _disk_tool(store: Store, run_id: str, role: str | None = None) -> str | None:
    have = {r[0] for r in store.query("SELECT DISTINCT tool FROM disk_in_run WHERE run_id = ? "
                                      "AND role IS NOT DISTINCT FROM ?", [run_id, role])}
    for t in ("sar", "iostat"):
        if t in have:
            return t
    return None


@c.kind("cpu_per_cpu", runs=lambda store, item: [one_run(store, None, item)])
def cpu_per_cpu(store: Store, report: Report, item: Item) -> ChartData:
    """One column (default %soft) of every CPU of one run over time, as small multiples with a shared y
    axis: a bottleneck on a few CPUs (softirq on 8 of 32) stands out."""
    c.check_options(item, {"run", "tool", "column", "cpus", "columns_per_row", "role"})
    run_id = one_run(store, report, item)
    with store.runs_only([run_id]) as own:
        return _cpu_per_cpu(own, item, run_id)


def _cpu_per_cpu(store: Store, item: Item, run_id: str) -> ChartData:
    """cpu_per_cpu over the store of ``run_id`` alone (``Store.runs_only``)."""
    role = host_role(store, item, run_id)
    tool = cpu_tool(store, item, run_id, role=role)
    col = c.opt(item, "column", "soft", str, "a CPU column name")
    if col not in CPU_COLUMNS:
        raise item.error(f"option column = {col!r} is not one of {list(CPU_COLUMNS)}")
    rows = store.query(
        f"SELECT cpu, t_s, {col}_pct FROM cpu_in_run WHERE run_id = ? AND tool = ? AND cpu <> 'all' "
        "AND role IS NOT DISTINCT FROM ? ORDER BY t_s", [run_id, tool, role])
    by_cpu: dict[str, list] = {}
    for cpu, t, v in rows:
        by_cpu.setdefault(cpu, []).append((t, v))
    if not by_cpu:
        raise item.error(f"run {run_id!r}: {tool} has no per-CPU rows (sar -P ALL / -u ALL -P ALL records them)")
    wanted = c.opt_str_list(item, "cpus")
    cpus = sorted(by_cpu, key=lambda x: (0, int(x)) if x.isdigit() else (1, x))
    if wanted:
        missing = [x for x in wanted if x not in by_cpu]
        if missing:
            raise item.error(f"option cpus: run {run_id!r} has no rows for CPU(s) {missing}; it has {cpus}")
        cpus = wanted
    if all(v is None for cpu in cpus for _, v in by_cpu[cpu]):
        raise item.error(f"option column = {col!r}: {tool} does not report %{col} for run {run_id!r}")
    ncols = c.opt_int(item, "columns_per_row", min(4, len(cpus)))
    panels = [{"cpu": cpu, "x": [round(t, 3) for t, _ in by_cpu[cpu]], "y": [v for _, v in by_cpu[cpu]]}
              for cpu in cpus]
    return c.chart(item, {"run": run_id, "column": col, "panels": panels, "columns_per_row": ncols}, {lang: {
        "x_title": words.t(lang, "chart_elapsed_s"), "y_title": f"%{col} (%)"} for lang in LANGS})
