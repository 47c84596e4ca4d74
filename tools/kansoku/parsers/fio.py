"""fio: JSON / json+, normal (human) text and terse output (docs/formats.md §6).

All three forms land in the same table, ``fio_jobs``: one row per job report
and direction (read, write, trim, sync, mixed) that did I/O, in one set of
units whatever fio printed:

* bandwidth in KiB/s (JSON ``bw``, terse ``bw_kb``; the normal output's
  ``BW=63.9MiB/s`` or fio 2.x ``bw=1023.3KB/s`` are converted),
* latencies in microseconds (JSON ``clat_ns`` etc. from fio 2.99 on are in
  ns, before that ``clat`` is in us; the normal output scales each block to
  nsec/usec/msec; terse is in us),
* I/O in KiB (JSON ``io_kbytes``; before fio 2.21 ``io_bytes`` *was* KiB),
* runtime in ms.

The normal output prints rounded numbers (``IOPS=16.3k``, 3 significant
digits): stored as printed, so they agree with JSON/terse of the same run to
about 0.5 %.

Which report a run's metrics use: json/json+ before terse before normal
(precision), see view ``fio_run_jobs``. Within it, jobs are *summed*: with
``group_reporting`` there is one report per group and the sum is that
report; without it each job (and each clone of ``numjobs``) has its own report
and the sum is the total over them (a warning says so at ingest). Jobs of
different groups (``stonewall``) are summed too, which is only meaningful when
they ran at the same time: use ``fio_jobs`` per job for such files.

Job options (rw, bs, iodepth, numjobs, direct, fsync, fdatasync, ioengine)
come from the file where it says them (JSON ``job options``/``global
options``, the normal output's ``rw=..., bs=..., ioengine=..., iodepth=...``
banner, ``jobs=N``) and otherwise from the ``fio`` command line in the run's
run.toml [commands].

json+ latency histograms (``bins``) are not stored: percentiles are.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from kansoku.errors import ParseError
from kansoku.parsers import bounds, textfile
from kansoku.parsers.base import FileHead, Format, MetricDef, ParserModule, Sink
from kansoku.parsers.bounds import EARLIEST, FASTEST_PER_S, LATEST, LONGEST_MS, LONGEST_US, MOST, Bound, TableBounds
from kansoku.parsers.numbers import foreign_digit, to_float, to_int

SCHEMA = """
CREATE TABLE IF NOT EXISTS fio_jobs (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    report_format VARCHAR NOT NULL, -- 'json' | 'json+' | 'terse' | 'normal'
    job_no INTEGER,             -- 1-based order of the job report within its format in the file
    jobname VARCHAR,
    groupid INTEGER,
    jobs_in_report INTEGER,     -- jobs aggregated in this report (group_reporting: numjobs), else 1
    group_reported BOOLEAN,
    error INTEGER,              -- fio's err= for the job
    direction VARCHAR NOT NULL, -- 'read' | 'write' | 'trim' | 'sync' | 'mixed'
    io_kib DOUBLE,
    bw_kib_s DOUBLE,            -- KiB/s (1024 bytes per second)
    iops DOUBLE,
    runtime_ms DOUBLE,
    total_ios BIGINT,
    slat_mean_us DOUBLE,
    clat_min_us DOUBLE,
    clat_max_us DOUBLE,
    clat_mean_us DOUBLE,
    clat_stddev_us DOUBLE,
    lat_min_us DOUBLE,          -- sync: the sync latency
    lat_max_us DOUBLE,
    lat_mean_us DOUBLE,
    lat_stddev_us DOUBLE,
    clat_p50_us DOUBLE,         -- completion latency percentiles (sync: sync latency)
    clat_p95_us DOUBLE,
    clat_p99_us DOUBLE,
    clat_p99_9_us DOUBLE,
    bw_min_kib_s DOUBLE,        -- per-sample bandwidth statistics
    bw_max_kib_s DOUBLE,
    bw_mean_kib_s DOUBLE,
    bw_samples BIGINT,
    iops_mean DOUBLE,
    usr_cpu_pct DOUBLE,
    sys_cpu_pct DOUBLE,
    rw VARCHAR,                 -- job options
    bs VARCHAR,
    bs_bytes BIGINT,
    iodepth INTEGER,
    numjobs INTEGER,
    direct BOOLEAN,
    fsync INTEGER,
    fdatasync INTEGER,
    ioengine VARCHAR,
    filename VARCHAR,
    options JSON,               -- every option known, merged (run.toml command, then the file)
    options_origin VARCHAR,     -- 'file' | 'run.toml' | 'file+run.toml' | NULL
    fio_version VARCHAR,
    report_time TIMESTAMPTZ,    -- JSON 'timestamp'
    line INTEGER                -- line of the job report (JSON: its "jobname")
);
CREATE TABLE IF NOT EXISTS fio_latency_percentiles (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    report_format VARCHAR NOT NULL,
    job_no INTEGER,
    direction VARCHAR,
    kind VARCHAR,               -- 'clat' | 'lat' | 'sync'
    percentile DOUBLE,          -- 99.9 for '99.900000' / '99.90th'
    value_us DOUBLE
);
CREATE TABLE IF NOT EXISTS fio_disk_util (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    report_format VARCHAR NOT NULL,
    device VARCHAR,
    read_ios BIGINT,
    write_ios BIGINT,
    read_merges BIGINT,
    write_merges BIGINT,
    read_ticks_ms BIGINT,
    write_ticks_ms BIGINT,
    in_queue_ms BIGINT,
    util_pct DOUBLE
);
-- One row per fio output file: did the run succeed? A job with err != 0 (ENOSPC, EIO, ...) or a run
-- killed before it reported makes the file's numbers unusable: the run metrics fio_* leave such runs out,
-- as tps leaves out an aborted pgbench run.
CREATE TABLE IF NOT EXISTS fio_status (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    status VARCHAR NOT NULL,    -- 'ok' | 'error' (a job reported err != 0) | 'killed' (banner only, no report)
    jobs_failed INTEGER,        -- job reports with err != 0
    status_note VARCHAR         -- fio's own error text, or why the file counts as killed
);
"""

TABLES = ["fio_jobs", "fio_latency_percentiles", "fio_disk_util", "fio_status"]

VIEWS = """
-- The report a run's numbers come from: json/json+ before terse before normal.
-- Runs whose fio failed (a job with err != 0, or killed before reporting) give no fio numbers.
CREATE OR REPLACE VIEW fio_run_jobs AS
WITH p AS (
    SELECT j.*, CASE j.report_format WHEN 'json+' THEN 1 WHEN 'json' THEN 1 WHEN 'terse' THEN 2 ELSE 3 END AS prio
    FROM fio_jobs j
    WHERE j.run_id NOT IN (SELECT run_id FROM fio_status WHERE status <> 'ok' AND run_id IS NOT NULL)
), b AS (SELECT *, min(prio) OVER (PARTITION BY run_id) AS best FROM p)
SELECT * EXCLUDE (prio, best) FROM b WHERE prio = best;

