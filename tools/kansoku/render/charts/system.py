"""System charts over one run: stacked CPU usage with disk %util, and per-CPU small multiples
(docs/charts.md).

Data: the ``cpu_in_run`` and ``disk_in_run`` views (sysstat.py): samples cut to the run's window,
since-boot samples excluded, one file per (run, tool, activity). A run may have CPU samples from
sar, iostat and vmstat: the chart uses one tool, by default the best the run has (sar, which has
%soft and per-CPU rows, then iostat, then vmstat), as the ``cpu_in_run_mean`` metrics do.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kansoku.analysis.figures import compact, kind
from kansoku.spec.model import Item, Report
from kansoku.store.db import Store
from kansoku.render.charts import _common as c

CPU_COLUMNS = ("usr", "nice", "sys", "iowait", "steal", "irq", "soft", "guest", "gnice", "idle")
DEFAULT_STACK = ["usr", "sys", "iowait", "soft", "steal"]
CPU_COLORS = {"usr": "#1f4e79", "nice": "#9dc3e6", "sys": "#c55a11", "iowait": "#bf9000", "steal": "#7f7f7f",
              "irq": "#7030a0", "soft": "#c00000", "guest": "#548235", "gnice": "#a9d18e", "idle": "#d9d9d9"}
TOOLS = ("sar", "iostat", "vmstat")
CPU_HAS_DATA = "SELECT DISTINCT run_id FROM cpu_in_run"


def one_run(store: Store, report: Report | None, item: Item) -> str:
    """The run a one-run chart shows: option ``run``, else the representative run of the selection."""
    return c.picks(store, report, item, None, "representative", has_data=CPU_HAS_DATA)[0].representative


def cpu_tool(store: Store, item: Item, run_id: str, table: str = "cpu_in_run") -> str:
    have = [r[0] for r in store.query(f"SELECT DISTINCT tool FROM {table} WHERE run_id = ?", [run_id])]
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


@kind("cpu_stacked")
def cpu_stacked(store: Store, report: Report, item: Item, lang: str) -> dict:
    """Stacked areas of CPU usage (%usr, %sys, %iowait, %soft, %steal) over one run's seconds, with each
    physical disk's %util as a line on a second y axis."""
    c.check_options(item, {"run", "tool", "cpu", "columns", "util", "devices"})
    run_id = one_run(store, report, item)
    tool = cpu_tool(store, item, run_id)
    cpu = str(c.opt(item, "cpu", "all", (str, int), "a CPU number or \"all\""))
    cols = _columns(item, "columns", DEFAULT_STACK)
    rows = store.query(
        f"SELECT t_s, {', '.join(x + '_pct' for x in cols)} FROM cpu_in_run "
        "WHERE run_id = ? AND tool = ? AND cpu = ? ORDER BY t_s", [run_id, tool, cpu])
    if not rows:
        cpus = [r[0] for r in store.query("SELECT DISTINCT cpu FROM cpu_in_run WHERE run_id = ? AND tool = ?",
                                                [run_id, tool])]
        raise item.error(f"option cpu = {cpu!r}: run {run_id!r} has {tool} CPU rows for {sorted(cpus)}")
    fig = go.Figure()
    xs = [round(r[0], 3) for r in rows]
    for j, col in enumerate(cols):
        ys = [r[j + 1] for r in rows]
        if all(v is None for v in ys):
            continue  # this tool does not report the column (vmstat has no %soft)
        fig.add_trace(go.Scatter(
            x=xs, y=ys, name=f"%{col}", mode="lines", stackgroup="cpu",
            line=dict(width=0.5, color=CPU_COLORS[col]), fillcolor=CPU_COLORS[col],
            hovertemplate=f"%{{x:.0f}} s: %{col} %{{y:.1f}} %<extra></extra>"))
    show_util = c.opt(item, "util", True, bool, "true or false")
    if show_util:
        devices = c.opt_str_list(item, "devices")
        dtool = _disk_tool(store, run_id)
        params = [run_id, dtool]
        cond = "NOT is_virtual AND NOT is_partition"
        if devices:
            cond = "device IN (SELECT unnest(?::VARCHAR[]))"
            params.append(devices)
        drows = store.query(
            f"SELECT device, t_s, util_pct FROM disk_in_run WHERE run_id = ? AND tool = ? AND {cond} "
            "AND util_pct IS NOT NULL ORDER BY device, t_s", params) if dtool else []
        by_dev: dict[str, list] = {}
        for dev, t, u in drows:
            by_dev.setdefault(dev, []).append((t, u))
        if devices:
            missing = [d for d in devices if d not in by_dev]
            if missing:
                raise item.error(f"option devices: run {run_id!r} has no %util samples for {missing}")
        dashes = ["solid", "dash", "dot", "dashdot"]
        for k, (dev, pts) in enumerate(sorted(by_dev.items())):
            fig.add_trace(go.Scatter(
                x=[round(t, 3) for t, _ in pts], y=[u for _, u in pts], name=f"{dev} %util", yaxis="y2",
                mode="lines+markers", line=dict(color="#000000", width=2, dash=dashes[k % len(dashes)]),
                marker=dict(size=5), hovertemplate=f"%{{x:.0f}} s: {dev} %util %{{y:.1f}} %<extra></extra>"))
    cpu_label = c.tr(lang, "全 CPU 平均", "all CPUs") if cpu == "all" else f"CPU {cpu}"
    lay = c.layout(item, lang, c.tr(lang, "実行開始からの経過時間 (秒)", "Time since the run's start (s)"),
                   c.tr(lang, f"CPU 使用率 ({cpu_label}, {tool}) (%)", f"CPU usage ({cpu_label}, {tool}) (%)"))
    lay["yaxis"] = dict(lay["yaxis"], range=[0, 100], rangemode="normal")
    lay["legend"] = dict(lay["legend"], traceorder="normal")  # stacked areas: keep usr, sys, ... order
    if show_util:
        lay["yaxis2"] = dict(title=dict(text=c.tr(lang, "ディスク %util (%)", "Disk %util (%)")), overlaying="y",
                             side="right", range=[0, 100], showgrid=False, automargin=True)
        lay["margin"] = dict(lay["margin"], r=64)
    fig.update_layout(**lay)
    return compact(fig)


