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
from pathlib import Path

from kansoku.report.model import ComputedReport

LANGS = ("ja", "en")


def run_page_url(rep_id: str, anchor: str) -> str:
    """Path of a run's page below the language prefix (the layouts build the same from the report's URL)."""
    return f"reports/{rep_id}/runs/{anchor}/"


def run_csv_url(rep_id: str, anchor: str) -> str:
    return f"/csv/{rep_id}/runs/{anchor}.csv"


def _front(d: dict) -> str:
    return "---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in d.items()) + "---\n"


def write_run_pages(rep: ComputedReport, gen: Path, dumps) -> int:
    """Write the data, CSV and pages of every run page of ``rep``; returns the number of pages written.
    ``dumps`` is the renderer's JSON writer (refuses NaN and infinities)."""
    if not rep.run_pages:
        return 0
    data_dir = gen / "data" / "runs" / rep.id
    csv_dir = gen / "static" / "csv" / rep.id / "runs"
    page_dir = gen / "content" / "reports" / rep.id / "runs"
    for d in (data_dir, csv_dir, page_dir):
        d.mkdir(parents=True, exist_ok=True)
    n = 0
    for run_id, page in rep.run_pages.items():
        anchor = page.info.anchor
        d = page.to_json()
        if page.series is not None:
            d["csv"] = run_csv_url(rep.id, anchor)
            (csv_dir / f"{anchor}.csv").write_text(page.series.csv, encoding="utf-8")
        (data_dir / f"{anchor}.json").write_text(dumps(d), encoding="utf-8")
        for lang in LANGS:
            front = {"title": run_id, "report": rep.id, "run": anchor, "type": "runs", "generated": True}
            (page_dir / f"{anchor}.{lang}.md").write_text(_front(front), encoding="utf-8")
            n += 1
    return n
