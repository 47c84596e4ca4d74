"""pgbench: stdout summary (8.4 .. 18), per-statement latencies (-r), progress lines (-P).
``pgbench -i`` output is read by ``init.py``.

Table-driven: each summary line is matched by one entry of ``SUMMARY_LINES``
(see docs/formats.md §1.1 for the version each line appeared in).
Unknown lines inside the summary block are reported as warnings, never guessed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from kansoku.errors import ParseError
from kansoku.parsers import bounds, textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import EARLIEST, FASTEST_PER_S, LATEST, LONGEST_MS, LONGEST_S, Bound, TableBounds
from kansoku.parsers.numbers import foreign_digit, to_float, to_int

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf"

SCHEMA = """
CREATE TABLE IF NOT EXISTS pgbench_summary (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    pgbench_version VARCHAR,            -- from the 'pgbench (X)' banner (14+), else NULL
    server_version VARCHAR,             -- 'pgbench (X, server Y)' when they differ
    transaction_type VARCHAR,
    scaling_factor INTEGER,
    partition_method VARCHAR,
    partitions INTEGER,
    query_mode VARCHAR,
    clients INTEGER,
    threads INTEGER,
    max_tries INTEGER,
    transactions_per_client BIGINT,     -- with -t
    duration_s DOUBLE,                  -- with -T
    transactions_processed BIGINT,
    transactions_expected BIGINT,       -- with -t: clients x transactions per client
    transactions_failed BIGINT,
    serialization_failures BIGINT,
    deadlock_failures BIGINT,
    transactions_retried BIGINT,
    total_retries BIGINT,
    transactions_skipped BIGINT,
    latency_limit_ms DOUBLE,
    transactions_above_latency_limit BIGINT,
    latency_avg_ms DOUBLE,
    latency_stddev_ms DOUBLE,
    latency_avg_includes_failures BOOLEAN,
    rate_limit_lag_avg_ms DOUBLE,
    rate_limit_lag_max_ms DOUBLE,
    initial_connection_time_ms DOUBLE,  -- 14+
    average_connection_time_ms DOUBLE,  -- 14+ with -C
    tps DOUBLE,                         -- the headline TPS: 14+ 'without initial connection time',
                                        -- <=13 'excluding connections establishing', -C 'including reconnection times'
    tps_basis VARCHAR,                  -- which of those lines 'tps' came from
    tps_including_connections DOUBLE,   -- <=13
    tps_excluding_connections DOUBLE,   -- <=13
    aborted_clients INTEGER,            -- number of 'client N ... aborted' messages
    status VARCHAR NOT NULL,            -- 'ok' | 'aborted'
    status_note VARCHAR,
    first_line INTEGER,                 -- line of the summary's first line in the file
);
CREATE TABLE IF NOT EXISTS pgbench_scripts (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    script_no INTEGER,          -- 1-based, as pgbench prints it
    script VARCHAR,
    weight INTEGER,             -- the script's weight (-b NAME@W, -f FILE@W), as pgbench prints it
    weight_pct DOUBLE,          -- the share of transactions its weight targets (%)
    transactions BIGINT,
    transactions_pct DOUBLE,
    tps DOUBLE,
    transactions_failed BIGINT,
    latency_avg_ms DOUBLE,
    latency_stddev_ms DOUBLE
);
ALTER TABLE pgbench_scripts ADD COLUMN IF NOT EXISTS transactions_processed BIGINT;  -- 18: processed (N above includes skipped+failed)
ALTER TABLE pgbench_scripts ADD COLUMN IF NOT EXISTS transactions_skipped BIGINT;
ALTER TABLE pgbench_scripts ADD COLUMN IF NOT EXISTS transactions_retried BIGINT;
ALTER TABLE pgbench_scripts ADD COLUMN IF NOT EXISTS total_retries BIGINT;
CREATE TABLE IF NOT EXISTS pgbench_statement_latency (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    script_no INTEGER,          -- 1-based
    statement_no INTEGER,       -- 1-based within the script
    latency_ms DOUBLE,
    failures BIGINT,            -- 15+
    retries BIGINT,             -- 15+ with --max-tries != 1
    statement VARCHAR
);
CREATE TABLE IF NOT EXISTS pgbench_progress (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    elapsed_s DOUBLE,           -- seconds since the start of the run (NULL with --progress-timestamp)
    epoch_s DOUBLE,             -- with --progress-timestamp
    ts TIMESTAMPTZ,             -- wall clock: epoch, or run start (run.toml) + elapsed
    tps DOUBLE,
    latency_avg_ms DOUBLE,
    latency_stddev_ms DOUBLE,
    lag_ms DOUBLE,
    failed BIGINT,
    skipped BIGINT,
    retried BIGINT,
    retries BIGINT,
    line INTEGER
);
"""

TABLES = ["pgbench_summary", "pgbench_scripts", "pgbench_statement_latency", "pgbench_progress"]

VIEWS = r"""
CREATE OR REPLACE VIEW pgbench_runs AS
SELECT s.run_id, s.tps, s.latency_avg_ms, s.latency_stddev_ms, s.clients, s.threads,
       s.transactions_processed, s.transactions_failed, s.status, s.pgbench_version, s.source_id
