"""What a reader meets on every page of a PDF, measured with poppler's own tools (pdftotext, pdftohtml -xml,
pdftoppm, pdfinfo): the checks of tests/test_pdf_reader.py, kept apart so that they can be run by hand on any
PDF (``python3 tests/pdf_reader.py FILE.pdf ...`` prints what each check finds).

Each function returns the defects it finds (an empty list: none), each a short line naming the page.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

# characters a reader cannot see that break a copied word: zero-width space and non-joiner, word joiner,
# soft hyphen, zero-width no-break space
INVISIBLE = {"\u200b": "ZERO WIDTH SPACE", "\u200c": "ZERO WIDTH NON-JOINER", "\u2060": "WORD JOINER",
             "\u00ad": "SOFT HYPHEN", "\ufeff": "ZERO WIDTH NO-BREAK SPACE"}

# the page's text area (templates/report.typ: A4, margins 25 mm top, 22 mm bottom): header and footer outside
PAGE_MM = 297.0
TOP_MM, BOTTOM_MM = 25.0, 22.0
MIN_USED = 0.20          # a page (but the last) uses at least this share of its text area's height


def _run(args: list[str]) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, errors="replace").stdout


def text(pdf: Path, layout: bool = True) -> str:
    return _run(["pdftotext"] + (["-layout"] if layout else []) + [str(pdf), "-"])


def invisible_characters(pdf: Path) -> list[str]:
    """Every invisible character in the extracted text, counted by kind."""
    t = text(pdf)
    return [f"{t.count(ch)} × U+{ord(ch):04X} {name}" for ch, name in INVISIBLE.items() if ch in t]


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("\u00a0", " ")).strip()


def printed_commands(pdf: Path) -> list[str]:
    """Every shell command as a reader copies it: a line starting with "$ ", joined with the lines its
    explicit continuations (a trailing " \\") bring; pages' headers and footers never fall inside one."""
    out: list[str] = []
    lines = text(pdf).splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("$ "):
            cmd = line
            while cmd.endswith(" \\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-2] + " " + lines[i].strip()
            out.append(squash(cmd))
        i += 1
    return out


def broken_commands(pdf: Path, recorded: list[str]) -> list[str]:
    """The recorded commands (as typed at a prompt, "$ ..."), each of which must copy back whole."""
    printed = set(printed_commands(pdf))
    return [f"not printed whole: {c}" for c in recorded if squash(c) not in printed]


# what must not begin a line when the line before ends with the number or word it belongs to: a unit or a
# sysstat label ("13.53 %", "CPU %idle", "8 ms"), and after a number a Japanese counter ("3 回", "4 クライアント");
# a one-letter escape ("%m" of log_line_prefix) is a settings table's cell, and so is a line that itself
# begins with "%" (such cells side by side)
UNIT_AFTER_WORD = re.compile(r"^%(?:\s|$|[a-z]{2,})")
UNIT_AFTER_NUMBER = re.compile(r"^(?:(?:ms|s|KiB|MiB|GiB|kB|MB|GB|TPS)\b|[回秒倍件]|クライアント)")


def broken_values(pdf: Path) -> list[str]:
    """A range broken after its dash ("[10,623.7–" ending a line), a count broken inside "n = 5", or a unit or
    label split from its number or word ("13.53⏎%", "CPU⏎%idle", "3⏎回")."""
    lines = [x.strip() for x in text(pdf, layout=False).splitlines()]
    pat = re.compile(r"\[[\d,.]+[–-](?![\d,.]+\])|(^|\s)n\s*=$")
    return [f"broken: {a!r} / {b!r}" for a, b in zip(lines, lines[1:])
            if pat.search(a) or (re.match(r"=\s*\d", b) and a.endswith(" n"))
            or (re.search(r"\w$", a) and not a.startswith("%") and UNIT_AFTER_WORD.match(b))
            or (re.search(r"\d$", a) and UNIT_AFTER_NUMBER.match(b))]


@dataclass
class Line:
    page: int
    top: float
    bottom: float
    text: str
    cells: int = 1      # pieces set apart by a wide gap: a table's row has several


@dataclass
class Layout:
    heights: list[float]                     # each page's height (pdftohtml units)
    lines: dict[int, list[Line]]             # each page's lines of text in its text area, top to bottom
    headings: dict[int, list[str]]           # each page's bookmarked headings (the PDF outline)
    starts: set[int]                         # pages where a top-level bookmark (a page of the site) starts


def layout(pdf: Path) -> Layout:
    """Lines of text per page (pdftohtml -xml: text pieces with their position) and the outline."""
    root = ET.fromstring(_run(["pdftohtml", "-xml", "-i", "-q", "-stdout", "-nodrm", str(pdf)]))
    heights, lines, headings, starts = [], {}, {}, set()
    for page in root.iter("page"):
        n, h = int(page.get("number")), float(page.get("height"))
        heights.append(h)
        top_edge, bottom_edge = h * TOP_MM / PAGE_MM, h * (1 - BOTTOM_MM / PAGE_MM)
        rows: dict[int, list[tuple[float, float, float, str]]] = {}
        for t in page.iter("text"):
            top, hh = float(t.get("top")), float(t.get("height"))
            s = "".join(t.itertext())
            if not s.strip() or top < top_edge or top + hh > bottom_edge:
                continue
            rows.setdefault(round(top), []).append((float(t.get("left")), top, top + hh, s, float(t.get("width"))))
        merged: list[Line] = []
        for k in sorted(rows):
            parts = sorted(rows[k])
            cells = 1 + sum(1 for a, b in zip(parts, parts[1:]) if b[0] - (a[0] + a[4]) > 12)
            line = Line(n, min(p[1] for p in parts), max(p[2] for p in parts), " ".join(p[3] for p in parts),
                        cells)
            if merged and abs(merged[-1].top - line.top) < 2:
                merged[-1].text += " " + line.text
                merged[-1].bottom = max(merged[-1].bottom, line.bottom)
                merged[-1].cells += line.cells
            else:
                merged.append(line)
        lines[n] = merged

    def walk(node, depth):
        for item in node:
            if item.tag == "item" and item.get("page"):
                headings.setdefault(int(item.get("page")), []).append(squash("".join(item.itertext())))
                if depth == 1:
                    starts.add(int(item.get("page")))
            elif item.tag == "outline":
                walk(item, depth + 1)

    for ol in root.findall("outline"):
        walk(ol, 1)
    return Layout(heights, lines, headings, starts)


def flat(s: str) -> str:
    return re.sub(r"\s+", "", s)


def stranded_headings(pdf: Path, lay: Layout | None = None) -> list[str]:
    """A heading as the last line of its page's text (what it heads starts on the next page), or a line
    introducing what follows (ending with a colon) as the page's last line."""
    lay = lay or layout(pdf)
    out = []
    for n, lines in lay.lines.items():
        if not lines or n == len(lay.heights) or n + 1 in lay.starts:
            continue   # the last page, or a page of the site ends here: nothing of it is on the next page
        last = flat(lines[-1].text)
        for h in lay.headings.get(n, []):
            if last and flat(h).endswith(last):
                out.append(f"page {n}: heading {h!r} is the page's last line")
        if last.endswith((":", "：")):
            out.append(f"page {n}: the last line {lines[-1].text!r} introduces what the next page holds")
    return out


def _pgm_rows(path: Path) -> tuple[int, int, list[bytes]]:
    data = path.read_bytes()
    m = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    w, h = int(m.group(1)), int(m.group(2))
    body = data[m.end():]
    return w, h, [body[i * w:(i + 1) * w] for i in range(h)]


def nearly_empty_pages(pdf: Path, tmp: Path, dpi: int = 24, lay: Layout | None = None) -> list[str]:
    """A page other than the last whose ink ends above MIN_USED of its text area's height and that holds a
    table (a line of several cells set apart), unless a page of the site (a top-level bookmark) starts on it:
    a short page of the site is short, and the last lines of running text may end a page; a small table
    left alone on a page, its heading on the page before, is the defect."""
    lay = lay or layout(pdf)
    prefix = tmp / pdf.stem
    subprocess.run(["pdftoppm", "-gray", "-r", str(dpi), str(pdf), str(prefix)], check=True)
    pages = sorted(tmp.glob(pdf.stem + "-*.pgm"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    out = []
    for k, p in enumerate(pages[:-1], start=1):
        w, h, rows = _pgm_rows(p)
        top, bottom = int(h * TOP_MM / PAGE_MM), int(h * (1 - BOTTOM_MM / PAGE_MM))
        inked = [y for y in range(top, bottom) if min(rows[y]) < 200]
        used = ((inked[-1] - top + 1) / (bottom - top)) if inked else 0.0
        if used < MIN_USED and k not in lay.starts and any(x.cells > 2 for x in lay.lines.get(k, [])):
            out.append(f"page {k}: {used:.0%} of the text area used")
    return out


# poppler's misreadings of valid PDF, each allowed only as often as the file holds the valid value it
# misreads: ``/Suspects false`` (ISO 32000-1 14.7.1: a boolean; poppler's Catalog.cc takes only ``true``
# as one) and a table cell's ``/BorderColor [r g b]`` (14.8.5.4.2: one colour or four; poppler's
# StructElement.cc checks any array for four colours). typst writes both; any other complaint is ours.
_MISREAD = {
    "Syntax Error: Suspects object is wrong type (boolean)": rb"/Suspects\s+false\b",
    "Syntax Warning: Attribute BorderColor value is of wrong type (array)":
        rb"/BorderColor\s*\[\s*(?:(?:0(?:\.\d+)?|1(?:\.0+)?)\s+){2}(?:0(?:\.\d+)?|1(?:\.0+)?)\s*\]",
}


def structure_warnings(pdf: Path) -> list[str]:
    """pdfinfo -struct's complaints about the structure tree (the tags a screen reader follows), less poppler's
    misreadings of valid values (``_MISREAD``; typst writes its structure uncompressed, so they are counted
    in the file)."""
    proc = subprocess.run(["pdfinfo", "-struct", str(pdf)], capture_output=True, text=True, errors="replace")
    said = [x.strip() for x in proc.stderr.splitlines() if x.strip()]
    data = pdf.read_bytes()
    out = []
    for line in dict.fromkeys(said):
        n = said.count(line)
        valid = len(re.findall(_MISREAD[line], data)) if line in _MISREAD else 0
        if n > valid:
            out.append(f"{line} ({n - valid} of {n} not a misreading of a valid value)" if valid else f"{line} ({n}×)")
    return out


def heading_skips(pdf: Path) -> list[str]:
    """The tagged headings as a screen reader walks them: the first is H1 and none skips a level (an H3
    after an H1), so that the document's outline reads as its pages are set."""
    out, prev = [], 0
    tree = subprocess.run(["pdfinfo", "-struct-text", str(pdf)], check=True, capture_output=True).stdout
    for m in re.finditer(rb'(?m)^\s*H([1-6])\b\s*"(.*?)"', tree):
        level = int(m.group(1))
        if level > prev + 1:  # poppler prints a tag's title as the file holds it: UTF-16 after its mark
            raw = m.group(2)
            title = raw[2:].decode("utf-16-be", "replace") if raw[:2] == b"\xfe\xff" else raw.decode("latin-1")
            out.append(f"H{level} “{title[:40]}” after {f'H{prev}' if prev else 'no heading'}")
        prev = level
    return out


def figures_without_alt(pdf: Path) -> list[str]:
    """Figures of the structure tree (pdfinfo -struct) against the alternative texts (/Alt) of the PDF's
    structure elements (poppler does not print them; typst writes them uncompressed)."""
    figures = sum(1 for x in _run(["pdfinfo", "-struct", str(pdf)]).splitlines() if x.strip() == "Figure:")
    alts = len(re.findall(rb"/Alt\s*[(<]", pdf.read_bytes()))
    return [f"{figures - alts} of {figures} figures without alternative text"] if alts < figures else []


if __name__ == "__main__":
    import tempfile

    for f in map(Path, sys.argv[1:]):
        with tempfile.TemporaryDirectory() as td:
            lay = layout(f)
            res = {"invisible": invisible_characters(f), "values": broken_values(f), "stranded": stranded_headings(f, lay),
                   "empty": nearly_empty_pages(f, Path(td), lay=lay), "no alt": figures_without_alt(f),
                   "struct": structure_warnings(f), "headings": heading_skips(f)}
        print(f.name, {k: len(v) for k, v in res.items()})
        for k, v in res.items():
            for x in v[:8]:
                print("  ", k, x)
