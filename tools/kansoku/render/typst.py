"""PDF export: the whole report as the site shows it, one language per PDF, via pandoc (-t typst) and typst.

Reading order and content are the site's (report/structure.py decides both): title page, revision history and
license, table of contents, then every page of ``report_pages(site=False)`` (introduction, one chapter per
study with its sections, closing, authors, appendix). Prose comes from the same Markdown pages
(``content/reports/<id>/<page>.<lang>.md``, pandoc's Markdown reader) and every number, label and caption
from the same computed report as the site (``report.build.compute_report``), so ``表 2.2`` and ``図 2.1`` are the same
objects in both outputs.

The Hugo shortcodes the site supports are replaced by raw typst (``SHORTCODES``): ``tbl`` (a real typst
table, header rows repeated across pages, transcribed † and mismatch ! marks with their legend), ``fig``
(the plotly figure exported to SVG with the language's labels), ``authors`` and ``environment``. An
unknown shortcode is an error naming the page and line.

Charts: every figure of every requested language is exported in ONE kaleido batch (one chromium start),
with the fonts typst will use to draw the SVG text. Fonts are checked before anything is computed: a
missing Japanese font or a missing chromium stops the build with what to install (exit 5).
$KANSOKU_FONT_DIRS (directories, os.pathsep-separated) replaces the system fonts with those directories.

Japanese: typst sets the text with ``lang: "ja"`` (line breaking by the Unicode rules with Japanese
kinsoku, small spaces between Japanese and Latin letters); a line break inside a Japanese paragraph of
the Markdown is removed rather than turned into a space (``join_cjk_lines``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from kansoku import words
from kansoku.render.charts._draw import escape_plotly
from kansoku.errors import KansokuError, MissingToolError
from kansoku.report.model import ComputedReport, Figure, Table
from kansoku.report.structure import Page, parse_front_matter

LANGS = words.LANGS

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = Path(__file__).with_name("templates") / "report.typ"
I18N_DIR = words.I18N_DIR

# Fonts per role, in order of preference; each role needs at least one present (``check_fonts``).
# "Libertinus Serif" and "DejaVu Sans Mono" are embedded in typst itself.
CJK_SERIF = ["IPAexMincho", "Noto Serif CJK JP"]
CJK_SANS = ["IPAexGothic", "Noto Sans CJK JP"]
FONTS = {
    "ja": {"body": CJK_SERIF, "sans": CJK_SANS, "mono": ["DejaVu Sans Mono", "Liberation Mono"]},
    "en": {"body": ["Libertinus Serif", "Liberation Serif", "DejaVu Serif"],
           "sans": ["DejaVu Sans", "Liberation Sans"], "mono": ["DejaVu Sans Mono", "Liberation Mono"]},
}
FONT_PACKAGES = {
    "IPAexMincho": "fonts-ipaexfont-mincho", "IPAexGothic": "fonts-ipaexfont-gothic",
    "Noto Serif CJK JP": "fonts-noto-cjk", "Noto Sans CJK JP": "fonts-noto-cjk",
    "DejaVu Sans": "fonts-dejavu-core", "DejaVu Serif": "fonts-dejavu-core", "DejaVu Sans Mono": "fonts-dejavu-core",
    "Liberation Serif": "fonts-liberation", "Liberation Sans": "fonts-liberation", "Liberation Mono": "fonts-liberation",
}
FONT_DIRS_ENV = "KANSOKU_FONT_DIRS"   # os.pathsep-separated; set: only these dirs (+ typst's own fonts)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")

# Hugo shortcodes: {{< name args >}} and {{% name args %}}; {{</* ... */>}} is Hugo's escaped (literal) form.
SHORTCODE = re.compile(r"\{\{(<|%)\s*(/\*.*?\*/|[^>%]*?)\s*(>|%)\}\}", re.S)
SHORTCODES = ("tbl", "fig", "authors", "environment", "commands", "methods", "compare")

CHART_WIDTH_PX = 700          # SVG export size; printed at the text width (about 0.67 pt per px)
CHART_HEIGHT_PX = 420
TEXT_WIDTH_PT = 470           # A4 minus 2 x 22 mm
MAX_CHART_HEIGHT_PT = 560

# verdict marks in the PDF (the site's symbols): readable in black and white; fills a colour-blind-safe pair
VERDICT_MARKS = {"better": "✓", "worse": "✗", "within-noise": "≈", "too-few-runs": "?"}
VERDICT_FILLS = {"better": "#dbe9f8", "worse": "#fbe3cc"}


@dataclass
class PdfResult:
    path: Path
    pages: int
    seconds: float
    lang: str = ""


# -- typst helpers ------------------------------------------------------------------------------------

def typst_str(s: Any) -> str:
    """A typst string literal."""
    s = str(s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "") + '"'


def tx(s: Any) -> str:
    """Text placed in typst markup, verbatim (a string expression: no markup is interpreted)."""
    return "#" + typst_str(s)


def fonts_literal(names: list[str]) -> str:
    return "(" + ", ".join(typst_str(n) for n in names) + ",)"


def para(s: Any) -> str:
    """A paragraph of verbatim text (raw blocks that follow each other are not separated by pandoc)."""
    return f"#block({typst_str(s)})"


def raw_block(body: str) -> str:
    """A raw typst block inside the Markdown given to pandoc (blank lines around: a block of its own)."""
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", body)), default=0) + 1)
    return f"\n\n{fence}{{=typst}}\n{body}\n{fence}\n\n"


def soft_breaks(s: str, limit: int = 24) -> str:
    """Allow line breaks inside long unbroken tokens (paths, settings) after / , = _ ; : (zero-width space)."""
    def fix(m: re.Match) -> str:
        return re.sub(r"([/,=_;:])(?=.)", "\\1\u200b", m.group(0))
    return re.sub(r"\S{%d,}" % limit, fix, s)


# A line break inside a Japanese paragraph is no space: join the lines when either side of the break is
# Japanese (typst adds its own small space between Japanese and Latin letters). Not before a new block
# (list item, heading, quote, table, fence), and never inside fenced code or raw typst blocks.
CJK_CHAR = r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
JOIN = re.compile(r"(?:(?<=%s)\n[ \t]*(?=[^\s])|(?<=[^\s\\])\n[ \t]*(?=%s))(?![-*+#>|<]|`{3}|~{3}|\d+[.)]\s)"
                  % (CJK_CHAR, CJK_CHAR))


def join_cjk_lines(md: str) -> str:
    out, fence = [], None
    for part in re.split(r"(^(?:`{3,}|~{3,}).*$)", md, flags=re.M):
        if re.match(r"^(`{3,}|~{3,})", part or ""):
            mark = re.match(r"^(`{3,}|~{3,})", part).group(1)
            if fence is None:
                fence = mark
            elif mark.startswith(fence[0]) and len(mark) >= len(fence) and part.strip() == mark:
                fence = None
            out.append(part)
        elif fence is None:
            out.append(JOIN.sub("", part))
        else:
            out.append(part)
    return "".join(out)


def pick(v: Any, lang: str) -> str:
    if isinstance(v, dict):
        return str(v.get(lang) or v.get("en" if lang == "ja" else "ja") or "")
    return "" if v is None else str(v)


# -- UI strings: the site's i18n files, so both outputs say the same --------------------------------------

def table_cell(text: str, *, fill: str | None = None, notes: list[str] | None = None) -> dict[str, Any]:
    """One body cell for templates/table.typ.j2 (every key the template reads: marks and ``below`` added later)."""
    return {"text": text, "marks": [], "fill": fill, "notes": notes or [], "below": None}


class UI:
    """The words of one language (kansoku.words: the site's i18n files, so both outputs say the same)."""

    def __init__(self, lang: str):
        self.lang = lang

    def __call__(self, key: str, arg: Any = None, **named: Any) -> str:
        try:
            return words.t(self.lang, key, arg, **named)
        except KeyError as exc:
            raise KansokuError(f"{exc.args[0]} (needed by the PDF)") from None


# -- templates: raw typst for tables and figures ---------------------------------------------------------

def _finalize(v: Any) -> Any:
    """Every placed value is verbatim text unless this renderer marked it as its own code (|raw, |str)."""
    return v if isinstance(v, Markup) else Markup(tx(v))


TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE.parent), finalize=_finalize,
                               autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=False)
