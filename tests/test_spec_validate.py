"""Spec validation: the schema and its published forms, wrong types never a traceback, names checked
against the parsers and the database with did-you-mean, device groups that match no data, prose pages
checked against the spec, and a read-only store open that never writes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
import tomlkit

from conftest import ROOT
from kansoku.analysis.figures import KINDS, kind
from kansoku.analysis.spec_check import store_problems
from kansoku.app import preflight
from kansoku.errors import KansokuError, SpecError
from kansoku.front_matter import parse_front_matter
from kansoku.ingest.pipeline import ingest
from kansoku.report.structure import report_pages
from kansoku.spec import schema as spec_schema
from kansoku.spec.model import load_report
from kansoku.spec.validate import SpecProblems
from kansoku.store.db import open_store

BASE = {
    "report": {"id": "t", "fiscal_year": 2030, "title": "T", "organisation": "O"},
    "chapter": [{"id": "c", "title": "C",
                 "table": [{"id": "t1", "caption": "x", "metric": "tps", "rows": "clients"}],
                 "figure": [{"id": "f1", "caption": "x", "metric": "tps", "x": "clients"}]}],
}


def line_of(p: Path, needle: str) -> int:
    text = p.read_text(encoding="utf-8")
    return text.count("\n", 0, text.rindex(needle)) + 1


# -- the schema, published --------------------------------------------------------------------------

def test_published_schema_and_doc_tables_are_current():
    assert (ROOT / "docs/report-spec.schema.json").read_text(encoding="utf-8") == spec_schema.schema_json(KINDS), \
        "run: python3 -m kansoku.analysis.spec_docs"
    doc = (ROOT / "docs/spec.md").read_text(encoding="utf-8")
    assert spec_schema.spec_doc(doc, KINDS) == doc, "run: python3 -m kansoku.analysis.spec_docs"
    for name in spec_schema.SECTIONS:  # every section has its generated table
        assert f"<!-- generated:{name} -->" in doc, name
    assert "| `baseline` | table |" in doc and "| `fiscal_year` | integer |" in doc


def test_the_schema_lists_every_registered_chart_kind():
    def listed() -> list[str]:
        return spec_schema.schema(KINDS)["$defs"]["figure"]["properties"]["chart"]["enum"]

    assert listed() == sorted(KINDS)
    assert {"flamegraph", "profile_diff", "query_times", "line"} <= set(listed())
    kind("kind_added_later")(lambda store, report, item: None)  # a new kind: nothing else edited
    try:
        assert "kind_added_later" in listed()
        assert "`kind_added_later`" in spec_schema.key_table("figure", KINDS)
    finally:
        del KINDS["kind_added_later"]


def test_no_key_is_left_undescribed():
    for name in spec_schema.SECTIONS:
        for k, d in spec_schema.section_keys(name).items():
            assert "not described" not in d["description"], f"describe {name}.{k} in spec/schema.py"


@pytest.mark.parametrize("spec", sorted((ROOT / "data/reports").glob("*.toml")), ids=lambda p: p.name)
def test_example_specs_point_editors_at_the_schema_and_pass_it(spec):
    import jsonschema

    first = spec.read_text(encoding="utf-8").splitlines()[0]
    assert first == "#:schema ../../docs/report-spec.schema.json"
    target = (spec.parent / first.split(" ", 1)[1]).resolve()
    assert target == (ROOT / "docs/report-spec.schema.json").resolve()
    schema = json.loads(target.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    import tomllib

    data = json.loads(json.dumps(tomllib.loads(spec.read_text(encoding="utf-8")), default=str))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)) == []


def test_taplo_reads_the_schema_line_as_an_editor_does(tmp_path):
    """taplo is the engine of the Even Better TOML editor extension: it follows the #:schema line."""
    taplo = shutil.which("taplo")
    if taplo is None:
        pytest.skip("taplo not installed (pip install -e '.[test]')")
    ok = subprocess.run([taplo, "lint", *map(str, sorted((ROOT / "data/reports").glob("*.toml")))],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = tmp_path / "bad.toml"
    text = (ROOT / "data/reports/example.toml").read_text(encoding="utf-8")
    text = text.replace("../../docs/report-spec.schema.json", str(ROOT / "docs/report-spec.schema.json"))
    bad.write_text(text.replace('aggregate = "median"', 'aggregate = "mode"', 1), encoding="utf-8")
    proc = subprocess.run([taplo, "lint", str(bad)], capture_output=True, text=True)
    assert proc.returncode != 0
    n = line_of(bad, 'aggregate = "mode"')
    assert f"{bad}:{n}:" in proc.stdout + proc.stderr


# -- wrong types are problems, never tracebacks -----------------------------------------------------

WRONG = {"string": [1], "text": 3, "integer": "two", "true / false": "yes", "number": "n", "table": "x",
         "list of strings": "x", "list of tables": "x", "table of texts": "x", "table of conditions": "x",
         "table of digits": "x", "table of tables": "x", "table of lists": "x", "list of values": "x",
         "list of metric names": "x", "list of factor names": "x", "metric name": 1, "factor name": 1,
         "integer ≥ 0": -1, "integer ≥ 1": 0, "number ≠ 0": 0, "`\"first\"`": "last",
         "integer or \"c.n\"": "x", "integer ≥ 0 or \"printed\"": "some", "string, number or boolean": [1]}


def _cases():
    for section, place in (("item", ("chapter", 0, "table", 0)), ("item", ("chapter", 0, "figure", 0)),
                           ("table", ("chapter", 0, "table", 0)), ("figure", ("chapter", 0, "figure", 0)),
                           ("baseline", ("chapter", 0, "table", 0, "baseline")), ("report", ("report",)),
                           ("chapter", ("chapter", 0)), ("factor", ("factors", "clients")),
                           ("metric", ("metrics", "tps"))):
        for k, d in spec_schema.section_keys(section).items():
            label = d["type"][0]
            if label == "any":
                continue
            wrong = WRONG.get(label, 12 if not label.startswith("`") else "nonsense")
            yield pytest.param(place, k, wrong, id=f"{'.'.join(map(str, place))}.{k}")


@pytest.mark.parametrize("place,key,wrong", list(_cases()))
def test_a_wrong_type_anywhere_is_a_spec_problem_on_its_line(tmp_path, place, key, wrong):
    data = json.loads(json.dumps(BASE))
    node = data
    for part in place:
        if isinstance(part, str) and part not in node:
            node[part] = {"fixed": 2} if part == "baseline" else {}
        node = node[part]
    node[key] = wrong
    p = tmp_path / "s.toml"
    p.write_text(tomlkit.dumps(data), encoding="utf-8")
    with pytest.raises(SpecError) as ei:  # a SpecError (exit 3), not a TypeError or a traceback
        load_report(p)
    assert ei.value.exit_code == 3
    text = str(ei.value)
    needle = f"{key} = {tomlkit.item(wrong).as_string()}"
    assert f"{p}:{line_of(p, needle)}: " in text, (p.read_text(encoding="utf-8"), text)


# -- names against the parsers and the store ----------------------------------------------------------

@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("pub")
    (d / "s.toml").write_text("""
[published]
id = "s"
csv = "s.csv"
[published.citation]
report = "R"
table = "1"
[published.columns]
clients = { factor = "clients" }
config = { factor = "config" }
tps = { metric = "tps" }
""", encoding="utf-8")
    (d / "s.csv").write_text("clients,config,tps\n1,checksums-off,10\n2,checksums-off,20\n1,checksums-on,11\n",
                             encoding="utf-8")
    db = d / "k.duckdb"
    assert ingest([d], db).ok
    st = open_store(db, read_only=True)
    yield st
    st.close()


def _spec(tmp_path: Path, item: dict, kind: str = "table") -> Path:
    data = json.loads(json.dumps(BASE))
    data["chapter"][0][kind] = [item]
    data["chapter"][0].pop("figure" if kind == "table" else "table")
    p = tmp_path / "s.toml"
    p.write_text(tomlkit.dumps(data), encoding="utf-8")
    return p


@pytest.mark.parametrize("change,message", [
    ({"metric": "tsp"}, r'metric \(table \'t1\'\): unknown metric \'tsp\'; did you mean "tps"'),
    ({"rows": "client"}, r'rows \(table \'t1\'\): unknown factor \'client\'; did you mean "clients"'),
    ({"columns": "configs"}, r'columns .*unknown factor \'configs\'; did you mean "config"'),
    ({"where": {"config": "checksum-off"}},
     r'where\.config .*config = \'checksum-off\' matches no run; did you mean "checksums-off"'),
    ({"where": {"config": ["checksums-on", "checksum-of"]}}, r'where\.config\[1\] .*did you mean "checksums-off"'),
    ({"baseline": {"factor": "config", "value": "checksums-onn"}},
     r'baseline\.value .*config = \'checksums-onn\' matches no run; did you mean "checksums-on"'),
    ({"baseline": {"factor": "confg", "value": "x"}}, r'baseline\.factor .*did you mean "config"'),
    ({"show_factors": ["clinets"]}, r'show_factors\[0\] .*did you mean "clients"'),
    ({"metrics": ["tps", "cpu_idel_pct"]}, r'metrics\[1\] .*unknown metric \'cpu_idel_pct\'; did you mean "cpu_idle_pct"'),
    ({"metric": "tps[vda]"}, r"metric 'tps' takes no \[selection\]"),
])
def test_names_are_checked_against_the_store_with_did_you_mean(store, tmp_path, change, message):
    item = {**BASE["chapter"][0]["table"][0], **change}
    if "metrics" in change:
        item.pop("metric")
    p = _spec(tmp_path, item)
    problems = store_problems(load_report(p), store)
    assert problems, "no problem found"
    text = "\n".join(map(str, problems))
    assert len(problems) == 1, text
    assert str(problems[0]).startswith(f"{p}:"), text
    import re

    assert re.search(message, text), text


def test_factor_and_metric_sections_with_a_typo(store, tmp_path):
    p = _spec(tmp_path, BASE["chapter"][0]["table"][0])
    p.write_text(p.read_text(encoding="utf-8") + '\n[factors.confg]\nname = "C"\n\n[factors.disk]\nname = "D"\n'
                 '\n[metrics.cpu_idel_pct]\nlabel = "T"\n', encoding="utf-8")
    text = "\n".join(map(str, store_problems(load_report(p), store)))
    assert f"{p}:{line_of(p, '[factors.confg]')}: factors.confg: no factor 'confg' in the database; " \
           'did you mean "config"?' in text
    assert f"{p}:{line_of(p, '[metrics.cpu_idel_pct]')}: metrics.cpu_idel_pct: no metric 'cpu_idel_pct' in the database; " \
           'did you mean "cpu_idle_pct"' in text
    assert "disk" not in text  # a factor this database does not hold, and no typo: fine


def test_chart_kind_did_you_mean(store, tmp_path):
    p = _spec(tmp_path, {**BASE["chapter"][0]["figure"][0], "chart": "lines"}, kind="figure")
    problems = store_problems(load_report(p), store)
    assert [str(x) for x in problems] == [
        f"{p}:{line_of(p, 'chart')}: chapter[0].figure[0].chart (figure 'f1'): unknown chart kind 'lines'; "
        "did you mean \"line\"?"]


def test_a_correct_spec_has_no_store_problems(store, tmp_path):
    p = _spec(tmp_path, {**BASE["chapter"][0]["table"][0], "columns": "config",
                         "where": {"config": ["checksums-off", "checksums-on"], "clients": {"min": 1}},
                         "baseline": {"factor": "config", "value": "checksums-off"}})
    assert store_problems(load_report(p), store) == []


# -- the example database: tools/build on five store-level mistakes, device groups -------------------

@pytest.fixture(scope="module")
def example_specs(tmp_path_factory):
    """The repository's specs, with the example spec changed by ``edit``."""
    def make(edit) -> tuple[Path, Path]:
        d = tmp_path_factory.mktemp("specs")
        for f in (ROOT / "data/reports").glob("*.toml"):
            shutil.copy(f, d / f.name)
        p = d / "example.toml"
        p.write_text(edit(p.read_text(encoding="utf-8")), encoding="utf-8")
        return d, p
    return make


def test_build_lists_every_store_level_problem_in_one_run(example_site, example_specs, tool, tmp_path):
    db, _ = example_site

    def edit(s: str) -> str:
        s = s.replace('metrics = ["tps", "cpu_idle_pct"]', 'metrics = ["tps", "cpu_idel_pct"]', 1)
        s = s.replace('workload = "update", rep', 'workload = "updte", rep', 1)
        s = s.replace('rows = "clients"', 'rows = "client"', 1)
        s = s.replace('chart = "line"', 'chart = "lines"', 1)
        s = s.replace("[factors.config]", '[device_groups]\nnone = ["sdz"]\nsystem = ["vda"]\n\n[factors.config]')
        # companions of the percentile table: a group without data, a group and a device with data
        return s.replace('metrics = ["latency_p50_ms",', 'metrics = ["latency_p50_ms", "disk_write_kb_s[none]", '
                         '"disk_write_kb_s[system]", "disk_util_pct_max[vda]",', 1)
    specs, p = example_specs(edit)
    rows, chart = line_of(p, 'rows = "client"'), line_of(p, 'chart = "lines"')
    proc = tool("build", "--db", db, "--specs", specs, "--out", tmp_path / "out", "--generated", tmp_path / "gen")
    assert proc.returncode == 3, proc.stderr
    lines = [ln.strip() for ln in proc.stderr.splitlines()]
    assert lines[0] == f"error: {p}: 5 problems in the report spec:", proc.stderr
    expected = [
        f"{p}:{line_of(p, 'cpu_idel_pct')}: chapter[0].table[0].metrics[1] (table 'read-tps'): unknown metric "
        "'cpu_idel_pct'; did you mean \"cpu_idle_pct\"",
        f"{p}:{rows}: chapter[0].table[0].rows (table 'read-tps'): unknown factor "
        "'client'; did you mean \"clients\"?",
        f"{p}:{chart}: chapter[0].figure[0].chart (figure 'read-tps'): unknown chart "
        "kind 'lines'; did you mean \"line\"?",
        f"{p}:{line_of(p, 'updte')}: chapter[0].table[1].where.workload (table 'update-tps'): workload = 'updte' "
        "matches no run; did you mean \"update\"?",
        f"{p}:{line_of(p, 'disk_write_kb_s[none]')}: chapter[0].table[2].metrics[1] (table 'update-latency'): "
        "disk_write_kb_s[none]: device group 'none' = ['sdz'] matches no data of this table's runs",
    ]
    for e in expected:
        assert any(ln.startswith(e) for ln in lines), (e, proc.stderr)
    assert not (tmp_path / "out").exists()


# -- prose pages --------------------------------------------------------------------------------------

PAGES_SPEC = """
[report]
id = "r"
fiscal_year = 2030
title = "R"
organisation = "O"
[[chapter]]
id = "scaleup"
title = "S"
[[chapter.table]]
id = "t1"
caption = "x"
metric = "tps"
rows = "clients"
[[chapter]]
id = "disk"
title = "D"
"""


def _pages(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    spec = tmp_path / "r.toml"
    spec.write_text(PAGES_SPEC, encoding="utf-8")
    content = tmp_path / "content" / "reports"
    (content / "r").mkdir(parents=True)
    for name, text in files.items():
        (content / "r" / name).write_text(text, encoding="utf-8")
    return spec, content


GOOD_PAGE = '---\ntitle: "S"\nreport: r\nchapter: scaleup\nchapter_number: 1\n---\nText.\n\n{{< tbl "t1" >}}\n'


def test_good_pages_pass_and_toml_front_matter_is_read(tmp_path):
    spec, content = _pages(tmp_path, {
        "scaleup.ja.md": GOOD_PAGE,
        "scaleup.en.md": '+++\ntitle = "Scale-up"\nreport = "r"\nchapter = "scaleup"\n+++\n{{< tbl "t1" >}}\n',
        "extra.en.md": "---\ntitle: Extra\nweight: 920\n---\nx\n",
    })
    pages = report_pages(load_report(spec), content)
    assert [p.id for p in pages] == ["scaleup", "disk", "extra", "appendix", "sources"]
    assert pages[0].title == {"ja": "S", "en": "Scale-up"}


@pytest.mark.parametrize("files,bad,at,message", [
    ({"scale-up.ja.md": GOOD_PAGE}, "scale-up.ja.md", None,
     "this is the page of chapter 'scaleup': name it scaleup.ja.md"),
    ({"scaleup.ja.md": GOOD_PAGE.replace("chapter: scaleup", "chapter: scale")}, "scaleup.ja.md", "chapter:",
     "chapter 'scale' is not a chapter of report 'r'"),
    ({"scalup.en.md": "---\ntitle: S\n---\nx\n"}, "scalup.en.md", None,
     "no chapter 'scalup' in"),
    ({"scaleup.md": GOOD_PAGE}, "scaleup.md", None, "a page of report 'r' is named <page>.<lang>.md"),
    ({"scaleup.de.md": GOOD_PAGE}, "scaleup.de.md", None, "a page of report 'r' is named <page>.<lang>.md"),
    ({"scaleup.ja.md": GOOD_PAGE.replace("report: r", "report: other")}, "scaleup.ja.md", "report:",
     "report: 'other', but the page is in"),
    ({"scaleup.ja.md": GOOD_PAGE.replace("chapter_number: 1", "chapter_number: 2")}, "scaleup.ja.md",
     "chapter_number:", "chapter_number: 2, but chapter 'scaleup' is number 1"),
    ({"scaleup.ja.md": GOOD_PAGE.replace('"t1"', '"t2"')}, "scaleup.ja.md", "{{<",
     "table 't2' is not declared in chapter 'scaleup'"),
    ({"notes.ja.md": '---\ntitle: N\n---\n\n{{< fig "f9" >}}\n'}, "notes.ja.md", "{{<",
     "places fig 'f9' but is not the page of a chapter"),
    ({"scaleup.ja.md": GOOD_PAGE.replace("chapter_number: 1", "chapter_number: 1\nslug: scale")}, "scaleup.ja.md",
     "slug:", "slug: a page of a report is at the address of its file (/<lang>/reports/r/scaleup/); remove slug"),
    ({"_index.en.md": '---\ntitle: R\nurl: /r/\n---\nx\n'}, "_index.en.md", "url:",
     "url: a page of a report is at the address of its file (/<lang>/reports/r/); remove url"),
    ({"scaleup.ja.md": '---\ntitle: S\nreport: r: x\n---\nx\n'}, "scaleup.ja.md", "report:",
     "front matter is not valid YAML: mapping values are not allowed here"),
])
def test_pages_that_do_not_fit_the_spec_are_spec_errors(tmp_path, files, bad, at, message):
    spec, content = _pages(tmp_path, files)
    with pytest.raises(SpecProblems) as ei:
        report_pages(load_report(spec), content)
    assert ei.value.exit_code == 3
    f = content / "r" / bad
    where = f"{f}:{line_of(f, at)}: " if at else f"{f}: "
    assert f"{where}{message}" in str(ei.value), str(ei.value)


def test_every_page_problem_and_orphan_report_directory_in_one_run(tmp_path):
    spec, content = _pages(tmp_path, {"scale-up.ja.md": GOOD_PAGE, "disk.md": "x\n"})
    (content / "old-report").mkdir()
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(spec, specs / "r.toml")
    with pytest.raises(SpecProblems) as ei:
        preflight(specs, tmp_path / "no.duckdb", content)
    text = str(ei.value)
    assert "3 problems" in text
    assert f"{content / 'old-report'}: no report spec declares report 'old-report'" in text
    assert "scale-up.ja.md: this is the page of chapter 'scaleup'" in text and "disk.md: a page of report" in text


def test_front_matter_is_read_as_yaml():
    front, body = parse_front_matter('---\ntitle: "A: b"\nthemes:\n  - x\n  - "y"\ndate: 2026-11-22\n'
                                     'draft: false\n---\nbody\n')
    assert front == {"title": "A: b", "themes": ["x", "y"], "date": "2026-11-22", "draft": False}
    assert body == "body\n"


def test_every_content_page_of_the_repository_fits_its_spec():
    preflight(ROOT / "data/reports", ROOT / "no-such.duckdb", ROOT / "content/reports")


def test_a_spec_found_clean_is_not_checked_again_until_its_text_changes(tmp_path, monkeypatch):
    """tools/build's preflight keeps the specs it found clean (by text and code version, ``clean``): the same
    text is not checked against the schema again; a changed one is, and its problems are reported."""
    from kansoku.spec import validate

    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "data/reports", specs)
    n = len(list(specs.glob("*.toml")))
    clean = tmp_path / "build-cache" / "specs-checked.json"
    reports = preflight(specs, tmp_path / "no.duckdb", ROOT / "content/reports", clean=clean)
    assert "example" in [r.id for r in reports] and len(json.loads(clean.read_text(encoding="utf-8"))) == n > 1
    checks = []
    real = validate.schema_problems
    monkeypatch.setattr(validate, "schema_problems", lambda data: checks.append(1) or real(data))
    again = preflight(specs, tmp_path / "no.duckdb", ROOT / "content/reports", clean=clean)
    assert checks == [] and [r.id for r in again] == [r.id for r in reports]
    text = (specs / "example.toml").read_text(encoding="utf-8")
    (specs / "example.toml").write_text(text.replace("[report]\n", "[report]\nno_such_key = 1\n", 1),
                                        encoding="utf-8")
    with pytest.raises(SpecProblems) as ei:
        preflight(specs, tmp_path / "no.duckdb", ROOT / "content/reports", clean=clean)
    assert checks == [1] and 'unknown key "no_such_key"' in str(ei.value)
    with pytest.raises(SpecProblems):  # the file of clean specs names the old text only
        preflight(specs, tmp_path / "no.duckdb", ROOT / "content/reports", clean=clean)


# -- a read-only open never writes ----------------------------------------------------------------------

def test_read_only_open_of_an_old_layout_store_does_not_write(tmp_path):
    run = ROOT / "tests/fixtures/vmstat"
    db = tmp_path / "k.duckdb"
    assert ingest([run], db).ok
    con = duckdb.connect(str(db))
    # an older kansoku: another schema fingerprint, a view it did not have yet
    con.execute("UPDATE kansoku_meta SET value = 'older' WHERE key = 'schema_fingerprint'")
    con.execute("DROP VIEW runs_with_factors")
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    mtime = db.stat().st_mtime_ns
    with pytest.raises(KansokuError, match="another version of kansoku.*nothing was changed.*tools/ingest"):
        open_store(db, read_only=True)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before and db.stat().st_mtime_ns == mtime
    assert not db.with_suffix(".duckdb.wal").exists()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT value FROM kansoku_meta WHERE key = 'schema_fingerprint'").fetchone()[0] == "older"
    con.close()
    # a writing open (tools/ingest) upgrades it; then a read-only open works
    open_store(db).close()
    open_store(db, read_only=True).close()


def test_schema_and_store_problems_come_in_one_run(store, tmp_path):
    item = {**BASE["chapter"][0]["table"][0], "metric": "tsp", "aggregate": "mode", "where": {"config": "of"}}
    p = _spec(tmp_path, item)
    with pytest.raises(SpecProblems) as ei:
        preflight(tmp_path, store.path, tmp_path / "content")
    text = str(ei.value)
    assert "3 problems" in text, text
    assert f"{p}:{line_of(p, 'aggregate')}: chapter[0].table[0].aggregate (table 't1'): expected one of" in text
    assert f"{p}:{line_of(p, 'tsp')}: chapter[0].table[0].metric (table 't1'): unknown metric 'tsp'" in text
    assert "where.config (table 't1'): config = 'of' matches no run" in text


def test_spec_and_page_problems_come_in_one_run(tmp_path):
    spec, content = _pages(tmp_path, {"scale-up.ja.md": GOOD_PAGE})
    spec.write_text(PAGES_SPEC.replace('rows = "clients"', 'rows = "clients"\naggregate = "mode"'), encoding="utf-8")
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(spec, specs / "r.toml")
    (specs / "broken.toml").write_text("[report\n", encoding="utf-8")  # unreadable: its pages are not judged
    (content / "broken").mkdir()
    (content / "broken" / "x.ja.md").write_text("---\ntitle: X\n---\n", encoding="utf-8")
    with pytest.raises(SpecProblems) as ei:
        preflight(specs, tmp_path / "no.duckdb", content)
    text = str(ei.value)
    assert "3 problems" in text, text
    assert "broken.toml:1: not valid TOML" in text
    assert "r.toml:15: chapter[0].table[0].aggregate (table 't1'): expected one of" in text
    assert "scale-up.ja.md: this is the page of chapter 'scaleup': name it scaleup.ja.md" in text


def test_front_matter_parsed_once_is_handed_out_as_a_copy_and_follows_its_text(tmp_path):
    """kansoku/front_matter.py keeps what it parsed by the file's text (a build reads each prose page ~5 times):
    a caller changing what it got changes nothing for the next, another text is parsed anew, and a text that
    does not parse is refused each time with its own file named."""
    from kansoku.errors import SpecError
    from kansoku.front_matter import parse_front_matter

    text = "---\ntitle: A page\ndate: 2026-11-27\ntags: [x]\n---\nBody\n"
    front, body = parse_front_matter(text, tmp_path / "a.en.md")
    assert front == {"title": "A page", "date": "2026-11-27", "tags": ["x"]} and body == "Body\n"
    front["tags"].append("y")
    front["title"] = "changed"
    assert parse_front_matter(text, tmp_path / "b.en.md") == ({"title": "A page", "date": "2026-11-27",
                                                               "tags": ["x"]}, "Body\n")
    assert parse_front_matter(text.replace("A page", "Another"))[0]["title"] == "Another"
    bad = "---\ntitle: [unclosed\n---\n"
    for name in ("c.en.md", "d.en.md"):
        with pytest.raises(SpecError, match=name):
            parse_front_matter(bad, tmp_path / name)
