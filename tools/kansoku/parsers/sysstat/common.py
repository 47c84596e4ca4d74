"""Shared by the sysstat (sar/sadf), iostat and vmstat parsers: the tall
``sys_metrics`` table, time-of-day / date / number parsing across locales, and
the row collector that writes through the Sink.

Not a parser module itself (leading underscore: the registry skips it).
See shared/docs/formats.md §0 (locales), §2.1-2.3 (banner, times, records).
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, Iterable

from kansoku.errors import ParseError

# -- storage -------------------------------------------------------------------

SCHEMA = """
-- One row per (sample, item, metric) of sar/sadf, iostat and vmstat: a tall table
-- survives new columns in new tool versions. Metric names are the tool's own column
-- names (sar/sadf -d header names, e.g. '%usr', 'rkB/s'; sadf -j keys are mapped to
-- those names; iostat/vmstat headers as printed). Typed views (cpu, disk, memory) pivot it.
CREATE TABLE IF NOT EXISTS sys_metrics (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    tool VARCHAR NOT NULL,          -- 'sar' | 'iostat' | 'vmstat'
    format VARCHAR NOT NULL,        -- 'sadf-json' | 'sadf-csv' | 'sar-text' | 'sa-binary' | 'iostat-text' | 'iostat-json' | 'vmstat-text'
    ts TIMESTAMPTZ,                 -- end of the sample interval (NULL when the file has no times)
    interval_s DOUBLE,              -- length of the interval the sample covers
    sample INTEGER,                 -- 0-based sample (report) number within the file
    since_boot BOOLEAN NOT NULL,    -- first iostat report / first vmstat line: averages since boot
    activity VARCHAR NOT NULL,      -- 'cpu', 'disk', 'memory', 'swap', 'queue', 'net-dev', ...
    instance VARCHAR,               -- CPU number or 'all', device, interface, ...; NULL for whole-system rows
    metric VARCHAR NOT NULL,
    value DOUBLE,
    line INTEGER                    -- line in the file (text formats)
);
-- One row per (file, activity): what a file holds, its time span, how its clock was read.
CREATE TABLE IF NOT EXISTS sys_series (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    tool VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    format_rank INTEGER NOT NULL,   -- lower = preferred when a run has the same data in several files
    activity VARCHAR NOT NULL,
    host VARCHAR,
    samples INTEGER,                -- distinct sample times, since-boot sample excluded
    first_ts TIMESTAMPTZ,
    last_ts TIMESTAMPTZ,
    interval_s DOUBLE,              -- most common interval
    since_boot_excluded INTEGER,    -- samples flagged since_boot (excluded from the views)
    tz_basis VARCHAR                -- how wall-clock times were turned into instants
);
"""

TABLES = ["sys_metrics", "sys_series"]

# Rank of each format within its tool: the authoritative file for a run (formats.md §2.5/2.6:
# sadf -j and -d carry full dates and UTC; sar text has only times of day; sa files need sadf).
FORMAT_RANK = {
    "sadf-json": 1, "sadf-csv": 2, "sar-text": 3, "sa-binary": 4,
    "iostat-json": 1, "iostat-text": 2,
    "vmstat-text": 1,
}

# -- numbers -------------------------------------------------------------------

_COMMA_NUM = re.compile(r"^[-+]?\d+,\d+$")
_HUMAN = re.compile(r"^([-+]?\d+(?:[.,]\d+)?)([BkKMGTP%])$")
_HUMAN_KB = {"B": 1 / 1024, "k": 1.0, "K": 1.0, "M": 1024.0, "G": 1024.0**2, "T": 1024.0**3, "P": 1024.0**4}


def num(tok: str) -> float | None:
    """A number as sysstat/procps print it: '12.50', '12,50' (de_DE, fr_FR), '222.1k' (--human)."""
    try:
        return float(tok)
    except ValueError:
        pass
    if _COMMA_NUM.match(tok):
        return float(tok.replace(",", "."))
    m = _HUMAN.match(tok)
    if m:
        v = float(m.group(1).replace(",", "."))
        return v if m.group(2) == "%" else v * _HUMAN_KB[m.group(2)]
    return None


def is_num(tok: str) -> bool:
    return num(tok) is not None


# -- times of day ------------------------------------------------------------------

_AM = {"AM", "am", "a.m.", "A.M.", "午前", "上午", "오전", "vorm.", "πμ"}
_PM = {"PM", "pm", "p.m.", "P.M.", "午後", "下午", "오후", "nachm.", "μμ"}
# 13:20:19 | 23時43分35秒 (ja_JP) | 23时43分37秒 (zh_CN) | 13.20.19 (some locales)
_TOD = re.compile(r"^(\d{1,2})[:時时.](\d{2})[:分.](\d{2})[秒초]?$")
_TOD_KO = re.compile(r"^(\d{1,2})시$")


def parse_tod(tokens: list[str]) -> tuple[int, int] | None:
    """Time of day at the start of a sar line: (seconds since midnight, tokens used).

    Handles %X in C/ISO (``13:20:19``), 12-hour clocks with the AM/PM marker after
    (``01:20:19 PM``) or before the time (``午後 01:20:19``), and ja/zh ``23時43分35秒``.
    """
    if not tokens:
        return None
    i = 0
    marker = None
    if tokens[0] in _AM or tokens[0] in _PM:
        marker, i = tokens[0], 1
        if len(tokens) < 2:
            return None
    m = _TOD.match(tokens[i])
    if not m:
        return None
    h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3))
    used = i + 1
    if marker is None and len(tokens) > used and (tokens[used] in _AM or tokens[used] in _PM):
        marker = tokens[used]
        used += 1
    if marker is not None:
        if h > 12:
            return None
        if marker in _PM and h != 12:
            h += 12
        elif marker in _AM and h == 12:
            h = 0
    if h > 23 or mi > 59 or s > 60:
        return None
    return h * 3600 + mi * 60 + min(s, 59), used


# -- dates (banner %x) -------------------------------------------------------------

_D_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_D_CJK = re.compile(r"^(\d{4})年(\d{1,2})月(\d{1,2})日$")
_D_DOT = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{2,4})$")
_D_SLASH = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2,4})$")
_D_YSLASH = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})$")


def _year(y: str) -> int:
    v = int(y)
    return v + 2000 if v < 70 else v + 1900 if v < 100 else v


def parse_date(tok: str, hint: date | None = None) -> date | None:
    """A date as sysstat prints it with %x in various locales (formats.md §0, §2.1).

    ``mm/dd/yy`` (C, en_US) and ``dd/mm/yyyy`` (fr_FR, en_GB) are ambiguous for days <= 12:
    the run's start date (``hint``) decides when known, else the C/en_US reading wins.
    """
    tok = tok.strip()
    try:
        for rx, order in ((_D_ISO, "ymd"), (_D_CJK, "ymd"), (_D_YSLASH, "ymd"), (_D_DOT, "dmy")):
            m = rx.match(tok)
            if m:
                a, b, c = m.groups()
                if order == "ymd":
                    return date(int(a), int(b), int(c))
                return date(_year(c), int(b), int(a))
        m = _D_SLASH.match(tok)
        if m:
            a, b, c = int(m.group(1)), int(m.group(2)), _year(m.group(3))
            cands = []
            if a <= 12:
                cands.append(date(c, a, b) if b <= 31 else None)
            if b <= 12 and a > 12 or (b <= 12 and a <= 12 and a != b):
                cands.append(date(c, b, a))
            cands = [d for d in cands if d is not None]
            if hint is not None:
                for d in cands:
                    if abs((d - hint).days) <= 1:
                        return d
            return cands[0] if cands else None
    except ValueError:
        return None
    return None


# -- banner ------------------------------------------------------------------------

# printf("%s %s (%s) \t%s \t_%s_\t(%d CPU)\n", ...) (formats.md §2.1); spaces instead of tabs in pastes.
BANNER = re.compile(
    r"^(?P<sysname>[A-Za-z][\w-]*)\s+(?P<release>\S+)\s+\((?P<host>[^)]*)\)\s+(?P<date>\S+)\s+"
    r"_(?P<machine>\S+)_\s+\((?P<cpus>\d+)\s+CPU\)\s*$"
)


def local_tz(run_start: Any) -> tuple[tzinfo, str]:
    """Time zone for wall-clock times printed without one: the run's (run.toml offset), else UTC."""
    if isinstance(run_start, datetime) and run_start.tzinfo is not None:
        off = run_start.utcoffset()
        return run_start.tzinfo, f"local time taken as run.toml offset {_fmt_off(off)}"
    return timezone.utc, "local time assumed UTC (no run.toml start with an offset)"


