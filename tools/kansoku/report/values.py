"""Numbers the prose states through the data: ``{{< val table="id" row="…" metric="…" >}}`` prints a cell of
a table of the same chapter's report as the table prints it, so that the sentence moves with the data (in the
spirit of Evidence's ``<Value>`` and Quarto's inline code; docs/spec.md "Numbers in the prose").

Arguments (all named; Hugo takes named or positional ones, never both):

- ``table``: the table's id; ``row``, ``column``, ``metric``, ``group``: the cell's coordinates, as
  ``cell_notes`` name them (the row's and column's factor values, the metric as the spec names it);
- ``show``: ``value`` (the aggregate, default), ``compare`` (the comparison with the baseline, "72.2 %"),
  ``verdict`` (the comparison's noise-aware verdict in words), ``p`` (its test's p; a dash when there were too few runs for one), ``min`` / ``max``
  (the extremes of the cell's runs), ``n`` (its number of runs);
- ``op`` with ``vs_row`` / ``vs_column`` / ``vs_metric`` / ``vs_group`` (the second cell's coordinates where
  they differ from the first's): ``diff`` (first minus second, at the first's precision), ``ratio`` (first
  over second, "×1.23"), ``change`` (first over second minus one, "+12.3 %").

Each is resolved once per report into a ``BoundValue`` keyed by its arguments (``Shortcode.key``); Hugo's shortcode
(layouts/shortcodes/val.html) and the PDF print it from there. One that names no cell, or more than one, is a
problem of its page with its line.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from kansoku import shortcodes, words
from kansoku.analysis.tables import metric_unit
from kansoku.front_matter import parse_front_matter
from kansoku.model import BoundValue, Cell, Finding, Page, Table
from kansoku.spec.model import LANGS, text
from kansoku.spec.validate import Problem, did_you_mean
from kansoku.values import canon

COORDS = ("row", "column", "metric", "group")
SHOWS = ("value", "compare", "verdict", "p", "min", "max", "n")
OPS = ("diff", "ratio", "change")
KEYS = {"table", "show", "op", *COORDS, *(f"vs_{c}" for c in COORDS)}
NAME = "val"
REF = "ref"                 # {{< ref table="id" >}} / {{< ref figure="id" >}}: an item's label
REF_KINDS = ("table", "figure")


class Unbound(Exception):
    """A ``val`` that names no single cell: the message says what it names and what there is."""


def _decimals(text: str) -> int:
    m = re.search(r"\d\.(\d+)", text)
    return len(m.group(1)) if m else 0


def _cells(table: Table, want: dict[str, str], kind: str) -> list[Cell]:
    return [c for row in table.rows for c in row
            if c.kind == kind and c.coords and all(c.coords.get(k) == v for k, v in want.items())]


def _one(table: Table, want: dict[str, str], kind: str) -> Cell:
    found = _cells(table, want, kind)
    if len(found) == 1:
        return found[0]
    every = [c.coords for row in table.rows for c in row if c.kind == kind and c.coords]
    if not found:
        raise Unbound(f"no {kind} cell of table {table.id!r} is at {want}; its {kind} cells are at "
                      + ", ".join(str(c) for c in every[:6]) + (" …" if len(every) > 6 else ""))
    raise Unbound(f"{len(found)} {kind} cells of table {table.id!r} are at {want} "
                  f"({', '.join(str(c.coords) for c in found[:4])}): name its "
                  + " and ".join(k for k in COORDS if k not in want and any(k in c.coords for c in found)))


def _with_unit(printed: str, unit: str | None) -> str:
    """'3.3' and 'ms' -> '3.3 ms'; a text its format already dressed ('102.02 %', '×1.7') stays as it is."""
    if not unit or printed.endswith(unit) or printed.endswith("%") or printed.startswith("×"):
        return printed
    return f"{printed} {unit}"


def _title(table: Table, cell: Cell, lang: str, what: str | None = None) -> str:
    """What a cell is, in words: its table, its row's label and its column's."""
    row, col = next((r, table.columns[i]) for r in table.rows for i, c in enumerate(r) if c is cell)
    column = col.text[lang] + (f" ({col.aggregation_text[lang]})" if col.aggregation_text else "")
    parts = [f"{table.label[lang]} {table.caption[lang]}", row[0].text[lang], column] + ([what] if what else [])
    return ", ".join(p for p in parts if p)


def _verdict_words(kind: str) -> dict[str, str]:
    """A cell's verdict in words (cells spell the kinds with "-", the words' keys with "_")."""
    return {lang: words.t(lang, "verdict_" + kind.replace("-", "_")) for lang in LANGS}


def _bodies(pages: list[Page]):
    """(language, file, body, line offset) of every prose file of the pages."""
    for page in pages:
        for lang, f in page.files.items():
            if f is None:
                continue
            text = Path(f).read_text(encoding="utf-8").replace("\r\n", "\n")
            _, body = parse_front_matter(text, f)
            yield lang, Path(f), body, text.count("\n", 0, len(text) - len(body))


def resolve(table: Table, sc: shortcodes.Shortcode) -> BoundValue:
    """The value a ``val`` shortcode names in ``table``."""
    args = dict(sc.named)
    unknown = sorted(set(args) - KEYS)
    if unknown:
        raise Unbound(f"unknown argument(s) {unknown}; a value takes {sorted(KEYS)}")
    show = args.get("show", "value")
    if show not in SHOWS:
        raise Unbound(f"show={show!r}: one of {', '.join(SHOWS)}")
    op = args.get("op")
    if op is not None and op not in OPS:
        raise Unbound(f"op={op!r}: one of {', '.join(OPS)}")
    want = {k: canon(args[k]) for k in COORDS if k in args}
    anchor = f"table-{table.id}"
    if op is not None:
        if show != "value":
            raise Unbound("op compares two values: leave show out")
        other = {**want, **{k: canon(args[f"vs_{k}"]) for k in COORDS if f"vs_{k}" in args}}
        if other == want:
            raise Unbound(f"op={op} needs the second cell: vs_row, vs_column, vs_metric or vs_group")
        a, b = _one(table, want, "value"), _one(table, other, "value")
        if a.value is None or b.value is None or (op != "diff" and not b.value):
            raise Unbound(f"op={op}: a cell without a number ({want} or {other})")
        if op == "diff":
            v = a.value - b.value
            printed = {lang: f"{v:.{_decimals(a.text['en'])}f}" for lang in LANGS}
        elif op == "ratio":
            v = a.value / b.value
            printed = {lang: f"×{v:.2f}" for lang in LANGS}
        else:
            v = a.value / b.value - 1
            printed = {lang: words.t(lang, "percent", f"{v * 100:+.1f}".replace("-", "−")) for lang in LANGS}
        return BoundValue(printed,
                          {lang: words.t(lang, f"value_op_{op}", first=_title(table, a, lang),
                                         second=_title(table, b, lang)) for lang in LANGS}, anchor, v)
    if show in ("value", "min", "max", "n"):
        cell = _one(table, want, "value")
        if show == "value":
            return BoundValue(dict(cell.text), {lang: _title(table, cell, lang) for lang in LANGS}, anchor, cell.value)
        runs = list(cell.run_values.values())
        if not runs:
            raise Unbound(f"show={show}: the cell at {want} has no runs of its own")
        d = _decimals(cell.text["en"])
        v: Any = {"min": min(runs), "max": max(runs), "n": len(runs)}[show]
        printed = str(v) if show == "n" else f"{v:.{d}f}"
        return BoundValue({lang: printed for lang in LANGS},
                          {lang: _title(table, cell, lang, words.t(lang, f"value_show_{show}")) for lang in LANGS},
                          anchor, float(v))
    cell = _one(table, want, "compare")
    if show == "compare":
        return BoundValue(dict(cell.text), {lang: _title(table, cell, lang) for lang in LANGS}, anchor, cell.value)
    if not cell.verdict:
        raise Unbound(f"show={show}: the comparison at {want} has no verdict (the baseline itself?)")
    if show == "verdict":
        return BoundValue(_verdict_words(cell.verdict["kind"]),
                          {lang: _title(table, cell, lang) for lang in LANGS}, anchor)
    p = cell.verdict.get("p")
    if p is None:  # too few runs for a test: a dash, and the hover says why (the sentence stays readable)
        return BoundValue({lang: "—" for lang in LANGS},
                          {lang: _title(table, cell, lang, words.t(lang, "verdict_too_few_runs")) for lang in LANGS},
                          anchor)
    return BoundValue({lang: f"{p:.3f}" for lang in LANGS},
                      {lang: _title(table, cell, lang, words.t(lang, "value_show_p")) for lang in LANGS}, anchor, p)


def resolve_ref(items: dict[str, dict[str, Any]], sc: shortcodes.Shortcode) -> BoundValue:
    """The table or figure a ``ref`` shortcode names (``table="id"`` or ``figure="id"``): its label as
    printed ("表 1.2" / "Table 1.2"), its caption as the hover, its anchor on its chapter's page."""
    args = dict(sc.named)
    named = [k for k in REF_KINDS if k in args]
    if sorted(args) != named or len(named) != 1:
        raise Unbound(f"a reference takes one of {' or '.join(f'{k}=' for k in REF_KINDS)} and nothing else")
    kind = named[0]
    item_id = args[kind]
    if item_id not in items[kind]:
        raise Unbound(f"no {kind} {item_id!r} in this report" + did_you_mean(item_id, items[kind]))
    chapter_id, item = items[kind][item_id]
    return BoundValue(dict(item.label), {lang: f"{item.label[lang]} {item.caption[lang]}" for lang in LANGS},
                      f"{kind}-{item_id}", chapter=chapter_id)


