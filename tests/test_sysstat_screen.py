"""The plausibility check of the sysstat text parsers (sar, iostat, vmstat) runs only over the records its
screen picks (``Collector.suspects``: NaN, negatives, shares beyond 0-100, counter wraps, intervals and dates
out of range, a sample that may be duplicated). Whatever a file holds, the rows stored, the warnings and the
error must be those of the check over every row, as it ran before the screen existed."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from kansoku.errors import ParseError
from kansoku.ingest.runs import load_run_toml
from kansoku.parsers.sysstat import common as sm
from sys_helpers import parse

V = FIXTURES / "sysstat_variants"
FILES = [
    ("sar-text", V / "sar_d_loop.txt"), ("sar-text", V / "sar_ny.txt"),
    ("iostat-text", FIXTURES / "iostat" / "iostat_x.txt"), ("vmstat-text", FIXTURES / "vmstat" / "vmstat.txt"),
]
# (column, printed value, how many rows): each rule of check_plausible, refused, warned or dropped
DAMAGES = [
    ("%util", "50000.00", 1), ("%util", "150.00", 2), ("%idle", "100.70", 1), ("%idle", "-3.00", 1),
    ("%idle", "-0.20", 1), ("%user", "nan", 1), ("%user", "inf", 1), ("%system", "103.00", 2),
    ("tps", "-5.00", 1), ("tps", "2e16", 2), ("rkB/s", "-2e16", 1), ("%iowait", "100.60", 2),
    ("r/s", "1e300", 1), ("free", "-5", 1), ("id", "101", 1), ("us", "nan", 1), ("bo", "2e16", 1),
]


def _damaged(text: str, column: str, value: str, rows: int) -> str | None:
    """``text`` with ``column``'s value replaced on the first ``rows`` rows under a header naming it."""
    lines = text.split("\n")
    header, done = None, 0
    for i, line in enumerate(lines):
        toks = line.split()
        if column in toks:
            header = toks
            continue
        if header is not None and abs(len(toks) - len(header)) <= 1 and done < rows \
                and header.index(column) < len(toks):
            toks[header.index(column)] = value
            lines[i] = " ".join(toks)
            done += 1
    return "\n".join(lines) if done else None


def _outcome(fmt: str, path, meta: dict):
    try:
        s = parse(fmt, path, run_start=meta.get("start"), run_meta=meta)
    except ParseError as exc:
        return ("refused", str(exc))
    return (s.q("SELECT * EXCLUDE (source_id) FROM sys_metrics ORDER BY rowid"),
            s.q("SELECT * FROM sys_series ORDER BY activity"), s.warnings)


@pytest.mark.parametrize("fmt,src", FILES, ids=[p.name for _, p in FILES])
def test_screened_check_is_the_check_of_every_row(tmp_path, monkeypatch, fmt, src):
    meta = load_run_toml(src.parent) if (src.parent / "run.toml").exists() else {}
    text = src.read_text(encoding="utf-8")
    variants = {"as printed": text, "twice": text + text}
    for column, value, rows in DAMAGES:
        d = _damaged(text, column, value, rows)
        if d is not None:
            variants[f"{column}={value} x{rows}"] = d
    assert len(variants) > 3, "no damage applies to this file"
    screens: list = []
    real = sm.Collector.suspects

    def recorded(self):
        screens.append(real(self))
        return screens[-1]

    kinds = set()
    for name, body in variants.items():
        f = tmp_path / f"{len(kinds)}-{src.name}"
        f.write_text(body, encoding="utf-8")
        with monkeypatch.context() as m:
            m.setattr(sm.Collector, "suspects", recorded)
            screened = _outcome(fmt, f, meta)
        with monkeypatch.context() as m:
            m.setattr(sm.Collector, "suspects", lambda self: None)  # every row, as before the screen
            every = _outcome(fmt, f, meta)
        assert screened == every, name
        kinds.add("refused" if screened[0] == "refused" else "warned" if screened[2] else "clean")
    assert screens[0] is not None, "the file as printed is screened, not checked row by row"
    assert "refused" in kinds  # the damages reached the check
