#!/usr/bin/env python3
"""Damaged inputs through tools/ingest and tools/collect: every format the parsers registry knows, host layouts,
profiles, query inputs, links and shell text, each mutated the ways damaged files reach users, each ingested
into its own scratch store with a timeout; and collect plans, damaged or holding shell text, each run for real
by tools/collect (echo as the benchmark, no monitors) in its scratch directory. Each is classified:

  stored        exit 0, every stored value inside its format's bounds (parsers/bounds.py); a plan: it ran
  refused       exit 2 (a plan: 3) with the file and its line named
  refused_no_line  exit 2 with the file named, without a line
  refused_lineless exit 2 naming a binary file or a directory, which has no line to name, and saying so
                (``path (a binary file, no lines): ...``; the harness checks that the path named is one)
  unrecognised  exit 2: the damaged file is no known tool output any more (skipped, named with -v)
  run_failed    a plan ran and a run failed, named with its reason (a damaged benchmark command)
  net           exit 2 through the parsers' safety net ("expected a valid <format> file"): a damage the
                parser did not foresee, told without what it expected
  traceback     a Python traceback on stderr (or exit 1)
  hang          no exit within the timeout
  unnamed       exit 2 without the input named
  out_of_bounds exit 0 with a value stored that no tool prints (NaN, infinity, outside a declared bound),
                or a host's samples lost, or a plan's shell text executed, or a control byte printed raw
  harness_error the harness failed to build or judge the input (shown, never counted as a pass)

The inputs are built from real files: the corpus (/work/shared/corpus/real), the example's data/runs, and
tests/fixtures for the formats neither holds; a file that never makes a run by itself (a pgbench script, a query
list) is damaged inside a copy of its run directory, with the run's small outputs and its run.toml (which names
a script of SQL only). Deterministic for a given --seed and --count.

    bench/run damage                  5,000 inputs
    bench/run damage --count 300 --seed 7 --jobs 2
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tools"))
sys.path.insert(0, str(HERE / "bench"))

from kansoku import parsers  # noqa: E402
from kansoku.cli import ingest_main  # noqa: E402 -- imported once, before the children are forked
from kansoku.errors import BINARY_FILE, DIRECTORY, lineless, quoted_name  # noqa: E402
from kansoku.ingest.detect import detect_in_run  # noqa: E402
from kansoku.parsers import bounds  # noqa: E402
from kansoku.parsers.base import FileHead  # noqa: E402
from kansoku.store import outside  # noqa: E402

CORPUS = Path(os.environ.get("KANSOKU_CORPUS", "/work/shared/corpus/real"))
SOURCES = [CORPUS, HERE / "data" / "runs", HERE / "data" / "published", HERE / "tests" / "fixtures"]
LARGEST_SOURCE = 600_000  # bytes: larger real files add time, not kinds of damage
PER_FORMAT = 6  # source files kept per format
TIMEOUT_S = 60.0
KINDS = ("stored", "refused", "refused_no_line", "refused_lineless", "unrecognised", "run_failed", "net", "unnamed",
         "traceback", "hang", "out_of_bounds", "harness_error")
DEFECTS = ("unnamed", "traceback", "hang", "out_of_bounds", "harness_error")
PWNED = "kansoku-pwned"
RUN_HOSTNAME = "vm"


# -- the real files -----------------------------------------------------------------------------------------


def _text_of(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def samples() -> dict[str, list[Path]]:
    """Format name -> real files of that format (at most PER_FORMAT, from the first source that has it). A file
    that never makes a run by itself (a pgbench script, a query list: ``Format.attachment``) is taken only from
    a run directory, whose other files are then copied with it (``run_companions``)."""
    out: dict[str, list[Path]] = {}
    in_a_run: dict[Path, bool] = {}
    for root in SOURCES:
        if not root.is_dir():
            continue
        found: dict[str, list[Path]] = {}
        for p in sorted(root.rglob("*")):
            if not p.is_file() or p.is_symlink() or p.name in ("run.toml", "host.toml", "README.md"):
                continue
            if p.stat().st_size > LARGEST_SOURCE or ".duckdb" in p.name:
                continue
            d = detect_in_run(p, p.parent)
            if d.format is None or d.format.name in out:
                continue
            if d.format.attachment:
                if p.parent not in in_a_run:
                    in_a_run[p.parent] = bool(run_companions(p))
                if not in_a_run[p.parent]:
                    continue
            found.setdefault(d.format.name, []).append(p)
        for name, paths in found.items():
            step = max(1, len(paths) // PER_FORMAT)
            out[name] = paths[::step][:PER_FORMAT]
    return out


COMPANION_BYTES = 32_000  # the run's other files copied beside a damaged attachment: its small text outputs


def run_companions(src: Path) -> list[Path]:
    """The files of ``src``'s run directory that make it a run (small text outputs of a format that is not an
    attachment: pgbench's output beside its script, psql's timings beside the query list); none when the
    directory is no run."""
    out = []
    for p in sorted(src.parent.iterdir()):
        if p == src or not p.is_file() or p.is_symlink() or p.name in ("run.toml", "host.toml"):
            continue
        if p.stat().st_size > COMPANION_BYTES:
            continue
        d = detect_in_run(p, src.parent)
        if d.format is not None and not (d.format.own_runs or d.format.name == "sa-binary"):
            out.append(p)
    return out if any(not detect_in_run(p, src.parent).format.attachment for p in out) else []


def host_runs() -> list[Path]:
    """Run directories of the example with a host= directory (several hosts)."""
    runs = sorted({p.parent.parent for p in (HERE / "data" / "runs").rglob("host=*/host.toml")})
    return runs[:: max(1, len(runs) // 4)][:4]


# -- mutations of one file's bytes ---------------------------------------------------------------------------

NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")


def _fullwidth(num: bytes) -> bytes:
    return "".join(chr(0xFF10 + int(c)) if c.isdigit() else c for c in num.decode()).encode()


def _replace_number(data: bytes, rng: random.Random, make: Callable[[bytes], bytes]) -> bytes:
    nums = list(NUMBER.finditer(data[:2_000_000]))
    if not nums:
        return data + b"\n" + make(b"1") + b"\n"
    m = rng.choice(nums)
    return data[:m.start()] + make(m.group()) + data[m.end():]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _giant_line(data: bytes, rng: random.Random, limit: int) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    size = rng.choice([limit + 1, limit * 2, max(64, limit // 2)])
    junk = rng.choice([b"x", b"1 ", b"\xff", b"9,"])
    lines[i:i + rng.randint(0, 3)] = [(junk * (size // len(junk) + 1))[:size] + b"\n"]
    return b"".join(lines)


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 8])):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _append_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    b = min(len(lines), a + rng.randint(1, 50))
    tail = b"" if data.endswith(b"\n") else b"\n"
    return data + tail + b"".join(lines[a:b])


def _bad_utf8(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    j = rng.randrange(len(lines[i]) + 1)
    lines[i] = lines[i][:j] + rng.choice([b"\xff", b"\xc3", b"\xe3\x81", b"\xed\xa0\x80", b"\x00"]) + lines[i][j:]
    return b"".join(lines)


def _escape_codes(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(i, b"\x1b[2J\x1b[31merror: forged\x1b[0m\r\n")
    return b"".join(lines)


def text_mutations(limit: int) -> dict[str, Callable[[bytes, random.Random], bytes]]:
    return {
        "truncate": lambda d, r: d[: r.randrange(len(d) + 1)],
        "truncate-line": lambda d, r: b"".join(_lines(d)[: r.randrange(len(_lines(d)) + 1)]).rstrip(b"\n"),
        "byte-flip": _flip,
        "appended-copy": lambda d, r: d + (b"" if d.endswith(b"\n") else b"\n") + d,
        "appended-lines": _append_lines,
        "giant-line": lambda d, r: _giant_line(d, r, limit),
        "nan": lambda d, r: _replace_number(d, r, lambda n: r.choice([b"nan", b"NaN", b"-nan"])),
        "inf": lambda d, r: _replace_number(d, r, lambda n: r.choice([b"inf", b"-inf", b"Infinity"])),
        "1e300": lambda d, r: _replace_number(d, r, lambda n: r.choice([b"1e300", b"1e20", b"99999999999999999999"])),
        "negative": lambda d, r: _replace_number(d, r, lambda n: n[1:] if n.startswith(b"-") else b"-" + n),
        "fullwidth-digits": lambda d, r: _replace_number(d, r, _fullwidth),
        "invalid-utf8": _bad_utf8,
        "escape-codes": _escape_codes,
    }


NAME_DAMAGE = ["\nerror: forged line ", "\x1b[31mred\x1b[0m", "\r", "\x07bell", " spaces and \u3042 "]


# -- one input: a scratch run directory built from real files ------------------------------------------------


@dataclass
class Trial:
    n: int
    family: str  # the format name, or host-layout / link / shell-text
    mutation: str
    source: str
    build: Callable[[Path], Path]  # builds the input under a scratch directory, returns what to ingest
    check: Callable[[Path, Path], list[str]] | None = None  # (store, input) -> defects of a stored input
    kind: str = ""
    detail: str = ""
    extra: dict = field(default_factory=dict)
    runner: str = "ingest"  # or "collect": the input is a plan, run by tools/collect; or "queries": a query list


def _copy_run_toml(src_dir: Path, run: Path) -> None:
    for d in (src_dir, src_dir.parent):
        if (d / "run.toml").is_file():
            shutil.copy(d / "run.toml", run / "run.toml")
            return


def file_trial(n: int, fmt: str, src: Path, mutation: str, seed: int) -> Trial:
    limit = bounds.TEXT.get(fmt, bounds.REPORT).longest_line or (1 << 20)
    mut = text_mutations(limit)[mutation] if mutation != "file-name" else None
    attachment = parsers.format_named(fmt).attachment

    def build(scratch: Path) -> Path:
        rng = random.Random(seed)
        run = scratch / "run"
        run.mkdir(parents=True)
        _copy_run_toml(src.parent, run)
        for c in _companions(src) + (run_companions(src) if attachment else []):
            shutil.copy(c, run / c.name)
        raw = src.read_bytes()
        name = src.name
        if mut is None:  # the file unchanged, its name carrying a newline or escape codes
            data = raw
            stem, dot, ext = name.partition(".")
            name = stem + rng.choice(NAME_DAMAGE) + dot + ext
        elif raw[:2] == b"\x1f\x8b" and rng.random() < 0.8:  # a compressed file: damage its text, mostly
            data = gzip.compress(mut(_text_of(src), rng), mtime=0)
        else:
            data = mut(raw, rng)
        (run / name).write_bytes(data)
        return run

    def counted_once(store: Path, run: Path) -> list[str]:
        """An appended copy stored must be counted once: every table as the file read once fills it."""
        once = run.parent / "once"
        shutil.copytree(run, once)
        (once / src.name).write_bytes(src.read_bytes())
        db = run.parent / "once.duckdb"
        proc = subprocess.run([sys.executable, str(HERE / "tools" / "ingest"), "-q", "--db", str(db), str(once)],
                              capture_output=True, timeout=TIMEOUT_S)
        if proc.returncode != 0:
            return []  # the file alone is refused (a companion's damage): nothing to compare with
        got, want = _contents(store), _contents(db)
        return [f"an appended copy counted twice: {t} {want.get(t)} -> {got.get(t)}"
                for t in sorted(set(got) | set(want)) if got.get(t) != want.get(t)][:1]

    repeats = bounds.TEXT.get(fmt, bounds.REPORT).repeats
    check = counted_once if mutation == "appended-copy" and not repeats else None
    return Trial(n, fmt, mutation, _shown_path(src), build, check=check)


def _contents(store: Path) -> dict[str, tuple]:
    """Per stored table: its rows and the sum of each numeric column (what a doubled file doubles)."""
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    try:
        cols: dict[str, list[str]] = {}
        for t, c in con.execute("SELECT table_name, column_name FROM information_schema.columns WHERE data_type IN "
                                "('BIGINT', 'INTEGER', 'DOUBLE', 'HUGEINT', 'SMALLINT', 'FLOAT') AND table_name IN "
                                "(SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE') "
                                "AND column_name NOT IN ('line', 'first_line', 'size_bytes', 'bytes')").fetchall():
            cols.setdefault(t, []).append(c)
        out = {}
        for t, cs in cols.items():
            sums = ", ".join(f'round(sum("{c}"::DOUBLE), 6)' for c in cs)
            row = con.execute(f'SELECT count(*), {sums} FROM "{t}"').fetchone()
            if row[0]:
                out[t] = row
        return out
    finally:
        con.close()


def _companions(src: Path) -> list[Path]:
    """The files a published table is read with: the sidecar naming a CSV, the CSV a sidecar names."""
    out = []
    for p in sorted(src.parent.iterdir()):
        if p == src or not p.is_file():
            continue
        if src.suffix == ".csv" and p.suffix == ".toml" and f'"{src.name}"' in p.read_text(errors="replace"):
            out.append(p)
        elif src.suffix == ".toml" and p.suffix == ".csv" and f'"{p.name}"' in src.read_text(errors="replace"):
            out.append(p)
    return out


def _shown_path(p: Path) -> str:
    for root in SOURCES:
        try:
            return f"{root.name}/{p.relative_to(root)}"
        except ValueError:
            pass
    return str(p)


# host layouts: a run of the example with one host= directory, cut to its small files


def _small_host_run(src: Path, run: Path) -> None:
    run.mkdir(parents=True)
    for name in ("run.toml", "vmstat.txt", "pgbench.log"):
        if (src / name).is_file():
            shutil.copy(src / name, run / name)
    for h in sorted(src.glob("host=*")):
        (run / h.name).mkdir()
        for name in ("host.toml", "vmstat.txt", "pg_stat_bgwriter.before.csv", "pg_stat_bgwriter.after.csv"):
            if (h / name).is_file():
                shutil.copy(h / name, run / h.name / name)


def _host_toml_edit(run: Path, edit: Callable[[str], str]) -> None:
    for t in sorted(run.glob("host=*/host.toml")):
        t.write_text(edit(t.read_text(encoding="utf-8")), encoding="utf-8")


def _set_key(text: str, key: str, value: str) -> str:
    return re.sub(rf"(?m)^{key} = .*$", lambda m: f"{key} = {value}", text, count=1)


def _hosts_with_samples(store: Path, run_input: Path) -> list[str]:
    """A host= directory holding a vmstat.txt must have its samples stored under a host of its own."""
    import duckdb

    dirs = [h for h in run_input.rglob("host=*") if (h / "vmstat.txt").is_file() and (h / "host.toml").is_file()]
    expected = len(dirs) + (1 if (run_input / "vmstat.txt").is_file() else 0)
    con = duckdb.connect(str(store), read_only=True)
    try:
        got = con.execute("SELECT count(DISTINCT coalesce(host, '')) FROM sys_metrics WHERE tool = 'vmstat'"
                          ).fetchone()[0]
    finally:
        con.close()
    return [] if got >= expected else [f"vmstat samples of {expected} hosts given, of {got} stored"]


LAYOUTS: dict[str, Callable[[Path, random.Random], None]] = {
    "host.toml missing": lambda run, r: [t.unlink() for t in run.glob("host=*/host.toml")],
    "host.toml alone": lambda run, r: [f.unlink() for h in run.glob("host=*") for f in h.iterdir()
                                       if f.name != "host.toml"],
    "two hosts, one hostname": lambda run, r: [shutil.copytree(h, h.with_name(h.name + "2"))
                                               for h in list(run.glob("host=*"))],
    "host named as the run's host": lambda run, r: _host_toml_edit(run, lambda t: _set_key(t, "hostname",
                                                                                            f'"{RUN_HOSTNAME}"')),
    "nested host= directory": lambda run, r: [shutil.copytree(h, h / "host=inner") for h in list(run.glob("host=*"))],
    "empty host= directory": lambda run, r: (run / "host=empty").mkdir(),
    "host.toml not UTF-8": lambda run, r: [t.write_bytes(t.read_bytes().replace(b"dbserver", b"db\xffserver", 1))
                                           for t in run.glob("host=*/host.toml")],
    "host.toml not TOML": lambda run, r: _host_toml_edit(run, lambda t: t.replace('role = "server"', "role = server")),
    "clock_offset_s nan": lambda run, r: _host_toml_edit(run, lambda t: _set_key(t, "clock_offset_s",
                                                                                  r.choice(["nan", "inf", "-inf"]))),
    "clock_offset_s 1e300": lambda run, r: _host_toml_edit(run, lambda t: _set_key(t, "clock_offset_s",
                                                                                    r.choice(["1e300", "-1e300"]))),
    "machine a string": lambda run, r: _host_toml_edit(run, lambda t: re.sub(r"(?ms)^\[machine\].*?(?=^\[versions\])",
                                                                             'machine = "x"\n[versions0]\n', t)),
    "hostname with escape codes": lambda run, r: _host_toml_edit(run, lambda t: _set_key(
        t, "hostname", '"db\\u001b[31m\\nerror: forged"')),
    "host.toml truncated": lambda run, r: [t.write_bytes(t.read_bytes()[: r.randrange(1, t.stat().st_size)])
                                           for t in run.glob("host=*/host.toml")],
    "host.toml byte flip": lambda run, r: [t.write_bytes(_flip(t.read_bytes(), r)) for t in run.glob("host=*/host.toml")],
    "host directory name with a newline": lambda run, r: [h.rename(h.with_name("host=a\nerror: forged"))
                                                          for h in list(run.glob("host=*"))],
    "host= directory a link out of the tree": lambda run, r: [
        (shutil.rmtree(h), h.symlink_to(Path(tempfile.gettempdir()))) for h in list(run.glob("host=*"))],
}


def layout_trial(n: int, src: Path, mutation: str, seed: int) -> Trial:
    def build(scratch: Path) -> Path:
        run = scratch / "run"
        _small_host_run(src, run)
        LAYOUTS[mutation](run, random.Random(seed))
        return run

    return Trial(n, "host-layout", mutation, _shown_path(src), build, check=_hosts_with_samples)


# links and shell text in a run's files and plans


def _shell_texts(scratch: Path) -> list[str]:
    mark = scratch / PWNED
    return [f"$(touch {mark})", f"`touch {mark}`", f"; touch {mark};", f"x' ; touch {mark} ; '",
            f'"; touch {mark}; "']


SHELL_PLACES = ("run.toml command", "run.toml factor", "host.toml collect", "host.toml hostname", "file name",
                "sql script")


def shell_trial(n: int, src: Path, place: str, seed: int) -> Trial:
    def build(scratch: Path) -> Path:
        rng = random.Random(seed)
        text = rng.choice(_shell_texts(scratch))
        quoted = json.dumps(text)
        run = scratch / "run"
        _small_host_run(src, run)
        rt = run / "run.toml"
        if place == "run.toml command":
            rt.write_text(_set_key(rt.read_text(), "benchmark", quoted))
        elif place == "run.toml factor":
            rt.write_text(_set_key(rt.read_text(), "workload", quoted))
        elif place == "host.toml collect":
            _host_toml_edit(run, lambda t: _set_key(t, "vmstat", quoted))
        elif place == "host.toml hostname":
            _host_toml_edit(run, lambda t: _set_key(t, "hostname", quoted))
        elif place == "file name":
            (run / "vmstat.txt").rename(run / f"vmstat{text.replace('/', '_')}.txt")
        else:
            (run / "read.sql").write_text(f"\\set aid random(1, 100000 * :scale)\n\\shell {text}\n"
                                          f"SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
        return run

    return Trial(n, "shell-text", place, _shown_path(src), build)


LINKS = ("to /etc/passwd", "to a file outside the run", "dangling", "a loop", "to the run's parent")


def link_trial(n: int, src: Path, kind: str, seed: int) -> Trial:
    def build(scratch: Path) -> Path:
        run = scratch / "run"
        _small_host_run(src, run)
        outside = scratch / "outside"
        outside.mkdir()
        shutil.copy(src / "vmstat.txt", outside / "vmstat.txt")
        target = {"to /etc/passwd": Path("/etc/passwd"), "to a file outside the run": outside / "vmstat.txt",
                  "dangling": scratch / "nothing", "a loop": run / "loop.txt",
                  "to the run's parent": scratch}[kind]
        (run / ("loop.txt" if kind == "a loop" else "linked.txt")).symlink_to(target)
        return run

    def check(store: Path, run: Path) -> list[str]:
        import duckdb

        con = duckdb.connect(str(store), read_only=True)
        try:
            n_out = con.execute("SELECT count(*) FROM sources WHERE file_name LIKE 'linked%'").fetchone()[0]
        finally:
            con.close()
        return [f"a file read through a link that leaves the run ({kind})"] if n_out else []

    return Trial(n, "link", kind, _shown_path(src), build, check=check)


# collect plans: a local campaign that runs in a second (echo as its benchmark, no monitors), damaged, then run
# for real by tools/collect in its scratch directory

PLAN = """\
#:schema ../../docs/collect-plan.schema.json
description = "a campaign of damage trials"
root = "runs"
seed = 7
order = "random"
group_by = ["workload"]
repetitions = 2
settle_s = 0.05
monitors = false

