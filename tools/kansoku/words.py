"""Every user-visible word, in one place: the project's ``i18n/<lang>.toml`` files.

The same files are Hugo's i18n tables (``[key] other = "…"``, optional ``one = "…"``), so the site's
templates, the PDF and every Python stage that has to label something (a parser naming its source, the
analysis naming a metric, a chart's axis) read one source. Python code never spells a Japanese or English
label itself: it names a key.

    >>> from kansoku import words
    >>> words.t("en", "runs_count", 3)                 # "{{ . }} runs" with the argument filled in
    >>> words.both("transcribed")                      # {"ja": "転記", "en": "transcribed"}

An unknown key or language is a ``KeyError`` naming the file that lacks it: a missing word is a bug in
the code that asks for it, never a silent empty label.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from kansoku.errors import KansokuError
from kansoku.resources import I18N_DIR  # the checkout's i18n/, or the installed package's


def declared_languages(i18n_dir: Path = I18N_DIR) -> tuple[str, ...]:
    """The site's languages, declared once: one ``i18n/<lang>.toml`` each (its ``[language_weight]`` orders
    them; the first is the default). Adding a language is adding its file and its content pages; Hugo's
    language list is generated from these (render/hugo.py ``hugo_config``)."""
    found = []
    for p in i18n_dir.glob("*.toml"):
        weight = (_read(p).get("language_weight") or {}).get("other")
        found.append((int(weight) if weight else 1000, p.stem))
    return tuple(lang for _, lang in sorted(found))


@lru_cache(maxsize=None)
def _read(path: Path) -> dict[str, dict[str, str]]:
    """An i18n file's table, parsed once a process (the languages' weights and every word come from it: every
    tool start reads them)."""
    with open(path, "rb") as fh:
        return tomllib.load(fh)


LANGS = declared_languages()
_ARG = re.compile(r"\{\{\s*\.\s*\}\}")
_NAMED = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")


@lru_cache(maxsize=None)
def table(lang: str) -> dict[str, dict[str, str]]:
    """The whole i18n table of one language: key → {"other": …, "one": …}."""
    if lang not in LANGS:
        raise KeyError(f"unknown language {lang!r} (expected one of {', '.join(LANGS)})")
    return _read(I18N_DIR / f"{lang}.toml")


def has(key: str, lang: str = LANGS[0]) -> bool:
    return key in table(lang)


def t(lang: str, key: str, arg: Any = None, **named: Any) -> str:
    """The word ``key`` in ``lang``; ``{{ . }}`` is replaced by ``arg`` (the ``one`` form when arg == 1) and
    ``{{ .name }}`` by ``named["name"]`` (Hugo's syntax for a named argument)."""
    entry = table(lang).get(key)
    if entry is None:
        raise KeyError(f"{I18N_DIR / (lang + '.toml')}: no string [{key}]")
    form = "one" if arg == 1 and "one" in entry else "other"
    s = entry.get(form) or next(iter(entry.values()))
    if arg is not None:
        s = _ARG.sub(str(arg), s)
    if named:
        s = _NAMED.sub(lambda m: str(named[m.group(1)]), s)
    return s


def metric_label(metric: str, lang: str) -> str:
    """A parser's metric's label, ``[metric_<name>]``: a metric without it is the error of the module that
    declares it, named with the file to add the word to."""
    key = f"metric_{metric}"
    if key not in table(lang):
        raise KansokuError(f"{I18N_DIR / (lang + '.toml')}: no label for the metric {metric!r}: a parser module's "
                           f"metric needs [{key}] in every i18n/<lang>.toml")
    return t(lang, key)


def both(key: str, arg: Any = None) -> dict[str, str]:
    """The word in every language: {"ja": …, "en": …} (the shape of a per-language text)."""
    return {lang: t(lang, key, arg) for lang in LANGS}


def keys() -> set[str]:
    return set(table(LANGS[0]))


def missing_words() -> dict[str, list[str]]:
    """Keys some language's file has and another's lacks: language -> its missing keys (none: every word is in
    every language). Hugo would print the default language's word instead; the build refuses."""
    every = set().union(*(table(lang) for lang in LANGS))
    return {lang: sorted(every - set(table(lang))) for lang in LANGS if every - set(table(lang))}


def same(text: str) -> dict[str, str]:
    """One text for every language (a name, a number, a setting: not translated)."""
    return {lang: text for lang in LANGS}


def pick(v: Any, lang: str, default: str = "") -> str:
    """A per-language value in ``lang``, else in the first language that has it (LANGS order), else
    ``default``; a plain string is the same in every language."""
    if isinstance(v, dict):
        return str(v.get(lang) or next((v[x] for x in LANGS if v.get(x)), None) or default)
    return default if v is None else str(v)
