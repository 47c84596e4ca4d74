"""The page blocks: what a page of the report can hold besides prose, each written once per output format.

A block has a name (the Hugo shortcode a prose page places: ``{{< tbl "id" >}}``), its Hugo template
(``layouts/``), its typst template (``render/templates/blocks/<name>.typ.j2``, Jinja2) and its data: the
page-ready JSON the site reads (``ComputedReport.to_json``), shaped for the template by the block's
``context`` function (choices a template cannot make, such as which columns fit a page, are made there; no
typst is written in Python). ``tests/test_blocks.py`` checks that every block has both templates.

Adding a block: a Hugo shortcode in ``layouts/shortcodes/``, a typst template in ``templates/blocks/``, and an
entry here with its context function.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from kansoku.errors import KansokuError
from kansoku.model import VERDICT_KINDS, VERDICT_MARKS
from kansoku.render.typst_markup import pick, render, soft_breaks, text_pt, ui
from kansoku.shortcodes import Shortcode

TEXT_WIDTH_PT = 470           # A4 minus 2 x 22 mm
LANDSCAPE_WIDTH_PT = 717      # A4 landscape minus 2 x 22 mm
PDF_MAX_ROWS = 150            # a longer table prints its first rows and points to its CSV on the site
SHA_SHOWN = 16                # hex digits of a file's SHA-256 in the PDF (the site prints all 64)


class Page(Protocol):
    """What a block's context reads of the PDF document being written (render.typst.Document)."""

    lang: str
    data: dict[str, Any]       # the page-ready JSON of the report (ComputedReport.to_json)

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
        return render(self.typst, page.lang, verdict_marks=VERDICT_MARKS, **self.context(page, sc, chapter))


BLOCKS: dict[str, Block] = {}