[factors]
study = ["plan"]
workload = ["read", "update"]

[run]
command = "echo {workload} {mode} {clients}"
output = "bench_{workload}.log"
note = "workload {workload}"
server_log = "{plan_dir}/server-{workload}.log"

[vars]
mode = "-M simple"
clients = 2

[[when]]
match = { workload = "update" }
mode = "-M prepared"

[[setup]]
on = ["workload"]
command = "echo {workload} {mode} >> setup.txt"
log = ".setup/{workload}.log"
"""
PLAN_PWNED = "kansoku-pwned"  # a plan's shell text is relative: a factor value holding '/' is refused first
PLAN_SHELL_TEXTS = [f"$(touch {PLAN_PWNED})", f"`touch {PLAN_PWNED}`", f"; touch {PLAN_PWNED};",
                    f"x' ; touch {PLAN_PWNED} ; '", f'"; touch {PLAN_PWNED}; "', f"{{mode}}$(touch {PLAN_PWNED})"]
PLAN_SHELL_PLACES = {  # where a planted text goes: (the line it replaces, its new text; <t>: the shell text,
    # escaped for a TOML string)
    "factor value": ('workload = ["read", "update"]', 'workload = ["read", "update", "<t>"]'),
    "[vars] value": ('mode = "-M simple"', 'mode = "<t>"'),
    "[[when]] value": ('mode = "-M prepared"', 'mode = "<t>"'),
    "run.command argument": ('command = "echo {workload} {mode} {clients}"', 'command = "echo {workload} <t>"'),
    "run.output": ('output = "bench_{workload}.log"', 'output = "<t>"'),
    "run.note": ('note = "workload {workload}"', 'note = "<t>"'),
    "run.server_log": ('server_log = "{plan_dir}/server-{workload}.log"', 'server_log = "<t>"'),
    "setup.log": ('log = ".setup/{workload}.log"', 'log = "<t>"'),
    "description": ('description = "a campaign of damage trials"', 'description = "<t>"'),
}


def _plan_flip(data: bytes, rng: random.Random) -> bytes:
    """A byte flip that never writes '/', '.' or '~': a damaged path of the plan stays inside its directory."""
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 8])):
        if out:
            out[rng.randrange(len(out))] = rng.choice([b for b in range(256) if b not in b"/.~"])
    return bytes(out)


def plan_trial(n: int, mutation: str, seed: int) -> Trial:
    """A collect plan damaged by ``mutation`` (a text mutation, or 'shell text: <place>')."""
    def build(scratch: Path) -> Path:
        rng = random.Random(seed)
        data = PLAN.encode()
        if mutation.startswith("shell text: "):
            line, repl = PLAN_SHELL_PLACES[mutation.removeprefix("shell text: ")]
            data = PLAN.replace(line, repl.replace("<t>", json.dumps(rng.choice(PLAN_SHELL_TEXTS))[1:-1]), 1).encode()
        elif mutation == "byte-flip":
            data = _plan_flip(data, rng)
        else:
            data = text_mutations(1 << 20)[mutation](data, rng)
        plan = scratch / "plan.toml"
        plan.write_bytes(data)
        return plan

    return Trial(n, "collect-plan", mutation, "bench/damage_trials.py PLAN", build, runner="collect")


def _run_tool(argv: list[str], cwd: Path, scratch: Path, timeout: float) -> tuple[int | None, str, str]:
    """``argv`` run in ``cwd`` in a session of its own, its output kept in ``scratch``: its exit status (None:
    killed after ``timeout`` seconds, with everything it started), stdout and stderr."""
    out, err = scratch / "stdout", scratch / "stderr"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
    return rc, out.read_text(errors="replace"), err.read_text(errors="replace")


def run_collect(t: Trial, scratch: Path, plan: Path, timeout: float) -> Trial:
    """tools/collect --plan, for real, in the plan's directory: it must run, fail a run with its reason, or refuse
    the plan naming it; never a traceback, a hang, shell text executed or a control byte printed raw."""
    rc, stdout, stderr = _run_tool([sys.executable, str(HERE / "tools" / "collect"), "--plan", str(plan)], scratch,
                                   scratch, timeout)
    if rc is None:
        t.kind, t.detail = "hang", f"no exit in {timeout:g} s"
        return t
    t.extra["exit"] = rc
    problems = []
    if any(scratch.rglob(PLAN_PWNED)):
        problems.append("shell text from a plan was executed")
    if _RAW_CONTROL.search(stderr.replace("\n", "").replace("\t", "")) or \
            _RAW_CONTROL.search(stdout.replace("\n", "").replace("\t", "")):
        problems.append("a control byte printed raw")
    if "Traceback" in stderr or rc not in (0, 1, 2, 3, 5):
        t.kind, t.detail = "traceback", _last_line(stderr) or f"exit {rc}"
    elif rc == 1:  # the campaign ran; a run failed, named with its reason (a damaged benchmark command)
        t.kind, t.detail = "run_failed", _first_error(stderr)
    elif rc:
        t.detail = _first_error(stderr)
        if str(plan) not in stderr and plan.name not in stderr:
            t.kind = "unnamed"
        else:
            t.kind = "refused" if _FILE_LINE.search(stderr) else "refused_no_line"
    else:
        t.kind = "stored"
    if problems:
        t.kind, t.detail = "out_of_bounds", "; ".join(problems)
    return t


# query lists: run by tools/collect queries against a throwaway PostgreSQL (started when its binaries and psql
# are installed), each from a run directory that already holds the run's earlier files

QUERY_LIST = """\
-- query: count
SELECT count(*) FROM generate_series(1, 2000) g;

