"""Binary sa data files, read with the installed ``sadf -d`` (docs/formats.md §2.7), streamed.

A day of one-second records (86,400) renders to about half a gigabyte of text, so nothing here holds the
rendering in memory: ``sadf -d FILE -- -A`` prints one section per activity (its ``# hostname;...`` header,
then every record of that activity); a thread copies sadf's output into one temporary file per section
while DuckDB reads the previous one (``read_csv``), splits its lines and unpivots them into the tall
``sys_metrics`` rows. Python touches only block boundaries, section headers and a few aggregates, so the
time is close to sadf's own and memory does not grow with the file's length.

A long file's batches are read by DuckDB's CSV reader with each section's typed columns when the output is as
sadf prints it (``_Loader._load_batch_fast``), and a file of ``SPLIT_MIN_BYTES`` or more is rendered by two sadf runs that
print the same lines as ``-A`` in fewer passes over the file (``_split_run``; docs/ingest-performance.md, "Long sa
files"; the figures that keep these in docs/performance.md).

The rows are those the ``sadf -d`` reader (``sadf_csv.py``) stores for the same rendering: metric names are
the sar column names. The plausibility rules (``plausible.RULES``) are applied in SQL
(``plausible.check_stored``) to the rows stored.
"""

from __future__ import annotations

import queue
import re
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from kansoku.errors import BINARY_FILE, ParseError
from kansoku.external import kill_group, run_group
from kansoku.parsers.base import FileHead, Sink, is_utf8
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat import plausible
from kansoku.parsers.sysstat.activities import INSTANCE_COLS, TEXT_ACTIVITIES, TEXT_COLUMNS
from kansoku.parsers.sysstat.sadf_csv import csv_segments

# -- sa binary ----------------------------------------------------------------------------

SA_MAGIC = (b"\x96\xd5", b"\xd5\x96")  # SYSSTAT_MAGIC 0xd596, either byte order
SADF_ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}  # '.' decimals, English messages
HEADER = b"# hostname;interval;timestamp;"
BLOCK = 1 << 20
TS_FORMAT = "%Y-%m-%d %H:%M:%S UTC"  # sadf -d without -t prints UTC
# activities whose 'all' row sadf -d prints as CPU -1 (the JSON and text renderings say 'all')
_ALL_CPU_ACTIVITIES = ("cpu", "softnet", "cpu-frequency")


def sniff_sa_binary(head: FileHead) -> bool:
    return head.raw[:2] in SA_MAGIC and head.size_bytes >= 64


def _readable_rendering_beside(path: Path) -> Path | None:
    """A sar text / sadf -d / sadf -j file in the same directory (detected by content), or None."""
    from kansoku import parsers  # the registry (this module is one of its parsers)

    found = []  # the ingest reads the best-ranked one whole (sadf -j, then sadf -d, then sar text)
    for p in sorted(path.parent.iterdir()):
        if p == path or not p.is_file() or p.name == "run.toml":
            continue
        head = parsers.read_head(p)
        fmt = parsers.claim(head) if head.size_bytes else None
        if fmt is not None and fmt.name in ("sadf-json", "sadf-csv", "sar-text"):
            found.append((sm.FORMAT_RANK[fmt.name], p))
    return min(found)[1] if found else None


# a line sadf -d prints before the first section header: a LINUX-RESTART (or COM) record of a file that
# begins with one (sa1 --boot, sysstat-collect after a reboot); anything else there is not sadf -d output
_PREAMBLE_LINE = re.compile(rb"[^;\n\r]*;-?\d+;[^;\n\r]+;(LINUX-RESTART|COM )[^\n\r]*", re.ASCII)
PREAMBLE_MAX = 1 << 20  # a few records at most; more is not a preamble


_MARKS = (b"LINUX-RESTART", b"COM ")  # what begins the 4th field of a restart or comment record


class _Lines:
    """What the splitter saw of one section's lines, for ``_Loader._load_batch_fast``: how many lines,
    how many are restart or comment records (their 4th field begins with LINUX-RESTART or 'COM '),
    whether every line is plain (no empty line, no carriage return, no NUL byte), and whether the section is
    text DuckDB's CSV reader takes (UTF-8 without a carriage return: ``_Loader.load`` refuses any other), and
    the line of sadf's output its header is on. Counted on the blocks as they are copied (a few memchr-speed
    scans), never line by line in Python."""

    __slots__ = ("lines", "marks", "plain", "text", "header_line", "_last")

    def __init__(self, header_line: int = 1) -> None:
        self.lines = 0
        self.marks = 0
        self.plain = True
        self.text = True
        self.header_line = header_line
        self._last = 0x0A  # the byte before the next piece (the header's newline)

    def add(self, data: bytes, pos: int, end: int, ascii_block: bool = False) -> None:
        """Count the whole lines ``data[pos:end]`` (they begin at ``pos`` and end with a newline);
        ``ascii_block``: the whole of ``data`` is ASCII, so the piece needs no UTF-8 check."""
        if end <= pos:
            return
        self.lines += data.count(b"\n", pos, end)
        if self.plain and (data.find(b"\n\n", pos, end) >= 0 or data.find(b"\r", pos, end) >= 0
                           or data.find(b"\x00", pos, end) >= 0 or (data[pos] == 0x0A and self._last == 0x0A)):
            self.plain = False
        if self.text and not self.plain:
            self.text = data.find(b"\r", pos, end) < 0
        if self.text and not ascii_block:
            try:  # a piece is whole lines, so no UTF-8 sequence is cut at its ends
                data[pos:end].decode("utf-8")
            except UnicodeDecodeError:
                self.text = False
        self._last = data[end - 1]
        for mark in _MARKS:
            i = data.find(mark, pos, end)
            while i >= 0:
                start = data.rfind(b"\n", pos, i)
                start = pos if start < 0 else start + 1
                if i > start and data[i - 1] == 0x3B and data.count(b";", start, i) == 3:
                    self.marks += 1
                i = data.find(mark, i + 1, end)


