"""Checks a report spec before the model is built, and reports every problem at once.

Three passes, each collecting every problem it finds rather than stopping at the first:

1. the TOML syntax (tomllib, as the model reads it);
2. the schema (``spec/schema.py``, JSON Schema through ``jsonschema``) and the checks a schema cannot
   say (ids used twice, numbering, a baseline metric that is not one of the table's);
3. with a store: names of metrics, factors and factor values, chart kinds and device groups against
   what the parsers define and the database holds, with "did you mean" suggestions.

Each problem is located by its key path (``chapter[1].table[0].baseline.digits``) and its line in the
TOML file. tomllib keeps no positions, so the file is parsed a second time with tomlkit (a
style-preserving parser) whose parser records where each key, value and table header starts.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import tomllib
from bisect import bisect_right
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable

from kansoku.errors import SpecError
from kansoku.resources import code_version
from kansoku.spec.schema import FIGURE, TABLE, schema


@dataclass
class Problem:
    """One problem: the file (a spec, or a prose page), its line, the key path in a spec, what is wrong."""

    spec_file: Path
    line: int | None
    path: tuple
    message: str
    item: str | None = None  # "table 'read-tps'": the item the path is in, when it has an id

    def __str__(self) -> str:
        where = f"{self.spec_file}:{self.line}" if self.line else str(self.spec_file)
        if not self.path:
            return f"{where}: {self.message}"
        item = f" ({self.item})" if self.item else ""
        return f"{where}: {format_path(self.path)}{item}: {self.message}"


def item_label(raw: Any, path: tuple) -> str | None:
    """"table 't1'" / "chapter 'c'" for a path into a chapter's item or a chapter, when it has an id."""
    try:
        if len(path) >= 4 and path[0] == "chapter" and path[2] in ("table", "figure"):
            iid = raw["chapter"][path[1]][path[2]][path[3]].get("id")
            return f"{path[2]} {iid!r}" if isinstance(iid, str) else None
        if len(path) >= 2 and path[0] == "compare":
            cid = raw["compare"][path[1]].get("id")
            return f"compare {cid!r}" if isinstance(cid, str) else None
        if len(path) >= 2 and path[0] == "chapter":
            cid = raw["chapter"][path[1]].get("id")
            return f"chapter {cid!r}" if isinstance(cid, str) else None
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return None


class SpecProblems(SpecError):
    """Every problem of one or more specs (exit 3): one line each, ``file:line: key path: message``."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems, key=lambda p: (str(p.spec_file), p.line or 0))
        files = sorted({str(p.spec_file) for p in self.problems})
        n = len(self.problems)
        if all(f.endswith(".toml") for f in files):
            what = "the report spec" + ("s" if len(files) > 1 else "")
        else:
            what = "the report specs and their prose pages"
        head = f"{n} problem{'s' if n != 1 else ''} in {what}"
        super().__init__(files[0] if len(files) == 1 else ", ".join(files), None,
                         head + ":\n" + "\n".join(f"  {p}" for p in self.problems))


def format_path(path: Iterable) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            k = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part, ensure_ascii=False)
            out += ("." if out else "") + k
    return out


def did_you_mean(name: str, known: Iterable[str], n: int = 3, cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(str(name), sorted({str(k) for k in known}), n=n, cutoff=cutoff)
    if not close:
        return ""
    return "; did you mean " + " or ".join(json.dumps(c, ensure_ascii=False) for c in close) + "?"


# -- positions -----------------------------------------------------------------------------------

class Locator:
    """Line of a key path in a TOML text: the line where the deepest existing part of the path starts; the
    empty path (the document: a top-level key it lacks) is line 1."""

    def __init__(self, text: str):
        self.text = text
        self._newlines: list[int] | None = None
        self._pos: dict[int, tuple[Any, int]] = {}  # id(item) -> (item kept alive, offset)
        self._doc: Any = None
        self._parsed = False

    @property
    def doc(self) -> Any:
        """The text parsed by tomlkit with positions, on first use: a spec without problems is never
        parsed a second time (tomlkit is slow; most builds look up no line)."""
        if not self._parsed:
            self._parsed = True
            try:
                self._doc = self._parse(self.text)
            except Exception:  # tomlkit refuses what tomllib accepted: lines are then unknown, not wrong
                self._doc = None
        return self._doc

    def _parse(self, text: str):
        from tomlkit.items import AoT, Table  # tomlkit only to locate a problem's line
        from tomlkit.parser import Parser

        pos = self._pos

        def mark(o: Any, start: int) -> None:
            pos.setdefault(id(o), (o, start))
            if isinstance(o, AoT) and o.body:  # a table header starting an array of tables
                mark(o.body[0], start)
            elif isinstance(o, Table) and o.is_super_table():  # [a.b] creates a, b at the same header
                for _, v in o.value.body:
                    if isinstance(v, (Table, AoT)):
                        mark(v, start)

        class PositionParser(Parser):
            def _parse_key_value(self, parse_comment: bool = False):
                start = self._idx
                k, v = super()._parse_key_value(parse_comment)
                pos[id(v)] = (v, start)
                return k, v

            def _parse_value(self):
                start = self._idx
                v = super()._parse_value()
                pos.setdefault(id(v), (v, start))
                return v

            def _parse_table(self, parent_name=None, parent=None):
                start = self._idx
                k, t = super()._parse_table(parent_name, parent)
                mark(t, start)
                return k, t

        return PositionParser(text).parse()

    def line_at(self, offset: int) -> int:
        if self._newlines is None:
            self._newlines = [i for i, c in enumerate(self.text) if c == "\n"]
        return bisect_right(self._newlines, offset - 1) + 1

    def line(self, path: Iterable) -> int | None:
        path = tuple(path)
        if not path:  # a key missing at the top level has no line of its own: the document's first names it
            return 1
        if self.doc is None:
            return None
        node: Any = self.doc
        best = None
        for part in path:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break
            got = self._pos.get(id(node))
            if got is not None:
                best = got[1]
        return None if best is None else self.line_at(best)


# -- pass 1 and 2: syntax, schema, cross-checks -------------------------------------------------------

def plain(v: Any) -> Any:
    """TOML data as JSON data (dates and times as ISO strings), for the schema."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (datetime, date, time)):
        return v.isoformat()
    return v


