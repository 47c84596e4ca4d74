"""A team starts its own report. `kansoku init` writes a site that builds, `kansoku check` lists every
problem of the specs and prose without building, `kansoku info` says what a store holds, `kansoku serve` serves
the site live, `kansoku docs` opens the manual installed with the package; and two errors that led astray: a
[[compare]] over a per-host metric (`cpu_idle_pct[server]`), and a prose page without `report:` in its front
matter (optional, docs/spec.md "Prose pages")."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, run_tool

SPEC = '''
[report]
id = "cs"
fiscal_year = 2026
title = { ja = "クライアントサーバ", en = "Client/server" }
organisation = { ja = "テスト", en = "Test" }
revision = "0.1"
copyright = "© test"

[report.scope]
campaigns = ["example-2026-11"]

[[chapter]]
id = "cs"
title = { ja = "クライアントサーバ", en = "Client/server" }

[[chapter.table]]
id = "tps"
caption = { ja = "TPS", en = "TPS" }
metric = "tps"
where = { campaign = "example-2026-11", study = "clientserver", workload = "read" }
rows = "clients"

[[compare]]
id = "hosts"
title = { ja = "比較", en = "Comparison" }
where = { campaign = "example-2026-11", study = "clientserver" }
a = { clients = "1" }
b = { clients = "4" }
metrics = METRICS
'''


def cs_site(tmp_path: Path, metrics: str, report_line: bool = True) -> Path:
    site = tmp_path / "site"
    (site / "data" / "reports").mkdir(parents=True)
    (site / "data" / "reports" / "cs.toml").write_text(SPEC.replace("METRICS", metrics), encoding="utf-8")
    (site / "content" / "reports" / "cs").mkdir(parents=True)
    for lang in ("ja", "en"):
        front = "---\ntitle: \"CS\"\n" + ("report: cs\n" if report_line else "") + "chapter: cs\n---\n"
        (site / "content" / "reports" / "cs" / f"cs.{lang}.md").write_text(
            front + "## Purpose\n\n{{< tbl \"tps\" >}}\n", encoding="utf-8")
    return site


def spec_line(site: Path, text: str) -> int:
    lines = (site / "data" / "reports" / "cs.toml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- errors that led astray ------------------------------------------------------------------------------------

@pytest.mark.slow  # a second small build: --all (CI); test_init_writes_a_site_that_checks_and_builds is quick
def test_a_compare_over_a_per_host_metric_with_its_role_builds(tmp_path, example_db):
    """The checker refused `cpu_idle_pct[server]` in [[compare]] metrics and suggested `cpu_idle_pct`, which
    the build then refused without a line: the role form is what compare takes, and the page shows it."""
    site = cs_site(tmp_path, '["tps", "cpu_idle_pct[server]"]')
    proc = run_tool("build", "--site", site, "--db", example_db, "-q")
    assert proc.returncode == 0, proc.stderr
    page = (site / "public" / "en" / "reports" / "cs" / "compare-hosts" / "index.html").read_text(encoding="utf-8")
    assert "CPU %idle [server]" in page


def test_a_compare_metric_the_hosts_cannot_answer_is_a_check_error_with_its_line(tmp_path, example_db):
    """A plain per-host metric that two hosts of a run answer, and a role no host of a run has: spec errors
    at the metric's line, in the spec's words (no `--metric`), before anything is computed."""
    site = cs_site(tmp_path, '["tps", "cpu_idle_pct", "cpu_idle_pct[standby]", "tps[server]", "cpu_idle_pct[sda]"]')
    proc = run_tool("build", "--site", site, "--db", example_db, "-q")
    assert proc.returncode == 3, proc.stderr
    line = spec_line(site, "metrics = [")
    err = proc.stderr
    assert f"cs.toml:{line}: compare[0].metrics[1]" in err and "name one, cpu_idle_pct[client] or " \
        "cpu_idle_pct[server]" in err, err
    assert f"cs.toml:{line}: compare[0].metrics[2]" in err and "no host with role 'standby'" in err, err
    assert "compare[0].metrics[3]" in err and "not measured per host" in err, err
    assert "compare[0].metrics[4]" in err and "takes no [selection]" in err, err
    assert "--metric" not in err
    assert not (site / "public").exists()


@pytest.mark.slow  # a second small build: --all (CI); test_init_writes_a_site_that_checks_and_builds is quick
def test_a_prose_page_without_report_in_its_front_matter_builds(tmp_path, example_db):
    """`report:` is optional (the page's directory says it): the page builds like one that names it, rather
    than failing in Hugo with a template trace."""
    site = cs_site(tmp_path, '["tps"]', report_line=False)
    proc = run_tool("build", "--site", site, "--db", example_db, "-q")
    assert proc.returncode == 0, proc.stderr
    page = (site / "public" / "en" / "reports" / "cs" / "cs" / "index.html").read_text(encoding="utf-8")
    assert "Table 1.1" in page and 'csv/cs/tps.en.csv"' in page


# -- the commands a team starts with, end to end -----------------------------------------------------------

def test_init_writes_a_site_that_checks_and_builds(tmp_path, example_db):
    site = tmp_path / "fy2026"
    init = subprocess_kansoku("init", site, "--campaign", "example-2026-11", "--chapter", "scaleup")
    assert init.returncode == 0, init.stderr
    spec = (site / "data" / "reports" / "fy2026.toml").read_text(encoding="utf-8")
    assert spec.startswith(f"#:schema {ROOT / 'docs' / 'report-spec.schema.json'}\n")
    assert '[report.scope]\ncampaigns = ["example-2026-11"]' in spec
    for lang, heads in (("ja", ["目的", "構成", "方法", "結果", "考察"]),
                        ("en", ["Purpose", "Setup", "Method", "Results", "Discussion"])):
        page = (site / "content" / "reports" / "fy2026" / f"scaleup.{lang}.md").read_text(encoding="utf-8")
        assert [line[3:] for line in page.splitlines() if line.startswith("## ")] == heads, lang
        assert (site / "content" / "reports" / "fy2026" / f"_index.{lang}.md").is_file()
    assert {"config.toml", ".gitignore", "README.md"} <= {p.name for p in site.iterdir()}
    assert "kansoku check" in (site / "README.md").read_text(encoding="utf-8")
    # nothing is overwritten; another report is added beside
    again = subprocess_kansoku("init", site)
    assert again.returncode == 2 and "overwrites nothing" in again.stderr
    assert subprocess_kansoku("init", site, "--report", "second").returncode == 0
    shutil.rmtree(site / "content" / "reports" / "second")
    (site / "data" / "reports" / "second.toml").unlink()
    # checked without a store (said), then against the example's; built; served
    check = subprocess_kansoku("check", cwd=site)
    assert check.returncode == 0 and "checked 1 report(s) (fy2026): no problem" in check.stdout, check.stderr
    assert "no store at" in check.stderr
    check = subprocess_kansoku("check", "--db", example_db, cwd=site)
    assert check.returncode == 0 and "no store" not in check.stderr, check.stderr
    build = run_tool("build", "--site", site, "--db", example_db, "-q")
    assert build.returncode == 0, build.stderr
    page = (site / "public" / "ja" / "reports" / "fy2026" / "scaleup" / "index.html").read_text(encoding="utf-8")
    assert "考察" in page
    served = serve_once(site, "reports/fy2026/scaleup/", example_db)
    assert "考察" in served


def test_check_lists_every_problem_with_its_line_without_building(tmp_path, example_db):
    site = cs_site(tmp_path, '["tps", "cpu_idle_pct", "tsp"]')
    page = site / "content" / "reports" / "cs" / "cs.en.md"
    page.write_text(page.read_text(encoding="utf-8").replace('"tps"', '"tpz"'), encoding="utf-8")
    proc = subprocess_kansoku("check", "--db", example_db, cwd=site)
    assert proc.returncode == 3, proc.stderr
    line = spec_line(site, "metrics = [")
    assert f"cs.toml:{line}: compare[0].metrics[1]" in proc.stderr  # a data-dependent problem (two hosts)
    assert f"cs.toml:{line}: compare[0].metrics[2]" in proc.stderr and "unknown metric 'tsp'" in proc.stderr
    assert "cs.en.md:8" in proc.stderr and "tpz" in proc.stderr, proc.stderr  # the prose, with its line
    assert not (site / "public").exists() and not (site / "data" / "generated").exists()


def test_info_lists_what_the_store_holds(example_db):
    proc = subprocess_kansoku("info", "--db", example_db)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert re.search(r"example-2026-11 \(\d+\): studies clientserver \(9\)", out), out
    assert re.search(r"^  clients: 1 \(\d+\), 2 \(\d+\), 4 \(\d+\), 8 ", out, re.M), out
    assert re.search(r"^  cpu_idle_pct \[%\], neither is better, \d+ runs; cpu_idle_pct\[client\] \(9\), "
                     r"cpu_idle_pct\[server\] \(\d+\)", out, re.M), out
    assert re.search(r"^  tps \[tps\], higher is better, \d+ runs$", out, re.M), out
    assert "  server: dbserver (9)" in out and "  client: vm (9)" in out
    got = json.loads(subprocess_kansoku("info", "--db", example_db, "--json").stdout)
    assert {r["origin"] for r in got["runs"]} == {"measured", "transcribed"}
    cpu = next(m for m in got["metrics"] if m["metric"] == "cpu_idle_pct")
    assert cpu["per_host"] and {r["form"] for r in cpu["roles"]} == {"cpu_idle_pct[server]", "cpu_idle_pct[client]"}
    missing = subprocess_kansoku("info", "--db", example_db.parent / "none.duckdb")
    assert missing.returncode == 2 and "kansoku ingest" in missing.stderr


def test_docs_lists_the_manual_and_prints_one():
    listing = subprocess_kansoku("docs")
    assert listing.returncode == 0
    for name in ("spec", "collect", "report-spec.schema.json", "collect-plan.schema.json", "examples/profile",
                 "examples/parallel", "examples/clientserver"):
        assert f"  {name} " in listing.stdout, name
    assert subprocess_kansoku("docs", "charts").stdout == (ROOT / "docs" / "charts.md").read_text(encoding="utf-8")
    assert subprocess_kansoku("docs", "--path", "examples/parallel").stdout.strip() == \
        str(ROOT / "data" / "runs" / "example" / "parallel.toml")
    bad = subprocess_kansoku("docs", "sepc")
    assert bad.returncode == 2 and "did you mean spec" in bad.stderr
    assert subprocess_kansoku("docs", "../../README.md").returncode == 2  # nothing outside the manual


# -- helpers ---------------------------------------------------------------------------------------------------

def subprocess_kansoku(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`kansoku ARGS` from this checkout, as a user runs the installed command."""
    return subprocess.run([sys.executable, "-c", KANSOKU, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


KANSOKU = f"import sys; sys.path.insert(0, {str(ROOT / 'tools')!r}); from kansoku.cli import main; sys.exit(main())"


def serve_once(site: Path, path: str, db: Path) -> str:
    """`kansoku serve --port 0` started, one page fetched from it, the server stopped."""
    proc = subprocess.Popen([sys.executable, "-c", KANSOKU, "serve", "--port", "0", "-q", "--db", str(db)], cwd=site,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/ja/", line)
        assert url, line + proc.stderr.read() if proc.poll() is not None else line
        with urllib.request.urlopen(url.group(0) + path, timeout=30) as resp:
            return resp.read().decode("utf-8")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
