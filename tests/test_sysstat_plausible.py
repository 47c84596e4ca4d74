"""The plausibility rules of sysstat, iostat and vmstat figures (parsers/sysstat/plausible.py): one table, from
which come the check of rows held in Python, the SQL check of stored rows and the screen that picks the
records the first may act on. Each derived form is held equal to the rules on real files, damaged copies of
them and random figures."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pytest

from conftest import FIXTURES
from kansoku.errors import ParseError
from kansoku.ingest.runs import load_run_toml
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat import plausible
from sys_helpers import MemSink, parse

V = FIXTURES / "sysstat_variants"
FILES = [
    ("sar-text", V / "sar_d_loop.txt"), ("sar-text", V / "sar_ny.txt"),
    ("iostat-text", FIXTURES / "iostat" / "iostat_x.txt"), ("vmstat-text", FIXTURES / "vmstat" / "vmstat.txt"),
]
# (column, printed value, how many rows): each rule, refused, warned or dropped
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


def _screened_equals_every_row(tmp_path, monkeypatch, fmt, src):
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
            m.setattr(sm.Collector, "suspects", lambda self: None)  # every row
            every = _outcome(fmt, f, meta)
        assert screened == every, name
        kinds.add("refused" if screened[0] == "refused" else "warned" if screened[2] else "clean")
    assert screens[0] is not None, "the file as printed is screened, not checked row by row"
    return kinds


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("fmt,src", FILES, ids=[p.name for _, p in FILES])
def test_screened_check_is_the_check_of_every_row(tmp_path, monkeypatch, fmt, src):
    assert "refused" in _screened_equals_every_row(tmp_path, monkeypatch, fmt, src)  # the damages reached it


CORPUS_FILES = [("sar-text", "real", "sar_A.txt"), ("iostat-text", "real", "iostat_x.txt"),
                ("vmstat-text", "real", "vmstat.txt")]


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("fmt,sub,name", CORPUS_FILES, ids=[n for _, _, n in CORPUS_FILES])
def test_screened_check_is_the_check_of_every_row_on_corpus_files(corpus, tmp_path, monkeypatch, fmt, sub, name):
    src = next((corpus / sub).rglob(name), None)
    if src is None:
        pytest.skip(f"no {name} in the corpus")
    _screened_equals_every_row(tmp_path, monkeypatch, fmt, src)


# metrics of every kind the rules tell apart: shares, soft-capped shares, unbounded shares, signed, plain
METRICS = ["%usr", "%idle", "%util", "util", "%scpu", "%scpu-10", "%commit", "%MEM", "frmpg/s", "degC", "%temp",
           "tps", "rkB/s", "kbmemfree", "fault/s", "%vmeff", "us", "free", "cpu_count"]
EDGES = [-2e15, -1e15, -5.0, -0.5, -0.2, 0.0, 50.0, 100.0, 100.5, 100.7, 105.0, 105.1, 150.0, 10000.0, 10001.0,
         1e15, 2e15, 1e300, math.inf, -math.inf, math.nan]


def _values(rng: random.Random, n: int) -> list[float]:
    return [rng.choice(EDGES) if rng.random() < 0.5 else rng.uniform(-10, 200) * rng.choice([1, 1e3, 1e14])
            for _ in range(n)]


def test_the_sql_rules_are_the_python_rules():
    """The CASE expression generated from the table picks, for every metric and value, the rule ``broken``
    picks."""
    con = MemSink(None).con
    rng = random.Random(5)
    pairs = [(m, v) for m in METRICS for v in EDGES + _values(rng, 40)]
    got = con.execute(f"SELECT {plausible.RULE_SQL} FROM (SELECT unnest($m) AS metric, unnest($v) AS value)",
                      {"m": [m for m, _ in pairs], "v": [v for _, v in pairs]}).fetchall()
    for (m, v), (i,) in zip(pairs, got):
        rule = plausible.broken(m, v)
        assert (None if rule is None else plausible.RULES.index(rule)) == i, (m, v)


def test_the_screen_picks_every_record_a_rule_acts_on():
    rng = random.Random(7)
    for _ in range(3000):
        names = rng.sample(METRICS, rng.randint(1, 6))
        boxes = plausible.SafeBoxes([names])
        values = [None if rng.random() < 0.05 else v for v in _values(rng, len(names))]
        acted = any(v is not None and plausible.broken(m, v) is not None for m, v in zip(names, values))
        if acted:
            assert boxes.suspect(0, values), (names, values)


def _outcome_rows(rows, sink):
    sink.warnings = []
    try:
        plausible.check_rows(rows, sink)
    except ParseError as exc:
        return ("refused", str(exc))
    return ([r["value"] for r in rows], sink.warnings)


def _outcome_stored(rows, sink):
    sink.warnings = []
    sink.con.execute("DELETE FROM sys_metrics")
    sink.load_sql("sys_metrics", """
        SELECT $source_id AS source_id, $run_id AS run_id, 'sar' AS tool, 'sa-binary' AS format,
               unnest($ts::TIMESTAMPTZ[]) AS ts, 1.0 AS interval_s, unnest($sample::INTEGER[]) AS sample,
               false AS since_boot, 'x' AS activity, 'sda' AS instance, unnest($metric::VARCHAR[]) AS metric,
               unnest($value::DOUBLE[]) AS value""",
                  {k: [r[k] for r in rows] for k in ("ts", "sample", "metric", "value")})
    try:
        plausible.check_stored(sink)
    except ParseError as exc:
        return ("refused", str(exc))
    return ([v for (v,) in sink.q("SELECT value FROM sys_metrics ORDER BY sample, metric")], sink.warnings)


@pytest.mark.slow  # 300 random trials: --all (CI); the screened-check family's sample is quick
def test_the_check_of_stored_rows_is_the_check_of_rows_held_in_python(tmp_path):
    """Random files of a few samples: the same refusal, the same warnings and the same values stored."""
    rng = random.Random(3)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    sink = MemSink(tmp_path / "f")
    kinds = set()
    for trial in range(300):
        metrics = sorted(rng.sample(METRICS, rng.randint(1, 5)))
        calm = rng.random() < 0.6  # mostly plausible figures, so that warnings and drops are reached
        rows = []
        for sample in range(rng.randint(1, 120)):
            for m in metrics:
                v = rng.uniform(0, 90) if calm and rng.random() < 0.97 else _values(rng, 1)[0]
                rows.append({"tool": "sar", "format": "sa-binary", "ts": t0 + timedelta(seconds=sample),
                             "interval_s": 1.0, "sample": sample, "since_boot": False, "activity": "x",
                             "instance": "sda", "metric": m, "value": v, "line": None})
        python = _outcome_rows([dict(r) for r in rows], sink)
        stored = _outcome_stored(rows, sink)
        assert python[0] == "refused" or stored[0] != "refused"
        if python[0] == "refused":
            assert stored == python, trial
        else:
            assert stored[1] == python[1], trial
            assert [None if v is None or v != v else v for v in stored[0]] == \
                [None if v is None or v != v else v for v in python[0]], trial
        kinds.add(python[0] if python[0] == "refused" else "warned" if python[1] else "clean")
    assert kinds == {"refused", "warned", "clean"}


def test_only_a_percentage_beyond_100_makes_a_record_suspect():
    """A `paging` record holds %vmeff beside fault/s in the thousands: the record is looked at again only when
    a percentage itself is out of range."""
    col = sm.Collector("sar", "sa-binary")
    names = col.columns(["fault/s", "pgfree/s", "%vmeff"])
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    col.add_record(t0, "paging", None, names, [316.0, 354.0, 0.0], interval_s=1.0)
    col.add_record(t0.replace(second=1), "paging", None, names, [316.0, 354.0, 150.0], interval_s=1.0)
    col.add_record(t0.replace(second=2), "paging", None, names, [316.0, 354.0, -3.0], interval_s=1.0)
    col.add_record(t0.replace(second=3), "paging", None, names, [316.0, None, 101.0], interval_s=1.0)
    assert col.suspects() == [1, 2, 3]
