"""The computed report is the renderers' only input: a ComputedReport built by hand (no store, no spec)
renders to Hugo data and a Hugo page, and to typst that compiles to a PDF; measured strings stay text."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT

# A measured string that is markup in every target: typst (#, *, [ ]), HTML (<, &), Markdown, CSV formula.
HOSTILE = '=cmd|x #strong[bold] *star* <b>&amp; $x$ `code`'


def handmade_report(content_root: Path):
    from kansoku.model import (
        Cell,
        CellNote,
        Chapter,
        ChartData,
        Column,
        ComputedReport,
        Environment,
        FactorValue,
        Figure,
        HeaderCell,
        Page,
        Provenance,
        ProvenanceGroup,
        ProvenanceRun,
        RowGroup,
        RunInfo,
        SourceFile,
        Table,
    )

    def w(s: str) -> dict[str, str]:
        return {"ja": s, "en": s}

    rows = [
        [Cell(w("1"), kind="factor", flags=["baseline"]),
         Cell(w("1,000.5"), 1000.5, "value", ["run-a", "run-b"], "run-a", run_values={"run-a": 1000.0, "run-b": 1001.0},
              exact="1000.5"),
         Cell({"ja": "比なし (基準値 0)", "en": "no ratio (baseline 0)"}, None, "compare", flags=["no-ratio"])],
        [Cell(w(HOSTILE), kind="factor"),
         Cell(w("53.133"), 53.133, "value", ["run-c"], "run-c", ["transcribed"], exact="53.133",
              notes=[CellNote("*1", w("a cell note [x]"))]),
         Cell({"ja": "▲12.3%", "en": "\u221212.3 %"}, -0.123, "compare", flags=["transcribed", "mismatch"],
              exact="-0.123")],
    ]
    table = Table(
        id="t1", number="1.1", label={"ja": "表 1.1", "en": "Table 1.1"}, caption=w("A table made by hand"),
        footnote=w("footnote " + HOSTILE),
        header=[[HeaderCell(w("clients"), rowspan=2), HeaderCell(w("checksums on"), colspan=2, baseline=False)],
                [HeaderCell(w("TPS"), kind="value", baseline=False), HeaderCell(w("change"), kind="compare")]],
        columns=[Column(w("clients"), "factor"), Column(w("TPS"), "value"), Column(w("change"), "compare")],
        rows=rows, runs=["run-a", "run-b", "run-c"], citations=["a report, table 9"],
        checks={"checked": 1, "mismatch": 1}, marks=["mismatch", "transcribed"],
        provenance=Provenance(common=[FactorValue(w("scale"), w("100"))], factors=[w("clients")],
                              groups=[ProvenanceGroup([w("1")], [ProvenanceRun("run-a", "run-aaaa", "1", True)])],
                              runs=3),
        row_groups=[RowGroup(w("group A"), 0, 1), RowGroup(w("group B <i>"), 1, 1)], row_group_name=w("group"),
        notes=[CellNote("*1", w("a cell note [x]"))])
    figure = Figure(id="f1", number="1.1", chart="line", label={"ja": "図 1.1", "en": "Figure 1.1"},
                    caption=w("A figure made by hand"), footnote=None,
                    chart_data=ChartData("line", {}, {
                        "bar": False, "numeric_x": True, "x_ticks": [1, 2], "spread": False,
                        "traces": [{"x": [1, 2], "y": [3.0, 4.0], "n": [1, 1], "runs": [["run-a"], ["run-a"]],
                                    "transcribed": [False, False], "lo": [None, None], "hi": [None, None],
                                    "y_text": ["3.0", "4.0"]}]},
                        {lang: {"names": [HOSTILE], "x": [None], "hover": [["1 run", "1 run"]], "x_title": "x",
                                "y_title": "TPS"} for lang in ("ja", "en")}),
                    runs=["run-a"])
    chapter = Chapter("one", 1, w("Chapter one"), tables={"t1": table}, figures={"f1": figure}, order=["t1", "f1"],
                      machines={"machines": [{"id": "0123456789ab", "name": w("Machine A"), "role": w("server"),
                                              "runs": 3, "cpu": "CPU " + HOSTILE, "memory": "1.0 GiB",
                                              "os": "Debian / Linux 6.1", "virtualization": "kvm",
                                              "storage": w("vda 256 GiB")}],
                                "span": True, "machine_count": 2, "summary": w("Ran on 2 machines " + HOSTILE),
                                "unknown": 1, "with_roles": True})
    page = Page("one", "chapter", 1, w("Chapter one"), {"ja": None, "en": None}, number=1)
    return ComputedReport(
        id="handmade", fiscal_year=2030, title=w("Handmade report"), subtitle=None, organisation=w("Org"),
        revision="1.0", copyright="(c) nobody", license=None, revision_history=[], authors=[],
        themes={"ja": [], "en": []}, publish_raw=False, chapters=[chapter],
        runs={"run-a": RunInfo("run-a", "measured", "ok", None, None, "host", "run-aaaa", {"clients": "1"},
                               [SourceFile("pgbench.log", 10, "ab" * 32, "pgbench", "stdout", "15", "10 B")])},
        environment=Environment(), pages=[page], pdf_pages=[page],
        generated_bodies={"one": '{{< tbl "t1" >}}\n\n{{< fig "f1" >}}\n'}, content_dir=content_root / "handmade")


def test_renderers_import_neither_the_store_nor_the_analysis():
    for path in [ROOT / "tools/kansoku/render/hugo.py", ROOT / "tools/kansoku/render/typst.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [n.module for n in top if isinstance(n, ast.ImportFrom)] + [a.name for n in top
                                                                              if isinstance(n, ast.Import)
                                                                              for a in n.names]
        bad = [m for m in names if m and m.startswith(("kansoku.store", "kansoku.analysis", "kansoku.spec"))]
        assert not bad, f"{path.name} imports {bad}"
        src = path.read_text(encoding="utf-8")
        assert ".execute(" not in src and "load_report" not in src.split("def build_pdfs")[0]
        assert "load_all" not in src


def test_chart_drawing_reads_no_store_and_no_analysis():
    """render/charts builds plotly figures from computed chart data only; no import circle with analysis."""
    for path in sorted((ROOT / "tools/kansoku/render").rglob("*.py")):
        src = path.read_text(encoding="utf-8")
        tree = ast.parse(src)
        mods = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        top = [n.module for n in tree.body if isinstance(n, ast.ImportFrom)]
        assert not [m for m in top if m and m.startswith(("kansoku.store", "kansoku.analysis", "kansoku.spec"))], path
        if path.parent.name == "charts":
            assert not [m for m in mods if m and m.startswith(("kansoku.store", "kansoku.analysis", "kansoku.spec",
                                                                "kansoku.words"))], path
        assert ".execute(" not in src and ".con." not in src, path
    for path in sorted((ROOT / "tools/kansoku/analysis").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mods = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [m for m in mods if m and m.startswith("kansoku.render")], path


def test_handmade_report_to_hugo_data_and_page(tmp_path):
    from kansoku.render.hugo import csv_text, run_hugo, write_generated

    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    rep = handmade_report(content / "reports")
    gen, out = tmp_path / "generated", tmp_path / "public"
    write_generated([rep], gen)
    data = json.loads((gen / "data" / "reports" / "handmade.json").read_text("utf-8"))
    t = data["chapters"][0]["tables"]["t1"]
    view = t["view"]["en"]  # what the table shows, in words (render/views.py)
    assert view["rows"][1]["cells"][0]["text"] == HOSTILE and "no-ratio" in view["rows"][0]["cells"][2]["css"].split()
    assert [m["symbol"] for m in view["rows"][1]["cells"][2]["marks"]] == ["†", "!"]
    assert t["prov"]["groups"][0]["runs"][0] == {"id": "run-a", "anchor": "run-aaaa", "rep": "1", "representative": True}
    # plotly.js reads names as pseudo-HTML: escaped in the data
    assert data["chapters"][0]["figures"]["f1"]["figure"]["en"]["data"][0]["name"].count("&lt;b&gt;") == 1
    csv = (gen / "static" / "csv" / "handmade" / "t1.en.csv").read_text("utf-8")
    assert csv == "\ufeff" + csv_text(rep.chapters[0].tables["t1"], "en")
    lines = csv.lstrip("\ufeff").splitlines()
    # beside the aggregated column: its runs' min, max and n (empty where a cell has no per-run values)
    assert lines[0] == "group,clients,TPS,TPS (min over runs),TPS (max over runs),TPS (runs),change"
    assert lines[1] == "group A,1,1000.5,1000,1001,2,no ratio (baseline 0)"
    assert lines[2].startswith("group B <i>,'=cmd|x") and lines[2].endswith(",53.133,,,,-0.123"), lines[2]
    run_hugo(out, gen, content, site_root=ROOT)
    html = (out / "en" / "reports" / "handmade" / "one" / "index.html").read_text("utf-8")
    assert "Table 1.1" in html and "1,000.5" in html and "no ratio (baseline 0)" in html
    assert "<b>&amp;" not in html and "&lt;b&gt;&amp;amp;" in html  # the measured string stays text
    assert html.count('class="row-group"') == 2 and "group B &lt;i&gt;" in html
    # the chapter's machines block (report/machines.py): names, role, the sentence; measured strings escaped
    assert "Machines of this chapter" in html and "Machine A" in html and "<strong>Ran on 2 machines" in html
    assert "CPU =cmd|x" in html and "<b>&amp;" not in html.split("chapter-machines")[1]


@pytest.mark.slow
@pytest.mark.quick  # the quick run's one real PDF, checked by its text
def test_handmade_report_to_typst_and_pdf(tmp_path):
    from kansoku.render.typst import Document, render_pdfs

    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    rep = handmade_report(content / "reports")
    typ = Document(rep, "en", tmp_path).block("tbl", "t1", chapter=rep.chapters[0].id)
    # every occurrence is inside a typst string literal (closed right after it), none is markup
    assert typ.count("#strong[bold]") == typ.count(HOSTILE.replace('"', '\\"') + '"') == 2
    results = render_pdfs(rep, ["en"], out={"en": tmp_path / "handmade.en.pdf"})
    assert results[0].pages >= 2
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "handmade.en.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    flat = " ".join(text.split())
    assert "=cmd|x #strong[bold] *star* <b>&amp; $x$ `code`" in flat  # printed as is, not as markup
    assert "1,000.5" in flat and "no ratio (baseline 0)" in flat and "Table 1.1" in flat and "Figure 1.1" in flat
    assert "group A" in flat and "group B <i>" in flat and "(*1) a cell note [x]" in flat and "53.133†(*1)" in flat
    assert "Machines of this chapter" in flat and "Machine A" in flat and "Ran on 2 machines =cmd|x #strong[bold]" in flat


@pytest.mark.parametrize("value,text", [(53.132999999999996, "53.133"), (18.109999999999996, "18.11"),
                                        (3.0, "3"), (2.04e-05, "0.0000204"), (-0.12300000000000001, "-0.123"),
                                        (7471.238842, "7471.238842")])
def test_download_numbers_are_stable_decimals(value, text):
    from kansoku.analysis.tables import exact_text

    assert exact_text(value) == text


def test_report_model_doc_is_current():
    from kansoku.report.model_doc import render

    assert (ROOT / "docs" / "report_model.md").read_text(encoding="utf-8") == render(), (
        "docs/report_model.md is out of date: cd tools && python -m kansoku.report.model_doc > ../docs/report_model.md")


def test_every_model_field_is_in_the_doc():
    import dataclasses

    from kansoku.report.model_doc import records

    doc = (ROOT / "docs" / "report_model.md").read_text(encoding="utf-8")
    for cls in records():
        assert f"## {cls.__name__}" in doc
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in doc, (cls.__name__, f.name)


ZERO_PUBLISHED = """
[published]
id = "zero-t1"
csv = "zero.csv"
[published.citation]
report = { ja = "テスト", en = "test" }
table = "1"
[published.factors]
fiscal_year = 2030
study = "zero"
[published.columns]
clients = { factor = "clients" }
tps_off = { metric = "tps", factors = { config = "off" } }
tps_on = { metric = "tps", factors = { config = "on" } }
ratio = { metric = "published_ratio_pct", unit = "%", factors = { config = "on" } }
"""
ZERO_CSV = "clients,tps_off,tps_on,ratio\n1,0,50.5,0.00\n2,100.0,0,0.00\n4,200.0,100.0,50.00\n"
ZERO_SPEC = """
[report]
id = "zero"
fiscal_year = 2030
title = { ja = "zero", en = "zero" }
organisation = { ja = "o", en = "o" }
revision = "1"
[metrics.tps]
higher_is_better = true
[metrics.published_ratio_pct]
unit = "%"
[[chapter]]
id = "one"
number = 1
title = { ja = "one", en = "one" }
[[chapter.table]]
id = "t"
caption = { ja = "t", en = "t" }
metrics = ["tps"]
where = { published_table = "zero-t1" }
rows = "clients"
columns = "config"
aggregate = "single"
baseline = { factor = "config", value = "off", compare = "ratio", format = "percent", digits = 2, published = "published_ratio_pct" }
"""


def test_transcribed_zero_baseline_is_no_ratio_and_json_stays_finite(tmp_path):
    """A printed 0 as the baseline: a cell saying "no ratio (baseline 0)", never an infinite interval (Hugo
    cannot read Infinity); a printed 0 as the value: checked against the printed ratio, no infinity."""
    from kansoku.app import compute_one
    from kansoku.ingest.pipeline import ingest
    from kansoku.render.hugo import write_generated

    pub = tmp_path / "published"
    pub.mkdir()
    (pub / "zero.toml").write_text(ZERO_PUBLISHED, encoding="utf-8")
    (pub / "zero.csv").write_text(ZERO_CSV, encoding="utf-8")
    (tmp_path / "zero.toml").write_text(ZERO_SPEC, encoding="utf-8")
    db = tmp_path / "k.duckdb"
    res = ingest([pub], db)
    assert res.ok, res.errors
    rep = compute_one(db, tmp_path / "zero.toml", tmp_path / "content")
    rows = {r[0].text["en"]: r for r in rep.chapters[0].tables["t"].rows}
    comp = [c for c in rows["1"] if c.kind == "compare"][0]
    assert comp.text == {"ja": "比なし (基準値 0)", "en": "no ratio (baseline 0)"} and "no-ratio" in comp.flags
    assert comp.value is None
    zero_value = [c for c in rows["2"] if c.kind == "compare"][0]
    # a printed 0.00 over a printed baseline: the ratio's interval is bounded (only a 0 baseline is not)
    assert zero_value.text["en"] == "0.00 %"
    assert zero_value.published["interval"] == pytest.approx([-0.5002501250625313, 0.5002501250625313])
    assert [c for c in rows["4"] if c.kind == "compare"][0].text["en"] == "50.00 %"
    write_generated([rep], tmp_path / "gen")
    raw = (tmp_path / "gen" / "data" / "reports" / "zero.json").read_text("utf-8")
    assert "Infinity" not in raw and "NaN" not in raw
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-finite {c} in the JSON"))


@pytest.mark.browser
@pytest.mark.quick  # the quick run's one headless-Chromium check
def test_chart_export_makes_no_network_request(tmp_path):
    """A figure whose JSON names a URL (an image in its layout): chromium asks nobody for it."""
    import http.server
    import socket
    import threading

    from kansoku.render.typst import Chart, export_svgs

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # a non-loopback address of this machine (chromium never sends loopback through a proxy)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))
        host = s.getsockname()[0]
    url = f"http://{host}:{server.server_address[1]}/beacon.png"
    try:
        import urllib.request

        try:
            urllib.request.urlopen(url, timeout=5)  # the server is reachable from here
        except Exception:
            pass
        assert hits == ["/beacon.png"]
        hits.clear()
        fig = {"data": [{"type": "scatter", "x": [1, 2], "y": [1, 2]}],
               "layout": {"images": [{"source": url, "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                                      "sizex": 0.5, "sizey": 0.5}]}}
        svg = tmp_path / "c.svg"
        export_svgs([Chart(fig, svg, ["DejaVu Sans"])])
        assert svg.is_file()
        assert hits == [], f"chart export fetched {hits}"
    finally:
        server.shutdown()


@pytest.mark.browser  # two kaleido batches (headless Chromium): --all (CI)
def test_a_chart_kaleido_fails_on_is_asked_again_and_its_reason_given_when_it_fails_twice(tmp_path, monkeypatch):
    """kaleido returns a figure's failure (a tab of its browser that failed under load) rather than raising it:
    the charts it wrote no file for are exported once more, and a chart that fails again is the build's error,
    with kaleido's reason."""
    import kaleido

    from kansoku.errors import KansokuError
    from kansoku.render.typst import Chart, export_svgs

    real, calls = kaleido.write_fig_from_object_sync, []

    def flaky(jobs, kopts):  # the first batch: every chart but the last written, the last one's failure returned
        calls.append([j["path"] for j in jobs])
        if len(calls) == 1:
            real(jobs[:-1], kopts=kopts)
            return (RuntimeError("the tab timed out"),)
        return real(jobs, kopts=kopts)

    monkeypatch.setattr(kaleido, "write_fig_from_object_sync", flaky)
    fig = {"data": [{"type": "scatter", "x": [1, 2], "y": [1, 2]}], "layout": {}}
    charts = [Chart(fig, tmp_path / f"c{i}.svg", ["DejaVu Sans"]) for i in range(2)]
    export_svgs(charts)
    assert all(c.path.read_text(encoding="utf-8").lstrip().startswith("<svg") for c in charts)
    assert calls[1] == [str(charts[1].path)]
    monkeypatch.setattr(kaleido, "write_fig_from_object_sync", lambda jobs, kopts: (RuntimeError("the tab crashed"),))
    with pytest.raises(KansokuError, match=r"kaleido wrote no SVG for \S*c9\.svg \(RuntimeError: the tab crashed\)"):
        export_svgs([Chart(fig, tmp_path / "c9.svg", ["DejaVu Sans"])])