TEMPLATES.filters["str"] = lambda v: Markup(typst_str(v))
TEMPLATES.filters["raw"] = lambda v: Markup(str(v))


# -- preflight: fonts and chromium ----------------------------------------------------------------------

@dataclass
class FontSet:
    font_paths: list[str]
    ignore_system: bool
    families: set[str]

    def available(self, names: list[str]) -> list[str]:
        return [n for n in names if n in self.families]


def font_set(font_dirs: list[str] | None = None) -> FontSet:
    """The fonts typst will see: system fonts (or only ``font_dirs`` / $KANSOKU_FONT_DIRS) and its own."""
    import typst

    if font_dirs is None and os.environ.get(FONT_DIRS_ENV):
        font_dirs = [d for d in os.environ[FONT_DIRS_ENV].split(os.pathsep) if d]
    ignore_system = font_dirs is not None
    paths = [d for d in (font_dirs or []) if Path(d).is_dir()]
    fonts = typst.Fonts(include_system_fonts=not ignore_system, include_embedded_fonts=True, font_paths=paths)
    return FontSet(paths, ignore_system, set(fonts.families()))


def _install_hint(names: list[str]) -> str:
    pkgs = []
    for n in names:
        p = FONT_PACKAGES.get(n)
        if p and p not in pkgs:
            pkgs.append(p)
    return "apt-get install " + pkgs[0] + (f" (or {pkgs[1]})" if len(pkgs) > 1 else "")


def check_fonts(lang: str, fonts: FontSet, need_cjk: bool = True) -> dict[str, list[str]]:
    """Font families per role (body, sans, mono, chart), only those present; a missing role is an error
    saying which package to install. CJK fonts are required for Japanese, and for English when the
    document holds Japanese text (a page shown in the other language, a citation)."""
    where = ("the font directories " + ", ".join(fonts.font_paths or ["(none)"])) if fonts.ignore_system \
        else "the system fonts"
    if lang == "ja" or need_cjk:
        for role, names in (("serif, body text", CJK_SERIF), ("sans-serif, headings and charts", CJK_SANS)):
            if not fonts.available(names):
                raise MissingToolError(
                    f"no Japanese font ({role}) for the {lang} PDF: none of {', '.join(names)} in {where}; "
                    f"Japanese text would print as empty boxes. Install one: {_install_hint(names)}")
    out: dict[str, list[str]] = {}
    for role, names in FONTS[lang].items():
        have = fonts.available(names)
        if not have:
            raise MissingToolError(f"no {role} font for the {lang} PDF: none of {', '.join(names)} in {where}; "
                                   f"install one: {_install_hint(names)}")
        out[role] = have
    if lang == "ja" or need_cjk:
        serif, sans = fonts.available(CJK_SERIF), fonts.available(CJK_SANS)
        if lang == "en":  # Latin first, Japanese for what the Latin fonts lack
            out["body"] = out["body"] + serif
            out["sans"] = out["sans"] + sans
        out["mono"] = out["mono"] + sans
    out["chart"] = out["sans"] if lang == "en" else out["sans"] + fonts.available(FONTS["en"]["sans"])
    return out


def find_chromium() -> str:
    for name in CHROMIUM_NAMES:
        exe = shutil.which(name)
        if exe:
            return exe
    raise MissingToolError("chromium not found on PATH (kaleido drives it to export the charts as SVG): "
                           "apt-get install chromium")


# -- chart export ---------------------------------------------------------------------------------------

@dataclass
class Chart:
    fig: dict          # plotly {data, layout} in one language
    path: Path
    fonts: list[str]

    @property
    def size_px(self) -> tuple[int, int]:
        layout = self.fig.get("layout") or {}
        w = layout.get("width") or CHART_WIDTH_PX
        h = layout.get("height") or CHART_HEIGHT_PX
        return int(w), int(h)


