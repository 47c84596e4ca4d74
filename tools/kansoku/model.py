"""The computed report: everything the site and the PDF show, as typed records, computed once.

``report.build`` fills a :class:`ComputedReport` from the store and a report spec; ``render.hugo`` and
``render.typst`` take it and nothing else (no store, no spec, no arithmetic): they place, label and
escape. Every printed string is here already, in both languages (``Words``: language -> text), and every
number keeps the runs behind it, so a renderer can show provenance without asking anyone.

:func:`encode` gives a record as the page-ready data Hugo reads (``data/reports/<id>.json``): its field names
are the keys. Where the page data is a selection of a record's fields, a record of ``render/page_data.py`` says
which; what a block shows (its view, ``render/views.py``) is added by the renderer that writes the data.
The reference ``docs/report_model.md`` is generated from this module (``python -m kansoku.report.model_doc``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.words import LANGS

Words = dict[str, str]
"""Text per language: ``{"ja": "…", "en": "…"}``."""


# The noise-aware verdicts (analysis/noise.py) in the order their legend lists them, and the mark each prints
# beside a value, readable in black and white: spelled here only; render/views.py gives them to both outputs
# (the cover's key results read ``verdict_marks`` of the page-ready JSON).
VERDICT_KINDS = ("better", "worse", "changed", "within-noise", "too-few-runs")
VERDICT_MARKS = {"better": "✓", "worse": "✗", "changed": "Δ", "within-noise": "≈", "too-few-runs": "?"}


# a field's metadata that keeps it out of the page data: what only the building machine uses (a path in the store)
UNPUBLISHED = {"page_data": False}


def encode(record: Any) -> Any:
    """A record (and the records in it) as page data: a dataclass as a dict keyed by its field names, in their
    order (but the fields marked UNPUBLISHED); lists, tuples and dicts item by item; anything else as it is."""
    kind = type(record)
    if kind in _SCALARS:
        return record
    if kind is list or kind is tuple:  # (one pass: most lists are short, a check of them all first cost more)
        return [x if type(x) in _SCALARS else encode(x) for x in record]
    if kind is dict:
        return {k: v if type(v) in _SCALARS else encode(v) for k, v in record.items()}
    encoder = _ENCODERS.get(kind)
    if encoder is not None or (dataclasses.is_dataclass(record) and not isinstance(record, type)):
        return (encoder or _encoder(kind))(record)
    if isinstance(record, (list, tuple)):
        return [encode(x) for x in record]
    if isinstance(record, dict):
        return {k: encode(v) for k, v in record.items()}
    return record


_SCALARS = frozenset({str, int, float, bool, type(None)})
_PUBLISHED_FIELDS: dict[type, tuple[str, ...]] = {}
_ENCODERS: dict[type, Any] = {}  # record class -> its encoder (_encoder)


def encode_fields(record: Any) -> dict:
    """The rule for a record: its published fields (``_published_fields``), in order, each encoded. What
    :func:`_encoder` generates a function from, and what a test holds those functions to."""
    return {name: encode(getattr(record, name)) for name in _published_fields(type(record))}


def _encoder(kind: type):
    """A function encoding a record of ``kind`` as :func:`encode_fields` does, made once per class: one dict
    display reading each field by name (a campaign's report encodes hundreds of thousands of records)."""
    names = _published_fields(kind)
    body = ", ".join(f"{n!r}: (v if type(v := r.{n}) in scalars else encode(v))" for n in names)
    space: dict[str, Any] = {"scalars": _SCALARS, "encode": encode}
    exec(f"def encode_{kind.__name__}(r):\n    return {{{body}}}\n", space)  # (names: a dataclass's fields)
    fn = _ENCODERS[kind] = space[f"encode_{kind.__name__}"]
    return fn


def _published_fields(kind: type) -> tuple[str, ...]:
    """A record class's fields in the page data, in order (looked up once per class)."""
    names = _PUBLISHED_FIELDS.get(kind)
    if names is None:
        names = _PUBLISHED_FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind)
                                                if f.metadata.get("page_data", True))
    return names


# -- pages --------------------------------------------------------------------------------------------


