"""Comments, docstrings and test names say why the code is as it is: no issue numbers, dates or measured
figures, which belong in the tracker, the history and docs/ (docs/performance.md, docs/build-performance.md).

Scanned: every Python file of tools/ (the package and the command scripts) and tests/ (fixtures aside), and
the fixtures' README files. A figure that states what the code does (a timeout of 30 s, a 16 MB limit, an
example of a tool's output with its timestamp) is not a measurement and passes; what is refused is the shape
a lab note takes: an approximate or before/after figure, a cost "of CPU", a cost or time "took", "N x
faster", a figure at a campaign size.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ISSUE = re.compile(r"(?i)\bissues?\s*#?\d+|\(#\d+\)")
# a calendar date; a timestamp (a date and a time of day) is an example of a tool's output and passes
DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b(?![ T]\d\d:\d\d)")
_UNIT = r"(?:ms|µs|us|ns|s|sec|seconds?|min|minutes?|h|hours?|[kKMGT]i?B|bytes)"
_NUM = r"\d[\d,]*(?:\.\d+)?"
MEASURE = re.compile(rf"""(?x)
    ~\s?{_NUM}\s?{_UNIT}\b                                  # an approximate figure
  | \b{_NUM}\s?{_UNIT}\s+of\s+CPU\b                          # a CPU cost
  | \b{_NUM}\s?{_UNIT}?\s?(?:->|→)\s?~?{_NUM}\s?{_UNIT}\b     # before -> after
  | \b{_NUM}\s?[x×]\s+(?:faster|slower|dearer|cheaper|the\ CPU|the\ time|as\ (?:fast|slow|much))\b
  | \b(?:took|takes|cost|costs|costing|spent|peaked)\s+(?:about\s+|~)?{_NUM}\s?{_UNIT}\b
  | \bat\ 10,000\ runs\b
""")
KINDS = {"an issue number": ISSUE, "a date": DATE, "a measurement": MEASURE}

# (path, the text's start) -> why it may stay. Keep it tiny.
ALLOWED: dict[tuple[str, str], str] = {}


def python_files() -> list[Path]:
    tools = [p for p in (ROOT / "tools").iterdir()
             if p.is_file() and p.read_bytes().startswith(b"#!/usr/bin/env python")]
    package = sorted((ROOT / "tools" / "kansoku").rglob("*.py"))
    tests = sorted(p for p in (ROOT / "tests").rglob("*.py") if "fixtures" not in p.relative_to(ROOT).parts)
    return sorted(tools) + package + tests


def comments_and_docstrings(src: str):
    """(line, text) of every comment and every line of every docstring of a module."""
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if ast.get_docstring(node, clean=False) is not None:
                first = node.body[0]
                for i, line in enumerate(first.value.value.splitlines()):
                    yield first.lineno + i, line
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def problems(path: Path, src: str) -> list[str]:
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    found = []
    for line, text in comments_and_docstrings(src):
        for kind, pattern in KINDS.items():
            m = pattern.search(text)
            if m and not any(rel == a and text.strip().startswith(b) for a, b in ALLOWED):
                found.append(f"{rel}:{line}: {kind} ({m.group(0).strip()!r}) in: {text.strip()[:120]}")
    return found


def test_no_comment_or_docstring_holds_an_issue_number_a_date_or_a_measurement():
    found = [p for path in python_files() for p in problems(path, path.read_text(encoding="utf-8"))]
    assert not found, ("comments say why; figures go to docs/ and history to the commits:\n"
                       + "\n".join(found))


def test_no_test_is_named_after_an_issue():
    named = []
    for path in python_files():
        if path.parent.name != "tests":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and re.search(r"(?i)issue_?\d|_i\d{2}_", node.name):
                named.append(f"{path.name}:{node.lineno}: {node.name}")
    assert not named, "name a test after what it tests:\n" + "\n".join(named)


def test_no_fixture_readme_cites_an_issue():
    cited = [f"{p.relative_to(ROOT)}:{n}: {line}" for p in sorted((ROOT / "tests" / "fixtures").rglob("README.md"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if ISSUE.search(line)]
    assert not cited, "\n".join(cited)


@pytest.mark.parametrize("comment, kind", [
    ("# a statement per file (issue 29)", "an issue number"),
    ("# measured on 2026-11-27", "a date"),
    ("# each statement cost ~6 ms", "a measurement"),
    ("# 5.1 s of CPU against the bare read", "a measurement"),
    ("# 0.87 -> 0.41 s once planned once", "a measurement"),
    ("# libyaml's parser (10x faster)", "a measurement"),
    ("# the query took 2.3 s", "a measurement"),
    ("# the build held most of it at 10,000 runs", "a measurement"),
])
def test_each_kind_is_caught_in_a_comment_and_a_docstring(tmp_path, comment, kind):
    text = comment.removeprefix("# ")
    src = f'"""Module."""\n\n\ndef f():\n    """{text}"""\n    return 1  {comment}\n'
    found = problems(tmp_path / "m.py", src)
    assert [p.split(": ")[1].split(" (")[0] for p in found] == [kind, kind], found


@pytest.mark.parametrize("comment", [
    "# a psql call times out after 30 s",
    "# DuckDB reads each row as one JSON object of at most 16 MB",
    "# '2026-11-23 11:06:20.149 JST' as %m prints it",
    "# sadf -d prints a timestamp as '2026-11-26 12:00:00 UTC'",
    "# with 3 runs against 3 the smallest attainable p is 0.10",
])
def test_what_the_code_does_passes(tmp_path, comment):
    assert problems(tmp_path / "m.py", f"x = 1  {comment}\n") == []
