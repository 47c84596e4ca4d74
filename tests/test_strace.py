"""strace -c summary tables: every variant of formats.md §5, views, bad input.

Real files: tests/fixtures/strace/variant=c_f/ (copied from shared/corpus/real/study=syscalls/...,
`strace -c -f -p <postmaster>` with strace 6.1) and shared/corpus/generated/strace (read in place).
Variants that no real file shows (strace <= 5.5 fixed layout with a blank usecs/call in the total
row, multi-personality tables, 'nan', values wider than their column) are built inline from
formats.md §5.1 and say so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, RecordingSink
from conftest import one_file_run as _one_file
from conftest import ro_con as _con
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest

REAL = FIXTURES / "strace" / "variant=c_f"


def _ingest(db: Path, *paths: Path):
    rep = ingest(list(paths), db)
    return rep


def test_real_strace_c_f_of_postmaster(tmp_db):
    rep = _ingest(tmp_db, REAL)
    assert rep.ok and rep.committed, rep.errors
    formats = {Path(f.path).name: f.format for f in rep.files}
    assert formats["strace_c.txt"] == "strace-summary" and formats["strace_stderr.txt"] == "strace-messages"
    con = _con(tmp_db)
    assert con.execute("SELECT count(*) FROM strace_syscalls").fetchone()[0] == 40
    futex = con.execute("SELECT time_pct, seconds, usecs_per_call, calls, errors, row_no, line FROM strace_syscalls "
                        "WHERE syscall = 'futex'").fetchone()
    assert futex == (30.50, 0.906743, 6.0, 149540, 10827, 1, 3)
    # a blank errors cell is zero
    assert con.execute("SELECT errors FROM strace_syscalls WHERE syscall = 'sendto'").fetchone()[0] == 0
    t = con.execute("SELECT total_time_pct, total_seconds, total_usecs_per_call, total_calls, total_errors, "
                    "has_total, clock, sort_by, follow_forks, attached_pids, attached_to FROM strace_tables").fetchone()
    assert t == (100.0, 2.973336, 8.0, 364906, 20305, True, "system", "time", True, "12126", "postmaster")
    # the traced process set: postmaster + 9 forked processes, from strace_stderr.txt
    assert con.execute("SELECT count(DISTINCT pid) FROM strace_processes WHERE event = 'attached'").fetchone()[0] == 10
    top = con.execute("SELECT syscall FROM strace_top_syscalls ORDER BY time_rank LIMIT 3").fetchall()
    assert [r[0] for r in top] == ["futex", "sendto", "fdatasync"]
    ce = con.execute("SELECT calls, errors, round(error_pct, 2) FROM strace_calls_errors WHERE syscall = 'recvfrom'"
                     ).fetchone()
    assert ce == (68651, 9474, 13.80)
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric LIKE 'strace%'").fetchall())
    assert m["strace_total_calls"] == 364906 and m["strace_total_errors"] == 20305
    assert m["strace_total_seconds"] == pytest.approx(2.973336)
    assert con.execute("SELECT tool_version FROM sources WHERE file_name = 'strace_c.txt'").fetchone()[0] == "6.1"
    # the rows add up to the total row
    s = con.execute("SELECT sum(calls), sum(errors) FROM strace_syscalls").fetchone()
    assert s == (364906, 20305)


def test_generated_strace_variants_store_their_tables(corpus, tmp_db):
    gen = corpus / "generated" / "strace"
    rep = _ingest(tmp_db, gen)
    assert rep.ok, rep.errors
    con = _con(tmp_db)

    def table(name):
        return con.execute(
            "SELECT t.* FROM strace_tables t JOIN sources s USING (source_id) WHERE s.file_name = ?", [name]
        ).fetchdf().iloc[0]

    def row(name, syscall):
        return con.execute(
            "SELECT time_pct, seconds, usecs_per_call, calls, errors, min_seconds FROM strace_syscalls x "
            "JOIN sources s USING (source_id) WHERE s.file_name = ? AND syscall = ?", [name, syscall]).fetchone()

    # decimal comma (LC_ALL=de_DE)
    assert row("strace6.1_fc_LC_ALL_de_DE_decimal_comma.txt", "wait4")[:5] == (71.57, 0.005672, 1418.0, 4, 2)
    t = table("strace6.1_fc_LC_ALL_de_DE_decimal_comma.txt")
    assert bool(t.decimal_comma) and t.total_seconds == 0.007925 and t.total_calls == 223
    # -U with every column, syscall first, errors blank in the middle
    t = table("strace6.1_c_U_allcolumns.txt")
    assert t["columns"] == "syscall,calls,errors,min_seconds,max_seconds,usecs_per_call,seconds,time_pct"
    assert t.total_calls == 160 and t.total_errors == 26 and t.total_time_pct == 100.0
    assert row("strace6.1_c_U_allcolumns.txt", "ioctl")[3:] == (2, 2, 0.0)
    assert row("strace6.1_c_U_allcolumns.txt", "read")[3:5] == (7, 0)
    # -S calls: the printed order is kept and recognised
    assert table("strace6.1_c_S_calls.txt").sort_by == "calls"
    first = con.execute("SELECT syscall FROM strace_syscalls x JOIN sources s USING (source_id) "
                        "WHERE s.file_name = 'strace6.1_c_S_calls.txt' AND row_no = 1").fetchone()[0]
    assert first == "fcntl"
    # -C: the trace before the table is skipped with one warning
    t = table("strace6.1_C_combined.txt")
    assert t.syscall_count == 16 and t.total_calls == 29 and t.total_errors == 1
    warnings = {Path(f.path).name: f.warnings for f in rep.files}
    assert any("outside the strace table" in w for w in warnings["strace6.1_C_combined.txt"])
    # program output before the table
    t = table("strace6.1_c_stderr_mixed_with_program_output.txt")
    assert t.syscall_count == 29 and t.total_calls == 66
    assert any(":1:" in w for w in warnings["strace6.1_c_stderr_mixed_with_program_output.txt"])
    # -w: same table; the wall-clock numbers as printed
    assert row("strace6.1_cw_wallclock.txt", "wait4")[:4] == (98.45, 0.202682, 50670.0, 4)


OLD_LAYOUT = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 93.64    0.000324          54         6         3 wait4
  3.18    0.000011           0       111        48 open
  1.73    0.000006           0         9           write
------ ----------- ----------- --------- --------- ----------------
100.00    0.000341                   126        51 total
"""