LOCAL_HOSTS = ("localhost", "127.", "[::1]", "0.0.0.0")


def is_local_address(url: str | None) -> bool:
    """An address only the building machine opens (a local preview), not a web edition a reader can visit."""
    return bool(url) and re.match(r"https?://(" + "|".join(re.escape(h) for h in LOCAL_HOSTS) + ")", url) is not None

@dataclass
class Page:
    """A page of the report in reading order: its prose files per language (or none: a generated page)."""

    id: str                          # file stem: 'introduction', a chapter id, 'closing', ...
    kind: str                        # introduction | chapter | compare | closing | authors | methods | appendix | sources | page
    weight: int
    title: dict[str, str]
    files: dict[str, Path | None]    # prose file per language, None when missing
    number: int | None = None        # chapter number
    in_pdf: bool = True
    front: dict[str, dict[str, Any]] = field(default_factory=dict)  # parsed front matter per language

    def missing(self, lang: str) -> bool:
        return self.files.get(lang) is None

    def source_lang(self, lang: str) -> str | None:
        """The language whose prose is shown on the ``lang`` page (None: no prose at all)."""
        if self.files.get(lang):
            return lang
        for other in LANGS:
            if self.files.get(other):
                return other
        return None


# -- tables -------------------------------------------------------------------------------------------

@dataclass
class CellNote:
    """A note on cells, printed under the table after its mark (``*1``), the mark beside each cell."""

    mark: str                  # as printed beside the cell: "*1"
    text: Words


@dataclass
class Cell:
    """One body cell of a table (the stub's row label is a cell of kind ``factor``).

    ``kind``: ``factor`` (row label), ``factor-value`` (a shown factor), ``value`` (an aggregate of a
    metric), ``count`` (number of runs), ``compare`` (a derived comparison), ``published`` (a printed
    comparison as transcribed), ``note`` (a non-numeric cell).
    ``flags``: ``baseline``, ``transcribed``, ``checked``, ``mismatch``, ``better``, ``worse``, ``no-ratio``,
    ``partial-coverage`` (a run's monitor covers less of its window than the campaign's threshold: a note says how much).
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
    range: str | None = None                      # the runs' min–max under the value, "677.30–894.10" (every
                                                  # aggregate of >= 2 runs; printed with spec `spread = "range"`,
                                                  # behind the spread switch on the site otherwise)


@dataclass
class HeaderCell:
    """A cell of the column header: a spanner (``colspan`` > 1, over the leaf columns of one column
    factor value) or a leaf column label; stub headers span every header row (``rowspan``)."""

    text: Words                      # the label as printed
    colspan: int = 1                 # leaf columns it spans
    rowspan: int = 1                 # header rows it spans
    kind: str | None = None          # the leaf column's kind (see Cell), None for a spanner or the stub
    baseline: bool | None = None     # the column (or spanner) of the baseline value
    aggregation: Words | None = None  # a value column's aggregation as printed under its label ("median")


@dataclass
class Column:
    """A leaf column: what every cell below it is (its full label, spanner included, names CSV columns)."""

    text: Words                      # full label ("TPS (checksums off)")
    kind: str                        # the kind of its cells (see Cell)
    baseline: bool = False           # the column of the baseline value
    # value columns: how each cell was made from its runs: median | mean | min | max | single (one run) |
    # representative (the value of the run closest to the first metric's aggregate) | sum (of aggregates) |
    # published (transcribed values, as printed); None for other kinds
    aggregation: str | None = None
    aggregation_text: Words | None = None  # the same in words, in its header and its CSV column name


@dataclass
class RowGroup:
    """Consecutive body rows under one label (several factors on rows)."""

    label: Words                     # the group's label (a row factor's value)
    first_row: int                   # index of its first body row
    rows: int                        # number of body rows


@dataclass
class ProvenanceRun:
    id: str                  # run id
    anchor: str              # HTML-safe anchor of the run on the data-sources page
    rep: str                 # the repetition's value ("·" without one)
    representative: bool     # the run whose value is closest to the aggregate


@dataclass
class ProvenanceGroup:
    values: list[Words]      # one label per varying factor
    runs: list[ProvenanceRun]  # its repetitions


@dataclass
class FactorValue:
    """A factor's name and its value, both as read."""

    name: Words                        # the factor's name ("clients")
    value: Words                       # its value's label ("8")