def block(name: str, hugo: str, **options: Any):
    def deco(f: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        BLOCKS[name] = Block(name, hugo, f, **options)
        return f
    return deco


SIDE = re.compile(r"(\S+) (\[[^\]]*\]) (n = \d+)")  # a compared side as printed: median [min–max] n = 5


def _item(sc: Shortcode, chapter: dict, kind: str, where: str) -> dict:
    coll = chapter["tables" if kind == "table" else "figures"]
    if not sc.args:
        raise KansokuError(f"{where}:{sc.line}: {{{{< {sc.name} >}}}} needs the id of a {kind} of the chapter")
    if sc.args[0] not in coll:
        raise KansokuError(f"{where}:{sc.line}: {kind} {sc.args[0]!r} is not declared in chapter {chapter['id']!r} "
                           f"(it has {', '.join(coll) or 'none'})")
    return coll[sc.args[0]]


# -- tables -------------------------------------------------------------------------------------------------

def _cell_pt(c: dict, size_pt: float) -> float:
    """A body cell's printed width, set unbroken: its value with its marks and its notes (superscript), or its
    widest piece set one a line (``boxes``, a range below in a smaller size)."""
    first = text_pt(str(c.get("text", "")), size_pt) + text_pt(" " * len(c.get("marks") or []), size_pt)
    first += NOTE_SIZE * sum(text_pt(f"({n})", size_pt) for n in c.get("notes") or [])
    below = [text_pt(b, size_pt) for b in (c.get("boxes") or [])[:1]]
    below += [0.8 * text_pt(b, size_pt) for b in (c.get("boxes") or [])[1:]]
    if c.get("range"):
        below.append(0.8 * text_pt(f"[{c['range']}]", size_pt))
    return max([first] + below)


NOTE_SIZE = 0.7   # a note mark "(*1)" in typst's superscript, a little over its share of the text at full size
HEADER_LATIN = 1.05  # a header is bold sans serif: its Latin letters a little wider than the body's
CJK_CHAR = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
UNBREAKABLE = re.compile(f"[{CJK_CHAR}]|[^\\s{CJK_CHAR}]+")


def header_spans(header: list[dict], ncols: int) -> list[range]:
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
        span = range(col, min(col + h["colspan"], ncols))
        taken |= {(r, c) for r in range(row, row + h["rowspan"]) for c in span}
        spans.append(span)
        col = span.stop
    return spans


def _header_pt(text: str, size_pt: float) -> float:
    return sum(text_pt(ch, size_pt) * (1 if unicodedata.east_asian_width(ch) in "WF" else HEADER_LATIN) for ch in text)


def column_widths(header: list[dict], rows: list[list[dict]], ncols: int, size_pt: float,
                  natural: bool = False) -> list[float]:
    """Each leaf column's printed width: its widest cell, or its header's longest word (headers wrap).
    ``natural``: with its header on as few lines as the cells' width allows, at most one line."""
    inset = 8.0
    widths = [0.0] * ncols
    for r in rows:
        for i, c in enumerate(r[:ncols]):
            widths[i] = max(widths[i], _cell_pt(c, size_pt) + inset)
    for h, span in zip(header, header_spans(header, ncols)):
        text = str(h["text"])
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


def column_parts(header: list[dict], widths: list[float], lead: int, limit: float) -> list[list[int]]:
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


def legend(marks: set[str], lang: str) -> list[dict]:
    """The notes explaining the marks present under a table, in a fixed order."""
    out = []
    if "transcribed" in marks:
        out.append({"mark": "transcribed", "text": ui(lang, "transcribed")})
    if "mismatch" in marks:
        out.append({"mark": "mismatch", "text": ui(lang, "mismatch")})
    for kind in VERDICT_KINDS:
        if kind in marks:
            out.append({"mark": kind, "text": ui(lang, "verdict_" + kind.replace("-", "_"))})
    return out


def table_layout(page: Page, *, item_id: str | None, label: str, caption: str, header: list[dict],
                 rows: list[list[dict]], notes: list[dict], kinds: list[str], groups: dict[int, str],
                 size_pt: float | None = None, breakable: bool | None = None, fit: bool = True) -> dict[str, Any]:
    """A table at a readable size (never below 8 pt): on the portrait page when it fits, on a landscape page
    when it is wider, split into parts by columns (the row labels repeated) when even the landscape page is
    too narrow; more than ``PDF_MAX_ROWS`` rows: the first rows and where all of them are (the site's CSV).
    ``fit=False``: as it is, on the portrait page (its cells wrap)."""
    L = page.lang
    n = len(kinds)
    notes = list(notes)
    if len(rows) > PDF_MAX_ROWS and item_id is not None:
        url = page.site_link(f"csv/{page.data['id']}/{item_id}.{L}.csv")
        notes.insert(0, {"mark": "", "text": ui(L, "pdf_rows_cut", PDF_MAX_ROWS, total=len(rows), where=url)})
        rows = rows[:PDF_MAX_ROWS]
        groups = {k: v for k, v in groups.items() if k < PDF_MAX_ROWS}
    size_pt = size_pt or (9 if n <= 6 else 8)
    widths = column_widths(header, rows, n, size_pt)
    lead = next((i for i, k in enumerate(kinds) if k != "factor"), n) or 1
    cols = [list(range(n))]
    if fit and sum(widths) > LANDSCAPE_WIDTH_PT:
        cols = column_parts(header, widths, lead, LANDSCAPE_WIDTH_PT)
    natural = column_widths(header, rows, n, size_pt, natural=True)
    limit = LANDSCAPE_WIDTH_PT if fit and sum(widths) > TEXT_WIDTH_PT else TEXT_WIDTH_PT
    parts = []
    for k, part in enumerate(cols):
        keep = set(part)
        track = track_widths([widths[i] for i in part], [natural[i] for i in part], limit)
        parts.append({
            # fixed widths when the table was fitted to the page; else typst's own (its cells wrap)
            "track": "(" + ", ".join(f"{w:.1f}pt" for w in track) + ",)" if fit else str(len(part)),
            "caption": caption + (" " + ui(L, "pdf_table_part", None, i=k + 1, k=len(cols)) if len(cols) > 1 else ""),
            "columns": part, "aligns": ["left" if kinds[i] == "factor" else "right" for i in part],
            "header": [h for h, span in zip(header, header_spans(header, n)) if set(span) <= keep],
            "rows": [[c for i, c in enumerate(r) if i in keep] for r in rows]})
    return {"label": label, "parts": parts, "notes": notes, "groups": groups, "size": f"{size_pt}pt",
            "breakable": "true" if (len(rows) > 15 if breakable is None else breakable) else "false",
            "landscape": fit and sum(widths) > TEXT_WIDTH_PT}


@block("tbl", "layouts/shortcodes/tbl.html", needs_chapter=True)
def table_context(page: Page, sc: Shortcode, chapter: dict) -> dict[str, Any]:
    """A numbered table: cells with their marks (transcribed, mismatch, the verdict), notes and legend."""
    L = page.lang
    t = _item(sc, chapter, "table", page.where)
    kinds = [c["kind"] for c in t["columns"]]
    header = []
    for hrow in t["header"]:
        for h in hrow:
            base = f" ({ui(L, 'baseline')})" if h.get("baseline") and h["colspan"] > 1 else ""
            header.append({"colspan": h["colspan"], "rowspan": h["rowspan"], "text": pick(h["text"], L) + base,
                           "agg": pick(h["agg"], L) if h.get("agg") else None})  # how the column's values are made
    marks: set[str] = set()
    rows = []
    for row in t["rows"]:
        cells = []
        for c in row:
            text = pick(c["t"], L)
            flags = c.get("flags") or []
            if c["k"] == "factor":
                cells.append({"text": text + (f" ({ui(L, 'baseline')})" if "baseline" in flags else ""),
                              "marks": [], "notes": [], "fill": None, "range": None, "boxes": None})
                continue
            cell = {"text": text.replace(" ", "\u00a0"), "marks": [], "notes": c.get("notes") or [], "fill": None,
                    "range": c.get("rg") if t.get("print_spread") else None, "boxes": None}
            for flag in ("transcribed", "mismatch"):
                if flag in flags:
                    cell["marks"].append(flag)
                    marks.add(flag)
            if "mismatch" in flags:
                cell["fill"] = "mismatch"
            if c.get("verdict"):  # the noise-aware verdict: a symbol for black-and-white print, a light fill
                kind = c["verdict"]["kind"]
                cell["marks"].append(kind)
                cell["fill"] = cell["fill"] or (kind if kind in ("better", "worse") else None)
                marks.add(kind)
            cells.append(cell)
        rows.append(cells)
    notes = []
    if t.get("footnote"):
        notes.append({"mark": "", "text": pick(t["footnote"], L)})
    for cn in t.get("notes") or []:
        notes.append({"mark": "", "text": f"({cn['mark']}) {pick(cn['text'], L)}"})
    notes += legend(marks | set(t.get("marks") or []), L)
    if t.get("method"):
        notes.append({"mark": "", "text": pick(t["method"], L)})
        methods = next((p for p in page.data["pages"] if p["kind"] == "methods" and p["in_pdf"]), None)
        if methods is not None:  # the full method, its parameters and the runs: the methods page
            notes.append({"mark": "", "text": ui(L, "see_methods", pick(methods["title"], L))})
    groups = {g["first_row"]: pick(g["label"], L) for g in t.get("row_groups") or []}
    return table_layout(page, item_id=t["id"], label=pick(t["label"], L), caption=pick(t["caption"], L),
                        header=header, rows=rows, notes=notes, kinds=kinds, groups=groups)


# -- figures ------------------------------------------------------------------------------------------------

@block("fig", "layouts/shortcodes/fig.html", needs_chapter=True)
def figure_context(page: Page, sc: Shortcode, chapter: dict) -> dict[str, Any]:
    """A numbered figure: its chart exported to SVG in this language, at the text width (or less, when tall)."""
    L = page.lang
    f = _item(sc, chapter, "figure", page.where)
    image, width_pt, traces = page.chart(f, chapter)
    notes = []
    if not traces:
        notes.append({"mark": "", "text": ui(L, "no_chart_data")})
    if f.get("footnote"):
        notes.append({"mark": "", "text": pick(f["footnote"], L)})
    if f.get("transcribed"):
        notes.append({"mark": "transcribed", "text": ui(L, "figure_transcribed")})
    for c in f.get("citations") or []:
        notes.append({"mark": "", "text": f"{ui(L, 'citation')}: {soft_breaks(str(c))}"})
    return {"label": pick(f["label"], L), "caption": pick(f["caption"], L), "image": image, "width": width_pt,
            "notes": notes}


# -- the generated pages' blocks ----------------------------------------------------------------------------

@block("authors", "layouts/shortcodes/authors.html")
def authors_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    L = page.lang
    return {"authors": [{"row": [pick(a["name"], L), pick(a["affiliation"], L), ", ".join(
        (f"{c['number']}. " if c.get("number") is not None else "") + pick(c.get("title"), L) for c in a["chapters"])]}
        for a in page.data["authors"]]}


@block("environment", "layouts/shortcodes/environment.html")
def environment_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """The environment appendix's JSON with the rows of its tables in this language."""
    L = page.lang
    env = dict(page.data["environment"])

    def n_runs(n: int) -> str:
        return ui(L, "n_runs", n)

    def where(d: dict) -> str:  # the factors that single out a group, in the reader's words (never key=value)
        return pick(d.get("where_text"), L)

    machines = env.get("machines") or []
    env["machines"] = [{**m, "head": (f"{pick(m['name'], L)}\n" if m.get("name") else "")
                        + (f"{where(m)}, " if where(m) else "") + n_runs(m["runs"])} for m in machines]
    env["machine_rows"] = [[pick(label, L)] + [soft_breaks(pick(m["values"][i], L)) for m in machines]
                           for i, label in enumerate(env.get("machine_fields") or [])]
    env["version_rows"] = [[v["tool"], "\n".join(soft_breaks(x["value"]) + (f" ({n_runs(x['runs'])})"
                                                                           if len(v["values"]) > 1 else "")
                                                 for x in v["values"])] for v in env.get("versions") or []]

    def setting(s: dict) -> dict:
        multi = len(s["values"]) > 1
        return {**s, "row": [s["name"], "\n".join(
            soft_breaks(x["value"]) + (" (" + (f"{where(x)}, " if where(x) else "") + n_runs(x["runs"]) + ")"
                                       if multi else "") for x in s["values"])]}

    env["settings"] = [setting(s) for s in env.get("settings") or []]
    env["settings_configs"] = [{**c, "head": (f"{where(c)}\n" if where(c) else "") + n_runs(c["runs"])}
                               for c in env.get("settings_configs") or []]
    env["settings_varying"] = [{**v, "row": [v["name"]] + [soft_breaks(x) for x in v["values"]]}
                               for v in env.get("settings_varying") or []]
    ns = env.get("settings_without_server")
    if ns:
        env["settings_without_server"] = {**ns, "shown": n_runs(ns["runs"]) + (f" ({where(ns)})" if where(ns) else "")}
    return {"env": env}


@block("machines", "layouts/partials/machines.html", needs_chapter=True, shortcode=False)
def machines_context(page: Page, sc: Shortcode | None, chapter: dict) -> dict[str, Any]:
    """A chapter's machines (placed by the renderer after the chapter's prose, as the site's single.html does)."""
    L = page.lang
    m = chapter.get("machines") or {}
    summary = pick(m.get("summary") or {}, L)
    if m.get("unknown"):
        summary += " " + ui(L, "machines_unknown", m["unknown"])
    roles = bool(m.get("with_roles"))
    head = [ui(L, "machines_col_machine")] + ([ui(L, "machines_col_role")] if roles else []) + [
        ui(L, k) for k in ("machines_col_cpu", "machines_col_memory", "machines_col_os",
                           "machines_col_virtualization", "machines_col_storage", "machines_col_runs")]
    rows = [[pick(x["name"], L)] + ([pick(x["role"], L) if x.get("role") else ""] if roles else [])
            + [pick(x["cpu"], L), str(x["memory"]), soft_breaks(str(x["os"])), pick(x.get("virtualization") or "—", L),
               soft_breaks(pick(x["storage"], L)), str(x["runs"])]
            for x in m.get("machines") or []]
    return {"summary": summary, "head": head, "rows": rows}


@block("missing_figures", "layouts/partials/missing-figures.html", needs_chapter=True, shortcode=False)
def missing_figures_context(page: Page, sc: Shortcode | None, chapter: dict) -> dict[str, Any]:
    """The chapter's figures of the original that are not drawn, with the reason (after the chapter's prose)."""
    L = page.lang
    return {"items": [{"label": pick(m["label"], L), "caption": pick(m["caption"], L), "reason": pick(m["reason"], L),
                       "note": ui(L, "figure_missing_note", pick(m["note"], L)) if m.get("note") else None}
                      for m in chapter.get("missing_figures") or []]}


COMMAND_COLUMNS = 96          # a printed command line: its text at 0.72 em of mono in a shaded block, with room
                              # for the " \\" that continues it (a full-width character counts two columns)
SHELL_JOINERS = ("&&", "||", "|", ";")


def shell_words(command: str) -> list[str]:
    """A command line's words as the shell splits them: at spaces outside quotes, each quote kept."""
    words, cur, quote = [], "", None
    for ch in command:
        if quote:
            cur += ch
            quote = None if ch == quote else quote
        elif ch in "'\"":
            cur, quote = cur + ch, ch
        elif ch == " ":
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += ch
    return words + [cur] if cur else words


def _columns(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def command_lines(command: str, columns: int = COMMAND_COLUMNS) -> list[str]:
    """A command as printed: lines that break only between arguments, never between an option and its value
    ("-f script.sql" stays whole) nor inside a quoted argument; every line but the last ends with " \\" (the
    shell's continuation), so that the lines copied from the PDF are the command."""
    units: list[str] = []
    for w in shell_words(command):
        if units and (w in SHELL_JOINERS or (units[-1].startswith("-") and " " not in units[-1]
                                              and "=" not in units[-1] and not w.startswith("-")
                                              and units[-1] not in SHELL_JOINERS)):
            units[-1] += " " + w
        else:
            units.append(w)
    lines = [""]
    for u in units:
        if lines[-1] and _columns(lines[-1] + " " + u + " \\") > columns:
            lines[-1] += " \\"
            lines.append(u)
        else:
            lines[-1] = (lines[-1] + " " + u) if lines[-1] else u
    return lines


@block("commands", "layouts/shortcodes/commands.html", needs_chapter=True)
def commands_context(page: Page, sc: Shortcode | None, chapter: dict) -> dict[str, Any]:
    """The chapter's commands, each as its printed lines ("$ " before the first; command_lines)."""
    L = page.lang

    def printed(c: Any) -> list[str]:
        return command_lines("$ " + pick(c, L))

    return {"commands": [{**b, "name": ", ".join(s["name"] for s in b["scripts"]) if b["scripts"] else b["program"],
                          "setup_lines": [printed(c) for c in b["setup"] or []], "command_lines": printed(b["command"])}
                         for b in chapter.get("commands") or []]}


@block("findings", "layouts/partials/findings.html", shortcode=False)
def findings_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """The chapters' key results on the cover (report/values.py findings): label, value, comparison, verdict."""
    L = page.lang
    return {"findings": [{
        "chapter": pick(f["chapter"], L), "label": pick(f["label"], L), "value": pick(f["value"]["text"], L),
        "what": pick(f["value"]["title"], L), "table": pick(f["table"], L),
        "compare": pick(f["compare"]["text"], L) if f.get("compare") else None,
        "verdict": pick(f["verdict"], L) if f.get("verdict") else None,
        "mark": VERDICT_MARKS.get((f.get("verdict_kind") or "").replace("_", "-"))}
        for f in page.data.get("findings") or []]}


@block("val", "layouts/shortcodes/val.html", inline=True)
def value_context(page: Page, sc: Shortcode, chapter: dict | None) -> dict[str, Any]:
    """A number of the prose, as report/values.py resolved it (by the key of its arguments)."""
    v = (page.data.get("values") or {}).get(sc.key)
    if v is None:
        raise KansokuError(f"{getattr(page, 'where', '?')}:{sc.line}: {{{{< {sc.source} >}}}} names no value "
                           "of this report")
    return {"text": pick(v["text"], page.lang)}


@block("ref", "layouts/shortcodes/ref.html", inline=True)
def ref_context(page: Page, sc: Shortcode, chapter: dict | None) -> dict[str, Any]:
    """A table's or figure's label in the prose, as report/values.py resolved it ("表 1.2")."""
    v = (page.data.get("values") or {}).get(sc.value_key)
    if v is None:
        raise KansokuError(f"{getattr(page, 'where', '?')}:{sc.line}: {{{{< {sc.source} >}}}} names no table or "
                           "figure of this report")
    return {"text": pick(v["text"], page.lang)}


@block("methods", "layouts/shortcodes/methods.html")
def methods_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    return {"methods": page.data["methods"]}


@block("compare", "layouts/shortcodes/compare.html")
def compare_context(page: Page, sc: Shortcode, chapter: dict | None) -> dict[str, Any]:
    """A [[compare]]: the site's comparison table as a typst table."""
    L = page.lang
    found = page.data["compares"]
    if not sc.args or sc.args[0] not in found:
        raise KansokuError(f"{page.where}:{sc.line}: {{{{< {sc.source} >}}}}: report {page.data['id']!r} has no "
                           f"such [[compare]] (it has {', '.join(found) or 'none'})")
    c = found[sc.args[0]]
    head = ([ui(L, "compare_metric")] + [pick(f, L) for f in c["factors"]]
            + [f"A: {ui(L, 'compare_spread_header')}", f"B: {ui(L, 'compare_spread_header')}",
               ui(L, "compare_change"), ui(L, "compare_interval_header")])
    header = [{"colspan": 1, "rowspan": 1, "text": h} for h in head]

    def cell(text: str, **more: Any) -> dict:
        return {"text": text, "marks": [], "notes": [], "fill": None, "range": None, "boxes": None, **more}

    def side(text: str) -> dict:
        """A side's "median [min–max] n = 5": one a line (the column no wider than the range), never broken
        inside a number, a range or its count."""
        m = SIDE.fullmatch(text)
        return (cell(text, boxes=[g.replace(" ", "\u00a0") for g in m.groups()]) if m
                else cell(text.replace(" ", "\u00a0")))

    rows = []
    for r in c["rows"]:
        flag = r.get("flag")
        change = cell(pick(r["change"], L).replace(" ", "\u00a0"),
                      fill=flag if flag in ("better", "worse") else None,
                      marks=([flag] if flag else []) + (["transcribed"] if r.get("transcribed") else []))
        rows.append([cell(pick(r["label"], L))] + [cell(pick(v, L)) for v in r["values"]]
                    + [side(pick(r["a"]["t"], L)), side(pick(r["b"]["t"], L)), change, cell(pick(r["interval"], L))])
    notes = []
    if not rows:
        notes.append({"mark": "", "text": ui(L, "compare_none")})
    if c["common"]:
        notes.append({"mark": "", "text": ui(L, "common_factors") + ": " + ", ".join(
            f"{pick(x['name'], L)} = {pick(x['value'], L)}" for x in c["common"])})
    if c.get("footnote"):
        notes.append({"mark": "", "text": pick(c["footnote"], L)})
    # what the two sides' runs recorded differently (the site gives it a table of its own)
    notes.append({"mark": "", "text": ui(L, "compare_environment") + ": " + "; ".join(
        (f"[{pick(e['role'], L)}] " if e["role"] else "") + f"{e['key']}: A {' | '.join(e['a'])}, B {' | '.join(e['b'])}"
        for e in c["environment"])} if c["environment"] else {"mark": "", "text": ui(L, "compare_environment_none")})
    notes += [n for n in legend(set(c["marks"]), L) if n["mark"] in VERDICT_MARKS]
    notes.append({"mark": "", "text": pick(c["method"], L)})
    notes.append({"mark": "", "text": f"{ui(L, 'compare_same_as')} {c['selections']}"})
    kinds = ["factor"] * (1 + len(c["factors"])) + ["value"] * 4
    caption = f"A ({ui(L, 'baseline')}): {pick(c['a_label'], L)} — B: {pick(c['b_label'], L)}"
    return table_layout(page, item_id=None, label="", caption=caption, header=header, rows=rows, notes=notes,
                        kinds=kinds, groups={}, size_pt=8 if len(head) <= 9 else 7, breakable=True, fit=False)


# -- the data-sources appendix ------------------------------------------------------------------------------

def _number_key(number: str) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.\-]", str(number)))


def run_ranges(numbers: list[int]) -> str:
    """R1–R12, R25, R27–R30: consecutive run numbers as ranges."""
    out, ns = [], sorted(set(numbers))
    i = 0
    while i < len(ns):
        j = i
        while j + 1 < len(ns) and ns[j + 1] == ns[j] + 1:
            j += 1
        out.append(f"R{ns[i]}" if i == j else f"R{ns[i]}–R{ns[j]}")
        i = j + 1
    return ", ".join(out)


@block("sources", "layouts/_default/sources.html", shortcode=False)
def sources_context(page: Page, sc: Shortcode | None, chapter: dict | None) -> dict[str, Any]:
    """Per table and figure, its runs (numbered R1, R2, … once for the whole report); then every run with its
    raw files and the first ``SHA_SHOWN`` hex digits of their SHA-256. Runs that share their files (values
    transcribed from one published table) are listed together."""
    L, d = page.lang, page.data
    runs = d["runs"]
    items = []
    for ch in d["chapters"]:
        for coll in (ch["tables"], ch["figures"]):
            for it in sorted(coll.values(), key=lambda x: _number_key(x["number"])):
                items.append((f"{pick(it['label'], L)} {pick(it['caption'], L)}", [x for x in it["runs"] if x in runs]))
    used = sorted({x for _, ids in items for x in ids})
    if not used:
        return {}
    number = {run_id: i + 1 for i, run_id in enumerate(used)}
    groups: dict[tuple, list[str]] = {}
    files_of: dict[str, list[tuple[str, str | None, str | None]]] = {}
    for run_id in used:
        info = runs[run_id]
        files = [(s["file"], s["sha256"], s.get("checked_against")) for s in info["sources"]]
        if info.get("run_toml_sha256") and not any(f == "run.toml" for f, _, _ in files):
            files.append(("run.toml", info["run_toml_sha256"], None))
        files_of[run_id] = files
        key = (tuple(files), info.get("citation")) if files and info["origin"] == "transcribed" else (run_id,)
        groups.setdefault(key, []).append(run_id)
    # one row per run (or per group of transcribed runs sharing their files), its files flowing in the row, the
    # rows of a condition (the runs' directory but the rep=N part) under its heading
    conditions: dict[str, list[dict]] = {}
    for ids in groups.values():
        info = runs[ids[0]]
        if len(ids) == 1 and "/rep=" in ids[0]:
            condition, rep = ids[0].rsplit("/", 1)
        else:
            condition, rep = "", ", ".join(ids)
        if info["origin"] == "transcribed" and info.get("citation"):
            rep += f" — {ui(L, 'citation')}: {info['citation']}"
        conditions.setdefault(condition, []).append({
            "numbers": run_ranges([number[x] for x in ids]), "run": soft_breaks(rep, 12),
            "files": [{"name": soft_breaks(f, 16), "sha": (sha or "—")[:SHA_SHOWN],
                       "checked": ui(L, "pdf_source_checked", against) if against else None}
                      for f, sha, against in files_of[ids[0]]]})
    shown = [{"condition": soft_breaks(c, 12), "runs": rows} for c, rows in conditions.items()]
    before, _, after = ui(L, "pdf_sources_intro", SHA_SHOWN, where="\x00").partition("\x00")
    return {"url": page.site_link(f"{L}/reports/{d['id']}/sources/"), "intro": (before, after), "sha_shown": SHA_SHOWN,
            "items": [[label, ui(L, "n_runs", len(ids)), run_ranges([number[x] for x in ids])] for label, ids in items],
            "groups": shown}