def load_toml(path: Path) -> tuple[dict | None, str | None, list[Problem]]:
    """The parsed spec (or None) and its text; a syntax error is a problem with its line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None, [Problem(path, None, (), "no such report spec")]
    except OSError as exc:
        return None, None, [Problem(path, None, (), f"cannot read the spec: {exc}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, None, [Problem(path, data[:exc.start].count(b"\n") + 1, (),
                                    f"not UTF-8 text (TOML is UTF-8): the byte 0x{data[exc.start]:02x}")]
    try:
        return tomllib.loads(text), text, []
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(m.group(1)) if m else None
        if line is None and "at end of document" in str(exc):  # an unclosed string or array: the last line
            line = max(1, len(text.splitlines()))
        return None, text, [Problem(path, line, (), f"not valid TOML: {exc}")]


def text_key(text: str) -> str:
    """What a spec's check without a database depends on: its text and the code (the schema, the checks)."""
    return hashlib.sha256(f"{code_version()}\0spec\0{text}".encode()).hexdigest()


def check_file(path: str | Path, clean: set[str] | None = None) -> tuple[dict | None, list[Problem]]:
    """Every problem of one spec file that can be found without a database. ``clean``: the ``text_key`` of
    specs an earlier check found no such problem in (read again, not checked again)."""
    path = Path(path)
    raw, text, problems = load_toml(path)
    if raw is None:
        return None, problems
    if clean is not None and text_key(text) in clean:
        return raw, []
    loc = Locator(text)
    found_ = schema_problems(plain(raw)) + cross_problems(raw)
    return raw, [Problem(path, loc.line(p), p, m, item_label(raw, p)) for p, m in found_]


_VALIDATOR = None


def _validator():
    global _VALIDATOR
    if _VALIDATOR is None:
        from jsonschema import Draft202012Validator  # built once, on the first spec checked

        _VALIDATOR = Draft202012Validator(schema())
    return _VALIDATOR


_TYPE_WORDS = {"integer": "an integer", "string": "a string", "boolean": "true or false", "number": "a number",
               "object": "a table", "array": "an array", "null": "nothing"}
_EXPECTED = {  # by the title of a $defs entry
    "bilingual text": 'a string or { ja = "…", en = "…" }',
    "digits": 'a number of decimals (0, 1, 2, …) or "printed"',
    "condition": "a value, a list of values or { min = a, max = b }",
    "device group": 'a list of device names, e.g. ["sdb", "sdc"]',
    "non-empty text": "a text in ja or en (or both)",
}


