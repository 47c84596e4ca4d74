"""What a block says, decided once: a typed view per block and language, placed by both outputs.

A view holds every text a reader sees in a block (a table's caption, headers, cells with their marks in
order, the lines under a cell, the legend in order, the notes) and the classes the site styles them by.
``render.hugo`` writes the views into the page data (``model.encode``: one encoder for every record, no short keys)
and ``layouts/shortcodes/`` places them; the typst templates (``render/blocks.py``) place the same views.
Neither template decides what a cell says, which marks it carries, or which lines the legend holds.
``tests/test_block_contract.py`` holds the two outputs to the same texts.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from kansoku.model import (
    VERDICT_KINDS,
    VERDICT_MARKS,
    BoundValue,
    Cell,
    Chapter,
    CommandBlock,
    Comparison,
    ComputedReport,
    Figure,
    Table,
    is_local_address,
)
from kansoku.render import publish
from kansoku.render.page_data import page_path
from kansoku.render.typst_markup import pick, ui
from kansoku.words import LANGS

# The order of what a chapter's page places around its prose: both the site (layouts/_default/single.html)
# and the PDF (render/typst.py) walk it. The machines come first: set after the prose, the small block was
# left alone on a PDF page.
CHAPTER_LAYOUT = ("machines", "prose", "missing_figures")

MINUS_SIGN = "▲"  # a minus in Japanese printing (and in transcribed cells): explained wherever a cell uses it
SIDE = re.compile(r"(\S+) (\[[^\]]*\]) (n = \d+)")  # a compared side as printed: median [min–max] n = 5


@dataclass
class Mark:
    """A mark beside a value (†, !, a verdict's symbol), readable in black and white."""

    kind: str                    # transcribed | mismatch | a verdict kind (model.VERDICT_KINDS)
    symbol: str                  # as printed: "†", "!", a verdict's (model.VERDICT_MARKS)
    label: str                   # what it means, in words (the site's aria-label, the legend line)
    css: str                     # the site's class: "mark-transcribed", "mark-verdict worse", …
    title: str | None = None     # its own hover, where the cell's hover speaks of something else


@dataclass
class CellLine:
    """A line under a cell's value: the runs' range, a verdict's p and counts."""

    text: str
    css: str                     # the site's classes ("cell-range", "cell-range cell-spread")
    on_demand: bool              # shown only when the reader asks for the spread (the site's switch): not printed


@dataclass
class RunLink:
    """A run behind a compared side (the site links its page)."""

    id: str
    anchor: str                  # the run's anchor on the data-sources page and its run page's name
    rep: str                     # its repetition as shown ("·" without one)


@dataclass
class ViewCell:
    """A body cell as read: its text, marks, note marks and lines under it."""

    text: str
    header: bool = False                         # a row label (the stub)
    css: str = ""                                # the site's classes
    marks: list[Mark] = field(default_factory=list)   # in the order printed after the text
    notes: list[str] = field(default_factory=list)    # cell notes' marks ("*1"), printed "(*1)"
    lines: list[CellLine] = field(default_factory=list)
    title: str | None = None                     # the hover: the runs' spread, or the verdict with p and n
    baseline: str | None = None                  # "(baseline)" after a row label of the baseline row
    fill: str | None = None                      # the PDF's fill: baseline | better | worse | mismatch
    rep: str | None = None                       # the representative run (the site's data-rep)
    boxes: list[str] | None = None               # pieces the PDF never breaks inside (a compared side)
    runs: list[RunLink] = field(default_factory=list)  # a compared side's runs (the site links them)


@dataclass
class ViewHeader:
    """A header cell: a spanner or a leaf column's label, with how its values are made."""

    text: str
    colspan: int = 1
    rowspan: int = 1
    css: str = ""
    baseline: str | None = None                  # "(baseline)" after a spanner of the baseline value
    aggregation: str | None = None               # "median", under the label


@dataclass
class RowGroup:
    """A label over the rows that follow it (a row factor's value, a compared metric)."""

    text: str
    note: str | None = None                      # after the label: a metric's direction ("higher is better")
    note_css: str = ""
    css: str = "row-group"


@dataclass
class ViewRow:
    cells: list[ViewCell]
    group: RowGroup | None = None                # a group that starts at this row
    metric: str | None = None                    # a compared row's metric and verdict (the site's data- keys)
    verdict: str | None = None


@dataclass
class LegendLine:
    """A line of the legend under a table: a symbol and what it means."""

    kind: str                                    # a Mark's kind, or "minus" (▲)
    symbol: str
    text: str
    css: str                                     # the symbol's class (a superscript), or the line's ("sign-legend")
    superscript: bool = True


@dataclass
class CellNoteLine:
    mark: str                                    # "*1"
    text: str


@dataclass
class Link:
    text: str
    href: str                                    # a site path ("/csv/…"), made relative by the site


@dataclass
class TableView:
    """A numbered table ({{< tbl >}}) in one language."""

    id: str
    label: str                                   # "表 2.1" / "Table 2.1"
    caption: str
    kinds: list[str]                             # each leaf column's kind ("factor" for the row labels)
    header: list[list[ViewHeader]]               # header rows, top first
    rows: list[ViewRow]
    footnote: str | None
    method: str | None                           # how its verdicts were decided
    cell_notes: list[CellNoteLine]
    legend: list[LegendLine]                     # in order: ▲, †, !, then the verdicts in VERDICT_KINDS order
    methods_link: Link | None                    # where the method, its level and runs are (the methods page)
    spread_switch: str | None                    # the site's switch for the lines shown on demand, when any
    csv: list[Link]


@dataclass
class Pair:
    name: str
    value: str


@dataclass
class EnvironmentRow:
    role: str | None
    key: str
    a: str
    b: str


@dataclass
class CompareView:
    """A [[compare]] ({{< compare >}}) in one language: selections A and B, condition by condition."""

    id: str
    sides: list[Pair]                            # ("A (baseline)", its label), ("B", its label)
    common: str | None                           # the factors and values every run shares, in words
    none: str | None                             # said when nothing could be compared
    header: list[ViewHeader]
    rows: list[ViewRow]
    kinds: list[str]
    environment_title: str
    environment_head: list[ViewHeader]
    environment: list[EnvironmentRow]            # what the sides' runs recorded differently
    environment_none: str | None
    footnote: str | None
    method: str
    not_compared: str | None
    legend: list[LegendLine]
    csv: list[Link]
    command_title: str
    command: str                                 # the same comparison as tools/compare arguments
    command_lines: list[str]                     # the command as printed (command_lines)


# -- marks and legends, written once ------------------------------------------------------------------------

def verdict_word(kind: str, lang: str) -> str:
    return ui(lang, "verdict_" + kind.replace("-", "_"))


def mark(kind: str, lang: str) -> Mark:
    if kind == "transcribed":
        return Mark(kind, "†", ui(lang, "transcribed"), "mark-transcribed")
    if kind == "mismatch":
        return Mark(kind, "!", ui(lang, "mismatch"), "mark-mismatch", title=ui(lang, "mismatch"))
    return Mark(kind, VERDICT_MARKS[kind], verdict_word(kind, lang), f"mark-verdict {kind}")


def legend(kinds: set[str], texts: list[str], lang: str) -> list[LegendLine]:
    """The legend of the marks a block uses, in one order: ▲ (when a text uses it), †, !, the verdicts."""
    out = []
    if any(MINUS_SIGN in t for t in texts):
        out.append(LegendLine("minus", MINUS_SIGN, ui(lang, "sign_down"), "sign-legend", superscript=False))
    for kind in ("transcribed", "mismatch", *VERDICT_KINDS):
        if kind in kinds:
            m = mark(kind, lang)
            out.append(LegendLine(m.kind, m.symbol, m.label, m.css))
    return out


def p_text(p: float) -> str:
    return f"{p:.3f}"


def verdict_detail(v: dict[str, Any]) -> str:
    """A verdict's p and counts: "p = 0.100 · n = 3 / 3"."""
    return (f"p = {p_text(v['p'])} · " if v.get("p") is not None else "") + "n = " + " / ".join(map(str, v["n"]))


# -- tables -------------------------------------------------------------------------------------------------

def _body_cell(t: Table, c: Cell, col_baseline: bool, lang: str) -> ViewCell:
    text = pick(c.text, lang)
    if c.kind == "factor":
        return ViewCell(text, header=True, css=" ".join(c.flags),
                        baseline=f"({ui(lang, 'baseline')})" if "baseline" in c.flags else None,
                        fill="baseline" if "baseline" in c.flags else None)
    cell = ViewCell(text, css=" ".join(["num", c.kind, *c.flags] + (["baseline"] if col_baseline else [])),
                    notes=[n.mark for n in c.notes], rep=c.representative, fill="baseline" if col_baseline else None)
    if c.verdict:  # the noise-aware verdict: a symbol for black-and-white print, a fill
        kind = c.verdict["kind"]
        cell.marks.append(mark(kind, lang))
        if kind in ("better", "worse"):
            cell.fill = kind
    for flag in ("transcribed", "mismatch"):
        if flag in c.flags:
            cell.marks.append(mark(flag, lang))
    if "mismatch" in c.flags:
        cell.fill = "mismatch"
    if c.spread is not None:
        cell.title = pick(c.spread, lang)
    elif c.verdict:
        cell.title = f"{verdict_word(c.verdict['kind'], lang)} · {verdict_detail(c.verdict)}"
    elif "transcribed" in c.flags:
        cell.title = ui(lang, "transcribed")
    if c.range is not None:
        shown = t.print_spread
        cell.lines.append(CellLine(f"[{c.range}]" + ("" if shown else f" n = {len(c.runs)}"),
                                   "cell-range" if shown else "cell-range cell-spread", on_demand=not shown))
    if c.verdict:
        cell.lines.append(CellLine(verdict_detail(c.verdict), "cell-range cell-spread", on_demand=True))
    return cell


def _methods_link(rep: ComputedReport, lang: str) -> Link | None:
    page = next((p for p in rep.pages if p.kind == "methods" and p.in_pdf), None)
    if page is None:
        return None
    return Link(ui(lang, "see_methods", pick(page.title, lang)), "/" + page_path(rep.id, page.id, lang))


def table_view(rep: ComputedReport, t: Table, lang: str) -> TableView:
    """A numbered table as read in ``lang``: cells with their marks, the legend of the marks it uses, notes."""
    header = [[ViewHeader(pick(h.text, lang), h.colspan, h.rowspan,
                          " ".join(x for x in (h.kind or "", "baseline" if h.baseline else "") if x),
                          f"({ui(lang, 'baseline')})" if h.baseline and h.colspan > 1 else None,
                          pick(h.aggregation, lang) if h.aggregation else None) for h in hrow] for hrow in t.header]
    groups = {g.first_row: RowGroup(pick(g.label, lang)) for g in t.row_groups}
    rows = [ViewRow([_body_cell(t, c, bool(i < len(t.columns) and t.columns[i].baseline), lang)
                     for i, c in enumerate(row)], groups.get(r)) for r, row in enumerate(t.rows)]
    kinds = {m.kind for row in rows for c in row.cells for m in c.marks} | set(t.marks)
    footnote = pick(t.footnote, lang) if t.footnote else None
    texts = [c.text for row in rows for c in row.cells] + ([footnote] if footnote else [])
    csv = [Link(ui(lang, "download_csv"), f"/csv/{rep.id}/{t.id}.{lang}.csv"),
           Link(ui(lang, "download_runs_csv"), f"/csv/{rep.id}/{t.id}.runs.{lang}.csv")]
    return TableView(
        id=t.id, label=pick(t.label, lang), caption=pick(t.caption, lang), kinds=[c.kind for c in t.columns],
        header=header, rows=rows, footnote=footnote, method=pick(t.method, lang) if t.method else None,
        cell_notes=[CellNoteLine(n.mark, pick(n.text, lang)) for n in t.notes], legend=legend(kinds, texts, lang),
        methods_link=_methods_link(rep, lang) if t.method else None,
        # a table that prints its ranges has no switch: what it keeps on demand (p and n) is in the hovers
        spread_switch=ui(lang, "spread_toggle") if not t.print_spread and any(
            x.on_demand for row in rows for c in row.cells for x in c.lines) else None,
        csv=csv)


# -- comparisons --------------------------------------------------------------------------------------------

DIRECTIONS = {"higher_is_better": "higher", "lower_is_better": "lower", "neither": "neither", "unknown": "unknown"}


def compare_view(rep: ComputedReport, c: Comparison, lang: str) -> CompareView:
    """A [[compare]] as read in ``lang``: one row per metric and condition, the change with its verdict."""
    L = lang
    factors = [pick(f, L) for f in c.factors]
    header = [ViewHeader(" / ".join(factors) if factors else ui(L, "compare_metric")),
              ViewHeader(ui(L, "compare_change")), ViewHeader(ui(L, "compare_interval_header")),
              ViewHeader(f"A: {ui(L, 'compare_spread_header')}", css="baseline"),
              ViewHeader(f"B: {ui(L, 'compare_spread_header')}")]

    def side(s) -> ViewCell:
        text = pick(s.text, L)
        m = SIDE.fullmatch(text)
        runs = []
        for run_id in s.runs:
            info = rep.runs.get(run_id)
            runs.append(RunLink(run_id, info.anchor if info else "", (info.factors.get("rep") if info else None) or "·"))
        return ViewCell(text, css="num side", boxes=list(m.groups()) if m else None, runs=runs)

    rows, metric = [], None
    for r in c.rows:
        group = None
        if r.metric != metric:
            metric, d = r.metric, DIRECTIONS[r.direction]
            group = RowGroup(pick(r.metric_label, L), f"({ui(L, f'direction_{d}')})", f"direction direction-{d}",
                             "row-group metric-group")
        marks = ([mark(r.flag, L)] if r.flag else []) + ([mark("transcribed", L)] if r.transcribed else [])
        detail = verdict_detail({"p": r.p_value, "n": [r.a.n, r.b.n]})
        change = ViewCell(pick(r.change, L), css=" ".join(["num compare", *([r.flag] if r.flag else [])]),
                          marks=marks, title=f"{pick(r.verdict_text, L)} · {detail}",
                          fill=r.flag if r.flag in ("better", "worse") else None)
        label = " / ".join(pick(v, L) for v in r.values) if r.values else pick(r.metric_label, L)
        rows.append(ViewRow([ViewCell(label, header=True), change, ViewCell(pick(r.interval, L), css="num"),
                             side(r.a), side(r.b)], group, r.metric, r.verdict))
    kinds = {m.kind for row in rows for x in row.cells for m in x.marks} | set(c.marks)
    nc = c.not_compared
    return CompareView(
        id=c.id, sides=[Pair(f"A ({ui(L, 'baseline')})", pick(c.a_label, L)), Pair("B", pick(c.b_label, L))],
        common=ui(L, "common_factors", ui(L, "list_separator").join(
            ui(L, "factor_value", name=pick(n, L), value=pick(v, L)) for n, v in c.common)) if c.common else None,
        none=None if rows else ui(L, "compare_none"), header=header, rows=rows,
        kinds=["factor", "compare", "value", "value", "value"],
        environment_title=ui(L, "compare_environment"),
        environment_head=[ViewHeader(ui(L, "compare_env_key")), ViewHeader("A", css="baseline"), ViewHeader("B")],
        environment=[EnvironmentRow(f"[{pick(e.role, L)}]" if e.role else None, e.key, " | ".join(e.a),
                                    " | ".join(e.b)) for e in c.environment],
        environment_none=None if c.environment else ui(L, "compare_environment_none"),
        footnote=pick(c.footnote, L) if c.footnote else None, method=pick(c.method, L),
        not_compared=ui(L, "compare_not_compared", a=nc.get("a", 0), b=nc.get("b", 0))
        if nc.get("a") or nc.get("b") else None,
        legend=legend(kinds & set(VERDICT_KINDS), [x.text for row in rows for x in row.cells[1:2]], L),
        csv=[Link(ui(L, "download_csv"), f"/csv/{rep.id}/{c.page}.csv")],
        command_title=ui(L, "compare_same_as"), command=c.selections, command_lines=command_lines(c.selections))


# -- figures ------------------------------------------------------------------------------------------------

@dataclass
class Note:
    """A line under a figure: its footnote, where transcribed values come from, a citation."""

    text: str
    css: str                                     # the site's class of its paragraph
    mark: Mark | None = None                     # printed before the text (†)


@dataclass
class FigureView:
    """A numbered figure ({{< fig >}}) in one language: what is said around its chart."""

    id: str
    label: str                                   # "図 3.1" / "Figure 3.1"
    caption: str
    notes: list[Note]                            # in order: no data, footnote, transcribed, citations
    downloads: list[Link]                        # its plotted data, or the kind's own files (site only)


def figure_view(rep: ComputedReport, f: Figure, lang: str, traces: int,
                downloads: list[tuple[str, str]] | None = None) -> FigureView:
    """A figure as read in ``lang``; ``traces``: how many its drawing has (none: said in a note);
    ``downloads``: (site path, label) of the kind's own files, else the plotted data's CSV."""
    L = lang
    notes = [Note(ui(L, "no_chart_data"), "footnote chart-empty")] if not traces else []
    if f.footnote:
        notes.append(Note(pick(f.footnote, L), "footnote"))
    if f.transcribed:
        notes.append(Note(ui(L, "figure_transcribed"), "footnote figure-transcribed", mark("transcribed", L)))
    notes += [Note(f"{ui(L, 'citation')}: {c}", "footnote citation") for c in f.citations]
    links = ([Link(label, href) for href, label in downloads] if downloads is not None
             else [Link(ui(L, "download_csv"), f"/csv/{rep.id}/figure-{f.id}.{L}.csv")])
    return FigureView(id=f.id, label=pick(f.label, L), caption=pick(f.caption, L), notes=notes, downloads=links)


# -- a chapter's machines and its figures not drawn ---------------------------------------------------------

@dataclass
class MachinesView:
    """Which machines a chapter's runs ran on (report/machines.py chapter_machines), in one language."""

    heading: str
    summary: str
    emphasis: bool                               # the summary said strongly: the runs span several machines
    unknown: str | None                          # runs without a record of their machine
    head: list[str]                              # column labels
    rows: list[list[str]]                        # one a machine (and role): its name first
    source: str                                  # where the block's facts come from


def machines_view(ch: Chapter, lang: str) -> MachinesView | None:
    """A chapter's machines block as read in ``lang``; None when its runs recorded no machine."""
    L, m = lang, ch.machines or {}
    if not m.get("machines"):
        return None
    roles = bool(m.get("with_roles"))
    head = [ui(L, "machines_col_machine")] + ([ui(L, "machines_col_role")] if roles else []) + [
        ui(L, f"machines_col_{k}") for k in ("cpu", "memory", "os", "virtualization", "storage", "runs")]
    rows = [[pick(x["name"], L)] + ([pick(x.get("role"), L)] if roles else [])
            + [pick(x["cpu"], L), pick(x["memory"], L), pick(x["os"], L), pick(x.get("virtualization") or "—", L),
               pick(x["storage"], L), str(x["runs"])] for x in m["machines"]]
    return MachinesView(heading=ui(L, "machines_heading"), summary=pick(m.get("summary"), L),
                        emphasis=bool(m.get("span")),
                        unknown=ui(L, "machines_unknown", m["unknown"]) if m.get("unknown") else None,
                        head=head, rows=rows, source=ui(L, "machines_source"))


@dataclass
class MissingFigureLine:
    label: str
    caption: str
    reason: str                                  # why it is not drawn
    note: str | None                             # what exactly is missing, as said after the reason


@dataclass
class MissingFiguresView:
    """The figures of a chapter's original that are not drawn, with the reason, in one language."""

    title: str
    intro: str
    items: list[MissingFigureLine]


def missing_figures_view(ch: Chapter, lang: str) -> MissingFiguresView | None:
    """The list of a chapter's figures not drawn as read in ``lang``; None when it draws them all."""
    L = lang
    if not ch.missing_figures:
        return None
    return MissingFiguresView(
        title=ui(L, "figure_missing_title"), intro=ui(L, "figure_missing_intro"),
        items=[MissingFigureLine(pick(m.label, L), pick(m.caption, L), pick(m.reason, L),
                                 ui(L, "figure_missing_note", pick(m.note, L)) if m.note else None)
               for m in ch.missing_figures])


# the views of the blocks a chapter's page places besides its prose, by their names in CHAPTER_LAYOUT
CHAPTER_VIEWS = {"machines": machines_view, "missing_figures": missing_figures_view}


# -- how a chapter's runs were run ({{< commands >}}) -------------------------------------------------------

@dataclass
class ScriptView:
    """A pgbench script a command ran, as kept with its runs."""

    label: str                                   # "Script scripts/read.sql"
    kept: str | None                             # how many runs kept this copy, and its digest's start
    sha256: str | None                           # the whole digest (the site's hover)
    text: str | None                             # the script; None: no run kept a copy
    missing: str                                 # said when no run kept a copy


@dataclass
class ValueList:
    """Values listed under a command: those that vary between its runs, options only some runs used."""

    label: str
    values: list[str]


# a command line as both outputs print it: the PDF's text at 0.72 em of mono in a shaded block, the site's
# prose column, each with room for the " \\" that continues it (a full-width character counts two columns)
COMMAND_COLUMNS = 96
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


def command_units(command: str) -> list[str]:
    """A command's units of one argument each, between which a line may break: an option stays with its value
    ("-f script.sql") and a joiner ("&&", "|") with what it follows; a quoted argument is whole."""
    units: list[str] = []
    for w in shell_words(command):
        if units and (w in SHELL_JOINERS or (units[-1].startswith("-") and " " not in units[-1]
                                              and "=" not in units[-1] and not w.startswith("-")
                                              and units[-1] not in SHELL_JOINERS)):
            units[-1] += " " + w
        else:
            units.append(w)
    return units


def command_lines(command: str, columns: int = COMMAND_COLUMNS) -> list[str]:
    """A command as printed: lines that break only between its units (``command_units``); every line but the
    last ends with " \\" (the shell's continuation), so that the lines copied from the PDF or the site are the
    command."""
    lines = [""]
    for u in command_units(command):
        if lines[-1] and _columns(lines[-1] + " " + u + " \\") > columns:
            lines[-1] += " \\"
            lines.append(u)
        else:
            lines[-1] = (lines[-1] + " " + u) if lines[-1] else u
    return lines


@dataclass
class CommandView:
    """How a group of a chapter's runs was run (model.CommandBlock) in one language."""

    head: str                                    # "pgbench read.sql: 12 runs"
    setup_label: str
    setup: list[str]                             # each setup command, "$ " before it
    command_label: str
    command: str                                 # the benchmark command, "$ " before it
    setup_lines: list[list[str]]                 # each setup command as printed (command_lines)
    command_lines: list[str]                     # the benchmark command as printed
    lists: list[ValueList]                       # the values that vary, the options some runs used (when any)
    scripts: list[ScriptView]


@dataclass
class CommandsView:
    """A chapter's {{< commands >}} block in one language."""

    blocks: list[CommandView]
    none: str | None                             # said when the chapter's runs recorded no command
    source: str | None                           # where the commands come from (run.toml), under the blocks


def _command_view(b: CommandBlock, lang: str) -> CommandView:
    L = lang
    name = ", ".join(s.name for s in b.scripts) if b.scripts else b.program
    lists = [ValueList(ui(L, key), [pick(x, L) for x in xs])
             for key, xs in (("cmd_varying", b.varying), ("cmd_optional", b.optional)) if xs]
    scripts = [ScriptView(ui(L, "cmd_script", name=s.name),
                          f"({ui(L, 'cmd_script_runs', runs=s.runs, sha=s.sha256[:12])})" if s.sha256 else None,
                          s.sha256, s.text, ui(L, "cmd_script_missing")) for s in b.scripts]
    setup = [f"$ {pick(c, L)}" for c in b.setup or []]
    command = f"$ {pick(b.command, L)}"
    return CommandView(head=ui(L, "cmd_block", name=name, runs=b.runs), setup_label=ui(L, "cmd_setup"),
                       setup=setup, command_label=ui(L, "cmd_command", runs=b.runs), command=command,
                       setup_lines=[command_lines(c) for c in setup], command_lines=command_lines(command),
                       lists=lists, scripts=scripts)


def commands_view(ch: Chapter, lang: str) -> CommandsView:
    """How a chapter's runs were run, as read in ``lang``."""
    if not ch.commands:
        return CommandsView([], ui(lang, "cmd_none"), None)
    return CommandsView([_command_view(b, lang) for b in ch.commands], None, ui(lang, "cmd_source"))


# -- the report's generated pages: authors, methods; the cover's key results --------------------------------

@dataclass
class AuthorsView:
    """Who wrote which chapter ({{< authors >}}) in one language."""

    head: list[str]                              # name, affiliation, chapters
    rows: list[list[str]]                        # one an author
    none: str | None                             # said when the report names no author


def authors_view(rep: ComputedReport, lang: str) -> AuthorsView:
    L = lang
    rows = [[pick(a.name, L), pick(a.affiliation, L), ", ".join(
        (f"{c['number']}. " if c.get("number") is not None else "") + pick(c.get("title"), L) for c in a.chapters)]
        for a in rep.authors]
    return AuthorsView([ui(L, "author_name"), ui(L, "affiliation"), ui(L, "chapters")], rows,
                       None if rows else ui(L, "no_authors"))


@dataclass
class MethodLine:
    id: str                                      # the section's anchor ("method-<id>")
    title: str
    text: str


@dataclass
class MethodsView:
    """The generated methods page ({{< methods >}}): how values were aggregated and verdicts decided."""

    notes: list[MethodLine]
    none: str | None                             # said when the report has no method to explain


def methods_view(rep: ComputedReport, lang: str) -> MethodsView:
    notes = [MethodLine(n.id, pick(n.title, lang), pick(n.text, lang)) for n in rep.methods]
    return MethodsView(notes, None if notes else ui(lang, "methods_none"))


@dataclass
class ValueView:
    """A number or a table's or figure's label in the prose ({{< val >}}, {{< ref >}}), as printed."""

    text: str
    title: str                                   # what it is (the site's hover)
    anchor: str                                  # where it comes from on its chapter's page
    chapter: str | None                          # the chapter whose page holds the anchor


def value_view(v: BoundValue, lang: str) -> ValueView:
    return ValueView(pick(v.text, lang), pick(v.title, lang), v.anchor, v.chapter)


def values_view(rep: ComputedReport, lang: str) -> dict[str, ValueView]:
    """Every value and reference of the prose, by its shortcode's key (report/values.py)."""
    return {key: value_view(v, lang) for key, v in rep.values.items()}


@dataclass
class FindingLine:
    """A key result on the cover: the chapter, what it is, its value, comparison and verdict, its table."""

    chapter: str
    label: str
    value: ValueView                             # its chapter's page and anchor: the link to its table
    compare: str | None
    verdict: str | None
    mark: str | None                             # the verdict's symbol
    table: str                                   # "Table 6.1"


@dataclass
class FindingsView:
    title: str
    items: list[FindingLine]


def findings_view(rep: ComputedReport, lang: str) -> FindingsView | None:
    """The chapters' key results on the cover, as read in ``lang``; None when the report names none."""
    L = lang
    if not rep.findings:
        return None
    items = [FindingLine(pick(f.chapter, L), pick(f.label, L), ValueView(
        pick(f.value.text, L), pick(f.value.title, L), f.value.anchor, f.chapter_id),
        pick(f.compare.text, L) if f.compare else None, pick(f.verdict, L) if f.verdict else None,
        VERDICT_MARKS.get((f.verdict_kind or "").replace("_", "-")) if f.verdict else None, pick(f.table, L))
        for f in rep.findings]
    return FindingsView(ui(L, "findings_title"), items)



# -- the environment appendix ({{< environment >}}) ---------------------------------------------------------

@dataclass
class EnvValue:
    """A value of the environment appendix, with the runs it holds for when they differ."""

    text: str
    note: str | None = None                      # after it, in parentheses: "(3 runs)", "(checksums on, 3 runs)"


@dataclass
class EnvRow:
    label: str
    cells: list[list[EnvValue]]                  # one a column: its values, one a line


@dataclass
class EnvHead:
    """A column of machines or of settings' configurations: its name (when any) over its runs."""

    id: str | None
    name: str | None
    runs: str                                    # "checksums on, 3 runs"


@dataclass
class TranscribedEnvironment:
    source: str                                  # the cited report
    rows: list[EnvRow]                           # what it states: label, value


@dataclass
class EnvironmentView:
    """The test-environment appendix in one language: what the cited reports state for transcribed runs, then
    the measured runs' machines, tool versions and PostgreSQL settings."""

    transcribed_title: str
    transcribed_intro: str
    transcribed: list[TranscribedEnvironment]
    transcribed_without: str | None
    none: str | None                             # said when no measured run is in the report
    source: str                                  # how many runs the appendix comes from
    hardware_title: str
    machines: list[EnvHead]
    machine_rows: list[EnvRow]
    software_title: str
    versions_head: list[str]
    versions: list[EnvRow]
    settings_title: str
    settings_kind: str                           # which settings are listed
    settings_none: str | None
    settings_head: list[str]
    settings: list[EnvRow]
    varying_title: str
    configs: list[EnvHead]                       # the configurations the varying settings are shown for
    varying: list[EnvRow]
    without_server: str | None


def environment_view(rep: ComputedReport, lang: str) -> EnvironmentView:
    """The environment appendix as read in ``lang`` (report/environment.py computed it)."""
    L, env = lang, rep.environment

    def n_runs(n: int) -> str:
        return ui(L, "n_runs", n)

    def where(d: dict) -> str:  # the factors that single out a group, in the reader's words (never key=value)
        return pick(d.get("where_text"), L)

    def values(vs: list[dict], with_where: bool) -> list[EnvValue]:
        multi = len(vs) > 1
        return [EnvValue(x["value"], ((f"{where(x)}, " if with_where and where(x) else "") + n_runs(x["runs"]))
                         if multi else None) for x in vs]

    transcribed = [TranscribedEnvironment(pick(e["source"], L), [EnvRow(pick(f["label"], L), [[EnvValue(
        pick(f["value"], L))]]) for f in e["fields"]]) for e in env.transcribed]
    ns = env.settings_without_server
    return EnvironmentView(
        transcribed_title=ui(L, "env_transcribed"), transcribed_intro=ui(L, "env_transcribed_intro"),
        transcribed=transcribed,
        transcribed_without=ui(L, "env_transcribed_without", env.transcribed_without)
        if env.transcribed and env.transcribed_without else None,
        none=None if env.runs else ui(L, "env_none_measured" if env.transcribed else "env_none"),
        source=ui(L, "env_source", env.runs) + (f" {ui(L, 'env_without_capture', env.without_capture)}"
                                                if env.without_capture else ""),
        hardware_title=ui(L, "env_hardware"),
        machines=[EnvHead(m.get("id"), pick(m["name"], L) if m.get("name") else None,
                          (f"{where(m)}, " if where(m) else "") + n_runs(m["runs"])) for m in env.machines],
        machine_rows=[EnvRow(pick(label, L), [[EnvValue(pick(m["values"][i], L))] for m in env.machines])
                      for i, label in enumerate(env.machine_fields)],
        software_title=ui(L, "env_software"), versions_head=[ui(L, "env_tool"), ui(L, "env_version")],
        versions=[EnvRow(v["tool"], [values(v["values"], False)]) for v in env.versions],
        settings_title=ui(L, "env_settings"),
        settings_kind=ui(L, "env_settings_captured" if env.settings_kind == "captured" else "env_settings_non_default"),
        settings_none=None if env.settings or env.settings_varying else ui(L, "env_settings_none"),
        settings_head=[ui(L, "env_parameter"), ui(L, "env_value")],
        settings=[EnvRow(s["name"], [values(s["values"], True)]) for s in env.settings],
        varying_title=ui(L, "env_settings_varying"),
        configs=[EnvHead(None, where(c) or None, n_runs(c["runs"])) for c in env.settings_configs],
        varying=[EnvRow(v["name"], [[EnvValue(x)] for x in v["values"]]) for v in env.settings_varying],
        without_server=ui(L, "env_without_server", n_runs(ns["runs"]) + (f" ({where(ns)})" if where(ns) else ""))
        if ns else None)


# the views of the report's own blocks (not a chapter's), by their block names
REPORT_VIEWS = {"authors": authors_view, "methods": methods_view, "findings": findings_view, "values": values_view,
                "environment": environment_view}


# -- the PDF's data-sources appendix ------------------------------------------------------------------------

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


@dataclass
class ManifestView:
    """The one list of a report's published raw files with their SHA-256 (render/publish.py ``manifest``)."""

    path: str                                    # where it is below the site root (the site's link)
    address: str                                 # its address in the web edition, as printed (site_address)
    intro: str                                   # how many files it lists, and in which form
    digest_label: str
    sha256: str                                  # the digest of the list itself
    check: str                                   # how the list checks downloaded files, then the command
    command: str


@dataclass
class SourcesView:
    """The data-sources summary in one language, the same on the site's sources page and in the PDF's
    appendix: per table and figure its runs (numbered R1, R2, … once for the whole report), then the runs
    one row per condition with their number of raw files, then the manifest of those files."""

    items_heading: str
    items_header: list[str]
    items: list[list[str]]                       # a table or figure, how many runs, their numbers
    runs_heading: str
    runs_header: list[str]
    runs: list[list[str]]                        # run numbers, the condition's directory, what a reader is
                                                 # told of it (a citation, or ""), how many raw files
    manifest: ManifestView | None                # None: the report publishes no raw file


def site_address(rep: ComputedReport, path: str) -> str:
    """The web edition's address of a site path (the spec's site_url); without a public address (a local build,
    whose front page says so) the path on the site: a local preview's address opens nowhere."""
    base = (rep.site_url or "").rstrip("/")
    return f"{base}/{path.lstrip('/')}" if base and not is_local_address(base) else f"/{path.lstrip('/')}"


def manifest_view(rep: ComputedReport, summary: SourcesSummary, lang: str) -> ManifestView | None:
    """The report's manifest (render/publish.py ``manifest``: one line a file, counted and digested in its
    ``summary``) as read in ``lang``; None when it publishes none."""
    if summary.manifest_sha256 is None:
        return None
    path = f"/{publish.raw_dir(rep.id)}/{publish.MANIFEST}"
    return ManifestView(path, site_address(rep, path),
                        ui(lang, "sources_manifest", summary.manifest_files), ui(lang, "sources_manifest_digest"),
                        summary.manifest_sha256, ui(lang, "sources_manifest_check"),
                        f"sha256sum -c {publish.MANIFEST}")


@dataclass
class SourcesSummary:
    """What the data-sources summary says in every language (:func:`sources_summary`): each table and figure's
    runs, and one row per condition."""

    items: list[tuple[Any, list[str]]]           # a table or figure, its runs in the report
    number: dict[str, int]                       # run id -> its number (R1, R2, …)
    rows: dict[tuple[str, str | None], dict]     # (a condition's directory, its citation) -> numbers, files
    manifest_files: int                          # the files the manifest lists
    manifest_sha256: str | None                  # its digest (None: the report publishes no raw file)


def sources_summary(rep: ComputedReport, manifest: str) -> SourcesSummary | None:
    """The data-sources summary's numbers and its ``manifest``'s (render/publish.py ``manifest``; empty: none
    published), made once for every language (:func:`sources_view` reads it in one): None when no table or
    figure has a run."""
    runs = rep.runs
    items = []
    for ch in rep.chapters:
        for coll in (ch.tables, ch.figures):
            for it in sorted(coll.values(), key=lambda x: _number_key(x.number)):
                items.append((it, [x for x in it.runs if x in runs]))
    used = sorted({x for _, ids in items for x in ids})
    if not used:
        return None
    number = {run_id: i + 1 for i, run_id in enumerate(used)}

    def files_of(info) -> set[str]:
        return {s.file for s in info.sources} | ({"run.toml"} if info.run_toml_sha256 else set())

    def count_of(info) -> int:  # (a measured run's files are its own: counted, not gathered into a set)
        return len(info.sources) + (1 if info.run_toml_sha256 and all(s.file != "run.toml" for s in info.sources)
                                    else 0)

    # one row per condition: a measured condition's repetitions (its directory but the rep=N part), the values
    # transcribed from one published table with one citation (its directory, the files they share counted once)
    rows: dict[tuple[str, str | None], dict] = {}
    for run_id in used:
        info = runs[run_id]
        transcribed = info.origin == "transcribed"
        # (a transcribed run's id is published/<table>/<its factors>: parsers/published.py)
        label = ("/".join(run_id.split("/")[:2]) if transcribed else
                 run_id.rsplit("/", 1)[0] if "/rep=" in run_id else run_id)
        row = rows.setdefault((label, info.citation if transcribed and info.citation else None),
                              {"numbers": [], "files": set(), "own": 0})
        row["numbers"].append(number[run_id])
        if transcribed:
            row["files"] |= files_of(info)
        else:
            row["own"] += count_of(info)
    return SourcesSummary(items, number, rows, manifest.count("\n"),
                          publish.manifest_digest(manifest) if manifest else None)


def sources_view(rep: ComputedReport, lang: str, manifest: str) -> SourcesView | None:
    """The data-sources summary as read in ``lang``, with the report's ``manifest`` (render/publish.py
    ``manifest``; empty: none published); None when no table or figure has a run."""
    return _sources_read(rep, sources_summary(rep, manifest), lang)


def sources_views(rep: ComputedReport, manifest: str) -> dict[str, SourcesView | None]:
    """:func:`sources_view` in every language, its numbers made once."""
    summary = sources_summary(rep, manifest)
    return {lang: _sources_read(rep, summary, lang) for lang in LANGS}


def _sources_read(rep: ComputedReport, summary: SourcesSummary | None, L: str) -> SourcesView | None:
    if summary is None:
        return None
    number = summary.number
    return SourcesView(
        items_heading=ui(L, "sources_items"),
        items_header=[ui(L, "sources_item"), ui(L, "sources_count"), ui(L, "sources_runs")],
        items=[[f"{pick(it.label, L)} {pick(it.caption, L)}", ui(L, "n_runs", len(ids)),
                run_ranges([number[x] for x in ids])] for it, ids in summary.items],
        runs_heading=ui(L, "sources_files"),
        runs_header=[ui(L, "sources_runs"), ui(L, "sources_run"), ui(L, "sources_file_count")],
        runs=[[run_ranges(r["numbers"]), label, f"{ui(L, 'citation')}: {citation}" if citation else "",
               str(len(r["files"]) + r["own"])] for (label, citation), r in summary.rows.items()],
        manifest=manifest_view(rep, summary, L))
