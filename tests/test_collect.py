"""tools/collect without PostgreSQL: run directories, run.toml, failures, interrupts, campaign plans."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kansoku.collect import plan as collect_plan
from kansoku.collect import run as collect
from kansoku.ingest.runs import METADATA_KEYS, make_run

ROOT = Path(__file__).resolve().parents[1]
HAVE_MONITORS = all(shutil.which(p) for p in ("sar", "iostat", "vmstat"))
needs_monitors = pytest.mark.skipif(not HAVE_MONITORS, reason="sysstat/procps not installed (apt-get install sysstat)")


def load(run_dir: Path) -> dict:
    with open(run_dir / "run.toml", "rb") as fh:
        return tomllib.load(fh)


def collect_proc(*args: str, preexec=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "tools" / "collect"), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)


def wait_for(pred, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.05)


def processes_in(run_dir: Path) -> list[str]:
    """Commands of live processes whose working directory is run_dir (monitors left behind)."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if Path(os.readlink(p / "cwd")) == run_dir.resolve():
                status = (p / "stat").read_text().split()[2]
                if status != "Z":
                    out.append((p / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return out


@needs_monitors
def test_successful_run_writes_complete_run_dir(tool, tmp_path):
    p = tool("collect", "--root", tmp_path, "--settle", "0.3", "--note", "smoke test",
             "study=t", "clients=04", "rep=1", "--", "sh", "-c", "echo out; echo err >&2; sleep 1")
    assert p.returncode == 0, p.stderr
    run_dir = tmp_path / "study=t" / "clients=04" / "rep=1"
    assert {"sa.bin", "iostat_x.txt", "vmstat.txt", "sh.log", "run.toml"} <= {f.name for f in run_dir.iterdir()}
    assert (run_dir / "sh.log").read_text().split() == ["out", "err"]
    assert (run_dir / "sa.bin").stat().st_size > 0
    assert "avg-cpu" in (run_dir / "iostat_x.txt").read_text()
    assert "procs" in (run_dir / "vmstat.txt").read_text()
    meta = load(run_dir)
    assert meta["status"] == "ok" and meta["exit_code"] == 0 and "status_note" not in meta
    assert meta["collectors_start"] < meta["start"] < meta["end"] < meta["collectors_stop"]
    assert meta["start"].utcoffset().total_seconds() == 0
    assert (meta["end"] - meta["start"]).total_seconds() >= 1.0
    assert meta["factors"] == {"study": "t", "clients": "04", "rep": "1"}
    assert meta["commands"]["argv"] == ["sh", "-c", "echo out; echo err >&2; sleep 1"]
    assert meta["commands"]["cwd"] == str(run_dir.resolve())
    assert meta["commands"]["collectors_stop_signal"] == "sar:INT iostat:INT vmstat:INT"
    assert meta["machine"]["cpu_count"] >= 1 and meta["machine"]["mem_total_kib"] > 0
    assert meta["machine"]["kernel"].startswith("Linux")
    assert meta["versions"]["sysstat"].startswith("sysstat")
    assert "LANG" in meta["env"] and meta["notes"] == "smoke test"
    # every top-level scalar is metadata, never a factor
    assert all(k in METADATA_KEYS for k, v in meta.items() if not isinstance(v, dict))
    run = make_run(run_dir, tmp_path)
    assert run.factors == {"study": "t", "clients": "04", "rep": "1"}
    assert run.status == ("ok", None) and run.start_time == meta["start"]
    assert processes_in(run_dir) == []


def test_the_mpstat_monitor_records_softirqs_by_type_that_ingest_stores(tool, tmp_path):
    """mpstat, asked for by name, writes per-CPU use and softirqs by type beside the run: the data of the
    softirq_types chart."""
    import duckdb

    p = tool("collect", "--root", tmp_path / "runs", "--settle", "0.3", "--monitors", "vmstat,mpstat",
             "study=t", "rep=1", "--", "sh", "-c", "sleep 2")
    assert p.returncode == 0, p.stderr
    run_dir = tmp_path / "runs" / "study=t" / "rep=1"
    names = {f.name for f in run_dir.iterdir()}
    assert "mpstat.txt" in names and "vmstat.txt" in names and "sa.bin" not in names
    assert "NET_RX/s" in (run_dir / "mpstat.txt").read_text()
    assert load(run_dir)["commands"]["collectors_stop_signal"] == "vmstat:INT mpstat:INT"
    db = tmp_path / "k.duckdb"
    r = tool("ingest", "--db", db, tmp_path / "runs")
    assert r.returncode == 0, r.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        kinds = {m for (m,) in con.execute("SELECT DISTINCT metric FROM sys_metrics WHERE activity = 'softirq'").fetchall()}
    assert {"NET_RX", "TIMER"} <= {k.split("/")[0].upper() for k in kinds}, kinds
    assert tool("collect", "--monitors", "pidstat", "k=v", "--", "true").returncode == 2


def test_failing_benchmark_marks_run_failed(tool, tmp_path):
    p = tool("collect", "--root", tmp_path, "--no-monitors", "--settle", "0", "t=fail", "--",
             "sh", "-c", "echo boom >&2; exit 3")
    assert p.returncode == 3
    run_dir = tmp_path / "t=fail"
    meta = load(run_dir)
    assert meta["status"] == "failed" and meta["exit_code"] == 3
    assert "exit code 3" in meta["status_note"]
    assert (run_dir / "sh.log").read_text() == "boom\n"
    assert make_run(run_dir, tmp_path).status[0] == "failed"


def test_false_and_missing_program_are_failed_runs(tool, tmp_path):
    assert tool("collect", "--root", tmp_path, "--no-monitors", "--settle", "0", "t=false", "--", "false").returncode == 1
    assert load(tmp_path / "t=false")["status"] == "failed"
    p = tool("collect", "--root", tmp_path, "--no-monitors", "--settle", "0", "t=missing", "--", "/no/such/program")
    assert p.returncode == 127
    meta = load(tmp_path / "t=missing")
    assert meta["status"] == "failed" and meta["exit_code"] == 127 and "could not be started" in meta["status_note"]


def test_existing_run_is_refused_then_replaced(tool, tmp_path):
    args = ["--root", tmp_path, "--no-monitors", "--settle", "0", "t=1", "--", "true"]
    assert tool("collect", *args).returncode == 0
    p = tool("collect", *args)
    assert p.returncode == 2 and "already holds a run" in p.stderr
    assert tool("collect", "--replace", *args).returncode == 0
    hidden = [d.name for d in tmp_path.iterdir() if d.name.startswith(".t=1.attempt-")]
    assert len(hidden) == 1 and load(tmp_path / "t=1")["status"] == "ok"


@pytest.mark.parametrize("bad", ["noequals", "1x=2", "a=", "a=b/c", "a=.x"])
def test_bad_factor_is_rejected(tool, tmp_path, bad):
    p = tool("collect", "--root", tmp_path, bad, "--", "true")
    assert p.returncode == 2 and "error:" in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_collect_help_lists_its_options_and_a_bare_factor_is_refused(tool):
    p = tool("collect", "--help")
    assert p.returncode == 0 and "KEY=VALUE" in p.stdout and "--plan" in p.stdout and "--conninfo" in p.stdout
    p = tool("collect", "a=1")
    assert p.returncode == 2 and "after --" in p.stderr


def _ignore_sigint() -> None:  # like a campaign script put in the background by a shell
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@needs_monitors
@pytest.mark.parametrize("parent_ignores_sigint", [False, True])
def test_sigint_stops_benchmark_and_monitors(tmp_path, parent_ignores_sigint):
    proc = collect_proc("--root", str(tmp_path), "--settle", "0.2", "t=int", "--", "sleep", "30",
                        preexec=_ignore_sigint if parent_ignores_sigint else None)
    run_dir = tmp_path / "t=int"
    wait_for(lambda: (run_dir / "sleep.log").exists() and any("sleep 30" in c for c in processes_in(run_dir)))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    meta = load(run_dir)
    assert meta["status"] == "interrupted" and "SIGINT" in meta["status_note"]
    assert meta["exit_code"] == 130 and (meta["end"] - meta["start"]).total_seconds() < 10
    # the monitors stopped on SIGINT even when collect was started with SIGINT ignored (corpus pitfall)
    assert meta["commands"]["collectors_stop_signal"] == "sar:INT iostat:INT vmstat:INT"
    assert processes_in(run_dir) == []
    assert make_run(run_dir, tmp_path).status[0] == "failed"


def test_toml_writer_round_trips():
    now = datetime(2026, 11, 21, 23, 53, 5, 911050, tzinfo=timezone.utc)
    data = {"status": "ok", "exit_code": 0, "start": now, "notes": 'a "quoted"\nline\tand \\ \x01',
            "factors": {"clients": "4", "odd key": "x"},
            "machine": {"nproc": 2, "ratio": 0.5, "flag": True, "disks": {"vda": {"size_bytes": 1 << 40}}},
            "commands": {"argv": ["pgbench", "-c", "4"]}}
    back = tomllib.loads(collect.toml_dumps(data, "header\nline 2"))
    assert back == data


def test_password_in_a_conninfo_is_redacted_in_both_forms():
    assert collect.redact_conninfo("host=x password=secret user=u") == "host=x password=*** user=u"
    assert collect.redact_conninfo("host=x password='a b' user=u") == "host=x password=*** user=u"
    assert collect.redact_conninfo("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"


# ---------------------------------------------------------------- campaign plans

PLAN = """\
root = "runs"
seed = {seed}
order = "random"
group_by = ["config"]
repetitions = 2
monitors = false
settle_s = 0

[factors]
config = ["a", "b"]
clients = [1, 2, 4]

[run]
command = "sh -c 'echo {{config}} {{clients}} {{threads}} {{extra}} >> {{plan_dir}}/order.txt; {{fail}}'"
note = "plan test"

[vars]
threads = 1
extra = ""
fail = "true"

[[when]]
match = {{ clients = [2, 4] }}
threads = 2

[[when]]
match = {{ rep = 1 }}
extra = "first"

[[setup]]
on = ["config"]
command = "echo setup {{config}} >> order.txt"
"""


def write_plan(tmp_path: Path, seed: int = 7, extra: str = "") -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(PLAN.format(seed=seed) + extra)
    return p


def test_plan_order_is_reproducible_and_grouped(tmp_path):
    plan = collect_plan.load_plan(write_plan(tmp_path))
    a = [r.factors for r in collect_plan.plan_runs(plan)]
    b = [r.factors for r in collect_plan.plan_runs(collect_plan.load_plan(write_plan(tmp_path)))]
    assert a == b and len(a) == 12 and len({tuple(f.values()) for f in a}) == 12
    assert list(a[0]) == ["config", "clients", "rep"]
    configs = [f["config"] for f in a]
    assert configs == sorted(configs) or configs == sorted(configs, reverse=True)  # groups stay together
    others = [[r.factors for r in collect_plan.plan_runs(collect_plan.load_plan(write_plan(tmp_path, s)))]
              for s in (1, 2, 3)]
    assert any(o != a for o in others)
    runs = collect_plan.plan_runs(plan)
    by = {(r.factors["clients"], r.factors["rep"]): r.values for r in runs if r.factors["config"] == "a"}
    assert by[("1", "1")]["threads"] == 1 and by[("4", "2")]["threads"] == 2
    assert by[("1", "1")]["extra"] == "first" and by[("1", "2")]["extra"] == ""


def test_plan_runs_resumes_and_reruns_failures(tool, tmp_path):
    plan = write_plan(tmp_path)
    p = tool("collect", "--plan", plan, "--limit", "5")
    assert p.returncode == 0, p.stderr
    assert "[1/12]" in p.stderr and "left" in p.stderr
    lines = (tmp_path / "order.txt").read_text().splitlines()
    assert lines[0].startswith("setup ") and len([x for x in lines if not x.startswith("setup")]) == 5
    expected = [r.factors for r in collect_plan.plan_runs(collect_plan.load_plan(plan))]
    ran = [x.split()[:2] for x in lines if not x.startswith("setup")]
    assert ran == [[f["config"], f["clients"]] for f in expected[:5]]
    meta = load(tmp_path / "runs" / "config={config}/clients={clients}/rep={rep}".format(**expected[0]))
    assert meta["campaign"]["position"] == 1 and meta["campaign"]["total"] == 12 and meta["campaign"]["seed"] == 7
    assert meta["notes"] == "plan test" and meta["campaign"]["setup"] == [f"echo setup {expected[0]['config']} >> order.txt"]

    # mark one finished run as failed: a resumed campaign measures it again, keeping the old attempt hidden
    victim = tmp_path / "runs" / "config={config}/clients={clients}/rep={rep}".format(**expected[2])
    (victim / "run.toml").write_text((victim / "run.toml").read_text().replace('status = "ok"', 'status = "failed"'))
    dry = tool("collect", "--plan", plan, "--dry-run")
    assert dry.returncode == 0 and dry.stdout.count(" done ") == 4 and dry.stdout.count(" todo ") == 8
    p = tool("collect", "--plan", plan)
    assert p.returncode == 0, p.stderr
    assert "4 already done, 8 to run" in p.stderr
    assert len(list(victim.parent.glob(".rep=*.attempt-*"))) == 1
    lines = (tmp_path / "order.txt").read_text().splitlines()
    assert len([x for x in lines if not x.startswith("setup")]) == 13
    for f in expected:
        assert load(tmp_path / "runs" / "config={config}/clients={clients}/rep={rep}".format(**f))["status"] == "ok"
    p = tool("collect", "--plan", plan)
    assert p.returncode == 0 and "12 already done, 0 to run" in p.stderr


def test_plan_failure_is_recorded_and_campaign_goes_on(tool, tmp_path):
    plan = write_plan(tmp_path, extra='\n[[when]]\nmatch = { clients = 2, rep = 2 }\nfail = "exit 4"\n')
    p = tool("collect", "--plan", plan)
    assert p.returncode == 1 and "2 failed" in p.stderr
    failed = [d for d in (tmp_path / "runs").rglob("rep=*") if d.is_dir() and load(d)["status"] == "failed"]
    assert sorted(str(d.relative_to(tmp_path / "runs")) for d in failed) == [
        "config=a/clients=2/rep=2", "config=b/clients=2/rep=2"]
    assert all(load(d)["exit_code"] == 4 for d in failed)


def test_plan_interrupt_then_resume(tmp_path):
    plan = write_plan(tmp_path, extra='\n[[when]]\nmatch = { clients = 4 }\nfail = "sleep 30"\n')
    proc = collect_proc("--plan", str(plan))
    wait_for(lambda: any("sleep 30" in c for d in (tmp_path / "runs").rglob("clients=4/rep=*")
                         for c in processes_in(d)), timeout=30)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and "resume" in err
    states = [load(d)["status"] for d in (tmp_path / "runs").rglob("rep=*") if (d / "run.toml").exists()]
    assert states.count("interrupted") == 1 and set(states) <= {"ok", "interrupted"}
    plan.write_text(plan.read_text().replace('fail = "sleep 30"', 'fail = "true"'))
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "collect"), "--plan", str(plan)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert all(load(d)["status"] == "ok" for d in (tmp_path / "runs").rglob("rep=*"))


@pytest.mark.parametrize("edit, message", [
    ("seed = 7", "seed = \"x\""), ("[run]", "[run]\nbogus = 1"), ("root = ", "rooot = "),
    ('group_by = ["config"]', 'group_by = ["nope"]'),
])
def test_plan_errors_name_the_file(tmp_path, edit, message):
    p = write_plan(tmp_path)
    p.write_text(p.read_text().replace(edit, message, 1))
    with pytest.raises(collect.CollectError) as exc:
        collect_plan.load_plan(p)
    assert str(p) in str(exc.value)


def test_plan_template_error_names_the_file(tool, tmp_path):
    p = write_plan(tmp_path)
    p.write_text(p.read_text().replace("{threads}", "{thread}"))
    r = tool("collect", "--plan", p)
    assert r.returncode == 3 and str(p) in r.stderr
    line = 1 + p.read_text().splitlines().index(next(ln for ln in p.read_text().splitlines() if "{thread}" in ln))
    assert f'{p}:{line}: run.command: {{thread}} is not a factor' in r.stderr and 'did you mean "threads"' in r.stderr
    assert not (tmp_path / "runs").exists()  # checked before the first run


def test_plan_problems_all_at_once_with_lines_and_did_you_mean(tool, tmp_path):
    """A misspelt key, a match on a factor the plan lacks or a value it never takes, an override of an
    undeclared variable: each would silently drop an override; all are listed, with lines, exit 3."""
    p = write_plan(tmp_path, extra='\n[[when]]\nmatch = { client = 4 }\nthreads = 8\n'
                                   '\n[[when]]\nmatch = { config = "c" }\nthread = 3\n'
                                   '\n[hosts.db]\nrole = "server"\nssh = "db1"\nmonitor = ["sar"]\n')
    p.write_text(p.read_text().replace("settle_s = 0", "settle_s = 0\nworkloud = 1"))
    text = p.read_text().splitlines()
    at = lambda s: 1 + next(i for i, ln in enumerate(text) if s in ln)  # noqa: E731
    r = tool("collect", "--plan", p, "--dry-run")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "5 problems in the collect plan" in r.stderr
    for expected in (f'{p}:{at("workloud")}: workloud: unknown key "workloud"',
                     f'{p}:{at("client = 4")}: when[2].match.client: match names "client" is not a factor of the plan; '
                     'did you mean "clients"?',
                     f'{p}:{at("{ config = ")}: when[3].match.config: config = "c" never matches: config takes a, b',
                     f'{p}:{at("thread = 3")}: when[3].thread: "thread" is not a variable of [vars]: the override would '
                     'be dropped; did you mean "threads"?',
                     f'{p}:{at("monitor =")}: hosts.db.monitor: unknown key "monitor"; did you mean "monitors"?'):
        assert expected in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not r.stdout


def test_a_missing_plan_key_names_the_line_of_the_table_lacking_it(tmp_path):
    """A key missing at the top level (a plan cut short before [factors]) names line 1, as a spec's does; one
    missing in a table names the table's header."""
    p = write_plan(tmp_path, extra='\n[hosts.db]\nssh = "db1"\n')
    text = p.read_text()
    text = text.replace("seed = 7\n", "").replace('command = "sh -c', 'cmd = "sh -c')
    p.write_text(text[:text.index("[factors]")] + text[text.index("[run]"):])
    at = lambda s: 1 + p.read_text().splitlines().index(s)  # noqa: E731
    with pytest.raises(collect.CollectError) as exc:
        collect_plan.load_plan(p)
    for expected in (f'{p}:1: missing key "factors"', f'{p}:1: a random order needs seed = <integer>',
                     f'{p}:{at("[run]")}: run: missing key "command"',
                     f'{p}:{at("[hosts.db]")}: hosts.db: missing key "role"'):
        assert expected in str(exc.value), str(exc.value)


def test_help_points_to_files_that_exist(tool):
    import re

    r = tool("collect", "--help")
    assert r.returncode == 0
    named = re.findall(r"((?:docs|tools|data)/[\w./-]+\.\w+)", r.stdout)
    assert "docs/collect.md" in named
    for name in named:
        assert (ROOT / name).exists(), name


def test_plan_interrupt_during_setup(tmp_path):
    plan = write_plan(tmp_path)
    plan.write_text(plan.read_text().replace('command = "echo setup', 'command = "echo setup {config} >> started.txt; sleep 30; echo'))
    proc = collect_proc("--plan", str(plan), preexec=_ignore_sigint)
    wait_for(lambda: (tmp_path / "started.txt").exists())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and "resume" in err and "Traceback" not in err
    assert not list((tmp_path / "runs").rglob("run.toml"))
    assert "# interrupted" in (tmp_path / "runs" / ".setup" / "setup.log").read_text()
    wait_for(lambda: not any("sleep 30" in c for c in processes_in(tmp_path)), timeout=5)  # nothing left behind


def test_versions_of_the_tools_a_run_uses():
    assert collect.run_tools("sh", False, False, False) == []
    assert collect.run_tools("fio", True, False, False) == ["sysstat", "procps_vmstat", "fio"]
    assert collect.run_tools("pgbench", True, True, True) == ["sysstat", "procps_vmstat", "strace", "pgbench",
                                                              "psql", "postgres"]
    assert collect.run_tools("sysbench", False, False, True) == ["sysbench", "pgbench", "psql", "postgres"]


def test_a_benchmark_given_by_its_path_is_probed_there(tmp_path):
    fake = tmp_path / "bin" / "pgbench"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'pgbench (PostgreSQL) 99.1 (built here)'\n")
    fake.chmod(0o755)
    assert collect.tool_versions(["pgbench"], {"pgbench": str(fake)}) == {"pgbench": "pgbench (PostgreSQL) 99.1 (built here)"}
    assert collect.tool_versions(["pgbench"], {"pgbench": str(tmp_path / "absent")}) == {}


def test_plan_schema_document_is_current():
    from kansoku.collect import plan_schema

    assert plan_schema.SCHEMA_JSON.read_text(encoding="utf-8") == plan_schema.schema_json(), \
        "run: python3 -m kansoku.collect.plan_schema (from tools/)"


def test_a_bad_hosts_file_is_refused_before_anything_runs(tool, tmp_path):
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[hosts.a]\nrole = "client"\n\n[hosts.b]\nrole = "server"\n\n[hosts.c]\nrole = "server"\n'
                     'ssh = "db1"\nidentiy = "~/.ssh/id"\nmonitors = ["sar", "pidstat"]\n')
    marker = tmp_path / "ran"
    r = tool("collect", "--root", tmp_path / "runs", "--hosts", hosts, "k=v", "--", "touch", marker)
    assert r.returncode == 3, r.stderr
    assert f"{hosts}:4: hosts.b: hosts a, b have no ssh" in r.stderr
    assert "3 problems in the hosts file" in r.stderr
    assert f'{hosts}:10: hosts.c.identiy: unknown key "identiy"; did you mean "identity"?' in r.stderr
    assert f'{hosts}:11: hosts.c.monitors[1]: expected one of "sar", "iostat", "vmstat", "mpstat", found "pidstat"' in r.stderr
    assert not marker.exists() and not (tmp_path / "runs").exists()