def test_not_printed_and_not_measured_cells_differ(tmp_path):
    """A transcribed table's blank cell says "not printed"; a comparison that cannot be made says "—"."""
    from kansoku.app import compute_one
    from kansoku.ingest.pipeline import ingest

    pub = tmp_path / "published"
    pub.mkdir()
    (pub / "zero.toml").write_text(ZERO_PUBLISHED, encoding="utf-8")
    (pub / "zero.csv").write_text("clients,tps_off,tps_on,ratio\n1,10.0,,\n2,100.0,50.0,50.00\n", encoding="utf-8")
    (tmp_path / "zero.toml").write_text(ZERO_SPEC, encoding="utf-8")
    db = tmp_path / "k.duckdb"
    assert ingest([pub], db).ok
    rep = compute_one(db, tmp_path / "zero.toml", tmp_path / "content")
    row = rep.chapters[0].tables["t"].rows[0]
    assert row[0].text["en"] == "1"
    on = [c for c in row if c.kind == "value"][1]
    assert on.text == {"ja": "記載なし", "en": "not printed"} and on.flags == ["not-printed"]
    assert [c for c in row if c.kind == "compare"][0].text["en"] == "—"


def test_encode_keys_a_record_and_the_records_in_it_by_their_field_names():
    from kansoku.model import FactorValue, Provenance, ProvenanceGroup, ProvenanceRun, RunMetric, encode

    prov = Provenance(common=[FactorValue({"en": "scale"}, {"en": "10"})], factors=[{"en": "clients"}],
                      groups=[ProvenanceGroup([{"en": "8"}], [ProvenanceRun("c8/rep=1", "c8-rep-1", "1", True)])],
                      runs=1)
    assert encode(prov) == {
        "common": [{"name": {"en": "scale"}, "value": {"en": "10"}}], "factors": [{"en": "clients"}],
        "groups": [{"values": [{"en": "8"}],
                    "runs": [{"id": "c8/rep=1", "anchor": "c8-rep-1", "rep": "1", "representative": True}]}],
        "runs": 1}
    metric = encode(RunMetric("tps", {"en": "TPS"}, 7481.0, 1, ["7481", "7481.0"], 0, "7480.5", "7470.1", "7490.2", 3))
    assert list(metric) == ["metric", "label", "value", "decimals", "texts", "texts_from", "median", "low", "high", "n"]
    assert RunMetric("tps", {"en": "TPS"}, 7481.0, 1, ["7481", "7481.0"], 0, "7480.5", "7470.1", "7490.2", 3).text \
        == "7481.0"
    assert encode(None) is None and encode((1, "a")) == [1, "a"]


