"""Shared drawing: the house layout, colours, and compact plotly JSON. No data, no words: every label
comes in the chart's computed ``ChartData.words``."""

from __future__ import annotations

from typing import Any, Callable

import plotly.graph_objects as go

from kansoku.report.model import ChartData

FONT_FAMILY = "IPAexGothic, 'Noto Sans CJK JP', 'Hiragino Sans', 'Yu Gothic', Meiryo, sans-serif"
COLORS = ["#1f4e79", "#c55a11", "#548235", "#7030a0", "#bf9000", "#2e75b6", "#c00000", "#7f7f7f"]

Drawer = Callable[[ChartData, str], dict]
DRAW: dict[str, Drawer] = {}


def draws(*names: str):
    def deco(f: Drawer) -> Drawer:
        for n in names:
            DRAW[n] = f
        return f
    return deco


def base_layout(options: dict[str, Any], x_title: str, y_title: str) -> dict:
    return dict(
        template="none",
        font=dict(family=FONT_FAMILY, size=13),
        margin=dict(l=64, r=16, t=16, b=56),
        colorway=COLORS,
        hovermode="closest",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
        xaxis=dict(title=dict(text=x_title), type="log" if options.get("x_log") else "-",
                   showgrid=True, gridcolor="#e5e5e5", zeroline=False, automargin=True),
        yaxis=dict(title=dict(text=y_title), type="log" if options.get("y_log") else "-",
                   showgrid=True, gridcolor="#e5e5e5", rangemode="tozero" if not options.get("y_log") else "normal",
                   automargin=True),
    )


def axis_title(options: dict[str, Any], key: str, lang: str, default: str) -> str:
    """The spec's axis title (a string or one per language) over the chart's own."""
    t = options.get(key)
    if isinstance(t, dict):
        return t.get(lang) or t.get("en") or t.get("ja") or default
    return t or default


def layout(options: dict[str, Any], lang: str, x_title: str, y_title: str, **extra: Any) -> dict:
    lay = base_layout(options, axis_title(options, "x_title", lang, x_title),
                      axis_title(options, "y_title", lang, y_title))
    if options.get("height") is not None:
        lay["height"] = options["height"]
    lay.update(extra)
    return lay


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def compact(fig: go.Figure) -> dict:
    d = fig.to_plotly_json()
    lay = d.get("layout", {})
    lay.pop("template", None)
    return {"data": d.get("data", []), "layout": lay}


def draw(chart: ChartData, lang: str) -> dict:
    """The plotly figure ({data, layout}) of a computed chart in one language."""
    return DRAW[chart.kind](chart, lang)
