"""A ``[[compare]]`` in the PDF: the site's comparison table (``{{< compare "id" >}}``) as a typst table.

The same rows, words, verdict symbols and fills as the site and as the tables' comparison columns
(``render/typst.py`` VERDICT_MARKS / VERDICT_FILLS, explained under the table); the site's verdict-in-words
column and its run links are left out to fit the page width (a PDF names its runs on the site's sources
page, whose address the PDF prints).
"""

from __future__ import annotations

from kansoku.render.typst import TEMPLATES, UI, VERDICT_FILLS, VERDICT_MARKS, pick, table_cell
from kansoku.report.model import Comparison


def compare_table(c: Comparison, lang: str) -> str:
    ui = UI(lang)
    L = lang
    header = [{"colspan": 1, "rowspan": 1, "text": t} for t in
              [ui("compare_metric")] + [pick(f, L) for f in c.factors]
              + [f"A: {ui('compare_spread_header')}", f"B: {ui('compare_spread_header')}", ui("compare_change"),
                 ui("compare_interval_header")]]
    rows = []
    for r in c.rows:
        change = table_cell(pick(r.change, L).replace(" ", "\u00a0"), fill=VERDICT_FILLS.get(r.flag or ""))
        if r.flag:
            change["marks"].append(f"#super(typographic: false, size: 0.85em)[#strong[{VERDICT_MARKS[r.flag]}]]")
        if r.transcribed:
            change["marks"].append("#super[†]")
        cells = [pick(r.metric_label, L)] + [pick(v, L) for v in r.values] + [
            pick(r.a.text, L).replace(" ", "\u00a0"), pick(r.b.text, L).replace(" ", "\u00a0")]
        rows.append([table_cell(t) for t in cells] + [change, table_cell(pick(r.interval, L))])
    notes = []
    if c.common:
        notes.append({"mark": "", "text": ui("common_factors") + ": " + ", ".join(
            f"{pick(n, L)} = {pick(v, L)}" for n, v in c.common)})
    if c.footnote:
        notes.append({"mark": "", "text": pick(c.footnote, L)})
    for kind in VERDICT_MARKS:
        if kind in c.marks:
            notes.append({"mark": f"#text(weight: \"bold\")[{VERDICT_MARKS[kind]}] ",
                          "text": ui("verdict_" + kind.replace("-", "_"))})
    notes.append({"mark": "", "text": pick(c.method, L)})
    notes.append({"mark": "", "text": f"{ui('compare_same_as')} {c.selections}"})
    n = len(header)
    caption = f"A ({ui('baseline')}): {pick(c.a_label, L)} — B: {pick(c.b_label, L)}"
    if not rows:
        notes.insert(0, {"mark": "", "text": ui("compare_none")})
    return TEMPLATES.get_template("table.typ.j2").render(
        label="", caption=caption, size="8pt" if n <= 9 else "7pt", breakable="true", columns=n,
        aligns=", ".join(["left"] * (1 + len(c.factors)) + ["right"] * 4),
        header=header, rows=rows, notes=notes, groups={})