@dataclass
class Provenance:
    """The runs behind a table or figure, grouped by their factors (all but ``rep``)."""

    common: list[FactorValue] = field(default_factory=list)      # the factors every run shares
    factors: list[Words] = field(default_factory=list)               # names of the varying factors
    groups: list[ProvenanceGroup] = field(default_factory=list)  # runs sharing the varying factors' values
    runs: int = 0                                                   # number of runs


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
    print_spread: bool = False         # spec `spread = "range"`: each aggregate's range printed under it

    @property
    def transcribed(self) -> bool:
        return any("transcribed" in c.flags for row in self.rows for c in row)

    def csv_rows(self, lang: str) -> list[list[str]]:
        """The table as a download: leaf column labels, then each row (numbers as exact decimals)."""
        group = [""] * len(self.rows)
        for g in self.row_groups:
            group[g.first_row:g.first_row + g.rows] = [g.label[lang]] * g.rows
        lead = [[(self.row_group_name or {}).get(lang, "")]] if self.row_groups else []
        out = [(lead[0] if lead else []) + [c.text[lang] + (f" [{c.aggregation_text[lang]}]" if c.aggregation_text
                                                            else "") for c in self.columns]]
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
    """A numbered figure: what it draws (``chart_data``: numbers and every label per language; each renderer
    draws it, ``render.charts``), and the runs behind it."""

    id: str                            # the spec's id
    number: str                        # as printed
    chart: str                         # chart kind (docs/charts.md)
    label: Words
    caption: Words
    footnote: Words | None
    chart_data: ChartData              # what the figure draws (render.charts draws it per language)
    runs: list[str]                    # every run the figure shows
    transcribed: bool = False          # shows transcribed values
    citations: list[str] = field(default_factory=list)  # published sources of transcribed values
    provenance: Provenance = field(default_factory=Provenance)
    points: int | None = None          # cross-year figures: number of points
    trend: dict[str, Any] | None = None  # cross-year figures: what was compared, the table under the chart
                                         # (columns, rows per language), years without data and why


# -- comparisons of two selections ([[compare]], tools/compare) -----------------------------------------

@dataclass
class CompareSide:
    """One side of a compared condition: the runs of selection A (baseline) or B."""

    median: float
    minimum: float
    maximum: float
    n: int                             # number of runs
    values: list[float]                # each run's value, in the order of ``runs``
    runs: list[str]                    # run ids
    text: Words                        # as printed: "1,234.5 [1,200.0–1,250.0] n = 3"


@dataclass
class CompareRow:
    """One metric in one condition, A against B, exactly as ``tools/compare --json`` computes it."""

    metric: str
    unit: str | None
    condition: dict[str, str]          # the condition's factor values (all but the selections' and rep)
    a: CompareSide                     # the baseline
    b: CompareSide
    ratio: float | None                # median(B) / median(A)
    ratio_low: float | None            # 95 % bootstrap interval of the ratio
    ratio_high: float | None
    p_value: float | None              # rank-sum p: exact, or normal approximation beyond countable groups
    verdict: str                       # better | worse | changed | within_noise | too_few_runs | no_ratio | higher
                                       # | lower
    direction: str                     # higher_is_better | lower_is_better | neither | unknown (metric catalogue)
    transcribed: bool                  # a side holds transcribed values
    flag: str | None                   # the table cells' verdict flag (better, worse, changed, within-noise,
                                       # too-few-runs)
    metric_label: Words                # the metric as the report names it
    values: list[Words]                # the condition as printed, one per factor of ``Comparison.factors``
    change: Words                      # B/A − 1 as printed ("+5.0 %", "▲5.0%")
    interval: Words                    # the interval of the change as printed ("" when none)
    verdict_text: Words                # the verdict in words

    def record(self) -> dict[str, Any]:
        """The row as a comparison record of ``tools/compare --json``."""
        def side(s: CompareSide) -> dict[str, Any]:
            return {"median": s.median, "min": s.minimum, "max": s.maximum, "n": s.n, "values": s.values,
                    "runs": s.runs}
        return {"metric": self.metric, "unit": self.unit, "condition": self.condition, "baseline": side(self.a),
                "candidate": side(self.b), "ratio": self.ratio, "ratio_interval": [self.ratio_low, self.ratio_high],
                "p_value": self.p_value, "verdict": self.verdict, "direction": self.direction,
                "transcribed": self.transcribed}