def test_old_fixed_layout_total_without_usecs_per_call(tmp_path, tmp_db):
    # Inline (formats.md §5.1, strace 4.5 - 5.5): no real file of these versions in the corpus.
    d = _one_file(tmp_path, "strace.txt", OLD_LAYOUT)
    assert _ingest(tmp_db, d).ok
    con = _con(tmp_db)
    assert con.execute("SELECT total_usecs_per_call, total_calls, total_errors FROM strace_tables").fetchone() == \
        (None, 126, 51)
    assert con.execute("SELECT calls, errors FROM strace_syscalls WHERE syscall = 'write'").fetchone() == (9, 0)


def test_old_layout_total_without_errors_is_not_mistaken(tmp_path, tmp_db):
    # Inline: old layout, no errors at all -> the total row has 3 numbers: % time, seconds, calls.
    text = OLD_LAYOUT.replace("         3 wait4", "           wait4").replace("        48 open", "           open") \
        .replace("       126        51 total", "       126           total")
    d = _one_file(tmp_path, "strace.txt", text)
    assert _ingest(tmp_db, d).ok
    con = _con(tmp_db)
    assert con.execute("SELECT total_usecs_per_call, total_calls, total_errors FROM strace_tables").fetchone() == \
        (None, 126, 0)


def test_wide_values_personalities_and_nan(tmp_path, tmp_db):
    # Inline (formats.md §5, §0.6): calls wider than '%9u' push the line right; two personalities;
    # '% time' printed as nan by strace < 4.8 when the total time is 0.
    text = """\
System call usage summary for 32 bit mode:
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 99.00    5.000000           0 12345678901         7 futex
  1.00    0.050000          10      5000           read
------ ----------- ----------- --------- --------- ----------------
100.00    5.050000             12345683901         7 total
System call usage summary for x32 mode:
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
   nan    0.000000           0         1           getpid
------ ----------- ----------- --------- --------- ----------------
100.00    0.000000                     1           total
"""
    d = _one_file(tmp_path, "strace.txt", text)
    rep = _ingest(tmp_db, d)
    assert rep.ok, rep.errors
    con = _con(tmp_db)
    rows = con.execute("SELECT table_no, personality, syscall, time_pct, calls, errors FROM strace_syscalls "
                       "ORDER BY table_no, row_no").fetchall()
    assert rows == [(1, "32 bit", "futex", 99.0, 12345678901, 7), (1, "32 bit", "read", 1.0, 5000, 0),
                    (2, "x32", "getpid", None, 1, 0)]
    assert con.execute("SELECT total_calls FROM strace_tables ORDER BY table_no").fetchall() == \
        [(12345683901,), (1,)]