def page_values(pages: list[Page], chapters: list) -> tuple[dict[str, BoundValue], list]:
    """Every ``val`` and ``ref`` of the report's prose pages, resolved against its chapters' tables and
    figures, and the problems (spec.validate.Problem: file, line, what is wrong) of those that name no single
    cell or item, keyed by ``Shortcode.value_key``."""
    items: dict[str, dict[str, Any]] = {
        "table": {t.id: (ch.id, t) for ch in chapters for t in ch.tables.values()},
        "figure": {f.id: (ch.id, f) for ch in chapters for f in ch.figures.values()}}
    tables = {i: t for i, (_, t) in items["table"].items()}
    values: dict[str, BoundValue] = {}
    problems: list = []
    for _, f, body, offset in _bodies(pages):
        for sc in shortcodes.parse(body, offset):
            if sc.name not in (NAME, REF) or sc.literal is not None:
                continue
            key = sc.value_key
            if key in values:
                continue
            try:
                if sc.name == REF:
                    values[key] = resolve_ref(items, sc)
                    continue
                table_id = sc.get("table")
                if table_id is None:
                    raise Unbound("name its table: table=\"id\"")
                if table_id not in tables:
                    raise Unbound(f"no table {table_id!r} in this report" + did_you_mean(table_id, tables))
                values[key] = replace(resolve(tables[table_id], sc), chapter=items["table"][table_id][0])
            except Unbound as exc:
                problems.append(Problem(f, sc.line, (), f"{{{{< {sc.source} >}}}}: {exc}"))
    return values, problems


