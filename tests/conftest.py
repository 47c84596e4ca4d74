"""Shared fixtures. The corpus (../shared/corpus) is used when present; CI has it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

CORPUS = Path(os.environ.get("KANSOKU_CORPUS", ROOT.parent / "shared" / "corpus"))
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    return CORPUS


@pytest.fixture
def tmp_db(tmp_path: Path) -> Path:
    return tmp_path / "kansoku.duckdb"


def run_tool(name: str, *args: str, cwd: Path = ROOT, check: bool = False, timeout: float = 600,
             env: dict | None = None) -> subprocess.CompletedProcess:
    """Run tools/NAME as a user would, from the repository root."""
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / name), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"tools/{name} {' '.join(map(str, args))} exited {proc.returncode}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


@pytest.fixture
def tool():
    return run_tool


@pytest.fixture(scope="session")
def example_site(tmp_path_factory):
    """The README's example: ingest data/runs (and data/published when present) into a fresh
    database and build the site, once per test session. Returns (db, public_dir)."""
    base = tmp_path_factory.mktemp("example")
    db, out = base / "kansoku.duckdb", base / "public"
    inputs = [ROOT / "data" / "runs"] + ([ROOT / "data" / "published"] if (ROOT / "data" / "published").is_dir() else [])
    run_tool("ingest", "--db", db, *inputs, check=True)
    run_tool("build", "--db", db, "--out", out, "--generated", base / "generated", check=True)
    return db, out


def _run_toml_beside(path: Path) -> dict:
    from kansoku.errors import RunError
    from kansoku.ingest.runs import load_run_toml

    try:
        return load_run_toml(path.parent)
    except RunError:
        return {}


class RecordingSink:
    """A Sink without a database, for corpus walks: only whether each file parses, and what it gave."""

    def __init__(self, path: Path):
        self.path, self.run_id, self.run_start = path, None, None
        self.run_meta = _run_toml_beside(path)  # handed in as ingest does
        self.rows: dict[str, list] = {}
        self.warnings: list = []

    def add_rows(self, table, rows):
        rows = list(rows)
        self.rows.setdefault(table, []).extend(rows)
        return len(rows)

    def load_sql(self, table, select_sql, params=None):
        raise AssertionError("a corpus walk with RecordingSink cannot run SQL loads")

    def warn(self, line, message):
        self.warnings.append((line, message))

    def fact(self, name, value):
        pass

    def set_tool_version(self, version):
        pass


def ro_con(db: Path):
    """A read-only connection to a test database."""
    import duckdb

    return duckdb.connect(str(db), read_only=True)


def one_file_run(tmp_path: Path, name: str, text: str, run_toml: str | None = None) -> Path:
    """A run directory holding one file (and optionally a run.toml), for ingesting a single output."""
    d = tmp_path / "runs" / name.replace(".", "_")
    d.mkdir(parents=True)
    (d / name).write_text(text)
    if run_toml is not None:
        (d / "run.toml").write_text(run_toml)
    return d
