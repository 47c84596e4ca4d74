"""Issue 41: a team starts its own report. `kansoku init` writes a site that builds, `kansoku check` lists every
problem of the specs and prose without building, `kansoku info` says what a store holds, `kansoku serve` serves
a built site, `kansoku docs` opens the manual installed with the package; and two errors that led astray: a
[[compare]] over a per-host metric (`cpu_idle_pct[server]`), and a prose page without `report:` in its front
matter (optional, docs/spec.md "Prose pages")."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, run_tool

CS = "campaign=example-2026-11/study=clientserver"

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


def test_a_prose_page_without_report_in_its_front_matter_builds(tmp_path, example_db):
    """`report:` is optional (the page's directory says it): the page builds like one that names it, rather
    than failing in Hugo with a template trace."""
    site = cs_site(tmp_path, '["tps"]', report_line=False)
    proc = run_tool("build", "--site", site, "--db", example_db, "-q")
    assert proc.returncode == 0, proc.stderr
    page = (site / "public" / "en" / "reports" / "cs" / "cs" / "index.html").read_text(encoding="utf-8")
    assert "Table 1.1" in page and 'csv/cs/tps.en.csv"' in page