# The browser that draws the charts never needs the network: plotly.js comes from the plotly package, MathJax
# is off, and every request it would make (an image URL in a figure's JSON) goes to a proxy that is not
# there. kaleido itself loads its page and plotly.js from local files, so file access cannot be turned off.
NO_NETWORK_PROXY = "127.0.0.1:9"


def kaleido_options(chromium: str) -> dict[str, Any]:
    import plotly

    plotlyjs = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return {"path": chromium, "mathjax": False, "plotlyjs": str(plotlyjs), "proxy_server": NO_NETWORK_PROXY,
            "enable_extensions": False, "enable_gpu": False}


def export_svgs(charts: list[Chart], chromium: str | None = None) -> float:
    """All charts in one kaleido batch: one chromium start for the whole run (every language)."""
    if not charts:
        return 0.0
    t0 = time.monotonic()
    chromium = chromium or find_chromium()
    import kaleido

    jobs = []
    for c in charts:
        layout = dict(c.fig.get("layout") or {})
        w, h = c.size_px
        layout.update(width=w, height=h)
        font = dict(layout.get("font") or {})
        font["family"] = ", ".join(c.fonts + ["sans-serif"])
        layout["font"] = font
        jobs.append({"fig": {"data": c.fig.get("data", []), "layout": layout}, "path": str(c.path),
                     "opts": {"format": "svg", "width": w, "height": h}})
    try:
        kaleido.write_fig_from_object_sync(jobs, kopts=kaleido_options(chromium))
    except Exception as exc:  # kaleido/choreographer raise their own types
        raise MissingToolError(f"chart export with kaleido and {chromium} failed ({type(exc).__name__}: {exc}); "
                               "is Debian's chromium installed and working? apt-get install chromium") from exc
    missing = [str(c.path) for c in charts if not c.path.is_file()]
    if missing:
        raise KansokuError(f"kaleido wrote no SVG for {', '.join(missing)}")
    return time.monotonic() - t0


# -- the document -------------------------------------------------------------------------------------------

