"""Renderings of a run's binary sa file: checked on a sample, not parsed whole (docs/ingest.md,
"Renderings of a sa file").

``tools/collect`` writes ``sar_A.txt`` (sar -A), ``sadf_d.csv`` (sadf -d) and ``sadf.json`` (sadf -j) beside
``sa.bin``: four files, one measurement. The ingest reads the sa file (through sadf) and, for each
rendering, only a few records spread over it (the first two, two in the middle, the last two): those
records are cut out of the file (the lines of their times, or their ``statistics`` objects), read by the
format's own parser into rows under a scratch source id, compared in SQL with the rows stored from the
sa file, and deleted. What a rendering is, is decided by content, never by name:

- **the same measurement**: the same hostname, every sampled record's time among the sa file's record
  times, the same sampling interval, and no activity the sa file lacks. Then every sampled value must
  equal the stored one (to half a unit of the second decimal, what sar prints); a value that differs is
  an error naming the file, the line and both values (exit 2, nothing stored): the two files cannot both
  be what sysstat wrote.
- **another measurement** (another day or window, another interval, another host, an activity the sa
  file does not hold): the file is read whole, as before, and the ingest says why.

This module only cuts samples and compares; the ingest (``pipeline.py``) decides what is stored.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers import guarded
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.sadf_json import parse_sadf_json

# the renderings tools/collect writes beside sa.bin, which have a sampler here
SAMPLED_FORMATS = ("sadf-json", "sadf-csv", "sar-text")


@dataclass
class Sample:
    """A rendering cut down to a few records: a small file (text formats) or a document (JSON)."""

    records: list[str]  # the records' times as the file prints them
    data: bytes | None = None  # the cut-down file (text formats)
    line_of: list[int] = field(default_factory=list)  # line in the cut-down file (1-based) -> line in the file
    doc: dict | None = None  # the cut-down document (sadf -j)
    record_line: dict[int, int] = field(default_factory=dict)  # JSON: record in the cut-down doc -> its line


def _places(n: int) -> list[int]:
    """Indices of the records sampled among n: the first, the middle and the last."""
    return sorted({0, n // 2, n - 1}) if n > 0 else []


def _places_with_gap(n: int) -> list[int]:
    """For sar text, whose interval is the gap between records: the first two (their gap is the interval),
    the middle and the last, the middle chosen so that the two long gaps differ (the parser takes the most
    common gap as the interval)."""
    if n <= 4:
        return list(range(n))
    mid = n // 2
    if mid - 1 == n - 1 - mid:
        mid += 1
    return [0, 1, mid, n - 1]


def sample(path: Path, fmt: str) -> Sample | None:
    """A few records of the rendering, or None when it cannot be cut (then it is read whole)."""
    if fmt == "sadf-csv":
        return _sample_sadf_d(path)
    if fmt == "sar-text":
        return _sample_sar_text(path)
    if fmt == "sadf-json":
        return _sample_sadf_json(path)
    return None


def _cut(lines: list[bytes], keep: list[int], records: list[str]) -> Sample:
    data = b"\n".join(lines[i] for i in keep) + b"\n"
    return Sample(records=records, data=data, line_of=[i + 1 for i in keep])


def _sample_sadf_d(path: Path) -> Sample | None:
    """sadf -d: every section header, and the rows of the sampled timestamps (3rd field) in every section."""
    lines = path.read_bytes().split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    first: list[bytes] = []  # the timestamps of the first section, in order
    seen_header = False
    for line in lines:
        if line.startswith(b"#"):
            if seen_header and first:
                break
            seen_header = seen_header or line.startswith(b"# hostname;interval;timestamp;")
            continue
        f = line.split(b";", 4)
        if len(f) < 4 or f[3].startswith((b"LINUX-RESTART", b"COM ")):
            continue
        if not first or first[-1] != f[2]:
            first.append(f[2])
    if not seen_header or len(first) < 2:
        return None
    chosen = {first[i] for i in _places(len(first))}
    keep = []
    for i, line in enumerate(lines):
        if line.startswith(b"#"):
            keep.append(i)
            continue
        f = line.split(b";", 3)
        if len(f) >= 3 and f[2] in chosen:
            keep.append(i)
    return _cut(lines, keep, sorted(x.decode("utf-8", "replace") for x in chosen))


def _tod_key(line: bytes) -> bytes | None:
    """The time of day a sar line begins with (its bytes, AM/PM marker included), or None."""
    toks = line.decode("utf-8", "replace").split()
    t = sm.parse_tod(toks)
    if t is None:
        return None
    last = toks[t[1] - 1].encode()
    return line[:line.index(last) + len(last)]


def _sample_sar_text(path: Path) -> Sample | None:
    """sar text: the banner, every block's header line, and the lines of the sampled times; the Average
    blocks are left out (the parser does not store them). The record times are those of the first activity
    (its blocks: sar prints a header again every few records); only those lines and the headers are read as
    times, every other line is kept or not by the bytes it starts with."""
    lines = path.read_bytes().split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if not lines or not sm.BANNER.match(lines[0].decode("utf-8", "replace").strip()):
        return None
    starts: list[int] = []  # the header of each block: the first non-blank line after a blank one
    after_blank = True
    for i in range(1, len(lines)):
        if not lines[i].strip():
            after_blank = True
        elif after_blank:
            after_blank = False
            starts.append(i)
    bounds = starts + [len(lines)]
    blocks = []  # (header index, end) of the blocks with a time (not Average / Summary)
    first_cols = None
    times: list[bytes] = []
    for b, start in enumerate(starts):
        key = _tod_key(lines[start])
        if key is None:
            continue
        blocks.append((start, bounds[b + 1]))
        cols = lines[start][len(key):].split()
        if first_cols is None:
            first_cols = cols
        if cols != first_cols:
            continue
        for i in range(start + 1, bounds[b + 1]):
            t = _tod_key(lines[i]) if lines[i].strip() else None
            if t is not None and (not times or times[-1] != t):
                times.append(t)
    if len(times) < 2:
        return None
    chosen = tuple(times[i] for i in _places_with_gap(len(times)))
    width = {len(k) for k in chosen}
    keep = [0]
    for start, end in blocks:
        kept = [i for i in range(start + 1, end) if any(lines[i][:w] in chosen for w in width)]
        if not kept:
            continue
        if len(keep) > 1:
            keep.append(-1)  # a blank line before each header keeps the blocks apart
        keep.append(start)
        keep += kept
    data = b"\n".join(b"" if i < 0 else lines[i] for i in keep) + b"\n"
    return Sample(records=sorted(k.decode("utf-8", "replace") for k in chosen), data=data,
                  line_of=[i + 1 if i >= 0 else 0 for i in keep])


def _sample_sadf_json(path: Path) -> Sample | None:
    """sadf -j: the host header and the sampled ``statistics`` objects (one host per document)."""
    text = path.read_bytes().decode("utf-8", "replace")
    try:
        doc = json.loads(text)
        hosts = doc["sysstat"]["hosts"]
    except (ValueError, KeyError, TypeError):
        return None  # a cut-off or odd document: its own parser reads it whole (and salvages what it can)
    if not isinstance(hosts, list) or len(hosts) != 1 or not isinstance(hosts[0], dict):
        return None
    stats = hosts[0].get("statistics")
    if not isinstance(stats, list) or len(stats) < 2:
        return None
    # the line of each record: the k-th '"timestamp"' key is the k-th record's (one host)
    starts, pos = [], text.find('"statistics"')
    while pos >= 0:
        pos = text.find('"timestamp"', pos + 1)
        if pos >= 0:
            starts.append(pos)
    idx = _places(len(stats))
    record_line = {}
    if len(starts) == len(stats):
        for k, i in enumerate(idx):
            record_line[k] = text.count("\n", 0, starts[i]) + 1
    host = {k: v for k, v in hosts[0].items() if k != "statistics"}
    host["statistics"] = [stats[i] for i in idx]
    records = []
    for i in idx:
        ts = stats[i].get("timestamp") if isinstance(stats[i], dict) else None
        records.append(f"{ts.get('date')} {ts.get('time')}" if isinstance(ts, dict) else "?")
    return Sample(records=records, doc={"sysstat": {"hosts": [host]}}, record_line=record_line)


class SampleSink:
    """What a parser writes a sample into: nothing reaches the store; the parser's collector (its rows, column
    by column) is kept for ``compare``. Warnings of the sample are dropped (the file is not stored from it)."""

    def __init__(self, path: Path, run_start, run_meta: dict):
        self.path = path
        self.run_start = run_start
        self.run_meta = run_meta
        self.collectors: list = []

    def keep_collector(self, col) -> None:
        self.collectors.append(col)

    def warn(self, line, message) -> None:
        pass

    def fact(self, name, value) -> None:
        pass

    def set_tool_version(self, version) -> None:
        pass


def parse_sample(smp: Sample, path: Path, fmt, run_start, run_meta: dict, scratch: Path | None = None) -> SampleSink:
    """The sample read by the format's own parser (nothing stored); a ParseError names the rendering and its
    own line, not the cut-down file's. The cut-down file is written in ``scratch`` (the store's scratch
    directory, which the next writer empties after a kill) and removed."""
    if smp.doc is not None:
        sink = SampleSink(path, run_start, run_meta)
        guarded(fmt.name, lambda p, s: parse_sadf_json(p, s, doc=smp.doc))(path, sink)
        return sink
    if scratch is not None:
        scratch.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="sample-", suffix=path.suffix, dir=scratch)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(smp.data)
        sink = SampleSink(Path(name), run_start, run_meta)
        try:
            fmt.parse(Path(name), sink)
        except ParseError as exc:
            line = smp.line_of[exc.line - 1] if exc.line and 0 < exc.line <= len(smp.line_of) else None
            raise ParseError(path, line or None, exc.expected, exc.found) from None
        return sink
    finally:
        os.unlink(name)


@dataclass
class Verdict:
    same: bool  # a rendering of the reference's measurement
    why: str = ""  # when not: what differs (the file is then read whole)
    records: int = 0  # records compared
    values: int = 0  # values compared
    unmatched: int = 0  # values of the rendering with no counterpart in the reference (another unit)
    unmatched_example: str = ""
    differs: tuple | None = None  # (line, sample, ts, activity, instance, metric, stored, rendered)


def _key(ts) -> float:
    return round(ts.timestamp(), 3)


@dataclass
class Checks:
    """What the checks of renderings share through an ingest: the reference rows of each sa file and, during one
    check of a run's renderings (``begin`` .. ``end``), what that check reads once for all of them."""

    parquet: dict[str, Path] = field(default_factory=dict)  # sa source_id -> its rows as its pooled worker wrote them
    digests: dict[str, str] = field(default_factory=dict)  # sa source_id -> the pooled file's sha256, as stored
    refs: dict = field(default_factory=dict)  # the cache of ``reference_series``
    read_whole: dict[Path, Path] = field(default_factory=dict)  # host directory -> the rendering read instead
    # of a sa file that gave no rows
    old: dict[str, tuple] | None = None  # source_id -> the stored state of a rendering (None: ask the store)
    rows: list[dict] | None = None  # sources rows of the renderings checked, inserted at the end (None: at once)
    ref_sha: dict[str, str] = field(default_factory=dict)  # reference source_id -> its stored sha256
    todo: list[tuple] = field(default_factory=list)  # (run, detection, sa path) of the renderings to check
    sampled: dict[Path, tuple] | None = None  # rendering -> its sample, cut ahead of its turn

    def begin(self, old: dict[str, tuple], todo: list[tuple]) -> None:
        self.old, self.rows, self.ref_sha, self.todo, self.sampled = old, [], {}, todo, {}

    def end(self) -> None:
        self.old = self.rows = self.sampled = None
        self.ref_sha, self.todo = {}, []

    def clear_references(self) -> None:
        """Forget the reference rows (a run's renderings are all checked)."""
        self.parquet.clear()
        self.refs.clear()
        self.digests.clear()