-- Per run and direction: bandwidth and IOPS summed over job reports,
-- latency averaged weighted by IOPS.
CREATE OR REPLACE VIEW fio_run_direction AS
SELECT run_id, direction,
       sum(bw_kib_s) AS bw_kib_s, sum(iops) AS iops,
       sum(lat_mean_us * iops) / nullif(sum(iops), 0) AS lat_mean_us,
       sum(clat_mean_us * iops) / nullif(sum(iops), 0) AS clat_mean_us,
       max(clat_p99_us) AS clat_p99_us_max,
       count(*) AS job_reports, sum(jobs_in_report) AS jobs,
       any_value(rw) AS rw, any_value(bs) AS bs, any_value(bs_bytes) AS bs_bytes,
       any_value(iodepth) AS iodepth, any_value(numjobs) AS numjobs, any_value(direct) AS direct,
       any_value(fsync) AS fsync, any_value(fdatasync) AS fdatasync, any_value(ioengine) AS ioengine,
       any_value(report_format) AS report_format
FROM fio_run_jobs GROUP BY run_id, direction;

-- The device a run measured: the run's 'device' (or 'disk') factor, else the
-- disk fio reported the most I/O on.
CREATE OR REPLACE VIEW fio_run_device AS
SELECT r.run_id, coalesce(
    (SELECT f.value FROM run_factors f WHERE f.run_id = r.run_id AND f.factor IN ('device', 'disk')
      ORDER BY f.factor DESC LIMIT 1),
    (SELECT d.device FROM fio_disk_util d WHERE d.run_id = r.run_id
      ORDER BY coalesce(d.read_ios, 0) + coalesce(d.write_ios, 0) DESC, d.device LIMIT 1)) AS device
FROM (SELECT DISTINCT run_id FROM fio_jobs) r;

-- Bandwidth per pattern (seq/rand x read/write) and device (FY2013 Fig. 4.1).
CREATE OR REPLACE VIEW fio_pattern_bw AS
SELECT d.run_id, dev.device,
       CASE WHEN d.rw LIKE 'rand%' THEN 'rand' WHEN d.rw IS NULL THEN NULL ELSE 'seq' END AS pattern,
       d.direction,
       CASE WHEN d.rw LIKE 'rand%' THEN 'rand' WHEN d.rw IS NULL THEN NULL ELSE 'seq' END || '_' || d.direction
           AS pattern_direction,
       d.rw, d.bs, d.bs_bytes, d.iodepth, d.numjobs, d.direct, d.fsync, d.fdatasync, d.ioengine,
       d.bw_kib_s, d.iops, d.lat_mean_us, d.report_format
FROM fio_run_direction d LEFT JOIN fio_run_device dev USING (run_id)
WHERE d.direction IN ('read', 'write', 'trim', 'mixed');

-- Median over runs per (device, pattern, direction, bs) and the ratio to a
-- baseline device: SELECT * FROM fio_bw_ratio('hdd').
CREATE OR REPLACE MACRO fio_bw_ratio(baseline_device) AS TABLE
WITH m AS (
    SELECT device, pattern, direction, pattern_direction, rw, bs_bytes,
           median(bw_kib_s) AS bw_kib_s, median(iops) AS iops, count(*) AS runs
    FROM fio_pattern_bw GROUP BY ALL
)
SELECT m.*, m.bw_kib_s / nullif(b.bw_kib_s, 0) AS bw_ratio, m.iops / nullif(b.iops, 0) AS iops_ratio
FROM m LEFT JOIN m b ON b.device = baseline_device AND b.rw IS NOT DISTINCT FROM m.rw
    AND b.direction = m.direction AND b.bs_bytes IS NOT DISTINCT FROM m.bs_bytes;