class Document:
    """One language's report as Markdown with raw typst blocks, plus the charts it needs."""

    def __init__(self, computed: ComputedReport, lang: str, svg_dir: Path, content_root: Path | None = None,
                 chart_fonts: list[str] | None = None):
        self.rep, self.lang = computed, lang
        self.content_dir = content_root / computed.id if content_root else (computed.content_dir or Path("."))
        self.svg_dir = svg_dir
        self.ui = UI(lang)
        self.charts: list[Chart] = []
        self.chart_fonts = chart_fonts or []
        self.chapters = {c.id: c for c in computed.chapters}

    # ---- whole document

    def markdown(self, pages: list[Page] | None = None) -> str:
        pages = self.rep.pdf_pages if pages is None else pages
        parts = [self.title_page(), self.front_matter(), raw_block("#report-outline()")]
        for p in pages:
            if p.in_pdf:
                parts.append(self.page(p))
        parts.append(self.sources_appendix())
        return "".join(parts)

    # ---- the data-sources appendix: the PDF reader's provenance

    def sources_appendix(self) -> str:
        """Per table and figure, its runs (numbered R1, R2, … once for the whole report); then every run
        with its raw files and the first ``SHA_SHOWN`` hex digits of their SHA-256 (the full hashes and
        the files are on the site's data-sources page, whose address this appendix gives)."""
        r, L, ui = self.rep, self.lang, self.ui
        items = []
        for ch in r.chapters:
            for coll in (ch.tables, ch.figures):
                for it in sorted(coll.values(), key=lambda x: _number_key(x.number)):
                    items.append((pick(it.label, L), pick(it.caption, L), [x for x in it.runs if x in r.runs]))
        used = sorted({x for _, _, runs in items for x in runs})
        if not used:
            return ""
        number = {run_id: i + 1 for i, run_id in enumerate(used)}
        url = self.site_link(f"{L}/reports/{r.id}/sources/")
        out = [raw_block(f"#chapter-heading(none, {typst_str(ui('pdf_sources_title'))})")]
        before, _, after = ui("pdf_sources_intro", SHA_SHOWN, where="\x00").partition("\x00")
        out.append(raw_block(f"#par[{tx(before)}#link({typst_str(url)})[{tx(url)}]{tx(after)}]"))
        out.append(f"\n\n## {ui('pdf_sources_items')}\n\n")
        rows = [[f"{label} {caption}", ui("n_runs", len(runs)), run_ranges([number[x] for x in runs])]
                for label, caption, runs in items]
        out.append(raw_block(plain_table([ui("pdf_sources_item"), ui("pdf_sources_count"), ui("pdf_sources_runs")],
                                         rows, "(1fr, auto, auto)", size="8pt")))
        out.append(f"\n\n## {ui('pdf_sources_files')}\n\n")
        # runs that share their files (values transcribed from one published table) are listed together
        groups: dict[tuple, list[str]] = {}
        for run_id in used:
            info = r.runs[run_id]
            files = [(s.file, s.sha256) for s in info.sources]
            if info.run_toml_sha256 and not any(f == "run.toml" for f, _ in files):
                files.append(("run.toml", info.run_toml_sha256))
            key = (tuple(files), info.citation) if files and info.origin == "transcribed" else (run_id,)
            groups.setdefault(key, []).append(run_id)
        cells = []
        for ids in groups.values():
            info = r.runs[ids[0]]
            head = ", ".join(soft_breaks(x, 12) for x in ids)
            if info.origin == "transcribed" and info.citation:
                head += f" — {ui('citation')}: {info.citation}"
            cells.append(f"[*{run_ranges([number[x] for x in ids])}*], table.cell(colspan: 2)[#mono[{tx(head)}]]")
            files = [(s.file, s.sha256) for s in info.sources]
            if info.run_toml_sha256 and not any(f == "run.toml" for f, _ in files):
                files.append(("run.toml", info.run_toml_sha256))
            for f, sha in files:
                cells.append(f"[], [#mono[{tx(soft_breaks(f, 16))}]], [#mono[{tx((sha or '—')[:SHA_SHOWN])}]]")
        out.append(raw_block(
            "#plain-table(columns: (auto, 1fr, auto), size: 7.5pt, inset: (x: 4pt, y: 2pt),\n"
            f"  table.header([*{tx(ui('pdf_sources_run'))}*], [*{tx(ui('file'))}*], "
            f"[*{tx(ui('pdf_sources_sha', SHA_SHOWN))}*]),\n  " + ",\n  ".join(cells) + ",\n)"))
        return "".join(out)

    def title_page(self) -> str:
        r, L, ui = self.rep, self.lang, self.ui
        themes = r.themes.get(L) or []
        if not themes:
            front = self._cover_front()
            themes = front.get("themes") or []
        rows = [(ui("organisation"), pick(r.organisation, L)), (ui("revision"), r.revision)]
        if r.revision_history:
            rows.append((ui("date"), r.revision_history[-1].date))
        if themes:
            rows.append((ui("themes"), " / ".join(str(t) for t in themes)))
        meta = ", ".join(f"{typst_str(k)}, {typst_str(v)}" for k, v in rows)
        body = (f"#title-page({typst_str(ui('fiscal_year', r.fiscal_year))}, {typst_str(pick(r.title, L))}, "
                f"{typst_str(pick(r.subtitle, L))}, ({meta},))")
        return raw_block(body)

    def _cover_front(self) -> dict:
        for lang in (self.lang, "en" if self.lang == "ja" else "ja"):
            f = self.content_dir / f"_index.{lang}.md"
            if f.is_file():
                return parse_front_matter(f.read_text(encoding="utf-8"))[0]
        return {}

    def front_matter(self) -> str:
        """Page 2: the cover's prose, revision history, license and copyright (not in the contents)."""
        r, L, ui = self.rep, self.lang, self.ui
        out = []
        src = None
        for lang in (L, "en" if L == "ja" else "ja"):
            f = self.content_dir / f"_index.{lang}.md"
            if f.is_file():
                src = (f, lang)
                break
        if src:
            f, lang = src
            body = self.prose(f, None)
            if body.strip():
                if lang != L:
                    out.append(self.notice(ui(f"translation_missing_from_{lang}")))
                out.append(body)
        hist = r.revision_history
        out.append(raw_block(f"#front-heading({typst_str(ui('revision_history'))})"))
        if hist:
            rows = [[h.revision, h.date, pick(h.changes, L)] for h in hist]
            out.append(raw_block(plain_table([ui("revision"), ui("date"), ui("changes")], rows,
                                             "(auto, auto, 1fr)")))
        else:
            out.append(raw_block(para(f"{ui('revision')} {r.revision}")))
        out.append(raw_block(f"#front-heading({typst_str(ui('license'))})"))
        lic = pick(r.license, L)
        if lic:
            out.append(raw_block(para(lic)))
        if r.copyright:
            out.append(raw_block(para(r.copyright)))
        if r.site_url:  # the PDF reader's way back to the provenance the site has
            url = f"{r.site_url.rstrip('/')}/{L}/reports/{r.id}/"
            before, _, after = ui("pdf_site_url", "\x00").partition("\x00")
            out.append(raw_block(f"#par[{tx(before)}#link({typst_str(url)})[{tx(url)}]{tx(after)}]"))
        return "".join(out)

    # ---- pages

    def page(self, p: Page) -> str:
        L, ui = self.lang, self.ui
        title = p.title.get(L) or p.title.get("en") or p.id
        if p.kind == "chapter" and p.number is not None:
            head = f"#chapter-heading({typst_str(str(p.number) + '.')}, {typst_str(title)})"
        else:
            head = f"#chapter-heading(none, {typst_str(title)})"
        out = [raw_block(head)]
        src = p.source_lang(L)
        if src is None:
            body = self.expand(self.rep.generated_bodies.get(p.id, ""), f"(generated page {p.id!r})", 0, p)
            if p.kind == "chapter":
                out.append(self.notice(ui("no_prose")))
            out.append(body)
        else:
            if src != L:
                out.append(self.notice(ui(f"translation_missing_from_{src}")))
            out.append(self.prose(p.files[src], p))
        if p.kind == "chapter" and p.id in self.chapters:
            out.append(self.missing_figures(self.chapters[p.id]))
        return "".join(out)

    def missing_figures(self, ch: Any) -> str:
        """The chapter's figures of the original that are not drawn, with the reason (as on the site)."""
        items = getattr(ch, "missing_figures", None)
        if not items:
            return ""
        L, ui = self.lang, self.ui
        return raw_block(TEMPLATES.get_template("missing_figures.typ.j2").render(
            title=ui("figure_missing_title"), intro=ui("figure_missing_intro"),
            items=[{"label": pick(m.label, L), "caption": pick(m.caption, L), "reason": pick(m.reason, L),
                    "note": ui("figure_missing_note", pick(m.note, L)) if m.note else None} for m in items]))

    def prose(self, f: Path, p: Page | None) -> str:
        text = f.read_text(encoding="utf-8").replace("\r\n", "\n")
        _, body = parse_front_matter(text)
        offset = text.count("\n", 0, len(text) - len(body))
        return join_cjk_lines(self.expand(body, str(f), offset, p))

    def notice(self, msg: str) -> str:
        return raw_block(f"#notice[{tx(msg)}]")

    # ---- shortcodes

    def expand(self, body: str, where: str, line_offset: int, p: Page | None) -> str:
        front = (p.front.get(self.lang) or next(iter(p.front.values()), {})) if p and p.front else {}
        chapter_id = front.get("chapter") or (p.id if p and p.kind == "chapter" else None)

        def repl(m: re.Match) -> str:
            inner = m.group(2)
            line = line_offset + body.count("\n", 0, m.start()) + 1
            if inner.startswith("/*"):  # {{</* x */>}}: Hugo prints the shortcode itself
                return "{{" + m.group(1) + " " + inner[2:-2].strip() + " " + m.group(3) + "}}"
            args = re.findall(r'"((?:[^"\\]|\\.)*)"|`([^`]*)`|(\S+)', inner)
            words = [a or b or c for a, b, c in args]
            name = words[0] if words else ""
            if name not in SHORTCODES:
                raise KansokuError(f"{where}:{line}: unknown shortcode {{{{< {inner} >}}}}; the site and the PDF "
                                   f"know {', '.join(SHORTCODES)}")
            if name in ("tbl", "fig"):
                if len(words) < 2:
                    raise KansokuError(f"{where}:{line}: {{{{< {name} >}}}} needs the id of a {name} of the chapter")
                if chapter_id not in self.chapters:
                    raise KansokuError(f"{where}:{line}: {{{{< {inner} >}}}} is on a page that is not a chapter "
                                       f"of report {self.rep.id!r} (front matter: chapter = {chapter_id!r})")
                ch = self.chapters[chapter_id]
                iid = words[1]
                coll = ch.tables if name == "tbl" else ch.figures
                if iid not in coll:
                    kind = "table" if name == "tbl" else "figure"
                    raise KansokuError(f"{where}:{line}: {kind} {iid!r} is not declared in chapter {chapter_id!r} "
                                       f"of report {self.rep.id!r} (it has {', '.join(coll) or 'none'})")
                return raw_block(self.table(coll[iid]) if name == "tbl" else self.figure(coll[iid], ch))
            if name == "authors":
                return self.authors()
            if name == "commands":
                if chapter_id not in self.chapters:
                    raise KansokuError(f"{where}:{line}: {{{{< commands >}}}} is on a page that is not a chapter "
                                       f"of report {self.rep.id!r} (front matter: chapter = {chapter_id!r})")
                return self.commands(self.chapters[chapter_id])
            if name == "methods":
                return self.methods()
            if name == "compare":  # a [[compare]] of the spec (render/typst_compare.py)
                from kansoku.render.typst_compare import compare_table

                found = {c.id: c for c in self.rep.compares}
                if len(words) < 2 or words[1] not in found:
                    raise KansokuError(f"{where}:{line}: {{{{< {inner} >}}}}: report {self.rep.id!r} has no such "
                                       f"[[compare]] (it has {', '.join(found) or 'none'})")
                return raw_block(compare_table(found[words[1]], self.lang))
            return self.environment()

        return SHORTCODE.sub(repl, body)

    # ---- tables and figures

    def table(self, t: Table) -> str:
        """A table as typst (templates/table.typ.j2): cells with their marks, notes and legend below."""
        L, ui = self.lang, self.ui
        cols = t.columns
        n = len(cols)
        header = []
        for hrow in t.header:
            for h in hrow:
                mark = f" ({ui('baseline')})" if h.baseline and h.colspan > 1 else ""
                header.append({"colspan": h.colspan, "rowspan": h.rowspan, "text": pick(h.text, L) + mark})
        marks: set[str] = set()
        rows = []
        for row in t.rows:
            cells = []
            for c in row:
                txt = pick(c.text, L)
                if c.kind == "factor":
                    if "baseline" in c.flags:
                        txt += f" ({ui('baseline')})"
                    cells.append(table_cell(txt))
                    continue
                cell = table_cell(txt.replace(" ", "\u00a0"), notes=[f"({cn.mark})" for cn in c.notes])
                if t.print_spread and c.range:  # spec spread = "range": the runs' min–max under the median
                    cell["below"] = f"#linebreak()#text(size: 0.8em, fill: luma(70))[{tx('[' + c.range + ']')}]"
                if "transcribed" in c.flags:
                    cell["marks"].append("#super[†]")
                    marks.add("transcribed")
                if "mismatch" in c.flags:
                    cell["marks"].append("#super[*!*]")
                    cell["fill"] = "#fde2e1"
                    marks.add("mismatch")
                if c.verdict:  # the noise-aware verdict: a symbol for black-and-white print, a light fill
                    kind = c.verdict["kind"]
                    cell["marks"].append(f"#super(typographic: false, size: 0.85em)[#strong[{VERDICT_MARKS[kind]}]]")
                    cell["fill"] = cell["fill"] or VERDICT_FILLS.get(kind)
                    marks.add(kind)
                cells.append(cell)
            rows.append(cells)
        notes = []
        if t.footnote:
            notes.append({"mark": "", "text": pick(t.footnote, L)})
        for cn in t.notes:
            notes.append({"mark": "", "text": f"({cn.mark}) {pick(cn.text, L)}"})
        marks |= set(t.marks)
        if "transcribed" in marks:
            notes.append({"mark": "#super[†] ", "text": ui("transcribed")})
        if "mismatch" in marks:
            notes.append({"mark": "#super[*!*] ", "text": ui("mismatch")})
        for kind in ("better", "worse", "within-noise", "too-few-runs"):
            if kind in marks:
                notes.append({"mark": f"#text(weight: \"bold\")[{VERDICT_MARKS[kind]}] ", "text": ui("verdict_" + kind.replace("-", "_"))})
        if t.method:
            notes.append({"mark": "", "text": pick(t.method, L)})
            methods = next((p for p in self.rep.pdf_pages if p.kind == "methods"), None)
            if methods is not None:  # the full method, its parameters and the runs: the methods page
                notes.append({"mark": "", "text": ui("see_methods", pick(methods.title, L))})
        return self.place_table(t, header, rows, notes)

    def place_table(self, t: Table, header: list[dict], rows: list[list[dict]], notes: list[dict]) -> str:
        """A table's typst at a readable size (never below 8 pt): on the portrait page when it fits, on a
        landscape page when it is wider, split into parts by columns (the row labels repeated) when even the
        landscape page is too narrow; a table of more than ``PDF_MAX_ROWS`` rows prints its first rows and
        says where all of them are (the site's CSV)."""
        L, ui = self.lang, self.ui
        cols = t.columns
        n = len(cols)
        groups = {g.first_row: pick(g.label, L) for g in t.row_groups}
        notes = list(notes)
        if len(rows) > PDF_MAX_ROWS:
            url = self.site_link(f"csv/{self.rep.id}/{t.id}.{L}.csv")
            notes.insert(0, {"mark": "", "text": ui("pdf_rows_cut", PDF_MAX_ROWS, total=len(rows), where=url)})
            rows = rows[:PDF_MAX_ROWS]
            groups = {k: v for k, v in groups.items() if k < PDF_MAX_ROWS}
        size_pt = 9 if n <= 6 else 8
        widths = column_widths(header, rows, n, size_pt)
        lead = next((i for i, c in enumerate(cols) if c.kind != "factor"), n) or 1
        parts = [list(range(n))]
        landscape = sum(widths) > TEXT_WIDTH_PT
        if sum(widths) > LANDSCAPE_WIDTH_PT:
            parts = column_parts(header, widths, lead, LANDSCAPE_WIDTH_PT)
        out = []
        for k, part in enumerate(parts):
            keep = set(part)
            caption = pick(t.caption, L)
            if len(parts) > 1:
                caption += " " + ui("pdf_table_part", None, i=k + 1, k=len(parts))
            out.append(TEMPLATES.get_template("table.typ.j2").render(
                label=pick(t.label, L), caption=caption, size=f"{size_pt}pt",
                breakable="true" if len(rows) > 15 else "false", columns=len(part),
                aligns=", ".join("left" if cols[i].kind == "factor" else "right" for i in part),
                header=[h for h, span in zip(header, header_spans(header, n)) if set(span) <= keep],
                rows=[[c for i, c in enumerate(r) if i in keep] for r in rows],
                notes=notes if k == len(parts) - 1 else [], groups=groups))
        body = "\n".join(out)
        # a landscape page of its own: typst turns the page, the running header and footer stay
        return f"#page(flipped: true)[\n{body}\n]" if landscape else body

    def site_link(self, path: str) -> str:
        """The web edition's address of a site path (the spec's site_url), or the path on the site."""
        base = (self.rep.site_url or "").rstrip("/")
        return f"{base}/{path}" if base else f"/{path}"

    def figure(self, f: Figure, ch: Any) -> str:
        L, ui = self.lang, self.ui
        svg = self.svg_dir / f"fig-{ch.number}-{re.sub(r'[^A-Za-z0-9_-]', '_', f.id)}.{L}.svg"
        fig = escape_plotly((f.figure or {}).get(L) or {"data": [], "layout": {}})  # measured text stays text
        chart = Chart(fig, svg, self.chart_fonts)
        self.charts.append(chart)
        w, h = chart.size_px
        width_pt = TEXT_WIDTH_PT
        if TEXT_WIDTH_PT * h / w > MAX_CHART_HEIGHT_PT:
            width_pt = int(MAX_CHART_HEIGHT_PT * w / h)
        notes = []
        if not fig.get("data"):
            notes.append({"mark": "", "text": ui("no_chart_data")})
        if f.footnote:
            notes.append({"mark": "", "text": pick(f.footnote, L)})
        if f.transcribed:
            notes.append({"mark": "#super[†] ", "text": ui("figure_transcribed")})
        for c in f.citations:
            notes.append({"mark": "", "text": f"{ui('citation')}: {soft_breaks(str(c))}"})
        return TEMPLATES.get_template("figure.typ.j2").render(
            label=pick(f.label, L), caption=pick(f.caption, L), image=svg.name, width=width_pt, notes=notes)

    # ---- authors and the environment appendix

    def authors(self) -> str:
        L, ui = self.lang, self.ui
        authors = self.rep.authors
        if not authors:
            return raw_block(para(ui("no_authors")))
        rows = []
        for a in authors:
            chs = ", ".join((f"{c['number']}. " if c.get("number") is not None else "") + pick(c.get("title"), L)
                            for c in a.chapters)
            rows.append([pick(a.name, L), pick(a.affiliation, L), chs])
        return raw_block(plain_table([ui("author_name"), ui("affiliation"), ui("chapters")], rows,
                                     "(auto, auto, 1fr)"))

    def commands(self, ch: Any) -> str:
        """How the chapter's runs were run (analysis/commands.py): commands, values that vary, scripts."""
        L = self.lang

        def t(key: str, **named: Any) -> str:
            return words.t(L, key, **named)

        def code(lines: list[str]) -> str:
            return f"#block(width: 100%, fill: luma(246), inset: 6pt, radius: 2pt, " \
                   f"raw({typst_str(chr(10).join(lines))}, block: true))"

        if not ch.commands:
            return raw_block(para(t("cmd_none")))
        out = []
        for b in ch.commands:
            name = ", ".join(sc.name for sc in b.scripts) if b.scripts else b.program
            out.append("#block(above: 1.2em, strong(" + typst_str(t("cmd_block", name=name, runs=b.runs)) + "))")
            if b.setup:
                out.append(para(t("cmd_setup")))
                out.append(code(["$ " + pick(x, L) for x in b.setup]))
            out.append(para(t("cmd_command", runs=b.runs)))
            out.append(code(["$ " + pick(b.command, L)]))
            for key, lines in (("cmd_varying", b.varying), ("cmd_optional", b.optional)):
                if lines:
                    out.append(para(t(key)))
                    out.append("#list(" + ", ".join("raw(" + typst_str(pick(x, L)) + ")" for x in lines) + ")")
            for sc in b.scripts:
                head = t("cmd_script", name=sc.name)
                if sc.sha256:
                    head += " (" + t("cmd_script_runs", runs=sc.runs, sha=sc.sha256[:12]) + ")"
                out.append(para(head))
                out.append(code(sc.text.rstrip("\n").split("\n")) if sc.text else para(t("cmd_script_missing")))
        out.append("#text(size: 0.85em, fill: luma(90), " + typst_str(t("cmd_source")) + ")")
        return raw_block("\n".join(out))
    def methods(self) -> str:
        """The generated methods page: one section per method note (report/methods.py)."""
        L, ui = self.lang, self.ui
        if not self.rep.methods:
            return raw_block(para(ui("methods_none")))
        return "".join(f"\n\n## {pick(m.title, L)}\n\n" + raw_block(para(pick(m.text, L))) for m in self.rep.methods)

    def environment(self) -> str:
        L, ui = self.lang, self.ui
        env = self.rep.environment.to_json()
        if not env.get("runs"):
            return self.notice(ui("env_none"))
        out = []
        src = ui("env_source", env["runs"])
        if env.get("without_capture"):
            src += " " + ui("env_without_capture", env["without_capture"])
        out.append(raw_block(para(src)))
        out.append(f"\n\n## {ui('env_hardware')}\n\n")
        machines = env.get("machines") or []
        head = [""] + [(f"{m['where']}\n" if m.get("where") else "") + ui("n_runs", m["runs"])
                       for m in machines] if len(machines) > 1 else None
        rows = []
        for i, label in enumerate(env.get("machine_fields") or []):
            rows.append([pick(label, L)] + [soft_breaks(pick(m["values"][i], L)) for m in machines])
        ncol = 1 + len(machines)
        out.append(raw_block(plain_table(head, rows, "(auto," + " 1fr," * (ncol - 1) + ")", row_header=True)))
        out.append(f"\n\n## {ui('env_software')}\n\n")
        rows = []
        for v in env.get("versions") or []:
            multi = len(v["values"]) > 1
            vals = [soft_breaks(x["value"]) + (f" ({ui('n_runs', x['runs'])})" if multi else "") for x in v["values"]]
            rows.append([v["tool"], "\n".join(vals)])
        out.append(raw_block(plain_table([ui("env_tool"), ui("env_version")], rows, "(auto, 1fr)",
                                         row_header=True, mono_first=True)))
        out.append(f"\n\n## {ui('env_settings')}\n\n")
        out.append(raw_block(para(ui("env_settings_captured" if env.get("settings_kind") == "captured"
                                     else "env_settings_non_default"))))
        rows = []
        for s in env.get("settings") or []:
            multi = len(s["values"]) > 1
            vals = []
            for x in s["values"]:
                extra = ""
                if multi:
                    extra = " (" + (f"{x['where']}, " if x.get("where") else "") + ui("n_runs", x["runs"]) + ")"
                vals.append(soft_breaks(x["value"]) + extra)
            rows.append([s["name"], "\n".join(vals)])
        if rows:
            out.append(raw_block(plain_table([ui("env_parameter"), ui("env_value")], rows, "(auto, 1fr)",
                                             row_header=True, mono_first=True)))
        out.append(self.settings_by_configuration(env))
        return "".join(out)

    def settings_by_configuration(self, env: dict) -> str:
        """The settings that differ between runs: one column per configuration (the runs sharing them),
        instead of the configuration repeated on every row; runs without a PostgreSQL server named once."""
        ui = self.ui
        out = []
        configs = env.get("settings_configs") or []
        if env.get("settings_varying") and configs:
            out.append(f"\n\n### {ui('env_settings_varying')}\n\n")
            head = [ui("env_parameter")] + [(f"{c['where']}\n" if c.get("where") else "") + ui("n_runs", c["runs"])
                                            for c in configs]
            rows = [[v["name"]] + [soft_breaks(x) for x in v["values"]] for v in env["settings_varying"]]
            out.append(raw_block(plain_table(head, rows, "(auto," + " 1fr," * len(configs) + ")",
                                             row_header=True, mono_first=True)))
        ns = env.get("settings_without_server")
        if ns:
            what = ui("n_runs", ns["runs"]) + (f" ({ns['where']})" if ns.get("where") else "")
            out.append(raw_block(para(ui("env_without_server", what))))
        return "".join(out)


