#!/usr/bin/env python3
"""Benchmark: ingest of a day-long one-second binary sa file vs ``sadf -d`` alone.

    python3 bench/sa_day.py [--records 86400] [--reps 3] [--keep DIR]

sysstat's own daily file at a one-second interval holds 86,400 records; sadc cannot write one quickly
(it samples in real time), so one is made here from a real sa file (``tests/fixtures/sar/run1/sa.bin``,
sadc 12.6.1 ``-S XALL`` on a 2-CPU machine): its file header and activity list are kept and its last
statistics record is written ``--records + 1`` times with consecutive timestamps and uptimes (sadf
prints the differences between consecutive records, so the first one only sets the base). The values
are those of an idle second (every counter difference is zero); the amount of work (records, activities,
items, printed values) is that of the real file's machine over a day. The file is checked with
``sadf -d FILE -- -u`` (one line per record).

Then, in this one run and interleaved (so that load on the machine hits both alike), each in its own
process: ``sadf -d FILE -- -A`` alone (output to /dev/null), and ``tools/ingest`` of a run directory
holding the file into a fresh database. Prints the medians, the ratio (target <= 1.3), and each one's
peak RSS (target: ingest < 300 MB), and records them with ``record()`` under bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import proc_tree
from record import Figure, Load, record

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "tests" / "fixtures" / "sar" / "run1" / "sa.bin"
TIME_TARGET = 1.3
RSS_TARGET_MB = 300.0

# sysstat's sa file layout (sa.h, format magic 0x2175, sysstat 12.x): file_magic, file_header
# (header_size bytes), sa_act_nr file_activity structures (act_size bytes each), then records: a
# record_header (rec_size bytes) and, for a statistics record, each activity's items (a __nr_t count
# first when the activity's has_nr is set).
FILE_MAGIC = struct.Struct("<HHBBBBII3I48x")  # magic, format, version x4, header_size, upgraded, types[3]
R_STATS, R_RESTART, R_COMMENT = 1, 2, 4
MAX_COMMENT_LEN = 64


def _records(data: bytes):
    """(offset, length, record_type) of every record of an sa file, and the prefix length."""
    magic, fmt, _, _, _, _, header_size, _, *_ = FILE_MAGIC.unpack_from(data, 0)
    if magic != 0xD596 or fmt != 0x2175:
        raise SystemExit(f"template: not a little-endian sa file of format 0x2175 ({magic:#x}, {fmt:#x})")
    h = FILE_MAGIC.size
    act_nr, = struct.unpack_from("<I", data, h + 20)
    act_size, rec_size, extra_next = struct.unpack_from("<III", data, h + 52)
    if extra_next:
        raise SystemExit("template: extra structures in the file header are not handled")
    acts = []
    pos = h + header_size
    for i in range(act_nr):
        _id, _magic, nr, nr2, has_nr, size = struct.unpack_from("<IIiiii", data, pos + i * act_size)
        acts.append((nr, nr2, has_nr, size))
    pos += act_nr * act_size
    prefix = pos
    out = []
    while pos < len(data):
        start = pos
        rtype = data[pos + 20]
        if struct.unpack_from("<I", data, pos + 16)[0]:
            raise SystemExit("template: extra structures in a record are not handled")
        pos += rec_size
        if rtype == R_STATS:
            for nr, nr2, has_nr, size in acts:
                if has_nr:
                    nr, = struct.unpack_from("<i", data, pos)
                    pos += 4
                pos += nr * nr2 * size
        elif rtype == R_RESTART:
            pos += 4  # the number of CPUs (a file made by this sadc holds no volatile activities)
        elif rtype == R_COMMENT:
            pos += MAX_COMMENT_LEN
        else:
            raise SystemExit(f"template: record type {rtype} at {start} is not handled")
        out.append((start, pos - start, rtype))
    if pos != len(data):
        raise SystemExit("template: records do not end at the end of the file")
    return prefix, out


def make_day_file(out: Path, records: int, template: Path = TEMPLATE, start_epoch: int = 1795305600) -> None:
    """Write an sa file of ``records`` one-second samples (``records + 1`` records) from ``template``."""
    data = template.read_bytes()
    prefix, recs = _records(data)
    stats = [r for r in recs if r[2] == R_STATS]
    if not stats:
        raise SystemExit("template: no statistics record")
    off, length, _ = stats[-1]
    rec = bytearray(data[off:off + length])
    uptime0, = struct.unpack_from("<Q", rec, 0)
    # the file header's own time and date: the day written
    head = bytearray(data[:prefix])
    h = FILE_MAGIC.size
    struct.pack_into("<Q", head, h, start_epoch)
    t0 = time.gmtime(start_epoch)
    struct.pack_into("<i", head, h + 24, t0.tm_year - 1900)
    head[h + 64] = t0.tm_mday
    head[h + 65] = t0.tm_mon - 1
    with open(out, "wb") as fh:
        fh.write(head)
        for i in range(records + 1):
            t = start_epoch + i
            struct.pack_into("<QQ", rec, 0, uptime0 + 100 * i, t)
            rec[21], rec[22], rec[23] = (t // 3600) % 24, (t // 60) % 60, t % 60  # sadc's local time: UTC here
            fh.write(rec)


def check_day_file(path: Path, records: int) -> None:
    proc = subprocess.run(["sadf", "-d", str(path), "--", "-u"], capture_output=True, text=True,
                          env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    rows = [l for l in proc.stdout.splitlines() if l and not l.startswith("#")]
    if proc.returncode != 0 or len(rows) != records:
        raise SystemExit(f"generated sa file: sadf -d printed {len(rows)} records, expected {records} "
                         f"(exit {proc.returncode}: {proc.stderr.strip()[:200]})")


CHILD = r"""
import json, subprocess, sys, time
mode, sa, db = sys.argv[1], sys.argv[2], sys.argv[3]
if mode.startswith("kansoku"):
    sys.path.insert(0, sys.argv[4])
    from pathlib import Path
    from kansoku.ingest.pipeline import ingest
    from kansoku.parsers.sysstat import sa_binary
    for switch in mode.split(":")[1:]:  # a load path switched off: NAME=VALUE of sa_binary
        name, value = switch.split("=")
        setattr(sa_binary, name, type(getattr(sa_binary, name))(int(value)))
    t = time.perf_counter()
    report = ingest([Path(sa).parent], Path(db))
    dt = time.perf_counter() - t
    assert report.ok and report.committed, report.errors
    rows = sum(f.rows for f in report.files)
