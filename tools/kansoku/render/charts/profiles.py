"""Profile charts: a flame graph per condition (a plotly icicle, root at the bottom) and the differential view of
two conditions (docs/charts.md). Data and words: analysis/charts/profiles.py."""

from __future__ import annotations

import csv
import io
import re
import zlib

import plotly.graph_objects as go

from kansoku import words
from kansoku.render.charts._draw import (
    base_layout,
    compact,
    downloads,
    draws,
    draws_print,
    esc,
    layout,
    make_subplots,
    text_px,
)

VERDICT_COLORS = {"higher": "#c00000", "lower": "#1f4e79", "within_noise": "#a6a6a6", "too_few_runs": "#d9d9d9"}
UNKNOWN_COLOR = "#bdbdbd"
ROOT_COLOR = "#d9d9d9"
FRAME_PX = 18         # a level of a flame graph on the site
FRAME_FONT = 11       # its labels: never shrunk below this (hidden instead), so the print's are >= 7 pt
PRINT_FRAME_PX = 14   # a level in the PDF's view
PRINT_HEIGHT = 830    # the PDF's view at most this tall: printed at the text width, its labels stay >= 7 pt
PANEL_PX = 64         # a panel's title and tick labels
PRINT_WIDTH = 700     # the width the PDF's charts are exported at (render/typst.py CHART_WIDTH_PX)
PRINT_STEPS = (1.0, 2.0, 3.0, 5.0, 10.0, 20.0)  # the PDF's thresholds (% of the samples), the lowest that fits


def unresolved(label: str) -> bool:
    """A frame perf could not name: "[unknown]", a raw address."""
    return label.startswith("[") or label.startswith("0x")


def flame_color(label: str) -> str:
    """Brendan Gregg's warm palette, by a stable hash of the frame (the same function keeps its colour across
    conditions); unresolved frames grey, the kernel's orange-brown."""
    if unresolved(label):
        return UNKNOWN_COLOR
    h = zlib.crc32(label.encode("utf-8"))
    r, g, b = 205 + h % 50, 80 + (h >> 8) % 130, 40 + (h >> 16) % 45
    return f"rgb({r},{g},{b})"


def diff_color(delta: float, max_delta: float) -> str:
    """Gregg's differential scale: red where the share grew, blue where it shrank, the more saturated the
    larger the change against the largest one; an unchanged frame near white."""
    if not delta:
        return "rgb(245,245,245)"
    t = min(1.0, abs(delta) / max_delta) if max_delta > 0 else 1.0
    v = int(round(245 * (1 - t)))
    return f"rgb(255,{v},{v})" if delta > 0 else f"rgb({v},{v},255)"


def fit_label(label: str, px: float, size: int = FRAME_FONT) -> str:
    """A frame's label cut to its width, as flamegraph.pl cuts it ("Exec.."): empty when not 3 characters fit."""
    room = px - 6
    if text_px(label, size) <= room:
        return label
    out = ""
    for ch in label:
        if text_px(out + ch + "..", size) > room:
            break
        out += ch
    return out + ".." if len(out) >= 3 else ""


WRAP_PX = 330  # a title or legend entry longer than this takes more lines (a phone's figure is ~370 px wide)


def wrap(s: str, px: float = WRAP_PX, size: int = 13) -> str:
    """Text in lines of at most ``px`` (a newline, which the figure's escaping turns into plotly's <br>):
    broken at spaces, and anywhere in a run of Japanese text."""
    lines, line = [], ""
    for word in re.findall(r"\S+\s*|\s+", s):
        if text_px((line + word).rstrip(), size) <= px or not line.strip():
            line += word
            while text_px(line.rstrip(), size) > px:  # a word longer than the line (Japanese has no spaces)
                cut = max(k for k in range(1, len(line) + 1) if text_px(line[:k], size) <= px or k == 1)
                lines.append(line[:cut].rstrip())
                line = line[cut:]
        else:
            lines.append(line.rstrip())
            line = word
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines)


