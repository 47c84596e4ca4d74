"""strace -c / -C: the system-call summary table (docs/formats.md §5).

Every variant shares one shape: a header line naming the columns, a line of
dash runs (one run per column), data rows, a second dash line and the
``total`` row. What varies (docs/formats.md §5.1, §5.2):

* strace <= 5.5 prints fixed widths and leaves ``usecs/call`` blank in the
  total row; 5.6+ computes widths from the data and prints it;
* ``errors`` is blank when zero, in every version;
* ``-U`` chooses and orders the columns (``syscall`` may come first);
* ``-w`` measures wall-clock time instead of system time: same table, so the
  clock is only known from the command line (run.toml [commands]);
* ``LC_NUMERIC`` with a decimal comma prints ``71,57    0,005672``;
* the table goes to stderr, where it is mixed with the traced program's own
  output, with ``strace: Process N attached/detached`` lines and, with ``-C``,
  with the trace itself; multi-personality tracees get one table per
  personality after ``System call usage summary for 32 bit mode:``.

Because blank cells make whitespace splitting ambiguous (is the token before
``total`` the calls or the errors?), each token is assigned to the column whose
dash run it overlaps most: values wider than their column (gotcha 6) still
overlap their own column more than any other.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import LONGEST_S, LONGEST_US, MOST, Bound, TableBounds
from kansoku.parsers.numbers import to_float, to_int

# Header words (after "% time" is glued to "%time") -> column names in the store.
# strace 4.x-6.x default columns and the -U names they print (docs/formats.md §5.2).
COLUMNS: dict[str, str] = {
    "%time": "time_pct",
    "seconds": "seconds",
    "usecs/call": "usecs_per_call",
    "calls": "calls",
    "errors": "errors",
    "syscall": "syscall",
    "shortest": "min_seconds",
    "longest": "max_seconds",
}
INT_COLUMNS = {"calls", "errors"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS strace_syscalls (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    table_no INTEGER,           -- 1-based: several tables in one file (personalities, several runs)
    personality VARCHAR,        -- 'System call usage summary for X mode' (NULL: the native one)
    row_no INTEGER,             -- 1-based position in the table (the -S sort order as printed)
    syscall VARCHAR NOT NULL,
    time_pct DOUBLE,            -- '% time' (NULL for strace < 4.8 'nan')
    seconds DOUBLE,             -- system time, or wall-clock time with -w (see strace_tables.clock)
    usecs_per_call DOUBLE,
    calls BIGINT,
    errors BIGINT,              -- a blank cell is 0; NULL when -U left the column out
    min_seconds DOUBLE,         -- -U shortest
    max_seconds DOUBLE,         -- -U longest
    line INTEGER
);
CREATE TABLE IF NOT EXISTS strace_tables (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    table_no INTEGER,
    personality VARCHAR,
    header_line INTEGER,
    columns VARCHAR,            -- the header's column names in printed order, comma separated
    syscall_count INTEGER,      -- data rows
    has_total BOOLEAN,          -- false: the table was cut off before its total row
    total_time_pct DOUBLE,      -- the total row
    total_seconds DOUBLE,
    total_usecs_per_call DOUBLE,    -- NULL before strace 5.6 (blank)
    total_calls BIGINT,
    total_errors BIGINT,
    total_line INTEGER,
    decimal_comma BOOLEAN,      -- numbers printed with ',' (LC_NUMERIC de_DE etc.)
    clock VARCHAR,              -- 'system' (default) | 'wall' (-w); NULL when the command is unknown
    sort_by VARCHAR,            -- -S value from the command, else what the rows show ('time', 'calls', 'name', ...)
    follow_forks BOOLEAN,       -- -f / -ff in the command (children aggregated into this table)
    attached_pids VARCHAR,      -- -p values from the command, comma separated
    attached_to VARCHAR,        -- run.toml strace_attached_to (e.g. 'postmaster')
    command VARCHAR             -- the strace command line from run.toml [commands]
);
CREATE TABLE IF NOT EXISTS strace_processes (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    pid BIGINT,
    event VARCHAR,              -- 'attached' | 'detached' | 'resumed' | 'suspended'
    line INTEGER
);
"""

TABLES = ["strace_syscalls", "strace_tables", "strace_processes"]

