"""End to end: a real PostgreSQL (Debian's, loopback only), a tiny campaign through tools/collect,
tools/ingest into a fresh database, and (when tools/build exists) a site built from it.

Skips when the PostgreSQL server binaries, pgbench or sysstat are absent (CI installs them:
apt-get install postgresql sysstat).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import tomllib
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pg_bindir() -> Path | None:
    env = os.environ.get("PG_BINDIR")
    cands = [env] if env else sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    for c in reversed(cands):
        if c and (Path(c) / "initdb").exists() and (Path(c) / "pg_ctl").exists():
            return Path(c)
    return None


def _skip_reason() -> str | None:
    if _pg_bindir() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql)"
    missing = [p for p in ("pgbench", "psql", "sar", "iostat", "vmstat") if shutil.which(p) is None]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install postgresql sysstat)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root but there is no postgres OS user to run the server"
        if shutil.which("runuser") is None:
            return "runuser not found"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_pg(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@pytest.fixture(scope="module")
def server():
    """A throwaway cluster on 127.0.0.1:<free port>, in a directory the postgres user can reach."""
    bindir = _pg_bindir()
    base = Path(tempfile.mkdtemp(prefix="kansoku_it_", dir="/tmp"))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    data = base / "data"
    port = _free_port()
    subprocess.run(_as_pg([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                           "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]),
                   check=True, capture_output=True, cwd="/")
    conf = (f"\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{base}'\n"
            "shared_buffers = 32MB\nautovacuum = off\nfsync = off\n")
    subprocess.run(_as_pg(["sh", "-c", f"cat >> {data}/postgresql.conf"]), input=conf.encode(), check=True)
    subprocess.run(_as_pg([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"), "-w", "start"]),
                   check=True, capture_output=True, cwd="/")
    try:
        subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres",
                        "-c", "CREATE DATABASE bench"], check=True, capture_output=True)
        yield {"port": port, "data": data, "base": base}
    finally:
        subprocess.run(_as_pg([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, cwd="/")
        shutil.rmtree(base, ignore_errors=True)


PLAN = """\
root = "runs"
seed = 1
order = "random"
settle_s = 0.5
pg_stat_interval_s = 0.5
repetitions = 1

[factors]
study = ["scaleup"]
workload = ["read"]
config = ["checksums-off"]
clients = [1, 2]

[run]
command = "pgbench -n -h 127.0.0.1 -p {port} -U postgres -c {{clients}} -j 1 -T 2 -P 1 -r -f {{plan_dir}}/read.sql -s 1 {{txlog}} bench"
output = "pgbench.log"
conninfo = "host=127.0.0.1 port={port} user=postgres dbname=bench"
strace_pidfile = "{pidfile}"

[vars]
txlog = ""

[[when]]
match = {{ clients = 2 }}
txlog = "-l --sampling-rate=0.5"

[[setup]]
on = ["workload"]
command = "pgbench -i -q -s 1 -h 127.0.0.1 -p {port} -U postgres bench"
"""

SPEC = """\
[report]
id = "it"
fiscal_year = 2026
title = { ja = "統合テスト", en = "Integration test" }
subtitle = { ja = "tools/collect", en = "tools/collect" }
organisation = { ja = "kansoku", en = "kansoku" }
revision = "1.0"
copyright = "kansoku"

[factors.clients]
name = { ja = "クライアント数", en = "Clients" }

[[chapter]]
id = "scaleup"
title = { ja = "スケールアップ", en = "Scale-up" }

