"""render/page_data.py and render/hugo.py report_json: what a report's page data holds. A block's words are in
its view (render/views.py) only, never also as the record the view was made from."""

from __future__ import annotations

import dataclasses
import json

from conftest import REPORT_SPECS


def test_a_block_with_a_view_has_no_raw_record_beside_it(example_site):
    from kansoku.render import page_data, views

    db, _ = example_site
    report_blocks = set(views.REPORT_VIEWS) | {"sources"}
    chapter_blocks = set(views.CHAPTER_VIEWS) | {"commands"}
    assert not report_blocks & {f.name for f in dataclasses.fields(page_data.ReportData)}
    assert not chapter_blocks & {f.name for f in dataclasses.fields(page_data.ChapterData)}
    for rid in REPORT_SPECS:
        d = json.loads((db.parent / "generated" / "data" / "reports" / f"{rid}.json").read_text("utf-8"))
        assert set(d["views"]) == report_blocks and not report_blocks & set(d), rid
        for ch in d["chapters"]:
            assert set(ch["views"]) == chapter_blocks and not chapter_blocks & set(ch), (rid, ch["id"])