PDF_MAX_ROWS = 150            # a longer table prints its first rows and points to its CSV on the site
LANDSCAPE_WIDTH_PT = 717      # A4 landscape minus 2 x 22 mm


def text_pt(s: str, size_pt: float) -> float:
    """The printed width of a text: full-width (Japanese) characters 1 em, digits and Latin about 0.55 em."""
    return sum(size_pt if unicodedata.east_asian_width(ch) in "WF" else 0.55 * size_pt for ch in str(s))


def _cell_text(c: dict) -> str:
    return str(c.get("text", "")) + " " * (len(c.get("marks") or []) + 2 * len(c.get("notes") or []))


def header_spans(header: list[dict], ncols: int) -> list[range]:
    """The leaf columns each header cell covers, placed as typst places them (row by row, skipping the
    columns a cell of an earlier row still covers with its rowspan)."""
    taken: dict[tuple[int, int], bool] = {}
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
        for r in range(row, row + h["rowspan"]):
            for c in span:
                taken[(r, c)] = True
        spans.append(span)
        col = span.stop
    return spans


def column_widths(header: list[dict], rows: list[list[dict]], ncols: int, size_pt: float) -> list[float]:
    """Each leaf column's printed width: its widest cell, or its header's longest word (headers wrap)."""
    inset = 8.0
    widths = [0.0] * ncols
    for r in rows:
        for i, c in enumerate(r[:ncols]):
            widths[i] = max(widths[i], text_pt(_cell_text(c), size_pt) + inset)
    for h, span in zip(header, header_spans(header, ncols)):
        text = str(h["text"])
        words_ = re.split(r"\s+", text)
        need = max(max((text_pt(w, size_pt) for w in words_), default=0), text_pt(text, size_pt) / 3) + inset
        if len(span) == 1:
            widths[span.start] = max(widths[span.start], need)
    return widths


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


