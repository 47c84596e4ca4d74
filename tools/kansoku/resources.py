"""Where kansoku's own files are, and where a user's site is.

kansoku ships a site skeleton: the words (``i18n/``, which Hugo reads too), Hugo's templates (``layouts/``),
the site's scripts and styles (``static/``) and the base Hugo configuration (``config.toml``). In a checkout
they are the repository root's folders; in an installed package they are ``kansoku/_site/`` (``setup.py``
copies them there when the wheel is built). The SQL and typst templates are package data beside their code.
The manual (``docs/*.md``, the spec's and the plan's JSON schemas) and the example campaign's plans are
``docs/`` and ``data/runs/example/`` in a checkout, ``kansoku/_docs/`` in a wheel (``DOCS_DIR``,
``EXAMPLES_DIR``; ``kansoku docs`` prints them).

A *site* is the user's directory: ``config.toml`` (optional: overrides the skeleton's, e.g. ``baseURL`` and the
cross-year view), ``data/reports/*.toml`` (the specs), ``content/`` (the prose), ``data/kansoku.duckdb`` (the
store), ``data/generated/`` and ``public/`` (written by a build). Found like Hugo's ``--source``: the given
``--site DIR``, else the first directory from the current one upward holding ``config.toml`` or
``data/reports``.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kansoku.errors import RunError

PACKAGE = Path(__file__).resolve().parent
_INSTALLED = PACKAGE / "_site"
# the site skeleton: kansoku/_site/ in a wheel, else the checkout's root (tools/kansoku/../..)
SKELETON = _INSTALLED if (_INSTALLED / "config.toml").is_file() else PACKAGE.parents[1]
CHECKOUT: Path | None = None if SKELETON == _INSTALLED else SKELETON
I18N_DIR = SKELETON / "i18n"
LAYOUTS_DIR = SKELETON / "layouts"
STATIC_DIR = SKELETON / "static"
BASE_CONFIG = SKELETON / "config.toml"
SITE_MARKERS = ("config.toml", "data/reports")
# the manual: docs/*.md and the JSON schemas of a spec and a plan, and the example campaign's plans (the only
# worked examples of perf and query studies): kansoku/_docs/ and _docs/examples/ in a wheel (setup.py), else
# the checkout's docs/ and data/runs/example/
_INSTALLED_DOCS = PACKAGE / "_docs"
DOCS_DIR = _INSTALLED_DOCS if (_INSTALLED_DOCS / "spec.md").is_file() else PACKAGE.parents[1] / "docs"
EXAMPLES_DIR = DOCS_DIR / "examples" if DOCS_DIR == _INSTALLED_DOCS else PACKAGE.parents[1] / "data/runs/example"
SPEC_SCHEMA = DOCS_DIR / "report-spec.schema.json"
PLAN_SCHEMA = DOCS_DIR / "collect-plan.schema.json"


def doc(name: str) -> Path:
    """An installed document by its file name (``collect.md``), for help texts and messages."""
    return DOCS_DIR / name


def find_site(start: Path | None = None) -> Path:
    """The site holding ``start`` (default: the current directory): the first directory from it upward with
    ``config.toml`` or ``data/reports``."""
    start = (start or Path.cwd()).resolve()
    for d in (start, *start.parents):
        if any((d / m).exists() for m in SITE_MARKERS):
            return d
    raise RunError(f"no kansoku site in {start} or above it (a directory holding config.toml or "
                       "data/reports/); give one with --site DIR")


@dataclass(frozen=True)
class Site:
    """A user's site directory and the default place of everything in it."""

    root: Path

    @property
    def db(self) -> Path:
        return self.root / "data" / "kansoku.duckdb"

    @property
    def specs(self) -> Path:
        return self.root / "data" / "reports"

    @property
    def content(self) -> Path:
        return self.root / "content"

    @property
    def generated(self) -> Path:
        return self.root / "data" / "generated"

    @property
    def out(self) -> Path:
        return self.root / "public"

    @property
    def config(self) -> Path:
        """The site's config.toml, or the skeleton's when the site has none."""
        own = self.root / "config.toml"
        return own if own.is_file() else BASE_CONFIG


def load_config(config: Path = BASE_CONFIG) -> dict:
    """The Hugo configuration of a site: the skeleton's ``config.toml`` with the site's own (``config``)
    laid over it — top-level keys replace, ``params`` and ``markup`` merge key by key; the mounts are always
    the skeleton's (kansoku owns how a site is put together)."""
    with open(BASE_CONFIG, "rb") as fh:
        cfg = tomllib.load(fh)
    if config.resolve() == BASE_CONFIG.resolve() or not config.is_file():
        return cfg
    with open(config, "rb") as fh:
        own = tomllib.load(fh)
    for key, value in own.items():
        if key == "module":
            continue
        if key in ("params", "markup") and isinstance(value, dict):
            cfg[key] = {**cfg.get(key, {}), **value}
        else:
            cfg[key] = value
    return cfg


CODE_SUFFIXES = (".py", ".sql", ".toml", ".j2", ".json")

_code_version: str | None = None


def code_version() -> str:
    """sha256 over the package's source files and the words (i18n/*.toml), computed once per process."""
    global _code_version
    if _code_version is None:
        h = hashlib.sha256()
        files = sorted(p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix in CODE_SUFFIXES
                       and "__pycache__" not in p.parts and _INSTALLED_DOCS not in p.parents)
        files += sorted(I18N_DIR.glob("*.toml"))
        for p in files:  # named relative to their folder, so a checkout and an installed package agree
            h.update(str(p.relative_to(p.parents[1] if p.parent == I18N_DIR else PACKAGE)).encode())
            h.update(b"\0")
            h.update(p.read_bytes())
            h.update(b"\0")
        _code_version = h.hexdigest()
    return _code_version
