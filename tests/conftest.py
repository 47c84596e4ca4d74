"""Shared fixtures. The corpus (../shared/corpus) is used when present; CI has it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))



def _shared() -> Path:
    """The workplace's shared/ folder: beside the checkout (CI, the main checkout), else beside one of its
    parents (a git worktree such as /work/wt/NAME), else where it would be beside the checkout."""
    for parent in ROOT.parents:
        if (parent / "shared" / "corpus").is_dir():
            return parent / "shared"
    return ROOT.parent / "shared"


SHARED = _shared()
CORPUS = Path(os.environ.get("KANSOKU_CORPUS", SHARED / "corpus"))
FIXTURES = ROOT / "tests" / "fixtures"
# the [report] table a test's inline report spec starts with
REPORT_HEAD = """[report]
id = "t"
fiscal_year = 2030
title = "T"
organisation = "O"
"""


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


def hold_store(db: str, ready, release) -> None:
    """In another process: the store ``db`` held open for writing, as an ingest holds it, until ``release``."""
    import duckdb

    con = duckdb.connect(db)
    ready.set()
    release.wait(60)
    con.close()


@contextlib.contextmanager
def held_elsewhere(hold, *args):
    """``hold(*args, ready, release)`` run in a process of its own: entered once it holds what it holds, released
    on leaving (or before, by setting the Event this yields)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=hold, args=(*args, ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        yield release
    finally:
        release.set()
        holder.join(30)


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


def pytest_addoption(parser):
    parser.addoption("--all", action="store_true", default=False,
                     help="also run the tests marked slow or browser (PDF renders, headless Chromium): what CI "
                          "runs (.ci/run); the whole suite's default run skips them")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The README's quick run (`python3 -m pytest -q`: the whole suite, no paths, not --all) runs on three
    processes when pytest-xdist is installed (`.ci/setup` installs it): the machines have two cores, and a third
    process works while another waits on a server, ssh or a tool's sleep (docs/testing.md;
    KANSOKU_TEST_PROCESSES=N sets another count). The session's example store, site and PDFs
    are still made once (``once_per_session``); a test file's tests run on one process (``--dist loadfile``).
    Naming tests, `--all` (CI), `-n N` or `-p no:xdist` keep
    pytest's own choice."""
    if (config.args_source != pytest.Config.ArgsSource.TESTPATHS or config.getoption("--all")
            or os.environ.get("KANSOKU_ALL_TESTS") == "1" or os.environ.get("PYTEST_XDIST_WORKER")
            or not config.pluginmanager.hasplugin("xdist") or getattr(config.option, "numprocesses", 0) is not None
            or config.getoption("collectonly") or config.getoption("usepdb")):
        return
    config.option.numprocesses = int(os.environ.get("KANSOKU_TEST_PROCESSES", "3"))
    if getattr(config.option, "dist", "no") == "no":
        # a file's tests on one process: a module's fixtures (a store ingested, a site built for the module) are
        # made once, not once per process. (Not loadgroup: with pytest 9.2 xdist 3.8 cannot add its group to a
        # test's id, so xdist_group marks are not honoured and such modules would run split over both processes.)
        config.option.dist = "loadfile"
        # the files in the order pytest_collection_modifyitems gives them (_longest_files_first), not xdist's
        # (most tests first)
        config.option.loadscopereorder = False


EXAMPLE_FIXTURES = ("example_db", "example_site", "example_pdfs_all")


def _example_need(item) -> int:
    """What of the session's example a test that runs needs: 2 its site (built from its store), 1 its store
    alone, 0 nothing (or the test is skipped)."""
    if item.get_closest_marker("skip") is not None or not any(n in item.fixturenames for n in EXAMPLE_FIXTURES):
        return 0
    return 2 if {"example_site", "example_pdfs_all"} & set(item.fixturenames) else 1


