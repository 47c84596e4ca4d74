"""Shared drawing: the house layout, colours, and compact plotly JSON. No data, no words: every label
comes in the chart's computed ``ChartData.words``."""

from __future__ import annotations

import math
import unicodedata
from typing import Any, Callable, Sequence

import plotly.graph_objects as go

from kansoku import words
from kansoku.model import ChartData

# A trace that draws no data says what it is in its meta; a figure's CSV leaves it out (render/hugo.py figure_csv)
EVENT_META = "event"  # the marks of a run's events (charts/events.py)
LABEL_META = "label"  # the value labels of another trace, placed where its own would be crossed (charts/disk.py)
NOT_DATA = (EVENT_META, LABEL_META)

FONT_FAMILY = "IPAexGothic, 'Noto Sans CJK JP', 'Hiragino Sans', 'Yu Gothic', Meiryo, sans-serif"
COLORS = ["#1f4e79", "#c55a11", "#548235", "#7030a0", "#bf9000", "#2e75b6", "#c00000", "#7f7f7f"]

Drawer = Callable[[ChartData, str], dict]
DRAW: dict[str, Drawer] = {}
# kinds whose download is not the plotted points: kind -> (chart, lang) -> [(file suffix, link text, text)];
# a file whose text is the same in every language has the same suffix in each (written once)
DOWNLOADS: dict[str, Callable[[ChartData, str], list[tuple[str, str, str]]]] = {}
# kinds drawn otherwise on paper, which cannot zoom or hover (a flame graph's readable top frames)
PRINT: dict[str, Drawer] = {}


def esc(s: Any) -> str:
    """A measured string placed inside the chart's own pseudo-HTML (a hover template): as text."""
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_plotly(obj: Any, key: str | None = None) -> Any:
    """plotly.js (and the chart export for the PDF) renders trace names, tick labels and hover text as
    pseudo-HTML: a '<' or '&' that came from a measured file must reach the reader as text, so every string
    of a figure is escaped — except hover templates, which are the chart's own markup (``<br>``) and escape
    the measured parts they embed themselves (:func:`esc`). plotly decodes the entities back for display.
    A line break a drawer wants in a title or label is a newline, which becomes plotly's ``<br>`` here, after
    the escaping (plotly draws a newline as a space)."""
    if isinstance(obj, str):
        if key == "hovertemplate" or not any(c in obj for c in "<>&\n"):
            return obj
        return esc(obj).replace("\n", "<br>")
    if isinstance(obj, list):
        return [escape_plotly(v, key) for v in obj]
    if isinstance(obj, dict):
        return {k: escape_plotly(v, k) for k, v in obj.items()}
    return obj


def make_subplots(**options: Any) -> go.Figure:
    """plotly's ``make_subplots``, loaded when first called: its module loads plotly's figure classes, which a
    build whose drawings are all reused (render/figure_cache.py) never needs."""
    from plotly.subplots import make_subplots as make

    return make(**options)


def _registers(table: dict):
    """A decorator registering its function in ``table`` under each of the names it is given."""
    def names_of(*names: str):
        def deco(f):
            for n in names:
                table[n] = f
            return f
        return deco
    return names_of


draws = _registers(DRAW)          # @draws("line"): how a kind is drawn on the site
downloads = _registers(DOWNLOADS)  # @downloads("flamegraph"): a kind's own downloads
draws_print = _registers(PRINT)    # @draws_print("flamegraph"): a kind drawn otherwise for the PDF


# The legend sits under the plot, at the bottom of the figure (plotly pushes the bottom margin to hold it):
# the toolbar (plotly's mode bar) floats over the top right corner, and the top margin is its room, so the
# two never meet however many rows the legend takes.
LEGEND = dict(orientation="h", xref="paper", x=0, xanchor="left", yref="container", y=0, yanchor="bottom",
              tracegroupgap=4)
TOP_MARGIN = 36       # the mode bar's height (it is drawn inside the figure's top right corner)
DEFAULT_HEIGHT = 450  # plotly's own default height (the site's chart box when the layout has none)


