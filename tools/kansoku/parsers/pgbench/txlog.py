"""pgbench log files: per-transaction logs (-l) and aggregate logs (--aggregate-interval).

These files reach gigabytes (a line per transaction), so they are never
read line by line in Python: the whole file goes through DuckDB's CSV reader
(``sink.load_sql`` with ``read_csv``). Python only looks at the first 64 kB
(to recognise the variant) and the last bytes (to find a line cut off when
pgbench was killed). Memory stays flat: DuckDB streams the file into the table.

Formats (docs/formats.md §1.4 and §1.5), told apart by content:

* per-transaction log, one line per transaction, 6/7/8 space-separated fields::

      client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]

  ``time`` is the latency in µs, or ``skipped`` (9.5+, -R with -L), ``failed``
  (15+), ``serialization`` / ``deadlock`` (15+ with --failures-detailed).
  6 fields: 8.4 .. 18 without -R. 7 fields: -R lag (9.4+) *or* retries (15+,
  --max-tries != 1 without -R): see :func:`_seventh_field`. 8 fields: lag and
  retries (15+).
* aggregate log, one line per interval and thread, 6 (9.3), 10 (9.4 -R),
  11 (9.5-14 -R -L) or exactly 15 fields (15+, postgres commit 17a856d)::

      interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
      [sum_lag sum_lag_2 min_lag max_lag [skipped [retried retries serialization_failures deadlock_failures]]]

pgbench writes one file per thread, ``PREFIX.PID`` (thread 0) and
``PREFIX.PID.N`` (thread N); the thread number is taken from the name, and the
thread files of one log must agree on their format (checked here, file and
line named when they do not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kansoku.errors import ParseError, last_line
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import EARLIEST_EPOCH_S, LATEST_EPOCH_S, LONGEST_US, MOST, Bound, TableBounds
from kansoku.parsers.numbers import is_digits

FAILURE_WORDS = ("skipped", "failed", "serialization", "deadlock")
_TX_TIME = r"(?:\d+|" + "|".join(FAILURE_WORDS) + r")"
# client_id transaction_no time script_no time_epoch time_us [lag] [retries]
_TXLOG_LINE = re.compile(r"^(\d+) (\d+) (" + _TX_TIME + r") (\d+) (\d+) (\d+)((?: \d+){0,2})\s*$", re.ASCII)
_AGG_LINE = re.compile(r"^\d+(?: \d+)+\s*$", re.ASCII)
AGG_FIELD_COUNTS = {6: "9.3+ (no -R)", 10: "9.4+ with -R", 11: "9.5-14 with -R -L", 15: "15+"}
EPOCH_MIN = 100_000_000  # 1973: smaller values are not Unix epoch seconds
_THREAD_FILE = re.compile(r"^(?P<prefix>.+?)\.(?P<pid>\d+)(?:\.(?P<tid>\d+))?$", re.ASCII)

# Per-transaction logs are the tables that reach billions of rows, so a row holds only what its line says:
# what is the same for every line of a file (its source, its thread, which optional fields it has) is one row
# of pgbench_transaction_files, and the transactions name their file by a small number (file_no). A log
# whose every transaction completed and that has no lag or retries field (the common shape) is stored in
# pgbench_transaction_rows_plain, five columns besides file_no; any other log in pgbench_transaction_rows_full.
# The view pgbench_transactions puts them back together with the run id (from `sources`). Storing no
# constant or all-NULL column per row makes the plain shape cheaper to store than even a bare read_csv
# (docs/ingest-performance.md, "Per-transaction logs").
SCHEMA = """
CREATE TABLE IF NOT EXISTS pgbench_transaction_files (
    file_no INTEGER NOT NULL,   -- the file's number, unique in the store: its transactions' rows name it
    source_id VARCHAR NOT NULL,
    thread INTEGER,             -- from the file name PREFIX.PID[.N] (0 for PREFIX.PID), NULL if not named so
    fields INTEGER,             -- 6 | 7 | 8: the number of fields of the file's lines
    has_lag BOOLEAN,            -- the file has the schedule lag field (-R)
    has_retries BOOLEAN,        -- the file has the retries field (15+ with --max-tries != 1)
    plain BOOLEAN               -- its rows are in pgbench_transaction_rows_plain (else pgbench_transaction_rows_full)
);
CREATE TABLE IF NOT EXISTS pgbench_transaction_rows_plain (
    file_no INTEGER NOT NULL,   -- pgbench_transaction_files.file_no of the log the row is a line of
    client_id INTEGER,          -- 0-based
    transaction_no BIGINT,      -- per-client counter; not unique across files
    latency_us BIGINT,          -- transaction latency (µs); NULL unless the transaction completed
    script_no INTEGER,          -- 0-based, as in the log (stdout numbers scripts from 1)
    end_epoch_us BIGINT         -- completion time, µs since the Unix epoch (NULL: Windows builds print 0 0)
);
CREATE TABLE IF NOT EXISTS pgbench_transaction_rows_full (
    file_no INTEGER NOT NULL,   -- pgbench_transaction_files.file_no of the log the row is a line of
    client_id INTEGER,          -- 0-based
    transaction_no BIGINT,      -- per-client counter; not unique across files
    failure VARCHAR,            -- NULL: completed; 'skipped' | 'failed' | 'serialization' | 'deadlock'
                                -- (the view adds status = 'ok' for NULL: no string per completed row)
    latency_us BIGINT,          -- transaction latency (µs); NULL unless the transaction completed
    script_no INTEGER,          -- 0-based, as in the log (stdout numbers scripts from 1)
    end_epoch_us BIGINT,        -- completion time, µs since the Unix epoch (NULL: Windows builds print 0 0)
    lag_us BIGINT,              -- schedule lag (µs), with -R
    retries INTEGER             -- 15+ with --max-tries != 1
);
CREATE TABLE IF NOT EXISTS pgbench_aggregate (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    thread INTEGER,
    interval_start_epoch_s BIGINT,
    interval_s INTEGER,         -- inferred: most common step between interval starts of the file
    transactions BIGINT,
    latency_sum_us DOUBLE,
    latency_sum2_us2 DOUBLE,
    latency_min_us DOUBLE,
    latency_max_us DOUBLE,
    lag_sum_us DOUBLE,          -- -R (9.4+); 15+ always present, 0 when unused
    lag_sum2_us2 DOUBLE,
    lag_min_us DOUBLE,
    lag_max_us DOUBLE,
    skipped BIGINT,             -- -R -L (9.5+)
    retried BIGINT,             -- 15+
    retries BIGINT,             -- 15+
    serialization_failures BIGINT,  -- 15+, only counted with --failures-detailed
    deadlock_failures BIGINT,       -- 15+, only counted with --failures-detailed
    fields INTEGER              -- 6 | 10 | 11 | 15: the column variant of the file
);
"""

TX_FILES = "pgbench_transaction_files"
TX_PLAIN = "pgbench_transaction_rows_plain"
TX_FULL = "pgbench_transaction_rows_full"
TABLES = [TX_FILES, TX_PLAIN, TX_FULL, "pgbench_aggregate"]
# the transactions of the run that logged the most (what the memory of its latency percentiles follows)
LARGEST_RUN_ROWS_SQL = f"""
SELECT coalesce(max(n), 0) FROM (
  SELECT s.run_id, count(*) AS n
  FROM (SELECT file_no FROM {TX_PLAIN} UNION ALL SELECT file_no FROM {TX_FULL}) t
  JOIN {TX_FILES} f USING (file_no) JOIN sources s USING (source_id)
  GROUP BY s.run_id)"""

# A store made before these tables held every transaction in one table, pgbench_transaction_rows (source_id,
# thread, client_id, transaction_no, failure, latency_us, script_no, end_epoch_us, lag_us, retries): its rows
# are moved on the store's next ingest (store/db.py, ensure_schema), each file numbered in the order of its
# source_id, the plain shape where every row of the file has it, and the old table dropped.
RETIRED = {"pgbench_transaction_rows": f"""
CREATE TEMP TABLE kansoku_tx_upgrade AS
SELECT source_id, ((SELECT coalesce(max(file_no), 0) FROM {TX_FILES}) + row_number() OVER (ORDER BY source_id))::INTEGER
         AS file_no, any_value(thread) AS thread,
       6 + (count(lag_us) > 0)::INTEGER + (count(retries) > 0)::INTEGER AS fields,
       count(lag_us) > 0 AS has_lag, count(retries) > 0 AS has_retries,
       count(failure) = 0 AND count(lag_us) = 0 AND count(retries) = 0 AS plain
