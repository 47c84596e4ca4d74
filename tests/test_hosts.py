"""Hosts in a run: host=<name>/ subdirectories, host.toml, roles on every system metric, machines,
and the refusal of two hosts' outputs laid out without the layout (docs/ingest.md, "Hosts in a run").

The sysstat files are real `sar -u` output (made by sar when the test runs), their header's hostname
rewritten to the server's and the client's; the client's samples are rewritten to 90 % idle so that the
two hosts' numbers can be told apart."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import ro_con, run_tool
from kansoku.model import encode
from site_helpers import one_table_spec
from sys_helpers import needs_sar
from sys_helpers import real_sar_u as sar_u

pytestmark = needs_sar


@pytest.fixture(scope="module")
def real_sar_u() -> str:
    """`sar -u 1 3` as this machine prints it (LC_ALL=C, ISO dates)."""
    return sar_u(3)


def as_host(sar: str, hostname: str, idle: float | None = None) -> str:
    """The same output as printed on ``hostname`` (the header's '(host)'), optionally with every sample
    ``idle`` % idle (the rest user time)."""
    lines = sar.splitlines()
    lines[0] = re.sub(r"\(([^)]*)\)", f"({hostname})", lines[0], count=1)
    if idle is not None:
        out = []
        for line in lines:
            parts = line.split()
            if len(parts) == 8 and parts[1] == "all":
                line = (f"{parts[0]:<15} all {100 - idle:9.2f} {0:9.2f} {0:9.2f} {0:9.2f} {0:9.2f} {idle:9.2f}")
            out.append(line)
        lines = out
    return "\n".join(lines) + "\n"


def window(sar: str) -> tuple[datetime, datetime]:
    """A run window around the samples (sar text prints local times of the header's date)."""
    day = re.search(r"(\d{4}-\d{2}-\d{2})", sar.splitlines()[0]).group(1)
    times = [l.split()[0] for l in sar.splitlines()[2:] if re.match(r"^\d\d:\d\d:\d\d\s+all", l)]
    first = datetime.fromisoformat(f"{day}T{times[0]}").replace(tzinfo=timezone.utc)
    last = datetime.fromisoformat(f"{day}T{times[-1]}").replace(tzinfo=timezone.utc)
    return first - timedelta(seconds=5), last + timedelta(seconds=5)


def run_toml(sar: str, hostname: str, extra: str = "") -> str:
    start, end = window(sar)
    return (f'status = "ok"\nstart = {start.isoformat()}\nend = {end.isoformat()}\nhostname = "{hostname}"\n'
            f'{extra}\n[factors]\nclients = "4"\n\n[machine]\nhostname = "{hostname}"\ncpu_model = "Intel Xeon"\n'
            'cpu_count = 2\nmem_total_kib = 8000000\nkernel = "Linux 6.1"\n')


def host_toml(hostname: str, role: str, cpu: str = "AMD EPYC") -> str:
    return (f'hostname = "{hostname}"\nrole = "{role}"\nclock_offset_s = 0.0021\nclock_offset_error_s = 0.0004\n\n'
            f'[machine]\nhostname = "{hostname}"\ncpu_model = "{cpu}"\ncpu_count = 32\nmem_total_kib = 64000000\n'
            'kernel = "Linux 6.1"\n')


def counts(db: Path) -> tuple[int, int]:
    if not db.exists():
        return 0, 0
    con = ro_con(db)
    try:
        return (con.execute("SELECT count(*) FROM runs").fetchone()[0],
                con.execute("SELECT count(*) FROM sys_metrics").fetchone()[0])
    finally:
        con.close()


def test_two_hosts_sar_in_one_directory_is_refused_with_the_layout(tmp_path, real_sar_u):
    """The server's and the client's `sar -u` side by side in one run directory would make the run's
    cpu_idle_pct the client's: exit 2, both hostnames named, the layout to use, nothing stored."""
    run = tmp_path / "campaign" / "clients=4"
    run.mkdir(parents=True)
    (tmp_path / "campaign" / ".kansoku-campaign").write_text("")
    (run / "sar_u_server.txt").write_text(as_host(real_sar_u, "dbserver"))
    (run / "sar_u_client.txt").write_text(as_host(real_sar_u, "pgclient", idle=90.0))
    db = tmp_path / "k.duckdb"
    p = run_tool("ingest", "--db", db, tmp_path / "campaign")
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stdout + p.stderr
    assert "'dbserver'" in err and "'pgclient'" in err and "2 hosts in one directory" in err
    assert "host=<name>/" in err and "host.toml" in err and "Traceback" not in err
    assert counts(db) == (0, 0)


def test_a_file_whose_hostname_contradicts_its_host_toml_is_refused(tmp_path, real_sar_u):
    run = tmp_path / "campaign" / "clients=4"
    (run / "host=dbserver").mkdir(parents=True)
    (tmp_path / "campaign" / ".kansoku-campaign").write_text("")
    (run / "run.toml").write_text(run_toml(real_sar_u, "pgclient", 'role = "client"'))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pgclient", idle=90.0))
    (run / "host=dbserver" / "host.toml").write_text(host_toml("dbserver", "server"))
    (run / "host=dbserver" / "sar_u.txt").write_text(as_host(real_sar_u, "standby1"))
    db = tmp_path / "k.duckdb"
    p = run_tool("ingest", "--db", db, tmp_path / "campaign")
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stdout + p.stderr
    assert "'standby1'" in err and "hostname = 'dbserver'" in err and "host.toml" in err
    assert "clients=4" in err and "Traceback" not in err
    assert counts(db) == (0, 0)


def test_two_hosts_of_a_run_with_one_hostname_are_refused_naming_both(tmp_path, real_sar_u):
    """Two standbys on cloned machines both print hostname 'pg' (different inventories): samples keyed by
    hostname would keep one standby's cpu_idle_pct (30 or 70, not both), so the ingest exits 2 naming both host
    directories and stores nothing."""
    camp = tmp_path / "campaign"
    run = camp / "clients=4"
    run.mkdir(parents=True)
    (camp / ".kansoku-campaign").write_text("")
    (run / "run.toml").write_text(run_toml(real_sar_u, "pgclient", 'role = "client"'))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pgclient", idle=90.0))
    for name, idle, cpu in (("standby1", 30.0, "AMD EPYC"), ("standby2", 70.0, "Intel Xeon Gold")):
        (run / f"host={name}").mkdir()
        (run / f"host={name}" / "host.toml").write_text(host_toml("pg", "standby", cpu=cpu))
        (run / f"host={name}" / "sar_u.txt").write_text(as_host(real_sar_u, "pg", idle=idle))
    db = tmp_path / "k.duckdb"
    p = run_tool("ingest", "--db", db, camp)
    err = p.stdout + p.stderr
    assert p.returncode == 2, err
    assert "host=standby1/" in err and "host=standby2/" in err and "one hostname 'pg'" in err, err
    assert "host=standby2/host.toml:1:" in err, err  # the line of its hostname
    assert "Traceback" not in err
    assert counts(db) == (0, 0)


def test_a_host_directory_repeating_the_runs_own_hostname_is_refused(tmp_path, real_sar_u):
    camp = tmp_path / "campaign"
    run = camp / "clients=4"
    (run / "host=pg").mkdir(parents=True)
    (camp / ".kansoku-campaign").write_text("")
    (run / "run.toml").write_text(run_toml(real_sar_u, "pg", 'role = "client"'))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pg", idle=90.0))
    (run / "host=pg" / "host.toml").write_text('role = "server"\n')  # its hostname: the directory's name
    (run / "host=pg" / "sar_u.txt").write_text(as_host(real_sar_u, "pg", idle=20.0))
    db = tmp_path / "k.duckdb"
    p = run_tool("ingest", "--db", db, camp)
    err = p.stdout + p.stderr
    assert p.returncode == 2, err
    assert "the run's own host" in err and "host=pg/" in err and "one hostname 'pg'" in err, err
    assert counts(db) == (0, 0)


@pytest.fixture
def two_host_run(tmp_path, real_sar_u) -> tuple[Path, Path]:
    """A run laid out as docs/ingest.md says: the client's files at the top (run.toml role = "client"), the
    server's under host=dbserver/ with its host.toml. Returns (campaign, db)."""
    camp = tmp_path / "campaign"
    run = camp / "clients=4"
    (run / "host=dbserver").mkdir(parents=True)
    (camp / ".kansoku-campaign").write_text("# the campaign root\n")
    (run / "run.toml").write_text(run_toml(real_sar_u, "pgclient", 'role = "client"'))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pgclient", idle=90.0))
    (run / "host=dbserver" / "host.toml").write_text(host_toml("dbserver", "server"))
    (run / "host=dbserver" / "sar_u.txt").write_text(as_host(real_sar_u, "dbserver", idle=20.0))
    return camp, tmp_path / "k.duckdb"


def test_the_layout_ingests_each_metric_with_its_host_and_role(two_host_run):
    camp, db = two_host_run
    p = run_tool("ingest", "--db", db, camp)
    assert p.returncode == 0, p.stdout + p.stderr
    con = ro_con(db)
    try:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("clients=4",)]  # one run, not two
        assert con.execute("SELECT count(*) FROM run_factors WHERE factor = 'host'").fetchone()[0] == 0
        hosts = con.execute("SELECT host, role, host_dir, clock_offset_s, clock_offset_error_s FROM run_hosts "
                            "ORDER BY host").fetchall()
        assert hosts == [("dbserver", "server", "host=dbserver", 0.0021, 0.0004), ("pgclient", "client", "", 0.0, 0.0)]
        by_role = dict(con.execute("SELECT role, round(avg(idle_pct), 2) FROM cpu WHERE cpu = 'all' GROUP BY role").fetchall())
        assert by_role == {"client": 90.0, "server": 20.0}
        assert set(con.execute("SELECT DISTINCT host, role FROM sys_metrics").fetchall()) == {
            ("pgclient", "client"), ("dbserver", "server")}
        per_host = dict(con.execute("SELECT role, value FROM run_metrics WHERE metric = 'cpu_idle_pct'").fetchall())
        assert per_host == {"client": 90.0, "server": 20.0}
        # two machines, by inventory: the client's Xeon (run.toml) and the server's EPYC (host.toml)
        assert sorted(r[0] for r in con.execute("SELECT cpu_model FROM machines").fetchall()) == ["AMD EPYC", "Intel Xeon"]
        assert con.execute("SELECT count(DISTINCT machine_id) FROM run_hosts").fetchone()[0] == 2
        files = {r[0]: r[1:] for r in con.execute("SELECT file_name, host, role FROM sources").fetchall()}
        assert files == {"sar_u.txt": ("pgclient", "client"), "host=dbserver/sar_u.txt": ("dbserver", "server")}
    finally:
        con.close()
    # unchanged on a second ingest
    again = run_tool("ingest", "--db", db, camp, "--json")
    assert again.returncode == 0 and '"replaced"' not in again.stdout


def test_every_table_a_parser_module_declares_per_host_has_those_columns_and_no_other_has(tmp_path):
    """The host columns are a parser module's declaration (ParserModule.host_columns), which the store applies
    to its tables: a table gets a role column only by it, and a host column too unless its own says more."""
    from kansoku import parsers
    from kansoku.store.db import open_store

    declared = parsers.host_columns()
    assert {"sys_metrics", "fio_jobs", "pg_checkpoints", "profile_stacks"} <= set(declared)
    store = open_store(tmp_path / "k.duckdb")
    try:
        owned = {t for m in parsers.modules() for t in m.tables}
        for table in sorted(owned | set(declared)):
            cols = set(store.table_columns(table))
            assert ("role" in cols) == (table in declared), table
            assert set(declared.get(table, ())) <= cols, table
    finally:
        store.close()


def test_a_role_changed_in_host_toml_reaches_the_stored_rows(two_host_run):
    camp, db = two_host_run
    run_tool("ingest", "--db", db, camp, check=True)
    toml = camp / "clients=4" / "host=dbserver" / "host.toml"
    toml.write_text(toml.read_text().replace('role = "server"', 'role = "primary"'))
    run_tool("ingest", "--db", db, camp, check=True)
    con = ro_con(db)
    try:
        assert set(con.execute("SELECT DISTINCT role FROM sys_metrics").fetchall()) == {("client",), ("primary",)}
    finally:
        con.close()


def _a_host_without_role(tmp_path, real_sar_u, host_toml: str | None):
    """A two-host run whose host=dbserver has no role (``host_toml``: its host.toml, None: none), ingested."""
    run = tmp_path / "campaign" / "clients=4"
    (run / "host=dbserver").mkdir(parents=True)
    (run / "run.toml").write_text(run_toml(real_sar_u, "pgclient"))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pgclient"))
    if host_toml is not None:
        (run / "host=dbserver" / "host.toml").write_text(host_toml)
    (run / "host=dbserver" / "sar_u.txt").write_text(as_host(real_sar_u, "dbserver"))
    p = run_tool("ingest", "--db", tmp_path / "k.duckdb", tmp_path / "campaign")
    assert p.returncode == 2
    return run, p


def test_a_host_toml_without_role_is_refused_at_its_last_line(tmp_path, real_sar_u):
    """The role was looked for to the end of host.toml: the refusal names its last line."""
    run, p = _a_host_without_role(tmp_path, real_sar_u, '# the database server\nhostname = "dbserver"\n')
    assert f"{run / 'host=dbserver' / 'host.toml'}:2: the host 'dbserver' of run " in p.stderr, p.stderr


def test_a_host_directory_without_host_toml_is_refused_saying_a_directory_has_no_lines(tmp_path, real_sar_u):
    run, p = _a_host_without_role(tmp_path, real_sar_u, None)
    assert f"{run / 'host=dbserver'} (a directory, no lines): the host 'dbserver' of run " in p.stderr, p.stderr
    assert "has no role; write host.toml with role = " in p.stderr, p.stderr


def test_a_host_directory_without_role_is_an_error_naming_it(tmp_path, real_sar_u):
    _, p = _a_host_without_role(tmp_path, real_sar_u, 'hostname = "dbserver"\n')
    assert "host.toml" in p.stdout + p.stderr and "has no role" in p.stdout + p.stderr


def test_default_role_from_the_campaign_file(tmp_path, real_sar_u):
    """The run's own host without run.toml role: the campaign's default_role (else 'server')."""
    camp = tmp_path / "campaign"
    run = camp / "clients=4"
    run.mkdir(parents=True)
    (camp / ".kansoku-campaign").write_text('default_role = "client"\n')
    (run / "run.toml").write_text(run_toml(real_sar_u, "pgclient"))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pgclient"))
    db = tmp_path / "k.duckdb"
    run_tool("ingest", "--db", db, camp, check=True)
    con = ro_con(db)
    try:
        assert con.execute("SELECT DISTINCT role FROM sys_metrics").fetchall() == [("client",)]
        assert con.execute("SELECT default_role FROM runs").fetchall() == [("client",)]
    finally:
        con.close()


# -- specs select a role ------------------------------------------------------------------------------------

SPEC = one_table_spec("hosts", """\
metrics = [{metrics}]
where = {{ clients = 4 }}
rows = "clients"
digits = {{ default = 2 }}
""")


def table_values(db: Path, tmp_path: Path, metrics: str) -> list:
    from kansoku.analysis.table_kinds import compute_table
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    p = tmp_path / "hosts.toml"
    p.write_text(SPEC.format(metrics=metrics), encoding="utf-8")
    report = load_report(p)
    store = open_store(db, read_only=True)
    try:
        table = compute_table(store, report, report.item("t"))
    finally:
        store.close()
    return [c.value for c in table.rows[0]][1:]


def test_a_spec_selects_each_role(two_host_run, tmp_path):
    camp, db = two_host_run
    run_tool("ingest", "--db", db, camp, check=True)
    server, client = table_values(db, tmp_path, '"cpu_idle_pct[server]", "cpu_idle_pct[client]"')
    assert (server, client) == (pytest.approx(20.0), pytest.approx(90.0))


def test_two_hosts_without_a_role_is_a_spec_error_naming_both(two_host_run, tmp_path):
    from kansoku.errors import SpecError

    camp, db = two_host_run
    run_tool("ingest", "--db", db, camp, check=True)
    with pytest.raises(SpecError) as exc:
        table_values(db, tmp_path, '"cpu_idle_pct"')
    msg = str(exc.value)
    assert exc.value.exit_code == 3
    assert "dbserver (server)" in msg and "pgclient (client)" in msg and "clients=4" in msg
    assert "cpu_idle_pct[client] or cpu_idle_pct[server]" in msg


def test_a_role_the_run_lacks_is_a_spec_error_naming_run_and_role(two_host_run, tmp_path):
    from kansoku.errors import SpecError

    camp, db = two_host_run
    run_tool("ingest", "--db", db, camp, check=True)
    with pytest.raises(SpecError) as exc:
        table_values(db, tmp_path, '"cpu_idle_pct[standby]"')
    assert exc.value.exit_code == 3
    assert "'clients=4'" in str(exc.value) and "role 'standby'" in str(exc.value)


def test_the_campaigns_default_role_answers_a_metric_without_role(two_host_run, tmp_path):
    camp, db = two_host_run
    (camp / ".kansoku-campaign").write_text('default_role = "server"\n')
    (camp / "clients=4" / "run.toml").write_text(
        (camp / "clients=4" / "run.toml").read_text())  # role = "client" stays on the run's own host
    run_tool("ingest", "--db", db, camp, check=True)
    assert table_values(db, tmp_path, '"cpu_idle_pct"') == [pytest.approx(20.0)]


# -- tools/compare ------------------------------------------------------------------------------------------

@pytest.fixture
def two_runs(two_host_run, real_sar_u) -> tuple[Path, Path]:
    """clients=4 (above) and clients=8: the same layout, the server on a newer kernel and 40 % idle."""
    camp, db = two_host_run
    run = camp / "clients=8"
    (run / "host=dbserver").mkdir(parents=True)
    (run / "run.toml").write_text(run_toml(real_sar_u, "pgclient", 'role = "client"').replace('clients = "4"',
                                                                                              'clients = "8"'))
    (run / "sar_u.txt").write_text(as_host(real_sar_u, "pgclient", idle=80.0))
    (run / "host=dbserver" / "host.toml").write_text(host_toml("dbserver", "server").replace("Linux 6.1", "Linux 6.6"))
    (run / "host=dbserver" / "sar_u.txt").write_text(as_host(real_sar_u, "dbserver", idle=40.0))
    run_tool("ingest", "--db", db, camp, check=True)
    return camp, db


def test_compare_selects_a_role_and_lists_environment_differences(two_runs):
    import json

    _, db = two_runs
    p = run_tool("compare", "--db", db, "clients=4", "clients=8", "--metric", "cpu_idle_pct[server]", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    [c] = doc["comparisons"]
    assert c["metric"] == "cpu_idle_pct[server]"
    assert (c["baseline"]["median"], c["candidate"]["median"]) == (pytest.approx(20.0), pytest.approx(40.0))
    env = {(d["role"], d["key"]): (d["a"], d["b"]) for d in doc["environment"]}
    assert env[("server", "machine.kernel")] == (["Linux 6.1"], ["Linux 6.6"])
    assert ("client", "machine.kernel") not in env  # the client's machine did not change
    text = run_tool("compare", "--db", db, "clients=4", "clients=8", "--metric", "cpu_idle_pct[client]")
    assert text.returncode == 0 and "environment differences" in text.stdout
    assert "[server] machine.kernel" in text.stdout and "Linux 6.1" in text.stdout and "Linux 6.6" in text.stdout
    # without --metric every host's value is compared, each by its role
    every = json.loads(run_tool("compare", "--db", db, "clients=4", "clients=8", "--json", check=True).stdout)
    assert {"cpu_idle_pct[server]", "cpu_idle_pct[client]"} <= {c["metric"] for c in every["comparisons"]}
    assert "cpu_idle_pct" not in {c["metric"] for c in every["comparisons"]}


def test_compare_metric_without_role_on_two_hosts_is_exit_3_naming_them(two_runs):
    _, db = two_runs
    p = run_tool("compare", "--db", db, "clients=4", "clients=8", "--metric", "cpu_idle_pct")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "dbserver (server)" in p.stderr and "pgclient (client)" in p.stderr
    lack = run_tool("compare", "--db", db, "clients=4", "clients=8", "--metric", "cpu_idle_pct[standby]")
    assert lack.returncode == 3 and "role 'standby'" in lack.stderr and "clients=4" in lack.stderr


# -- machines in a report -------------------------------------------------------------------------------------

def computed(db: Path, tmp_path: Path, table_extra: str = ""):
    from kansoku.report.build import compute_report
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    spec = SPEC.replace('where = {{ clients = 4 }}', 'where = {{ clients = [4, 8] }}') + table_extra
    p = tmp_path / "hosts.toml"
    p.write_text(spec.format(metrics='"tps_missing_ok", "cpu_idle_pct[server]"').replace('"tps_missing_ok", ', ""),
                 encoding="utf-8")
    report = load_report(p)
    store = open_store(db, read_only=True)
    try:
        return compute_report(store, report, content_root=tmp_path / "content", with_run_pages=False)
    finally:
        store.close()


def test_a_table_mixing_machines_is_a_build_error_unless_declared(two_runs, tmp_path):
    from kansoku.errors import SpecError

    _, db = two_runs
    with pytest.raises(SpecError) as exc:
        computed(db, tmp_path)
    msg = str(exc.value)
    assert exc.value.exit_code == 3 and "2 different machines" in msg and 'machines = "factor"' in msg
    assert "AMD EPYC" in msg and "Machine A" in msg and "Machine B" in msg
    rep = computed(db, tmp_path, 'machines = "factor"\n')
    block = rep.chapters[0].machines
    assert block["span"] and block["with_roles"] and block["machine_count"] == 3
    roles = sorted((r["name"]["en"], r["role"]["en"], r["runs"]) for r in block["machines"])
    assert [x[1] for x in roles].count("server") == 2 and [x[1] for x in roles].count("client") == 1
    assert block["summary"]["en"].startswith("The runs of this chapter ran on 3 different machines")
    assert "3 台の異なるマシン" in block["summary"]["ja"]
    # the appendix names every machine, with the roles it played
    env = encode(rep.environment)
    assert sorted(m["name"]["en"] for m in env["machines"]) == ["Machine A", "Machine B", "Machine C"]
    assert env["machine_fields"][0]["en"] == "Role"


@pytest.mark.slow  # the run ingested twice: --all (CI); test_the_layout_ingests_each_metric_with_its_host_and_role is quick
def test_the_parallel_ingest_attributes_hosts_as_the_serial_one(two_host_run):
    camp, db = two_host_run
    p = run_tool("ingest", "--db", db, "--jobs", "2", camp)
    assert p.returncode == 0, p.stdout + p.stderr
    con = ro_con(db)
    try:
        assert set(con.execute("SELECT DISTINCT host, role FROM sys_metrics").fetchall()) == {
            ("pgclient", "client"), ("dbserver", "server")}
    finally:
        con.close()


def test_an_older_campaigns_host_segment_stays_a_factor(tmp_path, real_sar_u):
    """host=<name> as a path factor (no host.toml, no run.toml above it) is a run of its own, as before."""
    camp = tmp_path / "campaign"
    for name in ("a", "b"):
        run = camp / f"host={name}"
        run.mkdir(parents=True)
        (run / "sar_u.txt").write_text(as_host(real_sar_u, name))
    db = tmp_path / "k.duckdb"
    run_tool("ingest", "--db", db, camp, check=True)
    con = ro_con(db)
    try:
        assert sorted(con.execute("SELECT value FROM run_factors WHERE factor = 'host'").fetchall()) == [("a",), ("b",)]
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    finally:
        con.close()


def test_clocks_further_apart_than_the_sampling_interval_are_refused(two_host_run):
    camp, db = two_host_run
    toml = camp / "clients=4" / "host=dbserver" / "host.toml"
    toml.write_text(toml.read_text().replace("clock_offset_s = 0.0021", "clock_offset_s = 2.5"))
    p = run_tool("ingest", "--db", db, camp)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stdout + p.stderr
    assert "clock_offset_s = 2.5" in err and "'dbserver'" in err and "clients=4" in err and "1 s" in err
    assert "host=dbserver/host.toml:3: clock_offset_s" in err, err  # the line that says it
    assert counts(db) == (0, 0)


def test_the_appendix_shows_the_servers_settings_from_its_host_toml(two_host_run, tmp_path):
    """The client's run.toml captured no server; the server's host.toml did: the settings appendix is the
    server's, never an empty table, and the server's versions are listed beside the client's."""
    camp, db = two_host_run
    ht = camp / "clients=4" / "host=dbserver" / "host.toml"
    ht.write_text(ht.read_text() + '\n[versions]\npostgres = "PostgreSQL 15.18"\n\n[server]\n'
                  'server_version = "15.18"\nshared_buffers = "128MB"\nwal_level = "replica"\n'
                  'non_default = ["shared_buffers", "wal_level"]\n')
    run_tool("ingest", "--db", db, camp, check=True)
    rep = computed(db, tmp_path)
    env = encode(rep.environment)
    settings = {s["name"]: [v["value"] for v in s["values"]] for s in env["settings"]}
    assert settings == {"shared_buffers": ["128MB"], "wal_level": ["replica"]}
    assert {v["tool"] for v in env["versions"]} >= {"postgres"}