[[chapter.table]]
id = "read-tps"
caption = { ja = "TPS", en = "TPS" }
metric = "tps"
where = { study = "scaleup", workload = "read" }
rows = "clients"
columns = "config"
aggregate = "median"
"""


def test_campaign_collected_from_a_plan_ingests_and_builds(server, tmp_path, tool):
    port = server["port"]
    camp = tmp_path / "campaign"
    camp.mkdir()
    shutil.copy(ROOT / "data" / "runs" / "example" / "scripts" / "read.sql", camp / "read.sql")
    strace = shutil.which("strace") is not None
    plan_text = PLAN.format(port=port, pidfile=server["data"] / "postmaster.pid")
    if not strace:
        plan_text = "\n".join(line for line in plan_text.splitlines() if not line.startswith("strace_pidfile"))
    (camp / "plan.toml").write_text(plan_text)

    p = tool("collect", "--plan", camp / "plan.toml", timeout=120)
    assert p.returncode == 0, p.stderr
    assert "[2/2]" in p.stderr

    runs = camp / "runs" / "study=scaleup" / "workload=read" / "config=checksums-off"
    for clients in (1, 2):
        run_dir = runs / f"clients={clients}" / "rep=1"
        with open(run_dir / "run.toml", "rb") as fh:
            meta = tomllib.load(fh)
        assert meta["status"] == "ok" and meta["exit_code"] == 0
        assert meta["collectors_start"] < meta["start"] < meta["end"] < meta["collectors_stop"]
        assert 1.5 < (meta["end"] - meta["start"]).total_seconds() < 30
        assert meta["factors"]["clients"] == str(clients)
        assert meta["commands"]["argv"][0] == "pgbench" and f"-c {clients}" in meta["commands"]["benchmark"]
        assert meta["commands"]["collectors_stop_signal"] == "sar:INT iostat:INT vmstat:INT"
        srv = meta["server"]
        assert "capture_error" not in srv, srv.get("capture_error")
        assert srv["version"].startswith("PostgreSQL ")
        assert srv["port"] == str(port) and srv["data_checksums"] == "off" and srv["fsync"] == "off"
        assert "shared_buffers" in srv["non_default"] and srv["shared_buffers"] == "32MB"
        csv_lines = (run_dir / "pg_settings.csv").read_text().splitlines()
        assert csv_lines[0] == "name,setting,unit,source"
        assert any(line.startswith("shared_buffers,4096,8kB,configuration file") for line in csv_lines)
        assert meta["versions"]["pgbench"].startswith("pgbench (PostgreSQL)")
        # the checkpointer's counters every 0.5 s during the benchmark (collect/pg_stat_series.py)
        series = (run_dir / "pg_stat_bgwriter.series.csv").read_text().splitlines()
        assert series[0].startswith("snapshot_at,checkpoints_timed,checkpoints_req")
        assert len(series) - 1 == meta["commands"]["pg_stat_series_snapshots"] >= 1
        assert meta["campaign"]["total"] == 2
        assert "tps = " in (run_dir / "pgbench.log").read_text()
        assert (run_dir / "sa.bin").stat().st_size > 0
        if strace:
            assert "% time" in (run_dir / "strace_c.txt").read_text()
            assert meta["commands"]["strace_stop_signal"] == "INT"
    assert list((runs / "clients=2" / "rep=1").glob("pgbench_log.*"))
    assert (camp / "runs" / ".setup" / "setup.log").read_text().count("# exit code: 0") == 1

    db = tmp_path / "it.duckdb"
    p = tool("ingest", "--db", db, camp / "runs", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT run_id, status, start_time FROM runs ORDER BY run_id").fetchall()
        ids = [r[0] for r in rows]
        assert ids == [f"study=scaleup/workload=read/config=checksums-off/clients={c}/rep=1" for c in (1, 2)]
        assert all(r[1] == "ok" and r[2] is not None for r in rows)
        summ = con.execute("SELECT run_id, clients, tps FROM pgbench_summary ORDER BY run_id").fetchall()
        assert [(r[0], r[1]) for r in summ] == [(ids[0], 1), (ids[1], 2)]
        assert all(r[2] > 0 for r in summ)
        factors = dict(con.execute(
            "SELECT factor, value FROM run_factors WHERE run_id = ?", [ids[1]]).fetchall())
        assert factors == {"study": "scaleup", "workload": "read", "config": "checksums-off",
                           "clients": "2", "rep": "1"}
        formats = {r[0] for r in con.execute("SELECT DISTINCT format FROM sources WHERE run_id = ?", [ids[1]]).fetchall()}
        expected = {"pgbench-stdout", "pgbench-txlog", "sa-binary", "iostat-text", "vmstat-text"}
        assert expected | ({"strace-summary"} if strace else set()) <= formats, formats
        server_version = con.execute(
            "SELECT json_extract_string(run_toml, '$.server.server_version') FROM runs LIMIT 1").fetchone()[0]
        assert server_version and server_version[0].isdigit()
    finally:
        con.close()

    if not (ROOT / "tools" / "build").exists():
        return
    # build a site from this database, with its own spec, content and generated-data directories
    # (tools/build would write the working tree's data/generated)
    from kansoku.app import build_site as build

    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "it.toml").write_text(SPEC, encoding="utf-8")
    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    for p in (ROOT / "content").glob("_index.*.md"):
        shutil.copy(p, content)
    for p in (ROOT / "content" / "reports").glob("_index.*.md"):
        shutil.copy(p, content / "reports")
    out = tmp_path / "public"
    res = build(db, out, spec_dir=specs, generated=tmp_path / "generated", content=content)
    assert res.reports == ["it"] and res.tables == 1
    pages = {p.relative_to(out).as_posix() for p in out.rglob("index.html")}
    assert any(p.startswith("ja/reports/it/") for p in pages) and any(p.startswith("en/reports/it/") for p in pages)
    html = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*.html") if "/reports/it/" in p.as_posix())
    assert "checksums-off" in html