# -- numbers the prose states without the data ---------------------------------------------------------------

# a number as prose writes it: 7481.0, 72.2 %, 1,234, −3.5
LITERAL = re.compile(r"(?<![\w.,/#=-])[-−+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?:\s?[%％])?"
                     r"|(?<![\w.,/#=-])[-−+]?\d+(?:\.\d+)?(?:\s?[%％])?")
# what the prose names by a number rather than states (a table, figure, chapter, section, version or year): the
# words of each language (i18n prose_named_by_number) and these, the same in every language
NAMED_ANYWHERE = r"§|PostgreSQL|FY|pgbench -\w"


def _named_by_number(lang: str) -> re.Pattern:
    return re.compile(rf"(?:{words.t(lang, 'prose_named_by_number')}|{NAMED_ANYWHERE})\s*$", re.I)


SKIPPED = re.compile(r"```.*?```|`[^`\n]*`|<!--.*?-->|\]\([^)]*\)|\{\{[<%].*?[>%]\}\}", re.S)


def _checked_sections(lang: str) -> set[str]:
    return {words.t(lang, "prose_heading_results"), words.t(lang, "prose_heading_discussion")}


def stated_numbers(body: str, lang: str, line_offset: int = 0) -> list[tuple[int, str]]:
    """(line, literal) of every measured-looking number the Results and Discussion sections state as text:
    a decimal, a percentage or an integer of 100 or more (a year 1990–2099 aside), outside code, links'
    targets, comments and shortcodes, and not naming a table, figure, chapter or version."""
    keep = _checked_sections(lang)
    named_by_number = _named_by_number(lang)
    joined = re.compile(rf"\s*[–〜~-]\s*|\s*(?:{words.t(lang, 'prose_number_joiners')}|,)\s*")
    masked = SKIPPED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), body)
    out = []
    section = None
    for i, line in enumerate(masked.split("\n"), start=1):
        h = re.match(r"#{1,2}\s+(.*?)\s*#*\s*$", line)
        if h:
            section = h.group(1).strip()
            continue
        if section not in keep:
            continue
        last_end, last_named = -10, False
        for m in LITERAL.finditer(line):
            lit = m.group(0)
            digits = re.sub(r"[^\d.]", "", lit)
            named = bool(named_by_number.search(line[:m.start()])) or (
                last_named and joined.fullmatch(line[last_end:m.start()]))
            last_end, last_named = m.end(), named
            if named:
                continue
            measured = "." in digits or "%" in lit or "％" in lit or (
                float(digits) >= 100 and not re.fullmatch(r"(19|20)\d\d", digits))
            if measured:
                out.append((line_offset + i, lit.strip()))
    return out