-- query: sevens
SELECT sum(g), max(g)
  FROM generate_series(1, 2000) g
 WHERE g % 7 = 0;

-- query: digest
SELECT string_agg(md5(g::text), ',' ORDER BY g) FROM generate_series(1, 50) g;
"""
QUERY_SOURCES = {"bench/damage_trials.py QUERY_LIST": QUERY_LIST,
                 "data/runs/example/queries/parallel.sql": (HERE / "data" / "runs" / "example" / "queries"
                                                            / "parallel.sql").read_text(encoding="utf-8")}
QUERY_SHELL = {  # psql's shell escape planted where psql's lexer, not the list's reader, would meet it (<p>: the
    # file a shell would create); the last two are SQL text a shell would run, which psql sends to the server
    "meta-command line": "-- query: a\nSELECT 1;\n\\! touch <p>\n",
    "meta-command inside a statement": "-- query: a\nSELECT 1\n  FROM t \\! touch <p>\n;\n",
    "dollar quote left open": "-- query: a\nSELECT $$x;\n-- query: b\nSELECT $$ \\! touch <p> $$;\n",
    "comment left open": "-- query: a\nSELECT 1 /* ;\n-- query: b\nSELECT $q$ */ \\! touch <p> $q$;\n",
    "quoted name left open": "-- query: a\nSELECT \"a;\n-- query: b\nSELECT $$\" \\! touch <p> $$;\n",
    "string left open": "-- query: a\nSELECT 'a;\n-- query: b\nSELECT $$' \\! touch <p> $$;\n",
    "parenthesis left open": "-- query: a\nSELECT (1;\n-- query: b\nSELECT $$) \\! touch <p> $$;\n",
    "dollar quote after a name": "-- query: a\nSELECT a$$b$ \\! touch <p> $b$;\n",
    "psql variable holding server text": "-- query: a\nDO $$BEGIN RAISE EXCEPTION '\\! touch <p>'; END$$;\n"
                                         "-- query: b\nSELECT :LAST_ERROR_MESSAGE;\n",
    "escape string continued on a new line": "-- query: a\nSELECT E'x'\n'a\\'' \\! touch <p> #';\n",
    "standard_conforming_strings off": "-- query: a\nSET standard_conforming_strings = off;\n"
                                       "-- query: b\nSELECT 'a\\' x' \\! touch <p> #';\n",
    "number run into a string prefix": "-- query: a\nSELECT 1e'\\' x' \\! touch <p> #';\n",
    "backticks and $(...) in strings": "-- query: a\nSELECT '`touch <p>`', '$(touch <p>)', $$; touch <p>$$;\n",
    "shell text in the list's name": QUERY_LIST,
    "lexer maze": "",  # query_maze: a list built at random
}
QUERY_MAZE_PARTS = ["\\! touch <p> #", " \\! touch <p> ", "\\'", "\\\\", "'", "''", "$$", "$a$", "*/", "/*", '"', "\n",
                    ";", ":LAST_ERROR_MESSAGE", "--", "\\", "x", " ", "\u00e9"]


def _maze_token(rng: random.Random) -> str:
    """One piece of a statement where psql's lexer and a reader of lines may part: quotes of every kind holding
    the shell escape, quotes left open, comments, dollar quotes, continued strings."""
    def inner() -> str:
        return "".join(rng.choice(QUERY_MAZE_PARTS) for _ in range(rng.randint(0, 3)))
    k = rng.randrange(10)
    if k == 0:
        return "'" + inner().replace("'", "''") + "'"
    if k == 1:
        return "E'" + inner().replace("\\", "\\\\").replace("'", "\\'") + "'"
    if k == 2:
        tag = rng.choice(["$$", "$q$", "$\u00e9$"])
        return tag + inner().replace("$", "") + tag
    if k == 3:
        return "/*" + inner().replace("*/", "").replace("/*", "") + "*/"
    if k == 4:
        return '"' + inner().replace('"', '""') + '"'
    if k == 5:
        return "--" + inner().replace("\n", "") + "\n"
    if k == 6:
        return rng.choice(["(", ")", "1", "x", "a$", " ", "\n", "::int", "e", "E", "U&", "B", "$1", ":"])
    if k == 7:
        return "'" + inner().replace("'", "''") + "'\n'" + inner().replace("'", "''") + "'"
    if k == 8:
        return "'" + inner() + "'"
    return rng.choice(QUERY_MAZE_PARTS)


def query_maze(rng: random.Random) -> str:
    """A list of one to three statements built of ``_maze_token``s, some after standard_conforming_strings off."""
    sts = ["SELECT " + "".join(_maze_token(rng) for _ in range(rng.randint(1, 6))) + ";"
           for _ in range(rng.randint(1, 3))]
    return ("SET standard_conforming_strings = off;\n" if rng.random() < 0.4 else "") + "\n".join(sts) + "\n"


QUERY_TIMEOUT_S = 20  # collect's --timeout: a damaged number may ask the server for a long statement


def query_trial(n: int, source: str, mutation: str, seed: int) -> Trial:
    """A query list damaged by ``mutation`` (a text mutation, or 'shell text: <case>'), run by tools/collect
    queries from a run directory holding earlier files (which must stay as they were)."""
    def build(scratch: Path) -> Path:
        rng = random.Random(seed)
        run = scratch / "run"
        run.mkdir(parents=True)
        for name, text in KEPT_IN_RUN.items():
            (run / name).write_text(text, encoding="utf-8")
        (scratch / "lists").mkdir()
        name = "list.sql"
        if mutation.startswith("shell text: "):
            case = mutation.removeprefix("shell text: ")
            data = QUERY_SHELL[case].replace("<p>", PWNED).encode()
            if case == "lexer maze":
                data = query_maze(rng).replace("<p>", PWNED).encode()
            if case == "shell text in the list's name":
                name = rng.choice([f"$(touch {PWNED}).sql", f"`touch {PWNED}`.sql", f"x;touch {PWNED};.sql"])
        elif mutation == "file-name":
            data = QUERY_SOURCES[source].encode()
            name = "list" + rng.choice(NAME_DAMAGE) + ".sql"
        else:
            data = text_mutations(1 << 20)[mutation](QUERY_SOURCES[source].encode(), rng)
        (scratch / "lists" / name).write_bytes(data)
        return scratch / "lists" / name

    return Trial(n, "query-list (collect)", mutation, source, build, runner="queries")


KEPT_IN_RUN = {"run.toml": 'benchmark = "collect queries"\n[factors]\nstudy = "damage"\n',
               "vmstat.txt": "procs -----------memory----------\n r  b   swpd   free\n 1  0      0 100000\n"}


def run_queries(t: Trial, scratch: Path, listed: Path, timeout: float) -> Trial:
    """tools/collect queries, for real, against the harness's server, in the run directory: it must run, fail
    the run naming the statements the server refused, or refuse the list naming it and its line; never a
    traceback, a hang, shell text executed, a control byte printed raw or an earlier file of the run lost."""
    run = scratch / "run"
    argv = [sys.executable, str(HERE / "tools" / "collect"), "queries", "--conninfo", QUERY_SERVER["conninfo"],
            "--timeout", str(QUERY_TIMEOUT_S), "--set", "statement_timeout=5s", str(listed)]
    rc, stdout, stderr = _run_tool(argv, run, scratch, timeout)
    if rc is None:
        t.kind, t.detail = "hang", f"no exit in {timeout:g} s"
        return t
    t.extra["exit"] = rc
    problems = []
    if any(p.name.startswith(PWNED) for p in scratch.rglob("*")) or any(QUERY_SERVER["cwd"].glob(PWNED + "*")):
        problems.append("shell text from a query list was executed")
    if _RAW_CONTROL.search(stderr.replace("\n", "").replace("\t", "")) or \
            _RAW_CONTROL.search(stdout.replace("\n", "").replace("\t", "")):
        problems.append("a control byte printed raw")
    lost = [n for n, text in KEPT_IN_RUN.items()
            if not (run / n).is_file() or (run / n).read_text(encoding="utf-8") != text]
    if lost:
        problems.append(f"earlier files of the run lost or changed: {', '.join(lost)}")
    if "Traceback" in stderr or rc not in (0, 2, 3):
        t.kind, t.detail = "traceback", _last_line(stderr) or f"exit {rc}"
    elif rc == 3:  # the list ran; statements the server refused are named in queries-*.txt
        t.kind, t.detail = "run_failed", _first_error(stderr)
    elif rc == 2:
        t.detail = _first_error(stderr)
        shown = quoted_name(str(listed))
        if shown not in stderr:
            t.kind = "unnamed"
        else:
            t.kind = "refused" if re.search(re.escape(shown) + r":\d+: ", stderr) else "refused_no_line"
    else:
        t.kind = "stored"
    if problems:
        t.kind, t.detail = "out_of_bounds", "; ".join(problems)
    return t


QUERY_SERVER: dict = {}  # conninfo and the server's directory, while the trials run


def query_server_missing() -> str | None:
    """Why query lists cannot be run here (no PostgreSQL server binaries, no psql), or None."""
    if pg_bindir() is None or shutil.which("psql") is None:
        return "PostgreSQL server binaries or psql not found (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a postgres user to run the server"
    return None


def pg_bindir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name)
                   if p.parent.name.isdigit() else 0)
    env = os.environ.get("PG_BINDIR")
    for d in ([Path(env)] if env else []) + found[::-1]:
        if (d / "initdb").exists() and (d / "pg_ctl").exists():
            return d
    return None


class QueryServer:
    """A throwaway cluster on 127.0.0.1 (a free port), trust authentication, stopped and removed on exit."""

    def __enter__(self) -> dict:
        import socket

        self.bindir = pg_bindir()
        self.base = Path(tempfile.mkdtemp(prefix="kansoku-damage-pg-", dir="/tmp"))
        if os.geteuid() == 0:
            shutil.chown(self.base, "postgres", "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        data = self.base / "data"
        self._pg([str(self.bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--locale=C.UTF-8", "--no-sync"])
        conf = (f"\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{self.base}'\n"
                "shared_buffers = 32MB\nautovacuum = off\nfsync = off\nmax_connections = 20\n")
        self._pg(["sh", "-c", f"cat >> '{data}/postgresql.conf'"], conf.encode())
        self._pg([str(self.bindir / "pg_ctl"), "-D", str(data), "-l", str(self.base / "server.log"), "-w", "start"])
        QUERY_SERVER.update(conninfo=f"host=127.0.0.1 port={port} user=postgres dbname=postgres", cwd=self.base)
        return QUERY_SERVER

    def _pg(self, argv: list[str], stdin: bytes | None = None) -> None:
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, input=stdin, check=True, capture_output=True, cwd="/", timeout=120)

    def __exit__(self, *exc) -> None:
        try:
            self._pg([str(self.bindir / "pg_ctl"), "-D", str(self.base / "data"), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.base, ignore_errors=True)
            QUERY_SERVER.clear()


# -- the plan of trials --------------------------------------------------------------------------------------


def query_plan(count: int, seed: int) -> list[Trial]:
    """``count`` query lists alone: every mutation and shell text in turn, on each source list."""
    rng = random.Random(seed)
    muts = [*text_mutations(1), "file-name"] + [f"shell text: {c}" for c in QUERY_SHELL]
    return [query_trial(n, sorted(QUERY_SOURCES)[(n // len(muts)) % len(QUERY_SOURCES)], muts[n % len(muts)],
                        rng.randrange(1 << 30)) for n in range(count)]


def plan(count: int, seed: int) -> list[Trial]:
    """``count`` trials: about four in five damage one file of a format (every format and mutation in turn),
    the rest host layouts, shell text, links and collect plans. Same seed and count, same trials."""
    rng = random.Random(seed)
    found = samples()
    hosts = host_runs()
    fmts = sorted(found)
    muts = [*text_mutations(1), "file-name"]
    special: list[tuple[str, str]] = ([("layout", m) for m in LAYOUTS] + [("shell", p) for p in SHELL_PLACES]
                                      + [("link", k) for k in LINKS] + [("plan", m) for m in text_mutations(1)]
                                      + [("plan", f"shell text: {p}") for p in PLAN_SHELL_PLACES])
    if query_server_missing() is None:
        special += [("queries", m) for m in [*text_mutations(1), "file-name"]] + \
                   [("queries", f"shell text: {c}") for c in QUERY_SHELL]
    trials: list[Trial] = []
    i_file = i_special = 0
    for n in range(count):
        s = rng.randrange(1 << 30)
        if hosts and n % 5 == 4:
            what, m = special[i_special % len(special)]
            src = hosts[(i_special // len(special)) % len(hosts)]
            i_special += 1
            if what == "plan":
                trials.append(plan_trial(n, m, s))
                continue
            if what == "queries":
                trials.append(query_trial(n, sorted(QUERY_SOURCES)[i_special % len(QUERY_SOURCES)], m, s))
                continue
            make = {"layout": layout_trial, "shell": shell_trial, "link": link_trial}[what]
            trials.append(make(n, src, m, s))
            continue
        fmt = fmts[i_file % len(fmts)]
        m = muts[(i_file // len(fmts)) % len(muts)]
        src = found[fmt][(i_file // (len(fmts) * len(muts))) % len(found[fmt])] if i_file >= len(fmts) * len(muts) \
            else rng.choice(found[fmt])
        i_file += 1
        trials.append(file_trial(n, fmt, src, m, s))
    return trials


# -- running one: tools/ingest's main in a child forked from this process (its imports done once) -------------

_RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_FILE_LINE = re.compile(r":\d+:")


def _ingest_in_child(argv: list[str], out: Path, err: Path, cwd: Path) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.chdir(cwd)
        os.setsid()
        fo, fe = open(out, "w"), open(err, "w")
        os.dup2(fo.fileno(), 1)
        os.dup2(fe.fileno(), 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), line_buffering=True, errors="backslashreplace")

        try:
            code = ingest_main(argv, prog="tools/ingest")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 -- what the real tools/ingest would print as a traceback
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def run_one(t: Trial, base: Path, timeout: float = TIMEOUT_S) -> Trial:
    scratch = base / f"t{t.n}"
    scratch.mkdir(parents=True)
    try:
        target = t.build(scratch)
        if t.runner == "collect":
            return run_collect(t, scratch, target, timeout)
        if t.runner == "queries":
            return run_queries(t, scratch, target, timeout)
        store = scratch / "k.duckdb"
        out, err = scratch / "stdout", scratch / "stderr"
        pid = _ingest_in_child(["--db", str(store), "--jobs", "1", str(target)], out, err, scratch)
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        else:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            t.kind, t.detail = "hang", f"no exit in {timeout:g} s"
            return t
        rc = os.waitstatus_to_exitcode(status)
        stderr = err.read_text(errors="replace")
        stdout = out.read_text(errors="replace")
        t.extra["exit"] = rc
        problems = []
        if (scratch / PWNED).exists():
            problems.append("shell text from an input was executed")
        if _RAW_CONTROL.search(stderr.replace("\n", "").replace("\t", "")) or \
                _RAW_CONTROL.search(stdout.replace("\n", "").replace("\t", "")):
            problems.append("a control byte printed raw")
        if "Traceback" in stderr or rc not in (0, 2):
            t.kind, t.detail = "traceback", _last_line(stderr) or f"exit {rc}"
        elif rc == 2:
            t.detail = _first_error(stderr)
            if "expected a valid " in stderr:
                t.kind = "net"
            elif "is a known tool output" in stderr:
                t.kind = "unrecognised"
            elif str(target) not in stderr:
                t.kind = "unnamed"
            elif _FILE_LINE.search(stderr):
                t.kind = "refused"
            else:
                t.kind = "refused_lineless" if _says_why_no_line(stderr, scratch) else "refused_no_line"
        else:
            if store.exists():
                problems += stored_outside(store)
                if t.check is not None:
                    problems += t.check(store, target)
            t.kind = "stored"
        if problems:
            t.kind, t.detail = "out_of_bounds", "; ".join(problems)
        return t
    except Exception as exc:  # noqa: BLE001 -- a failure of the harness itself is shown, never counted as a pass
        t.kind, t.detail = "harness_error", f"{type(exc).__name__}: {exc}"
        return t
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _says_why_no_line(stderr: str, scratch: Path) -> bool:
    """Whether a refusal without a line names a path of the input that has none, saying so: a directory, or a
    binary file (as detection tells binary from text), each as ``errors.lineless`` writes it."""
    for p in [scratch, *scratch.rglob("*")]:
        if p.is_symlink():
            continue
        if p.is_dir():
            why = DIRECTORY
        elif p.is_file():
            with open(p, "rb") as fh:
                if not FileHead(p, fh.read(8192), 0).is_binary:
                    continue
            why = BINARY_FILE
        else:
            continue
        if lineless(quoted_name(str(p)), why) + ": " in stderr:
            return True
    return False


def _last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _first_error(text: str) -> str:
    """The line saying what was wrong (under "error: N file(s) could not be ingested", the file's line)."""
    lines = text.splitlines()
    for k, ln in enumerate(lines):
        if ("could not be ingested" in ln or " in the collect plan " in ln) and k + 1 < len(lines):
            return lines[k + 1].strip()[:300]
        if "error" in ln.lower() or "expected" in ln:
            return ln[:300]
    return _last_line(text)


def stored_outside(store: Path) -> list[str]:
    """What the store holds that no tool prints (kansoku.store.outside.stored_outside, every table)."""
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    try:
        return outside.stored_outside(con)
    finally:
        con.close()


def run_all(trials: list[Trial], jobs: int = 1, timeout: float = TIMEOUT_S, progress: bool = False) -> list[Trial]:
    """Run the trials, ``jobs`` children at a time (each forks its own ingest)."""
    base = Path(tempfile.mkdtemp(prefix="kansoku-damage-"))
    _PLANNED.update({t.n: t for t in trials})
    server = contextlib.ExitStack()
    if any(t.runner == "queries" for t in trials):
        server.enter_context(QueryServer())  # before the children are forked: they inherit its address
    try:
        if jobs <= 1:
            done = []
            for k, t in enumerate(trials):
                done.append(run_one(t, base, timeout))
                if progress and (k + 1) % 100 == 0:
                    print(f"  {k + 1}/{len(trials)} {dict(Counter(x.kind for x in done))}", flush=True)
            return done
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            done = []
            for k, t in enumerate(pool.map(_run_picklable, [(t.n, base, timeout) for t in trials], chunksize=8)):
                done.append(t)
                if progress and (k + 1) % 100 == 0:
                    print(f"  {k + 1}/{len(trials)} {dict(Counter(x.kind for x in done))}", flush=True)
            return [_merge(a, b) for a, b in zip(trials, done)]
    finally:
        server.close()
        shutil.rmtree(base, ignore_errors=True)


_PLANNED: dict[int, Trial] = {}


def _run_picklable(args) -> Trial:
    n, base, timeout = args
    t = run_one(_PLANNED[n], base, timeout)
    return Trial(t.n, t.family, t.mutation, t.source, None, None, t.kind, t.detail, t.extra, t.runner)  # type: ignore[arg-type]


def _merge(planned: Trial, done: Trial) -> Trial:
    planned.kind, planned.detail, planned.extra = done.kind, done.detail, done.extra
    return planned


def summary(trials: list[Trial]) -> dict:
    kinds = Counter(t.kind for t in trials)
    by_family: dict[str, Counter] = {}
    for t in trials:
        by_family.setdefault(t.family, Counter())[t.kind] += 1
    return {"inputs": len(trials), "kinds": {k: kinds.get(k, 0) for k in KINDS},
            "by_family": {f: dict(c) for f, c in sorted(by_family.items())},
            "defects": [as_row(t) for t in trials if t.kind in DEFECTS],
            "net": [as_row(t) for t in trials if t.kind == "net"]}


def as_row(t: Trial) -> dict:
    return {"n": t.n, "family": t.family, "mutation": t.mutation, "source": t.source, "kind": t.kind,
            "detail": t.detail, **t.extra}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/run damage", description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=5000, help="damaged inputs (default 5,000)")
    ap.add_argument("--seed", type=int, default=45, help="the seed: same seed and count, same inputs")
    ap.add_argument("--jobs", type=int, default=1, help="inputs ingested at once (default 1)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds before an ingest counts as a hang")
    ap.add_argument("--only", choices=["queries"], help="one family alone: query lists run by collect queries")
    ap.add_argument("--no-record", action="store_true", help="print the counts, write no results file")
    ap.add_argument("--json", action="store_true", help="print the summary (counts, every defect) as JSON only")
    args = ap.parse_args(argv)
    from record import Figure, Load, record

    load = Load()
    if args.only and query_server_missing():
        print(f"error: {query_server_missing()}", file=sys.stderr)
        return 2
    trials = query_plan(args.count, args.seed) if args.only else plan(args.count, args.seed)
    started = time.monotonic()
    done = run_all(trials, args.jobs, args.timeout, progress=not args.json)
    s = summary(done)
    if args.json:
        print(json.dumps(s, ensure_ascii=True))
        return 1 if any(s["kinds"][k] for k in DEFECTS) else 0
    print(f"{s['inputs']} damaged inputs in {time.monotonic() - started:.0f} s: "
          + ", ".join(f"{k} {v}" for k, v in s["kinds"].items()))
    for row in (s["defects"] + s["net"])[:40]:
        print(f"  {row['kind']}: {row['family']} / {row['mutation']!r} ({row['source']}): {row['detail']}")
    if not args.no_record:
        figures = [Figure(f"damaged inputs: {k}", s["kinds"][k], "inputs",
                          target="0" if k in DEFECTS else "", met=(s["kinds"][k] == 0) if k in DEFECTS else None)
                   for k in KINDS]
        record("damage", figures, raw={**s, "seed": args.seed, "count": args.count,
                                       "inputs": [as_row(t) for t in done]}, load=load)
    return 1 if any(s["kinds"][k] for k in DEFECTS) else 0


if __name__ == "__main__":
    sys.exit(main())