def reference_series(store, ref_sid: str, cache: dict) -> list[tuple]:
    """(activity, host, interval_s) of each activity the reference file stored (empty: it gave no rows)."""
    ref = cache.setdefault(ref_sid, {"rows": {}, "times": set()})
    if "series" not in ref:
        ref["series"] = store.query("SELECT activity, host, interval_s FROM sys_series WHERE source_id = ?", [ref_sid])
    return ref["series"]


def _reference_rows(store, ref_sid: str, times: list[float], cache: dict, part: Path | None,
                    also: set[float] = frozenset()) -> dict:
    """The reference's stored values at these record times (epoch seconds), fetched once per file and time
    (the three renderings of one sa file share most of their sampled records); when some must be fetched,
    those of ``also`` not fetched yet are fetched with them (one statement for a run's renderings)."""
    ref = cache.setdefault(ref_sid, {"rows": {}, "times": set()})
    missing = [t for t in times if t not in ref["times"]]
    if missing:
        missing = sorted(set(missing) | {t for t in also if t not in ref["times"]})
        # the rows as a worker wrote them (a small file) rather than a scan of the ingest's whole sys_metrics
        # (a part holds the rows of every file of its worker's chunk: this file's are chosen by source_id)
        rows = "read_parquet(?)" if part is not None else "sys_metrics"
        for t, act, inst, metric, value in store.query(
                f"SELECT round(epoch(ts), 3), activity, instance, metric, value FROM {rows} "
                f"WHERE source_id = ? AND round(epoch(ts), 3) IN (SELECT unnest(?::DOUBLE[]))",
                ([str(part)] if part is not None else []) + [ref_sid, missing]):
            ref["rows"][(t, act, inst, metric)] = value
        ref["times"].update(missing)
    return ref["rows"]


