"""Everything a build can check before computing, in one run (exit 3 with every problem listed)."""

from __future__ import annotations

from pathlib import Path

from kansoku.analysis.spec_check import store_problems
from kansoku.report.structure import content_problems, page_problems
from kansoku.spec.model import load_all, load_report
from kansoku.spec.validate import SpecProblems, check_file, outline
from kansoku.store.db import open_store


def preflight(specs: Path, db: Path, content_root: Path = Path("content/reports"), report_id: str | None = None) -> list:
    """Everything a build can check before computing, in one run: every spec (``specs`` a directory,
    or one report with ``report_id``) against the schema, the names they use against the parsers and
    the database (when it exists), and their prose pages (against an outline of a spec that does not
    load). Raises SpecProblems listing every problem;
    returns the loaded reports."""
    specs = Path(specs)
    paths = [specs / f"{report_id}.toml"] if report_id is not None else sorted(specs.glob("*.toml"))
    checked = [(p, *check_file(p)) for p in paths]
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
        store = open_store(db, read_only=True)
        try:
            for path, raw, _ in checked:
                if raw is not None:
                    rep = next((r for r in reports if r.spec_file == path), None)
                    problems += store_problems(rep, store, spec_file=path, raw=raw)
        finally:
            store.close()
    if problems:
        raise SpecProblems(problems)
    return reports