def _top_rows(top: list[list], diff: bool) -> list[list[str]]:
    """The list of top functions as printed: the name, then shares (and a signed change) in 2 decimals."""
    if diff:
        return [[f, f"{a:.2f}", f"{b:.2f}", f"{d:+.2f}"] for f, a, b, d in top]
    return [[f, f"{s:.2f}", f"{t:.2f}"] for f, s, t in top]


def _flame_meta(w: dict, panels: list[tuple[str, list[list[str]]]]) -> dict:
    """What static/js/kansoku.js needs beside the traces: the words of the reader's tools and the lists of top
    functions (a phone's view of the flame graph)."""
    return {"flame": {k: w[k] for k in ("search", "reset", "hint", "matched", "top_title", "top_columns")}
            | {"panels": [{"name": n, "rows": rows} for n, rows in panels]}}


def _frames(tree: dict, root: str, colors: list[str], custom: list[list], hover: str, width_px: float,
            show: list[bool] | None = None, text_colors: list[str] | None = None) -> go.Bar:
    """One flame graph's frames as bars: each from its left edge (``base``) as wide as its share, at the height
    of its depth; labels cut to their frame at ``width_px`` for 100 % (the site's script cuts them again
    at the width it draws); ``meta.flame`` gives the script each frame's parent."""
    labels = [root if p < 0 else lab for lab, p in zip(tree["labels"], tree["parents"])]
    keep = show or [True] * len(labels)
    text = [fit_label(lab, v * width_px / 100) if k else "" for lab, v, k in zip(labels, tree["values"], keep)]
    return go.Bar(
        x=[v if k else None for v, k in zip(tree["values"], keep)], base=tree["starts"],
        y=[d if k else None for d, k in zip(tree["depth"], keep)], orientation="h", width=0.94,
        marker=dict(color=colors, line=dict(color="#ffffff", width=0.4)),
        text=text, textposition="inside", insidetextanchor="start", textangle=0, constraintext="none",
        textfont=dict(size=FRAME_FONT, color=text_colors or "#1a1a1a"), customdata=custom, showlegend=False,
        hovertemplate=hover, meta={"flame": {"parents": tree["parents"]}})


def _key(name: str, color: str) -> go.Bar:
    """A legend entry with no data (the flame graph's colours explained)."""
    return go.Bar(x=[None], y=[None], orientation="h", name=name, marker=dict(color=color), showlegend=True,
                  hoverinfo="skip")


def _flame_layout(chart, lang: str, fig: go.Figure, levels: int, panels: int, x_title: str,
                  height: int | None = None) -> dict:
    lay = base_layout(chart.options, "", "")
    lay.pop("xaxis"), lay.pop("yaxis")
    lay.update(height=height or chart.options.get("height") or min(3000, FRAME_PX * levels + 90 * panels + 80),
               uniformtext=dict(minsize=FRAME_FONT, mode="hide"), bargap=0, barmode="overlay",
               margin=dict(l=8, r=8, t=56, b=36), plot_bgcolor="#ffffff")
    fig.update_layout(**lay)
    fig.update_xaxes(showgrid=False, zeroline=False, ticksuffix=words.t(lang, "percent", ""), fixedrange=True, automargin=True)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, fixedrange=True)
    fig.update_xaxes(title=dict(text=x_title, font=dict(size=12)), row=panels, col=1)
    return lay


def _print_threshold(trees: list[dict], min_pct: float, room_px: int) -> float:
    """The lowest threshold (% of the samples) whose frames fit the PDF's view: its levels at most ``room_px``."""
    for pct in [p for p in PRINT_STEPS if p >= min_pct] or [min_pct]:
        levels = sum(1 + max((d for d, v in zip(t["depth"], t["values"]) if v >= pct), default=0) for t in trees)
        if levels * PRINT_FRAME_PX <= room_px:
            return pct
    return PRINT_STEPS[-1]


