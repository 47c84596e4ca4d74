"""The report spec: a declarative TOML file per report (data/reports/<id>.toml).

A spec declares a report (bilingual title, year, organisation, revision,
copyright), its chapters in order, and in each chapter its tables and figures
in reading order. Every table and figure says *what* to compute (metrics,
which runs, grouped how, aggregated how, compared with which baseline) — never
how: analysis.py turns it into SQL.

Numbering is decided here, once, for the site and the PDF alike:
``表 {chapter}.{n}`` / ``Table {chapter}.{n}`` and ``図`` / ``Figure``.
docs/spec.md describes every key.
"""

from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku import words
from kansoku.errors import SpecError
from kansoku.spec.keys import (
    BASELINE_KEYS,
    CHAPTER_KEYS,
    COMPARE_KEYS,
    FACTOR_KEYS,
    ITEM_KEYS,
    METRIC_KEYS,
    MISSING_FIGURE_KEYS,
    MISSING_REASONS,
    REPORT_KEYS,
    SCOPE_KEYS,
    TOP_KEYS,
)
from kansoku.spec.validate import SpecProblems, check_file
from kansoku.values import canon as _canon  # one spelling of a factor value everywhere
from kansoku.words import LANGS

AGGREGATES = ("median", "mean", "min", "max", "single")
COMPARES = ("ratio", "speedup", "change", "auto")  # auto: ratio if higher is better, else speed-up
FORMATS = ("percent", "times", "change", "number")
# factors that say where a run belongs, not what it varied
GROUPING = ("campaign", "study")


@dataclass(frozen=True)
class Text:
    """A text of the spec in each language it gives. A missing language falls back to the first language
    (LANGS order) that has it, flagged (``missing``)."""

    values: tuple[tuple[str, str], ...]   # (language, text) given, in LANGS order

    @classmethod
    def of(cls, given: dict[str, str | None]) -> Text:
        return cls(tuple((lang, given[lang]) for lang in LANGS if given.get(lang)))

    def get(self, lang: str) -> str:
        for given, v in self.values:  # (two languages: a scan, no dict made a call)
            if given == lang and v:
                return v
        return next((v for _, v in self.values if v), "")

    def missing(self, lang: str) -> bool:
        return lang not in dict(self.values)

    def as_dict(self) -> dict[str, str]:
        return {lang: self.get(lang) for lang in LANGS}


def text(v: Any, where: str, spec_file: Path, required: bool = True) -> Text | None:
    langs = ", ".join(LANGS)
    if v is None:
        if required:
            raise SpecError(spec_file, where, "missing (give { " + ", ".join(f'{x} = "…"' for x in LANGS) + " })")
        return None
    if isinstance(v, str):
        return Text.of({lang: v for lang in LANGS})
    if isinstance(v, dict):
        unknown = set(v) - set(LANGS)
        if unknown:
            raise SpecError(spec_file, where, f"unknown language(s) {sorted(unknown)}; use {langs}")
        if not any(v.get(lang) for lang in LANGS):
            raise SpecError(spec_file, where, f"needs at least one of {langs}")
        return Text.of(v)
    raise SpecError(spec_file, where, f"expected a string or {{ {langs} }}, got {type(v).__name__}")


@dataclass
class Baseline:
    factor: str | None = None       # baseline is another value of this factor ...
    value: str | None = None
    first_row: bool = False         # ... or the first row of the table
    fixed: float | None = None      # ... or a fixed number
    compare: str = "ratio"          # ratio value/baseline, speedup baseline/value, change value/baseline-1
    format: str = "percent"         # percent '103.82 %', times '×30.21', change '▲92.3%' / '−92.3 %'
    digits: int = 2
    significant: int | None = None  # round to significant figures instead of decimals (speed-up 3783.6, 0.93164)
    metric: str | None = None       # which metric is compared (default: the first)
    label: Text | None = None       # header of the comparison column
    published: str | None = None    # metric holding the report's printed derived value: check it
    show_published: bool = True     # show the printed value in its own column beside the computed one
    published_label: Text | None = None
    show_baseline: bool = True      # False: leave the baseline's column group out (the ratio still uses it)
    inline: bool = False        # the comparison in the value's cell, "1,234 (▲12.3%)" (docs/spec.md)