FROM pgbench_transaction_rows GROUP BY source_id;
INSERT INTO {TX_FILES} BY NAME SELECT * FROM kansoku_tx_upgrade;
INSERT INTO {TX_PLAIN} BY NAME
SELECT u.file_no, t.client_id, t.transaction_no, t.latency_us, t.script_no, t.end_epoch_us
FROM pgbench_transaction_rows t JOIN kansoku_tx_upgrade u USING (source_id) WHERE u.plain;
INSERT INTO {TX_FULL} BY NAME
SELECT u.file_no, t.client_id, t.transaction_no, t.failure, t.latency_us, t.script_no, t.end_epoch_us, t.lag_us,
       t.retries
FROM pgbench_transaction_rows t JOIN kansoku_tx_upgrade u USING (source_id) WHERE NOT u.plain;
DROP TABLE kansoku_tx_upgrade;
DROP TABLE pgbench_transaction_rows;
"""}

# -- views and metrics --------------------------------------------------------
#
# Sampled logs (--sampling-rate) hold a random fraction of the transactions. The
# fraction is not written in the log, so it is measured: logged 'ok' transactions
# / 'transactions actually processed' of the run's summary (when a summary was
# ingested for the run and the fraction is clearly below 1). TPS from a sampled
# log is divided by it; percentiles need no correction.
#
# Steady-state TPS (tps_steady) and the other steady-state metrics: pgbench/steady.py.

VIEWS = """
-- column status: 'ok' (completed), or the word the log prints: 'skipped', 'failed', 'serialization', 'deadlock'
-- column script_no: 0-based, as in the log (pgbench's stdout numbers scripts from 1)
CREATE OR REPLACE VIEW pgbench_transactions AS
SELECT f.source_id, s.run_id, f.thread, t.client_id, t.transaction_no, t.status, t.latency_us, t.script_no,
       t.end_epoch_us, t.lag_us, t.retries
FROM (SELECT file_no, client_id, transaction_no, 'ok' AS status, latency_us, script_no, end_epoch_us,
             NULL::BIGINT AS lag_us, NULL::INTEGER AS retries
      FROM pgbench_transaction_rows_plain
      UNION ALL
      SELECT file_no, client_id, transaction_no, coalesce(failure, 'ok'), latency_us, script_no, end_epoch_us,
             lag_us, retries
      FROM pgbench_transaction_rows_full) t
JOIN pgbench_transaction_files f USING (file_no) JOIN sources s ON s.source_id = f.source_id;
CREATE OR REPLACE VIEW pgbench_txlog_sampling AS
WITH logged AS (
    SELECT run_id, count(*) FILTER (WHERE status = 'ok') AS logged_ok, count(*) AS logged
    FROM pgbench_transactions GROUP BY run_id
), processed AS (
    SELECT run_id, max(transactions_processed) AS processed FROM pgbench_summary GROUP BY run_id
)
SELECT l.run_id, l.logged, l.logged_ok, p.processed,
       CASE WHEN p.processed > 0 AND l.logged_ok < 0.99 * p.processed
            THEN l.logged_ok / p.processed ELSE 1.0 END AS sampling_fraction
FROM logged l LEFT JOIN processed p USING (run_id);

CREATE OR REPLACE VIEW pgbench_txlog_seconds AS
SELECT t.run_id, t.end_epoch_us // 1000000 AS epoch_s,
       count(*) FILTER (WHERE t.status = 'ok') AS transactions,
       count(*) FILTER (WHERE t.status IN ('failed', 'serialization', 'deadlock')) AS failed,
       count(*) FILTER (WHERE t.status = 'skipped') AS skipped,
       avg(t.latency_us) / 1000.0 AS latency_avg_ms,
       max(t.latency_us) / 1000.0 AS latency_max_ms,
       avg(t.lag_us) / 1000.0 AS lag_avg_ms
FROM pgbench_transactions t
WHERE t.end_epoch_us > 0
GROUP BY t.run_id, epoch_s;

CREATE OR REPLACE VIEW pgbench_aggregate_intervals AS
SELECT run_id, interval_start_epoch_s AS epoch_s, max(interval_s) AS interval_s,
       sum(transactions) AS transactions, sum(skipped) AS skipped,
       sum(serialization_failures) + sum(deadlock_failures) AS failed,
       sum(latency_sum_us) / nullif(sum(transactions), 0) / 1000.0 AS latency_avg_ms,
       max(latency_max_us) / 1000.0 AS latency_max_ms,
       sum(lag_sum_us) / nullif(sum(transactions), 0) / 1000.0 AS lag_avg_ms,
       count(*) AS threads
FROM pgbench_aggregate
GROUP BY run_id, interval_start_epoch_s;

-- Per-second TPS and latency of each run, from the best source it has:
-- the per-transaction log, else the aggregate log, else the -P progress lines.
-- ts is the start of the interval (wall clock, UTC); elapsed_s its end, in
-- seconds since the run's start (run.toml 'start', else the first interval's start).
CREATE OR REPLACE VIEW pgbench_tps_per_second AS
WITH tx AS (
    SELECT s.run_id, s.epoch_s::DOUBLE AS start_epoch_s, 1.0 AS interval_s,
           s.transactions / coalesce(f.sampling_fraction, 1.0) AS tps,
           s.latency_avg_ms, s.latency_max_ms, s.lag_avg_ms,
           s.failed / coalesce(f.sampling_fraction, 1.0) AS failed_per_s,
           s.skipped / coalesce(f.sampling_fraction, 1.0) AS skipped_per_s,
           'txlog' AS series_source, 1 AS source_rank
    FROM pgbench_txlog_seconds s LEFT JOIN pgbench_txlog_sampling f USING (run_id)
), agg AS (
    SELECT run_id, epoch_s::DOUBLE, coalesce(interval_s, 1)::DOUBLE,
           transactions / coalesce(interval_s, 1), latency_avg_ms, latency_max_ms, lag_avg_ms,
           failed / coalesce(interval_s, 1), skipped / coalesce(interval_s, 1), 'aggregate', 2
    FROM pgbench_aggregate_intervals
), prog AS (
    SELECT run_id,
           epoch(ts) - (elapsed_s - coalesce(lag(elapsed_s) OVER w, 0)),
           elapsed_s - coalesce(lag(elapsed_s) OVER w, 0),
           tps, latency_avg_ms, NULL::DOUBLE, lag_ms,
           failed / nullif(elapsed_s - coalesce(lag(elapsed_s) OVER w, 0), 0),
           skipped / nullif(elapsed_s - coalesce(lag(elapsed_s) OVER w, 0), 0),
           'progress', 3
    FROM pgbench_progress WHERE ts IS NOT NULL
    WINDOW w AS (PARTITION BY source_id ORDER BY line)
), unioned AS (
    SELECT * FROM tx UNION ALL SELECT * FROM agg UNION ALL SELECT * FROM prog
), best AS (
    SELECT run_id, min(source_rank) AS source_rank FROM unioned GROUP BY run_id
), chosen AS (
    SELECT u.* FROM unioned u JOIN best b USING (run_id, source_rank)
)
SELECT c.run_id,
       to_timestamp(c.start_epoch_s) AS ts,
       c.start_epoch_s + c.interval_s
         - coalesce(epoch(r.start_time), min(c.start_epoch_s) OVER (PARTITION BY c.run_id)) AS elapsed_s,
       c.interval_s, c.tps, c.latency_avg_ms, c.latency_max_ms, c.lag_avg_ms,
       c.failed_per_s, c.skipped_per_s, c.series_source