def test_command_in_run_toml_gives_clock_sort_and_process_set(tmp_path, tmp_db):
    toml = '[commands]\nstrace = "strace -w -c -S calls -ff -p 42 -o strace_c.txt"\n'
    d = _one_file(tmp_path, "strace_c.txt", OLD_LAYOUT, toml)
    assert _ingest(tmp_db, d).ok
    r = _con(tmp_db).execute("SELECT clock, sort_by, follow_forks, attached_pids FROM strace_tables").fetchone()
    assert r == ("wall", "calls", True, "42")


def test_program_output_inside_the_table_is_a_warning_naming_the_line(tmp_path, tmp_db):
    lines = OLD_LAYOUT.splitlines(keepends=True)
    text = "".join(lines[:3] + ["hello from the program\n"] + lines[3:])
    d = _one_file(tmp_path, "strace.txt", text)
    rep = _ingest(tmp_db, d)
    assert rep.ok
    (f,) = [f for f in rep.files if f.format == "strace-summary"]
    assert any(w.endswith("'hello from the program'") and ":4:" in w for w in f.warnings)
    assert _con(tmp_db).execute("SELECT count(*) FROM strace_syscalls").fetchone()[0] == 3


def test_cut_off_table_keeps_rows_and_warns(tmp_path, tmp_db):
    text = "".join(OLD_LAYOUT.splitlines(keepends=True)[:4])
    d = _one_file(tmp_path, "strace.txt", text)
    rep = _ingest(tmp_db, d)
    assert rep.ok
    (f,) = [f for f in rep.files if f.format == "strace-summary"]
    assert any("no total row" in w for w in f.warnings)
    assert _con(tmp_db).execute("SELECT has_total, syscall_count FROM strace_tables").fetchone() == (False, 2)


def test_bad_table_fails_and_database_is_unchanged(tool, tmp_path, tmp_db):
    good = tmp_path / "good" / "variant=c_f"
    shutil.copytree(REAL, good)
    assert ingest([tmp_path / "good"], tmp_db).committed
    con = _con(tmp_db)
    before = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("strace_syscalls", "strace_tables", "strace_processes", "sources")}
    con.close()
    # a header whose dash line does not have one run per column
    bad = OLD_LAYOUT.replace("------ ----------- ----------- --------- --------- ----------------",
                             "------------------ ----------- --------- --------- ----------------", 1)
    d = _one_file(tmp_path / "bad", "strace.txt", bad)
    proc = tool("ingest", "--db", tmp_db, tmp_path / "good", d)
    assert proc.returncode == 2
    assert "strace.txt:2: expected one dash run per header column" in proc.stderr
    con = _con(tmp_db)
    after = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in before}
    assert after == before


def test_every_strace_file_in_the_corpus_parses(corpus):
    found = []
    for p in sorted(corpus.rglob("*")):
        if not p.is_file() or p.name == "run.toml":
            continue
        det = detect(p)
        if det.format is not None and det.format.tool == "strace":
            found.append((p, det.format))
    names = {p.name for p, _ in found}
    # everything under generated/strace and the real strace run is recognised by content
    assert {p.name for p in (corpus / "generated" / "strace").iterdir()} <= names
    assert {"strace_c.txt", "strace_stderr.txt"} <= names
    for p, fmt in found:
        sink = RecordingSink(p)
        fmt.parse(p, sink)
        assert sum(map(len, sink.rows.values())) > 0, p
        if fmt.name == "strace-summary":
            assert all(t["has_total"] for t in sink.rows["strace_tables"]), p