@dataclass(frozen=True)
class Scope:
    """The runs a report speaks for (``[report.scope]``, docs/spec.md "Report scope"): measured runs of its
    campaigns (the ``campaign`` factor) or under its run-id prefixes, and transcribed runs of its published
    tables (glob patterns of ``published_table``). Undeclared (every list empty): every run of the store."""

    campaigns: tuple[str, ...] = ()
    run_prefixes: tuple[str, ...] = ()
    transcribed: tuple[str, ...] = ()

    @property
    def declared(self) -> bool:
        return bool(self.campaigns or self.run_prefixes or self.transcribed)


@dataclass
class Item:
    """A table or a figure."""

    kind: str                       # 'table' | 'figure'
    id: str
    number: str                     # '1.2'
    caption: Text
    spec_file: Path
    chapter_id: str
    metrics: list[str]
    where: dict[str, Any]
    rows: str | None = None         # table: factor on rows
    columns: str | None = None      # table: factor pivoted into column groups
    x: str | None = None            # figure: factor on the x axis
    series: str | None = None       # figure: factor giving one trace per value
    aggregate: str = "median"
    count: bool = False             # table: show the number of runs
    companions: str = "aggregate"  # metrics after the first: aggregated like the first, or 'representative'
    baseline: Baseline | None = None
    digits: dict[str, int] = field(default_factory=dict)
    chart: str = "line"             # figure kind (see figures.py)
    options: dict[str, Any] = field(default_factory=dict)  # kind-specific (axes, log scales, ...)
    footnote: Text | None = None
    show_factors: list[str] = field(default_factory=list)  # table: extra columns with other factors of each row
    row_labels: dict[str, Text] = field(default_factory=dict)  # table: labels of row values, this table only
    device_groups: dict[str, list[str]] = field(default_factory=dict)  # the report's [device_groups]
    raw: dict[str, Any] = field(default_factory=dict)
    # table grammar (docs/spec.md "Table grammar"); read from ``raw`` and checked by analysis.tables
    row_groups: str | None = None   # table: a second factor on rows: one block of rows per value, labelled
    per_run: bool = False           # table: each run's value in its own column before the aggregate
    number_format: dict[str, str] = field(default_factory=dict)  # metric|default -> plain|thousands|exponent
    scope: Scope = field(default_factory=Scope)  # the report's: every selection of the item stays within it

    @property
    def label(self) -> str:
        return f"{'table' if self.kind == 'table' else 'figure'} {self.id!r} ({self.number})"

    def error(self, message: str) -> SpecError:
        return SpecError(self.spec_file, f"chapter {self.chapter_id!r}, {self.label}", message)

    def prefix(self, lang: str) -> str:
        """``表 2.1`` / ``Figure 2.1``: the item's printed label (words from i18n)."""
        return words.t(lang, "table_label" if self.kind == "table" else "figure_label", self.number)


@dataclass
class MetricInfo:
    """Report-level presentation of a metric ([metrics.<name>]): overrides the parser's MetricDef."""

    label: Text | None = None
    unit: str | None = None
    higher_is_better: bool | None = None
    digits: int | str | None = None  # decimals, or "printed": transcribed values as printed


@dataclass
class MissingFigure:
    """A figure of the original report that is not drawn, listed on its chapter's page with the reason."""

    number: str        # as printed, '3.4'
    caption: Text      # as printed
    reason: str        # one of MISSING_REASONS
    note: Text | None  # what exactly is missing (e.g. the source gives only two approximate values)


