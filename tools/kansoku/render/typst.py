"""PDF export: the whole report as the site shows it, one language per PDF, via pandoc (-t typst) and typst.

Reading order and content are the site's (report/structure.py decides both): title page, revision history and
license, table of contents, then every page of the computed report's ``pdf_pages`` (introduction, one chapter
per study with its sections, closing, authors, appendix), then the data-sources appendix. Prose comes from the
same Markdown pages (``content/reports/<id>/<page>.<lang>.md``, pandoc's Markdown reader) and every number,
label and caption from the same computed report as the site (its page-ready JSON, ``render/page_data.py``),
so ``表 2.2`` and ``図 2.1`` are the same objects in both outputs.

The blocks a page places (Hugo shortcodes, parsed by ``kansoku.shortcodes``) are written by their typst
templates (``render/blocks.py``: one Hugo and one typst template per block); the title page, headings and
notices by ``templates/pages/``. No typst is written in Python. An unknown shortcode is an error naming the
page and line.

Charts: every figure of every requested language is drawn (``render.charts``) and exported in ONE kaleido
batch (one chromium start), with the fonts typst will use to draw the SVG text. Fonts are checked before
anything is computed: a missing Japanese font or a missing chromium stops the build with what to install
(exit 5). $KANSOKU_FONT_DIRS (directories, os.pathsep-separated) replaces the system fonts with those
directories.

Japanese: typst sets the text with ``lang: "ja"`` (line breaking by the Unicode rules with Japanese
kinsoku, small spaces between Japanese and Latin letters); a line break inside a Japanese paragraph of
the Markdown is removed rather than turned into a space (``join_cjk_lines``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kansoku import external, shortcodes, words
from kansoku.errors import KansokuError, MissingToolError
from kansoku.front_matter import parse_front_matter
from kansoku.model import ComputedReport, Page, is_local_address
from kansoku.render import charts
from kansoku.render.blocks import BLOCKS
from kansoku.render.charts import escape_plotly
from kansoku.render.page_data import page_path, report_data
from kansoku.render.typst_markup import pick, raw_block, raw_inline, render, typst_str, ui
from kansoku.render.views import CHAPTER_LAYOUT, CHAPTER_VIEWS, site_address

LANGS = words.LANGS

TEMPLATE = Path(__file__).with_name("templates") / "report.typ"
I18N_DIR = words.I18N_DIR

# Fonts per role, in order of preference; each role needs at least one present (``check_fonts``).
# "Libertinus Serif" and "DejaVu Sans Mono" are embedded in typst itself.
CJK_SERIF = ["IPAexMincho", "Noto Serif CJK JP"]
CJK_SANS = ["IPAexGothic", "Noto Sans CJK JP"]
# Fonts by script: Japanese (CJK_LANGS) or Latin (every other language of the site).
CJK_LANGS = {"ja"}
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

CHART_WIDTH_PX = 700          # SVG export size; printed at the text width (about 0.67 pt per px)
CHART_HEIGHT_PX = 420
TEXT_WIDTH_PT = 470           # A4 minus 2 x 22 mm
MAX_CHART_HEIGHT_PT = 560
TALL_CHART_SHRINK = 0.6        # a chart that would print narrower than this share of the text width is exported wider


@dataclass
class PdfResult:
    path: Path
    pages: int
    seconds: float
    lang: str = ""


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
    import typst  # the typst compiler only for PDFs

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
    cjk = lang in CJK_LANGS
    if cjk or need_cjk:
        for role, names in (("serif, body text", CJK_SERIF), ("sans-serif, headings and charts", CJK_SANS)):
            if not fonts.available(names):
                raise MissingToolError(
                    f"no Japanese font ({role}) for the {lang} PDF: none of {', '.join(names)} in {where}; "
                    f"Japanese text would print as empty boxes. Install one: {_install_hint(names)}")
    out: dict[str, list[str]] = {}
    for role, names in FONTS["ja" if cjk else "en"].items():
        have = fonts.available(names)
        if not have:
            raise MissingToolError(f"no {role} font for the {lang} PDF: none of {', '.join(names)} in {where}; "
                                   f"install one: {_install_hint(names)}")
        out[role] = have
    if cjk or need_cjk:
        serif, sans = fonts.available(CJK_SERIF), fonts.available(CJK_SANS)
        if not cjk:  # Latin first, Japanese for what the Latin fonts lack
            out["body"] = out["body"] + serif
            out["sans"] = out["sans"] + sans
        out["mono"] = out["mono"] + sans
    out["chart"] = out["sans"] + fonts.available(FONTS["en"]["sans"]) if cjk else out["sans"]
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
    import plotly  # plotly only when a figure is exported

    plotlyjs = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return {"path": chromium, "mathjax": False, "plotlyjs": str(plotlyjs), "proxy_server": NO_NETWORK_PROXY,
            "enable_extensions": False, "enable_gpu": False}


def export_svgs(charts: list[Chart], chromium: str | None = None) -> float:
    """All charts in one kaleido batch: one chromium start for the whole run (every language)."""
    if not charts:
        return 0.0
    t0 = time.monotonic()
    chromium = chromium or find_chromium()
    import kaleido  # kaleido (Chromium) only when figures are exported

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
    # bounded (kansoku.external): kaleido stops a figure that takes longer than its timeout
    kopts = {**kaleido_options(chromium), "timeout": external.timeout_for("kaleido", max(
        len(json.dumps(j["fig"], default=str)) for j in jobs))}
    try:
        # kaleido returns a figure's failure rather than raising it (a tab of its browser that failed under
        # load): the figures it wrote no file for are asked once more, and its reasons given if still none
        errors = kaleido.write_fig_from_object_sync(jobs, kopts=kopts)
        again = [j for j, c in zip(jobs, charts) if not c.path.is_file()]
        if again:
            errors = kaleido.write_fig_from_object_sync(again, kopts=kopts)
    except Exception as exc:  # kaleido/choreographer raise their own types
        raise MissingToolError(f"chart export with kaleido and {chromium} failed ({type(exc).__name__}: {exc}); "
                               "is Debian's chromium installed and working? apt-get install chromium") from exc
    missing = [str(c.path) for c in charts if not c.path.is_file()]
    if missing:
        why = "; ".join(f"{type(e).__name__}: {e}" for e in errors or () if isinstance(e, BaseException))
        raise KansokuError(f"kaleido wrote no SVG for {', '.join(missing)}" + (f" ({why})" if why else ""))
    return time.monotonic() - t0


# -- the document -------------------------------------------------------------------------------------------

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



class Document:
    """One language's report as Markdown with raw typst blocks (from the templates), plus the charts it needs."""

    def __init__(self, computed: ComputedReport, lang: str, svg_dir: Path, content_root: Path | None = None,
                 chart_fonts: list[str] | None = None):
        self.rep, self.lang = computed, lang
        self.data = report_data(computed)  # the page-ready data the site reads (render/page_data.py)
        self.content_dir = content_root / computed.id if content_root else (computed.content_dir or Path("."))
        self.svg_dir = svg_dir
        self.charts: list[Chart] = []
        self.chart_fonts = chart_fonts or []
        self.chapters = {c["id"]: c for c in self.data["chapters"]}
        self.where = ""  # the page being written (for errors)

    def ui(self, key: str, arg: Any = None, **named: Any) -> str:
        return ui(self.lang, key, arg, **named)

    def typst(self, template: str, **context: Any) -> str:
        """A template of templates/pages/ as a raw block of the Markdown."""
        return raw_block(render(f"pages/{template}.typ.j2", self.lang, **context))

    # ---- whole document

    def markdown(self, pages: list[Page] | None = None) -> str:
        pages = self.rep.pdf_pages if pages is None else pages
        parts = [self.title_page(), self.front_matter(), self.typst("outline")]
        for p in pages:
            if p.in_pdf:
                parts.append(self.page(p))
        parts.append(self.sources_appendix())
        return "".join(parts)

    def sources_appendix(self) -> str:
        """The data-sources appendix (the block ``sources``: the PDF reader's provenance)."""
        self.where = "(the data-sources appendix)"
        ctx = BLOCKS["sources"].context(self, None, None)
        return raw_block(render(BLOCKS["sources"].typst, self.lang, **ctx)) if ctx else ""

    def title_page(self) -> str:
        r, L = self.rep, self.lang
        themes = r.themes.get(L) or []
        if not themes:
            themes = self._cover_front().get("themes") or []
        meta = [(self.ui("organisation"), pick(r.organisation, L)), (self.ui("revision"), r.revision)]
        if r.revision_history:
            meta.append((self.ui("date"), r.revision_history[-1].date))
        if themes:
            meta.append((self.ui("themes"), " / ".join(str(t) for t in themes)))
        return self.typst("title", fiscal_year=self.ui("fiscal_year", r.fiscal_year), title=pick(r.title, L),
                          subtitle=pick(r.subtitle, L), meta=meta)

    def _cover(self) -> tuple[Path, str] | None:
        for lang in [self.lang] + [x for x in LANGS if x != self.lang]:
            f = self.content_dir / f"_index.{lang}.md"
            if f.is_file():
                return f, lang
        return None

    def _cover_front(self) -> dict:
        src = self._cover()
        return parse_front_matter(src[0].read_text(encoding="utf-8"))[0] if src else {}

    def front_matter(self) -> str:
        """Page 2: the cover's prose, revision history, license and copyright (not in the contents)."""
        r, L = self.rep, self.lang
        out = [raw_block(BLOCKS["findings"].render(self, None, None))] if r.findings else []
        src = self._cover()
        if src:
            f, lang = src
            body = self.prose(f, None)
            if body.strip():
                if lang != L:
                    out.append(self.notice(self.ui(f"translation_missing_from_{lang}")))
                out.append(body)
        # a local preview's address (or none) is no web edition: the PDF says it comes from a local build instead
        local = not r.site_url or is_local_address(r.site_url)
        url = None if local else self.site_link(page_path(r.id, None, L))
        out.append(self.typst(
            "front", history=[[h.revision, h.date, pick(h.changes, L)] for h in r.revision_history],
            revision=r.revision, license=pick(r.license, L), copyright=r.copyright or "", site_url=url,
            local_build=self.ui("pdf_local_build") if local else "",
            site_link=self.ui("pdf_site_url", "\x00").split("\x00", 1) if url else ("", "")))
        return "".join(out)

    # ---- pages

    def page(self, p: Page) -> str:
        L = self.lang
        title = p.title.get(L) or next((p.title[x] for x in LANGS if p.title.get(x)), p.id)
        out = [self.typst("heading", number=p.number if p.kind == "chapter" else None, title=title)]
        chapter = self.chapters.get(p.id) if p.kind == "chapter" else None
        for part in CHAPTER_LAYOUT if chapter else ("prose",):  # the order the site places them in too
            if part == "prose":
                out.append(self.page_prose(p))
            elif CHAPTER_VIEWS[part](self.rep.chapter(chapter["id"]), self.lang) is not None:
                out.append(raw_block(BLOCKS[part].render(self, None, chapter)))
        return "".join(out)

    def page_prose(self, p: Page) -> str:
        """A page's prose in this language (another language's with a notice; a generated page's body)."""
        L = self.lang
        src = p.source_lang(L)
        if src is None:
            body = self.expand(self.rep.generated_bodies.get(p.id, ""), f"(generated page {p.id!r})", 0, p)
            return (self.notice(self.ui("no_prose")) if p.kind == "chapter" else "") + body
        return (self.notice(self.ui(f"translation_missing_from_{src}")) if src != L else "") + self.prose(p.files[src], p)

    def prose(self, f: Path, p: Page | None) -> str:
        text = f.read_text(encoding="utf-8").replace("\r\n", "\n")
        _, body = parse_front_matter(text)
        offset = text.count("\n", 0, len(text) - len(body))
        return join_cjk_lines(self.expand(body, str(f), offset, p))

    def notice(self, msg: str) -> str:
        return self.typst("notice", text=msg)

    # ---- the blocks a page places

    def expand(self, body: str, where: str, line_offset: int, p: Page | None) -> str:
        """The page's Markdown with each block (shortcode) written by its typst template."""
        front = (p.front.get(self.lang) or next(iter(p.front.values()), {})) if p and p.front else {}
        chapter_id = front.get("chapter") or (p.id if p and p.kind == "chapter" else None)
        placed = [n for n, b in BLOCKS.items() if b.shortcode]

        def block(sc: shortcodes.Shortcode) -> str:
            b = BLOCKS.get(sc.name)
            if b is None or not b.shortcode:
                raise KansokuError(f"{where}:{sc.line}: unknown shortcode {{{{< {sc.source} >}}}}; the site and the "
                                   f"PDF know {', '.join(placed)}")
            chapter = self.chapters.get(chapter_id) if chapter_id else None
            if b.needs_chapter and chapter is None:
                raise KansokuError(f"{where}:{sc.line}: {{{{< {sc.source} >}}}} is on a page that is not a chapter "
                                   f"of report {self.rep.id!r} (front matter: chapter = {chapter_id!r})")
            self.where = where
            return (raw_inline if b.inline else raw_block)(b.render(self, sc, chapter))

        return shortcodes.expand(body, block, line_offset)

    def block(self, name: str, *args: str, chapter: str | None = None) -> str:
        """One block as its typst template writes it (``{{< name "args" >}}`` on the page of ``chapter``)."""
        self.where = f"(block {name})"
        sc = shortcodes.Shortcode(name, args, 0, 0, 0, " ".join((name, *args)), None)
        return BLOCKS[name].render(self, sc, self.chapters.get(chapter) if chapter else None)

    def site_link(self, path: str) -> str:
        return site_address(self.rep, path)

    def chart(self, figure: dict[str, Any], chapter: dict[str, Any]) -> tuple[str, int, int]:
        """A figure drawn in this language (render.charts) and queued for the SVG export: the image's file
        name, its printed width in points and its number of traces."""
        L = self.lang
        f = self.rep.chapter(chapter["id"]).figures[figure["id"]]
        svg = self.svg_dir / f"fig-{chapter['number']}-{re.sub(r'[^A-Za-z0-9_-]', '_', f.id)}.{L}.svg"
        fig = escape_plotly(charts.draw_print(f.chart_data, L))  # measured text stays text
        chart = Chart(fig, svg, self.chart_fonts)
        w, h = chart.size_px
        if TEXT_WIDTH_PT * h / w > MAX_CHART_HEIGHT_PT / TALL_CHART_SHRINK:
            # a tall chart (a flame graph's many levels) shrunk to the page's height printed in a narrow column
            # with its labels hidden: exported wider instead, it fills the text width at the same text size
            fig = dict(fig, layout=dict(fig.get("layout") or {}, width=int(h * TEXT_WIDTH_PT / MAX_CHART_HEIGHT_PT)))
            chart = Chart(fig, svg, self.chart_fonts)
            w, h = chart.size_px
        self.charts.append(chart)
        width_pt = TEXT_WIDTH_PT
        if TEXT_WIDTH_PT * h / w > MAX_CHART_HEIGHT_PT:
            width_pt = int(MAX_CHART_HEIGHT_PT * w / h)
        return svg.name, width_pt, len(fig.get("data") or [])