SHA_SHOWN = 16                # hex digits of a file's SHA-256 in the PDF (the site prints all 64)


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


def plain_table(head: list[str] | None, rows: list[list[str]], columns: str, row_header: bool = False,
                mono_first: bool = False, size: str | None = None) -> str:
    """An unnumbered table (revision history, authors, environment), header repeated across pages."""
    def cell(s: str, first: bool) -> str:
        parts = [tx(x) for x in str(s).split("\n")]
        body = " \\ ".join(parts)
        if first and mono_first:
            body = f"#mono[{body}]"
        if first and row_header:
            body = f"*{body}*" if not mono_first else body
        return f"[{body}]"

    lines = [f"#plain-table(columns: {columns}," + (f" size: {size}," if size else "")]
    if head:
        lines.append("  table.header(" + ", ".join("[*" + " \\ ".join(tx(x) for x in str(h).split("\n")) + "*]"
                                                   for h in head) + "),")
    for r in rows:
        lines.append("  " + ", ".join(cell(c, i == 0) for i, c in enumerate(r)) + ",")
    lines.append(")")
    return "\n".join(lines)


# -- build ------------------------------------------------------------------------------------------------

def _pandoc(md: str, variables: dict[str, str]) -> str:
    try:
        import pypandoc
    except ImportError:
        raise MissingToolError("pandoc not found: pip install pypandoc-binary (it ships the pandoc binary)") from None
    args = ["--standalone", f"--template={TEMPLATE}", "--wrap=none"]
    args += [f"--variable={k}:{v}" for k, v in variables.items()]
    try:
        return pypandoc.convert_text(md, "typst", format="markdown+east_asian_line_breaks-implicit_figures",
                                     extra_args=args)
    except OSError as exc:
        raise MissingToolError(f"pandoc could not run ({exc}): pip install pypandoc-binary") from exc
    except RuntimeError as exc:
        raise KansokuError(f"pandoc could not convert the report: {exc}") from exc


