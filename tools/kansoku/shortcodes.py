"""The page blocks a prose page places: Hugo shortcodes (``{{< tbl "id" >}}``), parsed here once for every
reader of the Markdown: the page checks of ``report.structure`` and the PDF (``render.typst``). Hugo parses
them itself for the site; the names are the blocks of ``render.blocks`` (each with a Hugo and a typst template).

``{{</* x */>}}`` is Hugo's escaped form: the page shows the shortcode itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

SHORTCODE = re.compile(r"\{\{(<|%)\s*(/\*.*?\*/|[^>%]*?)\s*(>|%)\}\}", re.S)
ARG = re.compile(r'"((?:[^"\\]|\\.)*)"|`([^`]*)`|(\S+)')
NAMED = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|`([^`]*)`|(\S+))')


@dataclass(frozen=True)
class Shortcode:
    name: str                # "tbl"
    args: tuple[str, ...]    # positional arguments, unquoted: ("read-tps",)
    line: int                # line in the file (``line_offset`` + line in the body)
    start: int               # offsets in the body
    end: int
    source: str              # as written between the delimiters
    literal: str | None      # the escaped form's text to print ({{</* x */>}} -> {{< x >}}), else None
    named: tuple[tuple[str, str], ...] = ()  # named arguments (``row="none"``), in the order written

    def get(self, name: str) -> str | None:
        return dict(self.named).get(name)

    @property
    def key(self) -> str:
        """Its named arguments sorted, ``name=value`` joined by ``;``: the key of a bound value
        (report/values.py), as layouts/shortcodes/val.html builds it from .Params (Go ranges a map sorted)."""
        return ";".join(f"{k}={v}" for k, v in sorted(self.named))

    @property
    def value_key(self) -> str:
        """Its key among a report's resolved values: ``key`` for a number (``val``), ``ref:`` and ``key`` for a
        table's or figure's label (``ref``; layouts/shortcodes/ref.html builds the same)."""
        return f"ref:{self.key}" if self.name == "ref" else self.key


def parse(body: str, line_offset: int = 0) -> list[Shortcode]:
    out = []
    for m in SHORTCODE.finditer(body):
        inner = m.group(2)
        line = line_offset + body.count("\n", 0, m.start()) + 1
        if inner.startswith("/*"):
            out.append(Shortcode("", (), line, m.start(), m.end(), inner,
                                 "{{" + m.group(1) + " " + inner[2:-2].strip() + " " + m.group(3) + "}}"))
            continue
        words = [a or b or c for a, b, c in ARG.findall(inner)]
        named = tuple((k, a or b or c) for k, a, b, c in NAMED.findall(inner))
        if named:  # Hugo takes named or positional arguments, never both: the name, then name=value pairs
            words = words[:1]
        out.append(Shortcode(words[0] if words else "", tuple(words[1:]), line, m.start(), m.end(), inner, None,
                             named))
    return out


def expand(body: str, replace: Callable[[Shortcode], str], line_offset: int = 0) -> str:
    """The body with every shortcode replaced by ``replace(shortcode)`` (an escaped one by its text)."""
    out, pos = [], 0
    for sc in parse(body, line_offset):
        out.append(body[pos:sc.start])
        out.append(sc.literal if sc.literal is not None else replace(sc))
        pos = sc.end
    out.append(body[pos:])
    return "".join(out)