FROM chosen c LEFT JOIN runs r USING (run_id);

-- Latency percentiles of successful transactions, over all thread files of a run.
CREATE OR REPLACE VIEW pgbench_latency_percentiles AS
SELECT run_id, count(*) AS transactions,
       quantile_cont(latency_us, 0.50) / 1000.0 AS latency_p50_ms,
       quantile_cont(latency_us, 0.90) / 1000.0 AS latency_p90_ms,
       quantile_cont(latency_us, 0.95) / 1000.0 AS latency_p95_ms,
       quantile_cont(latency_us, 0.99) / 1000.0 AS latency_p99_ms,
       max(latency_us) / 1000.0 AS latency_max_ms,
       avg(latency_us) / 1000.0 AS latency_avg_ms
FROM pgbench_transactions
WHERE status = 'ok'
GROUP BY run_id;

-- Runs whose pgbench summary says they were aborted: their logs never feed a metric.
CREATE OR REPLACE VIEW pgbench_aborted_runs AS
SELECT DISTINCT run_id FROM pgbench_summary WHERE status <> 'ok';

-- Whole-run TPS from the per-transaction log: successful transactions over the
-- time from the first transaction's start to the last one's end.
CREATE OR REPLACE VIEW pgbench_txlog_tps AS
SELECT t.run_id,
       count(*) FILTER (WHERE t.status = 'ok') / coalesce(any_value(f.sampling_fraction), 1.0)
         / nullif((max(t.end_epoch_us) - min(t.end_epoch_us - coalesce(t.latency_us, 0))) / 1e6, 0) AS tps
