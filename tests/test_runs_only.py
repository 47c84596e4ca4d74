"""A few runs' views computed over their own rows (``Store.runs_only``) are the whole
store's views for these runs, on the README's example (real sar, iostat, pgbench logs, server logs)."""

from __future__ import annotations

import pickle

import duckdb
import pytest

from conftest import cache_entries, copy_store, set_cache_entry
from kansoku.store.db import FILE_TABLE, PER_RUN_TABLES, RUN_VIEWS, Store, open_store


def _kept(store, view: str, lits: str, side: str) -> str:
    """The rows of ``view`` for the runs ``lits``, as a connection of ``store`` computes them, kept in the
    in-memory database ``cmp`` (which every connection of the store's DuckDB sees; ``_compare`` attaches it):
    the name of their table, which ``_differ`` compares with another."""
    name = f'cmp."{side}:{view}"'
    store.con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM {view} WHERE run_id IN ({lits})")
    return name


def _compare(store) -> None:
    store.con.execute("ATTACH IF NOT EXISTS ':memory:' AS cmp (READ_WRITE)")  # the store is read-only


def _comparable(store, name: str) -> str:
    """A SELECT of the kept table ``name`` whose rows compare across two computations: floats (alone or in
    lists) to 9 significant digits (DuckDB's parallel sums add in any order)."""
    def rounded(x: str) -> str:
        return (f"CASE WHEN isfinite({x}) AND {x} <> 0 "
                f"THEN round({x}, (8 - floor(log10(abs({x}))))::INTEGER) ELSE {x} END")
    cols = []
    for col, typ in store.query(f"SELECT column_name, column_type FROM (DESCRIBE {name})"):
        q = '"' + col.replace('"', '""') + '"'
        if typ in ("DOUBLE", "FLOAT"):
            cols.append(f"{rounded(q)} AS {q}")
        elif typ in ("DOUBLE[]", "FLOAT[]"):
            cols.append(f"list_transform({q}, x -> {rounded('x')}) AS {q}")
        else:
            cols.append(q)
    return f"SELECT {', '.join(cols)} FROM {name}"


def _differ(store, a: str, b: str) -> int:
    """How many rows of two kept tables of the same columns are not the other's (a multiset difference both
    ways, floats rounded as ``_comparable`` says): 0 when they hold the same rows in any order. DuckDB compares
    them, by the rows' hashes first (the example's sys_metrics_auth alone is hundreds of thousands of rows for
    these runs: as Python tuples or by EXCEPT ALL far slower)."""
    assert store.query(f"SELECT column_name FROM (DESCRIBE {a})") == store.query(
        f"SELECT column_name FROM (DESCRIBE {b})")

    def digest(t: str) -> tuple:  # the rows as a multiset: their count and the sum of their hashes
        return store.query(f"SELECT count(*), sum(hash(r)::HUGEINT) FROM {t} r")[0]
    if digest(a) == digest(b):  # the same rows exactly (most views: stored values, or sums in one order)
        return 0
    qa, qb = _comparable(store, a), _comparable(store, b)  # else the same once rounded (EXCEPT ALL is far dearer)
    return store.query(f"SELECT (SELECT count(*) FROM ({qa} EXCEPT ALL {qb})) + "
                       f"(SELECT count(*) FROM ({qb} EXCEPT ALL {qa}))")[0][0]


def _chosen_runs(store) -> list[str]:
    """One run of each combination of file formats the example has (every kind of run), and a third of the
    others: a set of runs, not all, so that a view reading another run's rows would differ."""
    rows = store.query("SELECT run_id, string_agg(DISTINCT format, ',' ORDER BY format) FROM sources "
                       "WHERE run_id IS NOT NULL GROUP BY run_id ORDER BY run_id")
    seen, out = set(), []
    for i, (rid, kinds) in enumerate(rows):
        if kinds not in seen or i % 3 == 0:
            seen.add(kinds)
            out.append(rid)
    assert 0 < len(out) < len(rows)
    return out


def _run_views(store) -> list[str]:
    """Every view with a run_id column."""
    return [v for (v,) in store.query(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' AND view_name IN "
        "(SELECT table_name FROM duckdb_columns() WHERE column_name = 'run_id') ORDER BY view_name")]