FROM pgbench_summary s;
-- One row per script of a run with several (-f FILE@W, -b NAME@W), named as a spec selects it: the file's
-- name without its directory and ".sql" (a run's scripts are copies under another directory than the plan's).
CREATE OR REPLACE VIEW pgbench_script_results AS
SELECT c.run_id, regexp_replace(regexp_replace(c.script, '^.*/', ''), '\.sql$', '') AS script, c.script_no,
       c.tps, c.latency_avg_ms, c.transactions
FROM pgbench_scripts c JOIN pgbench_summary s USING (source_id)
WHERE s.status = 'ok';
"""

# -- summary lines ------------------------------------------------------------

Handler = Callable[[re.Match, dict], None]


@dataclass(frozen=True)
class Line:
    pattern: re.Pattern
    handle: Handler
    versions: str  # documentation: which pgbench versions print it


def _set(**names: Callable[[str], Any]) -> Handler:
    def h(m: re.Match, out: dict) -> None:
        for key, conv in names.items():
            v = m.group(key)
            if v is not None:
                out[key] = conv(v)
    return h


def _f(s: str) -> float:
    return to_float(s)


def _i(s: str) -> int:
    v = to_int(s)
    if not -(2 ** 63) <= v < 2 ** 63:  # counts are BIGINT in the store; more is damage, not a count
        raise ValueError(s)
    return v


def _tps(m: re.Match, out: dict) -> None:
    value, basis = float(m.group("v")), m.group("basis")
    if basis == "including connections establishing":
        out["tps_including_connections"] = value
        out.setdefault("tps", value)
        out.setdefault("tps_basis", basis)
    elif basis == "excluding connections establishing":
        out["tps_excluding_connections"] = value
        out["tps"], out["tps_basis"] = value, basis
    else:  # 14+: without initial connection time / including reconnection times
        out["tps"], out["tps_basis"] = value, basis


def _processed(m: re.Match, out: dict) -> None:
    out["transactions_processed"] = _i(m.group("n"))
    if m.group("of"):
        out["transactions_expected"] = _i(m.group("of"))


def _latency_avg(m: re.Match, out: dict) -> None:
    out["latency_avg_ms"] = float(m.group("v"))
    out["latency_avg_includes_failures"] = bool(m.group("incl"))


def L(regex: str, handle: Handler, versions: str) -> Line:
    return Line(re.compile(r"^" + regex + r"\s*$", re.ASCII), handle, versions)


SUMMARY_LINES: list[Line] = [
    L(r"transaction type: (?P<transaction_type>.+?)", _set(transaction_type=str), "all"),
    L(r"scaling factor: (?P<scaling_factor>\d+)", _set(scaling_factor=_i), "all"),
    L(r"partition method: (?P<partition_method>\w+)", _set(partition_method=str), "13+"),
    L(r"partitions: (?P<partitions>\d+)", _set(partitions=_i), "13+"),
    L(r"query mode: (?P<query_mode>\w+)", _set(query_mode=str), "all"),
    L(r"number of clients: (?P<clients>\d+)", _set(clients=_i), "all"),
    L(r"number of threads: (?P<threads>\d+)", _set(threads=_i), "9.0+"),
    L(r"maximum number of tries: (?P<max_tries>\d+)", _set(max_tries=_i), "15+"),
    L(r"number of transactions per client: (?P<transactions_per_client>\d+)",
      _set(transactions_per_client=_i), "all, -t"),
    L(r"duration: (?P<duration_s>\d+) s", _set(duration_s=_f), "all, -T"),
    L(r"number of transactions actually processed: (?P<n>\d+)(?:/(?P<of>\d+))?", _processed, "all"),
    L(r"zipfian cache array overflowed \d+ time\(s\)", lambda m, o: None, "11"),
    L(r"number of failed transactions: (?P<transactions_failed>\d+) \(.*\)", _set(transactions_failed=_i), "15+"),
    L(r"number of serialization failures: (?P<serialization_failures>\d+) \(.*\)",
      _set(serialization_failures=_i), "15+"),
    L(r"number of deadlock failures: (?P<deadlock_failures>\d+) \(.*\)", _set(deadlock_failures=_i), "15+"),
    L(r"number of transactions retried: (?P<transactions_retried>\d+) \(.*\)", _set(transactions_retried=_i), "15+"),
    L(r"total number of retries: (?P<total_retries>\d+)", _set(total_retries=_i), "15+"),
    L(r"number of transactions skipped: (?P<transactions_skipped>\d+) \(.*\)", _set(transactions_skipped=_i), "9.5+"),
    L(r"number of transactions above the (?P<latency_limit_ms>" + NUM + r") ms latency limit: "
      r"(?P<transactions_above_latency_limit>\d+)(?:/\d+)? \(.*\)",
      _set(latency_limit_ms=_f, transactions_above_latency_limit=_i), "9.5+"),
    L(r"latency average(?: =|:) (?P<v>" + NUM + r") ms(?P<incl> \(including failures\))?", _latency_avg, "9.4+"),
    L(r"latency stddev(?: =|:) (?P<latency_stddev_ms>" + NUM + r") ms", _set(latency_stddev_ms=_f), "9.4+"),
    L(r"rate limit schedule lag: avg (?P<rate_limit_lag_avg_ms>" + NUM + r") \(max (?P<rate_limit_lag_max_ms>"
      + NUM + r")\) ms", _set(rate_limit_lag_avg_ms=_f, rate_limit_lag_max_ms=_f), "9.4+"),
    L(r"initial connection time = (?P<initial_connection_time_ms>" + NUM + r") ms",
      _set(initial_connection_time_ms=_f), "14+"),
    L(r"average connection time = (?P<average_connection_time_ms>" + NUM + r") ms",
      _set(average_connection_time_ms=_f), "14+, -C"),
    L(r"tps = (?P<v>" + NUM + r") \((?P<basis>including connections establishing|excluding connections "
      r"establishing|without initial connection time|including reconnection times)\)", _tps, "all"),
]

# Lines that look like a summary line (same key) but whose value did not parse:
# refused with what was expected, never skipped.
_KEYED = re.compile(r"^(number of [a-z ]+|scaling factor|duration|latency (?:average|stddev)|tps|"
                    r"initial connection time|maximum number of tries)\s*[:=]", re.ASCII)

_BANNER = re.compile(r"^pgbench \((?P<ver>.+?)(?:, server (?P<server>.+))?\)\s*$", re.ASCII)
_PROGRESS = re.compile(
    r"^progress: (?P<t>" + NUM + r") s, (?P<tps>" + NUM + r") tps, lat (?P<lat>" + NUM + r") ms "
    r"stddev (?P<sd>" + NUM + r")(?P<rest>.*)$", re.ASCII
)
_PROGRESS_PARTS = {
    "failed": re.compile(r", (\d+) failed", re.ASCII),
    "lag_ms": re.compile(r", lag (" + NUM + r") ms", re.ASCII),
    "skipped": re.compile(r", (\d+) skipped", re.ASCII),
    "retried": re.compile(r", (\d+) retried", re.ASCII),
    "retries": re.compile(r", (\d+) retries", re.ASCII),
}
_SCRIPT_HEAD = re.compile(r"^SQL script (?P<no>\d+): (?P<name>.+?)\s*$", re.ASCII)
_SCRIPT_LINES = [
    (re.compile(r"^ - weight: (\d+) \(targets (" + NUM + r")% of total\)", re.ASCII), ("weight", "weight_pct")),
    (re.compile(r"^ - (\d+) transactions \((" + NUM + r")% of total, tps = (" + NUM + r")\)", re.ASCII),
     ("transactions", "transactions_pct", "tps")),
    (re.compile(r"^ - (\d+) transactions \((" + NUM + r")% of total\)", re.ASCII), ("transactions", "transactions_pct")),
    (re.compile(r"^ - number of transactions actually processed: (\d+) \(tps = (" + NUM + r")\)", re.ASCII),
     ("transactions_processed", "tps")),
    (re.compile(r"^ - number of failed transactions: (\d+)", re.ASCII), ("transactions_failed",)),
    (re.compile(r"^ - number of transactions skipped: (\d+)", re.ASCII), ("transactions_skipped",)),
    (re.compile(r"^ - number of transactions retried: (\d+)", re.ASCII), ("transactions_retried",)),
    (re.compile(r"^ - total number of retries: (\d+)", re.ASCII), ("total_retries",)),
    (re.compile(r"^ - latency average = (" + NUM + r") ms", re.ASCII), ("latency_avg_ms",)),
    (re.compile(r"^ - latency stddev = (" + NUM + r") ms", re.ASCII), ("latency_stddev_ms",)),
]
_INT_SCRIPT_KEYS = {"weight", "transactions", "transactions_failed", "transactions_processed",
                    "transactions_skipped", "transactions_retried", "total_retries"}
_STMT_HEAD = re.compile(r"^(?: - )?statement latencies in milliseconds(?P<cols>[^:]*?)(?:, file (?P<file>\d+))?:\s*$", re.ASCII)
_ABORT = re.compile(r"(Run was aborted|client \d+ (?:script \d+ )?aborted|pgbench: fatal:)", re.ASCII)
_CLIENT_ABORT = re.compile(r"client (\d+) (?:script \d+ )?aborted", re.ASCII)


def sniff_stdout(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = head.lines(400)
    has_type = any(l.startswith("transaction type: ") for l in lines)
    has_clients = any(l.startswith("number of clients: ") for l in lines)
    has_progress = sum(1 for l in lines if _PROGRESS.match(l)) >= 1
    return (has_type and has_clients) or has_progress


def _second_run(path: Path, lineno: int, first: int) -> None:
    """Several runs appended to one file are refused, never merged or cut to the last one: which run a
    repetition, client count, ... belongs to is a fact of the layout, not something to guess."""
    raise ParseError(path, lineno, f"one pgbench run per file (the summary starting at line {first} is "
                     "complete); this is a second run appended to the same file. Put each run's output in "
                     "its own run directory (e.g. clients=1/rep=1/pgbench.log), see docs/formats.md §1.7",
                     "a second pgbench run")


def parse_stdout(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "pgbench output")
    lines = text.split("\n")
    truncated_last = bool(not text.endswith("\n") and lines and lines[-1] != "")
    if lines and lines[-1] == "":
        lines.pop()
    out = _Output(path, sink, len(lines), truncated_last, sink.run_start)
    for lineno, raw in enumerate(lines, start=1):
        out.read(lineno, raw.rstrip("\r"))
    out.store()


@dataclass
class _Output:
    """One pgbench output read line by line: each line goes to the first step that takes it (``read``);
    anything no step takes (starting vacuum, error messages, harness lines) is not ours."""

    path: Path
    sink: Sink
    n_lines: int
    truncated_last: bool                 # the file ends without a newline: its last line may be cut off
    run_start: datetime | None
    summary: dict[str, Any] = field(default_factory=dict)
    summary_started_at: int | None = None
    matched_specs: dict[Any, int] = field(default_factory=dict)  # SUMMARY_LINES pattern -> line it matched
    scripts: list[dict] = field(default_factory=list)
    statements: list[dict] = field(default_factory=list)
    progress: list[dict] = field(default_factory=list)
    aborts: list[str] = field(default_factory=list)
    aborted_clients: set[int] = field(default_factory=set)
    stmt_script: int | None = None       # the script whose statement latencies are being listed
    stmt_cols: str = ""
    stmt_no: int = 0

    def read(self, lineno: int, line: str) -> None:
        for step in (self.cut_off_progress, self.banner, self.progress_line, self.abort, self.summary_line,
                     self.unknown_summary_line, self.script_head, self.statement_head, self.script_line,
                     self.statement):
            if step(lineno, line):
                return

    def cut_off(self, lineno: int) -> bool:
        return self.truncated_last and lineno == self.n_lines

    def cut_off_progress(self, lineno: int, line: str) -> bool:
        if self.cut_off(lineno) and line.startswith("progress:") and not _PROGRESS.match(line):
            self.sink.warn(lineno, "last line is cut off (pgbench killed?); skipped")
            return True
        return False

    def banner(self, lineno: int, line: str) -> bool:
        m = _BANNER.match(line)
        if not m:
            return False
        if self.summary_started_at is not None:
            _second_run(self.path, lineno, self.summary_started_at)
        self.summary["pgbench_version"] = m.group("ver")
        if m.group("server"):
            self.summary["server_version"] = m.group("server")
        return True

    def progress_line(self, lineno: int, line: str) -> bool:
        m = _PROGRESS.match(line)
        if not m:
            if line.startswith("progress:") and foreign_digit(line):
                raise ParseError(self.path, lineno, "ASCII digits in a progress line", foreign_digit(line))
            return False
        self.stmt_script = None
        row = {"tps": float(m.group("tps")), "latency_avg_ms": float(m.group("lat")),
               "latency_stddev_ms": float(m.group("sd")), "line": lineno}
        t = float(m.group("t"))
        if not math.isfinite(t) or t < 0:
            raise ParseError(self.path, lineno, "a progress time in seconds (0 or more)", m.group("t"))
        if t > 1e8:  # --progress-timestamp: Unix epoch
            if t > 4102444800:  # 2100-01-01: no pgbench ran then
                raise ParseError(self.path, lineno, "a --progress-timestamp Unix time before 2100", m.group("t"))
            row["epoch_s"] = t
            row["ts"] = datetime.fromtimestamp(t, timezone.utc)
        else:
            row["elapsed_s"] = t
            if self.run_start is not None:
                row["ts"] = self.run_start + timedelta(seconds=t)
        rest = m.group("rest")
        for key, rx in _PROGRESS_PARTS.items():
            pm = rx.search(rest)
            if pm:
                row[key] = float(pm.group(1)) if key == "lag_ms" else int(pm.group(1))
        self.progress.append(row)
        return True

    def abort(self, lineno: int, line: str) -> bool:
        if not _ABORT.search(line):
            return False
        self.aborts.append(f"line {lineno}: {line.strip()}")
        cm = _CLIENT_ABORT.search(line)
        if cm:
            self.aborted_clients.add(int(cm.group(1)))
        return True

    def summary_line(self, lineno: int, line: str) -> bool:
        for spec in SUMMARY_LINES:
            m = spec.pattern.match(line)
            if not m:
                continue
            if self.summary_started_at is None:
                self.summary_started_at = lineno
            # a summary opens with 'transaction type:'; a second one is another run appended
            if spec is SUMMARY_LINES[0] and spec.pattern in self.matched_specs:
                _second_run(self.path, lineno, self.summary_started_at)
            self.matched_specs[spec.pattern] = lineno
            try:
                spec.handle(m, self.summary)
            except ValueError:
                raise ParseError(self.path, lineno, "a number", line) from None
            self.stmt_script = None
            return True
        return False

    def unknown_summary_line(self, lineno: int, line: str) -> bool:
        """A line shaped like a summary line that no entry of SUMMARY_LINES reads: refused, never guessed."""
        if self.summary_started_at is None or not _KEYED.match(line):
            return False
        if self.cut_off(lineno):
            self.sink.warn(lineno, f"last line is cut off (pgbench killed?); skipped: {line!r}")
            return True
        raise ParseError(self.path, lineno, "a pgbench summary line with a numeric value", line)

    def script_head(self, lineno: int, line: str) -> bool:
        m = _SCRIPT_HEAD.match(line)
        if not m:
            return False
        self.scripts.append({"script_no": int(m.group("no")), "script": m.group("name")})
        self.stmt_script = None
        return True

    def statement_head(self, lineno: int, line: str) -> bool:
        m = _STMT_HEAD.match(line)
        if not m:
            return False
        self.stmt_script = int(m.group("file")) if m.group("file") else (
            self.scripts[-1]["script_no"] if self.scripts else 1)
        self.stmt_cols = m.group("cols") or ""
        self.stmt_no = 0
        return True

    def script_line(self, lineno: int, line: str) -> bool:
        if not (self.scripts and line.startswith(" - ")):
            return False
        for rx, keys in _SCRIPT_LINES:
            sm = rx.match(line)
            if sm:
                read = {k: int(v) if k in _INT_SCRIPT_KEYS else float(v) for k, v in zip(keys, sm.groups())}
                _refuse_outside(self.path, lineno, _SCRIPT_BOUNDS, read)
                self.scripts[-1].update(read)
                break
        return True

    def statement(self, lineno: int, line: str) -> bool:
        if self.stmt_script is None:
            return False
        row = _statement_row(line, self.stmt_cols)
        if row is None:
            if line.strip() == "":
                return True
            if self.cut_off(lineno):
                self.sink.warn(lineno, "last line is cut off (pgbench killed?); skipped")
                return True
            raise ParseError(self.path, lineno, "a per-statement latency line ('   <ms>  <failures>  <statement>')",
                             line)
        _refuse_outside(self.path, lineno, _STATEMENT_BOUNDS, row)
        self.stmt_no += 1
        row.update(script_no=self.stmt_script, statement_no=self.stmt_no)
        self.statements.append(row)
        return True

    def store(self) -> None:
        """The rows read, into the sink; an output with neither a summary nor progress lines is refused."""
        if self.summary_started_at is None and not self.progress:
            raise ParseError(self.path, None, "a pgbench summary ('transaction type: ...') or progress lines",
                             "neither")
        if self.summary_started_at is not None:
            self.store_summary()
        for table, rows in (("pgbench_scripts", self.scripts), ("pgbench_statement_latency", self.statements),
                            ("pgbench_progress", self.progress)):
            if rows:
                self.sink.add_rows(table, rows)

    def store_summary(self) -> None:
        status, note = "ok", None
        if self.aborts:
            status, note = "aborted", "; ".join(self.aborts[:3]) + (" ..." if len(self.aborts) > 3 else "")
        if "tps" not in self.summary and status == "ok":
            raise ParseError(
                self.path, self.n_lines + 1,
                f"the summary that starts at line {self.summary_started_at} to end with a 'tps = ...' line "
                "(or a 'Run was aborted' notice)", "end of file",
            )
        self.summary.update(status=status, status_note=note, aborted_clients=len(self.aborted_clients) or None,
                            first_line=self.summary_started_at)
        self.summary.setdefault("pgbench_version", None)
        self.sink.set_tool_version(self.summary.get("pgbench_version"))
        self.sink.add_rows("pgbench_summary", [self.summary])
        for key in ("clients", "threads", "duration_s"):
            if key in self.summary:
                self.sink.fact(key, self.summary[key])


_STMT_ROW = re.compile(r"^\s*(?P<ms>" + NUM + r")(?P<rest>.*)$", re.ASCII)


def _statement_row(line: str, cols: str) -> dict | None:
    m = _STMT_ROW.match(line)
    if not m or not line[:1].isspace():
        return None
    rest = m.group("rest")
    row: dict[str, Any] = {"latency_ms": float(m.group("ms"))}
    n_counts = 2 if "retries" in cols else 1 if "failures" in cols else 0
    parts = rest.strip().split(None, n_counts)
    for key in ("failures", "retries")[:n_counts]:
        if not parts or not (parts[0].isascii() and parts[0].isdigit()):
            return None
        row[key] = int(parts.pop(0))
    row["statement"] = parts[0] if parts else ""
    return row



# What pgbench can print (parsers/bounds.py): rates and times are never negative; no run lasts a year.
BOUNDS = [
    TableBounds("pgbench_summary", line="first_line", bounds=(
        Bound("tps", 0, FASTEST_PER_S, "transactions per second"),
        Bound("tps_including_connections", 0, FASTEST_PER_S, "transactions per second"),
        Bound("tps_excluding_connections", 0, FASTEST_PER_S, "transactions per second"),
        Bound("latency_avg_ms", 0, LONGEST_MS, "a latency within a run"),
        Bound("latency_stddev_ms", 0, LONGEST_MS, "a latency within a run"),
        Bound("rate_limit_lag_avg_ms", 0, LONGEST_MS, "a schedule lag within a run"),
        Bound("rate_limit_lag_max_ms", 0, LONGEST_MS, "a schedule lag within a run"),
        Bound("initial_connection_time_ms", 0, LONGEST_MS, "a time within a run"),
        Bound("average_connection_time_ms", 0, LONGEST_MS, "a time within a run"),
        Bound("duration_s", 0, LONGEST_S, "a run's duration"),
    )),
    TableBounds("pgbench_progress", bounds=(
        Bound("tps", 0, FASTEST_PER_S, "transactions per second"),
        Bound("latency_avg_ms", 0, LONGEST_MS, "a latency within a run"),
        Bound("latency_stddev_ms", 0, LONGEST_MS, "a latency within a run"),
        Bound("lag_ms", 0, LONGEST_MS, "a schedule lag within a run"),
        Bound("elapsed_s", 0, LONGEST_S, "seconds since the start of a run"),
        Bound("ts", EARLIEST, LATEST, "a wall-clock time"),
    )),
    TableBounds("pgbench_scripts", line=None, at="'script ' || script_no", bounds=(
        Bound("tps", 0, FASTEST_PER_S, "transactions per second"),
        Bound("latency_avg_ms", 0, LONGEST_MS, "a latency within a run"),
        Bound("latency_stddev_ms", 0, LONGEST_MS, "a latency within a run"),
    )),
    TableBounds("pgbench_statement_latency", line=None, at="'script ' || script_no || ' statement ' || statement_no",
                bounds=(Bound("latency_ms", 0, LONGEST_MS, "a latency within a run"),)),
]

# (the per-script and per-statement tables keep no line: their values are refused at their line as they are read)
_SCRIPT_BOUNDS, _STATEMENT_BOUNDS = (next(tb for tb in BOUNDS if tb.table == t)
                                     for t in ("pgbench_scripts", "pgbench_statement_latency"))


# The store's integer columns of those tables (above): pgbench_scripts.weight an INTEGER, every other count a BIGINT
_INTEGER_KEYS = {"weight"}


def _refuse_outside(path: Path, lineno: int, tb: TableBounds, row: dict[str, Any]) -> None:
    """``bounds.refuse_outside`` on the finite values: a NaN pgbench prints ('-nan' for a script that ran no
    transaction) is stored as NULL with a warning, as in the summary. A count too large for its column is refused
    here too: the store's own check, on rows that keep no line, could name none."""
    for key, v in row.items():
        if type(v) is int and v >= (bounds.INTEGER_END if key in _INTEGER_KEYS else bounds.BIGINT_END):
            kind = "INTEGER" if key in _INTEGER_KEYS else "BIGINT"
            raise ParseError(path, lineno, f"a count for {key!r} that fits the store's {kind}", str(v)[:40])
    bounds.refuse_outside(path, lineno, tb, {k: v for k, v in row.items()
                                             if not (isinstance(v, float) and not math.isfinite(v))})