def hover(head: str | None, lines: Sequence[tuple[str, str]], extra: str | None = None,
          point_note: bool = False) -> str:
    """A hover template: an optional first line (a series name), then ``axis name: value`` lines, then an
    optional note (the runs' range, n), then with ``point_note`` each point's own note (the trace's
    ``hovertext``). Names and notes are measured or spec text (escaped here); the values are plotly
    placeholders (``%{x}``) or numbers already printed as the table prints them."""
    parts = ([esc(head)] if head else []) + [f"{esc(name)}: {value}" for name, value in lines]
    if extra:
        parts.append(esc(extra))
    if point_note:
        parts.append("%{hovertext}")
    return "<br>".join(parts) + "<extra></extra>"


def crowded(values: Sequence[float], min_share: float = 0.08) -> bool:
    """Tick labels at these values on a linear axis would collide ("1 2" read as "12"): the smallest gap is
    less than ``min_share`` of the axis' span (a phone's plot is about 300 px wide)."""
    vs = sorted({float(v) for v in values})
    if len(vs) < 3:
        return False
    span = vs[-1] - vs[0]
    return span > 0 and min(b - a for a, b in zip(vs, vs[1:])) < min_share * span


def tick_labels(values: Sequence[float], log: bool = False, min_share: float = 0.1) -> list[str]:
    """Labels for ticks at exactly these values: a label that would touch a nearer-placed one is left
    empty (the tick stays), round values (powers of two and of ten, the ends) labelled first."""
    def pos(v: float) -> float:
        return math.log10(v) if log else v

    vs = [float(v) for v in values]
    ok = [v for v in vs if not log or v > 0]
    if len(ok) < 2:
        return [_num_text(v) for v in vs]
    span = pos(max(ok)) - pos(min(ok)) or 1.0

    def rank(i: int) -> tuple:
        v = vs[i]
        round_ = v > 0 and (math.log2(v).is_integer() or math.log10(v).is_integer())
        return (i not in (0, len(vs) - 1), not round_, i)

    shown: list[int] = []
    for i in sorted(range(len(vs)), key=rank):
        if (not log or vs[i] > 0) and all(abs(pos(vs[i]) - pos(vs[j])) >= min_share * span for j in shown):
            shown.append(i)
    return [_num_text(v) if i in shown else "" for i, v in enumerate(vs)]


def _num_text(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:g}"


def log_ticks(values: Sequence[float | None]) -> list[float] | None:
    """Tick values for a log axis over these values: 1, 2, 5 per decade (1 to 9 when the data span less
    than a decade), so a log axis never shows only two ticks; None when there is nothing to place."""
    vs = [float(v) for v in values if v is not None and v > 0]
    if not vs:
        return None
    lo, hi = min(vs), max(vs)
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1, 2, 5) if hi / lo >= 10 else (1, 2, 3, 4, 5, 6, 7, 8, 9)
    ticks = [m * 10 ** k for k in range(k0, k1 + 1) for m in steps]
    inside = [t for t in ticks if lo / 1.5 <= t <= hi * 1.5]
    return inside if len(inside) >= 2 else ticks


def text_px(s: str, size: int = 13) -> float:
    """The approximate width of a legend or tick text: full-width (Japanese) characters are 1 em."""
    return sum(size if unicodedata.east_asian_width(ch) in "WF" else 0.6 * size for ch in str(s))


def legend_rows(names: Sequence[str], width: int = 700, size: int = 13) -> int:
    """How many rows a horizontal legend of these entries takes at this figure width."""
    rows, used, avail = 1, 0.0, max(width - 80, 200)
    for n in names:
        w = text_px(n, size) + 46  # symbol and gap
        if used and used + w > avail:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def fit_legend(fig: go.Figure, width: int = 700) -> None:
    """A legend that scales: with many entries its text gets smaller and the figure taller by its extra
    rows, so the plot keeps its height (the PDF's image is drawn at this height, the site's box too)."""
    names = [t.name or "" for t in fig.data if t.showlegend is not False and t.name]
    if fig.layout.legend.title.text:  # its title above the entries: beside them it pushed them off a phone
        fig.update_layout(legend_title_side="top")
    if fig.layout.showlegend is False or len(names) < 2:
        return
    size = 13 if len(names) <= 8 else 11
    rows = legend_rows(names, width, size)
    height = fig.layout.height or DEFAULT_HEIGHT
    fig.update_layout(legend=dict(font=dict(size=size)), height=int(height + max(0, rows - 1) * (size + 9)))


