"""The page blocks: what a page of the report can hold besides prose, each written once per output format.

A block has a name (the Hugo shortcode a prose page places: ``{{< tbl "id" >}}``), its Hugo template
(``layouts/``), its typst template (``render/templates/blocks/<name>.typ.j2``, Jinja2) and its view: what it
says in one language (``render/views.py``), which ``render/hugo.py`` writes into the site's page data and the
block's ``context`` function hands to its typst template, with the choices only paper needs (which columns fit
a page, where a long token or a command line may break; no typst is written in Python).
``tests/test_blocks.py`` checks that every block has both templates; ``tests/test_block_contract.py`` that
the two read the same.

Adding a block: a view function in ``views.py``, a Hugo shortcode in ``layouts/shortcodes/`` and a typst
template in ``templates/blocks/`` that place it, and an entry here with its context function.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from kansoku.errors import KansokuError
from kansoku.model import ComputedReport
from kansoku.render import publish
from kansoku.render.page_data import page_path
from kansoku.render.typst_markup import render, soft_breaks, text_pt, ui
from kansoku.render.views import (
    EnvHead,
    EnvRow,
    EnvValue,
    ViewCell,
    ViewHeader,
    ViewRow,
    authors_view,
    commands_view,
    compare_view,
    environment_view,
    figure_view,
    findings_view,
    machines_view,
    methods_view,
    missing_figures_view,
    sources_view,
    table_view,
    value_view,
)
from kansoku.shortcodes import Shortcode

TEXT_WIDTH_PT = 470           # A4 minus 2 x 22 mm
LANDSCAPE_WIDTH_PT = 717      # A4 landscape minus 2 x 22 mm
PDF_MAX_ROWS = 150            # a longer table prints its first rows and points to its CSV on the site


class Page(Protocol):
    """What a block's context reads of the PDF document being written (render.typst.Document)."""

    lang: str
    rep: ComputedReport        # the computed report (the views are made from it)
    data: dict[str, Any]       # the page-ready JSON of the report (render/page_data.py)

    def site_link(self, path: str) -> str: ...
    def chart(self, figure: dict[str, Any], chapter: dict[str, Any]) -> tuple[str, int, int]: ...


@dataclass(frozen=True)
class Block:
    name: str                                    # the shortcode; "sources": the appendix (no shortcode)
    hugo: str                                    # its Hugo template, relative to the repository
    context: Callable[..., dict[str, Any]]       # (page, shortcode, chapter JSON or None) -> template data
    needs_chapter: bool = False                  # placed only on a chapter's page
    shortcode: bool = True                       # placed by prose pages (else: by the renderer itself)
    inline: bool = False                         # placed inside a sentence (a value), not as a block of its own

    @property
    def typst(self) -> str:
        return f"blocks/{self.name}.typ.j2"

    def render(self, page: Page, sc: Shortcode | None, chapter: dict | None) -> str:
        return render(self.typst, page.lang, **self.context(page, sc, chapter))


BLOCKS: dict[str, Block] = {}


