"""What the PDF's typst templates share: the Jinja2 environment (``templates/``), its filters, and the small
text helpers. No typst is written in Python: a template places values, and every value it places is verbatim
text (``finalize``: a typst string expression) unless the template says otherwise (``|str``: a typst string
literal; ``|raw``: a number or keyword the renderer computed, such as a width in points).

Templates get ``lang`` and read words through ``ui(key, ...)`` (``kansoku.words``: the site's i18n files, so
both outputs say the same) and per-language values through ``|w``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from kansoku import words
from kansoku.errors import KansokuError
from kansoku.render.palette import CELL_FILLS

if TYPE_CHECKING:
    import jinja2

TEMPLATES_DIR = Path(__file__).with_name("templates")


def typst_str(s: Any) -> str:
    """A typst string literal."""
    s = str(s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "") + '"'


def pick(v: Any, lang: str) -> str:
    """A per-language value (``{"ja": …, "en": …}``) in ``lang``, else another language's, else ''."""
    if isinstance(v, dict):
        return words.pick(v, lang)
    return "" if v is None else str(v)


def ui(lang: str, key: str, arg: Any = None, **named: Any) -> str:
    """A word of the PDF (a missing one names the key)."""
    try:
        return words.t(lang, key, arg, **named)
    except KeyError as exc:
        raise KansokuError(f"{exc.args[0]} (needed by the PDF)") from None


def soft_breaks(s: str, limit: int = 24) -> str:
    """Allow line breaks inside long unbroken tokens (paths, settings) after / , = _ ; : (zero-width space)."""
    def fix(m: re.Match) -> str:
        return re.sub(r"([/,=_;:])(?=.)", "\\1\u200b", m.group(0))
    return re.sub(r"\S{%d,}" % limit, fix, s)


def text_pt(s: str, size_pt: float) -> float:
    """The printed width of a text: full-width (Japanese) characters 1 em, digits and Latin about 0.55 em."""
    return sum(size_pt if unicodedata.east_asian_width(ch) in "WF" else 0.55 * size_pt for ch in str(s))


def _finalize(v: Any) -> Any:
    """Every placed value is verbatim text unless the template marked it (|raw, |str)."""
    return v if isinstance(v, Markup) else Markup("#" + typst_str(v))


def _ui(ctx, key: str, arg: Any = None, **named: Any) -> str:
    return ui(ctx["lang"], key, arg, **named)


def _w(ctx, v: Any) -> str:
    return pick(v, ctx["lang"])


@functools.cache
def templates() -> jinja2.Environment:
    """The environment of ``templates/``, made on the first template rendered: a build that writes no PDF
    places its views without loading Jinja2."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), finalize=_finalize,
                             autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=False,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["str"] = lambda v: Markup(typst_str(v))
    env.filters["raw"] = lambda v: Markup(str(v))
    env.filters["w"] = jinja2.pass_context(_w)
    env.filters["soft"] = soft_breaks
    env.globals["ui"] = jinja2.pass_context(_ui)
    env.globals["cell_fills"] = CELL_FILLS
    return env


def render(template: str, lang: str, **context: Any) -> str:
    """A template of ``templates/`` rendered in ``lang``."""
    return templates().get_template(template).render(lang=lang, **context).strip("\n")


def raw_inline(body: str) -> str:
    """Raw typst inside a sentence of the Markdown given to pandoc (an inline ``{=typst}`` span)."""
    fence = "`" * (max((len(m) for m in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}{{=typst}}"


def raw_block(body: str) -> str:
    """Raw typst inside the Markdown given to pandoc (a fenced ``{=typst}`` block of its own)."""
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", body)), default=0) + 1)
    return f"\n\n{fence}{{=typst}}\n{body}\n{fence}\n\n"
