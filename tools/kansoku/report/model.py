"""The computed report: everything the site and the PDF show, as typed records, computed once.

``report.build`` fills a :class:`ComputedReport` from the store and a report spec; ``render.hugo`` and
``render.typst`` take it and nothing else (no store, no spec, no arithmetic): they place, label and
escape. Every printed string is here already, in both languages (``Words``: language -> text), and every
number keeps the runs behind it, so a renderer can show provenance without asking anyone.

``to_json()`` gives the page-ready data Hugo reads (``data/reports/<id>.json``); the keys are the short
ones the layouts use (a cell is ``{"t", "k", "v", "runs", "rep", "flags", "published"}``).
The reference ``docs/report_model.md`` is generated from this module (``python -m kansoku.report.model_doc``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.report.structure import Page

Words = dict[str, str]
"""Text per language: ``{"ja": "…", "en": "…"}``."""


def _words_json(t: Words) -> Words | str:
    """One string when both languages print the same, else the per-language dict (the layouts accept both)."""
    return t["ja"] if t.get("ja") == t.get("en") else t


# -- tables -------------------------------------------------------------------------------------------

@dataclass
class CellNote:
    """A note on cells, printed under the table after its mark (``*1``), the mark beside each cell."""

    mark: str                  # as printed beside the cell: "*1"
    text: Words

    def to_json(self) -> dict[str, Any]:
        return {"mark": self.mark, "text": self.text}


@dataclass
class Cell:
    """One body cell of a table (the stub's row label is a cell of kind ``factor``).

    ``kind``: ``factor`` (row label), ``factor-value`` (a shown factor), ``value`` (an aggregate of a
    metric), ``count`` (number of runs), ``compare`` (a derived comparison), ``published`` (a printed
    comparison as transcribed), ``note`` (a non-numeric cell).
    ``flags``: ``baseline``, ``transcribed``, ``checked``, ``mismatch``, ``better``, ``worse``, ``no-ratio``.
    """

    text: Words                                   # as printed, per language (already rounded and dressed)
    value: float | None = None                    # the number the text shows (in the metric's unit)
    kind: str = "value"                           # see above
    runs: list[str] = field(default_factory=list)  # runs behind the value
    representative: str | None = None             # the run closest to the aggregate
    flags: list[str] = field(default_factory=list)  # see above
    published: dict[str, Any] | None = None       # compare cells with a printed value: v, t, printed, computed,
                                                  # interval, agrees
    run_values: dict[str, float] = field(default_factory=dict)  # each run's own value (spread, per-run columns)
    exact: str | None = None                      # the value as a decimal string for downloads (stable across
                                                  # builds: 12 significant digits, no binary noise)
    notes: list[CellNote] = field(default_factory=list)  # notes on this cell (their marks beside its text)
    coords: dict[str, str] = field(default_factory=dict)  # where it sits: row, column (values), metric, group
    spread: Words | None = None                   # the runs' range as printed, "677.30–894.10 (n = 3)"
    verdict: dict[str, Any] | None = None         # compare cells: the noise-aware verdict (analysis/noise.py):
                                                  # kind, p, lo/hi (interval of the ratio), n [value, baseline]

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"t": _words_json(self.text), "k": self.kind}
        if self.value is not None:  # the exact decimal when there is one: the same bytes from every build
            d["v"] = float(self.exact) if self.exact is not None else self.value
        if self.runs:
            d["runs"] = self.runs
        if self.representative:
            d["rep"] = self.representative
        if self.flags:
            d["flags"] = self.flags
        if self.published is not None:
            d["published"] = self.published
        if self.notes:
            d["notes"] = [n.mark for n in self.notes]
        if self.spread is not None:
            d["spread"] = _words_json(self.spread)
        if self.verdict is not None:
            d["verdict"] = self.verdict
        return d


@dataclass
class HeaderCell:
    """A cell of the column header: a spanner (``colspan`` > 1, over the leaf columns of one column
    factor value) or a leaf column label; stub headers span every header row (``rowspan``)."""

    text: Words                      # the label as printed
    colspan: int = 1                 # leaf columns it spans
    rowspan: int = 1                 # header rows it spans
    kind: str | None = None          # the leaf column's kind (see Cell), None for a spanner or the stub
    baseline: bool | None = None     # the column (or spanner) of the baseline value

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"text": self.text, "colspan": self.colspan, "rowspan": self.rowspan}
        if self.kind is not None:
            d["kind"] = self.kind
        if self.baseline is not None:
            d["baseline"] = self.baseline
        return d


@dataclass
class Column:
    """A leaf column: what every cell below it is (its full label, spanner included, names CSV columns)."""

    text: Words                      # full label ("TPS (checksums off)")
    kind: str                        # the kind of its cells (see Cell)
    baseline: bool = False           # the column of the baseline value

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "kind": self.kind, "baseline": self.baseline}


@dataclass
class RowGroup:
    """Consecutive body rows under one label (several factors on rows)."""

    label: Words                     # the group's label (a row factor's value)
    first_row: int                   # index of its first body row
    rows: int                        # number of body rows

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "first_row": self.first_row, "rows": self.rows}


@dataclass
class ProvenanceRun:
    id: str                  # run id
    anchor: str              # HTML-safe anchor of the run on the data-sources page
    rep: str                 # the repetition's value ("·" without one)
    representative: bool     # the run whose value is closest to the aggregate

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "a": self.anchor, "rep": self.rep, "r": self.representative}


@dataclass
class ProvenanceGroup:
    values: list[Words]      # one label per varying factor
    runs: list[ProvenanceRun]  # its repetitions

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values, "runs": [r.to_json() for r in self.runs]}


@dataclass
class Provenance:
    """The runs behind a table or figure, grouped by their factors (all but ``rep``)."""

    common: list[tuple[Words, Words]] = field(default_factory=list)  # (factor name, value) shared by all
    factors: list[Words] = field(default_factory=list)               # names of the varying factors
    groups: list[ProvenanceGroup] = field(default_factory=list)  # runs sharing the varying factors' values
    runs: int = 0                                                   # number of runs

    def to_json(self) -> dict[str, Any]:
        return {"common": [{"name": n, "value": v} for n, v in self.common], "factors": self.factors,
                "groups": [g.to_json() for g in self.groups], "runs": self.runs}


@dataclass
class Table:
    """A numbered table: header (stub, spanners, leaf labels), leaf columns, body rows, notes, checks."""

    id: str                            # the spec's id
    number: str                        # as printed ("2.1", "4.8")
    label: Words                       # "表 2.1" / "Table 2.1"
    caption: Words
    footnote: Words | None
    header: list[list[HeaderCell]]     # header rows, top first
    columns: list[Column]              # leaf columns, stub first
    rows: list[list[Cell]]             # body rows, stub cell first
    runs: list[str]                    # every run behind a cell
    citations: list[str] = field(default_factory=list)  # published sources of transcribed values
    checks: dict[str, int] = field(default_factory=dict)  # checked / mismatch counts of printed values
    marks: list[str] = field(default_factory=list)  # flags that need a note under the table
    provenance: Provenance = field(default_factory=Provenance)  # the runs grouped by factors
    row_groups: list[RowGroup] = field(default_factory=list)    # several factors on rows (empty: one)
    row_group_name: Words | None = None  # the name of the grouping factor (a CSV column)
    notes: list[CellNote] = field(default_factory=list)  # cell notes, in the order of their marks
    method: Words | None = None        # how its comparisons' verdicts were decided (tables with verdicts)

    @property
    def transcribed(self) -> bool:
        return any("transcribed" in c.flags for row in self.rows for c in row)

    def to_json(self) -> dict[str, Any]:
        d = {
            "id": self.id, "number": self.number, "kind": "table", "label": self.label, "caption": self.caption,
            "footnote": self.footnote,
            "header": [[h.to_json() for h in hrow] for hrow in self.header],
            "columns": [c.to_json() for c in self.columns],
            "rows": [[c.to_json() for c in row] for row in self.rows],
            "runs": self.runs, "transcribed": self.transcribed, "citations": self.citations,
            "checks": self.checks, "prov": self.provenance.to_json(), "marks": self.marks,
        }
        if self.row_groups:
            d["row_groups"] = [g.to_json() for g in self.row_groups]
        if self.notes:
            d["notes"] = [n.to_json() for n in self.notes]
        if self.method is not None:
            d["method"] = self.method
        return d

    def csv_rows(self, lang: str) -> list[list[str]]:
        """The table as a download: leaf column labels, then each row (numbers as exact decimals)."""
        group = [""] * len(self.rows)
        for g in self.row_groups:
            group[g.first_row:g.first_row + g.rows] = [g.label[lang]] * g.rows
        lead = [[(self.row_group_name or {}).get(lang, "")]] if self.row_groups else []
        out = [(lead[0] if lead else []) + [c.text[lang] for c in self.columns]]
        for i, row in enumerate(self.rows):
            out.append(([group[i]] if self.row_groups else []) + [c.exact if c.exact is not None else c.text[lang]
                                                                  for c in row])
        return out


# -- figures ------------------------------------------------------------------------------------------

@dataclass
class ChartData:
    """What a chart kind draws, computed: the numbers and, per language, every label, name and hover text.

    ``render.charts`` turns it into a plotly figure per language without asking anyone; the keys of
    ``data`` and ``words[lang]`` are the chart kind's own (see each kind's data function in
    ``analysis/charts/`` and its drawing in ``render/charts/``).
    """

    kind: str                                    # chart kind (docs/charts.md)
    options: dict[str, Any]                      # the figure's checked options (axes, height, ...)
    data: dict[str, Any]                         # language-independent series: x, y, run ids, ...
    words: dict[str, dict[str, Any]]             # language -> names, axis titles, hover texts


@dataclass
class Figure:
    """A numbered figure: the plotly figure per language (data + layout, as plotly.js and kaleido take
    it), its series data where the chart kind has series, and the runs behind it."""

    id: str                            # the spec's id
    number: str                        # as printed
    chart: str                         # chart kind (docs/charts.md)
    label: Words
    caption: Words
    footnote: Words | None
    figure: dict[str, dict[str, Any]]  # language -> {"data": [...], "layout": {...}}
    runs: list[str]                    # every run the figure shows
    transcribed: bool = False          # shows transcribed values
    citations: list[str] = field(default_factory=list)  # published sources of transcribed values
    provenance: Provenance = field(default_factory=Provenance)
    chart_data: ChartData | None = None  # what the figure draws (render.charts builds ``figure`` from it)
    points: int | None = None          # cross-year figures: number of points

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id, "number": self.number, "kind": "figure", "chart": self.chart, "label": self.label,
            "caption": self.caption, "footnote": self.footnote, "figure": self.figure, "runs": self.runs,
        }
        if self.points is not None:
            d["points"] = self.points
        else:
            d["transcribed"] = self.transcribed
            d["citations"] = self.citations
        d["prov"] = self.provenance.to_json()
        return d


# -- runs, environment, pages ---------------------------------------------------------------------------

@dataclass
class SourceFile:
    file: str                      # file name in the run directory
    size_bytes: int | None
    sha256: str | None
    tool: str | None               # tool that wrote it (pgbench, sar, ...)
    format: str | None             # format detected by content
    version: str | None            # tool version, when the file says
    size: str                      # human-readable size
    path: Path | None = None       # the store's kept copy of these bytes (data/blobs/…/<sha256>), for publishing
    url: str | None = None         # set by the renderer that publishes it

    def to_json(self) -> dict[str, Any]:
        d = {"file": self.file, "size_bytes": self.size_bytes, "sha256": self.sha256, "tool": self.tool,
             "format": self.format, "version": self.version, "size": self.size}
        if self.url:
            d["url"] = self.url
        return d


@dataclass
class RunInfo:
    """A run shown in the report: its origin, factors and raw files."""

    id: str                            # run id
    origin: str                        # measured | transcribed
    status: str                        # ok | failed | ...
    start: str | None                  # start time
    citation: str | None               # the published source of a transcribed run
    hostname: str | None
    anchor: str                        # HTML-safe anchor
    factors: dict[str, str] = field(default_factory=dict)
    sources: list[SourceFile] = field(default_factory=list)  # its raw files
    run_toml: Path | None = None       # the store's kept copy of the run's own run.toml (for publishing)
    run_toml_url: str | None = None    # set by the renderer that publishes it
    run_toml_sha256: str | None = None  # sha256 of that run.toml

    def to_json(self) -> dict[str, Any]:
        d = {"origin": self.origin, "status": self.status, "start": self.start, "citation": self.citation,
             "hostname": self.hostname, "anchor": self.anchor, "factors": self.factors,
             "sources": [s.to_json() for s in self.sources]}
        if self.run_toml_url:
            d["run_toml_url"] = self.run_toml_url
        return d


@dataclass
class Environment:
    """The test-environment appendix: machines, tool versions and PostgreSQL settings of the measured runs."""

    runs: int = 0                                                  # measured runs with a capture
    without_capture: int = 0                                       # measured runs without one
    machines: list[dict[str, Any]] = field(default_factory=list)   # {values: [str | Words], runs}
    machine_fields: list[Words] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)   # {tool, values: [{value, runs}]}
    settings: list[dict[str, Any]] = field(default_factory=list)   # {name, values: [{value, runs, where}]}
    settings_kind: str = "non_default"                             # non_default | captured
    # settings that differ between runs: the runs grouped into configurations (columns), one row per setting
    settings_configs: list[dict[str, Any]] = field(default_factory=list)  # {runs, where}
    settings_varying: list[dict[str, Any]] = field(default_factory=list)  # {name, values: [str per config]}
    settings_without_server: dict[str, Any] | None = None  # {runs, where}: runs without a PostgreSQL server

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "without_capture": self.without_capture, "machines": self.machines,
                "machine_fields": self.machine_fields, "versions": self.versions, "settings": self.settings,
                "settings_kind": self.settings_kind, "settings_configs": self.settings_configs,
                "settings_varying": self.settings_varying, "settings_without_server": self.settings_without_server}


@dataclass
class Author:
    name: Words
    affiliation: Words | None
    chapters: list[dict[str, Any]]     # the chapters written: {id, number, title}

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "affiliation": self.affiliation, "chapters": self.chapters}


@dataclass
class Revision:
    revision: str                      # "1.1"
    date: str
    changes: Words                     # what changed

    def to_json(self) -> dict[str, Any]:
        return {"revision": self.revision, "date": self.date, "changes": self.changes}


@dataclass
class Chapter:
    id: str                                                   # the spec's chapter id (file stem of its prose)
    number: int
    title: Words
    tables: dict[str, Table] = field(default_factory=dict)    # by id
    figures: dict[str, Figure] = field(default_factory=dict)  # by id
    order: list[str] = field(default_factory=list)   # item ids in spec order

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "number": self.number, "title": self.title,
                "tables": {k: t.to_json() for k, t in self.tables.items()},
                "figures": {k: f.to_json() for k, f in self.figures.items()}, "order": self.order}


@dataclass
class ComputedReport:
    """One report, computed: front matter, chapters with their tables and figures, runs, pages."""

    id: str                            # report id (spec file stem)
    fiscal_year: int
    title: Words
    subtitle: Words | None
    organisation: Words
    revision: str                      # current revision
    copyright: str | None
    license: Words | None
    revision_history: list[Revision]
    authors: list[Author]
    themes: dict[str, list[str]]       # language -> theme labels
    publish_raw: bool                  # the site offers the raw files for download
    chapters: list[Chapter]
    runs: dict[str, RunInfo]           # every run behind a table or figure, by id
    environment: Environment           # the test-environment appendix
    pages: list[Page]                  # reading order on the site (structure.report_pages)
    pdf_pages: list[Page]              # reading order in the PDF (site-only pages left out)
    generated_bodies: dict[str, str] = field(default_factory=dict)  # page id -> body of a page without prose
    content_dir: Path | None = None    # where the prose of this report lives
    site_url: str | None = None        # the web edition's address (spec `[report] site_url`), printed in the PDF
    pdf: dict[str, str] = field(default_factory=dict)  # language -> site URL of the PDF built with the site

    def chapter(self, chapter_id: str) -> Chapter | None:
        return next((c for c in self.chapters if c.id == chapter_id), None)

    def tables(self) -> list[Table]:
        return [t for c in self.chapters for t in c.tables.values()]

    def figures(self) -> list[Figure]:
        return [f for c in self.chapters for f in c.figures.values()]

    def pages_json(self) -> list[dict[str, Any]]:
        pages = self.pages
        return [{"id": p.id, "kind": p.kind, "weight": p.weight, "number": p.number, "title": p.title,
                 "in_pdf": p.in_pdf, "prev": pages[i - 1].id if i > 0 else None,
                 "next": pages[i + 1].id if i + 1 < len(pages) else None,
                 "missing": {lang: p.missing(lang) for lang in ("ja", "en")}}
                for i, p in enumerate(pages)]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "fiscal_year": self.fiscal_year, "title": self.title, "subtitle": self.subtitle,
            "organisation": self.organisation, "revision": self.revision, "copyright": self.copyright,
            "license": self.license, "revision_history": [r.to_json() for r in self.revision_history],
            "authors": [a.to_json() for a in self.authors], "themes": self.themes,
            "publish_raw": self.publish_raw, "chapters": [c.to_json() for c in self.chapters],
            "runs": {k: r.to_json() for k, r in self.runs.items()}, "pages": self.pages_json(),
            "environment": self.environment.to_json(), "site_url": self.site_url, "pdf": self.pdf,
        }


@dataclass
class Trends:
    """The cross-year view (config.toml ``[[params.trends]]``): one figure per trend."""

    figures: list[Figure] = field(default_factory=list)
    title: Words = field(default_factory=dict)  # the cross-year page's title

    def to_json(self) -> dict[str, Any]:
        return {"figures": [f.to_json() for f in self.figures]}
