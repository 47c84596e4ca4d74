"""The pages of a report, in reading order: one structure for the site and the PDF.

The consortium's reports (seeds FY2013, FY2017) read: cover (with revision
history and license), introduction, one chapter per study, closing words,
authors, appendix (test environment). Prose lives in
``content/reports/<report-id>/<page-id>.<lang>.md``; this module lists the pages
a report has, in order, with their titles in both languages and which prose
file (if any) each language has. What to show for a page that has no prose in
a language is decided here too (``fallback``), so both outputs agree:

- prose in the other language exists: show it, with a visible notice;
- no prose in either language: chapters show their tables and figures in spec
  order, ``authors`` is generated from the spec's ``[[report.author]]``,
  ``appendix`` from the runs' captures (``{{< environment >}}``), ``sources``
  (site only) lists every run and raw file; an introduction or closing without
  prose is left out rather than shown empty.

Weights: introduction 0, chapter N -> N, closing 900, authors 910, methods 940
(generated for a report with comparisons: how values are aggregated and verdicts decided), appendix
950, sources 990; other prose pages keep their front-matter weight.

Front matter is read as Hugo reads it (YAML with PyYAML, TOML with tomllib, JSON),
and every prose page is checked against the spec (:func:`page_problems`): a page
that would be left out or misplaced is a spec error naming the file, never a
silent orphan.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from kansoku import shortcodes, words
from kansoku.errors import SpecError
from kansoku.front_matter import parse_front_matter
from kansoku.model import Page
from kansoku.spec.model import LANGS, Report
from kansoku.spec.validate import Problem, SpecProblems, did_you_mean

# titles of the pages a report has without prose of its own (words: i18n page_title_<kind>)
DEFAULT_TITLES = {kind: words.both(f"page_title_{kind}")
                  for kind in ("introduction", "closing", "authors", "methods", "appendix", "sources")}
WEIGHTS = {"introduction": 0, "compare": 800, "closing": 900, "authors": 910, "methods": 940, "appendix": 950,
           "sources": 990}
SITE_ONLY = {"sources"}


def generated_body(page: Page, report: Report) -> str:
    """Body for a page without prose in any language: shortcodes only (shared with the PDF)."""
    if page.kind == "chapter":
        ch = next(c for c in report.chapters if c.id == page.id)
        return "\n\n".join(("{{< tbl \"%s\" >}}" if it.kind == "table" else "{{< fig \"%s\" >}}") % it.id
                           for it in ch.items) + "\n"
    if page.kind == "compare":
        return "{{< compare \"%s\" >}}\n" % page.id.removeprefix("compare-")
    if page.kind == "authors":
        return "{{< authors >}}\n"
    if page.kind == "appendix":
        return "{{< environment >}}\n"
    if page.kind == "methods":
        return "{{< methods >}}\n"
    return ""


def _prose(content_dir: Path, stem: str) -> tuple[dict[str, Path | None], dict[str, dict]]:
    files: dict[str, Path | None] = {}
    fronts: dict[str, dict] = {}
    for lang in LANGS:
        p = content_dir / f"{stem}.{lang}.md"
        files[lang] = p if p.is_file() else None
        if files[lang]:
            fronts[lang] = parse_front_matter(p.read_text(encoding="utf-8"), p)[0]
    return files, fronts


def _titles(default: dict[str, str], fronts: dict[str, dict]) -> dict[str, str]:
    """A language's title: its own front matter, else the default in that language, else the other's title."""
    out = {}
    for lang in LANGS:
        t = fronts.get(lang, {}).get("title")
        if not t:
            t = default.get(lang) or next((f.get("title") for f in fronts.values() if f.get("title")), "")
        out[lang] = str(t)
    return out


def report_pages(report: Report, content_root: Path = Path("content/reports"), *, site: bool = True) -> list[Page]:
    """The report's pages after the cover, in reading order. ``site=False`` leaves out site-only pages.
    A prose page that does not fit the spec (see :func:`page_problems`) is a spec error (exit 3)."""
    content_dir = content_root / report.id
    problems = page_problems(report, content_root)
    if problems:
        raise SpecProblems(problems)
    pages: list[Page] = []
    known: set[str] = set()

    def add(stem: str, kind: str, weight: int, default_title: dict[str, str], *, always: bool,
            number: int | None = None) -> None:
        files, fronts = _prose(content_dir, stem)
        known.add(stem)
        if not always and not any(files.values()):
            return
        pages.append(Page(stem, kind, weight, _titles(default_title, fronts), files, number,
                          in_pdf=kind not in SITE_ONLY, front=fronts))

    add("introduction", "introduction", WEIGHTS["introduction"], DEFAULT_TITLES["introduction"], always=False)
    for ch in report.chapters:
        add(ch.id, "chapter", ch.number, ch.title.as_dict(), always=True, number=ch.number)
    for i, c in enumerate(getattr(report, "compares", [])):  # [[compare]] pages, after the chapters
        add(c.page_id, "compare", WEIGHTS["compare"] + i, c.title.as_dict(), always=True)
    add("closing", "closing", WEIGHTS["closing"], DEFAULT_TITLES["closing"], always=False)
    add("authors", "authors", WEIGHTS["authors"], DEFAULT_TITLES["authors"],
        always=bool(report.raw.get("report", {}).get("author")))
    # how values were aggregated and comparisons decided: generated for every report with a comparison
    add("methods", "methods", WEIGHTS["methods"], DEFAULT_TITLES["methods"],
        always=any(it.kind == "table" and it.baseline is not None for ch in report.chapters for it in ch.items))
    add("appendix", "appendix", WEIGHTS["appendix"], DEFAULT_TITLES["appendix"], always=True)
    if site:
        add("sources", "sources", WEIGHTS["sources"], DEFAULT_TITLES["sources"], always=True)
    # Any other prose page of the report keeps its place by front-matter weight.
    if content_dir.is_dir():
        stems = sorted({p.name.split(".")[0] for p in content_dir.glob("*.md")} - known - {"_index"})
        for stem in stems:
            files, fronts = _prose(content_dir, stem)
            w = next((f.get("weight") for f in fronts.values() if isinstance(f.get("weight"), int)), 500)
            pages.append(Page(stem, "page", w, _titles({}, fronts), files, front=fronts))
    pages.sort(key=lambda p: (p.weight, p.id))
    return pages


FIXED_STEMS = set(WEIGHTS) | {"_index"}


def placed_items(body: str, line_offset: int) -> list[shortcodes.Shortcode]:
    """The tables and figures a page places (``{{< tbl "id" >}}``, ``{{< fig "id" >}}``)."""
    return [sc for sc in shortcodes.parse(body, line_offset) if sc.name in ("tbl", "fig") and sc.args]


def page_problems(report: Report, content_root: Path = Path("content/reports")) -> list:
    """Prose pages of a report that do not fit its spec, each naming the file (and line):

    - a file not named ``<page>.<lang>.md`` with a language of the site;
    - front matter that does not parse, or whose ``report`` is another report;
    - a page whose ``chapter`` is not a chapter of the spec, or that is named after another chapter
      (the page of chapter ``scaleup`` is ``scaleup.<lang>.md``), or whose ``chapter_number`` differs;
    - a page named like no page of the report but like one of its chapters (a chapter renamed in the
      spec, not in content/), or a page that is not a chapter's but places tables or figures;
    - a table or figure placed on a chapter's page that the chapter does not declare.
    """
    content_dir = content_root / report.id
    out: list = []
    if not content_dir.is_dir():
        return out
    chapters = {ch.id: ch for ch in report.chapters}
    spec = report.spec_file

    def add(f: Path, line: int | None, message: str) -> None:
        out.append(Problem(f, line, (), message))

    for f in sorted(content_dir.glob("*.md")):
        parts = f.name.split(".")
        if len(parts) != 3 or parts[1] not in LANGS:
            add(f, None, f"a page of report {report.id!r} is named <page>.<lang>.md with lang one of "
                         f"{', '.join(LANGS)} (e.g. {parts[0]}.{LANGS[0]}.md)")
            continue
        stem = parts[0]
        text = f.read_text(encoding="utf-8")
        try:
            front, body = parse_front_matter(text, f)
        except SpecError as exc:
            lm = re.search(r":(\d+)$", exc.spec_file)
            add(f, int(lm.group(1)) if lm else None, str(exc)[len(exc.spec_file) + 2:])
            continue

        def line_of(key: str) -> int | None:
            m = re.search(rf"^{re.escape(key)}\s*[:=]", text, re.M)
            return text.count("\n", 0, m.start()) + 1 if m else None

        for key in ("url", "slug"):  # the pages link each other by their files' addresses (render/page_data.py)
            if key in front:
                address = f"/<lang>/reports/{report.id}/" + ("" if stem == "_index" else f"{stem}/")
                add(f, line_of(key), f"{key}: a page of a report is at the address of its file ({address}); "
                                     f"remove {key}")
        rep = front.get("report")
        if rep is not None and str(rep) != report.id:
            add(f, line_of("report"), f"report: {rep!r}, but the page is in {content_dir} (report {report.id!r})")
        ch_key = front.get("chapter")
        chapter = None
        if ch_key is not None:
            ch_key = str(ch_key)
            if ch_key not in chapters:
                add(f, line_of("chapter"), f"chapter {ch_key!r} is not a chapter of report {report.id!r} ({spec})"
                    + (did_you_mean(ch_key, chapters) or f"; its chapters: {sorted(chapters)}"))
            elif stem != ch_key:
                add(f, None, f"this is the page of chapter {ch_key!r}: name it {ch_key}.{parts[1]}.md")
            else:
                chapter = chapters[ch_key]
        elif stem in chapters:
            chapter = chapters[stem]
        if chapter is not None and "chapter_number" in front and front["chapter_number"] != chapter.number:
            add(f, line_of("chapter_number"), f"chapter_number: {front['chapter_number']!r}, but chapter "
                                              f"{chapter.id!r} is number {chapter.number} in {spec}")
        offset = text.count("\n", 0, len(text) - len(body))
        if ch_key is None and stem not in chapters and stem not in FIXED_STEMS:
            hint = did_you_mean(stem, chapters)
            if hint:
                add(f, None, f"no chapter {stem!r} in {spec}{hint} (a chapter's page is <chapter id>.<lang>.md)")
                continue
            for sc in placed_items(body, offset):
                add(f, sc.line, f"places {sc.name} {sc.args[0]!r} but is not the page of a chapter of {spec}")
                break
            continue
        if chapter is None:  # introduction, closing …: Hugo would stop on the shortcode with "%!q(<nil>)"
            if ch_key is not None:
                continue  # a chapter page misnamed or naming no chapter: said above, once
            for sc in placed_items(body, offset):
                kind = "table" if sc.name == "tbl" else "figure"
                add(f, sc.line,
                    f"places {kind} {sc.args[0]!r}, but {f.name} is not the page of a chapter: "
                    f"tables and figures are declared in a chapter of {spec} and placed on that chapter's page")
            continue
        declared = {("tbl" if it.kind == "table" else "fig", it.id) for it in chapter.items}
        for sc in placed_items(body, offset):
            if (sc.name, sc.args[0]) not in declared:
                kind = "table" if sc.name == "tbl" else "figure"
                ids = [i for k, i in declared if k == sc.name]
                add(f, sc.line, f"{kind} {sc.args[0]!r} is not declared in chapter {chapter.id!r} of {spec}"
                    + did_you_mean(sc.args[0], ids))
    return out


def content_problems(reports: list[Report], content_root: Path = Path("content/reports"),
                     unchecked: Iterable[str] = ()) -> list:
    """Every page problem of every report, and report directories in content/ that no spec declares
    (``unchecked``: ids of reports whose spec could not be read; their pages are not checked)."""
    out: list = []
    ids = {r.id for r in reports} | set(unchecked)
    if content_root.is_dir():
        for d in sorted(p for p in content_root.iterdir() if p.is_dir()):
            if d.name not in ids:
                out.append(Problem(d, None, (), f"no report spec declares report {d.name!r}"
                                   + (did_you_mean(d.name, ids) or f"; reports: {sorted(ids)}")))
    for r in reports:
        out += page_problems(r, content_root)
    return out
