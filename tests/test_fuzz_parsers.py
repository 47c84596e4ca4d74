"""A fuzz test per parser: real files from tests/fixtures, mutated the ways damaged
files reach users (a flipped byte, a byte no text holds in the head, a line lost or doubled, a carriage return,
a number beyond 2^31 or 2^63, a decimal where a count belongs, 'nan', 'inf', a negative number, 1e23, hour 53,
a year 1900 or 2150, a file cut short, the whole file twice), ingested into a real DuckDB store. Each must end as stored data or as a
listed error (file, line): never a traceback, never a hang, never NaN/infinity, an out-of-range share or any
value outside its format's declared bounds (parsers/bounds.py: what the tool can print) stored.

Bounded so CI stays fast: a fixed seed (derandomize) and a few examples per format.
"""

from __future__ import annotations

import math
import re
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from kansoku import parsers
from kansoku.ingest.detect import detect_in_run
from kansoku.ingest.pipeline import ingest
from kansoku.store import outside

EXAMPLES = 8
SECONDS_PER_EXAMPLE = 30


def _samples() -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for p in sorted(FIXTURES.rglob("*")):
        if not p.is_file() or p.name in ("run.toml", "README.md") or p.stat().st_size > 400_000:
            continue
        d = detect_in_run(p, p.parent)
        if d.format is not None and not d.format.own_runs:
            out.setdefault(d.format.name, []).append(p)
    return out


SAMPLES = _samples()
ALL_FORMATS = sorted(f.name for f in parsers.formats() if not f.own_runs)


def test_every_parser_has_fuzz_material():
    assert sorted(SAMPLES) == ALL_FORMATS


BIG = [b"99999999999999999999999", b"2147483648", b"9223372036854775808"]


def _mutate(data: bytes, op: str, pos: int, pick: int) -> bytes:
    lines = data.split(b"\n")
    i = pos % max(1, len(lines))
    if op == "flip":
        j = pos % max(1, len(data))
        return data[:j] + bytes([pick % 256]) + data[j + 1:]
    if op == "cut":
        return data[: pos % (len(data) + 1)]
    if op == "badbyte":  # in the head the sniffers read: the file is still its format, refused with the line
        i = pos % max(1, min(len(lines), 40))
        j = pick % (len(lines[i]) + 1)
        lines[i] = lines[i][:j] + (b"\xff", b"\x00", b"\xc3", b"\xed\xa0\x80")[pick % 4] + lines[i][j:]
        return b"\n".join(lines)
    if op == "twice":
        return data + (b"" if data.endswith(b"\n") else b"\n") + data
    if op == "year":
        years = list(re.finditer(rb"(?<!\d)20\d\d(?=-\d\d-\d\d)", data))
        if not years:
            return data
        m = years[pick % len(years)]
        return data[:m.start()] + (b"1900", b"2150", b"1970")[pick % 3] + data[m.end():]
    if op == "drop":
        del lines[i]
    elif op == "double":
        lines.insert(i, lines[i])
    elif op == "cr":
        lines[i] += b"\r"
    else:
        nums = list(re.finditer(rb"\d+(?:\.\d+)?", lines[i]))
        if not nums:
            return data
        m = nums[pick % len(nums)]
        rep = {"big": BIG[pick % 3], "decimal": b"1.5", "nan": b"nan", "negative": b"-7", "hour": b"53",
               "inf": b"inf", "huge": b"1e23"}[op]
        lines[i] = lines[i][:m.start()] + rep + lines[i][m.end():]
    return b"\n".join(lines)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _stored_garbage(db: Path, tables: list[str]) -> list[str]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return outside.stored_outside(con, set(tables))
    finally:
        con.close()


@pytest.mark.slow  # the mutation run (every format × mutants): --all (CI) runs it
@pytest.mark.parametrize("fmt_name", ALL_FORMATS)
def test_mutated_real_files_are_stored_within_bounds_or_refused(fmt_name, tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    db = base / "k.duckdb"
    fmt = next(f for f in parsers.formats() if f.name == fmt_name)
    tables = [t for m in parsers.modules() if fmt in m.formats for t in m.tables]

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(src=st.sampled_from(SAMPLES[fmt_name]),
           op=st.sampled_from(["flip", "badbyte", "cut", "drop", "double", "cr", "big", "decimal", "nan", "negative", "hour",
                               "inf", "huge", "year", "twice"]),
           pos=st.integers(0, 10 ** 6), pick=st.integers(0, 10 ** 6))
    def one(src: Path, op: str, pos: int, pick: int) -> None:
        run = base / "runs" / "run"
        if run.exists():
            shutil.rmtree(run)
        run.mkdir(parents=True)
        if (src.parent / "run.toml").exists():
            shutil.copy(src.parent / "run.toml", run / "run.toml")
        (run / src.name).write_bytes(_mutate(src.read_bytes(), op, pos, pick))
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(SECONDS_PER_EXAMPLE)
        try:
            report = ingest([run], db)
        except _Hang:
            pytest.fail(f"{fmt_name}: ingest of {src.name} mutated by {op}@{pos} did not finish in "
                        f"{SECONDS_PER_EXAMPLE} s")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        for e in report.errors:  # a listed error names the file, and says what the parser expected there
            assert str(run) in e or src.name in e, e
            assert "expected a valid " not in e, f"{op}@{pos}/{pick} reached the safety net: {e}"
        if report.ok:
            assert not _stored_garbage(db, tables), (src.name, op, pos, pick)

    one()


def test_net_turns_an_unforeseen_error_into_a_parse_error(tmp_path):
    from kansoku.errors import ParseError
    from kansoku.parsers import guarded

    def broken(path, sink):
        int("x")

    (tmp_path / "f").write_text("a line\n")
    with pytest.raises(ParseError, match=r"expected a valid demo file, found \"ValueError"):
        guarded("demo", broken)(tmp_path / "f", None)
    assert math.isfinite(1.0)