VIEWS = """
-- One row per (run, syscall): tables of a run (several files or personalities)
-- summed; '% time' is the printed one when the run has a single table.
CREATE OR REPLACE VIEW strace_run_syscalls AS
WITH t AS (
    SELECT s.*, count(DISTINCT (s.source_id, s.table_no)) OVER (PARTITION BY s.run_id) AS n_tables,
           sum(s.seconds) OVER (PARTITION BY s.run_id) AS run_seconds
    FROM strace_syscalls s
)
SELECT run_id, syscall,
       CASE WHEN max(n_tables) = 1 THEN max(time_pct)
            ELSE 100 * sum(seconds) / nullif(max(run_seconds), 0) END AS time_pct,
       sum(seconds) AS seconds,
       sum(calls) AS calls,
       sum(errors) AS errors,
       sum(seconds) * 1e6 / nullif(sum(calls), 0) AS usecs_per_call,
       100.0 * sum(errors) / nullif(sum(calls), 0) AS error_pct
FROM t GROUP BY run_id, syscall;

-- Top-N by share of time (FY2017 Fig. 4.4/4.5): filter time_rank <= N per run.
CREATE OR REPLACE VIEW strace_top_syscalls AS
SELECT run_id, syscall,
       row_number() OVER (PARTITION BY run_id ORDER BY time_pct DESC NULLS LAST, seconds DESC, calls DESC,
                          syscall) AS time_rank,
       time_pct, seconds, calls, errors, error_pct
FROM strace_run_syscalls;

-- Calls vs errors (FY2017 Fig. 4.6).
CREATE OR REPLACE VIEW strace_calls_errors AS
SELECT run_id, syscall,
       row_number() OVER (PARTITION BY run_id ORDER BY calls DESC, syscall) AS calls_rank,
       calls, errors, calls - coalesce(errors, 0) AS successes, error_pct
FROM strace_run_syscalls;

-- What was traced, per run: process set and clock.
CREATE OR REPLACE VIEW strace_runs AS
SELECT t.run_id, count(*) AS tables, sum(t.total_calls) AS total_calls, sum(t.total_errors) AS total_errors,
       sum(t.total_seconds) AS total_seconds, bool_or(t.follow_forks) AS follow_forks,
       any_value(t.attached_to) AS attached_to, any_value(t.clock) AS clock,
       (SELECT count(DISTINCT p.pid) FROM strace_processes p
         WHERE p.run_id IS NOT DISTINCT FROM t.run_id AND p.event = 'attached') AS processes_attached
FROM strace_tables t GROUP BY t.run_id;
"""

METRICS = [
    MetricDef("strace_total_calls", "SELECT run_id, total_calls AS value FROM strace_runs",
              "calls", None),
    MetricDef("strace_total_errors", "SELECT run_id, total_errors AS value FROM strace_runs",
              "calls", None),
    MetricDef("strace_total_seconds", "SELECT run_id, total_seconds AS value FROM strace_runs",
              "s", None),
    MetricDef("strace_error_pct",
              "SELECT run_id, 100.0 * total_errors / nullif(total_calls, 0) AS value FROM strace_runs",
              "%", None),
]

# -- recognising lines ---------------------------------------------------------

_DASHES = re.compile(r"^[ -]*-[ -]*$", re.ASCII)
_PERSONALITY = re.compile(r"^System call usage summary for (?P<p>.+?) mode:\s*$", re.ASCII)
_PROCESS = re.compile(r"^(?:\^C)?strace: Process (?P<pid>\d+) (?P<ev>attached|detached|resumed|suspended)\b", re.ASCII)
_NUMBER = re.compile(r"^-?(?:\d+(?:[.,]\d*)?|[.,]\d+)$|^-?nan$", re.I | re.ASCII)
_SYSCALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$", re.ASCII)


def _header_words(line: str) -> list[str] | None:
    if "calls" not in line or "syscall" not in line:
        return None
    words = line.replace("% time", "%time").split()
    if "calls" in words and "syscall" in words and all(re.fullmatch(r"[a-z%/_-]+", w, flags=re.ASCII) for w in words):
        return words
    return None


def sniff(head: FileHead) -> bool:
    text = head.text
    if "calls" not in text or "syscall" not in text or head.is_binary:
        return False
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if "calls" not in line:
            continue
        if _header_words(line) and _DASHES.match(lines[i + 1]):
            return True
    return False