@dataclass
class Chapter:
    id: str
    number: int
    title: Text
    items: list[Item]
    missing_figures: list["MissingFigure"] = field(default_factory=list)

    @property
    def tables(self) -> list[Item]:
        return [i for i in self.items if i.kind == "table"]

    @property
    def figures(self) -> list[Item]:
        return [i for i in self.items if i.kind == "figure"]


@dataclass
class CompareSpec:
    """A ``[[compare]]``: selections A (baseline) and B, each ``where`` + its own, compared as tools/compare
    does. Selections are factor -> accepted values (as strings, canonical spelling)."""

    id: str
    title: Text
    a: dict[str, list[str]]
    b: dict[str, list[str]]
    where: dict[str, list[str]] = field(default_factory=dict)
    metrics: list[str] | None = None
    footnote: Text | None = None

    @property
    def page_id(self) -> str:
        return f"compare-{self.id}"

    def selection(self, side: str) -> dict[str, list[str]]:
        return {**self.where, **(self.a if side == "a" else self.b)}


@dataclass
class Report:
    id: str
    spec_file: Path
    fiscal_year: int
    title: Text
    subtitle: Text | None
    organisation: Text
    revision: str
    copyright: str
    chapters: list[Chapter]
    factor_order: dict[str, list[str]]
    factor_labels: dict[str, dict[str, Text]]
    factor_names: dict[str, Text]
    raw: dict[str, Any]
    metric_info: dict[str, MetricInfo] = field(default_factory=dict)
    compares: list[CompareSpec] = field(default_factory=list)  # [[compare]] pages, in spec order
    scope: Scope = field(default_factory=Scope)  # [report.scope]: the runs the report speaks for
    study_titles: dict[str, Text] = field(default_factory=dict)  # a study's value -> the title of its chapter

    def item(self, item_id: str, kind: str = "table") -> Item:
        for ch in self.chapters:
            for it in ch.items:
                if it.id == item_id and it.kind == kind:
                    return it
        raise KeyError(item_id)