def found(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(v, ensure_ascii=False)


def _types(t: Any) -> str:
    return " or ".join(_TYPE_WORDS.get(x, x) for x in (t if isinstance(t, list) else [t]))


def _matches_type(schema: dict, instance: Any) -> bool:
    from jsonschema import Draft202012Validator  # jsonschema only when a problem is worded

    t = schema.get("type")
    if t is None:
        return "const" not in schema and "enum" not in schema
    checker = Draft202012Validator.TYPE_CHECKER
    return any(checker.is_type(instance, x) for x in (t if isinstance(t, list) else [t]))


def schema_problems(data: Any) -> list[tuple[tuple, str]]:
    out: list[tuple[tuple, str]] = []
    for err in _validator().iter_errors(data):
        out.extend(schema_error_messages(err))
    # one message per place and text (a failed anyOf may report the same thing twice)
    seen, unique = set(), []
    for p, m in out:
        if (p, m) not in seen:
            seen.add((p, m))
            unique.append((p, m))
    return unique


def schema_error_messages(err) -> list[tuple[tuple, str]]:
    path = tuple(err.absolute_path)
    inst, v, sch = err.instance, err.validator, err.schema
    if v == "additionalProperties":
        allowed = set(sch.get("properties", {}))
        extra = [k for k in inst if k not in allowed]
        other = {"[[chapter.table]]": ("figures", "tables", FIGURE),
                 "[[chapter.figure]]": ("tables", "figures", TABLE)}.get(sch.get("title", ""))
        out = []
        for k in extra:
            if other and k in other[2]:
                out.append((path + (k,), f"{json.dumps(k)} is a key of {other[0]}, not of {other[1]}"))
            else:
                out.append((path + (k,), f"unknown key {json.dumps(k, ensure_ascii=False)}"
                            + (did_you_mean(k, allowed) or f"; known keys: {', '.join(sorted(allowed))}")))
        return out
    if v == "required":
        missing = [k for k in err.validator_value if k not in inst]
        return [(path, f"missing key {json.dumps(k)}") for k in missing]
    if v == "type":
        expected = _EXPECTED.get(sch.get("title", "")) or _types(err.validator_value)
        return [(path, f"expected {expected}, found {found(inst)}")]
    if v == "enum":
        opts = ", ".join(json.dumps(o) for o in err.validator_value)
        return [(path, f"expected one of {opts}, found {found(inst)}"
                 + did_you_mean(inst, [str(o) for o in err.validator_value]))]
    if v == "const":
        return [(path, f"expected {found(err.validator_value)}, found {found(inst)}")]
    if v in ("minLength", "minItems", "minProperties"):
        return [(path, "must not be empty")]
    if v == "minimum":
        return [(path, f"expected at least {err.validator_value}, found {found(inst)}")]
    if v == "pattern":
        return [(path, f"{found(inst)} is not allowed here (expected a match of {err.validator_value})")]
    if v == "not":
        return [(path, f"{found(inst)} is not allowed here" + (": cannot compare with zero" if inst == 0 else ""))]
    if v == "dependentRequired":
        return [(path, f"{k} needs {d} (give both)") for k, deps in err.validator_value.items() if k in inst
                for d in deps if d not in inst]
    if v in ("anyOf", "oneOf"):
        branches = err.validator_value
        if all(set(b) == {"required"} for b in branches):  # one of several keys
            names = [b["required"][0] for b in branches]
            given = [n for n in names if n in inst]
            if "metric" in names:
                return [(path, "needs metric = \"…\" or metrics = [\"…\", …]")]
            if v == "oneOf" and len(given) > 1:
                return [(path, f"gives {' and '.join(given)}; give exactly one of {', '.join(names)}")]
            return [(path, "needs one of " + ", ".join(names)
                     + (" (factor with value, row = \"first\", fixed = N)" if "fixed" in names else ""))]
        # a branch of the value's own type decides (a table that fails inside is reported inside)
        fitting = [i for i, b in enumerate(branches) if _matches_type(b, inst)]
        if len(fitting) == 1:
            inner = [e for e in (err.context or []) if e.relative_schema_path and e.relative_schema_path[0] == fitting[0]]
            rendered = [r for e in inner for r in schema_error_messages(e)]
            if rendered:
                return rendered
        expected = _EXPECTED.get(sch.get("title", "")) or " or ".join(
            _types(b["type"]) if "type" in b else found(b.get("const")) for b in branches)
        return [(path, f"expected {expected}, found {found(inst)}")]
    return [(path, err.message)]


def cross_problems(raw: dict) -> list[tuple[tuple, str]]:
    """What the schema cannot say: ids used twice, numbering, references inside the spec."""
    out: list[tuple[tuple, str]] = []
    chapters = raw.get("chapter") if isinstance(raw.get("chapter"), list) else []
    chapter_ids: dict[str, int] = {}
    item_ids: dict[tuple[str, str], tuple] = {}
    numbers: dict[int, int] = {}
    for ci, ch in enumerate(chapters):
        if not isinstance(ch, dict):
            continue
        cid = ch.get("id")
        if isinstance(cid, str):
            if cid in chapter_ids:
                out.append((("chapter", ci, "id"), f"chapter id {cid!r} is used twice (also chapter[{chapter_ids[cid]}])"))
            chapter_ids.setdefault(cid, ci)
        cnum = ch.get("number", ci + 1)
        if isinstance(cnum, int) and not isinstance(cnum, bool):
            if cnum in numbers:
                out.append((("chapter", ci, "number"), f"chapter number {cnum} is used twice (also chapter[{numbers[cnum]}])"))
            numbers.setdefault(cnum, ci)
        for kind in ("table", "figure"):
            items = ch.get(kind) if isinstance(ch.get(kind), list) else []
            previous = 0
            for ii, it in enumerate(items):
                if not isinstance(it, dict):
                    continue
                p = ("chapter", ci, kind, ii)
                iid = it.get("id")
                if isinstance(iid, str):
                    if (kind, iid) in item_ids:
                        out.append((p + ("id",), f"{kind} id {iid!r} is used twice in this report "
                                                  f"(also {format_path(item_ids[(kind, iid)])})"))
                    item_ids.setdefault((kind, iid), p)
                n = it.get("number")
                if n is None:
                    previous += 1
                    continue
                if isinstance(n, str) and "." in n and isinstance(cnum, int):
                    head, _, tail = n.partition(".")
                    if head != str(cnum):
                        out.append((p + ("number",), f"number {n!r} must be \"{cnum}.<n>\" (chapter {cnum})"))
                        continue
                    n = int(tail) if tail.isdigit() else None
                if isinstance(n, int) and not isinstance(n, bool):
                    if n <= previous:
                        out.append((p + ("number",), f"number {cnum}.{n} would not follow {cnum}.{previous}; "
                                                     "tables and figures are numbered in reading order"))
                    previous = max(previous, n)
            for ii, it in enumerate(items):
                if not isinstance(it, dict) or not isinstance(it.get("baseline"), dict):
                    continue
                metrics = it.get("metrics") if isinstance(it.get("metrics"), list) else [it.get("metric")]
                bm = it["baseline"].get("metric")
                if isinstance(bm, str) and bm not in metrics:
                    out.append((("chapter", ci, kind, ii, "baseline", "metric"),
                                f"{bm!r} is not one of the table's metrics {metrics}" + did_you_mean(bm, metrics)))
    compare_ids: dict[str, int] = {}
    for k, c in enumerate(raw.get("compare") if isinstance(raw.get("compare"), list) else []):
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("id"), str):
            if c["id"] in compare_ids:
                out.append((("compare", k, "id"), f"compare id {c['id']!r} is used twice (also compare[{compare_ids[c['id']]}])"))
            compare_ids.setdefault(c["id"], k)
        if isinstance(c.get("a"), dict) and c.get("a") == c.get("b"):
            out.append((("compare", k, "b"), "selects the same runs as a: nothing to compare"))
        common = set(c["where"]) if isinstance(c.get("where"), dict) else set()
        for side in ("a", "b"):
            for f in sorted(set(c[side]) & common if isinstance(c.get(side), dict) else ()):
                out.append((("compare", k, side, f), f"factor {f!r} is in where too: name it in one place"))
    rep = raw.get("report") if isinstance(raw.get("report"), dict) else {}
    for ai, a in enumerate(rep.get("author") or [] if isinstance(rep.get("author"), list) else []):
        if isinstance(a, dict) and isinstance(a.get("chapters"), list):
            for k, c in enumerate(a["chapters"]):
                if isinstance(c, str) and c not in chapter_ids:
                    out.append((("report", "author", ai, "chapters", k),
                                f"no chapter {c!r} in this spec" + did_you_mean(c, chapter_ids)))
    return out


