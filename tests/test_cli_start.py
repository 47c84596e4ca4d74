"""A command's start loads only what its options need: --help and --version (and argparse's own errors) load
neither DuckDB nor the build's renderers and charts. The tests start the tools many hundreds of times, and a
user's `tools/build --help` should answer at once. Facts (which modules were loaded), not timings."""

import json
import subprocess
import sys

from conftest import ROOT

COMMANDS = ["ingest", "build", "pdf", "compare", "collect", "example", "init", "check", "info", "list", "serve",
            "docs"]
# a start that only parses its options must not load these
HEAVY = ["duckdb", "plotly", "jinja2", "pyarrow", "pandas", "numpy", "kansoku.store.db", "kansoku.app.build",
         "kansoku.app.preflight", "kansoku.ingest.pipeline", "kansoku.parsers", "kansoku.render.hugo",
         "kansoku.analysis.compare"]

PROBE = """
import contextlib, io, json, sys
sys.path.insert(0, sys.argv[1])
import kansoku.cli as cli
out = {}
for command in sys.argv[2].split(","):
    for option in ("--version", "--help"):
        with contextlib.redirect_stdout(io.StringIO()) as text:
            try:
                cli.COMMANDS[command][0]([option], prog="kansoku " + command)
                code = None
            except SystemExit as exc:
                code = exc.code
        out[command + " " + option] = {"exit": code, "printed": text.getvalue()[:40],
                                       "loaded": sorted(m for m in json.loads(sys.argv[3]) if m in sys.modules)}
print(json.dumps(out))
"""


def test_help_and_version_load_no_duckdb_nor_renderers():
    proc = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "tools"), ",".join(COMMANDS), json.dumps(HEAVY)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert set(seen) == {f"{c} {o}" for c in COMMANDS for o in ("--version", "--help")}
    for start, what in seen.items():
        assert what["exit"] == 0, (start, what)
        assert what["printed"].strip(), f"{start} printed nothing"
        assert what["loaded"] == [], f"{start} loaded {what['loaded']}"


def test_the_tools_version_loads_no_duckdb():
    """The same through a checkout's tools/ wrapper, as the tests and a user start it: the wrapper adds nothing
    heavy of its own."""
    probe = ("import runpy, sys; sys.argv = [sys.argv[1], '--version']\n"
             "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print('LOADED', sorted(m for m in ('duckdb', 'plotly', 'kansoku.app.build') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe, str(ROOT / "tools" / "build")], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert "tools/build (kansoku)" in proc.stdout, proc.stdout + proc.stderr
    assert "LOADED []" in proc.stdout, proc.stdout + proc.stderr


def test_the_lazy_names_are_the_functions():
    """kansoku.app and kansoku.store load their names on first use (module __getattr__): each is the object of
    its module, never a module bound over it (kansoku.app.preflight is both a module and a function)."""
    import kansoku.app
    import kansoku.store
    from kansoku.app import build, preflight
    from kansoku.store import db

    assert preflight is sys.modules["kansoku.app.preflight"].preflight  # the function, not its module
    assert kansoku.app.preflight is preflight
    for name in kansoku.app.__all__:
        if name != "preflight":
            assert getattr(kansoku.app, name) is getattr(build, name)
    for name in kansoku.store.__all__:
        assert getattr(kansoku.store, name) is getattr(db, name)
    assert db.BUILD_MEMORY_LIMIT == "500MB"


# loaded by the path that uses them, never by a start: numpy (a verdict's test and interval), jinja2 (the PDF's
# templates), plotly's figure classes (a figure drawn: a rebuild reuses its drawings, render/figure_cache.py)
ON_USE = ["numpy", "jinja2", "plotly.basedatatypes", "plotly.subplots"]


def loaded_after(code: str, modules: list[str], *args) -> list[str]:
    """Of ``modules``, those a fresh Python has loaded after running ``code`` (kansoku's tools/ on its path;
    ``args`` are sys.argv[1:])."""
    probe = (f"import json, sys\nsys.path.insert(0, {str(ROOT / 'tools')!r})\n{code}\n"
             f"print('LOADED', json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", probe, *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("LOADED ")), None)
    assert line is not None, proc.stdout + proc.stderr
    return json.loads(line[len("LOADED "):])


def test_a_builds_modules_load_no_numpy_jinja2_nor_plotlys_figures():
    """Every module a build's process imports (the command, the preflight, the build and its renderers; the
    forked child that computes inherits them) loads none of ON_USE: a rebuild whose tables and drawings are
    all reused never needs them (tests/test_build_incremental.py runs one)."""
    code = "import kansoku.cli\nfrom kansoku.app import build, preflight\nfrom kansoku.render import charts, hugo"
    assert loaded_after(code, ON_USE) == []


def test_an_ingest_of_one_file_loads_no_worker_pool_nor_report_records(tmp_path):
    """An ingest of a few files parses them in its own process: no multiprocessing (the worker pool of a
    parallel ingest); the computed report's records (kansoku.model) only for --json; nothing of ON_USE."""
    run = ROOT / "tests/fixtures/runs/campaign=corpus-2026-11/study=scaleup/workload=read/config=checksums-off"
    code = ("import runpy\nsys.argv = sys.argv[1:]\ntry:\n    runpy.run_path(sys.argv[0], run_name='__main__')\n"
            "except SystemExit as exc:\n    assert not exc.code, exc.code")
    heavy = ["multiprocessing", "concurrent.futures.process", "kansoku.model", *ON_USE]
    one = ROOT / "tools" / "ingest", "-q", "--db", tmp_path / "k.duckdb", run / "clients=1/rep=1/pgbench.log"
    assert loaded_after(code, heavy, *one) == []
    assert loaded_after(code, heavy, *one, "--json") == ["kansoku.model"]