def _flamegraph(chart, lang: str, print_view: bool = False) -> dict:
    """One panel per condition, each with its own x axis (a click zooms one condition's frames; the site's
    script zooms every panel to the same frame where it has it)."""
    d, w = chart.data, chart.words[lang]
    trees = d["trees"]
    n = len(trees)
    width_px = PRINT_WIDTH - 16
    pct = _print_threshold(trees, d.get("min_pct", 0.0), PRINT_HEIGHT - PANEL_PX * n - 60) if print_view else None
    levels = [1 + max(dd for dd, v in zip(t["depth"], t["values"]) if not pct or v >= pct) for t in trees]
    height = (PRINT_FRAME_PX * sum(levels) + PANEL_PX * n + 60 if print_view
              else chart.options.get("height") or min(3000, FRAME_PX * sum(levels) + 90 * n + 80))
    # the gap between panels: room for a panel's tick labels and the next one's title
    fig = make_subplots(rows=n, cols=1, shared_xaxes=False, vertical_spacing=min(0.3, 64 / height) if n > 1 else 0,
                        row_heights=levels, subplot_titles=[wrap(f"{name} ({runs})") for name, runs in zip(w["names"], w["n_runs"])])
    share = [words.t(lang, "percent", f"%{{customdata[{i}]}}") for i in range(5)]
    hover = ("%{customdata[0]}<br>" + esc(w["total"]) + ": " + share[1] + "<br>" + esc(w["self"])
             + ": " + share[2] + "<extra></extra>")
    unknown = False
    for i, t in enumerate(trees):
        labels = [w["root"] if p < 0 else lab for lab, p in zip(t["labels"], t["parents"])]
        custom = [[lab, f"{v:.2f}", f"{s:.2f}"] for lab, v, s in zip(labels, t["values"], t["self"])]
        colors = [ROOT_COLOR if p < 0 else flame_color(lab) for lab, p in zip(t["labels"], t["parents"])]
        show = [v >= pct for v in t["values"]] if pct else None
        fig.add_trace(_frames(t, w["root"], colors, custom, hover, width_px, show), row=i + 1, col=1)
        depth = levels[i] - 1
        unknown = unknown or any(unresolved(lab) for lab, k in zip(t["labels"], show or [True] * len(labels)) if k)
        fig.update_yaxes(range=[-0.6, depth + 0.6], row=i + 1, col=1)
        fig.update_xaxes(range=[0, t["values"][0] if t["values"] else 100], row=i + 1, col=1)
    if unknown:
        fig.add_trace(_key(wrap(w["unknown"], WRAP_PX - 40), UNKNOWN_COLOR), row=n, col=1)
    x_title = words_note(w, pct) if print_view else w["x_title"]
    _flame_layout(chart, lang, fig, sum(levels), n, x_title, height)
    fig.update_annotations(x=0, xanchor="left", font=dict(size=13))  # panel titles: left, clear of the mode bar
    if not print_view:
        fig.update_layout(meta=_flame_meta(w, [(f"{name}", _top_rows(top, False))
                                               for name, top in zip(w["names"], d["top"])]))
    return compact(fig)


def words_note(w: dict, pct: float | None) -> str:
    """The print's x-axis title: which frames it shows (the note is a word with a number in it)."""
    return w["print_note"].replace("{pct}", f"{pct:g}")


@draws("flamegraph")
def flamegraph(chart, lang: str) -> dict:
    return _flamegraph(chart, lang)


@draws_print("flamegraph")
def flamegraph_print(chart, lang: str) -> dict:
    """The PDF's view: the frames above a threshold, the lowest that lets every level keep a readable label
    (the PDF cannot zoom)."""
    return _flamegraph(chart, lang, print_view=True)


