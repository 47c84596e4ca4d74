"""`kansoku init DIR RUNS…` ingests the runs and writes a starter report that builds with no edit, and
`kansoku list runs|factors|metrics|hosts` shows one part of what the store holds. The runs are a small subset
of the example's: scale-up runs of one host (clients × checksums setting) and client/server runs of two hosts
(the server's files under host=server/)."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, run_tool
from test_start import subprocess_kansoku

CAMPAIGN = "campaign=example-2026-11"
EXAMPLE = ROOT / "data" / "runs" / "example" / CAMPAIGN
SCALEUP = [f"study=scaleup/workload=read/config={cfg}/clients={c}/rep=1"
           for cfg in ("checksums-off", "checksums-on") for c in (1, 2, 4)]
CLIENTSERVER = [f"study=clientserver/workload=read/config=checksums-off/clients={c}/rep=1" for c in (1, 2)]


def copy_runs(dest: Path, runs: list[str]) -> Path:
    for run in runs:
        shutil.copytree(EXAMPLE / run, dest / CAMPAIGN / run)
    return dest


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A site made by `kansoku init` from the runs, then built."""
    tmp = tmp_path_factory.mktemp("starter")
    runs = copy_runs(tmp / "runs", SCALEUP + CLIENTSERVER)
    init = subprocess_kansoku("init", tmp / "fy", runs, "--year", "2026", cwd=tmp)
    assert init.returncode == 0, init.stdout + init.stderr
    assert "chapters ['clientserver', 'scaleup']" in init.stdout, init.stdout
    build = run_tool("build", "--site", tmp / "fy", "-q", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    return tmp / "fy"


def spec(site: Path) -> dict:
    return tomllib.loads((site / "data" / "reports" / "fy.toml").read_text(encoding="utf-8"))


def page(site: Path, lang: str, chapter: str) -> str:
    return (site / "public" / lang / "reports" / "fy" / chapter / "index.html").read_text(encoding="utf-8")


def test_the_starter_spec_tables_tps_over_the_factor_with_the_most_values(site):
    s = spec(site)
    assert s["report"]["scope"]["campaigns"] == ["example-2026-11"]
    chapter = next(c for c in s["chapter"] if c["id"] == "scaleup")
    table, figure = chapter["table"][0], chapter["figure"][0]
    # clients has three values, config two: clients on the rows (its first value the baseline), config across
    assert table["rows"] == "clients" and table["columns"] == "config"
    assert table["baseline"] == {"factor": "clients", "value": "1"}
    assert table["metrics"] == ["tps", "cpu_idle_pct[server]"]
    assert table["where"] == {"campaign": "example-2026-11", "study": "scaleup"}
    assert (figure["x"], figure["series"], figure["metric"], figure["chart"]) == ("clients", "config", "tps", "line")


def test_the_starter_site_builds_and_its_page_shows_the_table(site):
    for lang, prose in (("en", "Results"), ("ja", "結果")):
        html = page(site, lang, "scaleup")
        assert prose in html
        assert re.search(r"(Table|表) 2\.1", html) and re.search(r"(Figure|図) 2\.1", html), lang
        assert 'csv/fy/scaleup-tps.%s.csv"' % lang in html
    html = page(site, "en", "scaleup")
    assert "checksums-on" in html and "ratio to 1" in html and "CPU %idle [server]" in html
    # the prose pages place the blocks in their sections
    text = (site / "content" / "reports" / "fy" / "scaleup.en.md").read_text(encoding="utf-8")
    assert text.index("## Method") < text.index("{{< commands >}}") < text.index("## Results") \
        < text.index('{{< tbl "scaleup-tps" >}}') < text.index("## Discussion")


def test_a_two_host_study_tables_the_server_cpu(site):
    chapter = next(c for c in spec(site)["chapter"] if c["id"] == "clientserver")
    assert chapter["table"][0]["metrics"] == ["tps", "cpu_idle_pct[server]"]
    assert "columns" not in chapter["table"][0]  # no other factor varies
    html = page(site, "en", "clientserver")
    assert "Table 1.1" in html and "CPU %idle [server]" in html


def test_list_metrics_names_the_per_host_forms(site):
    proc = subprocess_kansoku("list", "metrics", cwd=site)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split("\t")[0]: line.split("\t")[1:] for line in proc.stdout.splitlines()}
    assert lines["tps"] == ["tps", "higher is better", "8 runs"]
    assert lines["cpu_idle_pct[server]"] == ["%", "neither is better", "8 runs"]
    assert lines["cpu_idle_pct[client]"] == ["%", "neither is better", "2 runs"]
    got = json.loads(subprocess_kansoku("list", "metrics", "--json", cwd=site).stdout)
    cpu = next(m for m in got if m["metric"] == "cpu_idle_pct")
    assert {r["form"] for r in cpu["roles"]} == {"cpu_idle_pct[server]", "cpu_idle_pct[client]"}


def test_list_runs_factors_and_hosts(site):
    runs = subprocess_kansoku("list", "runs", cwd=site).stdout.splitlines()
    assert [r.split("\t")[0] for r in runs] == sorted(f"{CAMPAIGN}/{r}" for r in SCALEUP + CLIENTSERVER)
    assert all(r.split("\t")[1:3] == ["measured", "ok"] for r in runs)
    factors = dict(line.split("\t") for line in subprocess_kansoku("list", "factors", cwd=site).stdout.splitlines())
    assert factors["clients"] == "1 (3), 2 (3), 4 (2)" and factors["study"] == "clientserver (2), scaleup (6)"
    hosts = subprocess_kansoku("list", "hosts", "--json", cwd=site)
    assert {(h["role"], h["runs"]) for h in json.loads(hosts.stdout)} >= {("client", 2), ("server", 2)}
    assert subprocess_kansoku("list", "hosts", "--db", site / "none.duckdb").returncode == 2


def test_init_from_a_missing_directory_writes_nothing(tmp_path):
    proc = subprocess_kansoku("init", tmp_path / "site", tmp_path / "nowhere", cwd=tmp_path)
    assert proc.returncode == 2 and "nowhere" in proc.stderr
    assert not (tmp_path / "site").exists()
