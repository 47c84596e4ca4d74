"""Opening a text output: the one preamble every text parser shares (UTF-8, no NUL byte, a multi-byte
character cut by a killed tool at the very end tolerated), errors naming file and line."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError


def read_text(path: Path, what: str) -> str:
    """The whole file as text. ``what`` names the tool output for the error ('fio output')."""
    return decode_text(path, path.read_bytes(), what)


def decode_text(path: Path, data: bytes, what: str) -> str:
    """A file's bytes (``data``, decompressed if it was) as text: a NUL byte or bytes that are not UTF-8 are an
    error naming the line; a character cut at the very end (a killed tool) is left out."""
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


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def stream_lines(path: Path, what: str):
    """The file's lines one at a time, as (line number, text without its line end, cut): ``cut`` marks a last
    line without its newline. Memory stays that of one line whatever the file's length. A NUL byte or bytes
    that are not UTF-8 are an error naming the line; so is a gzip stream cut short or damaged."""
    compressed = is_gzip(path)
    fh = gzip.open(path, "rb") if compressed else open(path, "rb")
    lineno = 0
    try:
        with fh:
            for raw in fh:
                lineno += 1
                if b"\x00" in raw:
                    raise ParseError(path, lineno, f"text ({what})", "a NUL byte")
                cut = not raw.endswith(b"\n")
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    if cut and exc.start >= len(raw) - 3:  # a character cut by a killed tool at the very end
                        text = raw[:exc.start].decode("utf-8", errors="replace")
                        yield lineno, text.removesuffix("\r"), cut
                        continue
                    raise ParseError(path, lineno, f"UTF-8 text ({what})",
                                     f"the byte {raw[exc.start:exc.start + 1]!r} at column {exc.start + 1}") from None
                yield lineno, text.rstrip("\n").removesuffix("\r"), cut
    except (OSError, EOFError) as exc:
        if not compressed:
            raise
        raise ParseError(path, lineno or None, f"a complete gzip stream ({what})",
                         f"{type(exc).__name__}: {' '.join(str(exc).split())[:100]} (cut short?)") from None


def split_lines(text: str) -> tuple[list[str], bool]:
    """Lines without their newline (and a trailing carriage return), and whether the last was cut off."""
    truncated = bool(text) and not text.endswith("\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [l.removesuffix("\r") for l in lines], truncated


def refuse_control_bytes(path: Path, expected: str, *, crlf: bool = False) -> None:
    """A stray carriage return or a NUL byte stops DuckDB's CSV reader with an error that would abort the
    ingest transaction, whatever ignore_errors says: found first, at memchr speed. ``crlf``: the file's lines
    end in CRLF (read so), and every line must: a lone CR or LF is refused."""
    offset = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 18):  # stays in L2 cache for the second search (larger chunks cost far more CPU)
            if crlf and chunk.endswith(b"\r"):
                chunk += fh.read(1)  # a CRLF across the chunk's end
            if not crlf:
                checks = ((b"\r", "a carriage return (CRLF line ends?)"), (b"\x00", "a NUL byte"))
                for byte, what in checks:
                    i = chunk.find(byte)
                    if i >= 0:
                        line = line_of_offset(path, offset + i)
                        raise ParseError(path, line, f"{expected}, lines ending in LF only", what)
            else:
                i = chunk.find(b"\x00")
                if i >= 0:
                    raise ParseError(path, line_of_offset(path, offset + i), expected, "a NUL byte")
                if chunk.count(b"\r") != chunk.count(b"\r\n") or chunk.count(b"\n") != chunk.count(b"\r\n"):
                    bare = chunk.replace(b"\r\n", b"\x00\x00")
                    i = min(j for j in (bare.find(b"\r"), bare.find(b"\n")) if j >= 0)
                    raise ParseError(path, line_of_offset(path, offset + i),
                                     f"{expected}, every line ending in CRLF as the first one does",
                                     "a line ending in a lone CR or LF")
            offset += len(chunk)


def line_of_offset(path: Path, offset: int) -> int:
    n, done = 1, 0
    with open(path, "rb") as fh:
        while done < offset:
            chunk = fh.read(min(1 << 23, offset - done))
            if not chunk:
                break
            n += chunk.count(b"\n")
            done += len(chunk)
    return n


def csv_header(head: Any) -> list[str] | None:
    """The column names on the first line of a text file's head (a parsers.base.FileHead), or None when the
    file is binary or its first line is no CSV line (psql --csv output is recognised by its header)."""
    first = head.text.split("\n", 1)[0].strip()
    if not first or head.is_binary:
        return None
    try:
        return next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return None


def read_csv_rows(path: Path, what: str) -> list[list[str]]:
    """Every row of a CSV text file as psql --csv writes it; a malformed line is a ParseError with its line."""
    reader = csv.reader(io.StringIO(read_text(path, what)))
    try:
        return list(reader)
    except csv.Error as exc:
        raise ParseError(path, reader.line_num, "CSV as psql --csv writes it", str(exc)) from None