def _encode_by_the_rule(record):
    """encode as its docstring states it, with no shortcut: the reference its fast paths are held to."""
    import dataclasses

    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return {f.name: _encode_by_the_rule(getattr(record, f.name)) for f in dataclasses.fields(record)
                if f.metadata.get("page_data", True)}
    if isinstance(record, (list, tuple)):
        return [_encode_by_the_rule(x) for x in record]
    if isinstance(record, dict):
        return {k: _encode_by_the_rule(v) for k, v in record.items()}
    return record


def test_encode_gives_what_its_rule_gives_on_any_nesting_of_records():
    import collections
    from dataclasses import dataclass, field

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kansoku.model import UNPUBLISHED, encode

    @dataclass
    class Leaf:
        name: str
        value: object
        hidden: object = field(default=None, metadata=UNPUBLISHED)

    Pair = collections.namedtuple("Pair", "a b")
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3))

    def nest(inner):
        return st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                         st.dictionaries(st.text(max_size=2), inner, max_size=3),
                         st.builds(Leaf, st.text(max_size=2), inner, inner),
                         st.builds(Pair, inner, inner),
                         st.dictionaries(st.text(max_size=2), inner, max_size=3).map(collections.OrderedDict))

    @settings(max_examples=400, deadline=None)
    @given(st.recursive(scalars, nest, max_leaves=20))
    def same(record):
        got, want = encode(record), _encode_by_the_rule(record)
        assert repr(got) == repr(want)  # (repr: NaN equal to itself, 1 and True told apart)
        assert got is not record or type(record) not in (list, dict)  # a copy the caller may change

    same()


