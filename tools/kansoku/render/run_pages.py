"""Render the page of every run (``ComputedReport.run_pages``) for Hugo: small files, one set per run.

For each run of a report, under the generated directory:

- ``data/runs/<report>/<anchor>.json``  the run's page-ready data (``RunPage.to_json``), read by
  ``layouts/runs/single.html`` (Hugo parses it once; it holds the per-second series once, not per language);
- ``static/csv/<report>/runs/<anchor>.csv``  its per-second series as a download (fixed decimals per column);
- ``content/reports/<report>/runs/<anchor>.<lang>.md``  a page per language, front matter only.

Nothing here computes: the numbers and the CSV text are in the model; this module only places files.
"""

from __future__ import annotations

import json

from kansoku import words
from kansoku.model import ComputedReport, RunPage

LANGS = words.LANGS


def run_csv_url(rep_id: str, anchor: str) -> str:
    return f"/csv/{rep_id}/runs/{anchor}.csv"


def _front(d: dict) -> str:
    return "---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in d.items()) + "---\n"


def run_page_files(rep: ComputedReport, dumps, pages: dict[str, RunPage] | None = None
                   ) -> tuple[dict[str, str], int]:
    """The data, CSV and pages of every run page of ``rep`` (or of ``pages``, a batch of them), as {path under
    the generated directory: text}, and the number of pages. render/hugo.py writes them with the report's other files (only the files whose
    bytes change, stale ones removed). ``dumps`` is the renderer's JSON writer (refuses NaN and infinities)."""
    files: dict[str, str] = {}
    n = 0
    for run_id, page in (rep.run_pages if pages is None else pages).items():
        anchor = page.info.anchor
        d = page.to_json()
        if page.series is not None:
            d["csv"] = run_csv_url(rep.id, anchor)
            files[f"static/csv/{rep.id}/runs/{anchor}.csv"] = page.series.csv
        files[f"data/runs/{rep.id}/{anchor}.json"] = dumps(d)
        for lang in LANGS:
            front = {"title": run_id, "report": rep.id, "run": anchor, "type": "runs", "generated": True}
            files[f"content/reports/{rep.id}/runs/{anchor}.{lang}.md"] = _front(front)
            n += 1
    return files, n