"""


def _metric(name: str, col: str, direction: str, unit: str, hib: bool) -> MetricDef:
    return MetricDef(name, f"SELECT run_id, {col} AS value FROM fio_run_direction WHERE direction = '{direction}'",
                     unit, hib)


METRICS = [
    _metric("fio_read_bw_kib_s", "bw_kib_s", "read", "KiB/s", True),
    _metric("fio_write_bw_kib_s", "bw_kib_s", "write", "KiB/s", True),
    _metric("fio_read_iops", "iops", "read", "IOPS", True),
    _metric("fio_write_iops", "iops", "write", "IOPS", True),
    _metric("fio_read_lat_mean_us", "lat_mean_us", "read", "us", False),
    _metric("fio_write_lat_mean_us", "lat_mean_us", "write", "us", False),
    _metric("fio_sync_lat_mean_us", "lat_mean_us", "sync", "us", False),
]

DIRECTIONS = ("read", "write", "trim", "sync", "mixed")

# -- units ----------------------------------------------------------------------

_IEC = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4, "P": 1024 ** 5}
_SI = {"": 1, "k": 1000, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4, "P": 1000 ** 5}
_TIME_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}


def _bytes(value: float, unit: str, kb_iec: bool) -> float:
    """'MiB' -> IEC, 'MB'/'kB' -> SI (fio 3.x); fio 2.x 'KB' is 1024 (kb_base=1024)."""
    u = unit.rstrip("B")
    if u.endswith("i"):
        return value * _IEC[u[:-1].upper()]
    if kb_iec:
        return value * _IEC[u.upper()]
    return value * _SI[u]


def _suffixed(tok: str) -> float:
    """'16.3k' -> 16300, '1805.8K' -> 1805800, '2' -> 2."""
    m = re.fullmatch(r"([-+]?\d+(?:\.\d*)?)([kKmMgG]?)", tok.strip(), flags=re.ASCII)
    if not m:
        raise ValueError(tok)
    return float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9}[m.group(2)]


def _bs_bytes(bs: str | None) -> int | None:
    if not bs:
        return None
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kKmMgG]?)(i?)B?", str(bs), flags=re.ASCII)
    if not m:
        return None
    return int(float(m.group(1)) * _IEC[m.group(2).upper()])


def _version_tuple(v: str | None) -> tuple[int, ...]:
    m = re.match(r"fio-(\d+)\.(\d+)(?:\.(\d+))?", v or "", flags=re.ASCII)
    return tuple(int(x) for x in m.groups() if x is not None) if m else ()


def _bool_opt(v: Any) -> bool | None:
    if v is None:
        return None
    return str(v).strip().lower() not in ("0", "false", "no", "off")


def _int_opt(v: Any) -> int | None:
    try:
        return to_int(str(v).strip())
    except (TypeError, ValueError):
        return None


# -- options from run.toml ---------------------------------------------------------


def _command_options(sink: Sink) -> tuple[dict[str, str], dict[str, dict[str, str]], int]:
    """(global options, options per --name, number of --name) of the fio command in run.toml
    (handed in by ingest through the sink)."""
    meta = getattr(sink, "run_meta", None) or {}
    cmds = meta.get("commands") if isinstance(meta.get("commands"), dict) else {}
    text = cmds.get("fio") or next((v for v in cmds.values() if isinstance(v, str)
                                    and re.match(r"^\s*fio\s", v, flags=re.ASCII)), None)
    if not text:
        return {}, {}, 0
    try:
        argv = shlex.split(text)
    except ValueError:
        argv = text.split()
    glob: dict[str, str] = {}
    jobs: dict[str, dict[str, str]] = {}
    cur: dict[str, str] = glob
    names = 0
    for a in argv[1:]:
        if a in (">", "2>", "|", "&&", ";", "2>&1") or a.startswith((">", "2>")):
            break
        if not a.startswith("--"):
            continue
        key, eq, val = a[2:].partition("=")
        if key in ("output-format", "output", "minimal", "terse-version", "eta", "eta-newline"):
            continue
        if key == "name":
            names += 1
            cur = jobs.setdefault(val, {})
            continue
        cur[key] = val if eq else "1"
    return glob, jobs, names


def _merge_options(file_opts: dict[str, Any], jobname: str | None, cmd) -> tuple[dict[str, Any], str | None]:
    glob, jobs, names = cmd
    from_cmd: dict[str, Any] = {}
    if glob or jobs:
        from_cmd.update(glob)
        if jobname in jobs:
            from_cmd.update(jobs[jobname])
        elif names == 1:
            from_cmd.update(next(iter(jobs.values())))
    merged = {**from_cmd, **{k: v for k, v in file_opts.items() if v is not None}}
    if file_opts and from_cmd:
        origin = "file+run.toml"
    elif file_opts:
        origin = "file"
    elif from_cmd:
        origin = "run.toml"
    else:
        origin = None
    return merged, origin


def _option_columns(opts: dict[str, Any]) -> dict[str, Any]:
    return {
        "rw": opts.get("rw") or opts.get("readwrite"),
        "bs": str(opts["bs"]) if opts.get("bs") is not None else None,
        "bs_bytes": _bs_bytes(opts.get("bs")),
        "iodepth": _int_opt(opts.get("iodepth")),
        "numjobs": _int_opt(opts.get("numjobs")),
        "direct": _bool_opt(opts.get("direct")),
        "fsync": _int_opt(opts.get("fsync")),
        "fdatasync": _int_opt(opts.get("fdatasync")),
        "ioengine": opts.get("ioengine"),
        "filename": opts.get("filename"),
    }


def _pick(pcts: dict[float, float], p: float) -> float | None:
    for k, v in pcts.items():
        if abs(k - p) < 1e-6:
            return v
    return None


def _pct_columns(pcts: dict[float, float]) -> dict[str, Any]:
    return {"clat_p50_us": _pick(pcts, 50.0), "clat_p95_us": _pick(pcts, 95.0),
            "clat_p99_us": _pick(pcts, 99.0), "clat_p99_9_us": _pick(pcts, 99.9)}


class _Out:
    """Rows of one file, written at the end (so a ParseError leaves nothing half-written)."""

    def __init__(self, path: Path, sink: Sink):
        self.path, self.sink = path, sink
        self.jobs: list[dict] = []
        self.pcts: list[dict] = []
        self.disks: list[dict] = []
        self.cmd = _command_options(sink)
        self.version: str | None = None
        self.status: tuple[str, str | None] = ("ok", None)
        self.error_text = ""  # fio's own 'fio: ... error' line, when the file has one

    def add_job(self, fmt: str, job: dict[str, Any], file_opts: dict[str, Any],
                directions: dict[str, dict], pcts: dict[tuple[str, str], dict[float, float]]) -> None:
        job_no = 1 + len({j["job_no"] for j in self.jobs if j["report_format"] == fmt})
        opts, origin = _merge_options(file_opts, job.get("jobname"), self.cmd)
        base = {**job, "report_format": fmt, "job_no": job_no, **_option_columns(opts),
                "options": opts or None, "options_origin": origin}
        did_io = False
        for d, vals in directions.items():
            row = {**base, **vals, "direction": d}
            kind = "sync" if d == "sync" else "clat"
            p = pcts.get((d, kind)) or (pcts.get((d, "lat")) if d == "sync" else None) or {}
            row.update(_pct_columns(p))
            self.jobs.append(row)
            did_io = True
        for (d, kind), values in pcts.items():
            if d not in directions:
                continue
            for p, v in values.items():
                self.pcts.append({"report_format": fmt, "job_no": job_no, "direction": d, "kind": kind,
                                  "percentile": p, "value_us": v})
        if not did_io:
            self.sink.warn(job.get("line"), f"fio job {job.get('jobname')!r} did no I/O "
                           f"(err={job.get('error')}); nothing stored for it")

    def finish(self) -> None:
        for fmt in sorted({j["report_format"] for j in self.jobs}):
            reports = {(j["job_no"], j.get("line")) for j in self.jobs if j["report_format"] == fmt}
            if len(reports) > 1:
                second = sorted(reports)[1][1]
                groups = {j.get("groupid") for j in self.jobs if j["report_format"] == fmt}
                why = "no group_reporting" if len(groups) == 1 else f"{len(groups)} groups"
                self.sink.warn(second, f"fio {fmt} output has {len(reports)} job reports ({why}); the run "
                               f"metrics fio_* sum bandwidth and IOPS over them (per-job numbers: table fio_jobs)")
        for j in self.jobs:
            if j.get("group_reported") is None:
                # the same job reported in another format of this file (--output-format=normal,terse)
                twin = next((k for k in self.jobs if k.get("group_reported") is not None
                             and k["report_format"] != j["report_format"] and k.get("jobname") == j.get("jobname")
                             and k.get("groupid") == j.get("groupid")), None)
                if twin is not None:
                    j["group_reported"], j["jobs_in_report"] = twin["group_reported"], twin["jobs_in_report"]
                    if j.get("numjobs") is None:
                        j["numjobs"] = twin.get("numjobs")
                    continue
                same = sum(1 for k in self.jobs if k["report_format"] == j["report_format"]
                           and k.get("jobname") == j.get("jobname") and k["direction"] == j["direction"])
                n = j.get("numjobs") or 1
                j["group_reported"] = n > 1 and same == 1
                j["jobs_in_report"] = n if j["group_reported"] else 1
        failed = [j for j in self.jobs if j.get("error")]
        failed_reports = {(j["report_format"], j["job_no"]) for j in failed}
        if failed:
            notes = sorted({f"job {j.get('jobname')!r} err={j.get('error')}" for j in failed})
            for j in failed[:1]:
                self.sink.warn(j.get("line"), f"fio {'; '.join(notes[:3])}: the run failed; its fio numbers are "
                                              "stored but left out of the run metrics")
            self.status = ("error", "; ".join(notes[:5]) + (self.error_text and f" ({self.error_text})" or ""))
        self.sink.add_rows("fio_status", [{"status": self.status[0], "jobs_failed": len(failed_reports),
                                           "status_note": self.status[1]}])
        self.sink.add_rows("fio_jobs", self.jobs)
        self.sink.add_rows("fio_latency_percentiles", self.pcts)
        self.sink.add_rows("fio_disk_util", self.disks)
        if self.version:
            self.sink.set_tool_version(self.version)


# -- JSON ---------------------------------------------------------------------------------


def sniff_json(head: FileHead) -> bool:
    return not head.is_binary and '"fio version"' in head.text and "{" in head.text


def _lat_block(d: dict, name: str) -> tuple[dict | None, float]:
    """The latency object and the factor to µs: 'clat_ns' (ns) or 'clat' (µs, fio < 2.99)."""
    if isinstance(d.get(f"{name}_ns"), dict):
        return d[f"{name}_ns"], 1e-3
    if isinstance(d.get(name), dict):
        return d[name], 1.0
    return None, 1.0


def _take_latency(x: dict, name: str, vals: dict, pcts: dict, key: tuple,
                  refuse: Callable[[str, Any, dict], None] | None = None) -> None:
    """min/max/mean/stddev of latency object ``name`` of a JSON direction into ``vals`` (µs, as
    ``<name>_min_us`` ...) and its percentiles into ``pcts[key]`` (each also handed to ``refuse``)."""
    obj, f = _lat_block(x, name)
    if not obj:
        return
    vals.update({f"{name}_{stat}_us": obj.get(stat, 0) * f for stat in ("min", "max", "mean", "stddev")})
    p = _json_pcts(obj, f, refuse)
    if p:
        pcts[key] = p


def _json_pcts(obj: dict | None, factor: float,
               refuse: Callable[[str, Any, dict], None] | None = None) -> dict[float, float]:
    """``refuse(key, value as printed, row)``: checks a percentile's row against the table's bounds."""
    out: dict[float, float] = {}
    for k, v in ((obj or {}).get("percentile") or {}).items():
        try:
            p = float(k)
        except ValueError:
            continue
        if p <= 0:  # unused slots print as "0.00": 0
            continue
        out[p] = float(v) * factor
        if refuse is not None:
            refuse(k, v, {"percentile": p, "value_us": out[p]})
    return out


def _json_line(text: str, start: int, end: int, key: str, value: Any) -> int | None:
    """The line of the first ``"key": value`` in ``text[start:end]`` (json keeps no positions: searched for
    only when a value is refused); None if there is none."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r'"' + re.escape(key) + r'"\s*:\s*', text[start:end], flags=re.ASCII):
        try:
            got = decoder.raw_decode(text, start + m.end())[0]
        except json.JSONDecodeError:
            continue
        if got == value:
            return text.count("\n", 0, start + m.start()) + 1
    return None


