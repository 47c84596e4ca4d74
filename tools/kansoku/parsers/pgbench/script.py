"""pgbench custom scripts (``pgbench -f FILE``), kept with the runs that used them. docs/formats.md §1.8.

A script is recognised by content: at least one pgbench meta-command line (``\\set``, ``\\sleep``, …) and at
least one SQL statement. A plain SQL file without meta-commands is not claimed by content (it could be
anything), but one its run's ``run.toml`` names as a script of the benchmark (``[commands] scripts``: tools/collect
copied it there from the command's ``-f``) is that script: the ingest gives it the format ``pgbench-script-sql``.
The text is stored as written, so the report's method section can print the script a run really used.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from kansoku.errors import ParseError, last_line
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink

SCHEMA = """
CREATE TABLE IF NOT EXISTS pgbench_script_files (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    meta_commands INTEGER NOT NULL,   -- lines starting with a pgbench meta-command (\\set, \\sleep, ...)
    sql_statements INTEGER NOT NULL,  -- SQL statements (ended by ';' or by the end of the script)
    text VARCHAR NOT NULL             -- the script as written
);
"""

# pgbench's meta-commands (PostgreSQL 9.x–17; \setrandom is 9.5 and older).
META = re.compile(r"^\\(set|setrandom|setshell|shell|sleep|gset|aset|if|elif|else|endif|"
                  r"startpipeline|endpipeline|syncpipeline)(\s|$)", re.ASCII)
SQL = re.compile(r"^\s*(select|insert|update|delete|begin|end|commit|rollback|with|values|call|do|"
                 r"prepare|execute|vacuum|analyze|copy|lock|savepoint|release|set|show|truncate|"
                 r"create|drop|alter)\b", re.IGNORECASE | re.ASCII)
MAX_BYTES = 256 * 1024


def _numbered_kinds(text: str) -> Iterator[tuple[int, str]]:
    """Each significant line of a script with its number, as 'meta' (a meta-command), 'sql' (the first line of an
    SQL statement), 'more' (a continuation line of one) or 'other'; blank lines and comments are skipped."""
    in_sql = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("--"):
            continue
        if META.match(line):
            in_sql = False
            yield lineno, "meta"
        elif in_sql or SQL.match(line):
            yield lineno, "more" if in_sql else "sql"
            in_sql = not line.rstrip().endswith(";")
        else:
            yield lineno, "other"


def _line_kinds(text: str) -> Iterator[str]:
    return (kind for _, kind in _numbered_kinds(text))


def _counts(text: str) -> tuple[int, int, int]:
    """(meta-commands, SQL statements, lines that are neither)."""
    kinds = Counter(_line_kinds(text))
    return kinds["meta"], kinds["sql"], kinds["other"]


def _only_script_lines(text: str) -> bool:
    """``_counts(text)`` gives at least one meta-command and one SQL statement and no other line; it stops at
    the first other line (every file's head is sniffed: most are not scripts and say so on their first line)."""
    seen = set()
    for kind in _line_kinds(text):
        if kind == "other":
            return False
        seen.add(kind)
    return {"meta", "sql"} <= seen


def sniff_script(head: FileHead) -> bool:
    if head.is_binary or head.size_bytes > MAX_BYTES:
        return False
    return _only_script_lines(head.text)


def parse_script(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "pgbench custom script")
    meta, sql, other = _counts(text)
    if not (meta and sql):
        raise ParseError(path, last_line(text), "a pgbench script (meta-commands such as \\set and SQL "
                         "statements)", "the end of the file, with no meta-command" if not meta else
                         "the end of the file, with no SQL statement")
    sink.add_rows("pgbench_script_files", [{"meta_commands": meta, "sql_statements": sql, "text": text}])


def parse_listed_script(path: Path, sink: Sink) -> None:
    """A script its run names (``run.toml [commands] scripts``): SQL statements, meta-commands optional."""
    text = textfile.read_text(path, "pgbench custom script")
    meta, sql, other = _counts(text)
    if not sql or other:
        line = next((n for n, kind in _numbered_kinds(text) if kind == "other"), last_line(text))
        raise ParseError(path, line, "a pgbench script (SQL statements, optionally meta-commands such as \\set)",
                         "a line that is neither SQL nor a meta-command" if other else
                         "the end of the file, with no SQL statement")
    sink.add_rows("pgbench_script_files", [{"meta_commands": meta, "sql_statements": sql, "text": text}])


MODULE = ParserModule(
    name="pgbench-script",
    formats=[
        Format(tool="pgbench", name="pgbench-script",
               description="pgbench custom script (-f): meta-commands and SQL, kept as written",
               sniff=sniff_script, parse=parse_script, priority=5, attachment=True),
        # never claimed by content: given by the ingest to a file its run.toml names as a script of the run
        Format(tool="pgbench", name="pgbench-script-sql",
               description="pgbench custom script (-f) of SQL only, named by its run's run.toml",
               sniff=lambda head: False, parse=parse_listed_script, priority=0, attachment=True),
    ],
    schema=SCHEMA,
    tables=["pgbench_script_files"],
)