def load_report(path: str | Path, *, validated: bool = False, raw: dict | None = None) -> Report:
    """The report of the spec at ``path``. ``validated``: its schema checks passed (spec/validate.py
    ``check_file``, not run again); ``raw``: the TOML ``check_file`` parsed from it (not read again; a copy is
    kept, so the caller's is left as it was)."""
    path = Path(path)
    if not validated:  # every problem of the spec at once, with lines (spec/validate.py)
        checked, problems = check_file(path)
        if problems:
            raise SpecProblems(problems)
        raw = raw if raw is not None else checked
    try:
        if raw is not None:
            raw = copy.deepcopy(raw)
        else:
            with open(path, "rb") as fh:
                raw = tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(path, None, "no such report spec") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, None, f"not valid TOML: {exc}") from None
    rep = raw.get("report")
    if not isinstance(rep, dict):
        raise SpecError(path, None, "missing [report] table")
    _known(path, "top level", raw, TOP_KEYS)
    _known(path, "[report]", rep, REPORT_KEYS)
    rid = rep.get("id", path.stem)
    fy = rep.get("fiscal_year")
    if not isinstance(fy, int):
        raise SpecError(path, "[report] fiscal_year", "expected an integer year")
    factors = raw.get("factors", {})
    factor_order: dict[str, list[str]] = {}
    factor_labels: dict[str, dict[str, Text]] = {}
    factor_names: dict[str, Text] = {}
    for fname, fdef in factors.items():
        if not isinstance(fdef, dict):
            raise SpecError(path, f"[factors.{fname}]", "expected a table")
        _known(path, f"[factors.{fname}]", fdef, FACTOR_KEYS)
        if "order" in fdef:
            factor_order[fname] = [str(v) for v in fdef["order"]]
        if "name" in fdef:
            factor_names[fname] = text(fdef["name"], f"[factors.{fname}] name", path)
        for val, lab in fdef.get("labels", {}).items():
            factor_labels.setdefault(fname, {})[str(val)] = text(lab, f"[factors.{fname}.labels] {val}", path)
    metric_info: dict[str, MetricInfo] = {}
    for mname, mdef in raw.get("metrics", {}).items():
        where = f"[metrics.{mname}]"
        if not isinstance(mdef, dict):
            raise SpecError(path, where, "expected a table")
        _known(path, where, mdef, METRIC_KEYS)
        hib = mdef.get("higher_is_better")
        if hib is not None and not isinstance(hib, bool):
            raise SpecError(path, where, "higher_is_better must be true or false")
        metric_info[mname] = MetricInfo(
            label=text(mdef.get("label"), f"{where} label", path, required=False),
            unit=None if mdef.get("unit") is None else str(mdef["unit"]), higher_is_better=hib,
            digits=_digits(path, where, mdef.get("digits")))
    device_groups: dict[str, list[str]] = {}
    for gname, devices in raw.get("device_groups", {}).items():
        if not isinstance(devices, list) or not devices or not all(isinstance(d, str) and d for d in devices):
            raise SpecError(path, f"[device_groups] {gname}", "expected a list of device names, e.g. [\"sdb\", \"sdc\"]")
        device_groups[gname] = devices
    scope = _scope(path, rep.get("scope"))
    chapters = []
    seen_ids: set[str] = set()
    seen_numbers: set[str] = set()
    for ci, ch in enumerate(raw.get("chapter", []), start=1):
        cid = ch.get("id")
        if not cid:
            raise SpecError(path, f"chapter #{ci}", "missing id")
        _known(path, f"chapter {cid!r}", ch, CHAPTER_KEYS)
        number = ch.get("number", ci)
        if not isinstance(number, int) or isinstance(number, bool):
            raise SpecError(path, f"chapter {cid!r}", f"number must be an integer, got {number!r}")
        items: list[Item] = []
        for kind, key in (("table", "table"), ("figure", "figure")):
            n = 0
            for it in ch.get(key, []):
                n = _item_number(path, cid, kind, number, it, n)
                label = f"{kind} {number}.{n}"
                if label in seen_numbers:
                    raise SpecError(path, f"chapter {cid!r}, {kind} {it.get('id')!r}",
                                    f"number {number}.{n} is used twice")
                seen_numbers.add(label)
                items.append(_item(path, cid, kind, f"{number}.{n}", it, seen_ids))
                items[-1].device_groups = device_groups
                items[-1].scope = scope
        missing = []
        for mi, mf in enumerate(ch.get("missing_figure", []), start=1):
            where = f"chapter {cid!r}, missing_figure #{mi}"
            if not isinstance(mf, dict):
                raise SpecError(path, where, "expected a table { number, caption, reason, note }")
            _known(path, where, mf, MISSING_FIGURE_KEYS)
            num = mf.get("number")
            if not isinstance(num, str) or not re.fullmatch(r"\d+\.\d+", num):
                raise SpecError(path, where, f"number must be the printed figure number, e.g. \"3.4\", got {num!r}")
            if f"figure {num}" in seen_numbers:
                raise SpecError(path, where, f"figure {num} is drawn by a [[chapter.figure]]; it cannot also be missing")
            seen_numbers.add(f"figure {num}")
            if mf.get("reason") not in MISSING_REASONS:
                raise SpecError(path, where, f"reason must be one of {list(MISSING_REASONS)}, got {mf.get('reason')!r}")
            missing.append(MissingFigure(num, text(mf.get("caption"), f"{where} caption", path), mf["reason"],
                                         text(mf.get("note"), f"{where} note", path, required=False)))
        chapters.append(Chapter(cid, number, text(ch.get("title"), f"chapter {cid!r} title", path), items, missing))
    return Report(
        id=rid, spec_file=path, fiscal_year=fy,
        title=text(rep.get("title"), "[report] title", path),
        subtitle=text(rep.get("subtitle"), "[report] subtitle", path, required=False),
        organisation=text(rep.get("organisation"), "[report] organisation", path),
        revision=str(rep.get("revision", "1.0")),
        copyright=str(rep.get("copyright", "")),
        chapters=chapters, factor_order=factor_order, factor_labels=factor_labels,
        factor_names=factor_names, raw=raw, metric_info=metric_info,
        compares=[_compare(path, i, c) for i, c in enumerate(raw.get("compare", []) or [])],
        scope=scope, study_titles=study_titles(chapters),
    )