def _job_lines(text: str, start_line: int) -> list[int]:
    return [start_line + text[: m.start()].count("\n") for m in re.finditer(r'"jobname"\s*:', text, flags=re.ASCII)]


def parse_json(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "fio JSON output")
    m = re.search(r"^\{", text, re.M | re.ASCII)
    if not m:
        raise ParseError(path, None, "a fio JSON document (a line starting with '{')", "none")
    start = m.start()
    prefix_lines = text[:start].count("\n")
    try:
        doc, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        line = exc.lineno
        tail = text[exc.pos:].strip()
        if not tail:
            raise ParseError(path, line, "a complete fio JSON document (the file ends inside it: fio killed "
                             "or disk full?)", "end of file") from None
        raise ParseError(path, line, f"valid fio JSON ({exc.msg})", text[exc.pos:exc.pos + 40]) from None
    if not isinstance(doc, dict) or "jobs" not in doc or not isinstance(doc["jobs"], list):
        raise ParseError(path, prefix_lines + 1, "a fio JSON document with \"fio version\" and \"jobs\"",
                         str(list(doc)[:5]) if isinstance(doc, dict) else type(doc).__name__)
    out = _Out(path, sink)
    version = doc.get("fio version")
    out.version = version
    vt = _version_tuple(version)
    io_bytes_is_kib = bool(vt) and vt < (2, 21)
    report_time = None
    if isinstance(doc.get("timestamp"), (int, float)):
        report_time = datetime.fromtimestamp(doc["timestamp"], tz=timezone.utc)
    glob_opts = doc.get("global options") or {}
    is_plus = '"bins"' in text[start:end]
    fmt = "json+" if is_plus else "json"
    lines = _job_lines(text[start:end], 1 + prefix_lines)
    job_at = [start + m.start() for m in re.finditer(r'"jobname"\s*:', text[start:end], flags=re.ASCII)]
    for n, job in enumerate(doc["jobs"]):
        if not isinstance(job, dict):
            raise ParseError(path, None, "a JSON object per fio job", type(job).__name__)
        line = lines[n] if n < len(lines) else None
        at = job_at[n] if n < len(job_at) else start

        def refuse(k: str, v: Any, row: dict, at: int = at, line: int | None = line) -> None:
            # (the table keeps no line: a percentile is refused at the line printing it, searched for only then)
            bounds.refuse_outside(path, lambda _c: _json_line(text, at, end, k, v) or line, _PCT_BOUNDS, row)
        opts = {**glob_opts, **(job.get("job options") or {})}
        directions: dict[str, dict] = {}
        pcts: dict[tuple[str, str], dict[float, float]] = {}
        for d in DIRECTIONS:
            x = job.get(d)
            if not isinstance(x, dict):
                continue
            total_ios = x.get("total_ios")
            if d == "sync":
                if not total_ios:
                    continue
                vals = {"total_ios": total_ios}
                _take_latency(x, "lat", vals, pcts, (d, "sync"), refuse)
                directions[d] = vals
                continue
            if "io_kbytes" in x:
                io_kib = float(x["io_kbytes"])
            elif "io_bytes" in x:
                io_kib = float(x["io_bytes"]) if io_bytes_is_kib else float(x["io_bytes"]) / 1024
            else:
                io_kib = None
            if not io_kib and not total_ios and not x.get("bw"):
                continue  # a direction the job did not use: fio prints zeros (docs/formats.md §6.1)
            vals = {"io_kib": io_kib, "bw_kib_s": x.get("bw"), "iops": x.get("iops"), "runtime_ms": x.get("runtime"),
                    "total_ios": total_ios, "bw_min_kib_s": x.get("bw_min"), "bw_max_kib_s": x.get("bw_max"),
                    "bw_mean_kib_s": x.get("bw_mean"), "bw_samples": x.get("bw_samples"),
                    "iops_mean": x.get("iops_mean")}
            slat, f = _lat_block(x, "slat")
            if slat:
                vals["slat_mean_us"] = slat.get("mean", 0) * f
            _take_latency(x, "clat", vals, pcts, (d, "clat"), refuse)
            _take_latency(x, "lat", vals, pcts, (d, "lat"), refuse)
            directions[d] = vals
        jobrow = {"jobname": job.get("jobname"), "groupid": job.get("groupid"), "error": job.get("error"),
                  "usr_cpu_pct": job.get("usr_cpu"), "sys_cpu_pct": job.get("sys_cpu"),
                  "fio_version": version, "report_time": report_time, "line": line}
        if str(opts.get("group_reporting", "")).strip() in ("1", "", "true") and "group_reporting" in opts:
            n = _int_opt(opts.get("numjobs")) or 1
            jobrow.update(group_reported=True, jobs_in_report=n)
        out.add_job(fmt, jobrow, opts, directions, pcts)
    for du in doc.get("disk_util") or []:
        out.disks.append({"report_format": fmt, "device": du.get("name"), "read_ios": du.get("read_ios"),
                          "write_ios": du.get("write_ios"), "read_merges": du.get("read_merges"),
                          "write_merges": du.get("write_merges"), "read_ticks_ms": du.get("read_ticks"),
                          "write_ticks_ms": du.get("write_ticks"), "in_queue_ms": du.get("in_queue"),
                          "util_pct": du.get("util")})
    # Text around the document (--output-format=json,normal or merged stderr): read it too.
    rest_before, rest_after = text[:start], text[end:]
    if rest_before.strip():
        _parse_text(rest_before, 1, out, quiet=True)
    if rest_after.strip():
        _parse_text(rest_after, 1 + text[:end].count("\n"), out, quiet=True)
    out.finish()


