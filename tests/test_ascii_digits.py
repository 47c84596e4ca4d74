"""Digits other than ASCII ('１２', fullwidth) are no number any tool prints: every parser refuses them with the
file and the line, and every regular expression of the parsers reads only ASCII digits."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, ro_con, run_tool

PGB = FIXTURES / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off" / "clients=1" / "rep=1"
PGLOG = FIXTURES / "postgres_log" / "study=checkpoints" / "clients=2" / "rep=1"
FIO = FIXTURES / "fio" / "rw=read" / "format=normal" / "rep=1"
SAR_TEXT = ("Linux 5.4.0 (db1) \t04/18/19 \t_x86_64_\t(2 CPU)\n\n"
            "10:00:00        CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
            "10:00:01        all      1.00      0.00      1.00      0.00      0.00     98.00\n"
            "10:00:02        all      2.00      0.00      1.00      0.00      0.00     97.00\n").encode()
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _fullwidth(rx: bytes):
    """Rewrite the first match of rx (a number a tool printed) in fullwidth digits."""
    def edit(data: bytes) -> bytes:
        m = re.search(rx, data, flags=re.M)
        assert m, rx
        return data[:m.start()] + m.group().decode().translate(FULLWIDTH).encode() + data[m.end():]
    return edit


# (file name, its bytes, the number to rewrite, the line that holds it)
CASES = {
    "sar text": ("sar.txt", SAR_TEXT, rb"(?<=all      )2\.00", 5),
    "sadf -d": ("sadf_d.csv", (FIXTURES / "sar" / "run1" / "sadf_d.csv").read_bytes(), rb"(?<=UTC;-1;)2\.08", 2),
    "iostat": ("iostat_x.txt", (FIXTURES / "iostat" / "iostat_x.txt").read_bytes(), rb"40\.60", 5),
    "vmstat": ("vmstat.txt", (FIXTURES / "vmstat" / "vmstat.txt").read_bytes(), rb"21930212", 3),
    "pgbench": ("pgbench.log", (PGB / "pgbench.log").read_bytes(), rb"(?<=progress: 1\.0 s, )181\.0", None),
    "strace -c": ("strace_c.txt", (FIXTURES / "strace" / "variant=c_f" / "strace_c.txt").read_bytes(),
                  rb"149540", None),
    "pg_test_fsync": ("pg_test_fsync.txt", (FIXTURES / "pg_test_fsync" / "pg_test_fsync15.18_s1.txt").read_bytes(),
                      rb"18639\.459", 6),
    "fio text": ("fio_output.txt", (FIO / "fio_output.txt").read_bytes(), rb"(?<=clat \(usec\): min=)29", None),
    "pg_stat csv": ("pg_stat_bgwriter.after.csv", (FIXTURES / "pg_stat" / "clients=2" /
                                                  "pg_stat_bgwriter.after.csv").read_bytes(), rb"(?<=,)209447", 2),
    "psql timing": ("psql-timing.txt", (FIXTURES / "queries" / "timing" / "psql-timing.txt").read_bytes(),
                    rb"(?<=Time: )123\.597", 8),
    "folded stacks": ("stacks.folded", (FIXTURES / "profiles" / "folded" / "stacks.folded").read_bytes(),
                      rb"(?<=_int_malloc )20408163", 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fullwidth_digits_are_refused_with_file_and_line(tmp_path, tmp_db, case):
    name, data, rx, line = CASES[case]
    run = tmp_path / "runs" / "run"
    run.mkdir(parents=True)
    (run / name).write_bytes(_fullwidth(rx)(data))
    proc = run_tool("ingest", "--db", tmp_db, run)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    if line is None:
        damaged = (run / name).read_bytes()
        at = damaged.index(re.search(rx, data, flags=re.M).group().decode().translate(FULLWIDTH).encode())
        line = damaged[:at].count(b"\n") + 1
    assert f"{run / name}:{line}:" in proc.stderr, proc.stderr
    if tmp_db.exists():
        assert ro_con(tmp_db).execute("SELECT count(*) FROM sources").fetchone()[0] == 0


def _regex_calls_without_ascii(path: Path) -> list[str]:
    text = path.read_text()
    out = []
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub",
                                       "subn", "split"}):
            flags = [a for a in node.args[1:] if "ASCII" in ast.unparse(a)] + \
                [k for k in node.keywords if k.arg == "flags" and "ASCII" in ast.unparse(k.value)]
            if not flags:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_every_parser_regex_reads_ascii_digits_only():
    missing = [at for p in sorted((ROOT / "tools" / "kansoku" / "parsers").rglob("*.py"))
               for at in _regex_calls_without_ascii(p)]
    assert not missing, "re.ASCII missing (\\d would read '１２'): " + ", ".join(missing)