def _typst_compile(typ_path: Path, out: Path, root: Path, fonts: FontSet) -> None:
    import typst

    try:
        typst.compile(str(typ_path), output=str(out), root=str(root), font_paths=fonts.font_paths,
                      ignore_system_fonts=fonts.ignore_system)
    except Exception as exc:
        msg = getattr(exc, "diagnostic", None) or str(exc)
        lines = msg.strip().splitlines()
        msg = "\n".join(lines[:25] + ([f"... ({len(lines) - 25} more lines)"] if len(lines) > 25 else []))
        raise KansokuError(f"typst could not compile the report ({typ_path.name}): {msg}") from exc


def build_pdfs(report_id: str, langs: list[str] | tuple[str, ...], db: Path, out_dir: Path | None = None,
               spec_dir: Path = Path("data/reports"), content_root: Path = Path("content/reports"),
               out: dict[str, Path] | None = None, font_dirs: list[str] | None = None,
               keep_typst: Path | None = None) -> list[PdfResult]:
    """tools/pdf: compute the report (report.build, the one entry point that reads the store), then
    :func:`render_pdfs`."""
    from kansoku.report.build import compute_one

    t0 = time.monotonic()
    for lang in langs:
        if lang not in LANGS:
            raise KansokuError(f"--lang must be one of {', '.join(LANGS)}, not {lang!r}")
    # preflight before anything slow: fonts (CJK decided later, per document)
    fonts = font_set(font_dirs)
    for lang in langs:
        check_fonts(lang, fonts, need_cjk=False)
    computed = compute_one(db, spec_dir / f"{report_id}.toml", content_root)
    results = render_pdfs(computed, langs, out_dir, out=out, fonts=fonts, keep_typst=keep_typst)
    total = time.monotonic() - t0
    for res in results:  # time of the whole build, shared work included
        res.seconds = total
    return results


