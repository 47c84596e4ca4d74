"""Binary sa files are streamed through `sadf -d` into DuckDB (parsers/sysstat/sa_binary.py).

The stored values are checked against the two readers that hold a whole rendering in memory: the sadf -d
reader (the same rendering, read line by line in Python) and the sadf -j reader the sa path used before
(the same data, through the JSON keys)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from sys_helpers import parse, same_rows

pytestmark = pytest.mark.skipif(shutil.which("sadf") is None, reason="sadf not installed")

ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
REAL = "study=scaleup/workload={w}/config=checksums-off/clients={c}/rep=1/sa.bin"
# sadf -j carries legacy disk keys besides the current ones (docs/formats.md §2.6); sadf -d prints the current
JSON_ONLY = {"rd_sec/s", "wr_sec/s", "dc_sec/s", "avgrq-sz", "avgqu-sz"}
ROW = "SELECT activity, instance, metric, ts, interval_s, sample, round(value, 6) FROM sys_metrics"


def _sa_files(corpus: Path) -> list[Path]:
    files = [FIXTURES / "sar" / "run1" / "sa.bin", FIXTURES / "sysstat_variants" / "sa_loop.bin"]
    files += [corpus / "real" / REAL.format(w=w, c=c) for w, c in (("read", 8), ("update", 1))]
    files += sorted((corpus / "real" / "study=syscalls").rglob("sa.bin"))[:1]
    return [f for f in files if f.is_file()]


def _render(sa: Path, tmp: Path, flag: str, name: str) -> Path:
    out = tmp / name
    with open(out, "w") as fh:
        subprocess.run(["sadf", flag, str(sa), "--", "-A"], stdout=fh, check=True, env=ENV)
    return out



def _sadf_d_prints(monkeypatch, tmp_path: Path, lines: list[str]) -> None:
    """From here on, ``sadf -d`` (as sa_binary runs it) prints ``lines`` instead of reading the file."""
    from kansoku.parsers.sysstat import sa_binary

    damaged = tmp_path / "out.csv"
    damaged.write_text("".join(lines))
    real = subprocess.Popen

    def fake_sadf(cmd, *a, **kw):
        return real(["/bin/cat", str(damaged)] if cmd[1] == "-d" else cmd, *a, **kw)

    monkeypatch.setattr(sa_binary.subprocess, "Popen", fake_sadf)


def test_streamed_sa_rows_equal_the_sadf_d_reader(corpus, tmp_path):
    files = _sa_files(corpus)
    assert len(files) >= 4
    for sa in files:
        new = parse("sa-binary", sa)
        csv = parse("sadf-csv", _render(sa, tmp_path, "-d", f"{sa.parent.name}-d.csv"))
        assert new.digest(ROW)[0] > 100, sa
        assert same_rows(new, csv, ROW), sa
        q = "SELECT activity, samples, first_ts, last_ts, interval_s, host FROM sys_series ORDER BY activity"
        assert new.q(q) == csv.q(q), sa
        assert new.q("SELECT * EXCLUDE (source_id) FROM sys_devices ORDER BY ALL") == \
            csv.q("SELECT * EXCLUDE (source_id) FROM sys_devices ORDER BY ALL")
        assert new.version and new.version.startswith("12.")


@pytest.mark.slow  # every sa file read twice: --all (CI); test_streamed_sa_rows_equal_the_sadf_d_reader is quick
def test_streamed_sa_rows_equal_the_sadf_j_path_used_before(corpus, tmp_path):
    """Every value the whole `sadf -j` document of an sa file holds is
    stored by the streamed reader too, except sadf -j's legacy disk aliases and its numbering of serial lines."""
    for sa in _sa_files(corpus):
        new = parse("sa-binary", sa)
        old = parse("sadf-json", _render(sa, tmp_path, "-j", f"{sa.parent.name}.json"))
        cond = " WHERE activity <> 'serial' AND metric NOT IN ('" + "', '".join(sorted(JSON_ONLY)) + "')"
        got, want = set(new.q(ROW + cond)), set(old.q(ROW + cond))
        assert len(got) > 100 and got == want, (sa, sorted(got ^ want)[:5])
        # every activity of the old rows is there, with the same number of samples and time span
        q = "SELECT activity, samples, first_ts, last_ts FROM sys_series WHERE activity <> 'serial' ORDER BY 1"
        assert new.q(q) == old.q(q), sa