@dataclass
class CompareEnvironment:
    """One environment key the two sides' runs recorded differently (run.toml / host.toml, as tools/compare
    lists them beside the results)."""

    role: Words | None  # the host's role as a reader sees it ("server"); None: the run's own host
    key: str            # "server.data_checksums", "machine.kernel", "versions.postgres"
    a: list[str]        # the distinct values side A's runs recorded ("—": none of them recorded it)
    b: list[str]


@dataclass
class Comparison:
    """A ``[[compare]]`` of the spec, computed: selections A and B condition by condition (its own page)."""

    id: str                            # the spec's id
    page: str                          # page id ("compare-<id>")
    title: Words
    footnote: Words | None
    a_label: Words                     # selection A as the report names it ("checksums off")
    b_label: Words
    selections: str                    # the same comparison as tools/compare arguments
    common: list[tuple[Words, Words]]  # (factor name, value) shared by every row (where, and more)
    factors: list[Words]               # names of the factors that vary between rows (one column each)
    rows: list[CompareRow]             # the primary metric (TPS) first, then the others as listed; by condition
    method: Words                      # how the verdicts were decided (parameters included)
    marks: list[str]                   # verdict flags present (the legend)
    not_compared: dict[str, int]       # (metric, condition) pairs present on side "a" or "b" only
    csv: list[list[str]]               # the rows of ``tools/compare --csv`` (header first)
    runs: list[str]                    # every run of either side
    environment: list[CompareEnvironment] = field(default_factory=list)  # what the sides' runs recorded differently


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
    path: str | None = field(default=None, metadata=UNPUBLISHED)  # the store's kept copy (data/blobs/…/<sha256>)
    url: str | None = None         # set by the renderer that publishes it
    checked_against: str | None = None  # a rendering of this file of the run (sar -A text of its sa file, ...),
    records_checked: int | None = None  # ... checked against it on this many records, not read again


REP = "rep"  # the factor that numbers a condition's repetitions


def condition_key(factors: dict[str, str]) -> tuple:
    """A run's condition: its factors but ``rep`` (the report's runs with the same key are its condition)."""
    return tuple(sorted((f, v) for f, v in factors.items() if f != REP))


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
    run_toml: str | None = field(default=None, metadata=UNPUBLISHED)  # the store's kept copy of its run.toml
    run_toml_url: str | None = None    # set by the renderer that publishes it
    run_toml_sha256: str | None = None  # sha256 of that run.toml
    factor_labels: dict[str, list[list[str]]] = field(default_factory=dict)  # language -> [[factor name, value label]]
    title: dict[str, str] = field(default_factory=dict)  # language -> its title (report/runs.py label_runs)
    # the digest of what the record is made of (report/runs.py key_records; None: not kept): what is made of
    # records alone (a data-sources part's JSON, render/records_cache.py) is kept while its records' keys are
    key: str | None = field(default=None, metadata=UNPUBLISHED)


@dataclass
class RunMetric:
    """One metric of a run beside its condition (the report's runs sharing every factor but ``rep``)."""

    metric: str                        # metric name (run_metrics.metric)
    label: Words                       # its label with the unit
    value: float                       # the run's own value
    decimals: int                      # ... printed with these: its condition's, or more it needs (report/runs.py)
    # the value printed with texts_from, texts_from + 1, ... decimals: every number of decimals its condition can
    # give it (its own significant decimals and a few fewer), so that a new run changing them leaves its data
    texts: list[str]
    texts_from: int
    median: str                        # the condition's median, min and max as printed (same decimals)
    low: str
    high: str
    n: int                             # runs of the condition with this metric

    @property
    def text(self) -> str:
        """The run's value as its page prints it."""
        return self.texts[self.decimals - self.texts_from]


