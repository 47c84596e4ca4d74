"""The example's prose follows its data: a run left out, the example rebuilt, every bound value of the
replication chapter is the new table's in both languages (report/values.py, {{< val … >}})."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import ROOT, copy_store, run_tool

SPEC = ROOT / "data" / "reports" / "example.toml"


def run_page_values(public: Path, lang: str) -> list[str]:
    html = (public / lang / "reports" / "example" / "replication" / "index.html").read_text(encoding="utf-8")
    return re.findall(r'<a class="bound-value" href="#table-replication-tps"[^>]*>([^<]*)</a>', html)


@pytest.mark.slow  # a second build of the example: --all (CI); test_report_values.py checks a value is its cell quick
def test_leaving_a_run_out_moves_the_sentence_with_the_table(example_site, tmp_path):
    """The median run of the no-replication condition found bad (status failed): rebuilt, every bound value of
    the replication chapter is the new table's, in both languages, and the median's sentence changed."""
    db, public = example_site
    before = json.loads((db.parent / "generated" / "data" / "reports" / "example.json").read_text(encoding="utf-8"))
    key = next(k for k in before["views"]["values"]["en"] if k == "metric=tps;row=none;table=replication-tps")
    t = next(ch["tables"]["replication-tps"] for ch in before["chapters"] if "replication-tps" in ch["tables"])
    median = next(c["rep"] for row in t["view"]["en"]["rows"] for c in row["cells"]
                  if "value" in c["css"].split() and c["rep"] and "pattern=none" in c["rep"])
    copy = copy_store(db, tmp_path / "store")
    with duckdb.connect(str(copy)) as con:
        con.execute("UPDATE runs SET status = 'failed', status_note = 'left out by a test' WHERE run_id = ?", [median])
    specs, content = tmp_path / "reports", tmp_path / "content"
    specs.mkdir()
    shutil.copy(SPEC, specs / SPEC.name)
    shutil.copytree(ROOT / "content" / "reports" / "example", content / "reports" / "example")
    for f in (ROOT / "content").glob("*.md"):
        shutil.copy(f, content / f.name)
    out, generated = tmp_path / "public", tmp_path / "generated"
    r = run_tool("build", "--db", copy, "--specs", specs, "--content", content, "--out", out, "--generated",
                 generated, "--strict")
    assert r.returncode == 0, r.stderr
    after = json.loads((generated / "data" / "reports" / "example.json").read_text(encoding="utf-8"))
    assert all(after["views"]["values"][lang][key]["text"] != before["views"]["values"][lang][key]["text"]
               for lang in ("ja", "en"))
    t2 = next(ch["tables"]["replication-tps"] for ch in after["chapters"] if "replication-tps" in ch["tables"])
    for lang in ("ja", "en"):
        new_median = next(c["text"] for row in t2["view"][lang]["rows"] for c in row["cells"]
                          if "value" in c["css"].split() and c["rep"] and "pattern=none" in c["rep"])
        shown = run_page_values(out, lang)
        assert new_median in shown
        assert before["views"]["values"][lang][key]["text"] not in shown  # no run of the condition has it any more