FROM pgbench_transactions t LEFT JOIN pgbench_txlog_sampling f USING (run_id)
WHERE t.end_epoch_us > 0
GROUP BY t.run_id;
"""

_NOT_ABORTED = "run_id NOT IN (SELECT run_id FROM pgbench_aborted_runs WHERE run_id IS NOT NULL)"


def _pct_metric(name: str) -> MetricDef:
    return MetricDef(name, f"SELECT run_id, {name} AS value FROM pgbench_latency_percentiles WHERE {_NOT_ABORTED}",
                     "ms", False)


METRICS = [
    _pct_metric("latency_p50_ms"),
    _pct_metric("latency_p90_ms"),
    _pct_metric("latency_p95_ms"),
    _pct_metric("latency_p99_ms"),
    _pct_metric("latency_max_ms"),
    MetricDef("tps_txlog", f"SELECT run_id, tps AS value FROM pgbench_txlog_tps WHERE {_NOT_ABORTED}",
              "tps", True),
]

# -- recognising the files ----------------------------------------------------


@dataclass(frozen=True)
class Shape:
    kind: str  # 'txlog' | 'aggregate'
    fields: int
    words: frozenset[str]  # failure words seen in the head (txlog)
    max_field7: int | None = None  # txlog: largest 7th field in the head

    def describe(self) -> str:
        name = "per-transaction log" if self.kind == "txlog" else "aggregate log"
        return f"a pgbench {name} with {self.fields} fields per line"


def _complete_lines(raw: bytes, limit: int = 2000) -> list[str]:
    """Lines of a file head; the last one is dropped if the head cut it."""
    text = raw.decode("utf-8", errors="replace")
    lines = text.split("\n")
    lines.pop()  # after the last '\n': empty, or a line the head (or pgbench's death) cut
    if not lines and text:
        lines = [text]  # a one-line file without '\n': judge it anyway
    return [l.rstrip("\r") for l in lines[:limit]]


def _txlog_groups(line: str) -> tuple | None:
    """A per-transaction log line's regex groups, or None when it is not one (a client id or a microsecond
    part out of range, an epoch before EPOCH_MIN); shape_of asks it of each line of a head (~1,000 lines)."""
    m = _TXLOG_LINE.match(line)
    if m is None:
        return None
    g = m.groups()
    # (a number of at most 7 / 6 digits is below 10,000,000 / 1,000,000: no int() needed)
    if (len(g[0]) > 7 and int(g[0]) >= 10_000_000) or (len(g[5]) > 6 and int(g[5]) >= 1_000_000):
        return None
    epoch = int(g[4])
    if epoch != 0 and epoch < EPOCH_MIN:
        return None
    return g


@lru_cache(maxsize=4)
def shape_of(raw: bytes) -> Shape | None:
    """The log format of a file head, or None if it is not a pgbench log (cached: the txlog and aggregate
    sniffers ask it of the same head; a Shape is immutable).

    The first line decides the variant and at least half of the head's lines
    must agree with it; the others are left for the parser to report, with
    their line numbers (a corrupt line early in a log is an error to show,
    not a reason to skip the file silently).
    """
    if not raw or b"\x00" in raw.split(b"\n", 1)[0]:
        return None
    nl = raw.find(b"\n")
    if nl >= 0:  # the first line decides: judged alone before the whole head is decoded and split
        first = raw[:nl].decode("utf-8", errors="replace").rstrip("\r")
        if not first.strip() or not (_txlog_groups(first) or _AGG_LINE.match(first)):
            return None
    lines = _complete_lines(raw)
    if not lines or not lines[0].strip():
        return None
    head = _txlog_groups(lines[0])
    if head:
        fields = 6 + len(head[6].split())
        words: set[str] = set()
        max7: int | None = None
        agree = 0
        for line in lines:
            g = _txlog_groups(line)
            if g is None:
                continue
            g3, g7 = g[2], g[6]
            more = g7.split() if g7 else ()
            if 6 + len(more) != fields:
                continue
            agree += 1
            if not is_digits(g3):
                words.add(g3)
            if fields >= 7:
                v = int(more[0])
                max7 = v if max7 is None else max(max7, v)
        return Shape("txlog", fields, frozenset(words), max7) if 2 * agree >= len(lines) else None
    if _AGG_LINE.match(lines[0]):
        fields = len(lines[0].split())
        if fields not in AGG_FIELD_COUNTS or int(lines[0].split()[0]) < EPOCH_MIN:
            return None
        agree = sum(1 for line in lines if _AGG_LINE.match(line) and len(line.split()) == fields
                    and int(line.split()[0]) >= EPOCH_MIN)
        return Shape("aggregate", fields, frozenset()) if 2 * agree >= len(lines) else None
    return None


def sniff_txlog(head: FileHead) -> bool:
    s = shape_of(head.raw)
    return s is not None and s.kind == "txlog"


def sniff_aggregate(head: FileHead) -> bool:
    s = shape_of(head.raw)
    return s is not None and s.kind == "aggregate"


def _read_head(path: Path, n: int = 64 * 1024) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


def _thread_of(path: Path) -> tuple[str | None, int | None]:
    """(log key 'PREFIX.PID', thread number) from a pgbench log file name."""
    m = _THREAD_FILE.match(path.name)
    if not m:
        return None, None
    return f"{m.group('prefix')}.{m.group('pid')}", int(m.group("tid") or 0)


def _siblings(path: Path) -> list[Path]:
    """The other thread files of the same log (same PREFIX.PID), non-empty."""
    key, _ = _thread_of(path)
    if key is None:
        return []
    out = []
    for p in sorted(path.parent.iterdir()):
        if p == path or not p.is_file():
            continue
        k, _ = _thread_of(p)
        if k == key and p.stat().st_size > 0:
            out.append(p)
    return out


def _check_siblings(path: Path, shape: Shape, siblings: list[Path]) -> None:
    for sib in siblings:
        other = shape_of(_read_head(sib))
        if other is None or (other.kind, other.fields) != (shape.kind, shape.fields):
            found = other.describe() if other else "not a pgbench log"
            raise ParseError(
                path, 1,
                f"all thread files of this log to share one format ({shape.describe()}, as {path.name} is)",
                f"{sib.name}: {found}")


_SUMMARY_HINTS = {
    "rate_limit": re.compile(rb"rate limit schedule lag: avg|\d+ skipped|, lag [\d.]+ ms", re.ASCII),
    "max_tries": re.compile(rb"maximum number of tries: (\d+)", re.ASCII),
}


def _summary_verdicts(directory: Path) -> set[str]:
    """What the pgbench stdout captures beside the log say a 7th field holds.

    A summary with a rate-limit lag line (-R) says 'lag_us'; one with
    'maximum number of tries' other than 1 and no -R says 'retries'; others say
    nothing (their run wrote 6 or 8 fields)."""
    verdicts: set[str] = set()
    for p in sorted(directory.iterdir()):
        try:
            if not p.is_file():
                continue
            size = p.stat().st_size
            with open(p, "rb") as fh:
                head = fh.read(64 * 1024)
                fh.seek(max(0, size - 64 * 1024))
                tail = fh.read()
        except OSError:
            continue
        blob = head + tail
        if b"transaction type: " not in blob:
            continue
        if _SUMMARY_HINTS["rate_limit"].search(blob):
            verdicts.add("lag_us")
            continue
        m = _SUMMARY_HINTS["max_tries"].search(blob)
        if m and int(m.group(1)) != 1:
            verdicts.add("retries")
    return verdicts


def _seventh_field(path: Path, shapes: list[Shape], sink: Sink) -> str:
    """A 7-field line has either the schedule lag (-R, 9.4+) or retries (15+ --max-tries != 1).

    Decided, in order, by: a 'skipped' transaction (needs -R); the pgbench
    summary captured beside the log, when the summaries there agree (rate-limit
    lag line, maximum number of tries); else failure words (15+) with only small
    values (retries are < max tries), with a warning saying so.
    """
    words = set().union(*(s.words for s in shapes))
    if "skipped" in words:
        return "lag_us"
    verdicts = _summary_verdicts(path.parent)
    if len(verdicts) == 1:
        return verdicts.pop()
    max7 = max((s.max_field7 or 0) for s in shapes)
    guess = "retries" if words and max7 <= 10 else "lag_us"
    why = "the pgbench summaries beside the log disagree" if verdicts else "no pgbench summary beside the log"
    sink.warn(1, f"7th field read as {'retries' if guess == 'retries' else 'schedule lag (µs)'} from its values: "
                 f"{why} to tell whether -R or --max-tries was used")
    return guess


# -- loading ------------------------------------------------------------------


def _tail(path: Path, size: int) -> tuple[bool, bytes, int]:
    """(ends with newline, last line bytes, byte offset of the last line)."""
    with open(path, "rb") as fh:
        n = min(size, 64 * 1024)
        fh.seek(size - n)
        tail = fh.read(n)
    if tail.endswith(b"\n"):
        return True, b"", size
    cut = tail.rfind(b"\n")
    last = tail[cut + 1:]
    return False, last, size - len(last)


def crlf_of(head: bytes) -> bool:
    """A log whose first line ends in CRLF (copied through Windows) is read with CRLF line ends throughout,
    as pgbench's CRLF stdout is; a carriage return anywhere else is still refused (textfile)."""
    return head.split(b"\n", 1)[0].endswith(b"\r")


