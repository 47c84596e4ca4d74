"""The page-ready data of a computed report: what the site's templates (``data/reports/<id>.json``) and the PDF's
blocks read besides the views (``render/views.py``), as typed records serialised by ``model.encode``.

A record holds what a template reads of a model record (a table's identity and runs, not its cells: the cells
are in its view), under the names the templates use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kansoku.model import (
    LANGS,
    Chapter,
    Comparison,
    ComputedReport,
    Figure,
    Provenance,
    Revision,
    RunInfo,
    Table,
    Trends,
    Words,
    encode,
)


@dataclass
class TableData:
    """What the site reads of a table besides its view: its identity, its runs and their grouping (the
    provenance panel, the data-sources page), the published sources of transcribed values."""

    id: str
    number: str
    label: Words
    caption: Words
    runs: list[str]
    prov: Provenance
    kind: str = "table"


@dataclass
class FigureData:
    """A figure's page-ready data without its drawing (the site's renderer adds ``figure``: the plotly figure
    per language)."""

    id: str
    number: str
    chart: str
    label: Words
    caption: Words
    footnote: Words | None
    runs: list[str]
    transcribed: bool
    prov: Provenance
    points: int | None = None                    # cross-year figures: number of points
    trend: dict[str, Any] | None = None          # cross-year figures: the table under the chart
    kind: str = "figure"


@dataclass
class CompareData:
    """What the site reads of a comparison besides its view."""

    id: str
    page: str
    title: Words
    runs: int                                    # how many runs either side has


@dataclass
class ChapterData:
    id: str
    number: int
    title: Words
    tables: dict[str, TableData]
    figures: dict[str, FigureData]


@dataclass
class PageData:
    """A page of the report in reading order, with its neighbours (the site's pager)."""

    id: str
    kind: str
    weight: int
    number: int | None
    title: dict[str, str]
    in_pdf: bool
    prev: str | None
    next: str | None
    missing: dict[str, bool]                     # language -> the page has no prose of its own in it
    path: dict[str, str]                         # language -> its address under the site's root (page_path)


@dataclass
class ReportData:
    """One report's page-ready data (``data/reports/<id>.json``)."""

    id: str
    fiscal_year: int
    title: Words
    subtitle: Words | None
    organisation: Words
    revision: str
    copyright: str | None
    license: Words | None
    revision_history: list[Revision]
    themes: dict[str, list[str]]
    publish_raw: bool
    chapters: list[ChapterData]
    runs: dict[str, RunInfo]
    pages: list[PageData]
    path: dict[str, str]                         # language -> the cover's address under the site's root
    site_url: str | None
    pdf: dict[str, str]
    transcribed: Words | None
    compares: dict[str, CompareData]


def table_data(t: Table) -> TableData:
    return TableData(t.id, t.number, t.label, t.caption, t.runs, t.provenance)


def figure_data(f: Figure) -> FigureData:
    return FigureData(f.id, f.number, f.chart, f.label, f.caption, f.footnote, f.runs, f.transcribed, f.provenance,
                      f.points, f.trend if f.points is not None else None)


def chapter_data(c: Chapter) -> ChapterData:
    return ChapterData(c.id, c.number, c.title, {k: table_data(t) for k, t in c.tables.items()},
                       {k: figure_data(f) for k, f in c.figures.items()})


def compare_data(c: Comparison) -> CompareData:
    return CompareData(c.id, c.page, c.title, len(c.runs))


def page_path(report_id: str, page_id: str | None, lang: str) -> str:
    """The address of a page of a report under the site's root (``page_id`` None: its cover), as Hugo makes it
    from the page's content file ``reports/<report>/<page>.<lang>.md`` (a page's front matter may not name another:
    report/structure.py). The templates link a report's pages by it, not by looking the page up: a page looked
    up is a page Hugo's server renders again whenever it is edited (docs/build-performance.md)."""
    return f"{lang}/reports/{report_id}/" + (f"{page_id}/" if page_id else "")


def sources_part_id(sources_id: str, k: int) -> str:
    """The page id of part ``k`` of the data-sources page ``sources_id`` (part 1: the page itself)."""
    return sources_id if k == 1 else f"{sources_id}-{k}"


# The folder of a report's content holding the data-sources page's parts 2.. (render/hugo.py sources_parts), each at
# the address page_path gives it: beside the report's own pages, every edit of its cover under kansoku serve would
# have Hugo read them again, and render them (Hugo reads again the files of an edited section's own folder)
SOURCES_PARTS_DIR = "sources-parts"


def sources_part_source(report_id: str, part_id: str) -> str:
    """The content path (Hugo's, without language and extension) of a part 2.. of a report's data-sources page."""
    return f"reports/{report_id}/{SOURCES_PARTS_DIR}/{part_id}"


def pages_data(rep: ComputedReport) -> list[PageData]:
    pages = rep.pages
    return [PageData(p.id, p.kind, p.weight, p.number, p.title, p.in_pdf, pages[i - 1].id if i > 0 else None,
                     pages[i + 1].id if i + 1 < len(pages) else None, {lang: p.missing(lang) for lang in LANGS},
                     {lang: page_path(rep.id, p.id, lang) for lang in LANGS})
            for i, p in enumerate(pages)]


def report_data(rep: ComputedReport, with_runs: bool = True) -> dict[str, Any]:
    """The report's page-ready data, encoded (the renderers add the views and the drawn figures to it).
    ``with_runs`` false: ``runs`` left empty, for a renderer that has them encoded (render/hugo.py runs_data)."""
    return encode(ReportData(
        id=rep.id, fiscal_year=rep.fiscal_year, title=rep.title, subtitle=rep.subtitle,
        organisation=rep.organisation, revision=rep.revision, copyright=rep.copyright, license=rep.license,
        revision_history=rep.revision_history, themes=rep.themes, publish_raw=rep.publish_raw,
        chapters=[chapter_data(c) for c in rep.chapters], runs=rep.runs if with_runs else {}, pages=pages_data(rep),
        path={lang: page_path(rep.id, None, lang) for lang in LANGS}, site_url=rep.site_url, pdf=rep.pdf, transcribed=rep.transcribed,
        compares={c.id: compare_data(c) for c in rep.compares}))


def trends_data(trends: Trends) -> dict[str, Any]:
    """The cross-year view's page-ready data: its figures (the site's renderer adds their drawings)."""
    return {"figures": [encode(figure_data(f)) for f in trends.figures]}
