"""Numbers as the tools print them: ASCII digits only.

Python's ``float`` and ``int`` also read fullwidth or other scripts' digits (``"１２"``, ``"١٢"``) and
underscores (``"1_000"``), which no measuring tool prints; a token holding them is damage, so these raise
``ValueError`` as for any other non-number. The parsers' regular expressions carry ``re.ASCII`` for the
same reason (``tests/test_ingest_limits.py`` checks every one).
"""

from __future__ import annotations


def _printed(tok: str) -> str:
    if not tok.isascii() or "_" in tok:
        raise ValueError(f"not a number a tool prints: {tok!r}")
    return tok


def to_float(tok: str) -> float:
    """float() of a printed token."""
    return float(_printed(tok))


def to_int(tok: str) -> int:
    """int() of a printed token."""
    return int(_printed(tok))


def is_digits(tok: str) -> bool:
    """The token is one or more ASCII digits (``str.isdigit`` alone also takes ``"１２"`` and ``"²"``)."""
    return tok.isascii() and tok.isdigit()


def foreign_digit(line: str) -> str | None:
    """The first digit of ``line`` that is not ASCII, if any: a line a parser's patterns then fail to match
    would otherwise be skipped as a line of another kind."""
    if line.isascii():
        return None
    return next((c for c in line if c.isdigit() and not c.isascii()), None)