def _csv_source(columns: dict[str, str], record_rejects: bool = False, crlf: bool = False) -> str:
    """DuckDB's reader for a pgbench log. Lines it cannot read are skipped (an error inside the ingest
    transaction would abort it) and counted afterwards; ``record_rejects`` (the error path) keeps them."""
    cols = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    nl = "\\r\\n" if crlf else "\\n"
    return (f"read_csv($path, delim=' ', header=false, auto_detect=false, columns={cols}, "
            f"quote='', escape='', new_line='{nl}', ignore_errors=true"
            + (", store_rejects=true)" if record_rejects else ")"))


def _load(path: Path, sink: Sink, table: str, select_sql: str, expected: str, params: dict,
          columns: dict[str, str], crlf: bool = False, numeric: str | None = None,
          numeric_table: str | None = None) -> tuple[int, bool]:
    """Load through DuckDB; lines it could not read are errors, except a cut-off last line (warned, skipped).

    The load itself records no rejects (that costs ~10 % on big logs): the rows loaded are compared with
    the lines of the file, and only when some are missing is the file scanned again to name them.

    ``numeric``: a cheaper first try, a SELECT whose reader reads every field as a number
    (a transaction log whose head shows no failure word: the time field read as BIGINT, not as text then
    cast). It is kept only when it read every line of the file, or every line but a cut-off last line that
    no reader takes (a different number of fields): then the rows are those ``select_sql`` stores, as
    DuckDB's CSV number reader and its cast from text agree on every text both accept. Anything else (a
    failure word, a line either reader refuses) is left to ``select_sql``: this file's rows are deleted and
    loaded again, so what is stored, warned or refused is exactly what ``select_sql`` alone gives.
    ``numeric_table``: the table ``numeric`` loads into, when not ``table`` (``select_sql`` always loads
    into ``table``). Returns the rows loaded and whether they are ``numeric``'s."""
    size = path.stat().st_size
    textfile.refuse_control_bytes(path, expected, crlf=crlf)
    ends_nl, last_line, last_off = _tail(path, size)
    cut = not ends_nl and bool(last_line.strip())
    cut_rejected = False
    n = -1
    n_numeric = False
    if numeric is not None:
        text_table, table = table, numeric_table or table
        n = sink.load_sql(table, numeric, {"path": str(path), **params})
        lines = sink.newline_count() + cut
        # the cut line is certainly refused by both readers when its number of fields is not theirs
        cut_refused = cut and not crlf and len(last_line.split(b" ")) != len(columns)
        n_numeric = n == lines or (cut_refused and n == lines - 1)
        if n_numeric:
            cut_rejected = n < lines
        else:
            sink.delete_own_rows(table)
            table = text_table
            n = -1
    if n < 0:
        n = sink.load_sql(table, select_sql, {"path": str(path), **params})
        lines = sink.newline_count() + cut
        if n < lines:
            for line, offset, text, message in _rejected_lines(sink, path, columns, crlf):
                if not ends_nl and offset >= last_off - 1:
                    cut_rejected = True
                    continue
                raise ParseError(path, line, f"{expected} ({message})", text)
            if n < lines - cut_rejected - _blank_lines(path, crlf):  # lines the reader dropped without naming
                raise ParseError(path, None, f"{expected} on each of its {lines:,} lines",
                                 f"{lines - cut_rejected - n:,} line(s) the reader could not read or name")
    if cut:
        sink.warn(None, f"last line is cut off (pgbench killed?), skipped: {last_line[:80].decode(errors='replace')!r}")
        if not cut_rejected:
            n -= _delete_cut_line(sink, table, path, last_line)
    return n, n_numeric