def _first_not_text(section: Path) -> tuple[int, bytes]:
    """The first line of a section file that is not UTF-8 text or holds a carriage return: its number
    in the file (1 is the first line after the header) and its bytes."""
    with open(section, "rb") as fh:
        for k, line in enumerate(fh, 1):
            body = line.rstrip(b"\n")
            if b"\r" in body or not is_utf8(body):
                return k, body
    return 0, b""


def _split_sections(stream, tmp: Path, out: queue.Queue, stop: threading.Event) -> None:
    """Copy sadf -d's output into one file per section (header line, file path, its ``_Lines``), put on
    ``out`` as each is complete; then None. Whole blocks are copied; only header positions are looked for.
    Restart and comment records printed before the first header are put first, as the section
    ``(b"", path, None)``."""
    fh = None
    header: bytes | None = None
    current: Path | None = None
    counts: _Lines | None = None
    preamble = bytearray()
    n = 0
    line_no = 0  # lines of sadf's output before the current piece

    def finish() -> None:
        nonlocal fh
        if fh is not None:
            fh.close()
            fh = None
            out.put((header, current, counts))

    def preamble_done() -> None:
        lines = bytes(preamble).splitlines()
        if all(_PREAMBLE_LINE.fullmatch(l) and is_utf8(l) for l in lines if l.strip()):
            if any(l.strip() for l in lines):
                pre = tmp / "preamble.csv"
                pre.write_bytes(b"\n".join(l for l in lines if l.strip()) + b"\n")
                out.put((b"", pre, None))
        else:
            bad = next(l for l in lines if l.strip() and not (_PREAMBLE_LINE.fullmatch(l) and is_utf8(l)))
            out.put(ValueError(f"output before the first '# hostname;...' header: {bad[:80]!r}"))
        preamble.clear()

    try:
        carry = b""
        while not stop.is_set():
            chunk = stream.read(BLOCK)
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            end = data.rfind(b"\n") + 1
            carry, data = data[end:], data[:end]
            view = memoryview(data)
            ascii_block = data.isascii()
            pos = 0
            while pos < len(data):
                i = data.find(HEADER, pos)
                while i > 0 and data[i - 1] != 0x0A:  # a header starts a line
                    i = data.find(HEADER, i + 1)
                stop_at = len(data) if i < 0 else i
                if stop_at > pos:
                    if fh is None:
                        if n == 0 and len(preamble) < PREAMBLE_MAX:
                            preamble += view[pos:min(stop_at, pos + PREAMBLE_MAX)]
                        line_no += data.count(b"\n", pos, stop_at)
                    else:
                        fh.write(view[pos:stop_at])
                        before = counts.lines
                        counts.add(data, pos, stop_at, ascii_block)
                        line_no += counts.lines - before
                if i < 0:
                    break
                j = data.index(b"\n", i) + 1
                finish()
                if n == 0:
                    preamble_done()
                header = bytes(view[i:j])
                n += 1
                current = tmp / f"section-{n}.csv"
                line_no += 1
                counts = _Lines(line_no)
                fh = open(current, "wb")
                pos = j
        if carry and fh is not None:  # a last line without its newline
            fh.write(carry + b"\n")
            counts.add(carry + b"\n", 0, len(carry) + 1, carry.isascii())
        elif carry and n == 0:
            preamble += carry[:PREAMBLE_MAX]
        finish()
        if n == 0 and preamble.strip():
            preamble_done()
    except BaseException as exc:  # noqa: BLE001 -- handed to the reading thread, which raises it
        out.put(exc)
    finally:
        if fh is not None:
            fh.close()
        out.put(None)


def _sql_list(items: list[str]) -> str:
    return "[" + ", ".join(sm.sql_str(x) for x in items) + "]"


def _int_list(items: list[int]) -> str:
    return "[" + ", ".join(str(int(x)) for x in items) + "]::INTEGER[]"


# Two readers of a batch of sadf -d sections, the same rows (tests/test_sa_stream.py holds them equal): the
# line split (_load_batch_sql) reads anything and words every error; _load_small exists only for a run's
# small file (the per-run ingest figure of docs/performance.md) and hands anything not as sadf prints it to
# the line split. The typed reads (_load_batch_fast) take the one sadf -dh section of a long file (_split_run).
SMALL_BATCH_BYTES = 1 << 20  # at most this much is read in Python (_load_small)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?\Z", re.ASCII)
_PLAIN_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?(?:;-?\d+(?:\.\d+)?)*\Z", re.ASCII)
_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) UTC\Z", re.ASCII)


def _utc(tok: str) -> datetime | None:
    """A sadf -d timestamp ('2026-11-26 12:00:00 UTC'), or None when it is not one as sadf prints it."""
    m = _TS.match(tok)
    if m is None:
        return None
    try:
        return datetime(*map(int, m.groups()), tzinfo=timezone.utc)
    except ValueError:
        return None


BATCH_BYTES = 8 << 20  # sections read by one pair of statements: few statements for a small file, and
# DuckDB still reads a long file while sadf prints its next sections