def unbound_numbers(pages: list[Page]) -> list:
    """Problems (file, line) of numbers a measured report's prose states without its data: each should be
    a bound value (``{{< val … >}}``), so that it moves with the data."""
    out = []
    for lang, f, body, offset in _bodies(pages):
        for line, lit in stated_numbers(body, lang, offset):
            out.append(Problem(f, line, (), f"states {lit} as text: a measured number is printed from the data, "
                                            "{{< val table=\"…\" … >}} (docs/spec.md, \"Numbers in the prose\")"))
    return out


# another report's numbering: a fiscal year, a year or a section sign before it in the sentence
OTHER_REPORT = re.compile(r"FY\s?\d{4}|(?<!\d)(?:19|20)\d\d(?!\d)|§")


def _item_label(lang: str, kind: str) -> re.Pattern:
    """"表 1.2" / "Table 1.2" (and "tables 1.2 and 1.3") as the words of i18n print an item's label; group 1:
    the numbers, with the joiners of a list or a range between them."""
    word = words.t(lang, f"{kind}_label", "\0").split("\0")[0].strip()
    joiner = rf"\s*(?:{words.t(lang, 'prose_number_joiners')}|,|[–〜~-])\s*"
    return re.compile(rf"(?<![A-Za-z]){re.escape(word)}s?\s*(\d+\.\d+(?:{joiner}\d+\.\d+)*)", re.I)


def literal_refs(pages: list[Page], report) -> list:
    """Problems (file, line) of tables and figures of this report named by their number as text ("table 1.2"):
    each should be ``{{< ref table="id" >}}``, so that the number follows the report when an item is added.
    A number preceded in its sentence by another report's name (FY2017, a year, §) is that report's."""
    numbered = {(it.kind, it.number): it.id for ch in report.chapters for it in ch.items}
    out = []
    for lang, f, body, offset in _bodies(pages):
        masked = SKIPPED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), body)
        for i, line in enumerate(masked.split("\n"), start=1):
            for kind in REF_KINDS:
                for m in _item_label(lang, kind).finditer(line):
                    sentence = re.split(r"[.。!?！？]\s", line[:m.start()])[-1]
                    if OTHER_REPORT.search(sentence):
                        continue
                    for number in re.findall(r"\d+\.\d+", m.group(1)):
                        item_id = numbered.get((kind, number))
                        if item_id is not None:
                            out.append(Problem(f, offset + i, (), f"names {kind} {number} as text: write "
                                               f"{{{{< ref {kind}=\"{item_id}\" >}}}} so that its number follows "
                                               "the report (docs/spec.md, \"Numbers in the prose\")"))
    return out


# -- the chapters' key results, for the cover ----------------------------------------------------------------

def findings(report, chapters: list) -> list[Finding]:
    """Each table's ``key`` cells (spec), in chapter order: value, comparison and verdict from the data. A key
    naming no single cell is a spec error of its table."""
    out = []
    for ch_spec, ch in zip(report.chapters, chapters):
        for it in ch_spec.items:
            keys = it.raw.get("key") or []
            if it.kind != "table" or not keys:
                continue
            table = ch.tables[it.id]
            for i, k in enumerate(keys):
                want = {c: canon(k[c]) for c in COORDS if c in k}
                label = text(k["label"], f"{it.label} key[{i}] label", it.spec_file).as_dict()
                try:
                    cell = _one(table, want, "value")
                    compares = _cells(table, want, "compare")
                except Unbound as exc:
                    raise it.error(f"key[{i}]: {exc}") from None
                # the cover lists the value away from its table's header: it says its unit, and its
                # comparison what it is compared with
                metric = cell.coords.get("metric", "")
                value = BoundValue({lang: _with_unit(cell.text[lang], metric_unit(metric, lang, report))
                                    for lang in LANGS},
                                   {lang: _title(table, cell, lang) for lang in LANGS}, f"table-{table.id}", cell.value)
                cmp = next((c for c in compares if "baseline" not in c.flags), None)
                verdict = cmp.verdict["kind"].replace("-", "_") if cmp is not None and cmp.verdict else None
                out.append(Finding(
                    chapter_id=ch.id, chapter={lang: f"{ch.number}. {ch.title[lang]}" for lang in LANGS},
                    label=label, value=value, table=dict(table.label),
                    compare=BoundValue({lang: words.t(lang, "finding_compare", cmp.text[lang]) for lang in LANGS},
                                       {lang: _title(table, cmp, lang) for lang in LANGS},
                                       f"table-{table.id}", cmp.value) if cmp is not None else None,
                    verdict=_verdict_words(verdict) if verdict else None,
                    verdict_kind=verdict))
    return out
