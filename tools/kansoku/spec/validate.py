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
import json
import re
import tomllib
from bisect import bisect_right
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, Iterable

from kansoku.errors import SpecError


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
    """Line of a key path in a TOML text: the line where the deepest existing part of the path starts."""

    def __init__(self, text: str):
        self.text = text
        self._newlines = [i for i, c in enumerate(text) if c == "\n"]
        self._pos: dict[int, tuple[Any, int]] = {}  # id(item) -> (item kept alive, offset)
        try:
            self.doc = self._parse(text)
        except Exception:  # tomlkit refuses what tomllib accepted: lines are then unknown, not wrong
            self.doc = None

    def _parse(self, text: str):
        from tomlkit.items import AoT, Table
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
        return bisect_right(self._newlines, offset - 1) + 1

    def line(self, path: Iterable) -> int | None:
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
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None, [Problem(path, None, (), "no such report spec")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, None, [Problem(path, None, (), f"cannot read the spec: {exc}")]
    try:
        return tomllib.loads(text), text, []
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        return None, text, [Problem(path, int(m.group(1)) if m else None, (), f"not valid TOML: {exc}")]


def check_file(path: str | Path) -> tuple[dict | None, list[Problem]]:
    """Every problem of one spec file that can be found without a database."""
    path = Path(path)
    raw, text, problems = load_toml(path)
    if raw is None:
        return None, problems
    loc = Locator(text)
    found_ = schema_problems(plain(raw)) + cross_problems(raw)
    return raw, [Problem(path, loc.line(p), p, m, item_label(raw, p)) for p, m in found_]


_VALIDATOR = None


def _validator():
    global _VALIDATOR
    if _VALIDATOR is None:
        from jsonschema import Draft202012Validator

        from kansoku.spec.schema import schema

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
    from jsonschema import Draft202012Validator

    t = schema.get("type")
    if t is None:
        return "const" not in schema and "enum" not in schema
    checker = Draft202012Validator.TYPE_CHECKER
    return any(checker.is_type(instance, x) for x in (t if isinstance(t, list) else [t]))


def schema_problems(data: Any) -> list[tuple[tuple, str]]:
    out: list[tuple[tuple, str]] = []
    for err in _validator().iter_errors(data):
        out.extend(_render(err))
    # one message per place and text (a failed anyOf may report the same thing twice)
    seen, unique = set(), []
    for p, m in out:
        if (p, m) not in seen:
            seen.add((p, m))
            unique.append((p, m))
    return unique


def _render(err) -> list[tuple[tuple, str]]:
    path = tuple(err.absolute_path)
    inst, v, sch = err.instance, err.validator, err.schema
    if v == "additionalProperties":
        from kansoku.spec.schema import FIGURE, TABLE

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
            rendered = [r for e in inner for r in _render(e)]
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


def store_problems(report, store, *, spec_file: Path | None = None, raw: dict | None = None) -> list[Problem]:
    """Names the spec uses that the parsers and the database do not know, and device groups that
    match no data of the item's runs. ``report`` is a loaded model (spec.model.Report), or None with
    ``spec_file`` and ``raw`` (a spec with schema problems: its names are checked all the same, so
    that one run lists everything; device groups need the model and wait for the next run)."""
    from kansoku import parsers
    from kansoku.analysis import tables

    if report is not None:
        spec_file, raw = report.spec_file, report.raw
    loc = Locator(spec_file.read_text(encoding="utf-8"))
    problems: list[Problem] = []

    def add(path: tuple, message: str, item: dict | None = None, kind: str | None = None) -> None:
        problems.append(Problem(spec_file, loc.line(path), path, message, item_label(raw, path)))

    tables.known_roles(store)  # a per-host metric's [role] (cpu_idle_pct[server]) is told from a [selection]
    metrics = tables.known_metrics(store)
    factors = tables.known_factors(store)
    values = factor_values(store)
    defs = parsers.metrics()
    try:
        from kansoku.analysis import figures

        kinds = set(figures.KINDS)
    except Exception:  # pragma: no cover - chart modules missing: the figure step reports it
        kinds = set()

    def check_metric(path: tuple, name: Any, it: dict, kind: str) -> None:
        if not isinstance(name, str):
            return
        base, sel = tables.split_metric(name)
        if base not in metrics:
            add(path, f"unknown metric {base!r}" + (did_you_mean(base, metrics) or
                                                    " (SELECT DISTINCT metric FROM run_metrics lists them)"), it, kind)
            return
        if sel is None:
            return
        md = defs.get(base)
        if md is None or md.selection_sql is None:
            takes = sorted(n for n, d in defs.items() if d.selection_sql)
            add(path, f"metric {base!r} takes no [selection]; metrics that do: {takes}", it, kind)

    def check_factor(path: tuple, name: Any, it: dict | None, kind: str | None) -> bool:
        if isinstance(name, str) and name not in factors:
            add(path, f"unknown factor {name!r}" + (did_you_mean(name, factors) or
                                                    f"; the database has {sorted(factors)}"), it, kind)
            return False
        return isinstance(name, str)

    def check_value(path: tuple, factor: str, value: Any, it: dict, kind: str) -> bool:
        v = tables._canon(value)
        have = values.get(factor, set())
        if v not in have:
            shown = sorted(have, key=tables.factor_sort_key(report, factor))
            add(path, f"{factor} = {v!r} matches no run" + (did_you_mean(v, have) or
                                                            f"; values of {factor}: {shown[:20]}"), it, kind)
            return False
        return True

    # [factors.X] and [metrics.X] may name what the database does not hold yet; only a name that is
    # absent *and* very close to one it holds is taken for a typo. (Factor values are left alone:
    # "hdd" and "ssd", "checksums-on" and "-off" are close and both legitimate.)
    def typo(path: tuple, what: str, name: Any, known: Iterable[str]) -> None:
        if isinstance(name, str) and name not in known:
            hint = did_you_mean(name, known, cutoff=0.8)
            if hint:
                add(path, f"no {what} {name!r} in the database{hint}")

    for f in _d(raw.get("factors")):
        typo(("factors", f), "factor", f, factors)
    for m in _d(raw.get("metrics")):
        typo(("metrics", m), "metric", m, metrics)
    for k, c in enumerate(_l(raw.get("compare"))):
        c = _d(c)
        for side in ("where", "a", "b"):
            for f, cond in _d(c.get(side)).items():
                if not check_factor(("compare", k, side, f), f, None, None):
                    continue
                for j, v in enumerate(cond if isinstance(cond, list) else [cond]):
                    check_value(("compare", k, side, f) + ((j,) if isinstance(cond, list) else ()), f, v, c, "compare")
        for j, m in enumerate(_l(c.get("metrics"))):
            if isinstance(m, str) and m not in metrics:
                add(("compare", k, "metrics", j), f"unknown metric {m!r}" + (did_you_mean(m, metrics) or ""))
    for p, kind, it in item_paths(raw):
        where_ok = report is not None
        for f, cond in _d(it.get("where")).items():
            if not check_factor(p + ("where", f), f, it, kind):
                where_ok = False
                continue
            if isinstance(cond, list):
                for k, c in enumerate(cond):
                    where_ok &= check_value(p + ("where", f, k), f, c, it, kind)
            elif not isinstance(cond, dict):
                where_ok &= check_value(p + ("where", f), f, cond, it, kind)
        for role in ("rows", "columns", "x", "series", "row_groups"):
            if role == "rows" and it.get(role) in ("metrics", "functions", "queries"):  # rows that are not a factor
                continue
            check_factor(p + (role,), it.get(role), it, kind)
        for k, f in enumerate(_l(it.get("show_factors"))):
            check_factor(p + ("show_factors", k), f, it, kind)
        names = [(p + ("metric",), it["metric"])] if "metric" in it else []
        names += [(p + ("metrics", k), m) for k, m in enumerate(_l(it.get("metrics")))]
        for mp, m in names:
            check_metric(mp, m, it, kind)
        b = _d(it.get("baseline"))
        if "metric" in b:
            check_metric(p + ("baseline", "metric"), b["metric"], it, kind)
        if "published" in b:
            check_metric(p + ("baseline", "published"), b["published"], it, kind)
        if "factor" in b and check_factor(p + ("baseline", "factor"), b["factor"], it, kind) and "value" in b:
            check_value(p + ("baseline", "value"), b["factor"], b["value"], it, kind)
        if kind == "figure" and kinds:
            chart = it.get("chart", "line")
            if isinstance(chart, str) and chart not in kinds:
                add(p + ("chart",), f"unknown chart kind {chart!r}" + (did_you_mean(chart, kinds) or
                                                                      f"; kinds: {sorted(kinds)}"), it, kind)
        if where_ok:
            for mp, msg in _selection_problems(report, store, p, kind, it, names):
                add(mp, msg)
    return problems


def factor_values(store) -> dict[str, set[str]]:
    from kansoku.analysis.tables import _cached

    def compute() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for f, v in store.query("SELECT DISTINCT factor, value FROM run_factors"):
            out.setdefault(f, set()).add(v)
        return out
    return _cached(store, "factor_values", compute)


def _selection_problems(report, store, p: tuple, kind: str, it: dict, names) -> list[tuple[tuple, str]]:
    """A device group (or device, or CPU) that matches no data of the item's runs is an error: the
    table would otherwise show an empty cell for every run."""
    from kansoku import parsers
    from kansoku.analysis import tables

    try:
        item = report.item(it["id"], kind)
    except KeyError:
        return []
    out = []
    groups = report.raw.get("device_groups") or {}
    for mp, m in names:
        if not isinstance(m, str):
            continue
        base, sel = tables.split_metric(m)
        md = parsers.metrics().get(base)
        if sel is None or md is None or md.selection_sql is None:
            continue
        for tok in [t.strip() for t in re.split(r"[+,]", sel) if t.strip()]:
            params: list[Any] = []
            msql, mparams = tables.metric_sql(f"{base}[{tok}]", groups)
            cond = tables.where_sql(item, store, params)
            n = store.query(f"SELECT count(*) FROM {msql} m WHERE m.value IS NOT NULL AND {cond}",
                            mparams + params)[0][0]
            if n:
                continue
            what = md.selection_of or "instance"
            if tok in groups:
                msg = f"device group {tok!r} = {groups[tok]} matches no data of this {kind}'s runs"
            else:
                msg = f"{what} {tok!r} matches no data of this {kind}'s runs" + (
                    did_you_mean(tok, groups) if groups else "")
            out.append((mp, f"{m}: {msg}"))
    return out


def check_with_store(reports: list, store) -> None:
    """Raise SpecProblems listing every store-level problem of every report (nothing when all is well)."""
    problems: list[Problem] = []
    for r in reports:
        problems += store_problems(r, store)
    if problems:
        raise SpecProblems(problems)


def outline(path: Path, raw: dict):
    """What the page checks need of a spec that does not load (id, chapters with their numbers and
    items), as far as it can be read."""
    from types import SimpleNamespace

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


def preflight(specs: Path, db: Path, content_root: Path = Path("content/reports"), report_id: str | None = None) -> list:
    """Everything a build can check before computing, in one run: every spec (``specs`` a directory,
    or one report with ``report_id``) against the schema, the names they use against the parsers and
    the database (when it exists), and their prose pages (against an outline of a spec that does not
    load). Raises SpecProblems listing every problem;
    returns the loaded reports."""
    from kansoku.report.structure import content_problems, page_problems
    from kansoku.spec.model import load_all, load_report
    from kansoku.store.db import open_store

    specs = Path(specs)
    paths = [specs / f"{report_id}.toml"] if report_id is not None else sorted(specs.glob("*.toml"))
    checked = [(p, *check_file(p)) for p in paths]
    problems = [pr for _, _, prs in checked for pr in prs]
    reports = []
    if not problems:
        if report_id is None:
            reports = load_all(specs)
            problems += content_problems(reports, content_root)
        else:
            reports = [load_report(paths[0], validated=True)]
            problems += page_problems(reports[0], content_root)
    else:  # the pages too, against what can be read of the specs, so that one run lists everything
        outlines = [outline(path, raw) for path, raw, _ in checked if raw is not None]
        unread = [path.stem for path, raw, _ in checked if raw is None]
        if report_id is None:
            problems += content_problems(outlines, content_root, unchecked=unread)
        elif outlines:
            problems += page_problems(outlines[0], content_root)
    if Path(db).exists():
        store = open_store(db, read_only=True)
        try:
            for path, raw, _ in checked:
                if raw is not None:
                    rep = next((r for r in reports if r.spec_file == path), None)
                    problems += store_problems(rep, store, spec_file=path, raw=raw)
        finally:
            store.close()
    if problems:
        raise SpecProblems(problems)
    return reports
