"""An incremental build (a real ingest, real Hugo builds).

A rebuild with nothing changed reuses every table and figure and writes no generated file; one new run
recomputes exactly the items that select it, and the result is the same as a build from scratch.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cache_entries, copy_store, run_tool, set_cache_entry

SCALEUP = ROOT / "tests" / "fixtures" / "runs" / "campaign=corpus-2026-11" / "study=scaleup"
HELD_BACK = "workload=read/config=checksums-off/clients=8/rep=3"  # the "one new run"

SPEC = '''
[report]
id = "inc"
fiscal_year = 2026
title = { ja = "増分ビルド", en = "Incremental build" }
organisation = { ja = "テスト", en = "Test" }
revision = "0.1"
publish_raw = true

[[chapter]]
id = "a"
title = { ja = "章 A", en = "Chapter A" }

[[chapter.table]]
id = "read"
caption = { ja = "参照系", en = "Read" }
metric = "tps"
where = { workload = "read" }
rows = "clients"
count = true

[[chapter.figure]]
id = "read-line"
caption = { ja = "参照系", en = "Read" }
chart = "line"
metric = "tps"
where = { workload = "read" }
x = "clients"

[[chapter.table]]
id = "update"
caption = { ja = "更新系", en = "Update" }
metric = "tps"
where = { workload = "update" }
rows = "clients"
count = true

[[chapter.figure]]
id = "update-line"
caption = { ja = "更新系", en = "Update" }
chart = "line"
metric = "tps"
where = { workload = "update" }
x = "clients"
'''


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """The campaign less its held-back run, ingested once for the module (an ingest per test before); each
    test takes a copy of it (``env``)."""
    base = tmp_path_factory.mktemp("inc-ingested")
    camp = base / "campaign"
    shutil.copytree(SCALEUP, camp / "study=scaleup")
    (camp / ".kansoku-campaign").write_text("# test campaign\n", encoding="utf-8")
    shutil.move(camp / "study=scaleup" / HELD_BACK, base / "held")
    db = base / "db" / "kansoku.duckdb"
    run_tool("ingest", "--db", db, camp, check=True)
    return base, db


@pytest.fixture
def env(ingested, tmp_path, monkeypatch):
    """A test's own campaign, held-back run and store (a copy of ``ingested``: the tests ingest and build)."""
    base, pristine = ingested
    camp = tmp_path / "campaign"
    shutil.copytree(base / "campaign", camp)
    held = tmp_path / "held"
    shutil.copytree(base / "held", held)
    db = copy_store(pristine, tmp_path / "db")
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "inc.toml").write_text(SPEC, encoding="utf-8")
    content = tmp_path / "content"
    (content / "reports").mkdir(parents=True)
    for p in (ROOT / "content").glob("_index.*.md"):
        shutil.copy(p, content)
    for p in (ROOT / "content/reports").glob("_index.*.md"):
        shutil.copy(p, content / "reports")
    monkeypatch.chdir(ROOT)  # config.toml, layouts/ and i18n/ of the repository
    return tmp_path, camp, held, db, specs, content


def build(env, gen_name: str = "gen", out_name: str = "public"):
    from kansoku.app import build_site as site_build

    tmp, camp, held, db, specs, content = env
    return site_build(db, tmp / out_name, spec_dir=specs, generated=tmp / gen_name, content=content)


def site_files(public: Path) -> dict[str, str]:
    return {p.relative_to(public).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(public.rglob("*")) if p.is_file()}


def snapshot(gen: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for root in ("data", "static", "content", "assets"):  # hugo.GENERATED_ROOTS
        for p in sorted((gen / root).rglob("*")):
            if p.is_file():
                out[p.relative_to(gen).as_posix()] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out



class CallLog:
    """What a spy saw, kept in a file: seen the same whether the build computes in this process or in a
    child (app/forked.py, the command line's), whose lists this process would not see."""

    def __init__(self, path: Path):
        self.path = path
        path.unlink(missing_ok=True)

    def append(self, value) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(value) + "\n")

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def read(self) -> list:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines()]


def test_rebuild_reuses_everything_and_one_new_run_recomputes_only_its_items(env):
    tmp, camp, held, db, specs, content = env
    first = build(env)
    assert sorted(first.items_computed) == ["inc/read", "inc/read-line", "inc/update", "inc/update-line"]
    assert first.items_reused == [] and first.files_written > 0
    before = snapshot(tmp / "gen")
    assert "data/reports/inc.json" in before and "static/csv/inc/read.en.csv" in before

    again = build(env)
    assert again.items_computed == []
    assert sorted(again.items_reused) == ["inc/read", "inc/read-line", "inc/update", "inc/update-line"]
    assert again.files_written == 0
    assert again.runs_computed == 0 and again.runs_reused == first.runs_computed > 0  # run pages: from the cache
    assert first.figures_drawn >= 2 and first.figures_reused == 0
    assert first.run_pages_reused == 0 and first.run_pages_rendered == first.runs_computed  # no site before
    assert again.run_pages_rendered == 0 and again.run_pages_reused == first.run_pages_rendered  # Hugo: none
    assert again.figures_drawn == 0 and again.figures_reused == first.figures_drawn  # no figure drawn again
    assert snapshot(tmp / "gen") == before  # same bytes, not even rewritten (same modification times)
    # each run's part of its report's command blocks and environment (ItemCache.per_run): every run's, once
    every = first.per_run_computed["commands"]
    assert first.per_run_computed == {"commands": every, "environment": every} and again.per_run_computed == {}

    shutil.move(held, camp / "study=scaleup" / HELD_BACK)
    run_tool("ingest", "--db", db, camp / "study=scaleup" / HELD_BACK, check=True)
    after_one = build(env)
    assert sorted(after_one.items_computed) == ["inc/read", "inc/read-line"]
    assert sorted(after_one.items_reused) == ["inc/update", "inc/update-line"]
    assert after_one.runs_computed == 1 and after_one.runs_reused == first.runs_computed  # the new run alone
    new_run = "study=scaleup/" + HELD_BACK
    assert after_one.per_run_computed == {"commands": [new_run], "environment": [new_run]}
    assert after_one.figures_drawn == 1 and after_one.figures_reused == first.figures_drawn - 1  # read-line
    # Hugo renders the new run's page and those of its condition's runs (their pages list it); the rest are
    # the replaced site's files
    assert after_one.run_pages_rendered == 3 and after_one.run_pages_reused == first.run_pages_rendered - 2
    now = snapshot(tmp / "gen")
    changed = {p for p in now if p not in before or now[p] != before[p]}
    assert "data/reports/inc.json" in changed and "static/csv/inc/read.runs.en.csv" in changed
    assert not {p for p in changed if "update" in Path(p).name}  # the update items' files are left alone
    # of the run pages' data, the new run's own and its condition's file: the other runs of the condition show
    # its median, min, max and count from that file (render/run_pages.py condition_json), their own data is
    # as it was (a live preview's server is told of few files)
    from kansoku.report.provenance import run_anchor

    own = {p for p in changed if p.startswith("assets/runs/inc/")}
    cond = json.loads((tmp / "gen" / "assets" / "runs" / "inc" / f"{run_anchor(new_run)}.json").read_text())["cond"]
    assert own == {f"assets/runs/inc/{run_anchor(new_run)}.json", f"assets/runs/inc/conditions/{cond}.json"}, own

    # the incremental result is the result of a build from scratch
    fresh = build(env, "gen-fresh", "public-fresh")
    assert sorted(fresh.items_computed) == ["inc/read", "inc/read-line", "inc/update", "inc/update-line"]
    assert fresh.figures_reused == 0  # every figure drawn anew: the drawings compared below are a fresh build's
    assert fresh.run_pages_reused == 0  # every page rendered by Hugo
    scratch = snapshot(tmp / "gen-fresh")
    assert {p: h for p, (h, _) in scratch.items()} == {p: h for p, (h, _) in now.items()}
    # the published site too, every file byte for byte (run pages rendered or reused, raw files, static)
    assert site_files(tmp / "public-fresh") == site_files(tmp / "public")