# -- terse ----------------------------------------------------------------------------------

# Per-direction fields, docs/formats.md §6.2 (HOWTO "Terse output"). Latencies in µs, bw KiB/s, io KiB.
_TERSE_DIR = (["io_kib", "bw_kib_s", "iops", "runtime_ms",
               "slat_min", "slat_max", "slat_mean_us", "slat_dev",
               "clat_min_us", "clat_max_us", "clat_mean_us", "clat_stddev_us"]
              + [f"pct{i}" for i in range(20)]
              + ["lat_min_us", "lat_max_us", "lat_mean_us", "lat_stddev_us",
                 "bw_min_kib_s", "bw_max_kib_s", "bw_agg_pct", "bw_mean_kib_s", "bw_dev"])
_TERSE_V5_EXTRA = ["bw_samples", "iops_min", "iops_max", "iops_mean", "iops_dev", "iops_samples"]
# version -> (has fio version field, directions, extra per-direction fields)
TERSE_VERSIONS = {
    2: (False, ("read", "write", "trim"), []),
    3: (True, ("read", "write"), []),
    4: (True, ("read", "write", "trim"), []),
    5: (True, ("read", "write", "trim"), _TERSE_V5_EXTRA),
}
_TERSE_TAIL = 5 + 7 + 10 + 12  # cpu, IO depths, lat us, lat ms
_TERSE_LINE = re.compile(r"^(\d+);[^;\n]*;[^\n]*$", re.ASCII)


def _is_terse(line: str, strict: bool = True) -> bool:
    """A terse line; ``strict=False`` also takes a cut-off one (inside a file already known to be fio's)."""
    return bool(_TERSE_LINE.match(line)) and line.count(";") >= (40 if strict else 8)


def _f(tok: str) -> float:
    return to_float(tok.rstrip("%"))


