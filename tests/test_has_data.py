"""The runs a CPU or disk chart can draw, asked of the samples without the pivot (the ``cpu`` and
``disk`` views' GROUP BY of every sys_metrics row), are the runs the views give, on the README's example and on
real and generated sysstat/iostat/vmstat files of the corpus (runs without a window among them); and a
connection holding the views as tables (a first build's, report/runs.py share_samples) reads those, made by
statements of their own (parsers.whole_views) that give the views' rows."""

from __future__ import annotations

import math

import pytest

from conftest import run_tool
from kansoku import parsers
from kansoku.analysis.charts import _select as c
from kansoku.analysis.charts.activity import DISK_HAS_DATA
from kansoku.analysis.charts.system import CPU_HAS_DATA
from kansoku.report.runs import SHARED_METRIC_VIEWS
from kansoku.store.db import open_store

CORPUS_INPUTS = ("real/study=scaleup/workload=read/config=checksums-off/clients=8", "real/study=syscalls",
                 "generated/sar", "generated/iostat", "generated/vmstat")


@pytest.fixture(scope="module")
def corpus_db(corpus, tmp_path_factory):
    db = tmp_path_factory.mktemp("has-data") / "kansoku.duckdb"
    run_tool("ingest", "--db", db, *(corpus / p for p in CORPUS_INPUTS), check=True)
    return db


def _same_runs(db, min_runs: int, windowless: bool) -> None:
    store = open_store(db, read_only=True)
    try:
        assert set(c.WITHOUT_PIVOT) == {CPU_HAS_DATA, DISK_HAS_DATA}
        with_samples = {r for (r,) in store.query("SELECT DISTINCT run_id FROM sys_metrics WHERE run_id IS NOT NULL")}
        for has_data, (view, without) in c.WITHOUT_PIVOT.items():
            assert not store.computed(view)
            pivot = {r for (r,) in store.query(has_data)}
            assert len(pivot) >= min_runs, has_data
            assert {r for (r,) in store.query(without)} == pivot, has_data
            # runs_with_data asks the samples here (no table of the view on this connection): the same runs
            assert c.runs_with_data(store, has_data) == pivot
            if windowless:  # runs with samples but none in a window: the window's condition is checked
                assert pivot < with_samples, has_data
        # a connection holding the views as tables reads them: the same runs
        with store.computed_once(SHARED_METRIC_VIEWS) as held:
            for has_data, (view, _) in c.WITHOUT_PIVOT.items():
                assert held.computed(view)
                assert c.runs_with_data(held, has_data) == {r for (r,) in store.query(has_data)}
    finally:
        store.close()


def test_runs_with_data_without_the_pivot_on_the_example(example_db):
    _same_runs(example_db, 20, False)


@pytest.mark.slow  # the corpus ingested for a second input: --all (CI); the example's test is quick
def test_runs_with_data_without_the_pivot_on_the_corpus(corpus_db):
    _same_runs(corpus_db, 4, True)


def _whole_views_give_the_views_rows(db) -> None:
    """The statements a first build makes SHARED_METRIC_VIEWS with (``parsers.whole_views``, else the view's own,
    run by ``Store.computed_once``/``computed_here``) give the views' rows: the same columns and types; the
    samples the same rows counted with their repeats (EXCEPT ALL both ways); the means and the steady states the
    same rows but for the last bits of an average (DuckDB's parallel sums give the views themselves such
    differences from one statement to the next; a build keeps 12 significant digits)."""
    whole = parsers.whole_views()
    assert set(whole) < set(SHARED_METRIC_VIEWS)
    store = open_store(db, read_only=True)
    try:
        with store.computed_once(SHARED_METRIC_VIEWS) as held:
            db_name = held.query("SELECT current_database()")[0][0]
            for name in SHARED_METRIC_VIEWS:
                assert held.computed(name)
                stored = f'"{db_name}".main."{name}"'
                kept = f'temp.main."{name}"'
                cols = "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {})"
                types = held.query(cols.format(stored))
                assert held.query(cols.format(kept)) == types, name
                n = held.query(f"SELECT count(*) FROM {stored}")[0][0]
                assert n > 0, name
                assert held.query(f"SELECT count(*) FROM {kept}")[0][0] == n, name
                if name in ("cpu_in_run", "disk_in_run"):
                    for a, b in ((kept, stored), (stored, kept)):
                        assert held.query(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})"
                                          )[0][0] == 0, (name, a)
                    continue
                floats = [i for i, (_, t) in enumerate(types) if t == "DOUBLE"]

                def rows(rel):
                    out = {}
                    for r in held.query(f"SELECT * FROM {rel}"):
                        key = tuple(tuple(v) if isinstance(v, list) else v for i, v in enumerate(r) if i not in floats)
                        assert key not in out, (name, key)  # one row a run (a host, role, tool and CPU or device)
                        out[key] = [r[i] for i in floats]
                    return out

                got, want = rows(kept), rows(stored)
                assert got.keys() == want.keys(), name
                for key, values in want.items():
                    for a, b in zip(got[key], values):
                        assert (a is None) == (b is None) and (a is None or math.isclose(a, b, rel_tol=1e-12,
                                                                                          abs_tol=1e-12)), (name, key)
    finally:
        store.close()


def test_the_whole_views_give_the_views_rows_on_the_example(example_db):
    _whole_views_give_the_views_rows(example_db)


@pytest.mark.slow  # the corpus ingested for a second input: --all (CI); the example's test is quick
def test_the_whole_views_give_the_views_rows_on_the_corpus(corpus_db):
    _whole_views_give_the_views_rows(corpus_db)