class _Loader:
    """Loads the sections of one sa file into sys_metrics, set-based, a batch of sections at a time."""

    def __init__(self, path: Path, sink: Sink):
        self.path = path
        self.sink = sink
        self.host: str | None = None
        self.sections = 0
        self.restarts_done = False
        self.restarts_seen: set[str] = set()  # restart times loaded (the preamble's and the first section's)
        self.pending: list[dict] = []
        self.pending_bytes = 0
        # what finish_sql need not ask the store when no batch was read by the line split
        self.sql_batches = 0
        self.rows = 0  # rows stored (values and restart rows)
        self.suspect = False  # a record the plausibility rules could refuse, warn about or drop
        self.devices: set[str] = set()
        self.stored_acts: set[str] = set()  # activities whose rows are stored
        # activity -> (record times, first, last, Counter of its rows' intervals): the summary (sys_series) of
        # what _load_batch_fast stored, counted by its check statement
        self.fast_series: dict[str, tuple] = {}
        self.split = False  # the activities without items read by a sadf -dh run of their own (_split_run)
        self.duplicated: list[str] = []  # activities with a sample time twice, when split: warned at the end

    @staticmethod
    def _reader(param: str) -> str:
        # one VARCHAR per line (a delimiter sadf never prints, no quoting): restart and comment lines,
        # and the variable width of the interrupt rows, are then handled in SQL
        return (f"(SELECT string_split(l, ';') AS f FROM read_csv(${param}, columns = {{'l': 'VARCHAR'}}, "
                "header = false, auto_detect = false, delim = '\x01', quote = '', escape = '', "
                "new_line = '\\n'))")

    _DATA = "len(f) >= 4 AND NOT starts_with(f[4], 'LINUX-RESTART') AND NOT starts_with(f[4], 'COM ')"

    def load(self, header: bytes, section: Path, counts: _Lines | None = None) -> None:
        """Take one section; its rows are stored when the batch is full (or at ``flush``)."""
        path = self.path
        if not header:  # restart records printed before the first header (a file that begins with one)
            self._restarts(section, first_section=False)
            section.unlink(missing_ok=True)
            return
        self.sections += 1
        text = header.decode("utf-8", errors="replace").rstrip("\r\n")
        cols = text[2:].split(";")[3:]
        if counts is not None and not counts.text:
            # sadf prints a name from the file as it finds it: a damaged one can hold any byte, a line break
            # too; DuckDB's CSV reader cannot take such a line, and no reader here would read it right
            k, line = _first_not_text(section)
            raise ParseError(path, None, "UTF-8 text without a carriage return in 'sadf -d' output (line "
                             f"{counts.header_line + k} of it, in the section '{text[:60]}...'): a damaged "
                             "sa file?", line.decode("utf-8", errors="backslashreplace"), no_line=BINARY_FILE)
        if not self.restarts_done:
            self._restarts(section, counts=counts)
        segs = csv_segments(cols)
        if len(segs) != 1 or segs[0]["repeated"]:
            raise ParseError(path, None, "one activity per 'sadf -d' section header", text[:120],
                             no_line=BINARY_FILE)
        seg = segs[0]
        act = seg["activity"]
        if self.split and act in self.fast_series:  # read by the sadf -dh run already
            raise ParseError(path, None, "each activity once in 'sadf -d' output", text[:120],
                             no_line=BINARY_FILE)
        if act in TEXT_ACTIVITIES:
            section.unlink(missing_ok=True)
            return
        self.pending.append({"text": text, "cols": cols, "act": act, "star": seg["star"], "file": section,
                             "param": f"csv{len(self.pending)}_", "counts": counts})
        self.pending_bytes += section.stat().st_size
        if self.pending_bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        batch, self.pending, self.pending_bytes = self.pending, [], 0
        if not batch:
            return
        try:
            self._load_batch(batch)
        finally:
            for sec in batch:
                sec["file"].unlink(missing_ok=True)

    def _load_batch(self, batch: list[dict]) -> None:
        if sum(sec["file"].stat().st_size for sec in batch) <= SMALL_BATCH_BYTES and self._load_small(batch):
            return
        self._load_batch_sql(batch)

    def _load_small(self, batch: list[dict]) -> bool:
        """A small batch (a run's sa file) read in Python and stored with
        one INSERT (``common.insert_values``): the same rows, in the same order, as ``_load_batch_sql``,
        whose two statements' planning costs more than reading a few dozen short sections. Only output as
        sadf prints it is taken here (every row as wide as its header, a UTC timestamp, an interval in
        range, finite numbers): anything else returns False before anything is stored, and the SQL path
        then reports it with its own words."""
        col = sm.Collector("sar", "sa-binary")
        cache: dict[str, datetime | None] = {}
        tstoks: set[str] = set()
        recs = []  # (tstok, interval, activity, instance, names id, values), in the order of the lines
        dup_acts = []
        host = None
        for sec in batch:
            try:
                text = sec["file"].read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                return False
            cols, star, act = sec["cols"], sec["star"], sec["act"]
            inst_pos = [i + 3 for i, c in enumerate(cols) if c in INSTANCE_COLS]
            pos = [i + 3 for i, c in enumerate(cols)
                   if c not in INSTANCE_COLS and c != "CPU*" and c not in TEXT_COLUMNS]
            width = 3 + len(cols)
            all_cpu = act in _ALL_CPU_ACTIVITIES
            names = -1 if star else col.columns([cols[i - 3] for i in pos])
            star_names: dict[int, int] = {}
            n = 0
            seen_ts: set[str] = set()
            seen_inst: set[str] = set()
            for line in text.split("\n"):
                if not line:
                    continue
                f = line.split(";")
                if len(f) >= 4 and f[3].startswith(("LINUX-RESTART", "COM ")):
                    continue  # restart and comment records: not data (the restarts are read by _restarts)
                if len(f) < 4 or (len(f) < width if star else len(f) != width):
                    return False
                tstok = f[2]
                if tstok not in cache:
                    cache[tstok] = _utc(tstok)
                if cache[tstok] is None:
                    return False
                ivtok = f[1]
                if not _PLAIN_NUMBER.match(ivtok):
                    return False
                iv = float(ivtok)
                if not 0 <= iv <= plausible.MAX_INTERVAL_S:
                    return False
                if star:
                    toks = f[4:]
                    names = star_names.get(len(toks))
                    if names is None:
                        names = star_names[len(toks)] = col.columns(
                            ["all" if i == 0 else f"CPU{i - 1}" for i in range(len(toks))])
                else:
                    toks = [f[i] for i in pos]
                if not inst_pos:
                    inst = None
                elif all_cpu and f[inst_pos[0]] in ("-1", "all"):
                    inst = "all"
                else:
                    inst = "/".join([f[i] for i in inst_pos])
                try:
                    values = list(map(float, toks))
                except ValueError:
                    return False
                total = sum(values)
                if total - total != 0 or not _PLAIN_NUMBERS.match(";".join(toks)):
                    return False  # NaN, an infinity, or a form DuckDB may read otherwise: the SQL path's
                if host is None:
                    host = f[0]
                n += 1
                seen_ts.add(tstok)
                if inst is not None:
                    seen_inst.add(inst)
                tstoks.add(tstok)
                recs.append((tstok, iv, act, inst, names, values))
            if n > len(seen_ts) * max(len(seen_inst), 1):
                dup_acts.append(act)
        sample = {t: i for i, t in enumerate(sorted(tstoks))}
        for tstok, iv, act, inst, names, values in recs:
            col.add_record(cache[tstok], act, inst, names, values, interval_s=iv, sample=sample[tstok])
            if values:
                self.stored_acts.add(act)
                self.fast_series.pop(act, None)  # its summary is then the stored rows'
        self.host = self.host or host
        for act in dup_acts:
            self._duplicated(act)
        if col.n_values:
            sm.insert_values(col, self.sink)
        self.rows += col.n_values
        self.suspect = self.suspect or col.suspects() != []
        self.devices.update(inst for act, inst in zip(col.activity, col.instance) if act == "disk" and inst is not None)
        return True

    def _duplicated(self, act: str) -> None:
        """Warn that a sample time appears twice in ``act``'s section; when the activities are read by two
        sadf runs (``split``), at ``warn_duplicated``, in the order ``sadf -d -- -A`` prints them."""
        if self.split:
            self.duplicated.append(act)
        else:
            self.sink.warn(None, f"a sample time appears twice in the {act} section: duplicated samples "
                                 "(clock set back, or files concatenated?)")

    def warn_duplicated(self) -> None:
        order = {a: i for i, a in enumerate(_A_ORDER)}
        self.split, dups = False, sorted(self.duplicated, key=lambda a: order.get(a, len(order)))
        for act in dups:
            self._duplicated(act)

    def known(self) -> tuple[int, set[str], bool, dict] | None:
        """(rows stored, disk devices, whether a record is suspect, the summary of the activities the typed reads
        stored) when no batch was read by the line split: ``finish_sql`` then skips the count and the device
        query, the plausibility passes when no record is suspect, and the summary of those activities."""
        if self.sql_batches:
            return None
        summary = {}
        for act, (n_times, first, last, intervals) in sorted(self.fast_series.items()):
            top = [(iv, n) for iv, n in intervals.items() if iv is not None]
            top.sort(key=lambda x: -x[1])
            if len(top) > 1 and top[0][1] == top[1][1]:
                continue  # two most common intervals: left to mode() in the summary of the stored rows
            summary[act] = (n_times, first, last, top[0][0] if top else None)
        return self.rows, self.devices, self.suspect, summary

    def _first_fields(self, path: Path) -> int | None:
        """The number of fields of the first data line (not a restart or comment record) of a section file."""
        with open(path, "rb") as fh:
            for line in fh:
                f = line.rstrip(b"\n").split(b";", 4)
                if len(f) >= 4 and f[3].startswith(_MARKS):
                    continue
                return line.count(b";") + 1
        return None

    def _fast_reader(self, k: int, sec: dict) -> str | None:
        """One section's lines as a typed relation (k, h, iv, t, inst, vals, touch) read by DuckDB's CSV
        reader with the section's own columns: host, interval (DOUBLE), timestamp text, the instance, the
        values as a list of DOUBLE lists (one per activity of the line: a ``sadf -dh`` section holds several,
        ``sec["segs"]``). Restart and comment records are left out; a line that does not fit the columns is
        skipped by the reader (``ignore_errors``), which ``_load_batch_fast`` sees in its counts. Sets
        ``sec["groups"]`` (activity, metric names) in the order of the lists. None when the layout is not one
        this reader takes."""
        fields = {"h": "VARCHAR", "iv": "DOUBLE", "t": "VARCHAR"}
        inst: list[str] = []
        groups, group_vals = [], []
        segs = sec.get("segs") or [(sec["act"], sec["cols"], sec["star"])]
        act = segs[0][0]
        for seg_act, cols, star in segs:
            vals, names = [], []
            if star:
                if len(segs) != 1 or len(cols) != 2 or cols[1] != "CPU*" or cols[0] not in INSTANCE_COLS:
                    return None
                n = self._first_fields(sec["file"])
                if n is None or n < 3 + len(cols) + 1:
                    return None
                fields["c0"] = "VARCHAR"
                inst = ["c0"]
                for i in range(n - 4):
                    fields[f"v{i}"] = "DOUBLE"
                    vals.append(f"v{i}")
                    names.append("all" if i == 0 else f"CPU{i - 1}")
            else:
                for c in cols:
                    j = len(fields) - 3
                    if c in INSTANCE_COLS or c in TEXT_COLUMNS or c == "CPU*":
                        fields[f"c{j}"] = "VARCHAR"
                        if c in INSTANCE_COLS:
                            if len(segs) != 1:
                                return None
                            inst.append(f"c{j}")
                    else:
                        fields[f"c{j}"] = "DOUBLE"
                        vals.append(f"c{j}")
                        names.append(c)
            groups.append((seg_act, names))
            group_vals.append(f"[{', '.join(vals)}]::DOUBLE[]")
        sec["groups"] = groups
        text_cols = [c for c, t in fields.items() if t == "VARCHAR"]
        if not inst:
            inst_sql = "NULL::VARCHAR"
        else:
            inst_sql = " || '/' || ".join(inst)
            if act in _ALL_CPU_ACTIVITIES:
                inst_sql = f"CASE WHEN {inst[0]} IN ('-1', 'all') THEN 'all' ELSE {inst_sql} END"
        # a restart or comment record fits the columns only where the 4th field is text
        fourth = list(fields)[3]
        data = (f"NOT (starts_with({fourth}, 'LINUX-RESTART') OR starts_with({fourth}, 'COM '))"
                if fields[fourth] == "VARCHAR" else "true")
        spec = "{" + ", ".join(f"'{c}': '{t}'" for c, t in fields.items()) + "}"
        # every column, read: the check's reader must refuse every line the load's reader refuses (a column
        # no expression uses is not parsed at all: DuckDB pushes the projection into the reader)
        touch = " + ".join([f"list_aggregate({v}, 'count')" for v in group_vals] + [f"strlen({c})" for c in text_cols])
        return (f"SELECT {k} AS k, h, iv, t, {inst_sql} AS inst, [{', '.join(group_vals)}] AS vals, "
                f"{touch} AS touch "
                f"FROM read_csv(${sec['param']}, columns = {spec}, header = false, auto_detect = false, "
                "delim = ';', quote = '', escape = '', new_line = '\\n', ignore_errors = true, "
                f"force_not_null = {_sql_list(text_cols)}) WHERE {data}")

    def _load_batch_fast(self, batch: list[dict]) -> bool:
        """The batch's sections read by DuckDB's CSV reader with each section's own typed columns (no line
        split into strings, no cast per value): one statement checks them, one stores them, with the same
        rows as ``_load_batch_sql``. Taken only when every line of every section is as sadf prints it: each
        data line read whole (the reader's count equals the splitter's count of lines less the restart and
        comment records), every timestamp in the sadf -d form, every interval in range. Anything else
        returns False before anything is stored, and ``_load_batch_sql`` then reports it with its own words."""
        sink = self.sink
        parts, params = [], {}
        for k, sec in enumerate(batch):
            counts = sec.get("counts")
            if counts is None or not counts.plain:
                return False
            sec["groups"] = []
            if counts.lines == 0:
                continue
            reader = self._fast_reader(k, sec)
            if reader is None:
                return False
            parts.append(reader)
            params[sec["param"]] = str(sec["file"])
        if not parts:
            return True
        acts = [a for sec in batch for a, names in sec["groups"] if names]
        if len(set(acts)) != len(acts) or set(acts) & self.stored_acts:
            return False  # an activity in two sections: left to the general path (its summary)
        lines = " UNION ALL ".join(f"({p})" for p in parts)
        bad_iv = f"iv IS NULL OR NOT iv BETWEEN 0 AND {plausible.MAX_INTERVAL_S}"
        stats = sink.own_rows("sys_metrics", f"""
            SELECT k, count(*) AS n, count(*) FILTER (WHERE tt IS NULL) AS bad_ts,
                   count(*) FILTER (WHERE {bad_iv}) AS bad_iv, any_value(h) AS host, count(DISTINCT t) AS n_ts,
                   count(DISTINCT inst) AS n_inst, count(DISTINCT tt) AS n_tt,
                   timezone('UTC', min(tt)) AS first, timezone('UTC', max(tt)) AS last, histogram(iv) AS ivs,
                   list(DISTINCT inst) FILTER (WHERE inst IS NOT NULL) AS insts, sum(touch) AS touched
            FROM (SELECT *, try_strptime(t, '{TS_FORMAT}') AS tt FROM ({lines})) GROUP BY k ORDER BY k""", params)
        got = {row[0]: row for row in stats}
        for k, sec in enumerate(batch):
            counts = sec["counts"]
            row = got.get(k)
            n = row[1] if row else 0
            if n != counts.lines - counts.marks or (row and (row[2] or row[3])):
                return False  # a line the typed reader did not take whole, or a time or interval out of form
        for (k, n, _, _, host, n_ts, n_inst, n_tt, first, last, ivs, insts, _) in stats:
            self.host = self.host or host
            for act, names in batch[k]["groups"]:
                if n > n_ts * max(n_inst, 1):
                    self._duplicated(act)
                width = len(names)
                self.rows += n * width  # each data line, one row per value
                if width:
                    self.stored_acts.add(act)
                    self.fast_series[act] = (n_tt, first, last, Counter({iv: c * width for iv, c in ivs.items()}))
                    if act == "disk":
                        self.devices.update(insts)
        self.suspect = True  # the plausibility passes run over the stored rows, as after _load_batch_sql
        names = " UNION ALL ".join(f"SELECT {k} AS k, {g} AS g, {sm.sql_str(act)} AS activity, "
                                   f"{_sql_list(names)}::VARCHAR[] AS names"
                                   for k, sec in enumerate(batch) for g, (act, names) in enumerate(sec["groups"]))
        sink.load_sql("sys_metrics", f"""
            WITH l AS (SELECT k, iv, t, inst, unnest(range(len(vals))) AS g, unnest(vals) AS vals FROM ({lines})),
                 s AS (SELECT t, (row_number() OVER (ORDER BY t) - 1)::INTEGER AS sample,
                              timezone('UTC', strptime(t, '{TS_FORMAT}')) AS ts
                       FROM (SELECT DISTINCT t FROM l))
            SELECT $source_id AS source_id, $run_id AS run_id, 'sar' AS tool, 'sa-binary' AS format,
                   s.ts, l.iv AS interval_s, s.sample, false AS since_boot, m.activity, l.inst AS instance,
                   unnest(m.names) AS metric, unnest(l.vals) AS value, NULL::INTEGER AS line
            FROM l JOIN s USING (t) JOIN ({names}) m USING (k, g)""", params)
        return True

    def _load_batch_sql(self, batch: list[dict]) -> None:
        """The batch's sections in two statements whatever their number: one read of every section file
        (``read_csv`` over the list), each line joined to its section's layout (activity, instance and
        metric positions, given as a VALUES table), checked in one GROUP BY and unpivoted in one INSERT.
        The plan's size does not grow with the sections (one UNION branch per section cost most of a
        small file's time)."""
        path, sink = self.path, self.sink
        self.sql_batches += 1
        layouts = []
        for k, sec in enumerate(batch):
            cols, star = sec["cols"], sec["star"]
            inst_pos = [i + 4 for i, c in enumerate(cols) if c in INSTANCE_COLS]
            metric_pos = [(i + 4, c) for i, c in enumerate(cols)
                          if c not in INSTANCE_COLS and c != "CPU*" and c not in TEXT_COLUMNS]
            sec["width"] = width = 3 + len(cols)
            layouts.append(f"({k}, {sm.sql_str(sec['file'].name)}, {sm.sql_str(sec['act'])}, {str(star).lower()}, "
                           f"{width}, {_sql_list([c for _, c in metric_pos])}::VARCHAR[], "
                           f"{_int_list([i for i, _ in metric_pos])}, {_int_list(inst_pos)}, "
                           f"{str(sec['act'] in _ALL_CPU_ACTIVITIES).lower()})")
        params = {"files_": [str(sec["file"]) for sec in batch]}
        lines = f"""(SELECT m.*, string_split(r.l, ';') AS f
                    FROM read_csv($files_, columns = {{'l': 'VARCHAR'}}, header = false, auto_detect = false,
                                  delim = '\x01', quote = '', escape = '', new_line = '\\n', filename = true) r
                    JOIN (VALUES {", ".join(layouts)}) m(k, fname, act, star, width, names, pos, inst_pos, all_cpu)
                      ON parse_filename(r.filename) = m.fname)"""
        # INTR;CPU*: the total, then one count per CPU; a file converted by sadf -c from sysstat 11 or older has
        # the total alone
        width_ok = "CASE WHEN star THEN len(f) >= width ELSE len(f) = width END"
        inst = ("CASE WHEN len(inst_pos) = 0 THEN NULL::VARCHAR "
                "WHEN all_cpu AND f[inst_pos[1]] IN ('-1', 'all') THEN 'all' "
                "ELSE array_to_string(list_transform(inst_pos, lambda i: f[i]), '/') END")
        bad_iv = f"try_cast(f[2] AS DOUBLE) IS NULL OR NOT try_cast(f[2] AS DOUBLE) BETWEEN 0 AND {plausible.MAX_INTERVAL_S}"
        stats = sink.own_rows("sys_metrics", f"""
            SELECT k, count(*) AS n, count(*) FILTER (WHERE NOT ({width_ok})) AS bad_w,
                   any_value(array_to_string(f, ';')) FILTER (WHERE NOT ({width_ok})) AS bad_w_line,
                   count(*) FILTER (WHERE try_strptime(f[3], '{TS_FORMAT}') IS NULL) AS bad_ts,
                   any_value(f[3]) FILTER (WHERE try_strptime(f[3], '{TS_FORMAT}') IS NULL) AS bad_ts_tok,
                   count(*) FILTER (WHERE {bad_iv}) AS bad_iv, any_value(f[2]) FILTER (WHERE {bad_iv}) AS bad_iv_tok,
                   any_value(f[1]) AS host, count(DISTINCT f[3]) AS n_ts, count(DISTINCT {inst}) AS n_inst
            FROM {lines} WHERE len(f) < 4 OR ({self._DATA}) GROUP BY k ORDER BY k""", params)
        for (k, n, bad_w, bad_w_line, bad_ts, bad_ts_tok, bad_iv, bad_iv_tok, host, n_ts, n_inst) in stats:
            sec = batch[k]
            act, star, width, text = sec["act"], sec["star"], sec["width"], sec["text"]
            what = f"in the {act} section of 'sadf -d' output"
            if bad_w:
                raise ParseError(path, None, f"{'at least ' if star else ''}{width} "
                                 f"';'-separated fields per row {what} (header {text[:60]}...)",
                                 (bad_w_line or "")[:80], no_line=BINARY_FILE)
            if bad_ts:
                raise ParseError(path, None, f"a timestamp 'YYYY-MM-DD HH:MM:SS UTC' {what}", str(bad_ts_tok)[:40],
                                 no_line=BINARY_FILE)
            if bad_iv:
                raise ParseError(path, None, f"a sampling interval between 0 s and 31 days {what} (sadf read "
                                 "beyond the records: a damaged sa file, or sa files concatenated with cat?)",
                                 str(bad_iv_tok)[:40], no_line=BINARY_FILE)
            self.host = self.host or host
            if n > n_ts * max(n_inst, 1):
                self._duplicated(act)
        # the sample number: the rank of the record's time (every section covers the same records)
        metrics = ("CASE WHEN star THEN list_transform(range(len(f) - 4), lambda i: CASE WHEN i = 0 THEN 'all' "
                   "ELSE 'CPU' || CAST(i - 1 AS VARCHAR) END) ELSE names END")
        values = ("CASE WHEN star THEN list_transform(f[5:], lambda x: try_cast(x AS DOUBLE)) "
                  "ELSE list_transform(pos, lambda i: try_cast(f[i] AS DOUBLE)) END")
        sink.load_sql("sys_metrics", f"""
            WITH l AS (SELECT * FROM {lines} WHERE {self._DATA}),
                 r AS (SELECT f[3] AS tstok, try_cast(f[2] AS DOUBLE) AS interval_s, act AS activity,
                              {inst} AS instance, unnest({metrics}) AS metric, unnest({values}) AS value FROM l),
                 k AS (SELECT tstok, (row_number() OVER (ORDER BY tstok) - 1)::INTEGER AS sample,
                              timezone('UTC', strptime(tstok, '{TS_FORMAT}')) AS ts
                       FROM (SELECT DISTINCT f[3] AS tstok FROM l))
            SELECT $source_id AS source_id, $run_id AS run_id, 'sar' AS tool, 'sa-binary' AS format,
                   k.ts, r.interval_s, k.sample, false AS since_boot, r.activity, r.instance, r.metric, r.value,
                   NULL::INTEGER AS line
            FROM r JOIN k USING (tstok)""", params)

    def _restarts(self, section: Path, first_section: bool = True, counts: _Lines | None = None) -> None:
        """LINUX-RESTART lines (each section repeats them: read from the first; a restart that begins the
        file is printed once, before the first header). Not read when the splitter saw no restart or
        comment record in the section (``counts``)."""
        if first_section:
            self.restarts_done = True
        if counts is not None and counts.marks == 0:
            return
        rows = self.sink.own_rows("sys_metrics", f"SELECT f[3], f[4] FROM {self._reader('restarts_')} "
                                                 "WHERE len(f) >= 4 AND starts_with(f[4], 'LINUX-RESTART')",
                                  {"restarts_": str(section)})
        ts, cpus = [], []
        for tok, what in rows:
            try:
                t = datetime.strptime(tok, TS_FORMAT).replace(tzinfo=timezone.utc)
            except ValueError:
                raise ParseError(self.path, None, "a timestamp 'YYYY-MM-DD HH:MM:SS UTC' on a LINUX-RESTART row",
                                 tok[:40], no_line=BINARY_FILE) from None
            m = re.search(r"\((\d+) CPU\)", what, flags=re.ASCII)
            if tok in self.restarts_seen:
                continue
            self.restarts_seen.add(tok)
            ts.append(t)
            cpus.append(float(m.group(1)) if m else None)
            if cpus[-1] is not None and plausible.broken("cpu_count", cpus[-1]) is not None:
                self.suspect = True  # the rules read restart rows too
        self.rows += len(ts)
        if ts:
            self.sink.load_sql("sys_metrics", """
                SELECT $source_id AS source_id, $run_id AS run_id, 'sar' AS tool, 'sa-binary' AS format,
                       unnest($ts::TIMESTAMPTZ[]) AS ts, NULL::DOUBLE AS interval_s, NULL::INTEGER AS sample,
                       false AS since_boot, 'restart' AS activity, NULL::VARCHAR AS instance,
                       'cpu_count' AS metric, unnest($cpus::DOUBLE[]) AS value, NULL::INTEGER AS line""",
                               {"ts": ts, "cpus": cpus})