def _parse_terse(line: str, lineno: int, path: Path, out: _Out, truncated: bool) -> None:
    fields = line.rstrip("\r").split(";")
    ver = to_int(fields[0])
    if ver not in TERSE_VERSIONS:
        raise ParseError(path, lineno, f"fio terse version {', '.join(map(str, TERSE_VERSIONS))} "
                         f"(docs/formats.md §6.2); terse version {ver} is not known to kansoku", line[:40])
    has_ver, dirs, extra = TERSE_VERSIONS[ver]
    head = 5 if has_ver else 4
    per_dir = len(_TERSE_DIR) + len(extra)
    need = head + per_dir * len(dirs) + _TERSE_TAIL
    if len(fields) < need:
        if truncated:
            out.sink.warn(lineno, f"terse line cut off ({len(fields)} of {need} fields); skipped")
            return
        raise ParseError(path, lineno, f"a fio terse v{ver} line with at least {need} ';'-separated fields",
                         f"{len(fields)} fields")
    try:
        if has_ver:
            fio_version, jobname, groupid, error = fields[1], fields[2], to_int(fields[3]), to_int(fields[4])
        else:
            fio_version, jobname, groupid, error = None, fields[1], to_int(fields[2]), to_int(fields[3])
        directions: dict[str, dict] = {}
        pcts: dict[tuple[str, str], dict[float, float]] = {}
        pos = head
        for d in dirs:
            vals = dict(zip(_TERSE_DIR + extra, fields[pos:pos + per_dir]))
            pos += per_dir
            p: dict[float, float] = {}
            for i in range(20):
                k, _, v = vals.pop(f"pct{i}").partition("=")
                if _f(k) > 0:
                    p[_f(k)] = _f(v)
                    bounds.refuse_outside(path, lineno, _PCT_BOUNDS, {"percentile": _f(k), "value_us": _f(v)})
            row = {k: _f(v) for k, v in vals.items() if k in (
                "io_kib", "bw_kib_s", "iops", "runtime_ms", "slat_mean_us", "clat_min_us", "clat_max_us",
                "clat_mean_us", "clat_stddev_us", "lat_min_us", "lat_max_us", "lat_mean_us", "lat_stddev_us",
                "bw_min_kib_s", "bw_max_kib_s", "bw_mean_kib_s", "iops_mean")}
            if "bw_samples" in vals:
                row["bw_samples"] = int(_f(vals["bw_samples"]))
            if not row["io_kib"] and not row["bw_kib_s"]:
                continue
            directions[d] = row
            if p:
                pcts[(d, "clat")] = p
        cpu = fields[pos:pos + 5]
        pos += _TERSE_TAIL
    except ValueError as exc:
        raise ParseError(path, lineno, f"numbers in the fields of a fio terse v{ver} line", str(exc)) from None
    out.version = out.version or fio_version
    jobrow = {"jobname": jobname, "groupid": groupid, "error": error, "usr_cpu_pct": _f(cpu[0]),
              "sys_cpu_pct": _f(cpu[1]), "fio_version": fio_version, "line": lineno}
    out.add_job("terse", jobrow, {}, directions, pcts)
    rest = fields[pos:]
    while len(rest) >= 9 and rest[8].endswith("%") and not re.fullmatch(r"[\d.]+%?", rest[0], flags=re.ASCII):
        r = rest[:9]
        try:
            out.disks.append({"report_format": "terse", "device": r[0], "read_ios": int(r[1]),
                              "write_ios": int(r[2]), "read_merges": int(r[3]), "write_merges": int(r[4]),
                              "read_ticks_ms": int(r[5]), "write_ticks_ms": int(r[6]), "in_queue_ms": int(r[7]),
                              "util_pct": _f(r[8])})
        except ValueError:
            break
        rest = rest[9:]


# -- normal text ------------------------------------------------------------------------------

_BANNER = re.compile(r"^(?P<name>.+?): \(g=(?P<g>\d+)\): rw=(?P<rw>[^,]+), bs=(?P<bs>.+?), "
                     r"ioengine=(?P<ioengine>[^,]+), iodepth=(?P<iodepth>\d+)", re.ASCII)
_JOB = re.compile(r"^(?P<name>.+?): \(groupid=(?P<g>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>-?\d+)", re.ASCII)
_VERSION = re.compile(r"^(fio-\d+\.\d+\S*)\s*$", re.ASCII)
_DIR3 = re.compile(r"^\s+(?P<dir>read|write|trim|mixed)\s*: IOPS=(?P<iops>[\d.]+[kKMG]?), "
                   r"BW=(?P<bw>[\d.]+)(?P<bwu>[kKMGTP]?i?B)/s \([^)]*\)"
                   r"\((?P<io>[\d.]+)(?P<iou>[kKMGTP]?i?B)/(?P<rt>\d+)msec\)", re.ASCII)
_DIR2 = re.compile(r"^\s+(?P<dir>read|write|trim|mixed)\s*: io=(?P<io>[\d.]+)(?P<iou>[KMGTP]?B), "
                   r"bw=(?P<bw>[\d.]+)(?P<bwu>[KMGTP]?B)/s, iops=(?P<iops>[\d.]+[kKM]?)\s*, runt=\s*(?P<rt>\d+)msec", re.ASCII)
_LAT = re.compile(r"^\s+(?P<kind>slat|clat|lat|sync)\s*\((?P<unit>nsec|usec|msec|sec)\): min=\s*(?P<min>[\d.]+[kKM]?)\s*, "
                  r"max=\s*(?P<max>[\d.]+[kKM]?)\s*, avg=\s*(?P<avg>[\d.]+[kKM]?)\s*, "
                  r"stdev=\s*(?P<sd>[\d.]+[kKM]?)", re.ASCII)
_PCT_HEAD = re.compile(r"^\s+(?P<kind>clat|lat|sync) percentiles \((?P<unit>nsec|usec|msec)\):", re.ASCII)
_PCT_ITEM = re.compile(r"(?P<p>[\d.]+)th=\[\s*(?P<v>\d+)\]", re.ASCII)
_PCT_LINE = re.compile(r"\s*\|(?:\s*[\d.]+th=\[\s*\d+\],?)+\s*", re.ASCII)
_BW = re.compile(r"^\s+bw \(\s*(?P<u>[KMG]i?B)\s*/s\)\s*: min=\s*(?P<min>[\d.]+), max=\s*(?P<max>[\d.]+), "
                 r"per=\s*[\d.]+%, avg=\s*(?P<avg>[\d.]+), stdev=\s*[\d.]+(?:, samples=\s*(?P<n>\d+))?", re.ASCII)
