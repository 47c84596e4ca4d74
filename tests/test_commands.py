"""The method section's commands and scripts (analysis/commands.py, {{< commands >}}), from the runs' run.toml.

The example campaign's scale-up runs recorded their pgbench command lines; the scripts they ran are kept with
them (tools/collect copies -f scripts into the run directory). The block printed in the method section must be
the template of those commands — values that differ as [name], options some runs used in brackets with the
runs that used them — and the scripts byte for byte.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, computed_report
from kansoku.analysis.commands import _parts
from kansoku.collect.run import copy_scripts, script_args
from kansoku.ingest.detect import detect
from kansoku.model import encode
from kansoku.store.db import open_store

EXAMPLE = ROOT / "data" / "runs" / "example"


def test_pgbench_command_line_splits_into_options_and_their_values():
    parts = _parts(shlex.split("pgbench -n -c 8 -j4 --rate=100 -f a.sql@2 -f b.sql -l bench"), "pgbench")
    assert [(k, v) for k, _, v in parts] == [
        ("-n", None), ("-c", "8"), ("-j", "4"), ("--rate", "100"), ("-f", "a.sql@2"), ("-f#2", "b.sql"),
        ("-l", None), ("@1", "bench")]


def test_collect_copies_the_scripts_a_run_used(tmp_path: Path):
    script = tmp_path / "plan" / "read.sql"
    script.parent.mkdir()
    script.write_text("\\set aid random(1, 100)\nSELECT 1;\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    argv = ["pgbench", "-c", "1", "-f", str(script) + "@3", "--file=missing.sql", "bench"]
    assert script_args(argv) == [str(script), "missing.sql"]
    assert copy_scripts(argv, run_dir) == ["read.sql"]  # the missing one is pgbench's to report
    assert (run_dir / "read.sql").read_bytes() == script.read_bytes()
    assert copy_scripts(["fio", "-f", str(script)], run_dir) == []  # only pgbench's -f is a script


@pytest.mark.parametrize("name", ["read.sql", "update.sql"])
def test_the_example_scripts_are_detected_by_content(name: str):
    fmt = detect(EXAMPLE / "scripts" / name).format
    assert fmt is not None and fmt.name == "pgbench-script"


def test_plain_sql_and_other_text_are_not_scripts(tmp_path: Path):
    for i, text in enumerate(["SELECT 1;\n", "\\set x 1\nhello world\n", "transaction type: x.sql\n\\set a 1\n"]):
        p = tmp_path / f"f{i}.txt"
        p.write_text(text)
        fmt = detect(p).format
        assert fmt is None or fmt.name != "pgbench-script", text


def recorded_by(example_db: Path, chapter, column: str, factor: str) -> list[tuple]:
    """(a part of run.toml, the run's value of ``factor``) of every run of a chapter's tables."""
    store = open_store(example_db, read_only=True)
    try:
        return store.query(
            f"SELECT {column}, f.value FROM runs r JOIN run_factors f USING (run_id) "
            "WHERE f.factor = ? AND r.run_id IN (SELECT unnest(?::VARCHAR[]))",
            [factor, sorted(set(r for t in chapter.tables.values() for r in t.runs))])
    finally:
        store.close()


def test_scaleup_method_shows_the_commands_the_runs_recorded(example_db: Path):
    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    ch = next(c for c in rep.chapters if c.id == "scaleup")
    blocks = {tuple(s.name for s in b.scripts): b for b in ch.commands}
    assert set(blocks) == {("scripts/read.sql",), ("scripts/update.sql",)}
    recorded = recorded_by(example_db, ch, "r.run_toml->>'$.commands.benchmark'", "workload")
    store = open_store(example_db, read_only=True)
    try:
        plan_scripts_as_run = store.query("SELECT count(*) FROM runs WHERE run_id LIKE 'scripts%'")[0][0]
    finally:
        store.close()
    assert plan_scripts_as_run == 0  # scripts/ beside the plans is not a run: its files are attachments
    for workload, block in (("read", blocks[("scripts/read.sql",)]), ("update", blocks[("scripts/update.sql",)])):
        mine = [cmd for cmd, w in recorded if w == workload]
        assert block.runs == len(mine)
        en = block.command["en"]
        # every recorded command is an instance of the template: fill the placeholders back in
        for cmd in mine:
            argv = shlex.split(cmd)
            clients = argv[argv.index("-c") + 1]
            threads = argv[argv.index("-j") + 1]
            expect = en.replace("[Clients]", clients).replace("[Threads]", threads)
            logging = "-l" in argv
            expect = re.sub(r" \[(-l [^\]]*)\]", (lambda m: " " + m.group(1)) if logging else "", expect)
            got = " ".join(a if "/scripts/" not in a else "scripts/" + a.rsplit("/scripts/", 1)[1] for a in argv)
            assert expect == got
        assert "-c [Clients]" in en and "-j [Threads]" in en
        assert "[Threads]: 1, 1, 2, 4 (Clients 1, 2, 4, 8)" in block.varying[0]["en"]
        assert block.optional and block.optional[0]["en"].endswith(" (Repetition: 1)")
        assert "-c [クライアント数]" in block.command["ja"]
        assert any("pgbench -i" in s["en"] for s in block.setup)
        assert any("[Configuration]" in s["en"] for s in block.setup)  # sh setup.sh start [Configuration]
        (script,) = block.scripts
        assert script.text == (EXAMPLE / "scripts" / f"{workload}.sql").read_text()
        assert script.runs == block.runs
    assert "/work/" not in json.dumps(encode(ch.commands))  # no measuring machine's paths


def test_commands_appear_in_the_site_and_the_pdf(example_site):
    _, public = example_site
    for lang, word in (("en", "scripts/read.sql: 40 runs"), ("ja", "scripts/read.sql: 40 実行")):
        html = (public / lang / "reports" / "example" / "scaleup" / "index.html").read_text()
        assert word in html
        assert "\\set aid random(1, :aid_max)" in html
        assert "-c [" in html


@pytest.mark.slow
def test_commands_in_the_pdf(example_pdfs_all, example_db):
    out = example_pdfs_all["example"]["en"]  # built once per session (conftest)
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert "The benchmark command" in text
    assert "-c [Clients] -j [Threads]" in text
    assert "UPDATE pgbench_accounts SET filler" in text
    # every command copies back as it is: a line breaks only between arguments (with a shell's ` \`
    # continuation), never inside one
    flat = " ".join(t for t in text.split() if t != "\\")
    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    placed = [ch for ch in rep.chapters  # the chapters whose page places {{< commands >}}
              if "{{< commands" in (ROOT / "content" / "reports" / "example" / f"{ch.id}.en.md").read_text()]
    commands = [c["en"] for ch in placed for b in ch.commands for c in [b.command, *b.setup]]
    assert commands
    for command in commands:
        assert "$ " + " ".join(command.split()) in flat, command


def test_a_script_run_by_an_interpreter_is_named_after_the_script(example_db: Path):
    """The parallel-query study ran `python3 …/tools/collect queries …`: its block is "collect queries", and
    the command printed is still the one that ran."""
    from kansoku.analysis.commands import _program_name

    assert _program_name(["pgbench", "-c", "1"]) == "pgbench"
    assert _program_name(["/usr/bin/python3", "/x/tools/collect", "queries", "--set", "a=1"]) == "collect queries"
    assert _program_name(["sh", "setup.sh"]) == "setup.sh"
    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    [block] = next(c for c in rep.chapters if c.id == "parallel").commands
    assert block.program == "collect queries" and block.runs == 15
    assert block.command["en"].startswith("python3 ") and " queries " in block.command["en"]
    # another program's long options with their values: named after the option, not "[Argument]" twice
    assert "--set [Setting]" in block.command["en"] and "--seed [Seed]" in block.command["en"]
    assert "--set [設定]" in block.command["ja"] and "[Argument]" not in block.command["en"]
    assert "[Seed]: 1, 2, 3, 4, 5" in [v["en"] for v in block.varying]


def test_setup_lines_that_differ_by_a_factor_print_one_template(example_db: Path):
    """The versions chapter's runs made their data with their own version's pgbench: one line, the version
    as a placeholder inside the path, and every run's recorded line an instance of it."""
    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    ch = next(c for c in rep.chapters if c.id == "versions")
    recorded = recorded_by(example_db, ch, "(r.run_toml->'campaign'->'setup')::VARCHAR", "version")
    checked = 0
    for block in ch.commands:
        inits = [s["en"] for s in block.setup if "pgbench -i" in s["en"]]
        assert len(inits) == 1 and "/pg[PostgreSQL version]/bin/pgbench -i" in inits[0], block.setup
        assert "-s 10" in inits[0]  # a word every run holds alike stays, though a factor's value could spell it
        for lines, version in recorded:
            mine = [x for x in json.loads(lines) if "pgbench -i" in x]
            if mine and mine[0].endswith(inits[0].rsplit(" ", 1)[1]):
                assert mine[0] == inits[0].replace("[PostgreSQL version]", version)
                checked += 1
    assert checked == len(recorded)  # every run's recorded line, of one block or the other


def _update_run_naming(tmp_path: Path, script_text: str, listed: bool = True) -> Path:
    """A copy of one example update run whose update.sql is replaced by ``script_text``; its run.toml names the
    script as tools/collect does ([commands] scripts) unless ``listed`` is false. Only the pgbench files kept."""
    src = next((EXAMPLE / "campaign=example-2026-11" / "study=scaleup").rglob("update.sql")).parent
    run = tmp_path / "runs" / src.relative_to(EXAMPLE)  # the directory names its factors, as run.toml does
    run.mkdir(parents=True)
    for name in ("pgbench.log", "run.toml"):
        (run / name).write_bytes((src / name).read_bytes())
    (run / "update.sql").write_text(script_text)
    if listed:
        meta = (run / "run.toml").read_text()
        (run / "run.toml").write_text(meta.replace("[commands]\n", '[commands]\nscripts = ["update.sql"]\n', 1))
    return run


def _ingest(tmp_path: Path, run: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["python3", str(ROOT / "tools" / "ingest"), "-v", "--db", str(tmp_path / "k.duckdb"),
                           str(tmp_path / "runs")], capture_output=True, text=True, timeout=120)


def test_a_script_of_sql_only_is_kept_when_its_run_names_it(tmp_path: Path):
    run = _update_run_naming(tmp_path, "-- one insert\nINSERT INTO t VALUES (1);\n")
    p = _ingest(tmp_path, run)
    assert p.returncode == 0, p.stderr
    store = open_store(tmp_path / "k.duckdb", read_only=True)
    try:
        rows = store.query("SELECT s.format, f.text FROM pgbench_script_files f JOIN sources s USING (source_id)")
    finally:
        store.close()
    assert rows == [("pgbench-script-sql", "-- one insert\nINSERT INTO t VALUES (1);\n")]


def test_a_script_of_sql_only_that_no_run_names_is_not_claimed(tmp_path: Path):
    run = _update_run_naming(tmp_path, "INSERT INTO t VALUES (1);\n", listed=False)
    p = _ingest(tmp_path, run)
    assert p.returncode == 0, p.stderr
    assert "update.sql: not a known tool output" in p.stdout + p.stderr


def test_a_named_script_with_a_line_of_no_script_is_refused_with_its_line(tmp_path: Path):
    run = _update_run_naming(tmp_path, "INSERT INTO t VALUES (1);\n\nhello world\n")
    p = _ingest(tmp_path, run)
    assert p.returncode == 2
    assert "update.sql:3" in p.stderr and "neither SQL nor a meta-command" in p.stderr
    assert "Traceback" not in p.stderr


def test_no_chapter_prints_the_collecting_machines_campaign_directory(example_db: Path):
    """Commands and their setup (an ssh chapter's setup names its script by its absolute path) are printed
    relative to the campaign directory: the collecting machine's paths mean nothing to a reader."""
    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    setups = [s for ch in rep.chapters for b in ch.commands for s in b.setup]
    assert any("setup.sh" in s["en"] for s in setups)
    for ch in rep.chapters:
        assert "/data/runs/example" not in json.dumps(encode(ch.commands)), ch.id