# -- pass 3: against a store ------------------------------------------------------------------------

def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list:
    return v if isinstance(v, list) else []


def item_paths(raw: dict) -> Iterable[tuple[tuple, str, dict]]:
    """(path, kind, raw item) of every table and figure (skipping what is not even a table)."""
    for ci, ch in enumerate(_l(raw.get("chapter"))):
        for kind in ("table", "figure"):
            for ii, it in enumerate(_l(_d(ch).get(kind))):
                if isinstance(it, dict):
                    yield ("chapter", ci, kind, ii), kind, it


def outline(path: Path, raw: dict):
    """What the page checks need of a spec that does not load (id, chapters with their numbers and
    items), as far as it can be read."""
    rep = _d(raw.get("report"))
    rid = rep["id"] if isinstance(rep.get("id"), str) else path.stem
    chapters = []
    for ci, ch in enumerate(_l(raw.get("chapter"))):
        ch = _d(ch)
        if not isinstance(ch.get("id"), str):
            continue
        n = ch.get("number")
        number = n if isinstance(n, int) and not isinstance(n, bool) else ci + 1
        items = [SimpleNamespace(kind=kind, id=it["id"]) for kind in ("table", "figure")
                 for it in _l(ch.get(kind)) if isinstance(it, dict) and isinstance(it.get("id"), str)]
        chapters.append(SimpleNamespace(id=ch["id"], number=number, items=items))
    return SimpleNamespace(id=rid, spec_file=path, chapters=chapters)