_IOPS = re.compile(r"^\s+iops\s*: min=\s*\d+, max=\s*\d+, avg=\s*(?P<avg>[\d.]+)", re.ASCII)
_CPU = re.compile(r"^\s+cpu\s*: usr=(?P<usr>[\d.]+)%, sys=(?P<sys>[\d.]+)%", re.ASCII)
_ISSUED = re.compile(r"^\s+issued[ a-z]*: total=(?P<t>\S+)", re.ASCII)
_SYNC_HEAD = re.compile(r"^\s+fsync/fdatasync/sync_file_range:", re.ASCII)
_DISK_HEAD = re.compile(r"^Disk stats \(read/write\):", re.ASCII)
_DISK = re.compile(r"^\s+(?P<dev>[^\s:]+): ios=(?P<r>\d+)/(?P<w>\d+),(?: sectors=\d+/\d+,)? merge=(?P<rm>\d+)/(?P<wm>\d+), "
                   r"ticks=(?P<rt>\d+)/(?P<wt>\d+), in_queue=(?P<q>\d+), util=(?P<u>[\d.]+)%", re.ASCII)
_STATUS = re.compile(r"^Run status group \d+", re.ASCII)


def sniff_text(head: FileHead) -> bool:
    text = head.text
    if '"fio version"' in text or not ("(groupid=" in text or "(g=" in text or ";" in text) or head.is_binary:
        return False
    for line in text.replace("\r", "\n").splitlines()[:400]:
        if _JOB.match(line) or _BANNER.match(line) or _is_terse(line):
            return True
    return False


def _percentiles(line: str, lineno: int, path: Path, unit: float, into: dict[float, float]) -> None:
    """One line of a percentile list into ``into`` (µs), read whole: its items alone (a search for items would
    read a damaged '1e300.00th' as 300), each checked against the table's bounds at its line, which the table
    does not keep. ValueError: not such a line."""
    if not _PCT_LINE.fullmatch(line):
        raise ValueError(line)
    for pm in _PCT_ITEM.finditer(line):
        p, v = float(pm.group("p")), float(pm.group("v")) * unit
        bounds.refuse_outside(path, lineno, _PCT_BOUNDS, {"percentile": p, "value_us": v})
        into[p] = v


def _parse_text(text: str, first_line: int, out: _Out, quiet: bool = False) -> None:
    path, sink = out.path, out.sink
    raw_lines = text.split("\n")
    truncated = bool(raw_lines) and raw_lines[-1].strip() != ""
    banners: dict[str, dict[str, Any]] = {}
    job: dict | None = None

    def flush() -> None:
        nonlocal job
        if job is not None:
            opts = dict(banners.get(job["row"]["jobname"], {}))
            jobs_n = job["jobs"]
            row = job["row"]
            if jobs_n > 1:
                opts.setdefault("numjobs", str(jobs_n))
                row.update(group_reported=True, jobs_in_report=jobs_n)
            if job["issued"] and "sync" in job["dirs"]:
                job["dirs"]["sync"].setdefault("total_ios", job["issued"][3] if len(job["issued"]) > 3 else None)
            for d, vals in job["dirs"].items():
                i = {"read": 0, "write": 1, "trim": 2}.get(d)
                if i is not None and i < len(job["issued"]):
                    vals.setdefault("total_ios", job["issued"][i])
            out.add_job("normal", row, opts, job["dirs"], job["pcts"])
        job = None

    cur_dir: str | None = None
    pct_key: tuple[str, str] | None = None
    pct_unit = 1.0
    in_disk = False
    for idx, raw in enumerate(raw_lines):
        lineno = first_line + idx
        # ETA lines written with '\r' (docs/formats.md §0.2): keep what follows the last '\r'.
        line = raw.split("\r")[-1] if "\r" in raw.rstrip("\r") else raw.rstrip("\r")
        is_last = idx == len(raw_lines) - 1
        if not line.strip():
            pct_key = None
            continue
        # the figures are on indented lines (a job's name, which may be any text, starts its line)
        if line[0] in " \t" and foreign_digit(line):
            raise ParseError(path, lineno, "ASCII digits", foreign_digit(line))
        if _is_terse(line, strict=False):
            _parse_terse(line, lineno, path, out, truncated and is_last)
            continue
        m = _VERSION.match(line)
        if m:
            out.version = out.version or m.group(1)
            continue
        m = _BANNER.match(line)
        if m:
            banners.setdefault(m.group("name"), {
                "rw": m.group("rw").strip(), "bs": m.group("bs").split(",")[0].replace("(R)", "").strip()
                .split("-")[0], "ioengine": m.group("ioengine").strip(), "iodepth": m.group("iodepth")})
            continue
        m = _JOB.match(line)
        if m:
            flush()
            job = {"row": {"jobname": m.group("name"), "groupid": int(m.group("g")), "error": int(m.group("err")),
                           "fio_version": out.version, "line": lineno},
                   "jobs": int(m.group("jobs")), "dirs": {}, "pcts": {}, "issued": []}
            cur_dir, pct_key, in_disk = None, None, False
            continue
        if _STATUS.match(line):
            flush()
            cur_dir, pct_key = None, None
            continue
        if _DISK_HEAD.match(line):
            flush()
            in_disk = True
            continue
        if in_disk:
            m = _DISK.match(line)
            if m:
                out.disks.append({"report_format": "normal", "device": m.group("dev"), "read_ios": int(m.group("r")),
                                  "write_ios": int(m.group("w")), "read_merges": int(m.group("rm")),
                                  "write_merges": int(m.group("wm")), "read_ticks_ms": int(m.group("rt")),
                                  "write_ticks_ms": int(m.group("wt")), "in_queue_ms": int(m.group("q")),
                                  "util_pct": float(m.group("u"))})
            continue
        if job is None:
            continue
        try:
            dir_match = None
            for rx, binary_units in ((_DIR3, False), (_DIR2, True)):  # fio 3.x / 2.x direction lines
                dir_match = rx.match(line)
                if dir_match:
                    m = dir_match
                    cur_dir, pct_key = m.group("dir"), None
                    job["dirs"][cur_dir] = {
                        "iops": _suffixed(m.group("iops")),
                        "bw_kib_s": _bytes(float(m.group("bw")), m.group("bwu"), binary_units) / 1024,
                        "io_kib": _bytes(float(m.group("io")), m.group("iou"), binary_units) / 1024,
                        "runtime_ms": float(m.group("rt"))}
                    break
            if dir_match:
                continue
            if _SYNC_HEAD.match(line):
                cur_dir, pct_key = "sync", None
                continue
            m = _LAT.match(line)
            if m and cur_dir:
                f = _TIME_US[m.group("unit")]
                kind = m.group("kind")
                vals = job["dirs"].setdefault(cur_dir, {})
                mn, mx, avg, sd = (_suffixed(m.group(k)) * f for k in ("min", "max", "avg", "sd"))
                if kind == "slat":
                    vals["slat_mean_us"] = avg
                elif kind == "clat":
                    vals.update(clat_min_us=mn, clat_max_us=mx, clat_mean_us=avg, clat_stddev_us=sd)
                else:  # lat, or sync (the sync latency)
                    vals.update(lat_min_us=mn, lat_max_us=mx, lat_mean_us=avg, lat_stddev_us=sd)
                continue
            m = _PCT_HEAD.match(line)
            if m and cur_dir:
                pct_key = (cur_dir, m.group("kind"))
                pct_unit = _TIME_US[m.group("unit")]
                job["pcts"].setdefault(pct_key, {})
                continue
            if pct_key and line.lstrip().startswith("|"):
                _percentiles(line, lineno, path, pct_unit, job["pcts"][pct_key])
                continue
            pct_key = None
            m = _BW.match(line)
            if m and cur_dir in job["dirs"]:
                unit = _IEC[m.group("u")[0]] / 1024
                job["dirs"][cur_dir].update(bw_min_kib_s=float(m.group("min")) * unit,
                                            bw_max_kib_s=float(m.group("max")) * unit,
                                            bw_mean_kib_s=float(m.group("avg")) * unit,
                                            bw_samples=int(m.group("n")) if m.group("n") else None)
                continue
            m = _IOPS.match(line)
            if m and cur_dir in job["dirs"]:
                job["dirs"][cur_dir]["iops_mean"] = float(m.group("avg"))
                continue
            m = _CPU.match(line)
            if m:
                job["row"].update(usr_cpu_pct=float(m.group("usr")), sys_cpu_pct=float(m.group("sys")))
                continue
            m = _ISSUED.match(line)
            if m:
                job["issued"] = [int(x) for x in re.findall(r"\d+", m.group("t").split("short")[0], flags=re.ASCII)]
                continue
        except (ValueError, KeyError) as exc:
            if truncated and is_last:
                sink.warn(lineno, f"last line is cut off; skipped: {line.strip()!r}")
                continue
            raise ParseError(path, lineno, "a fio result line with numbers and known units", line.strip()) from exc
        if truncated and is_last and re.match(r"^\s+(read|write|trim)\s*:", line, flags=re.ASCII):
            sink.warn(lineno, f"last line is cut off (fio killed?); skipped: {line.strip()!r}")
    flush()