def _blank_lines(path: Path, crlf: bool) -> int:
    """Empty lines of the file, which the reader skips (they hold nothing to lose). Error path only."""
    end = b"\r\n" if crlf else b"\n"
    pair = re.compile(b"(?=" + re.escape(end + end) + b")", re.ASCII)  # (overlapping: three line ends, two empty lines)
    n, prev = 0, end  # the file's start counts as a line end
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            both = prev + chunk
            n += len(pair.findall(both)) - len(pair.findall(prev))
            prev = both[-len(end):]
    return n


def _rejected_lines(sink: Sink, path: Path, columns: dict[str, str],
                    crlf: bool = False) -> list[tuple[int, int, str, str]]:
    """Error path: read the file again recording DuckDB's rejects; (line, byte offset, text, message)."""
    return sink.csv_rejects(_csv_source(columns, record_rejects=True, crlf=crlf), {"path": str(path)})


def _delete_cut_line(sink: Sink, table: str, path: Path, last_line: bytes) -> int:
    """The cut last line was read as a complete row: delete that one row (it ends the file, so it is
    the newest row of this source with exactly these values)."""
    parts = last_line.decode(errors="replace").split()
    try:
        if table in (TX_PLAIN, TX_FULL):
            if len(parts) < 6:
                return 0
            cond = "client_id = ? AND transaction_no = ? AND script_no = ? AND end_epoch_us = ?"
            args = [int(parts[0]), int(parts[1]), int(parts[3]), int(parts[4]) * 1_000_000 + int(parts[5])]
        else:
            cond = "interval_start_epoch_s = ? AND transactions = ?"
            args = [int(parts[0]), int(parts[1])]
    except ValueError:
        return 0
    if any(not -(2 ** 63) <= a < 2 ** 63 for a in args):
        return 0
    return sink.delete_last_own_row(table, cond, args)


