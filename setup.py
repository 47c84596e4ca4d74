"""The wheel carries kansoku's site skeleton: the repository root's i18n/, layouts/, static/ and config.toml
are copied into the built package as kansoku/_site/; and its manual: docs/*.md, its images and the two JSON
schemas as kansoku/_docs/, the example campaign's plans, scripts and notes (data/runs/example without its measurements)
as kansoku/_docs/examples/ (kansoku/resources.py finds them there, or in a checkout; `kansoku docs` prints
them). Everything else is declared in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SKELETON = ("i18n", "layouts", "static", "config.toml")
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "data" / "runs" / "example"
# the plans' #:schema line, from data/runs/example/ in a checkout and from _docs/examples/ in the wheel
PLAN_SCHEMA = ("#:schema ../../../docs/collect-plan.schema.json", "#:schema ../collect-plan.schema.json")


def copy_docs(dest: Path) -> None:
    """docs/*.md, docs/images/ and *.schema.json into ``dest``; the example's plans (*.toml), scripts and notes, not its
    measurements (campaign=*/), into ``dest/examples``."""
    if not (DOCS / "spec.md").is_file() or not EXAMPLES.is_dir():
        raise SystemExit(f"{DOCS} or {EXAMPLES} is missing: the wheel carries the manual and the example plans")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for src in sorted(DOCS.glob("*.md")) + sorted(DOCS.glob("*.schema.json")):
        shutil.copy2(src, dest / src.name)
    shutil.copytree(DOCS / "images", dest / "images")  # the pictures the pages show
    examples = dest / "examples"
    shutil.copytree(EXAMPLES, examples, ignore=shutil.ignore_patterns("campaign=*", "__pycache__", "*.pyc"))
    for plan in examples.glob("*.toml"):  # each names the installed schema (editors complete and check it)
        text = plan.read_text(encoding="utf-8")
        text = text.replace(*PLAN_SCHEMA, 1) if text.startswith(PLAN_SCHEMA[0]) else f"{PLAN_SCHEMA[1]}\n{text}"
        plan.write_text(text, encoding="utf-8")


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
        copy_docs(Path(self.build_lib) / "kansoku" / "_docs")


setup(cmdclass={"build_py": BuildPyWithSite})