def test_a_long_generated_sa_file_streams_whole(tmp_path):
    """A few thousand one-second records made by bench/sa_day.py (a day is the bench's default)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import sa_day
    finally:
        sys.path.remove(str(ROOT / "bench"))
    sa = tmp_path / "sa.bin"
    records = 3000
    sa_day.make_day_file(sa, records)
    sa_day.check_day_file(sa, records)
    s = parse("sa-binary", sa)
    assert s.q("SELECT count(*), count(DISTINCT ts), min(sample), max(sample) FROM sys_metrics "
               "WHERE activity = 'cpu' AND instance = 'all' AND metric = '%idle'") == [(records, records, 0, records - 1)]
    assert s.q("SELECT count(*) FROM sys_metrics")[0][0] > records * 100
    assert s.q("SELECT samples FROM sys_series WHERE activity = 'cpu'") == [(records,)]


def test_damaged_sadf_values_are_refused_with_the_file_named(tmp_path, monkeypatch):
    """A value sadf prints that no machine gives (a damaged file): a ParseError naming the file and sample,
    nothing half-checked."""
    from kansoku.errors import ParseError

    sa = FIXTURES / "sar" / "run1" / "sa.bin"
    lines = subprocess.run(["sadf", "-d", str(sa), "--", "-A"], capture_output=True, text=True,
                           env=ENV).stdout.splitlines(keepends=True)
    third = [i for i, l in enumerate(lines) if l.startswith("vm;") and ";-1;" in l][2]  # CPU all, 3rd record
    lines[third] = lines[third].rsplit(";", 1)[0] + ";18446744073709551.00\n"  # its %idle
    _sadf_d_prints(monkeypatch, tmp_path, lines)
    with pytest.raises(ParseError) as ei:
        parse("sa-binary", sa)
    msg = str(ei.value)
    assert "sa.bin" in msg and "%idle" in msg and "(sample 2)" in msg, msg


def _both_paths(sa: Path, monkeypatch):
    """The sa file parsed by the small-file path (Python) and by the SQL path (forced): (outcome, sink) each."""
    from kansoku.errors import ParseError
    from kansoku.parsers.sysstat import sa_binary

    out = []
    for small in (sa_binary.SMALL_BATCH_BYTES, -1):
        monkeypatch.setattr(sa_binary, "SMALL_BATCH_BYTES", small)
        try:
            out.append((None, parse("sa-binary", sa)))
        except ParseError as exc:
            out.append((str(exc), None))
    return out


@pytest.mark.slow  # every sa file read twice: --all (CI); the small-path family's sample is quick
def test_small_sa_files_read_in_python_store_what_the_sql_path_stores(corpus, monkeypatch):
    """A run's sa file is read in Python (sa_binary._Loader._load_small): the same rows, summary, devices
    and warnings as the SQL path that reads long files."""
    tables = {"sys_metrics": "SELECT activity, instance, metric, ts, interval_s, sample, value, format, tool, "
                             "since_boot, line FROM sys_metrics",
              "sys_series": "SELECT * EXCLUDE (source_id) FROM sys_series",
              "sys_devices": "SELECT * EXCLUDE (source_id) FROM sys_devices"}
    files = _sa_files(corpus)
    for sa in files:
        (err_py, py), (err_sql, sq) = _both_paths(sa, monkeypatch)
        assert err_py is None and err_sql is None, sa
        for table, sql in tables.items():
            assert same_rows(py, sq, sql), (sa, table)
        assert py.warnings == sq.warnings, sa
        assert py.q("SELECT count(*) FROM sys_metrics")[0][0] > 100, sa


def _sql_paths(sa: Path, monkeypatch):
    """The sa file parsed by the SQL path (forced: no batch read in Python) with the activities without items
    read from a sadf -dh run of their own by the typed CSV reads (sa_binary._Loader._load_batch_fast),
    whatever the file's size, and without it (the line split of sadf -d -- -A alone):
    ((outcome, sink), batches the typed reads took) each."""
    from kansoku.errors import ParseError
    from kansoku.parsers.sysstat import sa_binary

    monkeypatch.setattr(sa_binary, "SMALL_BATCH_BYTES", -1)
    monkeypatch.setattr(sa_binary, "SPLIT_MIN_BYTES", 0)
    taken: list[bool] = []
    fast = sa_binary._Loader._load_batch_fast

    def counted(self, batch):
        taken.append(fast(self, batch))
        return taken[-1]

    monkeypatch.setattr(sa_binary._Loader, "_load_batch_fast", counted)
    out = []
    for split in (True, False):
        monkeypatch.setattr(sa_binary, "SPLIT", split)
        taken.clear()
        try:
            out.append(((None, parse("sa-binary", sa)), list(taken)))
        except ParseError as exc:
            out.append(((str(exc), None), list(taken)))
    return out


_TABLES = {"sys_metrics": "SELECT activity, instance, metric, ts, interval_s, sample, value, format, tool, since_boot, "
                          "line FROM sys_metrics",
           "sys_series": "SELECT * EXCLUDE (source_id) FROM sys_series",
           "sys_devices": "SELECT * EXCLUDE (source_id) FROM sys_devices"}


@pytest.mark.slow  # every sa file read twice: --all (CI); test_a_long_generated_sa_file_streams_whole reads typed
def test_typed_csv_reads_store_what_the_line_split_stores(corpus, monkeypatch, tmp_path):
    """The activities without items of a long sa file are read from one sadf -dh run by DuckDB's CSV reader
    with typed columns: the same rows, summary, devices and warnings as the line split of sadf -d -- -A alone
    (the -dh run's one batch taken by the typed reads)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import sa_day
    finally:
        sys.path.remove(str(ROOT / "bench"))
    day = tmp_path / "sa.bin"
    sa_day.make_day_file(day, 1500)
    for sa in _sa_files(corpus) + [day]:
        ((err_fast, fast), taken), ((err_split, split), _) = _sql_paths(sa, monkeypatch)
        assert err_fast is None and err_split is None, sa
        assert taken == [True], (sa, taken)
        for table, sql in _TABLES.items():
            assert same_rows(fast, split, sql), (sa, table)
        assert fast.warnings == split.warnings, sa
        assert fast.q("SELECT count(*) FROM sys_metrics")[0][0] > 100, sa


@pytest.mark.quick_sample(3)
@pytest.mark.parametrize("damage", ["value", "nan", "empty value", "width", "short", "time", "interval",
                                    "restart", "comment", "comment as device", "empty line", "crlf",
                                    "interrupts wider", "duplicate"])
def test_sadf_output_not_as_sadf_prints_it_is_read_by_the_small_path_as_by_the_sql_path(tmp_path, monkeypatch,
                                                                                       damage):
    """Output not as sadf prints it: the small file's Python reads either store what the SQL path stores or
    leave the batch to it before storing anything (the same error, word for word, or the same rows and
    warnings)."""
    sa = FIXTURES / "sar" / "run1" / "sa.bin"
    lines = subprocess.run(["sadf", "-d", str(sa), "--", "-A"], capture_output=True, text=True,
                           env=ENV).stdout.splitlines(keepends=True)
    cpu = [k for k, l in enumerate(lines) if l.startswith("vm;") and ";-1;" in l]
    dev = [k for k, l in enumerate(lines) if l.startswith("vm;") and ";vda;" in l]
    intr = [k for k, l in enumerate(lines) if l.startswith("vm;") and ";sum;" in l]
    i = cpu[2]
    f = lines[i].rstrip("\n").split(";")
    if damage in ("value", "nan", "empty value"):
        f[-1] = {"value": "x1.5", "nan": "nan", "empty value": ""}[damage]
    elif damage == "width":
        f.append("7.00")
    elif damage == "short":
        f.pop()
    elif damage == "time":
        f[2] = f[2].replace(" UTC", " XYZ")
    elif damage == "interval":
        f[1] = "99999999999"
    lines[i] = ";".join(f) + "\n"
    g = lines[cpu[3]].split(";")
    extra = {"restart": f"{g[0]};-1;{g[2]};LINUX-RESTART\t(2 CPU)\n", "comment": f"{g[0]};-1;{g[2]};COM a;1;2\n",
             "empty line": "\n", "duplicate": lines[cpu[2]]}.get(damage)
    if extra:
        lines.insert(cpu[3], extra)
    if damage == "comment as device":
        h = lines[dev[1]].split(";")
        lines.insert(dev[1], f"{h[0]};-1;{h[2]};COM a;" + ";".join(["1"] * (len(h) - 4)) + "\n")
    elif damage == "crlf":
        lines[i] = lines[i].rstrip("\n") + "\r\n"
    elif damage == "interrupts wider":
        lines[intr[1]] = lines[intr[1]].rstrip("\n") + ";0.00\n"
    _sadf_d_prints(monkeypatch, tmp_path, lines)
    (err_py, py), (err_sql, sq) = _both_paths(sa, monkeypatch)
    assert err_py == err_sql
    if err_sql is None:
        for table, sql in _TABLES.items():
            assert same_rows(py, sq, sql), table
        assert py.warnings == sq.warnings
    else:
        assert "sa.bin" in err_sql
    if damage in ("value", "width", "time", "interval"):
        assert err_sql is not None, damage


@pytest.mark.quick_sample(1)
@pytest.mark.parametrize("damage", ["value", "width", "no header"])
def test_a_sadf_dh_output_not_as_sadf_prints_it_is_not_used(tmp_path, monkeypatch, damage):
    """The activities without items are read from a sadf -dh run only when its output is as sadf prints it:
    else nothing of it is stored and the file is read with sadf -d -- -A alone (the same rows)."""
    from kansoku.parsers.sysstat import sa_binary

    sa = FIXTURES / "sar" / "run1" / "sa.bin"
    lines = subprocess.run(["sadf", "-dh", str(sa), "--", *sa_binary._DH_FLAGS], capture_output=True, text=True,
                           env=ENV).stdout.splitlines(keepends=True)
    f = lines[3].rstrip("\n").split(";")
    if damage == "value":
        f[-1] = "x1.5"
    elif damage == "width":
        f.append("7.00")
    lines[3] = ";".join(f) + "\n"
    if damage == "no header":
        lines = lines[1:]
    damaged = tmp_path / "dh.csv"
    damaged.write_text("".join(lines))
    real = subprocess.Popen
    runs = []

    def fake_sadf(cmd, *a, **kw):
        runs.append(cmd[1:2] + cmd[4:5])
        return real(["/bin/cat", str(damaged)] if cmd[1] == "-dh" else cmd, *a, **kw)

    monkeypatch.setattr(sa_binary.subprocess, "Popen", fake_sadf)
    monkeypatch.setattr(sa_binary, "SPLIT_MIN_BYTES", 0)
    got = parse("sa-binary", sa)
    monkeypatch.setattr(sa_binary.subprocess, "Popen", real)
    monkeypatch.setattr(sa_binary, "SPLIT", False)
    want = parse("sa-binary", sa)
    for table, sql in _TABLES.items():
        assert same_rows(got, want, sql), table
    assert got.warnings == want.warnings
    assert ["-dh", "-w"] in runs and ["-d", "-A"] in runs, runs
