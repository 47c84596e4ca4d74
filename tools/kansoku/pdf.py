"""PDF export: the same report as the site, one language per PDF, via pandoc (-t typst) and typst.

Prose comes from the same Markdown pages as the site; tables and figures come
from the same computed data (numbering included). Tables are emitted as real
typst tables (headers repeat across pages); charts are exported to SVG with
kaleido (plotly's exporter, driving Debian's chromium) in one batch.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import KansokuError, MissingToolError
from .spec import Report, load_report
from .store.db import open_store

TEMPLATE = Path(__file__).with_name("templates") / "report.typ"
FONTS = {
    "ja": {"main": ["IPAexMincho", "Noto Serif CJK JP"], "sans": ["IPAexGothic", "Noto Sans CJK JP"]},
    "en": {"main": ["Libertinus Serif", "IPAexMincho"], "sans": ["DejaVu Sans", "IPAexGothic"]},
}
FONT_DIRS = ["/usr/share/fonts/opentype/ipaexfont-gothic", "/usr/share/fonts/opentype/ipaexfont-mincho",
             "/usr/share/fonts/opentype/noto", "/usr/share/fonts/truetype/dejavu"]
SHORTCODE = re.compile(r"\{\{<\s*(tbl|fig)\s+\"([^\"]+)\"\s*>\}\}")
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
UI = {
    "ja": {"toc": "目次", "missing": "この章の日本語版はまだありません。英語版を表示しています。"},
    "en": {"toc": "Contents", "missing": "This chapter has no English version yet; the Japanese text is shown."},
}


@dataclass
class PdfResult:
    path: Path
    pages: int
    seconds: float


def typst_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def typst_text(s: str) -> str:
    """Text placed in typst markup content, with markup characters escaped."""
    return re.sub(r"([\\#\[\]*_`$<>@~\"'=/+-])", r"\\\1", s)


def check_fonts(lang: str) -> list[str]:
    dirs = [d for d in FONT_DIRS if Path(d).is_dir()]
    if lang == "ja" and not any("ipaex" in d or "noto" in d for d in dirs):
        raise MissingToolError("no Japanese font found: apt-get install fonts-ipaexfont (or fonts-noto-cjk)")
    return dirs


def table_typst(t: dict, lang: str) -> str:
    ncols = len(t["columns"])
    aligns = ", ".join("left" if c["kind"] == "factor" else "right" for c in t["columns"])
    out = [f"#figure(kind: table, supplement: none, numbering: none, caption: [{typst_text(t['label'][lang])} "
           f"{typst_text(t['caption'][lang])}],", "  table(", f"    columns: {ncols},", f"    align: ({aligns},),",
           "    stroke: 0.5pt + luma(150),", "    inset: (x: 5pt, y: 3pt),",
           "    table.header(repeat: true,"]
    for hrow in t["header"]:
        for h in hrow:
            txt = typst_text(h["text"][lang])
            if h.get("baseline") and h.get("colspan", 1) > 1:
                txt += " (基準)" if lang == "ja" else " (baseline)"
            out.append(f"      table.cell(colspan: {h.get('colspan', 1)}, rowspan: {h.get('rowspan', 1)}, "
                       f"align: center, fill: luma(235))[*{txt}*],")
    out.append("    ),")
    for row in t["rows"]:
        cells = []
        for c in row:
            txt = c["t"][lang] if isinstance(c["t"], dict) else c["t"]
            txt = typst_text(txt)
            if "transcribed" in c.get("flags", []):
                txt += "#super[†]"
            if "mismatch" in c.get("flags", []):
                cells.append(f"table.cell(fill: rgb(\"#ffebe9\"))[{txt}]")
            else:
                cells.append(f"[{txt}]")
        out.append("    " + ", ".join(cells) + ",")
    out.append("  ),")
    out.append(")")
    foot = t.get("footnote")
    body = "\n".join(out)
    if foot:
        body += f"\n#align(center)[#text(size: 8pt)[{typst_text(foot[lang])}]]"
    return "```{=typst}\n" + body + "\n```\n"


def figure_typst(f: dict, svg: Path, lang: str) -> str:
    body = (f"#figure(image({typst_str(svg.name)}, width: 100%), supplement: none, numbering: none, "
            f"caption: [{typst_text(f['label'][lang])} {typst_text(f['caption'][lang])}])")
    return "```{=typst}\n" + body + "\n```\n"


def export_svgs(figs: list[tuple[dict, Path]]) -> None:
    """All charts in one kaleido batch: one browser start for the whole PDF."""
    if not figs:
        return
    if not (shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")):
        raise MissingToolError("chromium not found: apt-get install chromium (kaleido drives it to export charts)")
    import kaleido

    jobs = []
    for fig, path in figs:
        layout = dict(fig.get("layout", {}))
        layout.setdefault("width", 760)
        layout.setdefault("height", 420)
        jobs.append({"fig": {"data": fig["data"], "layout": layout}, "path": str(path),
                     "opts": {"format": "svg", "width": layout["width"], "height": layout["height"]}})
    try:
        kaleido.write_fig_from_object_sync(jobs)
    except Exception as exc:  # kaleido raises its own types; say what to install
        raise MissingToolError(f"chart export with kaleido failed ({exc}); is Debian's chromium installed?") from exc


def chapter_markdown(content_dir: Path, chapter, lang: str, computed_chapter: dict, svg_dir: Path,
                     figs_out: list) -> str:
    other = "en" if lang == "ja" else "ja"
    src = content_dir / f"{chapter.id}.{lang}.md"
    notice = ""
    if not src.is_file():
        src = content_dir / f"{chapter.id}.{other}.md"
        notice = f"\n*{UI[lang]['missing']}*\n\n"
    if not src.is_file():
        raise KansokuError(f"{content_dir}/{chapter.id}.{lang}.md: no page for chapter {chapter.id!r}")
    text = src.read_text(encoding="utf-8")
    text = FRONT_MATTER.sub("", text, count=1)

    def repl(m: re.Match) -> str:
        kind, iid = m.group(1), m.group(2)
        if kind == "tbl":
            t = computed_chapter["tables"].get(iid)
            if t is None:
                raise KansokuError(f"{src}: table {iid!r} is not declared in chapter {chapter.id!r}")
            return table_typst(t, lang)
        f = computed_chapter["figures"].get(iid)
        if f is None:
            raise KansokuError(f"{src}: figure {iid!r} is not declared in chapter {chapter.id!r}")
        svg = svg_dir / f"fig-{chapter.number}-{iid}.{lang}.svg"
        figs_out.append((f["figure"][lang], svg))
        return figure_typst(f, svg, lang)

    body = SHORTCODE.sub(repl, text)
    title = computed_chapter["title"][lang]
    return f"# {chapter.number}. {title}\n{notice}\n{body}\n"


def build_pdf(report_id: str, lang: str, db: Path, out: Path | None, spec_dir: Path = Path("data/reports"),
              content_root: Path = Path("content/reports")) -> PdfResult:
    import pypandoc
    import typst

    from .site import compute_report

    t0 = time.monotonic()
    if lang not in ("ja", "en"):
        raise KansokuError(f"--lang must be ja or en, not {lang!r}")
    spec_file = spec_dir / f"{report_id}.toml"
    report: Report = load_report(spec_file)
    font_dirs = check_fonts(lang)
    store = open_store(db, read_only=True)
    try:
        computed = compute_report(store, report)
    finally:
        store.close()
    out = out or Path("public") / "pdf" / f"{report.id}.{lang}.pdf"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kansoku-pdf-") as tmp:
        tmpd = Path(tmp)
        figs: list = []
        parts = []
        for ch, cch in zip(report.chapters, computed["chapters"]):
            parts.append(chapter_markdown(content_root / report.id, ch, lang, cch, tmpd, figs))
        export_svgs(figs)
        md = "\n".join(parts)
        meta = [
            f"--metadata=title:{report.title.get(lang)}",
            f"--metadata=lang:{lang}",
            f"--metadata=copyright:{report.copyright}",
            f"--metadata=organisation:{report.organisation.get(lang)}",
            f"--metadata=toc-title:{UI[lang]['toc']}",
            f"--metadata=date:{('%d 年度' % report.fiscal_year) if lang == 'ja' else 'FY%d' % report.fiscal_year}"
            f" — {'版' if lang == 'ja' else 'revision'} {report.revision}",
        ]
        if report.subtitle:
            meta.append(f"--metadata=subtitle:{report.subtitle.get(lang)}")
        for f in FONTS[lang]["main"]:
            meta.append(f"--metadata=mainfont:{f}")
        for f in FONTS[lang]["sans"]:
            meta.append(f"--metadata=sansfont:{f}")
        typ = pypandoc.convert_text(md, "typst", format="markdown-implicit_figures",
                                    extra_args=["--standalone", f"--template={TEMPLATE}", *meta])
        typ_path = tmpd / "report.typ"
        typ_path.write_text(typ, encoding="utf-8")
        try:
            typst.compile(str(typ_path), output=str(out), root=str(tmpd), font_paths=font_dirs)
        except Exception as exc:
            raise KansokuError(f"typst could not compile the report: {exc}") from exc
    pages = _count_pages(out)
    return PdfResult(out, pages, time.monotonic() - t0)


def _count_pages(pdf: Path) -> int:
    data = pdf.read_bytes()
    return len(re.findall(rb"/Type\s*/Page[^s]", data))