# sadf -d -- -A reads the whole file once per activity it prints (dozens of passes); sadf -dh prints every
# activity of a record on one line, in one pass.
# The activities without items (one row per record, fixed columns) are read from one sadf -dh run of their
# own, the others (CPUs, interrupts, devices, interfaces, ...) from sadf -d: the same lines as -A prints
# (checked byte for byte with sysstat 12.6), for a fraction of its CPU (docs/ingest-performance.md). Only with the sadf version checked,
# and a file whose activities are all in one list or the other; anything else is read with -A alone.
SPLIT = True
SPLIT_MIN_BYTES = 2 << 20  # a smaller file (a run's) costs less in one sadf -d run read in Python
_DH_FLAGS = ["-w", "-W", "-B", "-b", "-r", "ALL", "-S", "-H", "-v", "-q", "ALL", "-n",
             "NFS,NFSD,SOCK,IP,EIP,ICMP,EICMP,TCP,ETCP,UDP,SOCK6,IP6,EIP6,ICMP6,EICMP6,UDP6"]
_D_FLAGS = ["-u", "ALL", "-P", "ALL", "-I", "ALL", "-y", "-d", "-n", "DEV,EDEV,SOFT,FC", "-m", "ALL", "-F"]
_DH_ACTS = {"A_PCSW", "A_SWAP", "A_PAGE", "A_IO", "A_MEMORY", "A_HUGE", "A_KTABLES", "A_QUEUE", "A_NET_NFS",
            "A_NET_NFSD", "A_NET_SOCK", "A_NET_IP", "A_NET_EIP", "A_NET_ICMP", "A_NET_EICMP", "A_NET_TCP",
            "A_NET_ETCP", "A_NET_UDP", "A_NET_SOCK6", "A_NET_IP6", "A_NET_EIP6", "A_NET_ICMP6", "A_NET_EICMP6",
            "A_NET_UDP6", "A_PSI_CPU", "A_PSI_IO", "A_PSI_MEM"}