# -- build ------------------------------------------------------------------------------------------------

# A section heading (and its label) right before a table's landscape page of its own.
_HEADING_BEFORE_LANDSCAPE = re.compile(r"^(=+ [^\n]*\n(?:<[^>\n]+>\n)?)(#page\(flipped: true\)\[\n)", re.M)


def heading_onto_landscape_page(typ: str) -> str:
    """Move a heading that directly precedes a landscape page onto that page: left before it, the heading would
    be the last line of the portrait page, cut from what it introduces."""
    return _HEADING_BEFORE_LANDSCAPE.sub(lambda m: m.group(2) + m.group(1), typ)  # the page's opening, then the heading


def _pandoc(md: str, variables: dict[str, str], lists: dict[str, list[str]] | None = None) -> str:
    try:
        import pypandoc  # pandoc only for prose
    except ImportError:
        raise MissingToolError("pandoc not found: pip install pypandoc-binary (it ships the pandoc binary)") from None
    args = ["--standalone", f"--template={TEMPLATE}", "--wrap=none"]
    args += [f"--variable={k}:{v}" for k, v in variables.items()]
    args += [f"--variable={k}:{v}" for k, vs in (lists or {}).items() for v in vs]  # a list: one per value
    try:
        exe = pypandoc.get_pandoc_path()
    except OSError as exc:
        raise MissingToolError(f"pandoc could not run ({exc}): pip install pypandoc-binary") from exc
    data = md.encode("utf-8")
    # pandoc itself, bounded by its input (kansoku.external), as pypandoc would run it
    proc = external.run("pandoc", [exe, "--from=markdown+east_asian_line_breaks-implicit_figures", "--to=typst",
                                   *args], nbytes=len(data), input=data, capture_output=True)
    if proc.returncode != 0:
        raise KansokuError(f"pandoc could not convert the report: {proc.stderr.decode('utf-8', 'replace')[-2000:]}")
    return proc.stdout.decode("utf-8")