@dataclass
class RunUse:
    """A table or figure of the report that uses the run, with where it sits (its chapter page and anchor).
    Not its caption: a run page names the item and its chapter, so that a caption edited renders no run page."""

    kind: str                          # table | figure
    id: str                            # the item's spec id
    label: Words                       # "表 2.1" / "Table 2.1"
    page: str                          # id of the chapter page that shows it
    anchor: str                        # its HTML id on that page ("table-read-tps")
    cells: list[Words] = field(default_factory=list)  # tables: the cells that use the run ("8 × TPS (…)")


# Per-second columns of a run's time series, in CSV order, with their decimals (the same bytes from every build).
SERIES_COLUMNS: dict[str, int] = {
    "second": 0, "tps": 3, "latency_avg_ms": 3, "latency_max_ms": 3,
    "cpu_usr_pct": 2, "cpu_sys_pct": 2, "cpu_iowait_pct": 2, "cpu_soft_pct": 2, "cpu_steal_pct": 2,
    "cpu_idle_pct": 2, "disk_read_kb_s": 2, "disk_write_kb_s": 2, "disk_util_pct": 2,
}

# The columns a run page's charts draw (layouts/runs/single.html: each trace's xcol/ycol; a test checks the
# template names no other). The others (latency_max_ms, cpu_idle_pct) are in the page's CSV only.
CHART_COLUMNS = ("second", "tps", "latency_avg_ms", "cpu_usr_pct", "cpu_sys_pct", "cpu_iowait_pct", "cpu_soft_pct",
                 "cpu_steal_pct", "disk_read_kb_s", "disk_write_kb_s", "disk_util_pct")


@dataclass
class RunSeries:
    """A run's per-second time series (aggregated per second, never transaction rows): pgbench TPS and latency,
    CPU (all CPUs) and physical disks over the run window, joined on the second since the run's start."""

    columns: list[str]                 # the columns the run has, in SERIES_COLUMNS order ("second" first)
    values: dict[str, list[float | None]]  # column -> one value per second (None: no sample that second)
    csv: str                           # the series as a download: header, then one line per second, each
                                       # column with its fixed decimals (SERIES_COLUMNS)
    tps_source: str | None = None      # where TPS comes from: txlog | aggregate | progress
    cpu_tool: str | None = None        # the tool of the CPU columns (sar > mpstat > iostat > vmstat)
    disk_tool: str | None = None       # the tool of the disk columns (sar > iostat)
    chart_json: str | None = None      # the values of its CHART_COLUMNS as one JSON object, the text compact
                                       # json.dumps writes (made by the query; None: the renderer makes it)


@dataclass
class RunPage:
    """Everything the page of one run shows (site only; generated for every run of the report)."""

    info: RunInfo                      # origin, status, factors, raw files (with their published URLs)
    factors: list[tuple[Words, Words]]  # (factor name, value label), in the report's order
    condition: list[ProvenanceRun]     # the runs of its condition (itself included), by rep
    end: str | None = None             # end time
    status_note: str | None = None
    metrics: list[RunMetric] = field(default_factory=list)
    uses: list[RunUse] = field(default_factory=list)  # every table and figure that uses it, in report order
    series: RunSeries | None = None    # per-second series, when the run has any
    commands: list[tuple[str, str]] = field(default_factory=list)  # run.toml [commands]: name, command line
    commands_relative: bool = False    # its paths under the campaign directory printed relative to it
    meta: list[tuple[str, str]] = field(default_factory=list)  # run.toml top-level scalars (exit_code, notes, …)
    machine: list[tuple[Words, Any]] = field(default_factory=list)  # run.toml [machine]: label, value
    versions: list[tuple[str, str]] = field(default_factory=list)   # run.toml [versions]: tool, version
    settings: list[tuple[str, str]] = field(default_factory=list)   # PostgreSQL settings captured ([server])
    settings_kind: str = "non_default"  # non_default (pg_settings source <> default) | captured (all captured)
    syscalls: list[dict[str, Any]] = field(default_factory=list)  # strace -c: top syscalls by time
    fio: list[dict[str, Any]] = field(default_factory=list)       # fio jobs: direction, bw, iops, latency
    events: list[dict[str, Any]] = field(default_factory=list)    # marks on its time axis: kind, at, until (s
                                                                  # since its start), label (Words)
    key: str | None = None  # the sha256 of everything the page shows (report/cache.py run_page_key), when known:
                            # a page of the same key shows the same (the renderer keeps its files by it)