def sample_times(sink: SampleSink) -> set[float]:
    """The record times (epoch seconds) ``compare`` looks up for this sample."""
    return {_key(ts) for ts in {ts for col in sink.collectors for k, ts in enumerate(col.ts)
                                if ts is not None and not col.since_boot[k] and col.activity[k] != "restart"}}


def compare(store, sink: SampleSink, ref_sid: str, ref_name: str, cache: dict, part: Path | None = None,
            also: set[float] = frozenset()) -> Verdict:
    """The sample's values (kept in ``sink``) against the rows stored from the reference file; ``also``: the
    times other samples will look up (fetched in the same statement when some are fetched)."""
    recs = []  # (ts, interval, sample, activity, instance, line, names, values, epoch key of ts)
    hosts = set()
    keys: dict = {}  # a record time's key, computed once per time (records of one time share its object)
    for col in sink.collectors:
        if col.host:
            hosts.add(col.host)
        for k, ts in enumerate(col.ts):
            if ts is None or col.since_boot[k] or col.activity[k] == "restart":
                continue
            t = keys.get(ts)
            if t is None:
                t = keys[ts] = _key(ts)
            recs.append((ts, col.interval_s[k], col.sample[k], col.activity[k], col.instance[k], col.line[k],
                         col.name_lists[col.names[k]], col.values[k], t))
    if not recs:
        return Verdict(False, "no record could be sampled")
    series = reference_series(store, ref_sid, cache)
    ref_hosts = {h for _, h, _ in series if h}
    if hosts != ref_hosts:
        return Verdict(False, f"it names host {', '.join(sorted(hosts)) or '(none)'}, {ref_name} "
                              f"{', '.join(sorted(ref_hosts)) or '(none)'}")
    ref_iv = {a: iv for a, _, iv in series}
    missing = sorted({r[3] for r in recs} - set(ref_iv))
    if missing:
        return Verdict(False, f"it holds activities {ref_name} does not ({', '.join(missing[:3])})")
    times = sorted({r[8] for r in recs})
    stored = _reference_rows(store, ref_sid, times, cache, part, also)
    wanted = set(times)
    have = {k[0] for k in stored if k[0] in wanted}
    foreign = [r[0] for r in recs if r[8] not in have]
    if foreign:
        return Verdict(False, f"its record of {min(foreign):%Y-%m-%d %H:%M:%S %Z} is not among {ref_name}'s records")
    ivs: dict[str, Counter] = {}
    for r in recs:
        if r[1] is not None:
            ivs.setdefault(r[3], Counter())[r[1]] += 1
    for act, c in sorted(ivs.items()):
        iv = c.most_common(1)[0][0]
        if ref_iv.get(act) is not None and abs(iv - ref_iv[act]) > 1e-6:
            return Verdict(False, f"its {act} interval is {iv:g} s, {ref_name}'s {ref_iv[act]:g} s")
    values = unmatched = 0
    example = ""
    differs = None
    for ts, _iv, smp, act, inst, line, names, vals, t in recs:
        for metric, v in zip(names, vals):
            key = (t, act, inst, metric)
            if key not in stored:
                unmatched += 1
                example = example or f"{act} {metric}"
                continue
            values += 1
            p = stored[key]
            if (p is None) != (v is None) or (p is not None and abs(p - v) > 0.005 + 1e-9 * abs(p)):
                if differs is None:
                    differs = (line, smp, ts, act, inst, metric, p, v)
    return Verdict(True, records=len(times), values=values, unmatched=unmatched, unmatched_example=example,
                   differs=differs)
