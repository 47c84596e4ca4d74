"""No file reached through a symbolic link is read by a build.

A build publishes what its site holds: the prose (``content/``), the specs (``data/reports/``), the site's
``static/`` and ``config.toml``, kansoku's layouts, words and static files, and the generated directory. A
symbolic link among them may point anywhere (``zz.en.md -> /etc/passwd`` was published as a page), so every
link in those trees is refused, with its path, before anything is read or written (exit 2) — a link that stays
inside the site too: Hugo's sandbox cannot tell the two apart, and a file copied in is what a reader of the
site's tree sees. A tree given by the user outside the site (``--content DIR``) is checked beneath itself; a
tree the site names (``content`` under the site's root) must not itself lead out of the site. Ingest has the
same rule for run directories (``ingest/runs.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kansoku import resources
from kansoku.errors import SiteLinkError

SHOWN = 10


def links_in(root: Path) -> list[Path]:
    """Every symbolic link at or beneath ``root`` (directories' links are not followed; a missing root has
    none)."""
    root = Path(root)
    if root.is_symlink():
        return [root]
    found: list[Path] = []
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except (NotADirectoryError, FileNotFoundError):
            continue
        for e in entries:
            if e.is_symlink():
                found.append(Path(e.path))
            elif e.is_dir(follow_symlinks=False):
                stack.append(Path(e.path))
    return sorted(found)


def _leaves(path: Path, site_root: Path | None) -> bool:
    """A path under the site root (as written) that resolves outside it: one of its parents is a link out."""
    if site_root is None:
        return False
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(site_root))
    except ValueError:
        return False  # a tree the user named outside the site: checked beneath itself
    try:
        (site_root.resolve() / rel).resolve().relative_to(site_root.resolve())
    except ValueError:
        return True
    return False


def refuse_links(trees: Iterable[Path], site_root: Path | None = None) -> None:
    """Raise SiteLinkError naming every symbolic link at or beneath ``trees`` (files or directories; a missing
    one is skipped), and every tree under ``site_root`` that leads out of it through a link of its parents."""
    bad: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for tree in trees:
        tree = Path(tree)
        key = os.path.abspath(tree)
        if key in seen:
            continue
        seen.add(key)
        if _leaves(tree, site_root):
            bad.append((tree, str(tree.resolve())))
            continue
        for link in links_in(tree):
            try:
                target = os.readlink(link)
            except OSError:
                target = "?"
            bad.append((link, target))
    if bad:
        shown = "; ".join(f"{p} -> {t}" for p, t in bad[:SHOWN])
        more = f" (and {len(bad) - SHOWN} more)" if len(bad) > SHOWN else ""
        raise SiteLinkError(
            f"the build reads no file through a symbolic link, and the site has {len(bad)}: {shown}{more}; "
            f"copy the file into the site instead of linking it")


def site_trees(content: Path, specs: Path | None = None, config: Path | None = None,
               site_root: Path | None = None) -> list[Path]:
    """What a build reads besides its generated directory: the prose, the specs, the site's config.toml and
    static/, and kansoku's own layouts, words, static files and base configuration."""
    trees = [Path(content)]
    if specs is not None:
        trees.append(Path(specs))
    if config is not None:
        trees.append(Path(config))
    if site_root is not None:
        trees += [Path(site_root) / "config.toml", Path(site_root) / "static"]
    return trees + [resources.LAYOUTS_DIR, resources.I18N_DIR, resources.STATIC_DIR, resources.BASE_CONFIG]


def refuse_site_links(content: Path, specs: Path | None = None, config: Path | None = None,
                      site_root: Path | None = None) -> None:
    """:func:`refuse_links` over :func:`site_trees` (``site_root``: the site's directory, default the one
    holding ``config``)."""
    root = site_root if site_root is not None else (Path(config).parent if config is not None else None)
    refuse_links(site_trees(content, specs, config, root), root)