@dataclass
class KeptRunPage:
    """A run page the last build made under the same key (report/cache.py ``run_page_key``), not read back: the
    renderer keeps its files as they were written (render/run_pages.py), and reads the whole page (``full``)
    only when they must be written again. Deliberately not a RunPage: what only the whole page knows (its
    metrics, series, events) cannot be read from it by mistake."""

    info: RunInfo       # the report's own record of the run (its raw files' URLs)
    key: str
    has_series: bool    # whether the page has per-second series (and so a CSV file)
    load: Any           # () -> RunPage: the whole page, from the cache (or computed again when it cannot be read)

    def full(self) -> RunPage:
        return self.load()


@dataclass
class Environment:
    """The test-environment appendix: machines, tool versions and PostgreSQL settings of the measured runs."""

    runs: int = 0                                                  # measured runs with a capture
    without_capture: int = 0                                       # measured runs without one
    machines: list[dict[str, Any]] = field(default_factory=list)   # {id, name: Words, values: [str | Words], runs, where}
    machine_fields: list[Words] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)   # {tool, values: [{value, runs}]}
    settings: list[dict[str, Any]] = field(default_factory=list)   # {name, values: [{value, runs, where}]}
    settings_kind: str = "non_default"                             # non_default | captured
    # settings that differ between runs: the runs grouped into configurations (columns), one row per setting
    settings_configs: list[dict[str, Any]] = field(default_factory=list)  # {runs, where, where_pairs?, label?, where_text}
    settings_varying: list[dict[str, Any]] = field(default_factory=list)  # {name, values: [str per config]}
    settings_without_server: dict[str, Any] | None = None  # {runs, where}: runs without a PostgreSQL server
    # the environment the cited reports state for the transcribed runs (report/environment.py)
    transcribed: list[dict[str, Any]] = field(default_factory=list)  # {citation, source, runs, fields: [{label, value}]}
    transcribed_without: int = 0                                   # transcribed runs whose source states none


@dataclass
class Author:
    name: Words
    affiliation: Words | None
    chapters: list[dict[str, Any]]     # the chapters written: {id, number, title}



@dataclass
class Revision:
    revision: str                      # "1.1"
    date: str
    changes: Words                     # what changed



@dataclass
class Script:
    """A pgbench script (``-f``) that a block's command ran, as kept with its runs."""

    name: str                          # as the command names it, relative to the campaign root ("scripts/read.sql")
    text: str | None                   # the script as stored with the runs; None: no run kept a copy
    sha256: str | None
    runs: int                          # runs that kept this copy



@dataclass
class CommandBlock:
    """How a group of a chapter's runs was run, from their run.toml: ``{{< commands >}}`` in the prose.

    One block per pgbench script (or per program without scripts). Values that differ between the runs are
    printed as ``[name]`` and listed under the command; options that only some runs used are in ``[ ]`` with
    the runs they were used in."""

    program: str                       # "pgbench"
    runs: int                          # runs the block describes
    setup: list[Words]                 # commands run before groups of runs (the campaign plan's [[setup]])
    command: Words                     # the benchmark command as a template
    varying: list[Words]               # "[threads]: 1, 1, 2, 4 (clients 1, 2, 4, 8)"
    optional: list[Words]              # "[-l --sampling-rate=0.02]: rep = 1"
    scripts: list[Script] = field(default_factory=list)



@dataclass
class MethodNote:
    """One section of the generated methods page (aggregation, spread, verdicts, runs, steady state)."""

    id: str                            # aggregate | spread | verdict | interval | runs | steady
    title: Words
    text: Words