_D_ACTS = {"A_CPU", "A_IRQ", "A_SERIAL", "A_DISK", "A_NET_DEV", "A_NET_EDEV", "A_NET_SOFT", "A_NET_FC", "A_FS",
           "A_PWR_CPU", "A_PWR_FAN", "A_PWR_TEMP", "A_PWR_IN", "A_PWR_FREQ", "A_PWR_USB", "A_PWR_BAT"}
_SPLIT_VERSION = re.compile(r"sysstat version 12\.6\.\d+\Z", re.ASCII)
_H_ACTIVITY = re.compile(r"\d+: \[[0-9a-f]+\] (A_\w+)", re.M | re.ASCII)
_H_COUNT = re.compile(r"^Number of activities in file: (\d+)$", re.M | re.ASCII)
# the order of sadf -d -- -A's sections (for the order of the duplicated-sample warnings when split)
_A_ORDER = ["cpu", "task", "intr", "swapping", "paging", "io", "memory", "swap", "hugepages", "kernel", "queue",
            "serial", "disk", "net-dev", "net-edev", "net-nfs", "net-nfsd", "net-sock", "net-ip", "net-eip",
            "net-icmp", "net-eicmp", "net-tcp", "net-etcp", "net-udp", "net-sock6", "net-ip6", "net-eip6",
            "net-icmp6", "net-eicmp6", "net-udp6", "softnet", "cpu-frequency", "filesystems", "psi-cpu",
            "psi-io", "psi-mem"]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _splittable(sadf: str, path: Path, limit_s: float) -> bool:
    """Whether the installed sadf is the version the split was checked with and every activity of the
    file (``sadf -H``: the file header only) is in one of its two lists."""
    try:
        if not _SPLIT_VERSION.match(_sadf_version(sadf)):
            return False
        p = run_group([sadf, "-H", str(path)], limit_s, capture_output=True, text=True, env=SADF_ENV)
    except (OSError, subprocess.SubprocessError):
        return False
    acts = _H_ACTIVITY.findall(p.stdout)
    count = _H_COUNT.search(p.stdout)
    return (p.returncode == 0 and count is not None and int(count.group(1)) == len(acts) > 0
            and set(acts) <= _DH_ACTS | _D_ACTS and bool(set(acts) & _DH_ACTS))


