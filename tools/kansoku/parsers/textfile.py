"""Opening a text output: the one preamble every text parser shares (UTF-8, no NUL byte, a multi-byte
character cut by a killed tool at the very end tolerated), errors naming file and line."""

from __future__ import annotations

from pathlib import Path

from kansoku.errors import ParseError


def read_text(path: Path, what: str) -> str:
    """The whole file as text. ``what`` names the tool output for the error ('fio output')."""
    data = path.read_bytes()
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ParseError(path, data[:nul].count(b"\n") + 1, f"text ({what})", "binary data (NUL byte)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(data) - 3 and not data.endswith(b"\n"):  # a character cut at EOF
            return data[: exc.start].decode("utf-8", errors="replace")
        raise ParseError(path, data[: exc.start].count(b"\n") + 1, f"UTF-8 text ({what})",
                         "undecodable bytes") from None


def split_lines(text: str) -> tuple[list[str], bool]:
    """Lines without their newline (and a trailing carriage return), and whether the last was cut off."""
    truncated = bool(text) and not text.endswith("\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [l.removesuffix("\r") for l in lines], truncated