def sniff_messages(head: FileHead) -> bool:
    """stderr of strace -o FILE: only 'strace: Process N attached/detached' lines."""
    if "strace: Process " not in head.text or head.is_binary:
        return False
    lines = [l for l in head.text.splitlines() if l.strip()]
    return bool(lines) and sum(1 for l in lines[:200] if _PROCESS.match(l)) >= max(1, len(lines[:200]) // 2)


# -- the strace command from run.toml ---------------------------------------------


@dataclass
class Command:
    text: str | None = None
    follow_forks: bool | None = None
    clock: str | None = None
    sort_by: str | None = None
    pids: list[str] = field(default_factory=list)
    attached_to: str | None = None


def run_meta(sink: Sink) -> dict[str, Any]:
    """The run's run.toml as ingest read it (handed in through the sink), or {}."""
    meta = getattr(sink, "run_meta", None)
    return meta if isinstance(meta, dict) else {}


def strace_command(sink: Sink) -> Command:
    meta = run_meta(sink)
    cmds = meta.get("commands", {}) if isinstance(meta.get("commands"), dict) else {}
    text = cmds.get("strace")
    if text is None:
        text = next((v for v in cmds.values()
                     if isinstance(v, str) and re.match(r"^\s*strace\s", v, flags=re.ASCII)), None)
    cmd = Command(text=text, attached_to=meta.get("strace_attached_to"))
    if not text:
        return cmd
    try:
        argv = shlex.split(text)
    except ValueError:
        argv = text.split()
    cmd.follow_forks, cmd.clock = False, "system"
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in (">", "2>", "<", "|", "&&", ";") or not a.startswith("-"):
            break  # the traced command (or a redirection) starts here
        val = None
        if a.startswith("--"):
            name, _, val = a[2:].partition("=")
            if name in ("follow-forks", "output-separately"):
                cmd.follow_forks = True
            elif name in ("summary-wall-clock",):
                cmd.clock = "wall"
            elif name in ("summary-sort-by",) and val:
                cmd.sort_by = val
            elif name in ("attach",) and val:
                cmd.pids.extend(val.split(","))
            i += 1
            continue
        flags = a[1:]
        j = 0
        while j < len(flags):
            f = flags[j]
            if f == "f":
                cmd.follow_forks = True
            elif f == "w":
                cmd.clock = "wall"
            elif f in "SpoeOUPEIabsuX":  # options taking a value
                val = flags[j + 1:] or (argv[i + 1] if i + 1 < len(argv) else "")
                if not flags[j + 1:]:
                    i += 1
                if f == "S":
                    cmd.sort_by = val
                elif f == "p":
                    cmd.pids.extend(val.split(","))
                break
            j += 1
        i += 1
    return cmd


# -- parsing ---------------------------------------------------------------------


def _spans(dash_line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", dash_line, flags=re.ASCII)]


def _tokens(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", line, flags=re.ASCII)]


def _assign(tokens: list[tuple[int, int, str]], spans: list[tuple[int, int]]) -> list[int] | None:
    """Column index for each token, or None if the line is not a table row.

    Each token goes to the column it overlaps most (else the nearest). A value
    wider than its column pushes the rest of the line right (docs/formats.md §0.6):
    that overflow is carried as a shift for the tokens that follow.
    """
    out = []
    shift = 0
    for s, e, _ in tokens:
        s, e = s - shift, e - shift
        best, best_ov, best_dist = None, 0, None
        for k, (cs, ce) in enumerate(spans):
            ov = min(e, ce) - max(s, cs)
            if ov > best_ov:
                best, best_ov = k, ov
        if best is None:
            for k, (cs, ce) in enumerate(spans):
                dist = cs - e if e <= cs else s - ce
                if best_dist is None or dist < best_dist:
                    best, best_dist = k, dist
        out.append(best)
        if best < len(spans) - 1 and e > spans[best][1]:
            shift += e - spans[best][1]
    if any(b <= a for a, b in zip(out, out[1:])):
        return None
    return out


def _num(tok: str, col: str) -> Any:
    if tok.lower().lstrip("-") == "nan":
        return None
    t = tok.replace(",", ".")
    return to_int(t) if col in INT_COLUMNS else to_float(t)


@dataclass
class _Table:
    table_no: int
    personality: str | None
    header_line: int
    names: list[str]
    spans: list[tuple[int, int]]
    rows: list[dict] = field(default_factory=list)
    total: dict | None = None
    total_line: int | None = None
    decimal_comma: bool = False
    seen_second_dash: bool = False


_LOOKS_LIKE_ROW = re.compile(r"^\s*\d+(?:[.,]\d+)?\s+\d\S*\s+.*\s(?:[a-z_][a-z0-9_]*)\s*$", re.ASCII)


def _parse_row(line: str, table: _Table) -> dict | None:
    toks = _tokens(line)
    if not toks:
        return None
    idx = _assign(toks, table.spans)
    if idx is None:
        return None
    row: dict[str, Any] = {}
    for (s, e, tok), k in zip(toks, idx):
        col = table.names[k]
        if col == "syscall":
            if not (_SYSCALL.match(tok) or tok.startswith("syscall_")):
                return None
            row[col] = tok
        elif col.startswith("extra:"):
            continue
        else:
            if not _NUMBER.match(tok):
                return None
            if "," in tok:
                table.decimal_comma = True
            if col in INT_COLUMNS and not (tok.isascii() and tok.lstrip("-").isdigit()) and tok.lower().lstrip("-") != "nan":
                return None  # a decimal in a count column (calls, errors): not a row strace prints
            row[col] = _num(tok, col)
    if "syscall" not in row:
        return None
    if "errors" in table.names and "errors" not in row:
        row["errors"] = 0  # blank when zero (docs/formats.md §5.1)
    needed = [c for c in table.names if c not in ("errors", "usecs_per_call", "syscall") and not c.startswith("extra:")]
    missing = [c for c in needed if c not in row]
    if missing and row["syscall"] != "total":
        return None
    return row


def _sort_seen(rows: list[dict]) -> str | None:
    if len(rows) < 2:
        return None
    def desc(key):
        vals = [r.get(key) for r in rows]
        return None not in vals and all(a >= b for a, b in zip(vals, vals[1:]))
    if desc("time_pct") or desc("seconds"):
        return "time"
    if desc("calls"):
        return "calls"
    if desc("errors"):
        return "errors"
    names = [r["syscall"] for r in rows]
    if names == sorted(names):
        return "name"
    return "nothing"


def parse(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "strace -c output")
    lines = text.splitlines()
    tables: list[_Table] = []
    processes: list[dict] = []
    other_lines: list[int] = []
    personality: str | None = None
    cur: _Table | None = None
    i = 0
    while i < len(lines):
        lineno = i + 1
        line = lines[i].rstrip("\r")
        m = _PROCESS.match(line)
        if m:
            processes.append({"pid": int(m.group("pid")), "event": m.group("ev"), "line": lineno})
            i += 1
            continue
        m = _PERSONALITY.match(line)
        if m:
            personality, cur = m.group("p"), None
            i += 1
            continue
        words = _header_words(line)
        if words and i + 1 < len(lines) and _DASHES.match(lines[i + 1]):
            spans = _spans(lines[i + 1])
            if len(spans) != len(words):
                raise ParseError(path, lineno + 1, f"one dash run per header column ({len(words)}: "
                                 f"{' '.join(words)})", lines[i + 1])
            names = []
            for w in words:
                if w in COLUMNS:
                    names.append(COLUMNS[w])
                else:
                    names.append("extra:" + w)
                    sink.warn(lineno, f"strace column {w!r} is not known to kansoku; its values are not stored")
            if cur is not None and cur.total is None:
                sink.warn(cur.header_line, "strace table has no total row (cut off?); rows kept")
            cur = _Table(len(tables) + 1, personality, lineno, names, spans)
            tables.append(cur)
            personality = None
            i += 2
            continue
        if cur is not None and cur.total is None:
            if _DASHES.match(line) and line.strip():
                cur.seen_second_dash = True
                i += 1
                continue
            row = _parse_row(line, cur) if line.strip() else None
            if row is not None and row["syscall"] == "total" and (cur.seen_second_dash or cur.rows):
                cur.total, cur.total_line = row, lineno
                i += 1
                continue
            if row is not None and not cur.seen_second_dash:
                row["line"] = lineno
                cur.rows.append(row)
                i += 1
                continue
            if line.strip() and _LOOKS_LIKE_ROW.match(line) and not cur.seen_second_dash:
                # a syscall row (a share first, a syscall name last) whose numbers do not fit its columns:
                # a damaged count, not program output
                raise ParseError(path, lineno, f"a strace -c row with {', '.join(cur.names)} "
                                 "(integers for calls and errors, within their columns)", line.strip())
            if line.strip():
                sink.warn(lineno, f"line inside the strace table is not a table row "
                          f"(program output mixed in?); skipped: {line.strip()[:80]!r}")
            i += 1
            continue
        if line.strip():
            other_lines.append(lineno)
        i += 1

    if not tables:
        raise ParseError(path, None, "a strace -c summary table (header '% time  seconds  usecs/call  calls  "
                         "errors syscall' and a dash line)", "none")
    if other_lines:
        sink.warn(other_lines[0], f"{len(other_lines)} line(s) outside the strace table (trace or program "
                  f"output) ignored, the first at line {other_lines[0]}")
    # the same table twice (strace -c output appended to the file again) would be counted twice: refused
    printed: dict[tuple, int] = {}
    for t in tables:
        key = (t.personality, tuple(tuple(sorted((k, str(v)) for k, v in r.items() if k != "line")) for r in t.rows),
               None if t.total is None else tuple(sorted((k, str(v)) for k, v in t.total.items())))
        if t.rows and key in printed:
            raise ParseError(path, t.header_line, "each strace -c table once (this table repeats the one at line "
                             f"{printed[key]} row for row: the output appended twice?); nothing of the file is "
                             "counted", "the same table again")
        printed.setdefault(key, t.header_line)
    cmd = strace_command(sink)
    srows, trows = [], []
    for t in tables:
        if t.total is None:
            if t is tables[-1]:
                sink.warn(t.header_line, "strace table has no total row (cut off?); rows kept")
            if not t.rows:
                continue
        for n, r in enumerate(t.rows, start=1):
            srows.append({"table_no": t.table_no, "personality": t.personality, "row_no": n,
                          **{k: v for k, v in r.items() if not k.startswith("extra:")}})
        tot = t.total or {}
        trows.append({
            "table_no": t.table_no, "personality": t.personality, "header_line": t.header_line,
            "columns": ",".join(n.removeprefix("extra:") for n in t.names), "syscall_count": len(t.rows),
            "has_total": t.total is not None, "total_time_pct": tot.get("time_pct"),
            "total_seconds": tot.get("seconds"), "total_usecs_per_call": tot.get("usecs_per_call"),
            "total_calls": tot.get("calls"), "total_errors": tot.get("errors"), "total_line": t.total_line,
            "decimal_comma": t.decimal_comma, "clock": cmd.clock,
            "sort_by": cmd.sort_by or _sort_seen(t.rows), "follow_forks": cmd.follow_forks,
            "attached_pids": ",".join(cmd.pids) or None, "attached_to": cmd.attached_to, "command": cmd.text,
        })
        if t.total is not None and t.rows and tot.get("calls") is not None:
            s = sum(r.get("calls") or 0 for r in t.rows)
            if s != tot["calls"]:
                sink.warn(t.total_line, f"total calls {tot['calls']} != sum of the rows {s}")
    sink.add_rows("strace_syscalls", srows)
    sink.add_rows("strace_tables", trows)
    if processes:
        sink.add_rows("strace_processes", processes)
    meta = run_meta(sink)
    v = meta.get("versions", {}).get("strace") if isinstance(meta.get("versions"), dict) else None
    if isinstance(v, str):
        m = re.search(r"version\s+(\S+)", v, flags=re.ASCII)
        sink.set_tool_version(m.group(1) if m else v)


def parse_messages(path: Path, sink: Sink) -> None:
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    rows, other = [], 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _PROCESS.match(line)
        if m:
            rows.append({"pid": int(m.group("pid")), "event": m.group("ev"), "line": lineno})
        elif line.strip():
            other += 1
    if other:
        sink.warn(None, f"{other} line(s) that are not 'strace: Process N attached/detached' ignored")
    sink.add_rows("strace_processes", rows)


FORMATS = [
    Format("strace", "strace-summary", "strace -c / -C summary table (any version, -w, -S, -U, locale)",
           sniff, parse, priority=10),
    Format("strace", "strace-messages", "strace stderr: 'strace: Process N attached/detached' lines",
           sniff_messages, parse_messages, priority=1),
]

# What strace -c prints (parsers/bounds.py): shares of 100, seconds, µs per call and counts, never negative.
# Seconds are summed over every traced process (-f), so they may pass the run's wall-clock time.
BOUNDS = [
    TableBounds("strace_syscalls", bounds=(
        Bound("time_pct", 0, 100, "a share of the total time"),
        Bound("seconds", 0, 1000 * LONGEST_S, "seconds summed over processes"),
        Bound("usecs_per_call", 0, LONGEST_US, "microseconds per call"),
        Bound("calls", 0, MOST, "a count"),
        Bound("errors", 0, MOST, "a count"),
        Bound("min_seconds", 0, LONGEST_S, "one call's seconds"),
        Bound("max_seconds", 0, LONGEST_S, "one call's seconds"),
    )),
    TableBounds("strace_tables", line="total_line", bounds=(
        Bound("total_time_pct", 0, 100.5, "a share of the total time"),
        Bound("total_seconds", 0, 1000 * LONGEST_S, "seconds summed over processes"),
        Bound("total_usecs_per_call", 0, LONGEST_US, "microseconds per call"),
        Bound("total_calls", 0, MOST, "a count"),
        Bound("total_errors", 0, MOST, "a count"),
    )),
]

MODULE = ParserModule(name="strace", formats=FORMATS, schema=SCHEMA, views=VIEWS, metrics=METRICS, tables=TABLES,
                      bounds=BOUNDS, host_columns={t: ("host", "role") for t in ("strace_syscalls", "strace_tables")})
