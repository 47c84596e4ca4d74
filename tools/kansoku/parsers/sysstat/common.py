"""Shared by the sysstat (sar/sadf), iostat and vmstat parsers: the tall
``sys_metrics`` table, time-of-day / date / number parsing across locales, and
the row collector that writes through the Sink.

Not a parser module itself (leading underscore: the registry skips it).
See docs/formats.md §0 (locales), §2.1-2.3 (banner, times, records).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.numbers import is_digits, to_float
from kansoku.parsers.sysstat import plausible

# -- storage -------------------------------------------------------------------

SCHEMA = """
-- One row per (sample, item, metric) of sar/sadf, iostat and vmstat: a tall table
-- survives new columns in new tool versions. Metric names are the tool's own column
-- names (sar/sadf -d header names, e.g. '%usr', 'rkB/s'; sadf -j keys are mapped to
-- those names; iostat/vmstat headers as printed). Typed views (cpu, disk, memory) pivot it.
CREATE TABLE IF NOT EXISTS sys_metrics (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    tool VARCHAR NOT NULL,          -- 'sar' | 'iostat' | 'vmstat' | 'mpstat'
    format VARCHAR NOT NULL,        -- 'sadf-json' | 'sadf-xml' | 'sadf-csv' | 'sadf-p' | 'sar-text' | 'sa-binary' | 'iostat-text' | 'iostat-json' | 'vmstat-text' | 'mpstat-text' | 'mpstat-json'
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
-- One row per (file, block device) seen: what kind of device it is, so that "all devices" sums count
-- each disk once (a partition, an LVM/md volume or an iostat -g group repeats I/O of a physical disk).
CREATE TABLE IF NOT EXISTS sys_devices (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    device VARCHAR NOT NULL,        -- the name as printed (sda, nvme0n1p1, dm-0, dev253-0, vg0-data, a -g group)
    device_class VARCHAR NOT NULL,  -- 'physical' | 'partition' | 'virtual' (dm, md, loop, bcache, zram, ...) | 'group' (iostat -g)
    class_rule VARCHAR              -- the rule of the device table that decided the class
);
"""

TABLES = ["sys_metrics", "sys_series", "sys_devices"]

# Rank of each format within its tool: the authoritative file for a run (docs/formats.md §2.5/2.6:
# sadf -j and -d carry full dates and UTC; sar text has only times of day; sa files need sadf).
FORMAT_RANK = {
    "sadf-json": 1, "sadf-xml": 1, "sadf-csv": 2, "sadf-p": 2, "sar-text": 3, "sa-binary": 4,
    "iostat-json": 1, "iostat-text": 2,
    "vmstat-text": 1,
    "mpstat-json": 1, "mpstat-text": 2,
}

# -- block devices -------------------------------------------------------------------

# Device name -> class, first match wins. Partitions before disks (sda1 before sda); names of
# device-mapper volumes printed by sar -p / iostat -N (vg-lv) are 'virtual'.
DEVICE_NAME_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("partition", re.compile(r"^(?:sd|vd|xvd|hd)[a-z]+\d+$", re.ASCII)),
    ("partition", re.compile(r"^(?:nvme\d+n\d+|mmcblk\d+|loop\d+|md\d+|nbd\d+|rbd\d+|zd\d+)p\d+$", re.ASCII)),
    ("partition", re.compile(r"^(?:cciss|ida|rd)[/!]c\d+d\d+p\d+$", re.ASCII)),
    ("partition", re.compile(r"-part\d+$", re.ASCII)),
    ("virtual", re.compile(r"^(?:dm-\d+|md\d+|md/\S+|bcache\d+|loop\d+|zram\d+|ram\d+|nbd\d+|drbd\d+|rbd\d+"
                           r"|zd\d+|vx/\S+|mapper/\S+)$", re.ASCII)),
    ("physical", re.compile(r"^(?:sd|vd|xvd|hd)[a-z]+$", re.ASCII)),
    ("physical", re.compile(r"^(?:nvme\d+n\d+|nvme\d+c\d+n\d+|mmcblk\d+|sr\d+|fd\d+|emcpower[a-z]+)$", re.ASCII)),
    ("physical", re.compile(r"^(?:cciss|ida|rd)[/!]c\d+d\d+$", re.ASCII)),
    ("virtual", re.compile(r"^[A-Za-z0-9_.+]+-[A-Za-z0-9_.+-]+$", re.ASCII)),  # vg-lv (dm names), not dev8-0
]

# sysstat <= 10 prints devMAJOR-MINOR without -p. Majors of disks whose partitions are minor % N != 0
# (Linux devices.txt); majors of virtual devices; dynamic majors (device-mapper, virtio, nvme) are told
# apart by the file's other devices.
DEVICE_MAJORS_DISK = {8: 16, 65: 16, 66: 16, 67: 16, 68: 16, 69: 16, 70: 16, 71: 16, 128: 16, 129: 16, 130: 16,
                      131: 16, 132: 16, 133: 16, 134: 16, 135: 16, 3: 64, 22: 64, 33: 64, 34: 64, 202: 16,
                      104: 16, 105: 16, 106: 16, 107: 16, 108: 16, 109: 16, 110: 16, 111: 16, 179: 8}
DEVICE_MAJORS_VIRTUAL = {1, 7, 9, 43, 147}  # ram, loop, md, nbd, drbd
_DEV_MM = re.compile(r"^dev(\d+)-(\d+)$", re.ASCII)


def classify_devices(names: set[str], groups: set[str]) -> dict[str, tuple[str, str]]:
    """Class and deciding rule of every device name a file printed."""
    out: dict[str, tuple[str, str]] = {}
    dynamic: list[str] = []
    for name in names:
        if name in groups:
            out[name] = ("group", "iostat -g group row")
            continue
        m = _DEV_MM.match(name)
        if m:
            major, minor = int(m.group(1)), int(m.group(2))
            if major in DEVICE_MAJORS_DISK:
                part = minor % DEVICE_MAJORS_DISK[major] != 0
                out[name] = ("partition" if part else "physical", f"major {major}")
            elif major in DEVICE_MAJORS_VIRTUAL:
                out[name] = ("virtual", f"major {major}")
            else:
                dynamic.append(name)
            continue
        for cls, rx in DEVICE_NAME_RULES:
            if rx.search(name):
                out[name] = (cls, rx.pattern)
                break
        else:
            out[name] = ("physical", "unknown name: counted as a disk")
    # a dynamic major (252-254, 259: device-mapper, virtio, nvme) beside known disks is a volume on them
    has_disk = any(c == "physical" for c, _ in out.values())
    for name in dynamic:
        out[name] = ("virtual", "dynamic major beside known disks") if has_disk else \
            ("physical", "dynamic major, no other disk: counted as a disk")
    return out

# -- numbers -------------------------------------------------------------------

_COMMA_NUM = re.compile(r"^[-+]?\d+,\d+$", re.ASCII)
_HUMAN = re.compile(r"^([-+]?\d+(?:[.,]\d+)?)([BkKMGTP%])$", re.ASCII)
_HUMAN_KB = {"B": 1 / 1024, "k": 1.0, "K": 1.0, "M": 1024.0, "G": 1024.0**2, "T": 1024.0**3, "P": 1024.0**4}


def num(tok: str) -> float | None:
    """A number as sysstat/procps print it: '12.50', '12,50' (de_DE, fr_FR), '222.1k' (--human)."""
    try:
        return to_float(tok)
    except ValueError:
        pass
    if _COMMA_NUM.match(tok):
        return float(tok.replace(",", "."))
    m = _HUMAN.match(tok)
    if m:
        v = float(m.group(1).replace(",", "."))
        return v if m.group(2) == "%" else v * _HUMAN_KB[m.group(2)]
    return None


# -- times of day ------------------------------------------------------------------

_AM = {"AM", "am", "a.m.", "A.M.", "午前", "上午", "오전", "vorm.", "πμ"}
_PM = {"PM", "pm", "p.m.", "P.M.", "午後", "下午", "오후", "nachm.", "μμ"}
# 13:20:19 | 23時43分35秒 (ja_JP) | 23时43分37秒 (zh_CN) | 13.20.19 (some locales)
_TOD = re.compile(r"^(\d{1,2})[:時时.](\d{2})[:分.](\d{2})[秒초]?$", re.ASCII)


def parse_tod(tokens: list[str]) -> tuple[int, int] | None:
    """Time of day at the start of a sar line: (seconds since midnight, tokens used).

    Handles %X in C/ISO (``13:20:19``), 12-hour clocks with the AM/PM marker after
    (``01:20:19 PM``) or before the time (``午後 01:20:19``), and ja/zh ``23時43分35秒``.
    """
    if not tokens:
        return None
    t = tokens[0]
    if len(t) == 8 and t[2] == ":" and t[5] == ":" and (len(tokens) == 1 or (tokens[1] not in _AM
                                                                             and tokens[1] not in _PM)):
        # the C/ISO locale's HH:MM:SS with no AM/PM after it (nearly every line): what _TOD reads, without it
        h, mi, s = t[:2], t[3:5], t[6:]
        if is_digits(h) and is_digits(mi) and is_digits(s):
            h, mi, s = int(h), int(mi), int(s)
            if h > 23 or mi > 59 or s > 60:
                return None
            return h * 3600 + mi * 60 + min(s, 59), 1
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

_D_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$", re.ASCII)
_D_CJK = re.compile(r"^(\d{4})年(\d{1,2})月(\d{1,2})日$", re.ASCII)
_D_DOT = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{2,4})$", re.ASCII)
_D_SLASH = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2,4})$", re.ASCII)
_D_YSLASH = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})$", re.ASCII)


def _year(y: str) -> int:
    v = int(y)
    return v + 2000 if v < 70 else v + 1900 if v < 100 else v


def parse_date(tok: str, hint: date | None = None) -> date | None:
    """A date as sysstat prints it with %x in various locales (docs/formats.md §0, §2.1).

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

# printf("%s %s (%s) \t%s \t_%s_\t(%d CPU)\n", ...) (docs/formats.md §2.1); spaces instead of tabs in pastes.
BANNER = re.compile(
    r"^(?P<sysname>[A-Za-z][\w-]*)\s+(?P<release>\S+)\s+\((?P<host>[^)]*)\)\s+(?P<date>\S+)\s+"
    r"_(?P<machine>\S+)_\s+\((?P<cpus>\d+)\s+CPU\)\s*$", re.ASCII
)


def local_tz(run_start: Any, sink: Any = None) -> tuple[tzinfo, str]:
    """Time zone for wall-clock times printed without one, in order of trust: the run's IANA zone
    (run.toml ``timezone``, written by tools/collect), the offset of run.toml's ``start``, the zone of the
    machine doing the ingest (a guess: the basis says GUESS and ``Collector.flush`` warns when times were read
    with it). An IANA zone keeps summer time right; an offset does not."""
    zone = run_zone(sink)
    if zone is not None:
        return zone, f"local time in run.toml timezone {zone.key}"
    if isinstance(run_start, datetime) and run_start.tzinfo is not None:
        off = run_start.utcoffset()
        return run_start.tzinfo, f"local time taken as run.toml offset {_fmt_off(off)}"
    machine = machine_zone()
    return machine, f"GUESS: local time assumed in the ingesting machine's zone {machine.key}"


def run_zone(sink: Any) -> Any:
    """The run's IANA zone from run.toml ``timezone`` (handed in through the sink), or None."""
    meta = getattr(sink, "run_meta", None) or {}
    name = meta.get("timezone") if isinstance(meta, dict) else None
    if name is None and isinstance(meta.get("machine"), dict):  # tools/collect writes [machine] timezone
        name = meta["machine"].get("timezone")
    if not isinstance(name, str) or not name:
        return None
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise ParseError(getattr(sink, "path", "run.toml"), None,
                         "run.toml `timezone` to be an IANA zone name such as 'Asia/Tokyo'", name) from None


def machine_zone() -> Any:
    """This machine's IANA zone: $TZ, else the /etc/localtime link, else UTC."""
    cands = [os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.readlink("/etc/localtime")
        cands.append(link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "")
    except OSError:
        pass
    try:
        cands.append(Path("/etc/timezone").read_text().strip())
    except OSError:
        pass
    for c in cands:
        if c:
            try:
                return ZoneInfo(c)
            except (ValueError, KeyError, OSError):
                continue
    return ZoneInfo("UTC")


# Zone abbreviations as sysstat prints them (tzname[0]: the STANDARD-time name, also in summer) ->
# the IANA zones that use them. An abbreviation is resolved against the run's IANA zone when that zone
# uses it (so 'EST' in July is New York summer time, UTC-4); else the first zone listed is a guess (warned).
ZONE_ABBREVIATIONS = {
    "EST": ("America/New_York",), "EDT": ("America/New_York",), "CST": ("America/Chicago", "Asia/Shanghai"),
    "CDT": ("America/Chicago",), "MST": ("America/Denver", "America/Phoenix"), "MDT": ("America/Denver",),
    "PST": ("America/Los_Angeles",), "PDT": ("America/Los_Angeles",), "JST": ("Asia/Tokyo",),
    "KST": ("Asia/Seoul",), "IST": ("Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"),
    "CET": ("Europe/Paris", "Europe/Berlin"), "CEST": ("Europe/Paris",), "EET": ("Europe/Helsinki",),
    "EEST": ("Europe/Helsinki",), "WET": ("Europe/Lisbon",), "WEST": ("Europe/Lisbon",),
    "BST": ("Europe/London",), "GMT": ("UTC",), "UTC": ("UTC",), "HKT": ("Asia/Hong_Kong",),
    "SGT": ("Asia/Singapore",), "AEST": ("Australia/Sydney",), "AEDT": ("Australia/Sydney",),
    "NZST": ("Pacific/Auckland",), "NZDT": ("Pacific/Auckland",),
}


def zone_for_abbreviation(abbr: str, sink: Any) -> tuple[Any, bool]:
    """(zone, is_guess) for a printed abbreviation, resolved against the run's IANA zone."""
    run = run_zone(sink)
    if abbr in ("UTC", "GMT", "Z"):
        return timezone.utc, False
    if run is not None:
        probe = [datetime(2001, m, 15, 12, tzinfo=run).tzname() for m in (1, 7)]
        if abbr in probe:
            return run, False
    cands = ZONE_ABBREVIATIONS.get(abbr)
    if cands:
        return ZoneInfo(cands[0]), len(cands) > 1 or run is None
    try:
        return ZoneInfo(abbr), True
    except (ValueError, KeyError, OSError):
        return None, True


def _fmt_off(off: timedelta | None) -> str:
    if off is None:
        return "+00:00"
    mins = int(off.total_seconds() // 60)
    sign = "+" if mins >= 0 else "-"
    return f"{sign}{abs(mins) // 60:02d}:{abs(mins) % 60:02d}"


def combine(d: date, secs: int, tz: tzinfo) -> datetime:
    """Wall-clock date + seconds since midnight in zone ``tz`` (summer time by the zone's rules)."""
    naive = datetime.combine(d, time(0)) + timedelta(seconds=secs)
    return naive.replace(tzinfo=tz)


ZONE_UTC = timezone.utc


class DayClock:
    """Dates for times of day printed without a date (sar, mpstat, pidstat text). Each block (header)
    has its own clock, because ``sar -f`` prints each activity for the whole file in turn. A time earlier
    than the previous one of the same block by more than 12 h is the next day (midnight roll-over); the
    header line's own time counts, so a row at 00:00:00 under a 23:59:59 header is the next day. A time up
    to an hour earlier is the repeated hour when summer time ends: later times of the block are read as the
    second occurrence (``fold=1``) and ``steps_back`` records it for a warning; any other step back is
    recorded too (a clock set back), never silently reordered."""

    def __init__(self, day0: date | None, tz: tzinfo, steps_back: list[tuple[int, int]] | None = None):
        self.day0 = day0
        self.tz = tz
        self.state: dict[Any, list[int]] = {}  # key -> [day offset, last seconds, fold]
        # (from seconds, to seconds); shared by the clocks of one file (a new banner starts a new clock)
        self.steps_back: list[tuple[int, int]] = [] if steps_back is None else steps_back
        self._made: dict[tuple[int, int, int], datetime] = {}

    def tick(self, key: Any, secs: int) -> int:
        st = self.state.get(key)
        if st is None:
            st = self.state[key] = [0, secs, 0]
        elif secs < st[1] - 43200:
            st[0] += 1
            st[2] = 0
        elif secs < st[1]:
            self.steps_back.append((st[1], secs))
            if st[1] - secs <= 3600 + 60:
                st[2] = 1
        st[1] = secs
        return st[0]

    def at(self, key: Any, secs: int) -> datetime:
        days = self.tick(key, secs)
        assert self.day0 is not None
        fold = self.state[key][2]
        t = self._made.get((days, secs, fold))  # every row of a sample has the time of its sample
        if t is None:
            t = self._made[(days, secs, fold)] = \
                combine(self.day0 + timedelta(days=days), secs, self.tz).replace(fold=fold)
        return t

    def warn_steps_back(self, sink: Any) -> None:
        if self.steps_back:
            a, b = self.steps_back[0]
            sink.warn(None, f"times go back ({len(self.steps_back)}x, first {a // 3600:02d}:{a % 3600 // 60:02d}:"
                            f"{a % 60:02d} -> {b // 3600:02d}:{b % 3600 // 60:02d}:{b % 60:02d}): the end of summer "
                            "time (read as the repeated hour) or a clock set back")


# -- reading files -------------------------------------------------------------------

# pgbench-tools prefixes every line with 'YYYY-MM-DD HH:MM:SS.ffffff<TAB>' (docs/formats.md §0.4).
TS_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\t", re.ASCII)


ANSI_SGR = re.compile(r"\x1b\[[0-9;]*m", re.ASCII)


def read_text(path: Path, what: str) -> tuple[list[str], bool]:
    """Lines of a text file (without newlines) and whether the last line was cut off."""
    text = textfile.read_text(path, what)
    if "\x1b[" in text:  # S_COLORS=always: sysstat colours numbers with SGR escape codes
        text = ANSI_SGR.sub("", text)
    return textfile.split_lines(text)


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
    """Buffers one file's values, column by column, and writes them (and the per-activity summary).

    A *record* is one printed row: its time, interval, sample, since-boot flag, activity, instance and line,
    shared by every value of the row; its values are one list, beside the id of its list of metric names
    (``columns``). A file of sar -A holds ~10^4 values: nothing here costs a dict or a call per value, and
    ``flush`` hands the columns to DuckDB in one statement (``unnest`` of list parameters)."""

    def __init__(self, tool: str, fmt: str):
        self.tool = tool
        self.format = fmt
        self.host: str | None = None
        self.tz_basis: str | None = None
        self.groups: set[str] = set()  # iostat -g group names: rows that sum other devices
        # one entry per record
        self.ts: list[datetime | None] = []
        self.interval_s: list[float | None] = []
        self.sample: list[int | None] = []
        self.since_boot: list[bool] = []
        self.activity: list[str] = []
        self.instance: list[str | None] = []
        self.line: list[int | None] = []
        self.names: list[int] = []  # id of the record's metric names (index into ``name_lists``)
        self.values: list[list[float | None]] = []
        self.name_lists: list[list[str]] = []
        self._name_ids: dict[tuple[str, ...], int] = {}
        self.n_values = 0
        self._open: list[str] | None = None  # the metric names of the record ``add`` is filling
        self._open_set: set[str] = set()

    def columns(self, names) -> int:
        """The id of a list of metric names (the same names, the same id): ``add_record``'s ``names``."""
        key = tuple(names)
        i = self._name_ids.get(key)
        if i is None:
            i = self._name_ids[key] = len(self.name_lists)
            self.name_lists.append(list(key))
        return i

    def add(self, ts: datetime | None, activity: str, instance: str | None, metric: str, value: float | None,
            *, interval_s: float | None = None, sample: int | None = None, since_boot: bool = False,
            line: int | None = None) -> None:
        """One value. It joins the record of the value added before it when it belongs to the same row (the
        same time object, activity, instance, interval, sample, flag and line) and names another metric:
        readers that add a value at a time (sadf -d, -j) still make a record per printed row."""
        names = self._open
        if (names is not None and ts is self.ts[-1] and activity == self.activity[-1]
                and instance == self.instance[-1] and interval_s == self.interval_s[-1]
                and sample == self.sample[-1] and since_boot == self.since_boot[-1] and line == self.line[-1]
                and metric not in self._open_set):
            names.append(metric)
            self._open_set.add(metric)
            self.values[-1].append(value)
            self.n_values += 1
            return
        self.add_record(ts, activity, instance, -1, [value], interval_s=interval_s, sample=sample,
                        since_boot=since_boot, line=line)
        self._open = [metric]
        self._open_set = {metric}

    def _close(self) -> None:
        """The record ``add`` was filling gets the id of its metric names."""
        if self._open is not None:
            self.names[-1] = self.columns(self._open)
            self._open = None

    def add_record(self, ts: datetime | None, activity: str, instance: str | None, names: int,
                   values: list[float | None], *, interval_s: float | None = None, sample: int | None = None,
                   since_boot: bool = False, line: int | None = None) -> None:
        """One printed row: ``values[i]`` is the value of metric ``name_lists[names][i]``."""
        if self._open is not None:
            self._close()
        if not values:
            return
        self.ts.append(ts)
        self.interval_s.append(interval_s)
        self.sample.append(sample)
        self.since_boot.append(since_boot)
        self.activity.append(activity)
        self.instance.append(instance)
        self.line.append(line)
        self.names.append(names)
        self.values.append(values)
        self.n_values += len(values)

    def __len__(self) -> int:
        return self.n_values

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every value as a row (tool, format, ts, interval_s, sample, since_boot, activity, instance, metric,
        value, line), in the order added: a copy, for the rare paths that look at values one by one."""
        return self.rows_of(range(len(self.values)))

    def rows_of(self, records) -> list[dict[str, Any]]:
        """The values of these records as rows (see ``rows``), each with its place (``record``, ``position``)."""
        self._close()
        out = []
        for k in records:
            base = {"tool": self.tool, "format": self.format, "ts": self.ts[k], "interval_s": self.interval_s[k],
                    "sample": self.sample[k], "since_boot": self.since_boot[k], "activity": self.activity[k],
                    "instance": self.instance[k]}
            line = self.line[k]
            for i, (m, v) in enumerate(zip(self.name_lists[self.names[k]], self.values[k])):
                out.append({**base, "metric": m, "value": v, "line": line, "record": k, "position": i})
        return out

    def suspects(self) -> list[int] | None:
        """The records holding a value the plausibility rules could act on (``plausible.SafeBoxes``), or whose
        interval or date is out of range; None when two records may hold the same sample (a duplicated sample
        time: then every row must be looked at)."""
        self._close()
        boxes = plausible.SafeBoxes(self.name_lists)
        unique = [len(set(names)) == len(names) for names in self.name_lists]
        out: list[int] = []
        # (ts, activity, instance, since_boot) -> the metrics its records hold (a list's id while there is one)
        keys: dict[tuple, Any] = {}
        for k, vals in enumerate(self.values):
            nid = self.names[k]
            ts = self.ts[k]
            if ts is not None:
                if not unique[nid]:
                    return None
                key = (ts, self.activity[k], self.instance[k], self.since_boot[k])
                held = keys.get(key)
                if held is None:
                    keys[key] = nid
                else:  # several records of one sample (one value each, or parts of a row): distinct metrics?
                    if type(held) is int:
                        held = keys[key] = set(self.name_lists[held])
                    names = self.name_lists[nid]
                    if not held.isdisjoint(names):
                        return None
                    held.update(names)
            iv = self.interval_s[k]
            if (boxes.suspect(nid, vals) or (iv is not None and not (0 <= iv <= plausible.MAX_INTERVAL_S))
                    or (ts is not None and ts.tzinfo is not None
                        and not (plausible.EARLIEST_TS <= ts <= plausible.LATEST_TS))):
                out.append(k)
        return out

    def check_plausible(self, sink) -> None:
        """The plausibility rules (``plausible.check_rows``) over the records that may need them (every record
        when a sample may be duplicated); values they drop are set to None here."""
        records = self.suspects()
        if records == []:
            return
        rows = self.rows if records is None else self.rows_of(records)
        if plausible.check_rows(rows, sink):
            for r in rows:
                if r["value"] is None:
                    self.values[r["record"]][r["position"]] = None

    def fill_intervals(self) -> None:
        """Interval of samples whose file does not state it: the gap to the previous sample of the
        same activity; the first sample gets the most common gap."""
        self._close()
        todo = [k for k, (iv, ts, boot) in enumerate(zip(self.interval_s, self.ts, self.since_boot))
                if iv is None and ts is not None and not boot]
        if not todo:
            return
        by_act: dict[str, set[datetime]] = {}
        for k in todo:
            by_act.setdefault(self.activity[k], set()).add(self.ts[k])
        gaps: dict[tuple[str, datetime], float] = {}
        common: dict[str, float | None] = {}
        for act, tss in by_act.items():
            uniq = sorted(tss)
            diffs = [(b - a).total_seconds() for a, b in zip(uniq, uniq[1:])]
            c = Counter(d for d in diffs if d > 0)
            common[act] = c.most_common(1)[0][0] if c else None
            prev = None
            for t in uniq:
                gaps[(act, t)] = (t - prev).total_seconds() if prev is not None else common[act]
                prev = t
        for k in todo:
            act = self.activity[k]
            g = gaps.get((act, self.ts[k]))
            # a gap far longer than usual is a pause or restart, not one interval
            if g is not None and common.get(act) and g > 3 * common[act]:
                g = common[act]
            self.interval_s[k] = g

    def flush(self, sink) -> None:
        self._close()
        keep = getattr(sink, "keep_collector", None)
        if keep is not None:  # a rendering's sample (ingest/renderings.py): compared in memory, never stored
            keep(self)
            return
        if not self.n_values:
            return
        if self.tz_basis and "GUESS" in self.tz_basis and any(t is not None for t in self.ts):
            sink.warn(None, f"times are a guess ({self.tz_basis}): the file prints local times and the run has "
                            "no run.toml [machine] timezone or start; add timezone = \"Area/City\"")
        self.check_plausible(sink)
        self._bulk_load(sink)
        devices = {inst for act, inst in zip(self.activity, self.instance) if act == "disk" and inst is not None}
        store_devices(sink, devices, self.groups)


def store_devices(sink, devices: set[str], groups: set[str]) -> None:
    """sys_devices rows of the block devices a file printed (and a warning for names not in the table)."""
    if not devices:
        return
    classes = classify_devices(devices, groups)
    names = sorted(classes)
    guessed = [n for n in names if classes[n][1].startswith(("unknown", "dynamic major, no"))]
    if guessed:
        sink.warn(None, f"device(s) {', '.join(guessed[:5])} not in kansoku's device table: counted as "
                        "physical disks in 'all devices' sums (name the devices in the spec's "
                        "[device_groups] to choose otherwise)")
    sink.load_sql("sys_devices",
                  "SELECT $source_id AS source_id, $run_id AS run_id, unnest($names) AS device, "
                  "unnest($classes) AS device_class, unnest($rules) AS class_rule",
                  {"names": names, "classes": [classes[n][0] for n in names],
                   "rules": [classes[n][1] for n in names]})


def sql_str(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def finish_sql(sink, tool: str, fmt: str, host: str | None, tz_basis: str,
               known: tuple[int, set[str], bool, dict] | None = None, no_line: str | None = None) -> None:
    """After a parser loaded its sys_metrics rows with ``load_sql``: the plausibility rules, the
    per-activity summary (sys_series) and the device classes, all set-based over the stored rows.
    ``known``: (rows stored, disk devices, suspect, summary) when the parser knows them: the count and the
    device query are not run, nor the plausibility passes when no row is suspect (``Collector.suspects``
    found none); the summary of the activities it holds (activity -> samples, first and last time, most
    common interval; no since-boot rows) is stored as given, the others' computed from the stored rows.
    ``no_line``: why a refused value names no line (errors.BINARY_FILE: the rows were rendered from a sa file)."""
    n = known[0] if known is not None else sink.own_rows("sys_metrics", "SELECT count(*) FROM {rows}")[0][0]
    if not n:
        sink.warn(None, "no statistics records in the file")
        return
    if known is None or known[2]:
        plausible.check_stored(sink, no_line)
    params = {"tool": tool, "format": fmt, "rank": FORMAT_RANK[fmt], "host": host, "tz_basis": tz_basis}
    summary = known[3] if known is not None else {}
    acts = sorted(summary)
    if acts:
        sink.load_sql("sys_series", _SERIES_GIVEN_SQL, {
            **params, "acts": acts, "samples": [summary[a][0] for a in acts],
            "first": [summary[a][1] for a in acts], "last": [summary[a][2] for a in acts],
            "iv": [summary[a][3] for a in acts], "excluded": [0] * len(acts)})
    sink.load_sql("sys_series", _SERIES_SQL, {**params, "given": acts})
    devices = known[1] if known is not None else {r[0] for r in sink.own_rows(
        "sys_metrics", "SELECT DISTINCT instance FROM {rows} WHERE activity = 'disk' AND instance IS NOT NULL")}
    store_devices(sink, devices, set())


# a file's per-activity summary (sys_series), from its stored rows (but the activities ``$given``)
_SERIES_SQL = """
SELECT $source_id AS source_id, $run_id AS run_id, $tool AS tool, $format AS format,
       $rank::INTEGER AS format_rank, activity, $host::VARCHAR AS host,
       count(DISTINCT coalesce(epoch(ts), sample)) FILTER (WHERE NOT since_boot) AS samples,
       min(ts) FILTER (WHERE NOT since_boot) AS first_ts,
       max(ts) FILTER (WHERE NOT since_boot) AS last_ts,
       mode(interval_s) FILTER (WHERE NOT since_boot) AS interval_s,
       count(DISTINCT coalesce(epoch(ts), sample)) FILTER (WHERE since_boot) AS since_boot_excluded,
       $tz_basis::VARCHAR AS tz_basis
FROM sys_metrics WHERE source_id = $source_id AND NOT list_contains($given::VARCHAR[], activity) GROUP BY activity
"""
# the same summary, given by a parser that knows it (finish_sql's ``known``)
_SERIES_GIVEN_SQL = """
SELECT $source_id AS source_id, $run_id AS run_id, $tool AS tool, $format AS format,
       $rank::INTEGER AS format_rank, unnest($acts::VARCHAR[]) AS activity, $host::VARCHAR AS host,
       unnest($samples::BIGINT[]) AS samples, unnest($first::TIMESTAMPTZ[]) AS first_ts,
       unnest($last::TIMESTAMPTZ[]) AS last_ts, unnest($iv::DOUBLE[]) AS interval_s,
       unnest($excluded::BIGINT[]) AS since_boot_excluded, $tz_basis::VARCHAR AS tz_basis
"""
# The collector's columns as one relation: a record per row of the subquery, a value per row of the result
# (each record's values zipped with its list of metric names), in the order they were added.
_LOAD_SQL = """
    SELECT $source_id AS source_id, $run_id AS run_id, $tool AS tool, $format AS format, ts, interval_s, sample, since_boot, activity, instance,
           unnest(list_extract($name_lists, names + 1)) AS metric, unnest(vals) AS value, line
    FROM (SELECT unnest($ts)::TIMESTAMPTZ AS ts, unnest($interval_s)::DOUBLE AS interval_s,
                 unnest($sample)::INTEGER AS sample, unnest($since_boot)::BOOLEAN AS since_boot,
                 unnest($activity)::VARCHAR AS activity, unnest($instance)::VARCHAR AS instance,
                 unnest($names)::INTEGER AS names, unnest(CAST($vals AS DOUBLE[][])) AS vals,
                 unnest($line)::INTEGER AS line)"""

# The same relation from one text parameter: a record per \x1d-separated part, its fields separated by \x1f
# (a missing time, interval, sample or line is empty, a missing instance \x1e), its values as a DuckDB list
# literal ('[1.5,NULL,2]', Python's repr of each float: read back exactly). Binding a Python list costs DuckDB
# a value object per element and each unnest of a bound list a pass of its own, which one text avoids.
_LOAD_TEXT_SQL = """
    SELECT $source_id AS source_id, $run_id AS run_id, $tool AS tool, $format AS format, ts, interval_s, sample,
           since_boot, activity, instance, unnest(list_extract($name_lists, names + 1)) AS metric,
           unnest(vals) AS value, line
    FROM (SELECT NULLIF(f[1], '')::TIMESTAMPTZ AS ts, NULLIF(f[2], '')::DOUBLE AS interval_s,
                 NULLIF(f[3], '')::INTEGER AS sample, f[4] = '1' AS since_boot, f[5] AS activity,
                 NULLIF(f[6], chr(30)) AS instance, f[7]::INTEGER AS names, f[8]::DOUBLE[] AS vals,
                 NULLIF(f[9], '')::INTEGER AS line
          FROM (SELECT string_split(unnest(string_split($records, chr(29))), chr(31)) AS f))"""
_SEPARATORS = ("\x1d", "\x1e", "\x1f")


def _records_text(self, ts_text: list[str | None]) -> str | None:
    """The collector's records as ``_LOAD_TEXT_SQL``'s parameter; None when a name holds a separator."""
    names = "".join(self.activity) + "".join(i for i in self.instance if i is not None)
    if any(sep in names for sep in _SEPARATORS):
        return None
    vals = ("[" + "]\x1f[".join([",".join(map(repr, v)) for v in self.values]) + "]").replace("None", "NULL")
    return "\x1d".join(map("\x1f".join, zip(
        ["" if t is None else t for t in ts_text],
        ["" if x is None else repr(x) for x in self.interval_s],
        ["" if x is None else str(x) for x in self.sample],
        ["1" if b else "0" for b in self.since_boot],
        self.activity,
        ["\x1e" if x is None else x for x in self.instance],
        map(str, self.names),
        vals.split("\x1f"),
        ["" if x is None else str(x) for x in self.line])))


def _bulk_load_impl(self, sink) -> None:
    """Hand the columns to DuckDB in one INSERT (one text parameter, split in SQL; list parameters when a
    name holds a separator) and summarise them per activity (sys_series) in another."""
    insert_values(self, sink)
    sink.load_sql("sys_series", _SERIES_SQL, {
        "tool": self.tool, "format": self.format, "rank": FORMAT_RANK[self.format], "host": self.host,
        "tz_basis": self.tz_basis, "given": []})


def insert_values(self, sink) -> None:
    """The collector's values into sys_metrics, in the order added: one INSERT, nothing else (no
    plausibility pass, no summary: the caller's)."""
    self._close()
    ts_cache: dict[Any, str] = {}
    ts_text: list[str | None] = []
    for ts in self.ts:
        if ts is None:
            ts_text.append(None)
        else:  # keyed by the datetime's equality, as check_plausible compares them
            t = ts_cache.get(ts)
            if t is None:
                t = ts_cache[ts] = ts.isoformat(sep=" ")
            ts_text.append(t)
    records = _records_text(self, ts_text)
    if records is not None:
        sink.load_sql("sys_metrics", _LOAD_TEXT_SQL, {"tool": self.tool, "format": self.format,
                                                      "name_lists": self.name_lists, "records": records})
    else:
        sink.load_sql("sys_metrics", _LOAD_SQL,
                      {"tool": self.tool, "format": self.format, "name_lists": self.name_lists, "ts": ts_text,
                       "interval_s": self.interval_s, "sample": self.sample, "since_boot": self.since_boot,
                       "activity": self.activity, "instance": self.instance, "names": self.names,
                       "vals": self.values, "line": self.line})


Collector._bulk_load = _bulk_load_impl  # type: ignore[attr-defined]


def sniff_sysstat_text(head, is_header, banner_lines: int = 80, scan_lines: int = 60) -> bool:
    """A sysstat text report (mpstat, pidstat, …): the sysstat banner first, then, within ``scan_lines``, a
    time-of-day header line that ``is_header`` recognises (its columns after the time)."""
    if head.is_binary:
        return False
    lines = [ANSI_SGR.sub("", l) for l in head.lines(banner_lines) if l.strip()]
    if not lines or not BANNER.match(lines[0]):
        return False
    for l in lines[1:scan_lines]:
        toks = l.split()
        t = parse_tod(toks)
        if t is not None and is_header(toks[t[1]:]):
            return True
    return False