def study_titles(chapters: list[Chapter]) -> dict[str, Text]:
    """The chapter that names a study: the one chapter whose items select that study and no other. A study
    several chapters select, or a chapter mixing studies, names none (its value would not tell them apart)."""
    by_study: dict[str, list[Chapter]] = {}
    for ch in chapters:
        studies = set()
        for it in ch.items:
            v = it.where.get("study")
            studies |= {str(x) for x in (v if isinstance(v, list) else [v]) if x is not None}
        if len(studies) == 1:
            by_study.setdefault(studies.pop(), []).append(ch)
    return {s: chs[0].title for s, chs in by_study.items() if len(chs) == 1}


def _scope(path: Path, v: Any) -> Scope:
    if v is None:
        return Scope()
    if not isinstance(v, dict):
        raise SpecError(path, "[report.scope]", "expected a table { campaigns, run_prefixes, transcribed }")
    _known(path, "[report.scope]", v, SCOPE_KEYS)
    lists = {}
    for k in sorted(SCOPE_KEYS):
        vals = v.get(k, [])
        if not isinstance(vals, list) or not all(isinstance(x, str) and x for x in vals):
            raise SpecError(path, f"[report.scope] {k}", "expected a list of names, e.g. [\"example-2026-11\"]")
        lists[k] = tuple(vals)
    scope = Scope(**lists)
    if not scope.declared:
        raise SpecError(path, "[report.scope]", "names no campaign, run prefix or transcribed table")
    return scope


def _selection(path: Path, where: str, v: Any) -> dict[str, list[str]]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise SpecError(path, where, "expected a table { factor = value | [values] }")
    out = {}
    for f, cond in v.items():
        vals = cond if isinstance(cond, list) else [cond]
        if not vals or any(isinstance(x, (dict, list)) for x in vals):
            raise SpecError(path, f"{where} {f}", "expected a value or a list of values")
        out[str(f)] = [_canon(x) for x in vals]
    return out


def _compare(path: Path, i: int, c: Any) -> CompareSpec:
    where = f"[[compare]] #{i + 1}"
    if not isinstance(c, dict):
        raise SpecError(path, where, "expected a table")
    _known(path, where, c, COMPARE_KEYS)
    cid = c.get("id")
    if not isinstance(cid, str) or not cid:
        raise SpecError(path, where, "missing id")
    where = f"compare {cid!r}"
    a, b = _selection(path, f"{where} a", c.get("a")), _selection(path, f"{where} b", c.get("b"))
    common = _selection(path, f"{where} where", c.get("where"))
    if not a or not b:
        raise SpecError(path, where, "needs a = { factor = value } and b = { factor = value }")
    both = (set(a) | set(b)) & set(common)
    if both:
        raise SpecError(path, where, f"factor(s) {sorted(both)} are in where and in a or b")
    metrics = c.get("metrics")
    return CompareSpec(cid, text(c.get("title"), f"{where} title", path), a, b, common,
                       [str(m) for m in metrics] if metrics else None,
                       text(c.get("footnote"), f"{where} footnote", path, required=False))


def _digits(path: Path, where: str, v: Any) -> int | str | None:
    if v is None or v == "printed":
        return v
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise SpecError(path, where, f"digits must be a number of decimals (0, 1, 2, ...) or \"printed\", got {v!r}")
    return v