MODULE = ParserModule(
    name="pgbench",
    bounds=BOUNDS,
    formats=[
        Format(tool="pgbench", name="pgbench-stdout",
               description="pgbench standard output: summary, -r statement latencies, -P progress",
               sniff=sniff_stdout, parse=parse_stdout, priority=10, one_per_run=True),
    ],
    schema=SCHEMA,
    views=VIEWS,
    tables=TABLES,
    metrics=[
        MetricDef("tps", "SELECT run_id, tps AS value FROM pgbench_summary WHERE status = 'ok'",
                  "tps", True),
        MetricDef("latency_avg_ms", "SELECT run_id, latency_avg_ms AS value FROM pgbench_summary WHERE status = 'ok'",
                  "ms", False),
        MetricDef("latency_stddev_ms",
                  "SELECT run_id, latency_stddev_ms AS value FROM pgbench_summary WHERE status = 'ok'",
                  "ms", False),
        MetricDef("transactions_processed",
                  "SELECT run_id, transactions_processed AS value FROM pgbench_summary WHERE status = 'ok'",
                  "transactions", None),
        # One script of a run that mixes several: ``script_tps[insert]``, ``script_latency_ms[search_title]``.
        MetricDef("script_tps", "SELECT run_id, sum(tps) AS value FROM pgbench_script_results GROUP BY run_id",
                  "tps", True,
                  selection_sql="SELECT run_id, sum(tps) AS value FROM pgbench_script_results "
                                "WHERE script IN {selection} GROUP BY run_id", selection_of="script"),
        MetricDef("script_latency_ms", "SELECT run_id, sum(latency_avg_ms * transactions) / nullif(sum(transactions), 0) "
                  "AS value FROM pgbench_script_results GROUP BY run_id", "ms", False,
                  selection_sql="SELECT run_id, sum(latency_avg_ms * transactions) / nullif(sum(transactions), 0) "
                                "AS value FROM pgbench_script_results WHERE script IN {selection} GROUP BY run_id",
                  selection_of="script"),
    ],
)
