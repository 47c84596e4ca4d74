"""What the ingest holds to whatever the input: numbers only in ASCII digits, memory flat in a file's length,
names printed safely, no temporary file left behind a killed ingest, one failed file never losing the others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PARSERS = ROOT / "tools" / "kansoku" / "parsers"
_FLAGS_AT = {"compile": 1, "match": 2, "search": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "sub": 4,
             "subn": 4, "split": 3}


def _digit_patterns_without_ascii(path: Path) -> list[str]:
    src = path.read_text()
    out = []
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in _FLAGS_AT and node.args):
            continue
        if "\\d" not in (ast.get_source_segment(src, node.args[0]) or ""):
            continue
        flags = [k.value for k in node.keywords if k.arg == "flags"] + node.args[_FLAGS_AT[node.func.attr]:][:1]
        if not any("ASCII" in ast.get_source_segment(src, f) for f in flags):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


# sysstat's parsers are another family's files; they are held to the same rule by their own change
@pytest.mark.parametrize("path", sorted(p for p in PARSERS.rglob("*.py") if "sysstat" not in p.parts),
                         ids=lambda p: str(p.relative_to(PARSERS)))
def test_parsers_read_only_ascii_digits_as_numbers(path):
    """Python's \\d, int() and float() take '１２３' (fullwidth) and other scripts' digits: a parser's number
    patterns are ASCII (re.ASCII), so no damaged or foreign digit is ever read as a number."""
    assert not _digit_patterns_without_ascii(path)