def _longest_files_first(items) -> None:
    """The quick run's order of test files, which its processes take one at a time (``--dist loadfile``,
    xdist's own reordering off): first the file that costs most of those that need the session's example site
    (its process ingests the example and builds the site; of those that need the example's store alone when
    none needs the site), then the files that do not need the example, longest first, so that the other
    processes work meanwhile instead of waiting for it; then the example's other files, longest first. Longest
    first, the last files are short ones and the processes finish together. tests/file_seconds.json holds each
    file's seconds in a quick run (tests/timeline.py writes it); a file it does not list counts 10 s. The tests
    the quick run skips are not counted as needing the example."""
    import json

    costs = json.loads((ROOT / "tests" / "file_seconds.json").read_text(encoding="utf-8"))
    files: dict[str, list] = {}
    for item in items:
        f = files.setdefault(item.path.name, [costs.get(item.path.name, 10.0), 0, []])
        f[1] = max(f[1], _example_need(item))
        f[2].append(item)
    by_cost = sorted(files, key=lambda name: (-files[name][0], name))
    example = sorted((name for name in by_cost if files[name][1]), key=lambda name: -files[name][1])[:1]
    example += [name for name in by_cost if files[name][1] and name not in example]
    order = example[:1] + [name for name in by_cost if not files[name][1]] + example[1:]
    items[:] = [item for name in order for item in files[name][2]]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, in the controller, for each process it starts: a process of the quick run orders the files
    longest first (its options are not the controller's: xdist hands a process its command line alone)."""
    if getattr(node.config.option, "loadscopereorder", True) is False:
        node.workerinput["kansoku_longest_first"] = True


def pytest_collection_modifyitems(config, items):
    # an xdist process of a run that hands out files in their collected order (the quick run, which
    # pytest_configure_node tells each process of); the controller takes the processes' order
    _skip_slow_in_the_quick_run(config, items)
    if getattr(config, "workerinput", {}).get("kansoku_longest_first"):
        _longest_files_first(items)


def _skip_slow_in_the_quick_run(config, items):
    """The README's `python3 -m pytest -q` (the whole suite, no paths) skips the tests marked slow (PDF
    renders, long trials, variants of what a quick test checks) or browser (headless Chromium), so that it stays
    under five minutes on two cores, except those also marked quick (one small PDF checked by its text, one
    headless-browser check: a few seconds each, so that the quick run still renders a PDF and drives Chromium);
    of a family marked ``quick_sample(n)`` it keeps n cases spread over the family (docs/testing.md). `--all`
    (what CI runs), `-m ...`, or naming test files or tests runs them too."""
    if config.getoption("--all") or os.environ.get("KANSOKU_ALL_TESTS") == "1" or config.option.markexpr:
        return
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:  # files or tests named: run what was named
        return
    skip = pytest.mark.skip(reason="slow or browser (a PDF render, a long trial, a variant of a quick test's path, "
                                   "headless Chromium): run with --all, as CI does")
    for item in items:
        if ("slow" in item.keywords or "browser" in item.keywords) and "quick" not in item.keywords:
            item.add_marker(skip)
    left = pytest.mark.skip(reason="another case of a sampled family (quick_sample): run with --all, as CI does")
    for item in _left_by_their_samples(items):
        item.add_marker(left)


def quick_sample_kept(n: int, size: int) -> list[int]:
    """The positions (0-based, in collection order) of the cases that a ``quick_sample(n)`` family of ``size``
    cases keeps in the quick run: ``n`` positions spread evenly from its first case to its last (a sample of one:
    the middle case; every case when the family has no more than ``n``)."""
    if size <= n:
        return list(range(size))
    if n <= 1:
        return [(size - 1) // 2]
    return sorted({round(i * (size - 1) / (n - 1)) for i in range(n)})


def _left_by_their_samples(items) -> list:
    """The cases that the quick run leaves out of the families marked ``quick_sample(n)`` (a parametrized test
    function's cases, in collection order): all but the ``n`` that ``quick_sample_kept`` spreads over it."""
    families: dict[tuple, list] = {}
    for item in items:
        mark = item.get_closest_marker("quick_sample")
        if mark is not None and getattr(item, "callspec", None) is not None:
            families.setdefault((item.path, item.parent.nodeid, item.originalname), [mark.args[0]]).append(item)
    left = []
    for n, *cases in families.values():
        kept = set(quick_sample_kept(n, len(cases)))
        left += [case for k, case in enumerate(cases) if k not in kept]
    return left


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With KANSOKU_TEST_TIMELINE=FILE, each test (setup, call and teardown) appends one line to FILE: the xdist
    worker, the test's id, its start and end (epoch seconds) and the CPU seconds it cost this process and the
    tools it started (user+sys, children waited for). For finding where the quick run's time goes."""
    out = os.environ.get("KANSOKU_TEST_TIMELINE")
    if not out:
        yield
        return
    import json
    import resource
    import time

    def cpu(who):
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    t0, s0, c0 = time.time(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    yield
    line = json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "test": item.nodeid,
                       "start": t0, "end": time.time(), "cpu_self": cpu(resource.RUSAGE_SELF) - s0,
                       "cpu_children": cpu(resource.RUSAGE_CHILDREN) - c0})
    with open(out, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def cache_entries(directory: Path) -> dict[str, bytes]:
    """A build cache's entries as kept on disk (kansoku/pickle_entries.py: one SQLite file of the directory):
    key -> the pickled bytes."""
    import sqlite3

    from kansoku.pickle_entries import DB_FILE

    con = sqlite3.connect(directory / DB_FILE)
    try:
        return dict(con.execute("SELECT key, data FROM entries"))
    finally:
        con.close()


def set_cache_entry(directory: Path, key: str, data: bytes) -> None:
    """Overwrite the bytes a build cache keeps under ``key`` (a test's corrupt or altered entry)."""
    import sqlite3

    from kansoku.pickle_entries import DB_FILE

    con = sqlite3.connect(directory / DB_FILE)
    try:
        with con:
            assert con.execute("UPDATE entries SET data = ? WHERE key = ?", (data, key)).rowcount == 1, key
    finally:
        con.close()


def copy_store(db: Path, dest: Path) -> Path:
    """A writable copy of a test store in ``dest``: the database file copied, its blobs hard-linked (a
    store never rewrites a blob). For a test that ingests more into a session's store."""
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(db, dest / db.name)
    for extra in (db.with_name(db.name + ".wal"),):
        if extra.exists():
            shutil.copy2(extra, dest / extra.name)
    blobs = db.parent / "blobs"
    if blobs.is_dir():
        shutil.copytree(blobs, dest / "blobs", copy_function=os.link)
    return dest / db.name


def session_dir(tmp_path_factory, name: str) -> Path:
    """A directory for what a test session makes once: its own under one process; under pytest-xdist
    (``-n 2``) one that all the session's workers share (see ``once_per_session``)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.mktemp(name)
    d = tmp_path_factory.getbasetemp().parent / name  # the session's directory, above each worker's own
    d.mkdir(exist_ok=True)
    return d


def once_per_session(tmp_path_factory, name: str, make) -> None:
    """Calls ``make()`` once per test session: under pytest-xdist, once for all workers (the first that needs
    it makes it under a lock; the others wait for it, then read what it made)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        make()
        return
    import fcntl

    shared = tmp_path_factory.getbasetemp().parent
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when make() raises
        done = shared / f"{name}.done"
        if not done.exists():
            make()
            done.touch()


@pytest.fixture(scope="session")
def example_db(tmp_path_factory) -> Path:
    """The README's example ingested once per test session: data/runs (the example campaign) and
    data/published when present, into a fresh database. Read it only (read-only connections, tools that
    read); a test that writes takes a copy (``copy_store``)."""
    base = session_dir(tmp_path_factory, "example")
    db = base / "kansoku.duckdb"
    inputs = [ROOT / "data" / "runs"] + ([ROOT / "data" / "published"] if (ROOT / "data" / "published").is_dir() else [])
    once_per_session(tmp_path_factory, "example-db", lambda: run_tool("ingest", "--db", db, *inputs, check=True))
    return db


@pytest.fixture(scope="session")
def published_db(tmp_path_factory) -> Path:
    """data/published (the past reports' transcribed tables) alone, ingested once per test session (three
    modules ingested it each). Read it only (read-only connections, tools that read, such as tools/build)."""
    base = session_dir(tmp_path_factory, "published")
    db = base / "kansoku.duckdb"
    once_per_session(tmp_path_factory, "published-db",
                     lambda: run_tool("ingest", "--db", db, ROOT / "data" / "published", check=True))
    return db


@pytest.fixture(scope="session")
def example_site(example_db, tmp_path_factory):
    """The example's site, built once per test session from ``example_db``. Returns (db, public_dir)."""
    base = example_db.parent
    out = base / "public"
    once_per_session(tmp_path_factory, "example-site",
                     lambda: run_tool("build", "--strict", "--db", example_db, "--out", out,
                                      "--generated", base / "generated",
                                      check=True))
    return example_db, out


_COMPUTED: dict = {}


def computed_report(db: Path, spec: Path, content_root: Path = ROOT / "content" / "reports"):
    """``kansoku.app.compute_one(db, spec, content_root)`` once per test session, for a store that no test
    writes (``example_db``): the example report took seconds to compute and several modules on every process
    computed it. Under pytest-xdist the first process to need it computes it and keeps it beside the store
    (pickled); the others read that. Read the result only (a test that changes it takes a ``copy.copy``)."""
    key = (str(db), str(spec), str(content_root))
    if key not in _COMPUTED:
        _COMPUTED[key] = _computed_once(db, spec, content_root, key)
    return _COMPUTED[key]


def _computed_once(db: Path, spec: Path, content_root: Path, key: tuple):
    from kansoku.app import compute_one

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute_one(db, spec, content_root)
    import fcntl
    import hashlib
    import pickle

    kept = Path(db).parent / "computed-reports" / (hashlib.sha256("\0".join(key).encode()).hexdigest()[:20] + ".pickle")
    kept.parent.mkdir(exist_ok=True)
    with open(kept.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when compute_one raises
        if kept.exists():
            return pickle.loads(kept.read_bytes())
        report = compute_one(db, spec, content_root)
        part = kept.with_suffix(".part")
        part.write_bytes(pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL))
        part.rename(kept)
        return report


REPORT_SPECS = sorted(p.stem for p in (ROOT / "data" / "reports").glob("*.toml"))


@pytest.fixture(scope="session")
def example_pdfs_all(example_site, tmp_path_factory) -> dict[str, dict[str, Path]]:
    """{report id: {lang: pdf}}: tools/pdf REPORT --lang all for every spec in data/reports, once per
    session (the PDF tests and the reader's tests read the same files)."""
    import shutil

    if not shutil.which("pdftotext"):
        pytest.skip("poppler-utils not installed")
    db, _ = example_site
    out = session_dir(tmp_path_factory, "pdfs")

    def render():
        for rid in REPORT_SPECS:
            proc = run_tool("pdf", rid, "--lang", "all", "--db", db, "--out", out, check=True, timeout=900)
            assert proc.stdout.count("wrote ") == 2, proc.stdout

    once_per_session(tmp_path_factory, "example-pdfs", render)
    return {rid: {lang: out / f"{rid}.{lang}.pdf" for lang in ("ja", "en")} for rid in REPORT_SPECS}


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


def pytest_configure(config):
    """The Ctrl-C tests need Python's handler in this process and in every tool they start. A suite started as
    a background job of a non-interactive shell (``( pytest & )``) begins with SIGINT ignored, Python then
    leaves it so, and an ignored SIGINT survives exec: four Ctrl-C tests failed that way."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _one_bytecode_cache()


def _one_bytecode_cache() -> None:
    """With PYTHONDONTWRITEBYTECODE set (and no PYTHONPYCACHEPREFIX), every tool a test starts would compile kansoku's
    modules from source again (hundreds of starts), and each pytest process would rewrite every test module
    again. The tests, their pytest processes and the tools they start then share one bytecode
    cache outside the checkout instead (PYTHONPYCACHEPREFIX, in the temp directory, by user): what Python does
    by default with __pycache__, the checkout left as the setting asked. Nothing else changes."""
    if not sys.flags.dont_write_bytecode or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    import tempfile

    prefix = str(Path(tempfile.gettempdir()) / f"kansoku-tests-pycache-{os.getuid()}")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix  # inherited by xdist's processes and by every tool started
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, False


@pytest.fixture(autouse=True)
def _ctrl_c_as_python_sets_it(request):
    """Every test starts with Python's own Ctrl-C handler: one that a test left changed is put back, and named."""
    yield
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.stderr.write(f"\n{request.node.nodeid} left SIGINT changed; Python's handler put back\n")