def room_for_categories(lay: dict, labels: Sequence[str], size: int = 13, title: bool = True) -> None:
    """A left margin that holds the longest category label of a horizontal bar chart and the axis title
    beside it (plotly's automargin left the title over the labels); ``title=False``: the labels alone."""
    if labels:
        need = int(max(text_px(s, size) for s in labels)) + (44 if title else 12)
        lay["margin"] = dict(lay["margin"], l=max(lay["margin"].get("l", 64), need))


def room_for_labels(fig: go.Figure, axis: str, values: Sequence[float | None], share: float = 0.16) -> None:
    """Data labels drawn outside bars fit inside the plot: the value axis reaches ``share`` beyond the
    largest value (a label at the edge of the figure was cut)."""
    vs = [float(v) for v in values if v is not None]
    ax = getattr(fig.layout, axis)
    if not vs or ax.type == "log" or max(vs) <= 0:
        return
    fig.update_layout({axis: dict(range=[min(0.0, min(vs)), max(vs) * (1 + share)], autorange=False)})


def base_layout(options: dict[str, Any], x_title: str, y_title: str) -> dict:
    return dict(
        template="none",
        font=dict(family=FONT_FAMILY, size=13),
        margin=dict(l=64, r=24, t=TOP_MARGIN, b=48),
        colorway=COLORS,
        hovermode="closest",
        legend=dict(LEGEND),
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
        return words.pick(t, lang, default)
    return t or default


def layout(options: dict[str, Any], lang: str, x_title: str, y_title: str, **extra: Any) -> dict:
    lay = base_layout(options, axis_title(options, "x_title", lang, x_title),
                      axis_title(options, "y_title", lang, y_title))
    if options.get("height") is not None:
        lay["height"] = options["height"]
    lay.update(extra)
    return lay


def right_axis(title: str, **more: Any) -> dict:
    """A second y axis on the right, over the first. Its ticks are its own: plotly.js otherwise aligns them
    to the first axis's grid (``tickmode: "sync"``), at values such as 9.24 and 18.48."""
    return dict(title=dict(text=title), overlaying="y", side="right", showgrid=False, tickmode="auto",
                automargin=True, **more)


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def draw_open(trace: Any, flags: Sequence[bool] | None, colour: str) -> None:
    """Transcribed values drawn open, as the page footer says: a hollow marker, or a bar outlined in its
    colour and left unfilled; points kansoku measured or computed keep their filled look."""
    if not flags or not any(flags):
        return
    if trace.type == "bar":
        trace.marker.color = ["rgba(255,255,255,0)" if f else colour for f in flags]
        trace.marker.line = dict(color=colour, width=2)
    else:
        symbol = trace.marker.symbol if isinstance(trace.marker.symbol, str) else "circle"
        trace.marker.symbol = [symbol + "-open" if f else symbol for f in flags]
        trace.marker.color = colour


def _log_axes(fig: go.Figure) -> None:
    """Log axes without ticks of their own get 1-2-5 ticks over the plotted values (plotly shows only
    the powers of ten over a few decades)."""
    for axis, key in (("xaxis", "x"), ("yaxis", "y")):
        ax = getattr(fig.layout, axis)
        if ax.type != "log" or ax.tickvals is not None or ax.dtick is not None:
            continue
        vals = [v for t in fig.data if (getattr(t, "xaxis", None) or "x") == "x" and (getattr(t, "yaxis", None) or "y") == "y"
                for v in (getattr(t, key, None) or ()) if isinstance(v, (int, float))]
        ticks = log_ticks(vals)
        if ticks:
            fig.update_layout({axis: dict(tickmode="array", tickvals=ticks, ticktext=[f"{int(t):,}" if float(t).is_integer() else f"{t:g}"
                                                                       for t in ticks])})


def compact(fig: go.Figure) -> dict:
    """The figure as {data, layout} for the page's JSON and the PDF's export, with the house's finishing:
    a legend that scales with its entries, ticks on log axes."""
    fit_legend(fig)
    _log_axes(fig)
    d = fig.to_plotly_json()
    lay = d.get("layout", {})
    lay.pop("template", None)
    return {"data": d.get("data", []), "layout": lay}


def draw(chart: ChartData, lang: str) -> dict:
    """The plotly figure ({data, layout}) of a computed chart in one language."""
    return DRAW[chart.kind](chart, lang)


def draw_print(chart: ChartData, lang: str) -> dict:
    """The figure for paper (the PDF): the kind's print drawing where it has one, else its drawing."""
    return PRINT.get(chart.kind, DRAW[chart.kind])(chart, lang)