def _split_run(sadf: str, path: Path, tmp: Path, loader: _Loader, limit_s: float) -> bool:
    """The activities without items, from one ``sadf -dh`` run, checked and stored (``_load_batch_fast``);
    False (nothing stored) when the file is not one for the split or the output is not as sadf prints it."""
    if not _splittable(sadf, path, limit_s):
        return False
    out = tmp / "dh.out"
    try:
        with open(out, "wb") as fh:
            p = run_group([sadf, "-dh", str(path), "--", *_DH_FLAGS], limit_s, stdout=fh,
                          stderr=subprocess.DEVNULL, env=SADF_ENV)
    except (OSError, subprocess.SubprocessError):
        return False
    if p.returncode != 0:
        return False
    items: queue.Queue = queue.Queue()
    with open(out, "rb") as fh:
        _split_sections(fh, tmp, items, threading.Event())
    out.unlink()
    got = []
    while (item := items.get()) is not None:
        got.append(item)
    pre = [x for x in got if isinstance(x, tuple) and not x[0]]
    secs = [x for x in got if isinstance(x, tuple) and x[0]]
    try:
        if len(secs) != 1 or len(got) != len(pre) + len(secs) or len(pre) > 1:
            return False
        header, section, counts = secs[0]
        text = header.decode("utf-8", errors="replace").rstrip("\r\n")
        cols = text[2:].split(";")[3:]
        segs = csv_segments(cols)
        if any(seg["repeated"] or seg["star"] or seg["activity"] in TEXT_ACTIVITIES
               or seg["activity"] not in _A_ORDER for seg in segs):
            return False
        sec = {"text": text, "cols": cols, "act": segs[0]["activity"], "star": False, "file": section,
               "param": "dh_", "counts": counts, "segs": [(seg["activity"], seg["cols"], False) for seg in segs]}
        if not loader._load_batch_fast([sec]):
            return False
        loader.sections += 1
        loader.split = True
        loader._restarts(section, counts=counts)
        if pre:
            loader._restarts(pre[0][1], first_section=False)
        return True
    finally:
        for x in got:
            if isinstance(x, tuple):
                x[1].unlink(missing_ok=True)