# what a rebuild with nothing changed must not load (tests/test_cli_start.py ON_USE): numpy computes verdicts,
# jinja2 writes PDFs, plotly's figure classes draw figures; such a rebuild does none of these
REBUILD_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kansoku.cli as cli
from kansoku.app import forked
forked.run_forked = lambda step: step()  # computed here: the modules a forked child loaded would not show
code = cli.build_main(sys.argv[3:], prog="kansoku build")
print("LOADED", json.dumps([code, sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)]))
"""


def test_a_rebuild_with_nothing_changed_loads_no_numpy_jinja2_nor_plotlys_figures(env):
    """The writer's loop: a rebuild that reuses every table and drawing loads none of the modules that only
    computing a verdict, writing a PDF or drawing a figure needs (each a large import, paid by every start)."""
    tmp, camp, held, db, specs, content = env
    args = ["--db", db, "--specs", specs, "--content", content, "--out", tmp / "public", "--generated", tmp / "gen",
            "-q"]
    run_tool("build", *args, check=True)
    proc = subprocess.run([sys.executable, "-c", REBUILD_PROBE, str(ROOT / "tools"),
                           json.dumps(["numpy", "jinja2", "plotly.basedatatypes", "plotly.subplots"]),
                           *map(str, args)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("LOADED ")), None)
    assert line is not None, proc.stdout + proc.stderr
    assert json.loads(line[len("LOADED "):]) == [0, []], proc.stderr


@pytest.mark.slow  # a second ingest and builds: --all (CI); test_rebuild_reuses_everything_and_one_new_run_... is quick
def test_a_store_made_again_by_another_ingest_is_not_served_the_last_builds_rows(env):
    """The same files stored again (a store made anew, as by newer ingest code: the same hashes, other derived
    rows): nothing the last build kept of the other store is served (report/cache.py RUN_FINGERPRINTS_SQL)."""
    import duckdb

    tmp, camp, held, db, specs, content = env
    first = build(env)
    other = tmp / "db-again" / "kansoku.duckdb"
    run_tool("ingest", "--db", other, camp, check=True)
    files = "SELECT run_id, file_name, sha256 FROM sources ORDER BY ALL"
    con = duckdb.connect(str(other))
    try:
        with duckdb.connect(str(db), read_only=True) as old:
            assert con.execute(files).fetchall() == old.execute(files).fetchall()  # the same bytes
        con.execute("UPDATE pgbench_summary SET tps = tps * 2")  # derived otherwise
    finally:
        con.close()
    from kansoku.app import build_site as site_build

    again = site_build(other, tmp / "public", spec_dir=specs, generated=tmp / "gen", content=content)
    assert sorted(again.items_computed) == sorted(first.items_computed) and again.items_reused == []
    assert again.runs_computed == first.runs_computed and again.runs_reused == 0
    fresh = site_build(other, tmp / "public-fresh", spec_dir=specs, generated=tmp / "gen-fresh", content=content)
    assert fresh.items_reused == []
    assert {p: h for p, (h, _) in snapshot(tmp / "gen").items()} == \
        {p: h for p, (h, _) in snapshot(tmp / "gen-fresh").items()}
    assert site_files(tmp / "public-fresh") == site_files(tmp / "public")


@pytest.mark.slow  # another batch size: --all (CI); every quick build writes run pages in batches
def test_run_pages_written_in_batches_give_the_same_site(env, monkeypatch):
    """The build computes, writes and drops the run pages a batch of whole conditions at a time;
    batches of two runs (every condition of this campaign a batch of its own, several batches) give the
    generated files and the site of one batch, byte for byte, and no batch holds another's runs."""
    from kansoku.model import condition_key
    from kansoku.report import runs as report_runs

    tmp = env[0]
    one = build(env, "gen-one", "public-one")  # every run page of the report in one batch
    batches = CallLog(tmp / "batches.jsonl")
    real = report_runs._page_batch

    def spy(store, report, chapters, infos, run_ids, conditions, *args):
        batches.append(list(run_ids))
        # a batch is whole conditions: a page's condition (median, min, max) is in the batch that writes it
        assert all(set(conditions[condition_key(infos[r].factors)]) <= set(run_ids) for r in run_ids)
        return real(store, report, chapters, infos, run_ids, conditions, *args)

    monkeypatch.setattr(report_runs, "RUN_PAGE_BATCH", 2)
    monkeypatch.setattr(report_runs, "_page_batch", spy)
    small = build(env, "gen-small", "public-small")
    batches = batches.read()
    assert len(batches) > 2 and max(map(len, batches)) < one.runs_computed
    assert sorted(r for b in batches for r in b) == sorted(set(r for b in batches for r in b))  # each run once
    assert len({r for b in batches for r in b}) == one.runs_computed == small.runs_computed
    assert small.files_written == one.files_written
    gen_one, gen_small = snapshot(tmp / "gen-one"), snapshot(tmp / "gen-small")
    assert {p: h for p, (h, _) in gen_small.items()} == {p: h for p, (h, _) in gen_one.items()}
    # a page's data, and its condition's (render/run_pages.py: written once a condition, by the batch holding it)
    assert sum(p.startswith("assets/runs/inc/run-") for p in gen_small) == one.runs_computed
    conditions = [p for p in gen_small if p.startswith("assets/runs/inc/conditions/")]
    assert conditions and len(conditions) == len({tuple(sorted((f, v) for f, v in infos.items() if f != "rep"))
                                                  for infos in _run_factors(tmp / "gen-one")})
    assert site_files(tmp / "public-small") == site_files(tmp / "public-one")