def parse_txlog(path: Path, sink: Sink) -> None:
    head = _read_head(path)
    shape = shape_of(head)
    if shape is None or shape.kind != "txlog":
        raise ParseError(path, 1, "a pgbench per-transaction log line "
                         "('client_id transaction_no time script_no time_epoch time_us [lag] [retries]')",
                         head.split(b"\n", 1)[0][:80].decode(errors="replace"))
    siblings = _siblings(path)
    _check_siblings(path, shape, siblings)
    _, thread = _thread_of(path)

    columns = {"client_id": "INTEGER", "transaction_no": "BIGINT", "time": "VARCHAR",
               "script_no": "INTEGER", "epoch_s": "BIGINT", "epoch_us": "BIGINT"}
    extra: list[str] = []
    if shape.fields == 7:
        sib_shapes = [shape] + [s for s in (shape_of(_read_head(p)) for p in siblings) if s]
        extra = [_seventh_field(path, sib_shapes, sink)]
    elif shape.fields == 8:
        extra = ["lag_us", "retries"]
    for name in extra:
        columns[name] = "BIGINT"
    extra_sql = "".join(f", {name}" for name in extra)
    # an epoch whose microseconds overflow 64 bits would abort the ingest's transaction: it is stored as the
    # largest value instead, which the bounds refuse naming its client and transaction
    end_epoch = ("CASE WHEN epoch_s = 0 AND epoch_us = 0 THEN NULL WHEN epoch_s NOT BETWEEN 0 AND 9000000000000 "
                 "OR epoch_us NOT BETWEEN 0 AND 999999999 THEN 9223372036854775807 "
                 "ELSE epoch_s * 1000000 + epoch_us END")
    crlf = crlf_of(head)
    select = f"""
        SELECT $file_no AS file_no, client_id, transaction_no,
               CASE WHEN latency_us IS NULL THEN time END AS failure,
               latency_us, script_no, {end_epoch} AS end_epoch_us{extra_sql}
        FROM (SELECT *, TRY_CAST(time AS BIGINT) AS latency_us FROM {_csv_source(columns, crlf=crlf)})"""
    # No failure word in the head: most likely none in the file, and the time field is read as a number
    # (no text per row, no cast); _load keeps that only when it read every line. Its rows then have no
    # failure, and a 6-field log's no lag nor retries either: they go to the plain table (no NULL columns).
    numeric = None
    table = TX_FULL
    if not shape.words:
        numbers = {**columns, "time": "BIGINT"}
        numeric = f"""
        SELECT $file_no AS file_no, client_id, transaction_no, time AS latency_us, script_no,
               {end_epoch} AS end_epoch_us{extra_sql}
        FROM {_csv_source(numbers, crlf=crlf)}"""
        if not extra:
            table = TX_PLAIN
    expected = f"a per-transaction log line of {shape.fields} space-separated fields"
    n, numbers_kept = _load(path, sink, TX_FULL, select, expected, {}, columns, crlf=crlf, numeric=numeric,
                            numeric_table=table)
    table = table if numbers_kept else TX_FULL
    sink.add_rows(TX_FILES, [{"thread": thread, "fields": shape.fields, "has_lag": "lag_us" in extra,
                              "has_retries": "retries" in extra, "plain": table == TX_PLAIN}])
    # One pass over the new rows, per client: unknown words in the time field, rows without a completion
    # time, and whether a client may hold a transaction number twice.
    # pgbench numbers each client's transactions 0, 1, 2, ...: a number seen twice is a duplicated line
    # (a log concatenated with itself), which would double tps_txlog. A client whose rows are exactly its
    # numbers' range (count = max - min + 1) has each number once, unless a line is doubled where another is
    # missing -- and a log that is not sampled has no missing numbers. So the grouping by (client,
    # number), a hash table as big as the log, is only needed for a client with more rows than its range
    # (certainly duplicated) or fewer (a sampled log, --sampling-rate): per client, a few bytes suffice.
    # Rows the numeric reader loaded have no failure word (NULL in every row): the word columns are not
    # computed then (and count(x) rather than count(*) FILTER, the cheaper of the two).
    unknown = "failure NOT IN ('skipped', 'failed', 'serialization', 'deadlock')"
    words = ("NULL AS bad_word, 0 AS n_bad" if numbers_kept else
             f"any_value(failure) FILTER (WHERE {unknown}) AS bad_word, count(*) FILTER (WHERE {unknown}) AS n_bad")
    bad_word, n_bad, no_time, unsure = sink.own_rows(table,
        "SELECT any_value(bad_word), sum(n_bad), sum(n - n_time), count(*) FILTER (WHERE n <> hi - lo + 1) FROM ("
        f"SELECT client_id, {words}, count(end_epoch_us) AS n_time, "
        "count(*) AS n, min(transaction_no) AS lo, max(transaction_no) AS hi FROM {rows} GROUP BY client_id)")[0]
    if n_bad:
        line, text = _find_line(path, lambda parts: len(parts) > 2 and parts[2] == bad_word)
        raise ParseError(path, line, "a latency in µs or one of the words " + ", ".join(FAILURE_WORDS)
                         + " in the 3rd field", text)
    if n == 0:
        raise ParseError(path, None, "at least one complete per-transaction log line", "none")
    dup = [] if not unsure else sink.own_rows(
        table,
        "SELECT client_id, transaction_no FROM {rows} GROUP BY ALL HAVING count(*) > 1 "
        "ORDER BY client_id, transaction_no LIMIT 1")
    if dup:
        c, t = dup[0]
        line, text = _find_line(path, lambda parts, seen=[0]: len(parts) > 2 and parts[0] == str(c)
                                and parts[1] == str(t) and _second(seen))
        raise ParseError(path, line, f"each transaction number once per client (client {c} transaction {t} "
                         "appears twice: lines duplicated?)", text)
    if no_time:
        sink.warn(None, f"{no_time} transactions have no completion time ('0 0', Windows builds <= 9.6): "
                        "they are left out of per-second series")


def _second(seen: list[int]) -> bool:
    """True on the second call (the second line that matched)."""
    seen[0] += 1
    return seen[0] == 2


def _find_line(path: Path, pred) -> tuple[int | None, str | None]:
    """Error path only: the first line whose fields satisfy pred (streams the file)."""
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, start=1):
            parts = raw.decode(errors="replace").split()
            if pred(parts):
                return i, raw.decode(errors="replace").rstrip("\n")
    return None, None


_AGG_COLUMNS = [
    ("interval_start_epoch_s", "BIGINT"), ("transactions", "BIGINT"),
    ("latency_sum_us", "DOUBLE"), ("latency_sum2_us2", "DOUBLE"),
    ("latency_min_us", "DOUBLE"), ("latency_max_us", "DOUBLE"),
    ("lag_sum_us", "DOUBLE"), ("lag_sum2_us2", "DOUBLE"), ("lag_min_us", "DOUBLE"), ("lag_max_us", "DOUBLE"),
    ("skipped", "BIGINT"),
    ("retried", "BIGINT"), ("retries", "BIGINT"), ("serialization_failures", "BIGINT"),
    ("deadlock_failures", "BIGINT"),
]