def _disk_tool(store: Store, run_id: str) -> str | None:
    have = {r[0] for r in store.query("SELECT DISTINCT tool FROM disk_in_run WHERE run_id = ?",
                                            [run_id])}
    for t in ("sar", "iostat"):
        if t in have:
            return t
    return None


@kind("cpu_per_cpu")
def cpu_per_cpu(store: Store, report: Report, item: Item, lang: str) -> dict:
    """One column (default %soft) of every CPU of one run over time, as small multiples with a shared y
    axis: a bottleneck on a few CPUs (softirq on 8 of 32) stands out."""
    c.check_options(item, {"run", "tool", "column", "cpus", "columns_per_row"})
    run_id = one_run(store, report, item)
    tool = cpu_tool(store, item, run_id)
    col = c.opt(item, "column", "soft", str, "a CPU column name")
    if col not in CPU_COLUMNS:
        raise item.error(f"option column = {col!r} is not one of {list(CPU_COLUMNS)}")
    rows = store.query(
        f"SELECT cpu, t_s, {col}_pct FROM cpu_in_run WHERE run_id = ? AND tool = ? AND cpu <> 'all' "
        "ORDER BY t_s", [run_id, tool])
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
    n = len(cpus)
    ncols = c.opt_int(item, "columns_per_row", min(4, n))
    nrows = math.ceil(n / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=[f"CPU {x}" for x in cpus],
                        vertical_spacing=min(0.12, 0.5 / max(nrows, 1)), horizontal_spacing=0.03)
    ymax = max((v for cpu in cpus for _, v in by_cpu[cpu] if v is not None), default=0.0)
    for k, cpu in enumerate(cpus):
        pts = by_cpu[cpu]
        fig.add_trace(go.Scatter(
            x=[round(t, 3) for t, _ in pts], y=[v for _, v in pts], name=f"CPU {cpu}", mode="lines",
            line=dict(color="#1f4e79", width=1.5), fill="tozeroy",
            fillcolor="rgba(31,78,121,0.25)", showlegend=False,
            hovertemplate=f"CPU {cpu}, %{{x:.0f}} s: %{col} %{{y:.1f}} %<extra></extra>"),
            row=k // ncols + 1, col=k % ncols + 1)
    x_title = c.tr(lang, "実行開始からの経過時間 (秒)", "Time since the run's start (s)")
    y_title = c.tr(lang, f"%{col} (%)", f"%{col} (%)")
    lay = c.layout(item, lang, x_title, y_title)
    base_x, base_y = lay.pop("xaxis"), lay.pop("yaxis")
    lay.pop("legend", None)
    lay.setdefault("height", max(380, 150 * nrows + 110))  # the site's chart box is at least 380 px
    lay["margin"] = dict(lay["margin"], t=36)
    fig.update_layout(**lay, showlegend=False)
    top = min(max(ymax * 1.1, 1.0), 100.0) if ymax <= 100 else ymax * 1.05
    fig.update_yaxes(range=[0, top], showgrid=True, gridcolor="#e5e5e5", zeroline=False)
    fig.update_xaxes(showgrid=True, gridcolor="#e5e5e5", zeroline=False)
    # axis titles once: x under the bottom row, y left of the first column
    for k in range(n):
        r, cc = k // ncols + 1, k % ncols + 1
        if r == nrows or k + ncols >= n:
            fig.update_xaxes(title_text=base_x["title"]["text"] if cc == 1 else None, row=r, col=cc)
        if cc == 1:
            fig.update_yaxes(title_text=base_y["title"]["text"], row=r, col=cc)
    fig.update_annotations(font=dict(size=12))
    return compact(fig)


c.RUNS_OF["cpu_stacked"] = lambda store, item: [one_run(store, None, item)]
c.RUNS_OF["cpu_per_cpu"] = lambda store, item: [one_run(store, None, item)]
