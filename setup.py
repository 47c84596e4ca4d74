"""The wheel carries kansoku's site skeleton: the repository root's i18n/, layouts/, static/ and config.toml
are copied into the built package as kansoku/_site/ (kansoku/resources.py finds them there, or in a
checkout). Everything else is declared in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SKELETON = ("i18n", "layouts", "static", "config.toml")


class BuildPyWithSite(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's own folders
            return
        dest = Path(self.build_lib) / "kansoku" / "_site"
        shutil.rmtree(dest, ignore_errors=True)
        for name in SKELETON:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)


setup(cmdclass={"build_py": BuildPyWithSite})
