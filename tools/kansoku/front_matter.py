"""The front matter of a content page, read as Hugo reads it (the page structure and both renderers use it)."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import yaml

from kansoku.errors import SpecError

_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML built without libyaml: the pure one
FRONT_MATTER = re.compile(r"\A(?P<delim>---|\+\+\+)[ \t]*\r?\n(?P<block>.*?\r?\n)??(?P=delim)[ \t]*(?:\r?\n|\Z)", re.S)


# Front matter parsed by this process, by the text of its file: a build reads each prose page's several times
# (the preflight's check, then each report's pages for the site and for the PDF: ~5 parses of the same text).
# A copy is handed out (a caller may change what it got); a text that does not parse is not kept.
_PARSED: dict[str, tuple[dict[str, Any], str]] = {}
_PARSED_MAX = 4096


def parse_front_matter(text: str, path: str | Path | None = None) -> tuple[dict[str, Any], str]:
    """The front matter of a content file, read as Hugo reads it, and the body.

    ``---`` opens YAML (PyYAML), ``+++`` TOML (tomllib), ``{`` JSON. Dates become ISO strings (the
    front matter is passed on to generated pages). A front matter that does not parse is a SpecError
    naming the file and line (exit 3), as Hugo would refuse the page."""
    got = _PARSED.get(text)
    if got is None:
        got = _parse(text, path)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[text] = got
    return copy.deepcopy(got[0]), got[1]


def _parse(text: str, path: str | Path | None) -> tuple[dict[str, Any], str]:
    where = str(path) if path is not None else "front matter"
    if text.startswith("{"):
        try:
            front, end = json.JSONDecoder().raw_decode(text)
        except ValueError as exc:
            raise SpecError(where, None, f"front matter is not valid JSON: {exc}") from None
        return _front_dict(front, where), text[end:].lstrip("\r\n")
    m = FRONT_MATTER.match(text)
    if not m:
        return {}, text
    block = m.group("block") or ""
    first_line = 2  # the block starts on the line after the opening delimiter
    if m.group("delim") == "+++":
        try:
            front = tomllib.loads(block)
        except tomllib.TOMLDecodeError as exc:
            lm = re.search(r"at line (\d+)", str(exc))
            line = f":{int(lm.group(1)) + first_line - 1}" if lm else ""
            raise SpecError(f"{where}{line}", None, f"front matter is not valid TOML: {exc}") from None
    else:
        try:
            try:  # libyaml's parser (much faster), the same constructor; its errors read in PyYAML's words below
                front = yaml.load(block, Loader=_FAST_LOADER)
            except yaml.YAMLError:
                front = yaml.safe_load(block)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + first_line}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise SpecError(f"{where}{line}", None, f"front matter is not valid YAML: {problem}") from None
    return _front_dict(front, where), text[m.end():]


def _front_dict(front: Any, where: str) -> dict[str, Any]:
    if front is None:
        return {}
    if not isinstance(front, dict):
        raise SpecError(where, None, f"front matter must be a mapping of keys to values, found {type(front).__name__}")
    return {str(k): _plain(v) for k, v in front.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, (datetime, date, time)):
        return v.isoformat()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v