def test_encode_leaves_the_stores_paths_out_of_the_page_data(tmp_path):
    from kansoku.model import RunInfo, SourceFile, encode

    f = SourceFile("pgbench.log", 10, "ab" * 32, "pgbench", "pgbench-stdout", None, "10 B", path=tmp_path / "blob")
    run = RunInfo("a/rep=1", "measured", "ok", None, None, None, "a-rep-1", sources=[f], run_toml=tmp_path / "toml")
    data = encode(run)
    assert "run_toml" not in data and "path" not in data["sources"][0]
    assert data["sources"][0]["file"] == "pgbench.log" and data["run_toml_url"] is None
    json.dumps(data)  # page data: nothing a JSON file cannot hold


def test_the_generated_record_encoders_give_what_the_rule_gives(example_db):
    """model.encode turns each record class into page data through a function generated once per class
    (model._encoder); each such function gives what the rule (model.encode_fields: the published fields, in
    order, each encoded) gives, for every record of the example's computed report."""
    import dataclasses

    from conftest import computed_report
    from kansoku import model

    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    seen: dict[type, int] = {}

    def walk(x):
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            got = model.encode(x)
            assert got == model.encode_fields(x) and list(got) == list(model.encode_fields(x)), type(x).__name__
            seen[type(x)] = seen.get(type(x), 0) + 1
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
    walk(rep)
    assert {"ComputedReport", "Table", "RunInfo", "SourceFile", "Provenance"} <= {k.__name__ for k in seen}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=2, max_size=4))
