"""Profiles: perf script (plain and gzip), folded stacks and strace -k stacks, ingested by content into
profile_stacks; the views per function (self and total), process and run; bad input.

Real files (tests/fixtures/profiles/, see README.md there): perf 6.1 `perf record -g -F 49 -e cpu-clock` on a
PostgreSQL 15 postmaster during pgbench (plain) and system-wide (gzip), the folded stacks of the first made by
running Brendan Gregg's stackcollapse-perf.pl on it, and strace 6.1 `strace -k` of one backend and `-k -f` of the
postmaster.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, one_file_run, ro_con
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest

P = FIXTURES / "profiles"


def _warnings(rep) -> list[str]:
    return [w for f in rep.files for w in f.warnings]


def _run(tmp_path: Path, name: str, src: Path, as_name: str | None = None) -> Path:
    d = tmp_path / "runs" / name
    d.mkdir(parents=True)
    shutil.copy(src, d / (as_name or src.name))
    return d


@pytest.mark.parametrize("path, fmt", [
    ("perf_postmaster/perf-script.txt", "perf-script"),
    ("perf_system/perf-script.txt.gz", "perf-script"),
    ("folded/stacks.folded", "folded-stacks"),
    ("strace_k/strace-k.txt", "strace-stacks"),
    ("strace_k_f/strace-k.txt", "strace-stacks"),
])
def test_profile_formats_are_detected_by_content_not_name(path, fmt, tmp_path):
    assert detect(P / path).format.name == fmt
    # the name does not matter
    renamed = tmp_path / "output.log"
    shutil.copy(P / path, renamed)
    assert detect(renamed).format.name == fmt


def test_perf_script_of_the_postmaster(tmp_db, tmp_path):
    rep = ingest([_run(tmp_path, "pm", P / "perf_postmaster" / "perf-script.txt")], tmp_db)
    assert rep.ok, rep.errors
    con = ro_con(tmp_db)
    src = con.execute("SELECT format, profile, compressed, event, samples, unresolved_samples, max_depth, "
                      "skipped_samples FROM profile_sources").fetchone()
    assert src == ("perf-script", "cpu", False, "cpu-clock", 71, 71, 36, 0)
    # every sample is kept: 71 headers in the file
    text = (P / "perf_postmaster" / "perf-script.txt").read_text()
    assert sum(1 for l in text.splitlines() if l and not l[0].isspace()) == 71
    assert con.execute("SELECT sum(samples), sum(weight) FROM profile_stacks").fetchone() == (71, 71 * 20408163)
    # the first sample: leaf __strlen_evex, root __libc_start_call_main, offsets stripped, the unresolved frame kept
    first = con.execute("SELECT process, pid, stack, leaf, depth FROM profile_stacks WHERE line = 1").fetchone()
    assert first[:2] == ("postgres", 9915)
    frames = first[2].split(";")
    assert frames[0] == "__libc_start_call_main" and frames[-1] == "__strlen_evex" == first[3]
    assert "[unknown] (postgres)" in frames and "pg_parse_query" in frames and len(frames) == first[4] == 12
    fn = {r[0]: r[1:] for r in con.execute("SELECT function, self_samples, total_samples, self_rank "
                                           "FROM profile_functions").fetchall()}
    assert fn["finish_task_switch.isra.0"][0] == 9 and fn["finish_task_switch.isra.0"][2] == 1
    assert fn["PostgresMain"][0] == 0 and fn["PostgresMain"][1] == 70
    # total counts a function once per stack (the unresolved frame appears twice in many stacks)
    assert fn["[unknown] (postgres)"][1] == 70
    assert con.execute("SELECT process, pids, samples, pct FROM profile_processes").fetchall() == [
        ("postgres", 2, 71, 100.0)]
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric LIKE 'profile%'").fetchall())
    assert m["profile_samples"] == 71 and m["profile_unresolved_pct"] == 100.0
    assert m["profile_self_pct"] == pytest.approx(100 * 9 / 71)


def test_gzip_system_wide_and_its_plain_twin_agree(tmp_db, tmp_path):
    gz = P / "perf_system" / "perf-script.txt.gz"
    plain = tmp_path / "perf-script.txt"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    rep = ingest([_run(tmp_path, "gz", gz), _run(tmp_path, "plain", plain)], tmp_db)
    assert rep.ok, rep.errors
    con = ro_con(tmp_db)
    rows = con.execute("SELECT run_id, compressed, samples FROM profile_sources ORDER BY run_id").fetchall()
    assert rows == [("gz", True, 144), ("plain", False, 144)]
    a, b = (con.execute("SELECT stack, pid, samples FROM profile_stacks WHERE run_id = ? ORDER BY ALL", [r]).fetchall()
            for r in ("gz", "plain"))
    assert a == b
    procs = dict(con.execute("SELECT process, samples FROM profile_processes WHERE run_id = 'gz'").fetchall())
    assert procs == {"postgres": 73, "swapper": 51, "pgbench": 19, "kdamond.0": 1}


def test_folded_stacks_match_the_perf_script_they_came_from(tmp_db, tmp_path):
    rep = ingest([_run(tmp_path, "folded", P / "folded" / "stacks.folded"),
                  _run(tmp_path, "perf", P / "perf_postmaster" / "perf-script.txt")], tmp_db)
    assert rep.ok, rep.errors
    con = ro_con(tmp_db)
    # stackcollapse-perf.pl counted perf's period (20408163 ns per sample) and put the process first
    assert con.execute("SELECT samples FROM profile_runs WHERE run_id = 'folded'").fetchone()[0] == 71 * 20408163
    shares = con.execute("""
        SELECT f.function, round(f.self_pct, 6), round(p.self_pct, 6) FROM profile_functions f
        JOIN profile_functions p ON p.run_id = 'perf' AND p.function = f.function
        WHERE f.run_id = 'folded' AND f.self_samples > 0""").fetchall()
    assert len(shares) > 10 and all(a == b for _, a, b in shares), shares
    # stackcollapse names an unresolved frame by its object ([postgres]): still counted as unresolved
    assert con.execute("SELECT unresolved FROM profile_functions WHERE run_id = 'folded' AND function = '[postgres]'"
                       ).fetchone()[0] is True
    assert con.execute("SELECT process, pid FROM profile_stacks WHERE run_id = 'folded' LIMIT 1").fetchone() == (None, None)


def test_strace_k_output_stores_a_stack_per_syscall(tmp_db, tmp_path):
    rep = ingest([_run(tmp_path, "one", P / "strace_k" / "strace-k.txt"),
                  _run(tmp_path, "forks", P / "strace_k_f" / "strace-k.txt")], tmp_db)
    assert rep.ok, rep.errors
    con = ro_con(tmp_db)
    text = (P / "strace_k" / "strace-k.txt").read_text().splitlines()
    calls = [l for l in text if l and not l.startswith((" >", "strace:", "+++", "---")) and "<unfinished" not in l]
    assert con.execute("SELECT samples, profile FROM profile_runs WHERE run_id = 'one'").fetchone() == (len(calls), "syscalls")
    ev = dict(con.execute("SELECT event, sum(samples) FROM profile_stacks WHERE run_id = 'one' GROUP BY event").fetchall())
    assert ev["epoll_wait"] >= 1 and ev["sendto"] >= 1
    # the syscall is the leaf; the stack is root first
    s = con.execute("SELECT stack FROM profile_stacks WHERE run_id = 'one' AND line = 1").fetchone()[0].split(";")
    assert s[0] == "_start" and s[-2:] == ["epoll_wait", "epoll_wait"] and "pg_sleep" in s
    # -f: a pid per process; a call split by another process (<unfinished ...> / resumed) counted once
    forks = con.execute("SELECT count(DISTINCT pid), sum(samples) FROM profile_stacks WHERE run_id = 'forks'").fetchone()
    ftext = (P / "strace_k_f" / "strace-k.txt").read_text()
    done = sum(1 for l in ftext.splitlines() if " sendto(" in l and "<unfinished" not in l) + ftext.count("resumed>")
    assert forks[0] >= 3 and forks[1] == done


def test_unresolved_frames_and_raw_addresses_are_kept(tmp_db, tmp_path):
    text = ("postgres 1200 [000] 10.000000: 1000 cpu-clock:\n"
            "\t    7f00aa [unknown] ([unknown])\n\t    55aa11 [unknown] (/usr/bin/postgres)\n"
            "\t    55aa22 PostgresMain+0x10 (/usr/bin/postgres)\n\n"
            "postgres 1200 [000] 10.010000: 1000 cpu-clock:\n\t    7ffe5dbf3a20\n"
            "\t    55aa22 PostgresMain+0x10 (/usr/bin/postgres)\n\n")
    rep = ingest([one_file_run(tmp_path, "perf.txt", text)], tmp_db)
    assert rep.ok, rep.errors
    con = ro_con(tmp_db)
    stacks = sorted(r[0] for r in con.execute("SELECT stack FROM profile_stacks").fetchall())
    assert stacks == ["PostgresMain;0x7ffe5dbf3a20", "PostgresMain;[unknown] (postgres);[unknown]"]
    unres = dict(con.execute("SELECT function, unresolved FROM profile_functions").fetchall())
    assert unres == {"PostgresMain": False, "[unknown] (postgres)": True, "[unknown]": True, "0x7ffe5dbf3a20": True}
    assert con.execute("SELECT unresolved_pct FROM profile_runs").fetchone()[0] == 100.0


def test_other_events_are_not_summed(tmp_db, tmp_path):
    text = ("postgres 1 1.0: 1 cycles:\n\t a1 f (/x)\n\npostgres 1 1.1: 5 instructions:\n\t a1 g (/x)\n\n"
            "postgres 1 1.2: 1 cycles:\n\t a1 f (/x)\n\n")
    rep = ingest([one_file_run(tmp_path, "perf.txt", text)], tmp_db)
    assert rep.ok, rep.errors
    assert any("instructions 1" in w for w in _warnings(rep))
    assert ro_con(tmp_db).execute("SELECT samples, skipped_samples, event FROM profile_sources").fetchone() == (2, 1, "cycles")


@pytest.mark.parametrize("name, text, line, words", [
    ("perf.txt", "postgres 1 1.0: 1 cycles:\n\t a1 f (/x)\n\nthis is not a sample\n", 4, "a perf script sample line"),
    ("perf.txt", "postgres 1 1.0: 1 cycles:\n\t a1 f (/x)\n\t zz?? broken\n", 3, "a call-chain frame"),
    ("stacks.folded", "a;b;c 10\na;b;d 3\na;b;e\n", 3, "no count"),
    ("stacks.folded", "a;b;c 10\na;b;d 3\na;b;e 1.5\n", 3, "count '1.5'"),
    ("stacks.folded", "a;b;c 10\na;b;d 3\na;b;e -2\n", 3, "count '-2'"),
    ("strace.txt", "sendto(7, \"x\", 1, 0, NULL, 0) = 1\n > /lib/libc.so.6(send+0x19) [0x10ab59]\n > /lib/libc.so.6(send+0x19 [0x10\n", 3,
     "a strace -k frame"),
])
def test_bad_input_names_file_and_line(tmp_db, tmp_path, name, text, line, words):
    run = one_file_run(tmp_path, name, text)
    rep = ingest([run], tmp_db)
    assert not rep.ok
    (err,) = rep.errors
    assert f"{name}:{line}:" in err and words in err, err


def test_a_cut_perf_script_drops_the_cut_sample_and_a_cut_gzip_is_an_error(tmp_db, tmp_path):
    text = (P / "perf_postmaster" / "perf-script.txt").read_text()
    cut = text[: text.index("PostgresMain", 40000)]
    rep = ingest([one_file_run(tmp_path, "perf-script.txt", cut)], tmp_db)
    assert rep.ok, rep.errors
    assert any("cut off" in w and "not stored" in w for w in _warnings(rep))
    stored = ro_con(tmp_db).execute("SELECT samples FROM profile_sources").fetchone()[0]
    assert stored == sum(1 for l in cut.splitlines() if l and not l[0].isspace()) - 1
    gz = (P / "perf_system" / "perf-script.txt.gz").read_bytes()
    d = tmp_path / "runs2" / "gz"
    d.mkdir(parents=True)
    (d / "perf-script.txt.gz").write_bytes(gz[: len(gz) // 2])
    rep = ingest([d], tmp_path / "other.duckdb")
    assert not rep.ok and "complete gzip stream" in rep.errors[0] and "perf-script.txt.gz" in rep.errors[0]
