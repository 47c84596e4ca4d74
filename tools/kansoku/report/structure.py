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

Weights: introduction 0, chapter N -> N, closing 900, authors 910, appendix
950, sources 990; other prose pages keep their front-matter weight.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.spec.model import LANGS, Report

FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n?", re.S)

DEFAULT_TITLES = {
    "introduction": {"ja": "はじめに", "en": "Introduction"},
    "closing": {"ja": "おわりに", "en": "Closing words"},
    "authors": {"ja": "著者", "en": "Authors"},
    "appendix": {"ja": "付録 検証環境", "en": "Appendix: test environment"},
    "sources": {"ja": "元データ一覧", "en": "Data sources"},
}
WEIGHTS = {"introduction": 0, "closing": 900, "authors": 910, "appendix": 950, "sources": 990}
SITE_ONLY = {"sources"}


@dataclass
class Page:
    id: str                          # file stem: 'introduction', a chapter id, 'closing', ...
    kind: str                        # introduction | chapter | closing | authors | appendix | sources | page
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

    def generated_body(self, report: Report) -> str:
        """Body for a page without prose in any language: shortcodes only (shared with the PDF)."""
        if self.kind == "chapter":
            ch = next(c for c in report.chapters if c.id == self.id)
            return "\n\n".join(("{{< tbl \"%s\" >}}" if it.kind == "table" else "{{< fig \"%s\" >}}") % it.id
                               for it in ch.items) + "\n"
        if self.kind == "authors":
            return "{{< authors >}}\n"
        if self.kind == "appendix":
            return "{{< environment >}}\n"
        return ""


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Top-level ``key: value`` lines of a YAML front matter (the subset our pages use) and the body."""
    m = FRONT_MATTER.match(text)
    if not m:
        return {}, text
    front: dict[str, Any] = {}
    for line in m.group(1).splitlines():
        km = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$", line)
        if not km:
            continue
        key, raw = km.group(1), km.group(2).strip()
        front[key] = _scalar(raw)
    return front, text[m.end():]


def _scalar(raw: str) -> Any:
    if raw == "":
        return None
    try:
        return json.loads(raw)  # "quoted", 12, true, ["a", "b"]
    except ValueError:
        pass
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    return raw


def _prose(content_dir: Path, stem: str) -> tuple[dict[str, Path | None], dict[str, dict]]:
    files: dict[str, Path | None] = {}
    fronts: dict[str, dict] = {}
    for lang in LANGS:
        p = content_dir / f"{stem}.{lang}.md"
        files[lang] = p if p.is_file() else None
        if files[lang]:
            fronts[lang] = parse_front_matter(p.read_text(encoding="utf-8"))[0]
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
    """The report's pages after the cover, in reading order. ``site=False`` leaves out site-only pages."""
    content_dir = content_root / report.id
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
    add("closing", "closing", WEIGHTS["closing"], DEFAULT_TITLES["closing"], always=False)
    add("authors", "authors", WEIGHTS["authors"], DEFAULT_TITLES["authors"],
        always=bool(report.raw.get("report", {}).get("author")))
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