def test_a_csv_line_is_what_the_csv_writer_writes(fields):
    """render/hugo.py csv_line joins plain fields itself (the runs behind every cell of a campaign's tables): it
    is csv.writer's line for any fields, a comma, a quote, a newline or a control character among them."""
    import csv
    import io

    from kansoku.render.hugo import csv_line

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    assert csv_line(fields) == buf.getvalue()


def test_a_tables_runs_csv_reads_back_as_each_runs_cell_and_value_in_each_language():
    """render/hugo.py runs_csvs: one line a run of each aggregated cell, its row and column in the language of
    the file, the run as a spreadsheet reads it as text (a leading '-' kept by an apostrophe), read back by
    csv.reader whatever the texts hold."""
    import csv

    from kansoku.model import Cell, Column, Table
    from kansoku.render.hugo import runs_csvs

    stub = {"ja": "行, \"一\"", "en": "row, \"one\""}
    columns = [Column({"ja": "条件", "en": "condition"}, "factor"), Column({"ja": "TPS\n中央値", "en": "=TPS"}, "value"),
               Column({"ja": "件数", "en": "n"}, "count")]
    runs = {"c/rep=2": 1234.5, "-c,rep=1": 0.1 + 0.2, "c/\"rep\"=3": -7e-13}
    rows = [[Cell(stub, kind="factor"), Cell({"ja": "1,234", "en": "1,234"}, run_values=runs),
             Cell({"ja": "3", "en": "3"}, kind="count", run_values={"x": 1.0})],
            [Cell({"ja": "空", "en": "empty"}, kind="factor"), Cell({"ja": "—", "en": "—"}), Cell({"ja": "0", "en": "0"},
                                                                                                kind="count")]]
    t = Table("t", "1", {}, {}, None, [], columns, rows, sorted(runs))
    got = runs_csvs(t)
    for lang in ("ja", "en"):
        lines = list(csv.reader(got[lang].splitlines(keepends=True)))
        col = columns[1].text[lang]
        assert lines == [["row", "column", "run", "value"]] + [
            [stub[lang], "'" + col if col.startswith("=") else col, "'" + r if r.startswith("-") else r, f"{v:.12g}"]
            for r, v in sorted(runs.items())]