def render_pdfs(computed: ComputedReport, langs: list[str] | tuple[str, ...], out_dir: Path | None = None,
                out: dict[str, Path] | None = None, fonts: FontSet | None = None, font_dirs: list[str] | None = None,
                keep_typst: Path | None = None) -> list[PdfResult]:
    """Write the computed report's PDF in each of ``langs``: one chart export for all of them.

    Output: ``out[lang]`` if given, else ``out_dir/<id>.<lang>.pdf`` (default public/pdf/).
    ``keep_typst``: a directory to keep the generated .typ and SVG files in (for debugging).
    """
    t0 = time.monotonic()
    langs = list(dict.fromkeys(langs))
    for lang in langs:
        if lang not in LANGS:
            raise KansokuError(f"--lang must be one of {', '.join(LANGS)}, not {lang!r}")
    fonts = fonts or font_set(font_dirs)
    for lang in langs:
        check_fonts(lang, fonts, need_cjk=False)
    chromium = find_chromium() if computed.figures() else None
    out_dir = out_dir or Path("public") / "pdf"
    results = []
    with tempfile.TemporaryDirectory(prefix="kansoku-pdf-") as tmp:
        tmpd = Path(keep_typst) if keep_typst else Path(tmp)
        tmpd.mkdir(parents=True, exist_ok=True)
        docs = {}
        for lang in langs:
            doc = Document(computed, lang, tmpd)
            md = doc.markdown()
            need_cjk = lang == "ja" or bool(CJK.search(md)) or any(
                CJK.search(json.dumps(c.fig, ensure_ascii=False, default=str)) for c in doc.charts)
            roles = check_fonts(lang, fonts, need_cjk=need_cjk)
            for c in doc.charts:
                c.fonts = roles["chart"]
            docs[lang] = (doc, md, roles)
        export_svgs([c for doc, _, _ in docs.values() for c in doc.charts], chromium)
        for lang, (doc, md, roles) in docs.items():
            t1 = time.monotonic()
            r = computed
            variables = {
                "lang": lang,
                "title-str": typst_str(pick(r.title, lang)),
                "copyright-str": typst_str(r.copyright or ""),
                "transcribed-str": typst_str(pick(r.transcribed, lang) if r.transcribed else ""),
                "organisation-str": typst_str(pick(r.organisation, lang)),
                "toc-title-str": typst_str(doc.ui("contents")),
                "body-fonts": fonts_literal(roles["body"]),
                "sans-fonts": fonts_literal(roles["sans"]),
                "mono-fonts": fonts_literal(roles["mono"]),
            }
            if lang == "ja":
                variables["strong-sans"] = "true"
            typ = _pandoc(md, variables)
            typ_path = tmpd / f"{computed.id}.{lang}.typ"
            typ_path.write_text(typ, encoding="utf-8")
            target = (out or {}).get(lang) or out_dir / f"{computed.id}.{lang}.pdf"
            target.parent.mkdir(parents=True, exist_ok=True)
            _typst_compile(typ_path, target, tmpd, fonts)
            results.append(PdfResult(target, count_pages(target), time.monotonic() - t1, lang))
    total = time.monotonic() - t0
    for res in results:
        res.seconds = total
    return results


def build_pdf(report_id: str, lang: str, db: Path, out: Path | None, spec_dir: Path = Path("data/reports"),
              content_root: Path = Path("content/reports")) -> PdfResult:
    """One language (tools/pdf REPORT --lang ja|en)."""
    outs = {lang: out} if out else None
    return build_pdfs(report_id, [lang], db, spec_dir=spec_dir, content_root=content_root, out=outs)[0]


def count_pages(pdf: Path) -> int:
    data = pdf.read_bytes()
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))
