"""Binary sa data files, read with the installed ``sadf -d`` (docs/formats.md §2.7), streamed.

A day of one-second records (86,400) renders to about half a gigabyte of text, so nothing here holds the
rendering in memory: ``sadf -d FILE -- -A`` prints one section per activity (its ``# hostname;...`` header,
then every record of that activity); a thread copies sadf's output into one temporary file per section
while DuckDB reads the previous one (``read_csv``), splits its lines and unpivots them into the tall
``sys_metrics`` rows. Python touches only block boundaries, section headers and a few aggregates, so the
time is close to sadf's own and memory does not grow with the file's length.

The rows are those the ``sadf -d`` reader (``sadf_csv.py``) stores for the same rendering: metric names are
the sar column names. The plausibility rules of ``common.check_plausible`` are applied in SQL
(``common.check_plausible_sql``) to the rows stored.
"""

from __future__ import annotations

import queue
import re
import shutil
import subprocess
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.sysstat import common as sm
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

    for p in sorted(path.parent.iterdir()):
        if p == path or not p.is_file() or p.name == "run.toml":
            continue
        head = parsers.read_head(p)
        fmt = parsers.claim(head) if head.size_bytes else None
        if fmt is not None and fmt.name in ("sadf-json", "sadf-csv", "sar-text"):
            return p
    return None


def _split_sections(stream, tmp: Path, out: queue.Queue, stop: threading.Event) -> None:
    """Copy sadf -d's output into one file per section (header line, file path), put on ``out`` as each
    is complete; then None. Whole blocks are copied; only header positions are looked for."""
    fh = None
    header: bytes | None = None
    current: Path | None = None
    preamble = b""
    n = 0

    def finish() -> None:
        nonlocal fh
        if fh is not None:
            fh.close()
            fh = None
            out.put((header, current))

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
            pos = 0
            while pos < len(data):
                i = data.find(HEADER, pos)
                while i > 0 and data[i - 1] != 0x0A:  # a header starts a line
                    i = data.find(HEADER, i + 1)
                stop_at = len(data) if i < 0 else i
                if stop_at > pos:
                    if fh is None:
                        preamble += bytes(view[pos:min(stop_at, pos + 200)])
                    else:
                        fh.write(view[pos:stop_at])
                if i < 0:
                    break
                j = data.index(b"\n", i) + 1
                finish()
                header = bytes(view[i:j])
                n += 1
                current = tmp / f"section-{n}.csv"
                fh = open(current, "wb")
                pos = j
        if carry and fh is not None:  # a last line without its newline
            fh.write(carry + b"\n")
        finish()
        if preamble.strip():
            out.put(ValueError(f"output before the first '# hostname;...' header: {preamble[:80]!r}"))
    except BaseException as exc:  # noqa: BLE001 -- handed to the reading thread, which raises it
        out.put(exc)
    finally:
        if fh is not None:
            fh.close()
        out.put(None)