def _flamegraph_diff(chart, lang: str, print_view: bool = False) -> dict:
    d, w = chart.data, chart.words[lang]
    t = d["tree"]
    width_px = PRINT_WIDTH - 16
    pct = _print_threshold([t], d.get("min_pct", 0.0), PRINT_HEIGHT - PANEL_PX - 100) if print_view else None
    max_delta = max((abs(x) for x in t["delta"]), default=0.0)
    colors = [diff_color(x, max_delta) for x in t["delta"]]
    # white labels on the deepest reds and blues, dark ones elsewhere
    text_colors = ["#ffffff" if max_delta and abs(x) / max_delta > 0.6 else "#1a1a1a" for x in t["delta"]]
    labels = [w["root"] if p < 0 else lab for lab, p in zip(t["labels"], t["parents"])]
    custom = [[lab, f"{a:.2f}", f"{b:.2f}", f"{x:+.2f}", f"{v:.2f}"]
              for lab, a, b, x, v in zip(labels, t["a_share"], t["b_share"], t["delta"], t["values"])]
    share = [words.t(lang, "percent", f"%{{customdata[{i}]}}") for i in range(5)]
    hover = ("%{customdata[0]}<br>" + esc(w["measure"]) + ", " + esc(w["a"]) + ": " + share[1] + "<br>"
             + esc(w["measure"]) + ", " + esc(w["b"]) + ": " + share[2] + "<br>" + esc(w["change"])
             + ": %{customdata[3]}<br>" + esc(w["total"]) + ", " + esc(w["b"]) + ": " + share[4] + "<extra></extra>")
    show = [v >= pct for v in t["values"]] if pct else None
    fig = make_subplots(rows=1, cols=1, subplot_titles=[wrap(f"{w['title']} ({w['n']})")])
    bars = _frames(t, w["root"], colors, custom, hover, width_px, show, text_colors)
    bars.marker.line.color = "#d0d0d0"  # near-white frames need an edge on the white plot
    fig.add_trace(bars)
    fig.add_trace(_key(wrap(w["grew"], WRAP_PX - 40), diff_color(1, 1)))
    fig.add_trace(_key(wrap(w["shrank"], WRAP_PX - 40), diff_color(-1, 1)))
    depth = max(dd for dd, k in zip(t["depth"], show or [True] * len(t["depth"])) if k)
    x_title = words_note(w, pct) if print_view else w["x_title"]
    _flame_layout(chart, lang, fig, depth + 1, 1, x_title, PRINT_FRAME_PX * (depth + 1) + PANEL_PX + 100 if print_view else None)
    fig.update_yaxes(range=[-0.6, depth + 0.6])
    fig.update_xaxes(range=[0, t["values"][0] if t["values"] else 100])
    fig.update_annotations(x=0, xanchor="left", font=dict(size=13))
    if not print_view:
        fig.update_layout(meta=_flame_meta(w, [(w["top_title"], _top_rows(d["top"], True))]))
    return compact(fig)


@draws("flamegraph_diff")
def flamegraph_diff(chart, lang: str) -> dict:
    return _flamegraph_diff(chart, lang)


@draws_print("flamegraph_diff")
def flamegraph_diff_print(chart, lang: str) -> dict:
    return _flamegraph_diff(chart, lang, print_view=True)


ROW_PX = 40  # a row of the difference chart: its label above a bar


def _short(name: str, keep: int = 44) -> str:
    """A function name as a row's label: a C++ signature can run past a phone's width (the hover has it whole)."""
    return name if len(name) <= keep else name[: keep - 1] + "…"