# typst compiles in a child process so that its time is bounded (kansoku.external): an in-process compile
# that never ends could not be stopped.
_TYPST_CHILD = """import json, sys
import typst
a = json.loads(sys.argv[1])
try:
    typst.compile(a["src"], output=a["out"], root=a["root"], font_paths=a["fonts"], ignore_system_fonts=a["ignore"])
except Exception as exc:
    sys.stderr.write(str(getattr(exc, "diagnostic", None) or exc))
    sys.exit(3)
"""


def _typst_compile(typ_path: Path, out: Path, root: Path, fonts: FontSet) -> None:
    args = json.dumps({"src": str(typ_path), "out": str(out), "root": str(root),
                       "fonts": [str(p) for p in fonts.font_paths], "ignore": fonts.ignore_system})
    proc = external.run("typst", [sys.executable, "-c", _TYPST_CHILD, args],
                        nbytes=external.input_bytes([typ_path, *root.glob("*.svg")]), capture_output=True)
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace")
        lines = msg.strip().splitlines()
        msg = "\n".join(lines[:25] + ([f"... ({len(lines) - 25} more lines)"] if len(lines) > 25 else []))
        raise KansokuError(f"typst could not compile the report ({typ_path.name}): {msg}")


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
            need_cjk = lang in CJK_LANGS or bool(CJK.search(md)) or any(
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
            }
            fonts_vars = {f"{role}-fonts": roles[role] for role in ("body", "sans", "mono")}
            if set(roles["body"]) & set(CJK_SERIF):  # Japanese serif fonts have no bold: strong text in sans
                variables["strong-sans"] = "true"
            typ = heading_onto_landscape_page(_pandoc(md, variables, fonts_vars))
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


def count_pages(pdf: Path) -> int:
    data = pdf.read_bytes()
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))
