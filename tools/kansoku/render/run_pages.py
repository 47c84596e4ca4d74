"""Render the page of every run (``ComputedReport.run_pages``) for Hugo: small files, one set per run.

For each run of a report, under the generated directory:

- ``assets/runs/<report>/<anchor>.json``  the run's page-ready data (``RunPage.to_json``), read by
  ``layouts/runs/single.html`` (an asset, not a data file: Hugo reads it only when it renders the page; it
  holds the per-second series once, not per language, as one JSON text: ``series_text``);
- ``static/csv/<report>/runs/<anchor>.csv``  its per-second series as a download (fixed decimals per column);
- ``content/reports/<report>/runs/<anchor>.<lang>.md``  a page per language, front matter only.

Nothing here computes: the numbers and the CSV text are in the model; this module only places files.
"""

from __future__ import annotations

import json

from kansoku import words
from kansoku.model import CHART_COLUMNS, ComputedReport, KeptRunPage, RunPage

LANGS = words.LANGS
# the text of a file the generated directory already holds as it should be (render/hugo.py sync_files
# leaves it, unread; compared by identity)
KEEP = "\0kept"


def run_csv_url(rep_id: str, anchor: str) -> str:
    return f"/csv/{rep_id}/runs/{anchor}.csv"


def _front(d: dict) -> str:
    return "---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in d.items()) + "---\n"


SERIES_META = ("columns", "tps_source", "cpu_tool", "disk_tool")  # what the template reads of the series


def series_text(d: dict, dumps, text: str | None = None) -> None:
    """The per-second columns of a run page's data as one JSON text (``series_json``), which the template
    writes into the page as it is, once, and the page's script hands to each chart's traces by column name
    (static/js/kansoku.js): Hugo does not parse thousands of numbers into values to write them out again,
    and the seconds are in the page once, not once per trace. ``series`` keeps what the template reads;
    the text holds the columns the charts draw (``CHART_COLUMNS``). ``text``: that text as the series' query
    made it (``RunSeries.chart_json``, the same bytes)."""
    s = d["series"]
    d["series"] = {k: s[k] for k in SERIES_META if k in s}
    if text is None:
        text = dumps({c: s[c] for c in s["columns"] if c in CHART_COLUMNS})
    # numbers and column names only; "<" escaped all the same, as the text goes inside a <script> element
    d["series_json"] = text.replace("<", "\\u003c")


def run_page_files(rep: ComputedReport, dumps, kept=None, pages: dict[str, RunPage] | None = None
                   ) -> tuple[dict[str, str], int]:
    """The data, CSV and pages of every run page of ``rep`` (or of ``pages``, a batch of them), as {path under
    the generated directory: text}, and the number of pages. render/hugo.py writes them with the report's other
    files (only the files whose bytes change, stale ones removed). ``dumps`` is the renderer's JSON writer
    (refuses NaN and infinities). ``kept(path, key)``: whether the generated directory holds the file ``path``
    as written for a page of ``key`` (``RunPage.key``); such a file is not made again: its value is ``KEEP``.
    A ``KeptRunPage`` (a page of the last build, not read back) is read whole only when its files are not kept."""
    files: dict[str, str] = {}
    n = 0
    for run_id, page in (rep.run_pages if pages is None else pages).items():
        anchor = page.info.anchor
        data = f"assets/runs/{rep.id}/{anchor}.json"
        has_series = page.has_series if isinstance(page, KeptRunPage) else page.series is not None
        csv = f"static/csv/{rep.id}/runs/{anchor}.csv" if has_series else None
        if kept is not None and page.key and kept(data, page.key) and (csv is None or kept(csv, page.key)):
            files[data] = KEEP
            if csv is not None:
                files[csv] = KEEP
        else:
            if isinstance(page, KeptRunPage):  # its files are not as the last build wrote them: the whole page
                page = page.full()
                csv = f"static/csv/{rep.id}/runs/{anchor}.csv" if page.series is not None else None
            d = page.to_json()
            if csv is not None:
                d["csv"] = run_csv_url(rep.id, anchor)
                files[csv] = page.series.csv
                series_text(d, dumps, page.series.chart_json)
            files[data] = dumps(d)
        front = _front({"title": run_id, "report": rep.id, "run": anchor, "type": "runs", "generated": True})
        for lang in LANGS:  # (the same front matter in every language)
            files[f"content/reports/{rep.id}/runs/{anchor}.{lang}.md"] = front
            n += 1
    return files, n