@draws("profile_diff")
def profile_diff(chart, lang: str) -> dict:
    d, w = chart.data, chart.words[lang]
    rows = d["rows"]
    order = [r["function"] for r in rows]
    xs = [round(r["delta"], 3) for r in rows]
    colors = [VERDICT_COLORS.get(r["verdict"], "#a6a6a6") for r in rows]
    # the hover's lines are the template's own markup; the measured parts are customdata, which escape_plotly
    # escapes (as hovertext, its <br> was escaped too and printed as "<br>")
    custom = [[r["function"], f"{r['a']:.2f}", f"{r['b']:.2f}", f"{r['delta']:+.2f}", v] for r, v in zip(rows, w["verdicts"])]
    tmpl = ("%{customdata[0]}<br>" + esc(w["a"]) + ": " + words.t(lang, "percent", "%{customdata[1]}") + "<br>"
            + esc(w["b"]) + ": " + words.t(lang, "percent", "%{customdata[2]}") + "<br>"
            "%{customdata[3]}<br>%{customdata[4]}<extra></extra>")
    # each function's name and change is a label above its bar, inside the plot: as tick labels beside
    # the bars they took a desktop's left margin, which left a phone a plot ~120 px wide, and the values
    # outside the bars were cut at the figure's edge
    fig = go.Figure(go.Bar(x=xs, y=order, orientation="h", marker=dict(color=colors), customdata=custom,
                           hovertemplate=tmpl, showlegend=False))
    # one legend entry per verdict that occurs, in the verdict language of the tables
    seen = []
    for r, v in zip(rows, w["verdicts"]):
        if r["verdict"] not in seen:
            seen.append(r["verdict"])
            fig.add_trace(go.Bar(x=[None], y=[order[0]] if order else [None], orientation="h", name=v,
                                 marker=dict(color=VERDICT_COLORS.get(r["verdict"], "#a6a6a6")), showlegend=True))
    # no y title: the rows are named by their labels, and a title fell on them in the PDF's rendering
    # the x title in two lines, the measure first: in one it ran past a phone's width on both sides
    lay = layout(chart.options, lang, w["x_title"].replace(" (", "\n(", 1), "")
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category", showticklabels=False)
    lo, hi = min([0.0, *xs]), max([0.0, *xs])
    pad = 0.04 * (hi - lo or 1.0)
    lay["xaxis"] = dict(lay["xaxis"], zeroline=True, zerolinecolor="#7f7f7f",
                        range=[lo - pad if lo < 0 else lo, hi + pad if hi > 0 else hi], autorange=False)
    lay["annotations"] = [dict(x=0, xref="paper", xanchor="left", y=name, yref="y", yanchor="bottom", yshift=ROW_PX * 0.22,
                               text=f"{_short(name)}  {x:+.2f}", showarrow=False, font=dict(size=11), align="left")
                          for name, x in zip(order, xs)]
    lay["margin"] = dict(lay["margin"], l=16, r=16)
    lay.setdefault("height", ROW_PX * len(order) + lay["margin"].get("t", 40) + 140)
    # overlay: the legend's empty traces must not take a slot each beside the bars (grouped, they thinned every
    # bar to a quarter of its row and its label to an unreadable size)
    fig.update_layout(**lay, bargap=0.5, barmode="overlay")
    return compact(fig)


def folded_text(lines: list[list]) -> str:
    """Folded stacks, one ``a;b;c 123`` line a stack (difffolded.pl's ``a;b;c 31 33`` for a pair): the format
    flamegraph.pl, speedscope and inferno read."""
    return "".join(" ".join(str(v) for v in row) + "\n" for row in lines)


@downloads("flamegraph")
def flamegraph_downloads(chart, lang: str) -> list[tuple[str, str, str]]:
    """Each condition's stacks and their samples, summed over its runs, as stored."""
    return [(f"-{i + 1}.folded", label, folded_text(f))
            for i, (f, label) in enumerate(zip(chart.data["folded"], chart.words[lang]["download"]))]


@downloads("flamegraph_diff")
def flamegraph_diff_downloads(chart, lang: str) -> list[tuple[str, str, str]]:
    return [("-pair.folded", chart.words[lang]["download"], folded_text(chart.data["folded"]))]


@downloads("profile_diff")
def profile_diff_downloads(chart, lang: str) -> list[tuple[str, str, str]]:
    """The difference chart's rows: each function's share in a and b, the change and the verdict."""
    w = chart.words[lang]
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow([w["csv_function"], w["a"], w["b"], w["csv_change"], w["csv_verdict"]])
    for r, v in zip(chart.data["rows"], w["verdicts"]):
        out.writerow([r["function"], f"{r['a']:.6g}", f"{r['b']:.6g}", f"{r['delta']:.6g}", v])
    return [(f".{lang}.csv", w["csv_label"], "\ufeff" + buf.getvalue())]
