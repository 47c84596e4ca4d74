"""The quick run's sample of a large parametrized family (``quick_sample(n)``, tests/conftest.py): the README's
`python3 -m pytest -q` keeps n cases spread over the family, `--all` and a run naming the file keep every case."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT, quick_sample_kept

FAMILY = '''
import pytest


@pytest.mark.quick_sample(3)
@pytest.mark.parametrize("k", range(10))
def test_sampled(k):
    pass


@pytest.mark.parametrize("k", range(4))
def test_whole(k):
    pass


@pytest.mark.quick_sample(5)
@pytest.mark.parametrize("k", range(2))
def test_smaller_than_its_sample(k):
    pass
'''

# the suite's own hooks (the --all option, the quick run's skips), loaded under another name than conftest
PLUGIN = f'''
import importlib.util
import sys

sys.path.insert(0, {str(ROOT / "tests")!r})
_spec = importlib.util.spec_from_file_location("kansoku_suite_conftest", {str(ROOT / "tests" / "conftest.py")!r})
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
pytest_addoption = _suite.pytest_addoption
pytest_collection_modifyitems = _suite.pytest_collection_modifyitems
'''


def test_the_sample_is_spread_from_the_first_case_to_the_last_or_is_the_middle_one():
    assert quick_sample_kept(3, 10) == [0, 4, 9]
    assert quick_sample_kept(4, 132) == [0, 44, 87, 131]
    assert quick_sample_kept(1, 6) == [2] and quick_sample_kept(1, 3) == [1]
    assert quick_sample_kept(5, 3) == [0, 1, 2]
    assert quick_sample_kept(2, 2) == [0, 1]


def _ran(tmp_path, *args: str) -> dict[str, str]:
    """Each test of the generated file and what it came to (PASSED, SKIPPED), run as the suite is run."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("KANSOKU_ALL_TESTS", "PYTEST_ADDOPTS", "KANSOKU_TEST_TIMELINE") and not k.startswith("PYTEST_XDIST")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(re.findall(r"::(test_\w+\[\d+\]) (PASSED|SKIPPED)", proc.stdout))


def test_the_quick_run_keeps_the_sample_and_all_or_a_named_file_every_case(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = t\nmarkers =\n    quick_sample(n): a sample\n"
                                         "    slow: slow\n    browser: browser\n    quick: quick\n")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "conftest.py").write_text(PLUGIN)
    (tmp_path / "t" / "test_family.py").write_text(FAMILY)
    every = {f"test_sampled[{k}]" for k in range(10)} | {f"test_whole[{k}]" for k in range(4)} | {
        f"test_smaller_than_its_sample[{k}]" for k in range(2)}

    quick = _ran(tmp_path)
    assert set(quick) == every
    assert {t for t, r in quick.items() if r == "PASSED"} == every - {
        f"test_sampled[{k}]" for k in (1, 2, 3, 5, 6, 7, 8)}
    for args in (["--all"], ["t/test_family.py"]):
        assert _ran(tmp_path, *args) == dict.fromkeys(every, "PASSED"), args