def block(name: str, hugo: str, **options: Any):
    def deco(f: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        BLOCKS[name] = Block(name, hugo, f, **options)
        return f
    return deco


def _item(sc: Shortcode, chapter: dict, kind: str, where: str) -> dict:
    coll = chapter["tables" if kind == "table" else "figures"]
    if not sc.args:
        raise KansokuError(f"{where}:{sc.line}: {{{{< {sc.name} >}}}} needs the id of a {kind} of the chapter")
    if sc.args[0] not in coll:
        raise KansokuError(f"{where}:{sc.line}: {kind} {sc.args[0]!r} is not declared in chapter {chapter['id']!r} "
                           f"(it has {', '.join(coll) or 'none'})")
    return coll[sc.args[0]]


# -- tables -------------------------------------------------------------------------------------------------

NUMBER = re.compile(r"[-−+▲×]?[\d,.]+\s*[%％]?|[—–-]")


def _text_need(text: str, size_pt: float) -> float:
    """The width a cell's text needs: a number unbroken; words (a row label, a citation) wrap at spaces and
    between Japanese characters, at most in two lines (a statement table then stays on the portrait page)."""
    if NUMBER.fullmatch(text.strip()):
        return text_pt(text, size_pt)
    pieces = UNBREAKABLE.findall(text)
    return max(max((text_pt(w, size_pt) for w in pieces), default=0.0), text_pt(text, size_pt) / 2)


def _cell_pt(c: ViewCell, size_pt: float, natural: bool = False) -> float:
    """A body cell's printed width, set unbroken: its value with its marks and its notes (superscript), or its
    widest piece set one a line (``boxes``, the printed lines below in a smaller size)."""
    first = (text_pt(c.text, size_pt) if natural else _text_need(c.text, size_pt)) + text_pt(" " * len(c.marks), size_pt)
    first += NOTE_SIZE * sum(text_pt(f"({n})", size_pt) for n in c.notes)
    below = [text_pt(b, size_pt) for b in (c.boxes or [])[:1]]
    below += [0.8 * text_pt(b, size_pt) for b in (c.boxes or [])[1:]]
    below += [0.8 * text_pt(x.text, size_pt) for x in c.lines if not x.on_demand]
    return max([first] + below)


NOTE_SIZE = 0.7   # a note mark "(*1)" in typst's superscript, a little over its share of the text at full size
HEADER_LATIN = 1.05  # a header is bold sans serif: its Latin letters a little wider than the body's
CJK_CHAR = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
UNBREAKABLE = re.compile(f"[{CJK_CHAR}]|[^\\s{CJK_CHAR}]+")


def header_spans(header: list[ViewHeader], ncols: int) -> list[range]:
    """The leaf columns each header cell covers, placed as typst places them (row by row, skipping the
    columns a cell of an earlier row still covers with its rowspan)."""
    taken: set[tuple[int, int]] = set()
    spans: list[range] = []
    row, col = 0, 0
    for h in header:
        while True:
            if col >= ncols:
                row, col = row + 1, 0
            if (row, col) in taken:
                col += 1
                continue
            break
        span = range(col, min(col + h.colspan, ncols))
        taken |= {(r, c) for r in range(row, row + h.rowspan) for c in span}
        spans.append(span)
        col = span.stop
    return spans


def header_text(h: ViewHeader) -> str:
    return h.text + (f" {h.baseline}" if h.baseline else "")


def _header_pt(text: str, size_pt: float) -> float:
    return sum(text_pt(ch, size_pt) * (1 if unicodedata.east_asian_width(ch) in "WF" else HEADER_LATIN) for ch in text)


def column_widths(header: list[ViewHeader], rows: list[list[ViewCell]], ncols: int, size_pt: float,
                  natural: bool = False) -> list[float]:
    """Each leaf column's printed width: its widest cell, or its header's longest word (headers wrap).
    ``natural``: with its header and its words on one line each (what the room left on the page goes to)."""
    inset = 8.0
    widths = [0.0] * ncols
    for r in rows:
        for i, c in enumerate(r[:ncols]):
            widths[i] = max(widths[i], _cell_pt(c, size_pt, natural) + inset)
    for h, span in zip(header, header_spans(header, ncols)):
        text = header_text(h)
        # a header wraps at spaces and between any two Japanese characters: its widest unbreakable piece,
        # or a third of it (three lines at most)
        whole = _header_pt(text, size_pt)
        need = max(max((_header_pt(w, size_pt) for w in UNBREAKABLE.findall(text)), default=0),
                   whole if natural else whole / 3) + inset
        if len(span) == 1:
            widths[span.start] = max(widths[span.start], need)
    return widths


def track_widths(least: list[float], natural: list[float], limit: float) -> list[float]:
    """Column widths for typst: each column at least as wide as its cells set unbroken (typst's own share of
    the page squeezed a column of long headers below its numbers, which then ran into their neighbours);
    the room left goes to the columns whose headers would take more lines, in proportion."""
    room = limit - sum(least)
    want = [max(0.0, n - w) for w, n in zip(least, natural)]
    if room <= 0 or not sum(want):
        return least
    share = min(1.0, room / sum(want))
    return [w + x * share for w, x in zip(least, want)]


def column_parts(header: list[ViewHeader], widths: list[float], lead: int, limit: float) -> list[list[int]]:
    """Leaf columns in parts that each fit ``limit`` with the ``lead`` row-label columns repeated, cut only
    where no header cell spans the cut (a spanner's columns stay together)."""
    n = len(widths)
    cuts = {lead, n}
    for b in range(lead + 1, n):
        if not any(sp.start < b < sp.stop for sp in header_spans(header, n)):
            cuts.add(b)
    bounds = sorted(cuts)
    segments = [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]
    base = sum(widths[:lead])
    parts: list[list[int]] = []
    cur: list[int] = []
    for seg in segments:
        if cur and base + sum(widths[i] for i in cur + seg) > limit:
            parts.append(cur)
            cur = []
        cur = cur + seg
    if cur:
        parts.append(cur)
    return [list(range(lead)) + p for p in parts] or [list(range(n))]


def table_layout(page: Page, *, item_id: str | None, header_rows: list[list[ViewHeader]], rows: list[ViewRow],
                 kinds: list[str], size_pt: float | None = None, breakable: bool | None = None,
                 fit: bool = True) -> dict[str, Any]:
    """How a table's view is set on the page, at a readable size (never below 8 pt): on the portrait page when
    it fits, on a landscape page when it is wider, split into parts by columns (the row labels repeated) when
    even the landscape page is too narrow; more than ``PDF_MAX_ROWS`` rows: the first rows and where all of
    them are (the site's CSV). ``fit=False``: as it is, on the portrait page (its cells wrap)."""
    L = page.lang
    n = len(kinds)
    header = [h for hrow in header_rows for h in hrow]
    cut = None
    if len(rows) > PDF_MAX_ROWS and item_id is not None:
        url = page.site_link(f"csv/{page.data['id']}/{item_id}.{L}.csv")
        cut = ui(L, "pdf_rows_cut", PDF_MAX_ROWS, total=len(rows), where=url)
        rows = rows[:PDF_MAX_ROWS]
    size_pt = size_pt or (9 if n <= 6 else 8)
    widths = column_widths(header, [r.cells for r in rows], n, size_pt)
    lead = next((i for i, k in enumerate(kinds) if k != "factor"), n) or 1
    cols = [list(range(n))]
    if fit and sum(widths) > LANDSCAPE_WIDTH_PT:
        cols = column_parts(header, widths, lead, LANDSCAPE_WIDTH_PT)
    natural = column_widths(header, [r.cells for r in rows], n, size_pt, natural=True)
    limit = LANDSCAPE_WIDTH_PT if fit and sum(widths) > TEXT_WIDTH_PT else TEXT_WIDTH_PT
    parts = []
    for k, part in enumerate(cols):
        keep = set(part)
        track = track_widths([widths[i] for i in part], [natural[i] for i in part], limit)
        parts.append({
            "suffix": ui(L, "pdf_table_part", None, i=k + 1, k=len(cols)) if len(cols) > 1 else None,
            # fixed widths when the table was fitted to the page; else typst's own (its cells wrap)
            "track": "(" + ", ".join(f"{w:.1f}pt" for w in track) + ",)" if fit else str(len(part)),
            "columns": part, "aligns": ["left" if kinds[i] == "factor" else "right" for i in part],
            "header": [h for h, span in zip(header, header_spans(header, n)) if set(span) <= keep],
            "rows": [ViewRow([c for i, c in enumerate(r.cells) if i in keep], r.group) for r in rows]})
    return {"parts": parts, "cut": cut, "size": f"{size_pt}pt",
            "breakable": "true" if (len(rows) > 15 if breakable is None else breakable) else "false",
            "landscape": fit and sum(widths) > TEXT_WIDTH_PT}


@block("tbl", "layouts/shortcodes/tbl.html", needs_chapter=True)
def table_context(page: Page, sc: Shortcode, chapter: dict) -> dict[str, Any]:
    """A numbered table: its view (views.table_view), set to fit the page."""
    t = _item(sc, chapter, "table", page.where)
    view = table_view(page.rep, page.rep.chapter(chapter["id"]).tables[t["id"]], page.lang)
    return {"view": view, "layout": table_layout(page, item_id=view.id, header_rows=view.header, rows=view.rows,
                                                 kinds=view.kinds)}


# -- figures ------------------------------------------------------------------------------------------------

@block("fig", "layouts/shortcodes/fig.html", needs_chapter=True)
def figure_context(page: Page, sc: Shortcode, chapter: dict) -> dict[str, Any]:
    """A numbered figure: its chart exported to SVG in this language, at the text width (or less, when tall),
    and its view (views.figure_view)."""
    f = _item(sc, chapter, "figure", page.where)
    image, width_pt, traces = page.chart(f, chapter)
    view = figure_view(page.rep, page.rep.chapter(chapter["id"]).figures[f["id"]], page.lang, traces)
    return {"view": view, "image": image, "width": width_pt}


# -- the generated pages' blocks ----------------------------------------------------------------------------

@block("authors", "layouts/shortcodes/authors.html")
def authors_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """Who wrote which chapter: its view (views.authors_view)."""
    return {"view": authors_view(page.rep, page.lang)}


def env_cells(rows: list[EnvRow], soft: bool = True) -> list[list[str]]:
    """The environment appendix's rows as printed: a cell's values one a line (``soft``: free to break in long
    tokens), each with its runs in parentheses."""
    def cell(values: list[EnvValue]) -> str:
        return "\n".join((soft_breaks(x.text) if soft else x.text) + (f" ({x.note})" if x.note else "")
                         for x in values)
    return [[r.label] + [cell(c) for c in r.cells] for r in rows]


def env_heads(heads: list[EnvHead]) -> list[str]:
    """The columns of machines or configurations as printed: the name over the runs."""
    return [(f"{h.name}\n" if h.name else "") + h.runs for h in heads]


@block("environment", "layouts/shortcodes/environment.html")
def environment_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """The environment appendix: its view (views.environment_view)."""
    return {"view": environment_view(page.rep, page.lang), "cells": env_cells, "heads": env_heads}


@block("machines", "layouts/partials/machines.html", needs_chapter=True, shortcode=False)
def machines_context(page: Page, sc: Shortcode | None, chapter: dict) -> dict[str, Any]:
    """A chapter's machines: its view (views.machines_view), its cells free to break in long tokens."""
    view = machines_view(page.rep.chapter(chapter["id"]), page.lang)
    return {"view": view, "rows": [[soft_breaks(c) for c in row] for row in view.rows] if view else []}


@block("missing_figures", "layouts/partials/missing-figures.html", needs_chapter=True, shortcode=False)
def missing_figures_context(page: Page, sc: Shortcode | None, chapter: dict) -> dict[str, Any]:
    """The chapter's figures of the original that are not drawn: its view (views.missing_figures_view)."""
    return {"view": missing_figures_view(page.rep.chapter(chapter["id"]), page.lang)}


@block("commands", "layouts/shortcodes/commands.html", needs_chapter=True)
def commands_context(page: Page, sc: Shortcode | None, chapter: dict) -> dict[str, Any]:
    """The chapter's commands: its view (views.commands_view), each command in its printed lines."""
    return {"view": commands_view(page.rep.chapter(chapter["id"]), page.lang)}


@block("findings", "layouts/partials/findings.html", shortcode=False)
def findings_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """The chapters' key results on the cover: its view (views.findings_view)."""
    return {"view": findings_view(page.rep, page.lang)}


def _resolved(page: Page, sc: Shortcode, what: str) -> dict[str, Any]:
    """What report/values.py resolved for an inline shortcode (by ``Shortcode.value_key``): its view."""
    v = page.rep.values.get(sc.value_key)
    if v is None:
        raise KansokuError(f"{getattr(page, 'where', '?')}:{sc.line}: {{{{< {sc.source} >}}}} names no {what} "
                           "of this report")
    return {"view": value_view(v, page.lang)}


@block("val", "layouts/shortcodes/val.html", inline=True)
def value_context(page: Page, sc: Shortcode, chapter: dict | None) -> dict[str, Any]:
    """A number of the prose, as report/values.py resolved it (by the key of its arguments)."""
    return _resolved(page, sc, "value")


@block("ref", "layouts/shortcodes/ref.html", inline=True)
def ref_context(page: Page, sc: Shortcode, chapter: dict | None) -> dict[str, Any]:
    """A table's or figure's label in the prose, as report/values.py resolved it ("表 1.2")."""
    return _resolved(page, sc, "table or figure")


@block("methods", "layouts/shortcodes/methods.html")
def methods_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """The methods page: its view (views.methods_view)."""
    return {"view": methods_view(page.rep, page.lang)}


@block("compare", "layouts/shortcodes/compare.html")
def compare_context(page: Page, sc: Shortcode, chapter: dict | None) -> dict[str, Any]:
    """A [[compare]]: its view (views.compare_view), set on the portrait page (its cells wrap)."""
    found = {c.id: c for c in page.rep.compares}
    if not sc.args or sc.args[0] not in found:
        raise KansokuError(f"{page.where}:{sc.line}: {{{{< {sc.source} >}}}}: report {page.rep.id!r} has no "
                           f"such [[compare]] (it has {', '.join(found) or 'none'})")
    view = compare_view(page.rep, found[sc.args[0]], page.lang)
    return {"view": view, "layout": table_layout(page, item_id=None, header_rows=[view.header], rows=view.rows,
                                                 kinds=view.kinds, size_pt=8, breakable=True, fit=False)}


# -- the data-sources appendix ------------------------------------------------------------------------------

@block("sources", "layouts/_default/sources.html", shortcode=False)
def sources_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """The PDF's data-sources appendix: the summary the site's sources page opens with (views.sources_view),
    after a paragraph giving that page's address, where every run is listed with each raw file's SHA-256.
    The manifest is published beside the raw files only."""
    L, d = page.lang, page.data
    view = sources_view(page.rep, L, publish.manifest(d["runs"]) if d.get("publish_raw") else "")
    if view is None:
        return {}
    before, _, after = ui(L, "pdf_sources_intro", where="\x00").partition("\x00")
    path = next((p["path"][L] for p in d["pages"] if p["kind"] == "sources"), None) \
        or page_path(d["id"], "sources", L)  # (a report of no data-sources page: where the site would have it)
    return {"url": page.site_link(path), "intro": (before, after), "view": view,
            "runs": [[numbers, soft_breaks(label, 12) + (f" — {note}" if note else ""), files]
                     for numbers, label, note, files in view.runs]}