def _same_with_run_views(store, runs: list[str], views: list[str], whole: dict) -> None:
    lits = ", ".join("'" + r.replace("'", "''") + "'" for r in runs)
    with store.runs_only(runs, views=RUN_VIEWS) as own:
        assert set(RUN_VIEWS) <= {t for (t,) in own.query("SELECT table_name FROM duckdb_tables() WHERE temporary")}
        held = {v: _kept(own, v, lits, "held") for v in views}
    for v in views:
        assert _differ(store, held[v], whole[v]) == 0, v


@pytest.mark.slow  # every view twice over the example: --all (CI) runs it; the quick run checks RUN_VIEWS'
def test_every_view_over_the_run_views_tables_is_the_whole_stores(example_db):  # own and the page's metrics, events
    store = open_store(example_db, read_only=True)
    try:
        runs = _chosen_runs(store)
        views = _run_views(store)
        lits = ", ".join("'" + r.replace("'", "''") + "'" for r in runs)
        _compare(store)
        whole = {v: _kept(store, v, lits, "whole") for v in views}
        _same_with_run_views(store, runs, views, whole)
    finally:
        store.close()


def test_the_comparison_sees_a_row_missing_doubled_or_changed(example_db):
    """``_differ``, which the tests below trust: a row missing, doubled, or a float changed in its 4th digit is
    a difference; a float changed in its 12th digit (a sum added in another order) is not."""
    store = open_store(example_db, read_only=True)
    try:
        _compare(store)
        runs = _chosen_runs(store)
        lits = ", ".join("'" + r.replace("'", "''") + "'" for r in runs)
        a = _kept(store, "cpu_in_run_mean", lits, "a")
        assert store.query(f"SELECT count(*) FROM {a}")[0][0] > 10
        assert _differ(store, a, _kept(store, "cpu_in_run_mean", lits, "b")) == 0
        col = store.query(f"SELECT column_name FROM (DESCRIBE {a}) WHERE column_type = 'DOUBLE' LIMIT 1")[0][0]

        def variant(name: str, sql: str) -> int:
            store.con.execute(f'CREATE OR REPLACE TABLE cmp."{name}" AS {sql}')
            return _differ(store, a, f'cmp."{name}"')
        assert variant("missing", f"SELECT * FROM {a} LIMIT (SELECT count(*) - 1 FROM {a})") == 1
        assert variant("doubled", f"SELECT * FROM {a} UNION ALL (SELECT * FROM {a} LIMIT 1)") == 1
        changed = f"SELECT * REPLACE (CASE WHEN rowid = 0 THEN {col} * (1 + {{}}) ELSE {col} END AS {col}) FROM {a}"
        assert variant("far", changed.format("1e-3")) == 2
        assert variant("near", changed.format("1e-12")) == 0
    finally:
        store.close()


@pytest.mark.slow  # every view of some runs: --all (CI); test_a_rebuilds_run_data_is_the_full_builds checks runs_only quick
def test_every_view_of_some_runs_is_the_whole_stores_for_them(example_db):
    store = open_store(example_db, read_only=True)
    try:
        runs = _chosen_runs(store)
        views = _run_views(store)
        assert {"run_metrics", "run_events", "cpu_in_run_mean", "pgbench_steady_state"} <= set(views)
        lits = ", ".join("'" + r.replace("'", "''") + "'" for r in runs)
        _compare(store)
        whole = {v: _kept(store, v, lits, "whole") for v in views}
        with store.runs_only(runs) as own:
            # the shadowed tables hold the runs' rows and no other's
            for table, key in PER_RUN_TABLES.items():
                n_own = own.query(f"SELECT count(*) FROM {table}")[0][0]
                if key == "run_id":
                    n = store.query(f"SELECT count(*) FROM {table} WHERE run_id IN ({lits})")[0][0]
                elif key == "file_no":  # a transaction log's rows, by their file's number
                    n = store.query(f"SELECT count(*) FROM {table} WHERE file_no IN (SELECT file_no FROM "
                                    f"{FILE_TABLE} WHERE source_id IN "
                                    f"(SELECT source_id FROM sources WHERE run_id IN ({lits})))")[0][0]
                else:
                    n = store.query(f"SELECT count(*) FROM {table} WHERE source_id IN "
                                    f"(SELECT source_id FROM sources WHERE run_id IN ({lits}))")[0][0]
                assert n_own == n, table
            assert own.query("SELECT count(*) FROM sys_metrics")[0][0] < store.query(
                "SELECT count(*) FROM sys_metrics")[0][0]
            got = {v: _kept(own, v, lits, "own") for v in views}
        # the example's runs have rows in these views
        assert sum(store.query(f"SELECT count(*) FROM {t}")[0][0] for t in whole.values()) > 1000
        for v in views:
            assert _differ(store, got[v], whole[v]) == 0, v
        # the views a run's page reads many times made tables of these runs' rows once (RUN_VIEWS): the same, and
        # so are the page's metrics and events read over them (every view: the slow test below)
        _same_with_run_views(store, runs, [v for v in views if v in RUN_VIEWS or v in ("run_metrics", "run_events")],
                             whole)
        # the store's own connection is untouched: its tables are the whole store's again
        assert store.query("SELECT count(DISTINCT run_id) FROM sys_metrics")[0][0] > len(runs)
    finally:
        store.close()