def _known(path: Path, where: str, d: dict, keys: set[str]) -> None:
    unknown = set(d) - keys
    if unknown:
        raise SpecError(path, where, f"unknown key(s) {sorted(unknown)}; known: {sorted(keys)}")


def _item_number(path: Path, chapter_id: str, kind: str, chapter_number: int, it: Any, previous: int) -> int:
    """The item's number within its chapter: the next one, or as declared (``number = 2`` or
    ``number = "2.2"``, to keep a published report's numbering); later items continue from it."""
    if not isinstance(it, dict):
        raise SpecError(path, f"chapter {chapter_id!r}", f"each [[chapter.{kind}]] must be a table")
    n = it.get("number")
    if n is None:
        return previous + 1
    where = f"chapter {chapter_id!r}, {kind} {it.get('id')!r}"
    if isinstance(n, str) and "." in n:
        head, _, tail = n.partition(".")
        if head != str(chapter_number) or not tail.isdigit():
            raise SpecError(path, where, f"number {n!r} must be \"{chapter_number}.<n>\" (chapter {chapter_number})")
        n = int(tail)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SpecError(path, where, f"number must be a positive integer or \"{chapter_number}.<n>\", got {n!r}")
    if n <= previous:
        raise SpecError(path, where, f"number {chapter_number}.{n} would not follow {chapter_number}.{previous}; "
                        "tables and figures are numbered in reading order")
    return n


