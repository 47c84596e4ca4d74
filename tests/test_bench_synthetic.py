"""bench/synthetic.py: each synthetic run has sysstat files of its own, parsed as the template's are."""

from __future__ import annotations

import shutil
import sys

import pytest

from conftest import ROOT, ro_con

sys.path.insert(0, str(ROOT / "bench"))

import synthetic  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("sar") is None, reason="sysstat's sar makes the template's text")


def _number(token: str) -> bool:
    return token.replace(".", "", 1).isdigit()


def _shares(line: str) -> float:
    return round(sum(float(x) for x in line.split() if _number(x)), 2)


def _words(line: str) -> list[str]:
    return [x if not _number(x) else "#" for x in line.split()]


def test_each_runs_sysstat_files_are_its_own_and_ingest_as_the_templates(tmp_path, tool):
    """Twelve runs ingested: no two share a sar.txt or an iostat_x.txt (one stored copy hard-linked into every
    run's page would pass the file system's limit on links at tens of thousands of runs); each differs from the
    template only in CPU lines whose shares sum as before, and loads as many rows, with the template's warnings."""
    runs = synthetic.write_campaign(tmp_path / "camp", 12, work=tmp_path / "templates")
    tpl = synthetic.Templates(tmp_path / "templates")
    for name, template in (("sar.txt", tpl.sar), ("iostat_x.txt", tpl.iostat)):
        for r in runs:
            old, new = template.decode().splitlines(), (r / name).read_text().splitlines()
            changed = [(a, b) for a, b in zip(old, new) if a != b]
            assert len(old) == len(new) and 1 <= len(changed) <= 3, name
            for a, b in changed:
                assert len(a) == len(b) and _words(a) == _words(b) and _shares(a) == _shares(b)
    db = tmp_path / "store.duckdb"
    tool("ingest", "--db", str(db), str(tmp_path / "camp"), check=True)
    con = ro_con(db)
    try:
        by_file = con.execute("SELECT file_name, count(*), count(DISTINCT sha256), min(rows_loaded), "
                          "max(rows_loaded) FROM sources WHERE file_name IN ('sar.txt', 'iostat_x.txt') "
                          "GROUP BY ALL ORDER BY 1").fetchall()
        # the template's own warnings (a real sar file's), the same in every run's copy
        warned = con.execute("SELECT count(*), count(DISTINCT said) FROM (SELECT source_id, list((line, message) "
                             "ORDER BY line, message) AS said FROM ingest_warnings GROUP BY source_id)").fetchone()
    finally:
        con.close()
    assert [row[:3] for row in by_file] == [("iostat_x.txt", 12, 12), ("sar.txt", 12, 12)]
    assert all(row[3] == row[4] > 0 for row in by_file) and warned in ((0, 0), (12, 1))
