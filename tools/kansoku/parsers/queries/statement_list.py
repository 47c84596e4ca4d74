"""A query study's statement list (``kansoku collect queries LIST``), kept with each run as ``queries.sql``:
SQL statements ending with ``;``, each named by a ``-- query: ID`` line before it (else ``q1``, ``q2``, … by
position). The one reading of the list: collect runs what it reads, and the report prints the list a run
really used (its method section, like a pgbench script). docs/formats.md §6.

A file is claimed when a ``-- query: ID`` line names a statement (a plain SQL file could be anything); a psql
meta-command in it is refused with its line (psql would run it: ``\\!`` runs a shell).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink

SCHEMA = """
CREATE TABLE IF NOT EXISTS query_list_files (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    statements INTEGER NOT NULL,      -- SQL statements of the list
    text VARCHAR NOT NULL             -- the list as written
);
"""

NAME = re.compile(r"^--\s*query:\s*(?P<id>[A-Za-z0-9_.-]+)\s*$", re.ASCII)
MAX_BYTES = 1 << 20


class QueryListError(ValueError):
    """A statement list that cannot be run as written: ``line`` (1-based, or None) and what is wrong."""

    def __init__(self, line: int | None, message: str):
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Statement:
    id: str
    sql: str
    line: int


def statements(text: str) -> list[Statement]:
    """The statements of a list, with their names and first lines (QueryListError with the line otherwise)."""
    out: list[Statement] = []
    name: str | None = None
    buf: list[str] = []
    start = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = NAME.match(line.strip())
        if m and not buf:
            name = m["id"]
            continue
        if not buf and (not line.strip() or line.strip().startswith("--")):
            continue
        if line.lstrip().startswith("\\"):
            raise QueryListError(lineno, f"expected an SQL statement, found a psql meta-command {line.strip()!r}")
        if not buf:
            start = lineno
        buf.append(line)
        if line.rstrip().endswith(";"):
            sql = "\n".join(buf).strip()
            meta = meta_command(sql)
            if meta is not None:
                raise QueryListError(start + meta[0], f"expected an SQL statement, found a psql meta-command "
                                                      f"{meta[1]!r} inside it (psql would run it: '\\!' runs a shell)")
            sid = name or f"q{len(out) + 1}"
            if any(s.id == sid for s in out):
                raise QueryListError(start, f"query id {sid!r} used twice")
            out.append(Statement(sid, sql, start))
            buf, name = [], None
    if buf:
        raise QueryListError(start, "expected the statement to end with ';' at the end of a line, found the end "
                                    "of the file")
    if not out:
        raise QueryListError(None, "no SQL statement (each ends with ';' at the end of a line)")
    return out
def meta_command(sql: str) -> tuple[int, str] | None:
    """The first backslash of ``sql`` outside a string, quoted name, dollar-quoted body or comment, where psql
    starts a meta-command (``\\! cmd`` runs a shell): (line offset in ``sql``, the rest of its line); else None.
    Scanned as psql's lexer does: '…' ('' inside; E'…' with backslash escapes), "…", $tag$…$tag$, -- and /* */."""
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "\\":
            end = sql.find("\n", i)
            return sql.count("\n", 0, i), sql[i:end if end >= 0 else n].strip()
        if c == "'":
            escapes = i > 0 and sql[i - 1] in "eE" and (i < 2 or not (sql[i - 2].isalnum() or sql[i - 2] == "_"))
            i += 1
            while i < n:
                if escapes and sql[i] == "\\":
                    i += 2
                    continue
                if sql[i] == "'":
                    if i + 1 < n and sql[i + 1] == "'":
                        i += 2
                        continue
                    break
                i += 1
        elif c == '"':
            end = sql.find('"', i + 1)
            i = n if end < 0 else end
        elif c == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif c == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 1
        elif c == "$":
            m = DOLLAR.match(sql, i)
            if m and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                end = sql.find(m.group(0), m.end())
                i = n if end < 0 else end + len(m.group(0)) - 1
        i += 1
    return None


DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", re.ASCII)


DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", re.ASCII)


def sniff(head: FileHead) -> bool:
    if head.is_binary or head.size_bytes > MAX_BYTES:
        return False
    lines = head.text.splitlines()
    return any(NAME.match(x.strip()) for x in lines) and any(x.rstrip().endswith(";") for x in lines)


def parse(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "query list")
    try:
        found = statements(text)
    except QueryListError as exc:
        raise ParseError(path, exc.line, "a query list: SQL statements ending with ';', '-- query: ID' naming one",
                         str(exc)) from None
    sink.add_rows("query_list_files", [{"statements": len(found), "text": text}])


MODULE = ParserModule(
    name="query-list",
    formats=[
        Format(tool="query", name="query-list",
               description="a query study's statement list (kansoku collect queries; '-- query: ID' names a "
                           "statement), kept as written",
               sniff=sniff, parse=parse, priority=5, attachment=True),
    ],
    schema=SCHEMA,
    tables=["query_list_files"],
)