def test_a_rebuilds_run_data_is_the_full_builds(example_db):
    """report/runs.py: the metrics, series and events of a few runs (a rebuild, ``few``) are those every
    run's pass gives (a first build)."""
    from kansoku.report import runs as report_runs

    store = open_store(example_db, read_only=True)
    try:
        runs = _chosen_runs(store)[:6]
        few = report_runs._run_data(store, runs, None, {}, True)
        every = report_runs._run_data(store, runs, None, {}, False)
        assert few == every
        assert all(few[0][r] for r in runs) and any(few[1].get(r) for r in runs)
    finally:
        store.close()


def test_per_run_rows_are_kept_by_run_and_never_served_for_a_changed_run(example_db, tmp_path, monkeypatch):
    """report/cache.py ``ItemCache.run_rows``: a per-host metric of every run (``analysis.tables.host_resolved``,
    a query through ``Store.per_run``) is kept by run with the run's fingerprint; a later build takes the rows
    of the runs whose fingerprint is unchanged as kept and computes a changed run's alone (``Store.runs_only``),
    so that the values are the whole query's."""
    from kansoku.analysis import tables
    from kansoku.report.cache import ItemCache
    from kansoku.values import stable

    db = copy_store(example_db, tmp_path / "db")
    items = tmp_path / "items"

    def resolved(cached: bool):
        store = open_store(db, read_only=True)
        try:
            if cached:
                ItemCache(items).keep_run_rows(store)
            return tables.host_resolved(store, "cpu_idle_pct")
        finally:
            store.close()

    truth = resolved(False)
    assert len(truth[0]) > 20
    alone: list[list[str]] = []
    real = Store.runs_only

    def spy(self, run_ids, views=()):
        alone.append(list(run_ids))
        return real(self, run_ids, views)

    monkeypatch.setattr(Store, "runs_only", spy)
    assert resolved(True) == truth and alone == []  # nothing kept yet: the whole query, then kept
    [(entry, kept_bytes)] = cache_entries(items).items()
    kept = pickle.loads(kept_bytes)
    i, run = next((i, r) for i, r in enumerate(truth[0]) if len(kept[r][1]) == 1)
    fp, [row] = kept[run]
    kept[run] = (fp, [(*row[:3], row[3] + 1000.0)])  # not what the store holds: shows what is served as kept
    set_cache_entry(items, entry, pickle.dumps(kept))
    served = resolved(True)
    assert served[1][i] == stable(row[3] + 1000.0) and served[0] == truth[0] and alone == []
    assert served[1][:i] + served[1][i + 1:] == truth[1][:i] + truth[1][i + 1:]
    # the run changes (its fingerprint covers its row of runs): its rows are computed again, over its own
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET status_note = 'changed' WHERE run_id = ?", [run])
    con.close()
    assert resolved(True) == truth and alone == [[run]]
    assert resolved(True) == truth and alone == [[run]]  # and kept with its new fingerprint