@dataclass
class MissingFigure:
    """A figure of the original report that is not drawn: listed on its chapter's page with the reason."""

    number: str                        # as printed
    label: Words                       # ``図 3.4`` / ``Figure 3.4``
    caption: Words                     # as printed
    reason: Words                      # why it is not drawn (i18n figure_missing_<reason>)
    note: Words | None = None          # what exactly is missing



@dataclass
class Chapter:
    id: str                                                   # the spec's chapter id (file stem of its prose)
    number: int
    title: Words
    tables: dict[str, Table] = field(default_factory=dict)    # by id
    figures: dict[str, Figure] = field(default_factory=dict)  # by id
    order: list[str] = field(default_factory=list)   # item ids in spec order
    commands: list[CommandBlock] = field(default_factory=list)  # how its runs were run (run.toml commands)
    # the machines its runs ran on (report/machines.py): {machines: [{id, name, role, runs, cpu, memory, os,
    # virtualization, storage}], span: bool (runs on different machines), machine_count, summary: Words (the
    # sentence above the block), unknown: runs without a capture, with_roles: bool (several host roles)}
    machines: dict[str, Any] = field(default_factory=dict)
    missing_figures: list[MissingFigure] = field(default_factory=list)  # figures of the original not drawn, why


@dataclass
class BoundValue:
    """A number the prose states through the data (``{{< val … >}}``, report/values.py): what it prints, what
    it is and where it comes from, in each language."""

    text: Words                        # as printed in the sentence ("7481.0", "72.2 %", "worse (beyond …)")
    title: Words                       # what it is: "Table 6.1, no replication, TPS (median)" (the hover)
    anchor: str                        # the table or figure it comes from, on the chapter's page ("table-x")
    value: float | None = None         # the number, when it is one (a verdict is words)
    chapter: str | None = None         # the chapter whose page holds the anchor (a link from another page)



@dataclass
class Finding:
    """A key result of a chapter (a table's ``key`` in the spec), listed on the report's cover: the cell's
    value, its comparison and verdict, printed from the data, with a link to its table."""

    chapter_id: str                    # the chapter's page
    chapter: Words                     # "6. Streaming replication"
    label: Words                       # what the spec calls the result ("one synchronous standby")
    value: BoundValue                  # the cell's value (its title says what it is)
    table: Words                       # "Table 6.1"
    compare: BoundValue | None = None  # its comparison with the table's baseline ("50.4 %")
    verdict: Words | None = None       # that comparison's verdict in words
    verdict_kind: str | None = None    # better | worse | changed | within_noise | too_few_runs



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
    transcribed: Words | None = None   # the footer of a report with transcribed numbers: the original
                                       # reports they come from (title, year)
    methods: list[MethodNote] = field(default_factory=list)  # the methods page: how values were aggregated
                                                             # and comparisons decided (report/methods.py)
    compares: list[Comparison] = field(default_factory=list)  # [[compare]] pages, in spec order
    run_pages: dict[str, RunPage] = field(default_factory=dict)  # run id -> its page (site only; written
                                                                  # one file per run, not in the report's page data)
    values: dict[str, BoundValue] = field(default_factory=dict)  # the prose's bound values, by their
                                                                  # shortcode's arguments (report/values.py key)
    findings: list[Finding] = field(default_factory=list)  # the chapters' key results, for the cover
    records_key: str | None = field(default=None, metadata=UNPUBLISHED)  # the key of ``runs`` and of what is
                                       # made of them alone (report/runs.py records_key; None: not kept)

    def chapter(self, chapter_id: str) -> Chapter | None:
        return next((c for c in self.chapters if c.id == chapter_id), None)

    def tables(self) -> list[Table]:
        return [t for c in self.chapters for t in c.tables.values()]

    def figures(self) -> list[Figure]:
        return [f for c in self.chapters for f in c.figures.values()]


@dataclass
class Trends:
    """The cross-year view (config.toml ``[[params.trends]]``): one figure per trend."""

    figures: list[Figure] = field(default_factory=list)
    title: Words = field(default_factory=dict)  # the cross-year page's title