def _item(path: Path, chapter_id: str, kind: str, number: str, it: dict, seen: set[str]) -> Item:
    iid = it.get("id")
    where = f"chapter {chapter_id!r}, {kind} #{number}"
    if not iid:
        raise SpecError(path, where, "missing id")
    if (kind, iid) in seen:
        raise SpecError(path, where, f"{kind} id {iid!r} is used twice in this report")
    seen.add((kind, iid))
    where = f"chapter {chapter_id!r}, {kind} {iid!r} ({number})"
    unknown = set(it) - ITEM_KEYS
    if unknown:
        raise SpecError(path, where, f"unknown key(s) {sorted(unknown)}; known: {sorted(ITEM_KEYS)}")
    metrics = it.get("metrics") or ([it["metric"]] if "metric" in it else [])
    if not metrics:
        raise SpecError(path, where, "needs metric = \"...\" or metrics = [...]")
    agg = it.get("aggregate", "median")
    if agg not in AGGREGATES:
        raise SpecError(path, where, f"aggregate {agg!r} is not one of {AGGREGATES}")
    baseline = None
    if "baseline" in it:
        b = it["baseline"]
        bad = set(b) - BASELINE_KEYS
        if bad:
            raise SpecError(path, where, f"baseline: unknown key(s) {sorted(bad)}")
        if "row" in b and b["row"] != "first":
            raise SpecError(path, where, f"baseline row must be \"first\", got {b['row']!r}")
        if b.get("fixed") is not None and (isinstance(b["fixed"], bool) or not isinstance(b["fixed"], (int, float))):
            raise SpecError(path, where, f"baseline fixed must be a number, got {b['fixed']!r}")
        baseline = Baseline(
            factor=b.get("factor"), value=None if b.get("value") is None else _canon(b.get("value")),
            first_row=b.get("row") == "first", fixed=None if b.get("fixed") is None else float(b["fixed"]),
            compare=b.get("compare", "ratio"), format=b.get("format", "percent"), digits=int(b.get("digits", 2)),
            significant=None if b.get("significant") is None else int(b["significant"]),
            metric=b.get("metric"), label=text(b.get("label"), f"{where} baseline label", path, required=False),
            published=b.get("published"), show_published=bool(b.get("show_published", True)),
            published_label=text(b.get("published_label"), f"{where} baseline published_label", path,
                                 required=False),
            show_baseline=bool(b.get("show_baseline", True)), inline=b.get("inline", False),
        )
        if baseline.fixed is not None and baseline.fixed == 0:
            raise SpecError(path, where, "baseline fixed = 0: cannot compare with zero")
        if baseline.compare not in COMPARES:
            raise SpecError(path, where, f"baseline compare {baseline.compare!r} is not one of {COMPARES}")
        if baseline.format not in FORMATS:
            raise SpecError(path, where, f"baseline format {baseline.format!r} is not one of {FORMATS}")
        if sum([baseline.factor is not None, baseline.first_row, baseline.fixed is not None]) != 1:
            raise SpecError(path, where, "baseline needs exactly one of factor+value, row = \"first\", fixed = N")
        if baseline.factor is not None and baseline.value is None:
            raise SpecError(path, where, "baseline factor needs a value")
    item = Item(
        kind=kind, id=iid, number=number, spec_file=path, chapter_id=chapter_id,
        caption=text(it.get("caption"), f"{where} caption", path),
        metrics=list(metrics), where=dict(it.get("where", {})),
        rows=it.get("rows"), columns=it.get("columns"), x=it.get("x"), series=it.get("series"),
        aggregate=agg, count=bool(it.get("count", False)), companions=it.get("companions", "aggregate"),
        baseline=baseline, digits={m: _digits(path, f"{where} digits", d) for m, d in it.get("digits", {}).items()},
        chart=it.get("chart", "line"),
        options=dict(it.get("options", {})),
        footnote=text(it.get("footnote"), f"{where} footnote", path, required=False),
        show_factors=list(it.get("show_factors", [])),
        row_labels={_canon(k): text(v, f"{where} row_labels.{k}", path) for k, v in it.get("row_labels", {}).items()},
        raw=it, row_groups=it.get("row_groups"), per_run=it.get("per_run", False),
        number_format=dict(it.get("number_format", {})),
    )
    if kind == "table" and not item.rows:
        raise SpecError(path, where, "a table needs rows = \"<factor>\"")
    if not isinstance(item.where, dict):
        raise SpecError(path, where, "where must be a table { factor = value | [values] | { min, max } }")
    for f, cond in item.where.items():
        if isinstance(cond, dict) and (not cond or set(cond) - {"min", "max"}):
            raise SpecError(path, where, f"where {f}: a range is {{ min = A, max = B }} (either may be left out)")
    if item.aggregate not in AGGREGATES:
        raise SpecError(path, where, f"aggregate {item.aggregate!r} is not one of {AGGREGATES}")
    if item.companions not in ("representative", "aggregate"):
        raise SpecError(path, where, f"companions {item.companions!r} must be 'representative' or 'aggregate'")
    if baseline and baseline.metric and baseline.metric not in item.metrics:
        raise SpecError(path, where, f"baseline metric {baseline.metric!r} is not one of the metrics {item.metrics}")
    return item


def load_all(spec_dir: str | Path = "data/reports", checked: dict[Path, dict] | None = None) -> list[Report]:
    """Every report of ``spec_dir``. ``checked``: the specs already checked without a problem (spec/validate.py
    ``check_file``: path -> its parsed TOML), as the preflight checked them: neither checked nor read again."""
    spec_dir = Path(spec_dir)
    paths = sorted(spec_dir.glob("*.toml"))
    checked = dict(checked or {})
    problems = []
    for p in paths:
        if p not in checked:
            raw, prs = check_file(p)
            problems += prs
            if raw is not None:
                checked[p] = raw
    if problems:  # every problem of every spec in one run
        raise SpecProblems(problems)
    reports = [load_report(p, validated=True, raw=checked.get(p)) for p in paths]
    ids = [r.id for r in reports]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SpecError(spec_dir, None, f"report id(s) {sorted(dup)} used by several specs")
    return sorted(reports, key=lambda r: -r.fiscal_year)