else:
    t = time.perf_counter()
    with open("/dev/null", "wb") as null:
        subprocess.run(["sadf", "-d", sa, "--", "-A"], stdout=null, check=True,
                       env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    dt = time.perf_counter() - t
    rows = 0
print(json.dumps({"seconds": dt, "rows": int(rows)}))
"""


# the ingest with one fast load path switched off (sa_binary): the SQL path alone is the rule they are held to
PATHS_OFF = {"kansoku:SPLIT=0": "no sadf -dh run of the activities without items (SPLIT off)",
             "kansoku:SMALL_BATCH_BYTES=0": "no Python reads of small batches (SMALL_BATCH_BYTES 0)"}


def _run_child(mode: str, sa: Path, work: Path, tag: str) -> dict:
    db = work / f"{mode}-{tag}.duckdb"
    for p in (db, Path(str(db) + ".wal")):
        p.unlink(missing_ok=True)
    shutil.rmtree(work / "blobs", ignore_errors=True)
    with tempfile.TemporaryFile() as err:
        m = proc_tree.measure([sys.executable, "-c", CHILD, mode, sa, db, ROOT / "tools"],
                              stdout=subprocess.PIPE, stderr=err, text=True, cwd=str(work))
        if m.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{mode} failed (exit {m.returncode}): {err.read().decode()[-2000:]}")
    res = json.loads(m.stdout.strip().splitlines()[-1])
    res["cpu_s"] = m.cpu_s  # the child and what it waited for (sadf)
    res["rss_mb"] = m.peak_mb  # the largest process's peak (the child's; sadf's is smaller)
    for p in (db, Path(str(db) + ".wal")):
        p.unlink(missing_ok=True)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=86_400, help="one-second records (default 86 400: a day)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each measurement (median reported)")
    ap.add_argument("--keep", type=Path, help="work in this directory and keep the generated file")
    ap.add_argument("--paths", action="store_true",
                    help="also ingest with each fast load path switched off (sa_binary SPLIT, SMALL_BATCH_BYTES), "
                         "interleaved: what each path buys over the one SQL path")
    args = ap.parse_args(argv)
    load = Load()
    if shutil.which("sadf") is None:
        raise SystemExit("sadf is not installed (apt-get install sysstat)")

    work = args.keep or Path(tempfile.mkdtemp(prefix="kansoku-bench-sa-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        run_dir = work / "bench=sa_day"
        run_dir.mkdir(exist_ok=True)
        sa = run_dir / "sa.bin"
        t = time.perf_counter()
        make_day_file(sa, args.records)
        check_day_file(sa, args.records)
        print(f"sa file: {sa} ({args.records:,} one-second records, {sa.stat().st_size / 1e6:,.0f} MB), "
              f"made and checked in {time.perf_counter() - t:.1f} s")
        print(f"machine: {os.cpu_count()} CPUs, python {sys.version.split()[0]}", flush=True)
        modes = ["sadf", "kansoku"] + (list(PATHS_OFF) if args.paths else [])
        runs: dict[str, list[dict]] = {m: [] for m in modes}
        for rep in range(args.reps):
            for mode in modes:
                res = _run_child(mode, sa, work, str(rep))
                runs[mode].append(res)
                print(f"  rep {rep + 1}: {mode:8s} {res['seconds']:8.2f} s wall  {res['cpu_s']:8.2f} s CPU  "
                      f"{res['rss_mb']:6.0f} MB peak" + (f"  {res['rows']:,} rows" if res["rows"] else ""),
                      flush=True)
        med = {m: statistics.median(r["seconds"] for r in v) for m, v in runs.items()}
        cpu = {m: statistics.median(r["cpu_s"] for r in v) for m, v in runs.items()}
        rss = {m: statistics.median(r["rss_mb"] for r in v) for m, v in runs.items()}
        ratio = med["kansoku"] / med["sadf"]
        cpu_ratio = cpu["kansoku"] / cpu["sadf"]
        # the target is on CPU (user+sys, sadf included): on a shared machine wall time says more about the
        # neighbours than about the ingest
        ok_time, ok_rss = cpu_ratio <= TIME_TARGET, rss["kansoku"] < RSS_TARGET_MB
        print()
        print(f"sadf -d -A alone : {med['sadf']:8.2f} s wall (median), {cpu['sadf']:.2f} s CPU, {rss['sadf']:.0f} MB peak")
        print(f"kansoku ingest   : {med['kansoku']:8.2f} s wall (median), {cpu['kansoku']:.2f} s CPU, "
              f"{rss['kansoku']:.0f} MB peak")
        print(f"ingest / sadf alone: {cpu_ratio:.2f} CPU (target <= {TIME_TARGET}: {'meets' if ok_time else 'MISSES'}), "
              f"{ratio:.2f} wall; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"ingest peak RSS: {rss['kansoku']:.0f} MB (target < {RSS_TARGET_MB:.0f} MB: "
              f"{'meets' if ok_rss else 'MISSES'})")
        sadf = "sadf -d -- -A"
        record("sa_day", [
            Figure("ingest / sadf, CPU", round(cpu_ratio, 2), "x", f"<= {TIME_TARGET}", ok_time, sadf,
                   {"records": args.records}),
            Figure("ingest / sadf, wall", round(ratio, 2), "x", reference=sadf, extra={"records": args.records}),
            Figure("ingest peak RSS", round(rss["kansoku"]), "MB", f"< {RSS_TARGET_MB:.0f}", ok_rss,
                   extra={"records": args.records}),
        ] + [Figure(f"ingest with {why} / with every path, CPU", round(cpu[m] / cpu["kansoku"], 2), "x",
                    reference="kansoku ingest", extra={"records": args.records})
             for m, why in PATHS_OFF.items() if m in cpu],
            load=load, raw={"records": args.records, "size_mb": round(sa.stat().st_size / 1e6, 1), "runs": runs})
        return 0 if ok_time and ok_rss else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
