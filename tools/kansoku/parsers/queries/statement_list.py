"""A query study's statement list (``kansoku collect queries LIST``), kept with each run as ``queries.sql``:
SQL statements ending with ``;``, each named by a ``-- query: ID`` line before it (else ``q1``, ``q2``, … by
position). The one reading of the list: collect runs what it reads, and the report prints the list a run
really used (its method section, like a pgbench script). docs/formats.md §6.

A file is claimed when a ``-- query: ID`` line names a statement (a plain SQL file could be anything); a
statement psql would read otherwise (a meta-command in it: ``\\!`` runs a shell; a quote left open at its ``;``;
a ``:name`` variable) is refused with its line (``lex_problem``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kansoku.errors import ParseError, last_line
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
            problem = lex_problem(sql)
            if problem is not None:
                raise QueryListError(start + problem[0], problem[1])
            sid = name or f"q{len(out) + 1}"
            if any(s.id == sid for s in out):
                raise QueryListError(start, f"query id {sid!r} used twice")
            out.append(Statement(sid, sql, start))
            buf, name = [], None
    if buf:
        raise QueryListError(start, "expected the statement to end with ';' at the end of a line, found the end "
                                    "of the file")
    if not out:
        raise QueryListError(last_line(text), "no SQL statement by the end of the file (each ends with ';' "
                                                       "at the end of a line)")
    return out


def lex_problem(sql: str) -> tuple[int, str] | None:
    """Why psql would not run ``sql`` as the one statement the list shows, or None: (line offset in ``sql``,
    what is wrong). psql's lexer decides what it runs: a backslash outside a string, quoted name, dollar-quoted
    body or comment starts a meta-command (``\\!`` runs a shell), ``:name`` pastes a variable's value in and reads
    it again (``:LAST_ERROR_MESSAGE`` is the server's text), and a string, comment or parenthesis still open at
    the ``;`` carries the lexer into the next lines of the script. So a statement must end with its own ``;``,
    every quote closed, read the same whether the server's ``standard_conforming_strings`` is on or off; a
    spelling psql versions lex differently is refused rather than guessed."""
    for std_strings in (True, False):
        problem = _lex(sql, std_strings)
        if problem is not None:
            return problem
    return None


_IDENT_CONT = re.compile(r"[A-Za-z0-9_$\x80-\U0010ffff]", re.ASCII)
_WORD = re.compile(r"[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*", re.ASCII)
_ROUTINE_WORDS = ("create", "function", "procedure", "or", "replace")
DOLLAR = re.compile(r"\$(?:[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*)?\$", re.ASCII)
_VARIABLE = re.compile(r":[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*", re.ASCII)
_OPENED = {"'": "a string", '"': "a quoted name", "$": "a dollar-quoted body", "/": "a /* comment"}


def _routine(words: list[str]) -> bool:
    """Whether a statement's first words are CREATE [OR REPLACE] FUNCTION|PROCEDURE, as psql 14 and later tell
    (psqlscan.l: the first letter of each of its first words, when it is one of ``_ROUTINE_WORDS``)."""
    w = [x[0] if x in _ROUTINE_WORDS else "" for x in words[:4]] + [""] * 4
    return w[0] == "c" and (w[1] in ("f", "p") or (w[1] == "o" and w[2] == "r" and w[3] in ("f", "p")))


def _lex(sql: str, std_strings: bool) -> tuple[int, str] | None:
    i, n, depth = 0, len(sql), 0
    last_string: tuple[int, bool] | None = None  # where the last string closed; did it read backslash escapes
    words: list[str] = []  # the statement's first words (lower case), for _routine
    line = lambda k: sql.count("\n", 0, k)  # noqa: E731
    while i < n:
        c, opened = sql[i], i
        if (w := _WORD.match(sql, i)) and not (i > 0 and _IDENT_CONT.match(sql[i - 1])):
            word = w.group().lower()
            if len(words) < 4:
                words.append(word)
            if word == "begin" and not depth and _routine(words):
                # psql 14 and later read a function body's BEGIN ... END whole (a ';' inside ends nothing), older
                # ones end it at the first ';': the list would not be what psql runs
                return line(i), ("expected statements psql versions split alike, found BEGIN in a function body "
                                 "(psql 14 and later read it to its END, older ones to the first ';'): create the "
                                 "function in the study's setup")
            i = w.end() - 1  # the word's last character: the loop goes on after it
        if c == "\\":
            end = sql.find("\n", i)
            return line(i), (f"expected an SQL statement, found a psql meta-command "
                             f"{sql[i:end if end >= 0 else n].strip()!r} inside it (psql would run it: '\\!' runs "
                             f"a shell)")
        if c == ":" and (v := _VARIABLE.match(sql, i)) and not (i > 0 and sql[i - 1] == ":"):
            return line(i), (f"expected SQL, found {v.group()!r}, which psql replaces with a "
                             f"variable's value (a slice: write a space after ':')")
        if c == "'":
            prefix = _string_prefix(sql, i)
            if prefix is None:
                return line(i), "expected a space between a number and a quoted string (psql versions read it " \
                                "differently)"
            escapes = prefix == "e" or (prefix in ("", "n") and not std_strings)
            if not prefix and last_string and _CONTINUED.fullmatch(sql, last_string[0] + 1, i):  # 'a'⏎'b': one
                escapes = last_string[1]
            i += 1
            while i < n and not (sql[i] == "'" and not sql.startswith("''", i)):
                i += 2 if (escapes and sql[i] == "\\") or sql.startswith("''", i) else 1
            last_string = (i, escapes)
        elif c == '"':
            i = sql.find('"', i + 1)
            i = n if i < 0 else i
        elif sql.startswith("--", i):
            i = sql.find("\n", i)
            if i < 0:
                break
        elif sql.startswith("/*", i):  # comments nest, in the server's grammar as in psql's lexer
            nest, i = 1, i + 2
            while i < n and nest:
                step = 2 if sql.startswith(("/*", "*/"), i) else 1
                nest += 1 if sql.startswith("/*", i) else -1 if sql.startswith("*/", i) else 0
                i += step
            i = i - 1 if not nest else n
        elif c == "$" and (m := DOLLAR.match(sql, i)):
            if i > 0 and _IDENT_CONT.match(sql[i - 1]):
                return line(i), "expected a space before a dollar quote (psql reads '$' after a name as part of it)"
            end = sql.find(m.group(), m.end())
            i = n if end < 0 else end + len(m.group()) - 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == ";" and i == n - 1:
            return (line(i), "expected ')' before the ';' that ends the statement") if depth else None
        elif c == ";" and not depth:
            return line(i), "expected one statement, found a ';' before the one that ends it"
        if i >= n:
            return line(opened), f"expected {_OPENED[c]} opened here to end before the ';' that ends the statement"
        i += 1
    return line(n - 1), "expected the statement to end with ';' outside a comment"


_CONTINUED = re.compile(r"[ \t\f\r]*\n(?:[ \t\f\r\n]|--[^\n]*\n)*", re.ASCII)


def _string_prefix(sql: str, i: int) -> str | None:
    """The kind of string the quote at ``i`` opens, as psql lexes it: 'e' (backslash escapes), 'b', 'x', 'n',
    'u&' or '' (plain); None when a number or a parameter runs into the prefix, which psql versions lex
    differently."""
    for prefix in ("u&", "e", "b", "x", "n"):
        k = i - len(prefix)
        if k < 0 or sql[k:i].lower() != prefix:
            continue
        j = k
        while j > 0 and _IDENT_CONT.match(sql[j - 1]):
            j -= 1
        if j == k:
            return prefix
        if sql[j] == "$" or sql[j].isdigit():
            return None
    return ""


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