def _fmt_off(off: timedelta | None) -> str:
    if off is None:
        return "+00:00"
    mins = int(off.total_seconds() // 60)
    sign = "+" if mins >= 0 else "-"
    return f"{sign}{abs(mins) // 60:02d}:{abs(mins) % 60:02d}"


def combine(d: date, secs: int, tz: tzinfo) -> datetime:
    return datetime.combine(d, time(0), tz) + timedelta(seconds=secs)


# -- reading files -------------------------------------------------------------------

# pgbench-tools prefixes every line with 'YYYY-MM-DD HH:MM:SS.ffffff<TAB>' (formats.md §0.4).
TS_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\t")


def read_text(path: Path, what: str) -> tuple[list[str], bool]:
    """Lines of a text file (without newlines) and whether the last line was cut off."""
    data = path.read_bytes()
    if b"\x00" in data[:65536]:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise ParseError(path, line, what, "binary data (NUL byte)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(data) - 3 and not data.endswith(b"\n"):  # a character cut at EOF
            text = data[: exc.start].decode("utf-8", errors="replace")
        else:
            line = data[: exc.start].count(b"\n") + 1
            raise ParseError(path, line, f"UTF-8 text ({what})", "undecodable bytes") from None
    truncated = bool(text) and not text.endswith("\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [l.rstrip("\r") for l in lines], truncated


def strip_prefix(lines: list[str]) -> tuple[list[str], list[str | None]]:
    """Remove harness time-stamp prefixes if (nearly) every non-empty line has one."""
    nonempty = [l for l in lines[:50] if l.strip()]
    if not nonempty or sum(1 for l in nonempty if TS_PREFIX.match(l)) < max(1, len(nonempty) * 0.9):
        return lines, [None] * len(lines)
    out, stamps = [], []
    for l in lines:
        m = TS_PREFIX.match(l)
        if m:
            out.append(l[m.end():])
            stamps.append(m.group(1))
        else:
            out.append(l)
            stamps.append(None)
    return out, stamps


# -- collecting rows -----------------------------------------------------------------


class Collector:
    """Buffers tall rows for one file and writes them (and the per-activity summary)."""

    def __init__(self, tool: str, fmt: str):
        self.tool = tool
        self.format = fmt
        self.rows: list[dict[str, Any]] = []
        self.host: str | None = None
        self.tz_basis: str | None = None

    def add(self, ts: datetime | None, activity: str, instance: str | None, metric: str, value: float | None,
            *, interval_s: float | None = None, sample: int | None = None, since_boot: bool = False,
            line: int | None = None) -> None:
        self.rows.append({"tool": self.tool, "format": self.format, "ts": ts, "interval_s": interval_s,
                          "sample": sample, "since_boot": since_boot, "activity": activity,
                          "instance": instance, "metric": metric, "value": value, "line": line})

    def fill_intervals(self) -> None:
        """Interval of samples whose file does not state it: the gap to the previous sample of the
        same activity; the first sample gets the most common gap."""
        by_act: dict[str, list[datetime]] = {}
        for r in self.rows:
            if r["interval_s"] is None and r["ts"] is not None and not r["since_boot"]:
                by_act.setdefault(r["activity"], []).append(r["ts"])
        gaps: dict[tuple[str, datetime], float] = {}
        common: dict[str, float | None] = {}
        for act, tss in by_act.items():
            uniq = sorted(set(tss))
            diffs = [(b - a).total_seconds() for a, b in zip(uniq, uniq[1:])]
            c = Counter(d for d in diffs if d > 0)
            common[act] = c.most_common(1)[0][0] if c else None
            prev = None
            for t in uniq:
                gaps[(act, t)] = (t - prev).total_seconds() if prev is not None else common[act]
                prev = t
        for r in self.rows:
            if r["interval_s"] is None and r["ts"] is not None and not r["since_boot"]:
                g = gaps.get((r["activity"], r["ts"]))
                # a gap far longer than usual is a pause or restart, not one interval
                if g is not None and common.get(r["activity"]) and g > 3 * common[r["activity"]]:
                    g = common[r["activity"]]
                r["interval_s"] = g

    def flush(self, sink) -> None:
        if not self.rows:
            return
        self._bulk_load(sink)


_CSV_COLUMNS = ("{'tool': 'VARCHAR', 'format': 'VARCHAR', 'ts': 'TIMESTAMPTZ', 'interval_s': 'DOUBLE', "
                "'sample': 'INTEGER', 'since_boot': 'BOOLEAN', 'activity': 'VARCHAR', 'instance': 'VARCHAR', "
                "'metric': 'VARCHAR', 'value': 'DOUBLE', 'line': 'INTEGER'}")


def _bulk_load_impl(self, sink) -> None:
    """Write the rows to a temporary CSV and let DuckDB's CSV reader insert them: a file of
    sar -A holds ~10^4 values, and per-row JSON encoding would dominate the ingest time."""
    fd, tmp = tempfile.mkstemp(prefix="kansoku-sys-", suffix=".csv")
    ts_cache: dict[Any, str] = {}
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            for r in self.rows:
                ts = r["ts"]
                if ts is None:
                    tss = NULL
                else:
                    tss = ts_cache.get(ts)
                    if tss is None:
                        tss = ts_cache[ts] = ts.isoformat(sep=" ")
                w.writerow((r["tool"], r["format"], tss, _n(r["interval_s"]), _n(r["sample"]),
                            "true" if r["since_boot"] else "false", r["activity"], _n(r["instance"]),
                            r["metric"], _n(r["value"]), _n(r["line"])))
        reader = ("read_csv($csv_path, header = false, auto_detect = false, delim = ',', quote = '\"', "
                  f"escape = '\"', nullstr = '{NULL}', columns = {_CSV_COLUMNS})")
        sink.load_sql("sys_metrics", "SELECT $source_id AS source_id, $run_id AS run_id, * FROM " + reader,
                      {"csv_path": tmp})
        # per-activity summary, computed set-based from the same file (no scan of the big table)
        sink.load_sql(
            "sys_series",
            """SELECT $source_id AS source_id, $run_id AS run_id, $tool AS tool, $format AS format,
                      $rank::INTEGER AS format_rank, activity, $host::VARCHAR AS host,
                      count(DISTINCT coalesce(epoch(ts), sample)) FILTER (WHERE NOT since_boot) AS samples,
                      min(ts) FILTER (WHERE NOT since_boot) AS first_ts,
                      max(ts) FILTER (WHERE NOT since_boot) AS last_ts,
                      mode(interval_s) FILTER (WHERE NOT since_boot) AS interval_s,
                      count(DISTINCT coalesce(epoch(ts), sample)) FILTER (WHERE since_boot) AS since_boot_excluded,
                      $tz_basis::VARCHAR AS tz_basis
               FROM """ + reader + " GROUP BY activity",
            {"csv_path": tmp, "tool": self.tool, "format": self.format, "rank": FORMAT_RANK[self.format],
             "host": self.host, "tz_basis": self.tz_basis},
        )
    finally:
        os.unlink(tmp)


NULL = "\\N"


def _n(v: Any) -> Any:
    return NULL if v is None else v


Collector._bulk_load = _bulk_load_impl  # type: ignore[attr-defined]


def first_lines(head_text: str, n: int = 40) -> list[str]:
    return head_text.splitlines()[:n]


def chunks(it: Iterable, n: int):
    buf = []
    for x in it:
        buf.append(x)
        if len(buf) == n:
            yield buf
            buf = []
    if buf:
        yield buf