def _sadf_message(stderr: str, path: Path) -> str:
    """sadf's own words, without the file name it repeats and its conversion hint (given by the caller)."""
    said = [l.strip() for l in stderr.splitlines() if l.strip() and str(path) not in l
            and not l.startswith(("Try to convert", "You should then"))]
    return "; ".join(said)


def parse_sa_binary(path: Path, sink: Sink) -> None:
    sadf = shutil.which("sadf")
    if sadf is None:
        sink.warn(None, "binary sa file not read: 'sadf' is not installed (apt-get install sysstat, or "
                        "dnf install sysstat); render it with 'sadf -d FILE -- -A > sadf_d.csv' elsewhere")
        return
    loader = _Loader(path, sink)
    limit_s = sadf_timeout(path)
    with tempfile.TemporaryDirectory(prefix="kansoku-sa-") as tmp, tempfile.TemporaryFile() as err:
        split = SPLIT and _size(path) >= SPLIT_MIN_BYTES and _split_run(sadf, path, Path(tmp), loader, limit_s)
        # in a session of its own: a stop ends whatever it started too (a wrapper's child holding the pipe)
        proc = subprocess.Popen([sadf, "-d", str(path), "--", *(_D_FLAGS if split else ["-A"])],
                                stdout=subprocess.PIPE, stderr=err, env=SADF_ENV, start_new_session=True)
        timed_out = threading.Event()

        def overtime() -> None:  # nothing waits without a bound: sadf stuck on a damaged file is ended
            timed_out.set()
            kill_group(proc)

        watchdog = threading.Timer(limit_s, overtime)
        watchdog.daemon = True
        watchdog.start()
        sections: queue.Queue = queue.Queue(maxsize=2)  # at most a few sections on disk at once
        stop = threading.Event()
        splitter = threading.Thread(target=_split_sections, args=(proc.stdout, Path(tmp), sections, stop),
                                    name="kansoku-sadf-split", daemon=True)
        splitter.start()
        failure: BaseException | None = None
        ended = False  # the splitter's final None was taken
        try:
            while (item := sections.get()) is not None:
                if isinstance(item, BaseException):
                    failure = item
                    continue
                loader.load(*item)
            ended = True
            loader.flush()
        except BaseException:
            # a failed check, a DuckDB error or Ctrl-C: stop sadf and the splitter, and wait for neither
            # longer than it takes them to notice (the final None may already have been taken)
            stop.set()
            kill_group(proc)
            while not ended:
                try:
                    ended = sections.get(timeout=0.2) is None
                except queue.Empty:
                    ended = not splitter.is_alive() and sections.empty()
            raise
        finally:
            watchdog.cancel()
            splitter.join(timeout=5)
            proc.stdout.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                kill_group(proc)
        rc = proc.wait()
        err.seek(0)
        stderr = err.read().decode("utf-8", errors="replace")
    if timed_out.is_set():
        raise ParseError(path, None, f"a sa data file the installed sadf renders within {limit_s:.0f} s",
                         "sadf still running (a damaged file?)", no_line=BINARY_FILE)
    if rc == 0 and loader.sections == 0 and failure is None and loader.restarts_seen:
        sink.warn(None, "the sa file holds restart records only (no activity was recorded)")
        return
    if failure is not None and not isinstance(failure, ValueError):
        raise failure
    if rc != 0 or loader.sections == 0 or failure is not None:
        msg = _sadf_message(stderr, path) or (str(failure) if failure else "")
        if loader.sections == 0:
            readable = _readable_rendering_beside(path)
            if readable is not None:
                # the same data rendered as text beside the sa file (sar -A / sadf -d / sadf -j of it): that
                # file is read instead; an old binary format must not stop the run
                sink.warn(None, f"sa file not readable by the installed sadf (sadf says: {msg or rc}); "
                                f"the run's {readable.name} holds the same data and is used instead")
                return
        ver = _sadf_version(sadf)
        raise ParseError(path, None, f"a sa data file the installed sadf ({ver}) can read; sadf says: "
                         f"{msg or f'exit status {rc}'}. Convert it with 'sadf -c OLDFILE > NEWFILE', "
                         "render it with the sysstat that wrote it (sar -A -f / sadf -d), or keep that rendering "
                         "beside it (it is then used instead)", "an sa file this sadf cannot read",
                         no_line=BINARY_FILE)
    loader.warn_duplicated()
    version = _file_version(path)  # the file header's, as 'sadf -H' prints it (one sadf run per file)
    if version:
        sink.set_tool_version(version)
    sm.finish_sql(sink, "sar", "sa-binary", loader.host, "sadf -d timestamps (UTC)", known=loader.known(),
                  no_line=BINARY_FILE)


def _file_version(path: Path) -> str | None:
    """The sysstat version that wrote the file: bytes 4-6 of its header (struct file_magic: magic, format
    magic, then version, patch level and sublevel, one byte each), e.g. 12.6.1."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    if len(head) < 8 or head[:2] not in SA_MAGIC:
        return None
    return ".".join(str(b) for b in head[4:7])


def sadf_timeout(path: Path) -> float:
    """How long sadf may take to render ``path``: a minute, plus ten seconds a megabyte (well above what a day
    of 1-second records takes on a small machine)."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return 60.0 + 10.0 * size / (1 << 20)


def _sadf_version(sadf: str) -> str:
    p = run_group([sadf, "-V"], 60, capture_output=True, text=True)
    return p.stdout.split("\n")[0].strip() or p.stderr.split("\n")[0].strip()