def parse_text(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "fio output")
    out = _Out(path, sink)
    errline = next((l.strip() for l in text.splitlines() if l.startswith("fio: ") and "err" in l), "")
    out.error_text = errline[:200]
    _parse_text(text, 1, out)
    if not out.jobs:
        reported = [l for l in text.splitlines() if _JOB.match(l) or _is_terse(l)]
        if not reported:
            if not _BANNER_ONLY.search(text):
                raise ParseError(path, None, "fio job results (a 'NAME: (groupid=N, jobs=N): err=' block or a "
                                 "terse line)", "neither results nor a fio job banner")
            # killed (or still running) before it reported: stored as a killed run, like an aborted pgbench
            note = "only the job banner: fio was killed before it reported" + (f" ({errline})" if errline else "")
            sink.warn(None, note + "; the run is marked killed and gives no fio numbers")
            out.status = ("killed", note)
    out.finish()


# The lines fio prints before any result: 'NAME: (g=0): rw=..., ioengine=...', 'fio-3.33', 'Starting N process'.
_BANNER_ONLY = re.compile(r"^\S+: \(g=\d+\): rw=.*$|^Starting \d+ (?:process|thread)", re.M | re.ASCII)


FORMATS = [
    Format("fio", "fio-json", "fio --output-format=json / json+ (fio 2.x .. 3.x)", sniff_json, parse_json,
           priority=20),
    Format("fio", "fio-text", "fio normal (human) output and terse lines (v2..v5), alone or mixed",
           sniff_text, parse_text, priority=15),
]

# What fio prints (parsers/bounds.py): latencies within a run, rates and counts never negative, percentiles
# of 0..100; a JSON report's timestamp from a real clock.
_FIO_LAT = ("slat_mean_us", "clat_min_us", "clat_max_us", "clat_mean_us", "clat_stddev_us", "lat_min_us",
            "lat_max_us", "lat_mean_us", "lat_stddev_us", "clat_p50_us", "clat_p95_us", "clat_p99_us",
            "clat_p99_9_us")
BOUNDS = [
    TableBounds("fio_jobs", bounds=(
        *(Bound(c, 0, LONGEST_US, "a latency within a run") for c in _FIO_LAT),
        Bound("io_kib", 0, MOST, "KiB transferred"),
        Bound("bw_kib_s", 0, FASTEST_PER_S, "KiB per second"),
        Bound("bw_min_kib_s", 0, FASTEST_PER_S, "KiB per second"),
        Bound("bw_max_kib_s", 0, FASTEST_PER_S, "KiB per second"),
        Bound("bw_mean_kib_s", 0, FASTEST_PER_S, "KiB per second"),
        Bound("iops", 0, FASTEST_PER_S, "I/Os per second"),
        Bound("iops_mean", 0, FASTEST_PER_S, "I/Os per second"),
        Bound("runtime_ms", 0, LONGEST_MS, "a run's duration"),
        Bound("total_ios", 0, MOST, "a count"),
        Bound("usr_cpu_pct", 0, None, "a CPU share"),
        Bound("sys_cpu_pct", 0, None, "a CPU share"),
        Bound("report_time", EARLIEST, LATEST, "a report's time"),
    )),
    TableBounds("fio_latency_percentiles", line=None, at="'job ' || job_no || ' ' || kind || ' p' || percentile",
                bounds=(Bound("percentile", 0, 100, "a percentile"),
                        Bound("value_us", 0, LONGEST_US, "a latency within a run"))),
]
# (the table keeps no line: a text report's percentiles are refused at their line as they are read)
_PCT_BOUNDS = next(tb for tb in BOUNDS if tb.table == "fio_latency_percentiles")

MODULE = ParserModule(name="fio", formats=FORMATS, schema=SCHEMA, views=VIEWS, metrics=METRICS, tables=TABLES,
                      bounds=BOUNDS, host_columns={"fio_jobs": ("host", "role")})