def _sql_list(items: list[str]) -> str:
    return "[" + ", ".join(sm.sql_str(x) for x in items) + "]"


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
        self.pending: list[dict] = []
        self.pending_bytes = 0

    @staticmethod
    def _reader(param: str) -> str:
        # one VARCHAR per line (a delimiter sadf never prints, no quoting): restart and comment lines,
        # and the variable width of the interrupt rows, are then handled in SQL
        return (f"(SELECT string_split(l, ';') AS f FROM read_csv(${param}, columns = {{'l': 'VARCHAR'}}, "
                "header = false, auto_detect = false, delim = '\x01', quote = '', escape = '', "
                "new_line = '\\n'))")

    _DATA = "len(f) >= 4 AND NOT starts_with(f[4], 'LINUX-RESTART') AND NOT starts_with(f[4], 'COM ')"

    def load(self, header: bytes, section: Path) -> None:
        """Take one section; its rows are stored when the batch is full (or at ``flush``)."""
        path = self.path
        self.sections += 1
        text = header.decode("utf-8", errors="replace").rstrip("\r\n")
        cols = text[2:].split(";")[3:]
        if not self.restarts_done:
            self._restarts(section)
        segs = csv_segments(cols)
        if len(segs) != 1 or segs[0]["repeated"]:
            raise ParseError(path, None, "one activity per 'sadf -d' section header", text[:120])
        seg = segs[0]
        act = seg["activity"]
        if act in TEXT_ACTIVITIES:
            section.unlink(missing_ok=True)
            return
        self.pending.append({"text": text, "cols": cols, "act": act, "star": seg["star"], "file": section,
                             "param": f"csv{len(self.pending)}_"})
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
        path, sink = self.path, self.sink
        params = {sec["param"]: str(sec["file"]) for sec in batch}
        stats_sql, rows_sql = [], []
        for k, sec in enumerate(batch):
            cols, act, star = sec["cols"], sec["act"], sec["star"]
            inst_pos = [i + 4 for i, c in enumerate(cols) if c in INSTANCE_COLS]
            metric_pos = [(i + 4, c) for i, c in enumerate(cols)
                          if c not in INSTANCE_COLS and c != "CPU*" and c not in TEXT_COLUMNS]
            width = 3 + len(cols)
            sec["width"] = width
            width_ok = f"len(f) >= {width + 1}" if star else f"len(f) = {width}"
            inst = self._instance_expr(act, inst_pos) if inst_pos else "NULL::VARCHAR"
            bad_iv = f"try_cast(f[2] AS DOUBLE) IS NULL OR NOT try_cast(f[2] AS DOUBLE) BETWEEN 0 AND {sm.MAX_INTERVAL_S}"
            reader = self._reader(sec["param"])
            stats_sql.append(f"""
                SELECT {k} AS k, count(*) AS n, count(*) FILTER (WHERE NOT ({width_ok})) AS bad_w,
                       any_value(array_to_string(f, ';')) FILTER (WHERE NOT ({width_ok})) AS bad_w_line,
                       count(*) FILTER (WHERE try_strptime(f[3], '{TS_FORMAT}') IS NULL) AS bad_ts,
                       any_value(f[3]) FILTER (WHERE try_strptime(f[3], '{TS_FORMAT}') IS NULL) AS bad_ts_tok,
                       count(*) FILTER (WHERE {bad_iv}) AS bad_iv, any_value(f[2]) FILTER (WHERE {bad_iv}) AS bad_iv_tok,
                       any_value(f[1]) AS host, count(DISTINCT f[3]) AS n_ts, count(DISTINCT {inst}) AS n_inst
                FROM {reader} WHERE len(f) < 4 OR ({self._DATA})""")
            if star:
                metrics = ("list_transform(range(len(f) - 4), lambda i: CASE WHEN i = 0 THEN 'all' "
                           "ELSE 'CPU' || CAST(i - 1 AS VARCHAR) END)")
                values = "list_transform(f[5:], lambda x: try_cast(x AS DOUBLE))"
            else:
                metrics = _sql_list([c for _, c in metric_pos])
                values = "[" + ", ".join(f"try_cast(f[{i}] AS DOUBLE)" for i, _ in metric_pos) + "]"
            rows_sql.append(f"""
                SELECT f[3] AS tstok, try_cast(f[2] AS DOUBLE) AS interval_s, {sm.sql_str(act)} AS activity,
                       {inst} AS instance, unnest({metrics}) AS metric, unnest({values}) AS value
                FROM {reader} WHERE {self._DATA}""")
        stats = sink.own_rows("sys_metrics", " UNION ALL ".join(stats_sql) + " ORDER BY k", params)
        for (k, n, bad_w, bad_w_line, bad_ts, bad_ts_tok, bad_iv, bad_iv_tok, host, n_ts, n_inst), sec \
                in zip(stats, batch):
            if n == 0:
                continue
            act, star, width, text = sec["act"], sec["star"], sec["width"], sec["text"]
            what = f"in the {act} section of 'sadf -d' output"
            if bad_w:
                raise ParseError(path, None, f"{'at least ' if star else ''}{width + (1 if star else 0)} "
                                 f"';'-separated fields per row {what} (header {text[:60]}...)",
                                 (bad_w_line or "")[:80])
            if bad_ts:
                raise ParseError(path, None, f"a timestamp 'YYYY-MM-DD HH:MM:SS UTC' {what}", str(bad_ts_tok)[:40])
            if bad_iv:
                raise ParseError(path, None, f"a sampling interval between 0 s and 31 days {what}",
                                 str(bad_iv_tok)[:40])
            self.host = self.host or host
            if n > n_ts * max(n_inst, 1):
                sink.warn(None, f"a sample time appears twice in the {act} section: duplicated samples "
                                "(clock set back, or files concatenated?)")
        # the sample number: the rank of the record's time (every section covers the same records)
        times = " UNION ".join(f"SELECT f[3] AS tstok FROM {self._reader(sec['param'])} WHERE {self._DATA}"
                               for sec in batch)
        sink.load_sql("sys_metrics", f"""
            SELECT $source_id AS source_id, $run_id AS run_id, 'sar' AS tool, 'sa-binary' AS format,
                   k.ts, r.interval_s, k.sample, false AS since_boot, r.activity, r.instance, r.metric, r.value,
                   NULL::INTEGER AS line
            FROM ({" UNION ALL ".join(rows_sql)}) r
            JOIN (SELECT tstok, (row_number() OVER (ORDER BY tstok) - 1)::INTEGER AS sample,
                         timezone('UTC', strptime(tstok, '{TS_FORMAT}')) AS ts
                  FROM ({times})) k
              USING (tstok)""", params)

    @staticmethod
    def _instance_expr(act: str, inst_pos: list[int]) -> str:
        e = f"f[{inst_pos[0]}]" if len(inst_pos) == 1 else \
            "concat_ws('/', " + ", ".join(f"f[{i}]" for i in inst_pos) + ")"
        if act in _ALL_CPU_ACTIVITIES:
            e = f"CASE WHEN {e} IN ('-1', 'all') THEN 'all' ELSE {e} END"
        return e

    def _restarts(self, section: Path) -> None:
        """LINUX-RESTART lines (each section repeats them: read from the first)."""
        self.restarts_done = True
        rows = self.sink.own_rows("sys_metrics", f"SELECT f[3], f[4] FROM {self._reader('restarts_')} "
                                                 "WHERE len(f) >= 4 AND starts_with(f[4], 'LINUX-RESTART')",
                                  {"restarts_": str(section)})
        ts, cpus = [], []
        for tok, what in rows:
            try:
                t = datetime.strptime(tok, TS_FORMAT).replace(tzinfo=timezone.utc)
            except ValueError:
                raise ParseError(self.path, None, "a timestamp 'YYYY-MM-DD HH:MM:SS UTC' on a LINUX-RESTART row",
                                 tok[:40]) from None
            m = re.search(r"\((\d+) CPU\)", what)
            ts.append(t)
            cpus.append(float(m.group(1)) if m else None)
        if ts:
            self.sink.load_sql("sys_metrics", """
                SELECT $source_id AS source_id, $run_id AS run_id, 'sar' AS tool, 'sa-binary' AS format,
                       unnest($ts::TIMESTAMPTZ[]) AS ts, NULL::DOUBLE AS interval_s, NULL::INTEGER AS sample,
                       false AS since_boot, 'restart' AS activity, NULL::VARCHAR AS instance,
                       'cpu_count' AS metric, unnest($cpus::DOUBLE[]) AS value, NULL::INTEGER AS line""",
                               {"ts": ts, "cpus": cpus})


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
    with tempfile.TemporaryDirectory(prefix="kansoku-sa-") as tmp, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sadf, "-d", str(path), "--", "-A"], stdout=subprocess.PIPE, stderr=err,
                                env=SADF_ENV)
        sections: queue.Queue = queue.Queue(maxsize=2)  # at most a few sections on disk at once
        stop = threading.Event()
        splitter = threading.Thread(target=_split_sections, args=(proc.stdout, Path(tmp), sections, stop),
                                    name="kansoku-sadf-split", daemon=True)
        splitter.start()
        failure: BaseException | None = None
        try:
            while (item := sections.get()) is not None:
                if isinstance(item, BaseException):
                    failure = item
                    continue
                loader.load(*item)
            loader.flush()
        except BaseException:
            stop.set()
            proc.kill()
            while sections.get() is not None:  # let the splitter finish (it ends at EOF after the kill)
                pass
            proc.wait()
            raise
        finally:
            splitter.join()
            proc.stdout.close()
        rc = proc.wait()
        err.seek(0)
        stderr = err.read().decode("utf-8", errors="replace")
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
                         "beside it (it is then used instead)", "an sa file this sadf cannot read")
    m = re.search(r"File created by sar/sadc from sysstat version (\S+)",
                  subprocess.run([sadf, "-H", str(path)], capture_output=True, text=True, env=SADF_ENV).stdout)
    if m:
        sink.set_tool_version(m.group(1))
    sm.finish_sql(sink, "sar", "sa-binary", loader.host, "sadf -d timestamps (UTC)")


def _sadf_version(sadf: str) -> str:
    p = subprocess.run([sadf, "-V"], capture_output=True, text=True)
    return p.stdout.split("\n")[0].strip() or p.stderr.split("\n")[0].strip()
