"""The layout tools/collect writes, as ingest reads it: a campaign marker, run.toml and host.toml that are not what
they should be are refused with their file and line (exit 2, no traceback), never silently read otherwise; a
directory of files inside a host's directory is refused rather than becoming a run of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ro_con, run_tool
from sys_helpers import needs_sar
from test_hosts import as_host, real_sar_u, run_toml  # noqa: F401  (the fixture)

pytestmark = needs_sar


def _two_hosts(tmp_path: Path, sar: str, host_toml: bytes | str) -> Path:
    """A campaign with one run of two hosts: this one (pgclient) and host=dbserver/ with ``host_toml``."""
    camp = tmp_path / "campaign"
    run = camp / "clients=4"
    (run / "host=dbserver").mkdir(parents=True)
    (camp / ".kansoku-campaign").write_text("# the campaign root\n")
    (run / "run.toml").write_text(run_toml(sar, "pgclient", 'role = "client"'))
    (run / "sar_u.txt").write_text(as_host(sar, "pgclient"))
    hd = run / "host=dbserver"
    if isinstance(host_toml, bytes):
        (hd / "host.toml").write_bytes(host_toml)
    else:
        (hd / "host.toml").write_text(host_toml)
    (hd / "sar_u.txt").write_text(as_host(sar, "dbserver"))
    return camp


def _refused(tmp_path: Path, camp: Path, where: str, *words: str) -> None:
    p = run_tool("ingest", "--db", tmp_path / "k.duckdb", camp)
    out = p.stdout + p.stderr
    assert p.returncode == 2, out
    assert "Traceback" not in out and where in out, out
    for w in words:
        assert w in out, out


def test_a_campaign_marker_that_is_not_toml_is_refused_with_its_line(tmp_path, real_sar_u):  # noqa: F811
    """Read as nothing, ``default_role = client`` made every metric of the campaign silently the server's."""
    camp = _two_hosts(tmp_path, real_sar_u, 'hostname = "dbserver"\nrole = "server"\n')
    (camp / ".kansoku-campaign").write_text("# the campaign root\n\ndefault_role = client\n")
    _refused(tmp_path, camp, f"{camp / '.kansoku-campaign'}:3: not valid TOML", 'default_role = "client"')
    assert not (tmp_path / "k.duckdb").exists() or _runs(tmp_path / "k.duckdb") == 0


def test_a_layout_file_cut_inside_a_string_is_refused_at_its_last_line(tmp_path, real_sar_u):  # noqa: F811
    """TOML gives no line for an error at the end of the document (a string never closed): its last line."""
    camp = _two_hosts(tmp_path, real_sar_u, 'hostname = "dbserver"\nrole = "server"\nnote = "cut short\n')
    host_toml = next(camp.rglob("host.toml"))
    _refused(tmp_path, camp, f"{host_toml}:3: not valid TOML")


def test_a_campaign_marker_of_comments_or_settings_is_read(tmp_path, real_sar_u):  # noqa: F811
    camp = _two_hosts(tmp_path, real_sar_u, 'hostname = "dbserver"\nrole = "server"\n')
    (camp / ".kansoku-campaign").write_text('# the campaign root\ndefault_role = "client"\n')
    p = run_tool("ingest", "--db", tmp_path / "k.duckdb", camp)
    assert p.returncode == 0, p.stderr
    assert _runs(tmp_path / "k.duckdb") == 1


def test_a_host_toml_not_in_utf8_is_refused_with_its_line(tmp_path, real_sar_u):  # noqa: F811
    camp = _two_hosts(tmp_path, real_sar_u, 'hostname = "dbserver"\nrole = "server"\nnote = "caf\xe9"\n'.encode("latin-1"))
    host_toml = camp / "clients=4" / "host=dbserver" / "host.toml"
    _refused(tmp_path, camp, f"{host_toml}:3: expected UTF-8 text", "0xe9")


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("line, expected", [
    ("clock_offset_s = nan", "clock_offset_s = nan: expected a number of seconds"),
    ("clock_offset_s = inf", "clock_offset_s = inf: expected a number of seconds"),
    ("clock_offset_error_s = -nan", "clock_offset_error_s = nan: expected a number of seconds"),
    ('machine = "x"', "machine = 'x': expected the [machine] table"),
    ("role = 4", "role = 4: expected a role name"),
])
def test_a_host_toml_value_that_means_nothing_is_refused_with_its_line(tmp_path, real_sar_u, line,  # noqa: F811
                                                                        expected):
    lines = ['hostname = "dbserver"', 'role = "server"']
    if line.startswith("role"):
        lines[1] = line
    else:
        lines.append(line)
    camp = _two_hosts(tmp_path, real_sar_u, "\n".join(lines) + "\n")
    host_toml = camp / "clients=4" / "host=dbserver" / "host.toml"
    _refused(tmp_path, camp, f"{host_toml}:{2 if line.startswith('role') else 3}: {expected}")


def test_a_run_toml_machine_that_is_not_a_table_is_refused(tmp_path, real_sar_u):  # noqa: F811
    camp = _two_hosts(tmp_path, real_sar_u, 'hostname = "dbserver"\nrole = "server"\n')
    rt = camp / "clients=4" / "run.toml"
    rt.write_text('machine = "x"\n' + rt.read_text().split("\n[machine]")[0])
    _refused(tmp_path, camp, f"{rt}:1: machine = 'x': expected the [machine] table")


@pytest.mark.parametrize("inner", ["host=standby", "extra"])
def test_a_directory_of_files_inside_a_host_directory_is_refused(tmp_path, real_sar_u, inner):  # noqa: F811
    """Such a directory is not a run of its own (host=dbserver/host=standby would be a run
    'clients=4/host=dbserver' with a factor host=dbserver)."""
    camp = _two_hosts(tmp_path, real_sar_u, 'hostname = "dbserver"\nrole = "server"\n')
    nested = camp / "clients=4" / "host=dbserver" / inner
    nested.mkdir()
    (nested / "host.toml").write_text('hostname = "standby"\nrole = "standby"\n')
    (nested / "sar_u.txt").write_text(as_host(real_sar_u, "standby"))
    _refused(tmp_path, camp, f"{nested} (a directory, no lines): a directory of files inside the host directory",
             str(camp / "clients=4" / "host=dbserver"))
    assert not (tmp_path / "k.duckdb").exists() or _runs(tmp_path / "k.duckdb") == 0


def _runs(db: Path) -> int:
    con = ro_con(db)
    try:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    finally:
        con.close()
