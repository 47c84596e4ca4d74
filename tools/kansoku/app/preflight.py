"""Everything a build can check before computing, in one run (exit 3 with every problem listed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kansoku.analysis.spec_check import store_problems
from kansoku.report.structure import content_problems, page_problems, report_pages
from kansoku.report.values import literal_refs, unbound_numbers
from kansoku.site_links import refuse_site_links
from kansoku.spec.model import load_all, load_report
from kansoku.spec.validate import SpecProblems, check_file, outline, text_key
from kansoku.store.db import open_store


def preflight(specs: Path, db: Path, content_root: Path = Path("content/reports"), report_id: str | None = None,
              clean: Path | None = None, content: Path | None = None, config: Path | None = None,
              site_root: Path | None = None, wait_s: float = 0.0, on_wait=None, strict: bool = False,
              warn=None) -> list:
    """Everything a build can check before computing, in one run: every spec (``specs`` a directory,
    or one report with ``report_id``) against the schema, the names they use against the parsers and
    the database (when it exists), and their prose pages (against an outline of a spec that does not
    load). Raises SpecProblems listing every problem;
    returns the loaded reports. ``clean``: a file listing the specs (by text and code version,
    ``spec.validate.text_key``) whose check without a database found nothing: such a spec is not checked
    against the schema again (a build's: in its build cache); rewritten with the specs of a run that found
    no problem. First of all, no file is read through a symbolic link (``kansoku.site_links``: the prose,
    ``content`` when given, else ``content_root``; the specs; the site's ``config`` and static files at
    ``site_root``; kansoku's layouts): SiteLinkError (exit 2) naming each link. ``wait_s``/``on_wait``: the
    command's ``--wait``, for a store another process (an ingest) holds. A number that the prose of a measured report
    states as text (report/values.py ``unbound_numbers``) is said through ``warn``, or is a problem with
    ``strict``."""
    refuse_site_links(content if content is not None else content_root, specs, config, site_root)
    specs = Path(specs)
    paths = [specs / f"{report_id}.toml"] if report_id is not None else sorted(specs.glob("*.toml"))
    known = _clean(clean)
    checked = [(p, *check_file(p, known)) for p in paths]
    problems = [pr for _, _, prs in checked for pr in prs]
    reports = []
    if not problems:
        # each spec is checked and read once: the build takes the reports loaded here
        if report_id is None:
            reports = load_all(specs, checked={path: raw for path, raw, _ in checked})
            problems += content_problems(reports, content_root)
        else:
            reports = [load_report(paths[0], validated=True, raw=checked[0][1])]
            problems += page_problems(reports[0], content_root)
    else:  # the pages too, against what can be read of the specs, so that one run lists everything
        outlines = [outline(path, raw) for path, raw, _ in checked if raw is not None]
        unread = [path.stem for path, raw, _ in checked if raw is None]
        if report_id is None:
            problems += content_problems(outlines, content_root, unchecked=unread)
        elif outlines:
            problems += page_problems(outlines[0], content_root)
    if Path(db).exists():
        store = open_store(db, read_only=True, wait_s=wait_s, on_wait=on_wait)
        try:
            for path, raw, _ in checked:
                if raw is not None:
                    rep = next((r for r in reports if r.spec_file == path), None)
                    problems += store_problems(rep, store, spec_file=path, raw=raw)
        finally:
            store.close()
    for rep in reports:
        if rep.scope.campaigns or rep.scope.run_prefixes:  # a measured report: its prose follows its data
            try:
                pages = report_pages(rep, content_root)
            except SpecProblems:  # its pages' problems are listed already, with the store's: all of them at once
                continue
            stated = unbound_numbers(pages) + literal_refs(pages, rep)
            if strict:
                problems += stated
            elif warn is not None:
                for pr in stated:
                    warn(str(pr))
    if problems:
        raise SpecProblems(problems)
    if clean is not None:
        _remember_clean(clean, known, paths)
    return reports


def _clean(path: Path | None) -> set[str] | None:
    if path is None:
        return None
    try:
        got = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {k for k in got if isinstance(k, str)} if isinstance(got, list) else set()


def _remember_clean(path: Path, known: set[str] | None, paths: list[Path]) -> None:
    """The text keys of the specs just checked, all clean (the others' are dropped), when they changed."""
    keys = set()
    for p in paths:
        try:
            keys.add(text_key(p.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            return
    if keys == known:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        tmp.write_text(json.dumps(sorted(keys)), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # (a cache: a build whose build cache cannot be written checks every spec next time)
        pass