def test_run_pages_rendered_by_hugo_in_batches_give_the_same_site(env, monkeypatch):
    """Beyond page_reuse.RENDER_BATCH run pages to render, Hugo renders the rest of the site with no run page
    read, then the run pages in batches, one run each with only its batch's run pages read: the site is the one
    a single run writes, byte for byte, every page by one run; a rebuild reuses every run page."""
    from kansoku.render import hugo, page_reuse

    tmp = env[0]
    one = build(env, "gen-one", "public-one")
    calls = CallLog(tmp / "hugo.jsonl")
    real = hugo._hugo

    def spy(site_root, cfgs, out, gen, content, segments, few):
        mounted = json.loads(Path(cfgs[0]).read_text(encoding="utf-8"))["module"]["mounts"]
        calls.append({"segments": segments, "files": [m.get("files") for m in mounted if m["target"] == "content"]})
        return real(site_root, cfgs, out, gen, content, segments, few)

    monkeypatch.setattr(hugo, "_hugo", spy)
    monkeypatch.setattr(page_reuse, "RENDER_BATCH", max(2, one.run_pages_rendered // 3))
    batched = build(env, "gen-batched", "public-batched")
    runs = calls.read()
    assert len(runs) >= 3 and all(r["segments"] == ["runs"] for r in runs[1:])
    assert ["! reports/inc/runs/*"] in runs[0]["files"]  # the rest of the site read no run page
    assert all(["! reports/*/runs/*"] in r["files"] for r in runs[1:])
    # each batch mounts run pages of its own prefixes (two hexadecimal digits after "run-"), no two the same
    prefixes = [re.findall(r"[0-9a-f]{2}", f[0].split("run-", 1)[1]) for r in runs[1:] for f in r["files"]
                if f and not f[0].startswith("!")]
    assert len(prefixes) == len(runs) - 1 and all(prefixes)
    assert len({p for ps in prefixes for p in ps}) == sum(map(len, prefixes))
    assert batched.pages == one.pages and batched.run_pages_rendered == one.run_pages_rendered
    assert site_files(tmp / "public-batched") == site_files(tmp / "public-one")
    calls.clear()
    again = build(env, "gen-batched", "public-batched")
    assert again.run_pages_reused == one.run_pages_rendered and again.run_pages_rendered == 0
    assert len(calls.read()) == 1 and site_files(tmp / "public-batched") == site_files(tmp / "public-one")


def test_every_runs_seconds_made_a_chunk_of_runs_at_a_time_are_the_whole_statements(env, monkeypatch):
    """The temporary table of every run's seconds (report/runs.py SERIES_SECONDS_TABLE) is filled SERIES_CHUNK
    runs a statement, so its memory does not grow with the runs: chunks of two runs give each run the series
    rows one statement over every run gives."""
    from kansoku.report import runs as report_runs
    from kansoku.store.db import Store, open_store

    db = env[3]
    whole_store = open_store(db, read_only=True)
    run_ids = sorted(r for (r,) in whole_store.query("SELECT run_id FROM runs"))
    whole = report_runs._batch_series(whole_store, run_ids)
    whole_store.close()
    statements = []
    real = Store.temp_table

    def spy(self, name, sql, params=None, append=False):
        statements.append((name, len(params[0]), append))
        return real(self, name, sql, params, append)

    monkeypatch.setattr(Store, "temp_table", spy)
    monkeypatch.setattr(report_runs, "SERIES_CHUNK", 2)
    store = open_store(db, read_only=True)
    chunked = {r: row for batch in (run_ids[:3], run_ids[3:]) for r, row in report_runs._batch_series(store, batch).items()}
    store.close()
    assert len(run_ids) > 4 and len(statements) == (len(run_ids) + 1) // 2
    assert statements[0][2] is False and all(append for _, _, append in statements[1:])
    assert whole and chunked == whole


def _run_factors(gen: Path) -> list[dict]:
    import json

    rep = json.loads((gen / "data" / "reports" / "inc.json").read_text(encoding="utf-8"))
    return [info["factors"] for info in rep["runs"].values()]


def test_a_changed_condition_file_renders_its_pages_again(env):
    """render/page_reuse.py: what the pages of a condition share is one file (render/run_pages.py
    condition_json: its runs, its metrics' labels), which a page's fingerprint covers: when it changes, the
    condition's pages are rendered again (and show the change), the other run pages are taken as they were."""
    import json

    tmp = env[0]
    gen, public = tmp / "gen", tmp / "public"
    first = build(env)
    assert first.run_pages_rendered > 0
    files = sorted((gen / "assets" / "runs" / "inc" / "conditions").glob("*.json"))
    assert len(files) >= 2
    pages = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (gen / "assets" / "runs" / "inc").glob("*.json")}
    mine = sorted(a for a, d in pages.items() if d["cond"] == files[0].stem)
    assert mine and len(mine) < len(pages)
    d = json.loads(files[0].read_text(encoding="utf-8"))
    assert d["labels"]["en"]["tps"] == "TPS" and [r["anchor"] for r in d["runs"]] == sorted(
        mine, key=lambda a: [r["anchor"] for r in d["runs"]].index(a))
    d["labels"]["en"]["tps"] = "TPS, shared"
    files[0].write_text(json.dumps(d, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    again = build(env)  # (the file is kept as it is: its pages' keys did not change)
    assert again.run_pages_rendered == len(mine)
    assert again.run_pages_reused == len(pages) - len(mine)
    for a in pages:
        html = (public / "en" / "reports" / "inc" / "runs" / f"{a}.html").read_text(encoding="utf-8")
        assert ('<th scope="row">TPS, shared</th>' in html) == (a in mine), a


def test_an_item_that_starts_using_one_run_of_a_condition_shows_on_that_runs_page(env):
    """render/run_pages.py: a condition's shared file holds each of its runs' uses, so it is kept only while none
    of its pages' keys changed (condition_file_key). A new table that uses one run of a condition (its ``rep``)
    changes that run's key alone; kept under another page's key, the file would still hold the run's old uses
    and its page would name a set the file does not have."""
    import json

    tmp, camp, held, db, specs, content = env
    gen, public = tmp / "gen", tmp / "public"
    build(env)
    runs_dir = gen / "assets" / "runs" / "inc"
    cond = next(json.loads(f.read_text(encoding="utf-8")) for f in sorted((runs_dir / "conditions").glob("*.json"))
                if len(json.loads(f.read_text(encoding="utf-8"))["runs"]) >= 2)
    least = min(r["anchor"] for r in cond["runs"])
    other = next(r for r in cond["runs"] if r["anchor"] != least)
    factors = json.loads((runs_dir / f"{other['anchor']}.json").read_text(encoding="utf-8"))["factor_list"]
    where = {f["name"]["en"]: f["value"]["en"] for f in factors}
    assert "Repetition" in where, where
    spec = specs / "inc.toml"
    spec.write_text(SPEC + f"""
[[chapter.table]]
id = "one-rep"
caption = {{ ja = "一回分", en = "One repetition" }}
metric = "tps"
where = {{ rep = "{where['Repetition']}" }}
rows = "clients"
""", encoding="utf-8")
    build(env)
    for anchor, uses in ((other["anchor"], True), (least, False)):
        html = (public / "en" / "reports" / "inc" / "runs" / f"{anchor}.html").read_text(encoding="utf-8")
        assert ("#table-one-rep" in html) == uses, anchor  # the new table, named by its label and link


@pytest.mark.slow  # another caption edit: --all (CI); test_run_pages_are_taken_whole_... edits one and is quick
def test_a_changed_spec_item_recomputes_that_item_only(env):
    tmp, camp, held, db, specs, content = env
    assert build(env).whole_queries > 0
    assert build(env).whole_queries == 0  # every item reused: its kept rows are kept with it
    spec = specs / "inc.toml"
    spec.write_text(SPEC.replace('id = "update"\ncaption = { ja = "更新系", en = "Update" }',
                                 'id = "update"\ncaption = { ja = "更新系 (改)", en = "Update (revised)" }'),
                    encoding="utf-8")
    res = build(env)
    # a caption is shown as written: the table is taken from the cache with it, nothing computed
    assert res.items_computed == [] and "inc/update" in res.items_reused
    assert res.run_sets_computed == []  # the runs are those of the last build: nothing said of them again
    # a run page names the tables using it, not their captions: none is rendered again, the report's are
    assert res.run_pages_rendered == 0 and res.reports_pages_reused == []
    chapter = (tmp / "public" / "en" / "reports" / "inc" / "a" / "index.html").read_text(encoding="utf-8")
    assert "Update (revised)" in chapter
    ja = (tmp / "public" / "ja" / "reports" / "inc" / "a" / "index.html").read_text(encoding="utf-8")
    assert "更新系 (改)" in ja
    # what it computes edited: the table alone is computed again, from the rows kept of each run
    spec.write_text(spec.read_text(encoding="utf-8").replace(
        'id = "update"\ncaption = { ja = "更新系 (改)", en = "Update (revised)" }\nmetric = "tps"\n',
        'id = "update"\ncaption = { ja = "更新系 (改)", en = "Update (revised)" }\nmetric = "tps"\n'
        'digits = { default = 3 }\n'), encoding="utf-8")
    res = build(env)
    assert res.items_computed == ["inc/update"]
    assert res.whole_queries == 0
    assert res.run_pages_rendered == 0


def test_run_pages_are_taken_whole_while_their_inputs_hold_and_made_when_one_changes(env, monkeypatch):
    """A caption edited leaves every run page's inputs as they were: the build takes the report's run pages
    whole (report/runs.py run_pages_key), making and checking none of them one by one, nor encoding the run
    records again (render/records_cache.py), and its generated files and site are a build from scratch's. A
    page's file gone, or one new run, and the pages are made again."""
    from kansoku.render import hugo
    from kansoku.report import runs

    tmp, camp, held, db, specs, content = env
    gen = tmp / "gen"
    first = build(env)
    assert first.run_pages_whole == []  # (no build before)
    batches = CallLog(tmp / "batches.jsonl")
    real_batch = runs._page_batch

    def spy(store, report, uses, infos, run_ids, *args, **kwargs):
        batches.append(run_ids)
        return real_batch(store, report, uses, infos, run_ids, *args, **kwargs)

    monkeypatch.setattr(runs, "_page_batch", spy)
    records = CallLog(tmp / "records.jsonl")  # the report's run records encoded (render/records_cache.py)
    real_runs_data = hugo.runs_data

    def runs_data_spy(rep, *args):
        records.append(rep.id)
        return real_runs_data(rep, *args)

    monkeypatch.setattr(hugo, "runs_data", runs_data_spy)
    spec = specs / "inc.toml"
    spec.write_text(SPEC.replace('caption = { ja = "参照系", en = "Read" }\nmetric',
                                 'caption = { ja = "参照系 (改)", en = "Read (revised)" }\nmetric', 1),
                    encoding="utf-8")
    edited = build(env)
    assert edited.items_computed == [] and "inc/read" in edited.items_reused  # (a caption: nothing to compute)
    assert edited.whole_queries == 0
    assert edited.run_sets_computed == [] and edited.reports_pages_reused == []  # the report's pages rendered
    chapter = (tmp / "public" / "en" / "reports" / "inc" / "a" / "index.html").read_text(encoding="utf-8")
    assert "Read (revised)" in chapter
    assert edited.run_pages_whole == ["inc"] and batches.read() == []  # no page made, nor looked at
    assert records.read() == []  # the records' page data as the last build made it
    assert edited.runs_reused == first.runs_computed and edited.runs_computed == 0
    assert edited.run_pages_rendered == 0 and edited.files_written > 0  # the report's own files
    fresh = build(env, "gen-fresh", "public-fresh")
    assert {p: h for p, (h, _) in snapshot(gen).items()} == {p: h for p, (h, _) in snapshot(tmp / "gen-fresh").items()}
    assert site_files(tmp / "public") == site_files(tmp / "public-fresh")
    written = json.loads((gen / "build-cache" / "run-page-files.json").read_text(encoding="utf-8"))
    assert written == json.loads((tmp / "gen-fresh" / "build-cache" / "run-page-files.json").read_text(encoding="utf-8"))
    assert fresh.run_pages_whole == [] and batches.read() and records.read() == ["inc"]

    batches.clear()
    again = build(env)  # the pages' cache entries were kept by the build that took them whole
    assert again.run_pages_whole == ["inc"] and batches.read() == []
    data = sorted(p for p in written["files"] if p.startswith("assets/runs/") and "/conditions/" not in p)
    (gen / data[0]).unlink()  # a page's file gone: the pages are looked at one by one, that one written again
    gone = build(env)
    assert gone.run_pages_whole == [] and batches.read() and gone.runs_computed == 0
    assert {p: h for p, (h, _) in snapshot(gen).items()} == {p: h for p, (h, _) in snapshot(tmp / "gen-fresh").items()}

    batches.clear()
    shutil.move(held, camp / "study=scaleup" / HELD_BACK)
    run_tool("ingest", "--db", db, camp / "study=scaleup" / HELD_BACK, check=True)
    records.clear()
    one_more = build(env)  # a new run: the report's pages as a whole are not the last build's
    assert one_more.run_pages_whole == [] and one_more.runs_computed == 1 and records.read() == ["inc"]
    assert sum(len(b) for b in batches.read()) == one_more.runs_reused + 1
    assert build(env).run_pages_whole == ["inc"]


RECORD_CHANGES = [("runs", c) for c in ("origin", "status", "start_time", "citation", "hostname",
                                         "run_toml_sha256", "run_toml")] + \
                 [("sources", c) for c in ("file_name", "size_bytes", "sha256", "tool", "format", "tool_version",
                                           "checked_against", "records_checked")] + [("run_factors", "value")]


def _changed(column: str) -> str:
    """An UPDATE's new value of ``column``: another value of its type, never the one there."""
    if column == "start_time":
        return "coalesce(start_time, TIMESTAMPTZ '2026-01-01') + INTERVAL 1 SECOND"
    if column in ("size_bytes", "records_checked"):
        return f"coalesce({column}, 0) + 1"
    if column == "run_toml":  # (JSON: one key more; the run pages' commands and settings read it)
        return "json_merge_patch(coalesce(run_toml, '{}'), '{\"changed\": 1}')"
    if column == "origin":
        return "CASE origin WHEN 'measured' THEN 'transcribed' ELSE 'measured' END"
    return f"coalesce({column}, '') || '-changed'"


def test_a_run_fingerprint_covers_every_column_of_the_reports_record_of_the_run(ingested, tmp_path):
    """The report's record of a run (report/provenance.py runs_provenance: RunInfo) is taken as the run's
    fingerprint says (a report's run pages taken whole: report/runs.py run_pages_key): a change of any column
    it reads changes that run's fingerprint, and no other run's."""
    import duckdb

    from kansoku.report import provenance
    from kansoku.report.cache import RUN_FINGERPRINTS_SQL

    read = {("runs", c) for c in provenance.RUN_COLUMNS} | {("sources", c) for c in provenance.SOURCE_COLUMNS}
    assert read <= set(RECORD_CHANGES), "a column the record reads is not changed here"
    db = copy_store(ingested[1], tmp_path / "db")
    con = duckdb.connect(str(db))
    before = dict(con.execute(RUN_FINGERPRINTS_SQL).fetchall())
    run = sorted(r for r in before if r)[1]
    for table, column in RECORD_CHANGES:
        con.execute("BEGIN")
        con.execute(f"UPDATE {table} SET {column} = {_changed(column)} WHERE run_id = ?", [run])
        after = dict(con.execute(RUN_FINGERPRINTS_SQL).fetchall())
        con.execute("ROLLBACK")
        assert after[run] != before[run], f"{table}.{column}"
        assert {r: fp for r, fp in after.items() if r != run} == {r: fp for r, fp in before.items() if r != run}
    con.close()


def test_a_run_pages_key_counts_the_reports_record_of_the_run_by_what_its_fingerprint_does_not_cover():
    """report/runs.py _page_inputs: a run page's key does not encode the report's record of the run, whose
    every column the run's fingerprint covers (the test above), but holds what the record is made of beyond
    it: the run's title (the factors that tell the report's runs apart change with the report's runs) and
    where the store keeps the copies of its raw files."""
    import dataclasses

    from kansoku.model import RunInfo, RunPage, SourceFile
    from kansoku.report.runs import _page_inputs

    info = RunInfo("c/rep=1", "measured", "ok", None, None, None, "run-1", factors={"rep": "1"},
                   title={"ja": "1 回目", "en": "run 1"})
    page = RunPage(info=info, factors=[], condition=[])
    base = _page_inputs(page, "/site/data/blobs")
    assert _page_inputs(page, "/elsewhere/blobs") != base
    page.info = dataclasses.replace(info, title={"ja": "8 クライアント, 1 回目", "en": "8 clients, run 1"})
    assert _page_inputs(page, "/site/data/blobs") != base
    page.info = dataclasses.replace(info, sources=[SourceFile("pgbench.log", 10, "ab", "pgbench", "log", None, "10 B")])
    assert _page_inputs(page, "/site/data/blobs") == base  # (its fingerprint's part of the key)


def test_a_run_pages_inputs_from_what_its_condition_shares_are_those_made_of_its_own():
    """report/runs.py: the runs behind the same cells share one use (_uses), and a batch's pages share their factor
    labels; _page_inputs encodes each shared item once (``texts``). Each page's inputs are still the text of its
    own factors and uses: runs behind other cells (or no cell) get theirs."""
    import types

    from kansoku.model import RunInfo, RunPage
    from kansoku.report.runs import _ItemUse, _page_inputs, _uses

    def words(text):
        return {"ja": text, "en": text}

    a, b = words("8 × TPS"), words("16 × TPS")
    table = types.SimpleNamespace(id="t1", label=words("表 1.1"))
    figure = types.SimpleNamespace(id="f1", label=words("図 1.1"))
    runs = [f"c/rep={i}" for i in range(6)]
    cells = {runs[0]: [a], runs[1]: [a], runs[2]: [b], runs[3]: [b, a], runs[4]: [a, b]}
    index = [_ItemUse("table", "ch1", table, set(runs), cells), _ItemUse("figure", "ch1", figure, set(runs[:3]), {})]
    clients = (words("クライアント数"), words("8"))
    pages = {r: RunPage(info=RunInfo(r, "measured", "ok", None, None, None, f"run-{i}", factors={"rep": str(i)},
                                     title=words(f"run {i}")),
                        factors=[clients, (words("rep"), words(str(i)))], condition=[])
             for i, r in enumerate(runs)}
    _uses(index, pages)
    assert pages[runs[0]].uses[0] is pages[runs[1]].uses[0] and pages[runs[0]].uses[1] is pages[runs[2]].uses[1]
    texts: dict = {}
    got = {r: _page_inputs(page, "/blobs", texts) for r, page in pages.items()}
    assert got == {r: _page_inputs(page, "/blobs") for r, page in pages.items()}
    assert len({g.split('"uses": ')[1] for g in got.values()}) == 5  # (runs 0 and 1: the same cell and items)
    assert len(texts) == 1 + 6 + 6  # the factor all share, each run's repetition, each distinct use


def test_prose_edited_renders_its_reports_pages_and_no_run_page(env):
    """A sentence written into a report's chapter changes that chapter's page; the run pages (which show other
    pages' titles, never their text) are taken from the current site, and the site is a fresh build's."""
    tmp, camp, held, db, specs, content = env
    build(env)
    page = content / "reports" / "inc" / "a.en.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Chapter A\n---\n\nA first sentence.\n", encoding="utf-8")
    build(env)
    page.write_text("---\ntitle: Chapter A\n---\n\nA second sentence, edited.\n", encoding="utf-8")
    res = build(env)
    assert res.run_pages_rendered == 0 and res.run_pages_reused > 0 and res.reports_pages_reused == []
    chapter = (tmp / "public" / "en" / "reports" / "inc" / "a" / "index.html").read_text(encoding="utf-8")
    assert "A second sentence, edited." in chapter
    build(env, "gen-fresh", "public-fresh")
    assert site_files(tmp / "public-fresh") == site_files(tmp / "public")
    page.write_text("---\ntitle: Chapter A, renamed\n---\n\nA second sentence, edited.\n", encoding="utf-8")
    assert build(env).run_pages_rendered > 0  # a title a run page shows


@pytest.mark.slow  # builds again: --all (CI); test_rebuild_reuses_everything_and_one_new_run_... is quick
def test_what_a_report_says_of_its_runs_is_recomputed_when_one_is_added(env):
    """Command blocks, machines, the environment appendix and whether the methods page says how steady state
    was found (every run's steady state computed) are kept with their runs' fingerprints: a rebuild reuses them,
    a new run makes them anew (and they then list it)."""
    tmp, camp, held, db, specs, content = env
    first = build(env)
    blocks = ["inc/commands", "inc/environment", "inc/machines", "inc/steady"]
    assert sorted(first.run_sets_computed) == blocks
    assert build(env).run_sets_computed == []
    sources = tmp / "public" / "en" / "reports" / "inc" / "sources" / "index.html"
    assert HELD_BACK not in sources.read_text(encoding="utf-8")
    shutil.move(held, camp / "study=scaleup" / HELD_BACK)
    run_tool("ingest", "--db", db, camp / "study=scaleup" / HELD_BACK, check=True)
    assert sorted(build(env).run_sets_computed) == blocks
    assert HELD_BACK in sources.read_text(encoding="utf-8")


@pytest.mark.slow  # spies on the per-run steps: --all (CI); test_rebuild_reuses_everything_and_one_new_run_... is quick
def test_a_new_run_computes_its_own_part_of_what_a_report_says_of_its_runs_alone(env, monkeypatch):
    """What a report says of its runs as a whole is made of each run's part (its command line read and parsed,
    its environment's captures: report/cache.py ``ItemCache.per_run``) kept by the run's fingerprint: after
    one new run, the rebuild reads that run's parts alone from the store and combines them with the kept
    ones, into what a build from scratch makes."""
    from kansoku.analysis import commands
    from kansoku.report import environment

    tmp, camp, held, db, specs, content = env
    calls = CallLog(tmp / "per-run.jsonl")

    def spy(module, function, name):
        real = getattr(module, function)

        def spied(store, run_ids):
            calls.append([name, list(run_ids)])
            return real(store, run_ids)
        monkeypatch.setattr(module, function, spied)

    spy(commands, "run_commands", "commands")
    spy(environment, "run_environments", "environment")
    first = build(env)
    every = first.per_run_computed["commands"]
    assert len(every) > 1 and first.per_run_computed == {"commands": every, "environment": every}
    assert sorted(calls.read()) == [["commands", every], ["environment", every]]  # every run, once
    again = build(env)  # nothing changed: the blocks as kept; the runs' parts they were made of stay kept
    assert again.run_sets_computed == [] and again.per_run_computed == {}
    calls.clear()
    shutil.move(held, camp / "study=scaleup" / HELD_BACK)
    run_tool("ingest", "--db", db, camp / "study=scaleup" / HELD_BACK, check=True)
    new_run = "study=scaleup/" + HELD_BACK
    after_one = build(env)
    assert {"inc/commands", "inc/environment"} <= set(after_one.run_sets_computed)  # made anew: they count it
    assert after_one.per_run_computed == {"commands": [new_run], "environment": [new_run]}
    assert sorted(calls.read()) == [["commands", [new_run]], ["environment", [new_run]]]  # the new run alone
    now = snapshot(tmp / "gen")

    fresh = build(env, "gen-fresh", "public-fresh")
    assert fresh.per_run_computed["environment"] == sorted(every + [new_run])  # a new cache: every run read
    scratch = snapshot(tmp / "gen-fresh")
    assert {p: h for p, (h, _) in scratch.items()} == {p: h for p, (h, _) in now.items()}
    assert site_files(tmp / "public-fresh") == site_files(tmp / "public")


def test_a_runs_part_is_computed_again_when_what_it_reads_beyond_its_fingerprint_changes(env):
    """``ItemCache.per_run`` keys each run's part by its fingerprint and ``extra`` (what the part reads that the
    fingerprint does not cover: the environment's ``run_hosts``): a run whose extra changed is computed again,
    alone; a run the store does not have is computed each time."""
    from kansoku.report.cache import ItemCache
    from kansoku.store.db import open_store

    tmp, camp, held, db, specs, content = env
    store = open_store(db, read_only=True)
    try:
        runs = sorted(r for r in ItemCache(None).run_fingerprints(store) if r is not None)
        asked: list[list[str]] = []

        def parts(extra: dict[str, str], ids: list[str]) -> dict:
            cache = ItemCache(tmp / "items")
            got = cache.per_run(store, "part", ids, lambda rs: asked.append(rs) or {r: ("of", r) for r in rs}, extra)
            cache.flush()
            assert got == {r: ("of", r) for r in ids}
            return got

        extra = {r: "a" for r in runs}
        parts(extra, runs)
        parts(extra, runs)
        parts({**extra, runs[1]: "b"}, runs)
        parts({**extra, runs[1]: "b"}, runs + ["no/such/run"])
        assert asked == [runs, [runs[1]], ["no/such/run"]]
    finally:
        store.close()


def test_distinguishing_factor_values_match_the_pairwise_rule():
    from kansoku.report.environment import distinguishing

    def pairwise(runs, all_runs, factors):  # the rule, written out run against run
        shared = None
        for r in runs:
            fs = set(factors.get(r, {}).items())
            shared = fs if shared is None else shared & fs
        others = [set(factors.get(r, {}).items()) for r in all_runs if r not in runs]
        picked = sorted(fv for fv in (shared or set()) if not any(fv in o for o in others))
        return ", ".join(f"{f}={v}" for f, v in picked[:2])

    rng = random.Random(7)
    for _ in range(200):
        all_runs = [f"r{i}" for i in range(rng.randint(1, 12))]
        factors = {r: {f: rng.choice("abc") for f in ("config", "clients", "rep") if rng.random() < 0.9}
                   for r in all_runs}
        runs = rng.sample(all_runs, rng.randint(1, len(all_runs)))
        assert distinguishing(runs, all_runs, factors) == pairwise(runs, all_runs, factors)


def _serve(public: Path):
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(public)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


@pytest.mark.browser
def test_long_run_lists_load_on_demand_and_the_sources_page_comes_in_parts(env, monkeypatch):
    """Thresholds lowered so that the fixture's runs exceed them: a page holds at most the limit."""
    import json

    from kansoku.render import hugo

    monkeypatch.setattr(hugo, "SOURCES_PER_PAGE", 4)
    monkeypatch.setattr(hugo, "PROV_INLINE_RUNS", 3)
    tmp = env[0]
    build(env)
    rep = json.loads((tmp / "gen" / "data" / "reports" / "inc.json").read_text(encoding="utf-8"))
    n_runs = len(rep["runs"])
    assert n_runs > 8
    # the sources page in parts: every run on exactly one part, at least 4 a part but the last (whole
    # conditions), at most 8
    public = tmp / "public"
    parts = [public / "en/reports/inc/sources/index.html"] + sorted(
        public.glob("en/reports/inc/sources-*/index.html"), key=lambda p: int(p.parent.name.split("-")[1]))
    assert len(parts) >= 2
    shown = [re.findall(r'<section class="run" id="([^"]+)"', p.read_text(encoding="utf-8")) for p in parts]
    assert all(4 <= len(s) <= 8 for s in shown[:-1]) and 0 < len(shown[-1]) <= 8, [len(s) for s in shown]
    assert sorted(a for s in shown for a in s) == sorted(r["anchor"] for r in rep["runs"].values())
    # part 1 forwards a run's anchor to its part
    first = parts[0].read_text(encoding="utf-8")
    part_of = json.loads(re.search(r'id="sources-part-of">(.*?)</script>', first, re.S).group(1))
    assert part_of["part_of"] == {a: k for k, s in enumerate(shown[1:], 2) for a in s}
    assert part_of["urls"] == [f"/en/reports/inc/sources{'' if k == 1 else f'-{k}'}/" for k in range(1, len(parts) + 1)]
    # a long run list is a file of its own, loaded when the panel opens
    table = rep["chapters"][0]["tables"]["read"]
    assert table["prov"]["groups"] == [] and table["prov"]["src"] == "/prov/inc/table-read.json"
    prov = json.loads((public / "prov/inc/table-read.json").read_text(encoding="utf-8"))
    assert sum(len(g["runs"]) for g in prov["groups"]) == prov["runs"] == len(table["runs"])
    chapter = (public / "en/reports/inc/a/index.html").read_text(encoding="utf-8")
    assert chapter.count("data-prov-src=") == 4
    assert not any(f'title="{r}"' in chapter for r in table["runs"])  # no run link in the page itself

    from playwright.sync_api import sync_playwright

    srv, base = _serve(public)
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = b.new_page()
            page.goto(base + "/en/reports/inc/a/")
            panel = page.locator("#table-read details.provenance")
            panel.locator("summary").click()
            page.wait_for_function("document.querySelectorAll('#table-read .prov-table .reps a').length > 0")
            links = panel.locator(".reps a")
            assert links.count() == len(table["runs"])
            hrefs = {links.nth(i).get_attribute("href") for i in range(links.count())}
            assert all(re.fullmatch(r"/en/reports/inc/runs/run-[0-9a-f]{12}\.html", h) for h in hrefs), hrefs  # run pages
            # a link to a run on part 2 of the sources page lands there
            anchor = shown[1][0]
            page.goto(base + f"/en/reports/inc/sources/#{anchor}")
            page.wait_for_url(re.compile(r"/sources-2/#"))
            assert page.locator(f"#{anchor}").count() == 1
            b.close()
    finally:
        srv.shutdown()


def test_kept_run_pages_are_not_read_back_unless_their_files_must_be_written(env, monkeypatch):
    """A rebuild takes the last build's unchanged run pages by key from the item cache's index
    (report/cache.py ``page_kept``: the key and whether the page has series) without reading them back; a page
    whose generated files are gone is read back whole, and one whose kept entry cannot be read is
    computed again. Either way the generated files are the first build's, byte for byte."""
    import json

    from kansoku.pickle_entries import PickleEntries

    tmp = env[0]
    gen = tmp / "gen"
    first = build(env)
    before = snapshot(gen)
    written = json.loads((gen / "build-cache" / "run-page-files.json").read_text(encoding="utf-8"))
    page_keys = written["files"]
    # each page's condition file, by which a rebuild fingerprints the page without reading its own files
    # (render/page_reuse.py _by_keys)
    assert sorted(written["conds"]) == sorted(f"inc/{p.stem}" for p in (gen / "assets/runs/inc").glob("*.json"))
    assert all(c in page_keys for c in written["conds"].values())
    index = json.loads((gen / "build-cache" / "items" / "run-pages.json").read_text(encoding="utf-8"))
    own = {p: k for p, k in page_keys.items() if "/conditions/" not in p}
    assert sorted(index) == sorted(set(own.values())) and len(index) == first.runs_computed
    assert all(index[own[p]] == (p.replace("assets/runs/", "static/csv/").replace(
        "/inc/", "/inc/runs/")[:-len(".json")] + ".csv" in own) for p in own if p.endswith(".json"))
    # a condition's shared file is listed under a key made of all its pages' keys (render/run_pages.py
    # condition_file_key), no page's own
    conds = {p: k for p, k in page_keys.items() if "/conditions/" in p}
    assert conds and all(k.startswith("cond-") and k not in index for k in conds.values())

    loaded = CallLog(env[0] / "loaded.jsonl")
    real_load = PickleEntries.load

    def spy(self, key):
        loaded.append(key)
        return real_load(self, key)

    monkeypatch.setattr(PickleEntries, "load", spy)
    again = build(env)
    assert not set(loaded.read()) & set(index)  # no kept page read back: their files are as the last build wrote them
    assert again.runs_computed == 0 and again.runs_reused == first.runs_computed
    assert snapshot(gen) == before

    data = sorted(p for p in own if p.startswith("assets/runs/"))  # (pages' own data, not their conditions')
    csvs = sorted(p for p in own if p.startswith("static/csv/"))
    assert len(data) >= 3 and csvs
    (gen / data[0]).unlink()                             # a page's data file gone
    (gen / csvs[-1]).unlink()                            # another page's CSV gone
    (gen / data[1]).unlink()                             # ... and a page whose kept entry cannot be read
    set_cache_entry(gen / "build-cache" / "items", page_keys[data[1]], b"not a pickle")
    loaded.clear()
    third = build(env)
    assert {page_keys[data[0]], page_keys[data[1]], page_keys[csvs[-1]]} <= set(loaded.read())
    assert third.items_computed == [] and third.runs_computed == 0
    assert {p: h for p, (h, _) in snapshot(gen).items()} == {p: h for p, (h, _) in before.items()}
    assert json.loads((gen / "build-cache" / "items" / "run-pages.json").read_text(encoding="utf-8")) == index


def test_the_run_pages_context_holds_other_pages_front_matter_not_their_text(tmp_path):
    """render/page_reuse.py: a run page does not read the data-sources page's parts (sources-N), so a new part (a
    1,001st run) must not make every run page render again; of the other pages it reads the front matter (a
    title it shows, an address it links), never the text."""
    import json
    import shutil

    from kansoku.render import page_reuse

    gen = tmp_path / "gen"
    rep = gen / "content" / "reports" / "r"
    rep.mkdir(parents=True)
    (rep / "c1.en.md").write_text("---\ntitle: Chapter\n---\nchapter\n")
    (rep / "sources.en.md").write_text("+++\ntitle = 'Sources'\n+++\nsources\n")
    (rep / "sources-parts").mkdir()
    (rep / "sources-parts" / "sources-2.en.md").write_text("part 2\n")
    hugo_json = tmp_path / "hugo.json"
    hugo_json.write_text(json.dumps({"module": {"mounts": [{"source": str(gen / "content"), "target": "content"}]}}))
    hugo = shutil.which("hugo")
    before = page_reuse._context(gen, hugo_json, hugo)
    (rep / "sources-parts" / "sources-3.en.md").write_text("part 3\n")
    (rep / "sources-parts" / "sources-2.en.md").write_text("part 2, other runs\n")
    assert page_reuse._context(gen, hugo_json, hugo) == before
    (rep / "sources.en.md").write_text("+++\ntitle = 'Sources'\n+++\nsources, more runs\n")
    (rep / "c1.en.md").write_text("---\ntitle: Chapter\n---\nchapter, edited\n")
    assert page_reuse._context(gen, hugo_json, hugo) == before  # text alone
    (rep / "sources.en.md").write_text("+++\ntitle = 'Data sources'\n+++\nsources, more runs\n")
    assert page_reuse._context(gen, hugo_json, hugo) != before  # the title of a page a run page links to
    (rep / "sources.en.md").write_text("+++\ntitle = 'Sources'\n+++\nsources\n")
    (rep / "c1.en.md").write_text("---\ntitle: Chapter one\n---\nchapter\n")
    assert page_reuse._context(gen, hugo_json, hugo) != before


@pytest.mark.slow  # six builds: --all (CI); test_prose_edited_renders_its_reports_pages_and_no_run_page reuses pages quick
def test_the_data_sources_parts_are_taken_from_the_current_output_when_their_runs_did_not_change(env, monkeypatch):
    """render/page_reuse.py: a data-sources part but the first shows its runs, not the report's tables: after a
    caption edit Hugo renders the report's other pages and takes those parts from the current output; after a
    new run, the parts whose runs changed are rendered again. The site is a build from scratch's each time.
    render/records_cache.py: a part's JSON is made again (its runs' records encoded) only when its runs changed:
    none after a caption edit, the new run's part after a new run."""
    from kansoku.model import RunInfo
    from kansoku.render import hugo

    monkeypatch.setattr(hugo, "SOURCES_PER_PAGE", 4)  # the fixture's runs in several parts
    encoded = CallLog(env[0] / "encoded.jsonl")  # the run records encoded whole (a part's JSON made)
    real_encode = hugo.encode

    def encode_spy(record):
        if isinstance(record, RunInfo):
            encoded.append(record.id)
        return real_encode(record)
    monkeypatch.setattr(hugo, "encode", encode_spy)
    tmp, camp, held, db, specs, content = env

    def layout() -> list[list[str]]:
        data = json.loads((tmp / "gen" / "data" / "reports" / "inc.json").read_text(encoding="utf-8"))
        return hugo.sources_part_runs({rid: r["factors"] for rid, r in data["runs"].items()})
    first = build(env)
    assert first.sources_parts_reused == 0
    parts = sorted((tmp / "public" / "en/reports/inc").glob("sources-*"))
    assert len(parts) >= 3
    before = layout()
    assert sorted(encoded.read()) == sorted(r for part in before for r in part)  # every run, once
    encoded.clear()

    def same_as_fresh(name: str) -> None:
        fresh = build(env, f"gen-{name}", f"public-{name}")
        assert fresh.sources_parts_reused == 0
        assert site_files(tmp / f"public-{name}") == site_files(tmp / "public")

    text = (specs / "inc.toml").read_text(encoding="utf-8")
    recaptioned = text.replace('en = "Read" }', 'en = "Read, again" }', 1)
    assert recaptioned != text
    (specs / "inc.toml").write_text(recaptioned, encoding="utf-8")
    again = build(env)
    assert again.reports_pages_reused == [] and again.sources_parts_reused == len(parts)
    assert encoded.read() == []
    same_as_fresh("recaptioned")

    shutil.move(held, camp / "study=scaleup" / HELD_BACK)
    run_tool("ingest", "--db", db, camp / "study=scaleup" / HELD_BACK, check=True)
    encoded.clear()
    after_one = build(env)
    assert after_one.sources_parts_reused < len(parts)  # (the new run's part, and those after it, rendered)
    changed = [part for part in layout() if part not in before]
    assert len(changed) < len(before) and sorted(encoded.read()) == sorted(r for part in changed for r in part)
    same_as_fresh("one")


OTHER = SPEC.replace('id = "inc"', 'id = "other"').replace("Incremental build", "Other report").split(
    '[[chapter.table]]\nid = "read"')[0] + '''[[chapter.table]]
id = "update"
caption = { ja = "更新系", en = "Update" }
metric = "tps"
where = { workload = "update" }
rows = "clients"
'''


@pytest.mark.slow  # eight builds: --all (CI); test_prose_edited_renders_its_reports_pages_and_no_run_page reuses pages quick
def test_a_report_whose_data_did_not_change_is_taken_from_the_current_output(env):
    """render/page_reuse.py: after one new run, Hugo renders the pages of the reports whose data changed (the
    report showing the run) and takes the other reports' pages from the current output; the site is a build
    from scratch's, byte for byte, each time. A report whose spec changed is rendered again."""
    tmp, camp, held, db, specs, content = env
    (specs / "other.toml").write_text(OTHER, encoding="utf-8")
    first = build(env)
    assert first.reports == ["inc", "other"] and first.reports_pages_reused == []  # no site before
    again = build(env)
    assert again.reports_pages_reused == ["inc", "other"]

    def same_as_fresh(name: str) -> None:
        fresh = build(env, f"gen-{name}", f"public-{name}")
        assert fresh.reports_pages_reused == [] and fresh.run_pages_reused == 0
        assert site_files(tmp / f"public-{name}") == site_files(tmp / "public")

    shutil.move(held, camp / "study=scaleup" / HELD_BACK)
    run_tool("ingest", "--db", db, camp / "study=scaleup" / HELD_BACK, check=True)  # a read run: "inc" shows it
    after_one = build(env)
    assert after_one.reports_pages_reused == ["other"]
    assert after_one.run_pages_rendered == 3  # the new run's and its condition's (their pages list it)
    same_as_fresh("one")

    # another caption in "other": its data changes, not what every page shows of it (its title, its pages)
    (specs / "other.toml").write_text(OTHER.replace('en = "Update"', 'en = "Updates"'), encoding="utf-8")
    recaptioned = build(env)
    assert recaptioned.reports_pages_reused == ["inc"]
    same_as_fresh("recaptioned")
    # another title: shown on every page of the site (the run pages' context), so every report is rendered
    (specs / "other.toml").write_text(OTHER.replace("Other report", "Another title"), encoding="utf-8")
    retitled = build(env)
    assert retitled.reports_pages_reused == [] and retitled.run_pages_reused == 0
    same_as_fresh("retitled")


def test_a_batchs_pages_are_moved_into_the_output_and_a_missing_or_doubled_page_is_a_build_error(tmp_path):
    """publish.move_files: a batch's run pages moved into the output (folders made), a page Hugo did not write
    or one the output already holds a build error naming it."""
    from kansoku.errors import KansokuError
    from kansoku.render import publish

    src, dest = tmp_path / "batch", tmp_path / "out"
    (src / "ja/reports/r/runs").mkdir(parents=True)
    (src / "ja/reports/r/runs/run-ab.html").write_text("page", encoding="utf-8")
    assert publish.move_files(src, dest, ["ja/reports/r/runs/run-ab.html"]) == 1
    assert (dest / "ja/reports/r/runs/run-ab.html").read_text(encoding="utf-8") == "page"
    with pytest.raises(KansokuError, match="run-cd.html: not written"):
        publish.move_files(src, dest, ["ja/reports/r/runs/run-cd.html"])
    (src / "ja/reports/r/runs/run-ab.html").write_text("again", encoding="utf-8")
    with pytest.raises(KansokuError, match="written twice"):
        publish.move_files(src, dest, ["ja/reports/r/runs/run-ab.html"])


def test_unlisted_files_are_removed_but_under_the_directories_kept_whole(tmp_path):
    """render/hugo.py remove_unlisted: a file no build wrote is removed, and a directory it empties; a
    directory kept whole (a report's run pages taken whole: every file in it the last build's) is not walked."""
    from kansoku.render import hugo

    for rel in ("data/a.json", "data/old/b.json", "assets/runs/inc/x.json", "assets/runs/inc/conditions/c.json",
                "assets/runs/other/y.json", "content/c.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}", encoding="utf-8")
    got = hugo.remove_unlisted(tmp_path, {"data/a.json", "content/c.md"}, ("data", "assets", "content"),
                               whole=["assets/runs/inc"])
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["assets/runs/inc/conditions/c.json", "assets/runs/inc/x.json", "content/c.md", "data/a.json"]
    assert got == {"files_removed": 2}
    assert not (tmp_path / "data" / "old").exists() and not (tmp_path / "assets" / "runs" / "other").exists()


def test_the_computation_collects_garbage_less_often_and_restores_the_thresholds(env, monkeypatch):
    """app/build.py fewer_collections: while a build computes its reports, the cyclic collector's thresholds are
    COLLECT_AFTER (its records are freed by their reference counts; the collector's passes over the growing heap
    cost the build time), and the caller's thresholds are back once the build is done, or has failed."""
    import gc

    from kansoku.app import build as app_build

    seen = []
    real = app_build.compute_report

    def spy(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(app_build, "compute_report", spy)
    before = gc.get_threshold()
    assert before != app_build.COLLECT_AFTER
    build(env)
    assert seen and set(seen) == {app_build.COLLECT_AFTER}
    assert gc.get_threshold() == before

    def fails(*args, **kwargs):
        raise RuntimeError("a failed computation")

    monkeypatch.setattr(app_build, "compute_report", fails)
    with pytest.raises(RuntimeError):
        build(env)
    assert gc.get_threshold() == before


def test_a_process_computing_again_takes_the_records_it_made_while_their_key_holds(env):
    """report/build.py kept_records (``kansoku serve`` computes after each edit in one process): after a caption
    edited the report's records of its runs are those the last computation made (their key, report/runs.py
    records_key, is unchanged), and the page data written is the one a fresh process writes; after a new run
    they are made again, the new run among them."""
    from kansoku.report.build import compute_report
    from kansoku.report.cache import ItemCache
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    tmp, camp, held, db, specs, content = env
    cache_dir = tmp / "items"

    def computed():
        store = open_store(db, read_only=True)
        try:
            return compute_report(store, load_report(specs / "inc.toml"), content / "reports",
                                  with_run_pages=False, cache=ItemCache(cache_dir))
        finally:
            store.close()
    first = computed()
    assert first.records_key and len(first.runs) > 1
    spec = specs / "inc.toml"
    spec.write_text(SPEC.replace('en = "Read" }', 'en = "Read, renamed" }', 1), encoding="utf-8")
    again = computed()
    assert again.runs is first.runs and again.records_key == first.records_key
    # the page data is the one a process that made them writes
    build(env, "gen-kept")
    proc = subprocess.run([sys.executable, "-c", (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; from kansoku.app import build_site; "
        "a = [Path(x) for x in sys.argv[2:]]; build_site(a[0], a[1], spec_dir=a[2], generated=a[3], content=a[4])"),
        str(ROOT / "tools"), str(db), str(tmp / "public-fresh"), str(specs), str(tmp / "gen-fresh"), str(content)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    kept = {k: v[0] for k, v in snapshot(tmp / "gen-kept").items()}
    assert kept == {k: v[0] for k, v in snapshot(tmp / "gen-fresh").items()}
    run_tool("ingest", "--db", db, held, check=True)
    after = computed()
    assert after.runs is not first.runs and after.records_key != first.records_key
    assert len(after.runs) == len(first.runs) + 1


def test_a_new_process_reads_the_records_a_build_kept_while_their_key_holds(env, monkeypatch):
    """report/build.py kept_records across processes (each ``kansoku build`` is one): a build keeps the report's
    records of its runs in its item cache as rows (report/runs.py records_rows); the next process, after a caption
    edited, reads them back equal to those made, field by field, without making them; after a new run they are
    made again, the new run among them."""
    from kansoku.report import build as report_build
    from kansoku.report.cache import ItemCache
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    tmp, camp, held, db, specs, content = env
    cache_dir = tmp / "items"
    made = []
    labelled = report_build.labelled_provenance
    monkeypatch.setattr(report_build, "labelled_provenance", lambda *a: made.append(1) or labelled(*a))

    def computed(fresh=True):
        if fresh:
            report_build._RECORDS.clear()  # a process of its own: nothing kept in memory
        store = open_store(db, read_only=True)
        try:
            cache = ItemCache(cache_dir)
            rep = report_build.compute_report(store, load_report(specs / "inc.toml"), content / "reports",
                                              with_run_pages=False, cache=cache)
            cache.flush()
            computed.used = cache.used
            return rep
        finally:
            store.close()
    first = computed()
    entry = first.records_key
    assert entry in computed.used and entry in cache_entries(cache_dir)
    assert made == [1] and first.records_key and len(first.runs) > 1
    assert any(info.sources and info.factor_labels and info.title and info.key for info in first.runs.values())
    spec = specs / "inc.toml"
    spec.write_text(SPEC.replace('en = "Read" }', 'en = "Read, renamed" }', 1), encoding="utf-8")
    again = computed()
    assert made == [1] and again.records_key == first.records_key
    assert list(again.runs) == list(first.runs) and again.runs == first.runs and again.runs is not first.runs
    # a process that computes again (kansoku serve) takes them from memory, and keeps the entry for the next one
    assert computed(fresh=False).runs is again.runs and made == [1] and entry in computed.used
    run_tool("ingest", "--db", db, held, check=True)
    after = computed()
    assert made == [1, 1] and after.records_key != first.records_key
    assert len(after.runs) == len(first.runs) + 1