def parse_aggregate(path: Path, sink: Sink) -> None:
    head = _read_head(path)
    shape = shape_of(head)
    if shape is None or shape.kind != "aggregate":
        raise ParseError(path, 1, "a pgbench aggregate log line (6, 10, 11 or 15 numbers, "
                         "the first a Unix time)", head.split(b"\n", 1)[0][:80].decode(errors="replace"))
    _check_siblings(path, shape, _siblings(path))
    _, thread = _thread_of(path)
    cols = dict(_AGG_COLUMNS[:shape.fields])
    names = ", ".join(cols)
    select = (f"SELECT $source_id AS source_id, $run_id AS run_id, $thread::INTEGER AS thread, "
              f"$fields::INTEGER AS fields, {names} FROM {_csv_source(cols, crlf=crlf_of(head))}")
    n, _ = _load(path, sink, "pgbench_aggregate", select,
              f"an aggregate log line of {shape.fields} numbers ({AGG_FIELD_COUNTS[shape.fields]})",
              {"thread": thread, "fields": shape.fields}, cols, crlf=crlf_of(head))
    if n == 0:
        # no line loaded: the file holds at most a cut-off line, read here to name the last line
        raise ParseError(path, last_line(path.read_text(encoding="utf-8", errors="replace")),
                         "at least one complete aggregate log line", "none")
    step = sink.own_rows("pgbench_aggregate",
        "SELECT mode(d) FROM (SELECT interval_start_epoch_s - lag(interval_start_epoch_s) "
        "OVER (ORDER BY interval_start_epoch_s) AS d FROM {rows}) WHERE d > 0")[0][0]
    if step is None:
        sink.warn(None, "a single interval: its length (--aggregate-interval) is unknown, taken as 1 s")
    sink.update_own_rows("pgbench_aggregate", "interval_s = $step", {"step": step or 1})


_LOG_NAME = re.compile(r"^(?P<prefix>.+?)\.(?P<pid>\d+)(?:\.\d+)?$", re.ASCII)


def log_run_key(path: Path) -> str | None:
    """pgbench names its -l logs PREFIX.PID (thread 0) and PREFIX.PID.N (thread N): logs of one run
    share PREFIX.PID; two different keys in one directory are two runs."""
    m = _LOG_NAME.match(path.name)
    return f"{m.group('prefix')}.{m.group('pid')}" if m else None


# What pgbench's -l logs can hold (parsers/bounds.py): integer microseconds and counts, never negative, never
# NaN; epochs of a real clock; each aggregate interval once per file (a file appended to itself is refused).
BOUNDS = [
    TableBounds(TX_PLAIN, line=None, at="'client ' || client_id || ' transaction ' || transaction_no",
                fields=(("client_id", 0), ("transaction_no", 1)), bounds=(
        Bound("latency_us", 0, LONGEST_US, "a latency within a run"),
        Bound("end_epoch_us", EARLIEST_EPOCH_S * 1e6, LATEST_EPOCH_S * 1e6, "a Unix time in µs between 1995 and 2100"),
    )),
    TableBounds(TX_FULL, line=None, at="'client ' || client_id || ' transaction ' || transaction_no",
                fields=(("client_id", 0), ("transaction_no", 1)), bounds=(
        Bound("latency_us", 0, LONGEST_US, "a latency within a run"),
        Bound("lag_us", 0, LONGEST_US, "a schedule lag within a run"),
        Bound("end_epoch_us", EARLIEST_EPOCH_S * 1e6, LATEST_EPOCH_S * 1e6, "a Unix time in µs between 1995 and 2100"),
    )),
    TableBounds("pgbench_aggregate", line=None, at="'interval starting ' || interval_start_epoch_s",
                fields=(("interval_start_epoch_s", 0),),
                unique=("thread", "interval_start_epoch_s"), unique_what="aggregate interval", bounds=(
        Bound("interval_start_epoch_s", EARLIEST_EPOCH_S, LATEST_EPOCH_S, "a Unix time between 1995 and 2100"),
        Bound("transactions", 0, MOST, "a count"),
        Bound("latency_sum_us", 0, None, "a sum of latencies"),
        Bound("latency_sum2_us2", 0, None, "a sum of squared latencies"),
        Bound("latency_min_us", 0, LONGEST_US, "a latency within a run"),
        Bound("latency_max_us", 0, LONGEST_US, "a latency within a run"),
        Bound("lag_sum_us", 0, None, "a sum of schedule lags"),
        Bound("lag_sum2_us2", 0, None, "a sum of squared schedule lags"),
        Bound("lag_min_us", 0, LONGEST_US, "a schedule lag within a run"),
        Bound("lag_max_us", 0, LONGEST_US, "a schedule lag within a run"),
        Bound("skipped", 0, MOST, "a count"),
        Bound("retried", 0, MOST, "a count"),
        Bound("retries", 0, MOST, "a count"),
    )),
]

MODULE = ParserModule(
    name="pgbench_log",
    bounds=BOUNDS,
    formats=[
        Format(tool="pgbench", name="pgbench-txlog",
               description="pgbench per-transaction log (-l), one file per thread",
               sniff=sniff_txlog, parse=parse_txlog, priority=5, run_key=log_run_key),
        Format(tool="pgbench", name="pgbench-aggregate",
               description="pgbench aggregate log (-l --aggregate-interval), one file per thread",
               sniff=sniff_aggregate, parse=parse_aggregate, priority=5, run_key=log_run_key),
    ],
    schema=SCHEMA,
    views=VIEWS,
    tables=TABLES,
    metrics=METRICS,
    retired=RETIRED,
)

__all__ = ["MODULE", "shape_of", "FAILURE_WORDS"]
