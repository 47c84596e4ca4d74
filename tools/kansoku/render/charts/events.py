"""Events on time charts: checkpoints, stalls, the steady window and the run's end, drawn over the
per-second TPS of a run. The events and their hover texts are computed with the chart's data
(analysis/charts/timeseries.py, from the ``run_events`` view through analysis/steady.py).

Spans (a checkpoint from its start to its completion, a stall) are shaded bands behind the lines; the
ends of the warm-up and the start of the ramp-down are dashed vertical lines, the run's end a dotted
one. Each kind also gets one scatter trace of markers on the x axis, so the legend names it and the
hover text says what happened (reason, buffers written, duration, lowest TPS). Only layout shapes
and scatter traces: the site's plotly.js basic bundle draws them.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go

from kansoku.render.charts._draw import EVENT_META

# kind -> (band or line colour, marker symbol)
STYLE = {
    "checkpoint": ("rgba(120, 120, 120, 0.18)", "triangle-up"),
    "restartpoint": ("rgba(120, 120, 120, 0.18)", "triangle-up"),
    # counted by pg_stat_bgwriter / pg_stat_checkpointer between two snapshots: a lighter band over the
    # interval (the checkpoint is somewhere in it) and an open marker at its middle
    "checkpoint_stat": ("rgba(120, 120, 120, 0.10)", "triangle-up-open"),
    "stall": ("rgba(214, 39, 40, 0.18)", "x"),
    "steady_start": ("rgba(44, 160, 44, 0.9)", "line-ns-open"),
    "steady_end": ("rgba(44, 160, 44, 0.9)", "line-ns-open"),
    "run_end": ("rgba(90, 90, 90, 0.9)", "line-ns-open"),
}
SPANS = {"checkpoint", "restartpoint", "stall", "checkpoint_stat"}
INTERVALS = {"checkpoint_stat"}  # spans that say "somewhere between", not "from … to": no single time in the hover


def add_events(fig: go.Figure, events: list[dict], labels: list[str], kind_names: dict[str, str]) -> int:
    """Draw computed events on ``fig`` (x: seconds since the run's start): ``events`` are
    ``{"kind", "at_s", "until_s"}``, ``labels`` their hover texts, ``kind_names`` the legend entries.
    Returns how many were drawn."""
    by_kind: dict[str, list[tuple[dict, str]]] = {}
    for e, label in zip(events, labels):
        if e["kind"] in STYLE:
            by_kind.setdefault(e["kind"], []).append((e, label))
    shapes = []
    for kind, evs in by_kind.items():
        colour, symbol = STYLE[kind]
        for e, _ in evs:
            if kind in SPANS:
                shapes.append(dict(type="rect", xref="x", yref="paper", x0=e["at_s"], x1=e["until_s"] or e["at_s"],
                                   y0=0, y1=1, fillcolor=colour, line=dict(width=0), layer="below"))
            else:
                shapes.append(dict(type="line", xref="x", yref="paper", x0=e["at_s"], x1=e["at_s"], y0=0, y1=1,
                                   line=dict(color=colour, width=1, dash="dot" if kind == "run_end" else "dash")))
        between = kind in INTERVALS
        fig.add_trace(go.Scatter(
            x=[(e["at_s"] + (e["until_s"] if e["until_s"] is not None else e["at_s"])) / 2 if between else e["at_s"]
               for e, _ in evs],
            y=[0] * len(evs), mode="markers", name=kind_names[kind],
            meta=EVENT_META,
            marker=dict(symbol=symbol, size=9, color=re.sub(r"0\.\d+\)$", "0.9)", colour)),
            hovertext=[label for _, label in evs],
            hovertemplate="%{hovertext}<extra></extra>" if between else "%{hovertext}<br>%{x:.1f} s<extra></extra>"))
    if shapes:
        fig.update_layout(shapes=list(fig.layout.shapes or ()) + shapes)
    return sum(len(v) for v in by_kind.values())
