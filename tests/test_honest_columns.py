"""Every number says how it was made: each value column of every table of every report (the
example and the past reports) declares its aggregation, says it in its header and its CSV, and each of its
cells is recomputed here from the store: the runs behind it are every ok run of its condition, their values
are the store's, and the printed value is their median (mean, min, max, the one run) — or, in a column
headed "representative run", the value of the run whose first-metric value is closest to the median."""

from __future__ import annotations

import csv
import math
import re
import statistics
from pathlib import Path

import duckdb
import pytest

from conftest import computed_report

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "data" / "reports").glob("*.toml"))
AGGREGATE = {"median": statistics.median, "mean": statistics.fmean, "min": min, "max": max,
             "single": lambda v: v[0]}


@pytest.fixture(scope="module")
def reports(example_site):
    from kansoku.spec.model import load_report

    db, public = example_site
    return [(load_report(s), computed_report(db, s)) for s in SPECS], db, public  # once per session (conftest)


class _Store:
    """The store's values as the cells' checks ask for them, each read once (a query per cell through the
    run_metrics view took minutes): the runs' own values of a metric, from the documented run_metrics view
    (a metric with a selection, name[sel], from its defining SQL), and the ok runs of each factor value."""

    def __init__(self, con):
        self.con = con
        self._metrics: dict[str, dict[str, float]] = {}
        self._selected: dict[str, dict[str, float]] = {}  # name[sel]: from its defining SQL
        for run_id, metric, value in con.execute("SELECT run_id, metric, value FROM run_metrics").fetchall():
            if value is not None:
                self._metrics.setdefault(metric, {})[run_id] = float(value)
        self._ok_runs: dict[tuple[str, str], set[str]] = {}
        for factor, value, run_id in con.execute(
                "SELECT f.factor, f.value, f.run_id FROM run_factors f JOIN runs r USING (run_id) "
                "WHERE r.status = 'ok'").fetchall():
            self._ok_runs.setdefault((factor, value), set()).add(run_id)

    def values(self, metric: str, run_ids: list[str]) -> dict[str, float]:
        """The runs' own values of a metric (those of ``run_ids`` that have one)."""
        if "[" in metric:
            if metric not in self._selected:
                from kansoku.analysis.tables import metric_sql

                sql, params = metric_sql(metric)
                self._selected[metric] = {r: float(v) for r, v in
                                          self.con.execute(f"SELECT run_id, value FROM {sql}", params).fetchall()
                                          if v is not None}
            by_run = self._selected[metric]
        else:
            by_run = self._metrics.get(metric, {})
        return {r: by_run[r] for r in run_ids if r in by_run}

    def ok_runs(self, factor: str, values: list[str]) -> set[str]:
        """The ok runs whose factor has one of these values."""
        return set().union(*(self._ok_runs.get((factor, v), set()) for v in values))


def _condition_runs(store: _Store, item, coords: dict[str, str]) -> set[str] | None:
    """Every ok run of a plain table's cell: the item's `where` and the cell's row and column values."""
    if item.rows == "metrics":
        return None
    conds = dict(item.where)
    conds[item.rows] = coords["row"]
    if item.columns and "column" in coords:
        conds[item.columns] = coords["column"]
    if item.row_groups and "group" in coords:
        conds[item.row_groups] = coords["group"]
    runs = None
    for factor, want in conds.items():
        if isinstance(want, dict):
            return None  # ranges: left to the table code's own tests
        values = [str(v) for v in (want if isinstance(want, list) else [want])]
        got = store.ok_runs(factor, values)
        runs = got if runs is None else runs & got
    return runs


def test_every_aggregated_cell_is_its_runs_recomputed(reports):
    specs, db, _ = reports
    con = duckdb.connect(str(db), read_only=True)
    store = _Store(con)
    checked = {"median": 0, "representative": 0, "published": 0, "single": 0}
    try:
        for spec, rep in specs:
            items = {it.id: it for ch in spec.chapters for it in ch.tables}
            for ch in rep.chapters:
                for t in ch.tables.values():
                    item = items[t.id]
                    if item.rows in ("functions", "queries"):
                        # rows that are data, not a factor value (a profile's functions, a study's queries): their
                        # cells are recomputed from the raw files by tests/test_example_discussion.py and
                        # tests/test_profile_reports.py
                        continue
                    for i, col in enumerate(t.columns):
                        if col.kind != "value":
                            assert col.aggregation is None, (rep.id, t.id, col.text["en"])
                            continue
                        where = f"{rep.id} {t.label['en']} {col.text['en']!r}"
                        assert col.aggregation in ("median", "mean", "min", "max", "single", "representative",
                                                   "sum", "published"), where
                        assert col.aggregation_text and all(col.aggregation_text.values()), where
                        for row in t.rows:
                            cell = row[i]
                            if cell.value is None or col.aggregation == "sum":
                                continue
                            _check_cell(store, item, t, row, cell, col.aggregation, f"{where} row {row[0].text['en']!r}")
                            checked[col.aggregation if col.aggregation in checked else "median"] += 1
    finally:
        con.close()
    # the example and both past reports were walked: measured medians, one-run tables and transcriptions
    assert checked["median"] > 60 and checked["published"] > 300 and checked["single"] > 0, checked


def _check_cell(store: _Store, item, t, row, cell, aggregation: str, where: str) -> None:
    metric = cell.coords.get("metric")
    assert metric, where
    stored = store.values(metric, cell.runs)
    assert set(stored) == set(cell.runs), f"{where}: runs without a stored value"
    # the build keeps 12 significant digits of a stored value (values.stable: the same bytes build after build)
    assert cell.run_values == pytest.approx(stored, rel=1e-11), where
    if aggregation == "representative":
        # one run: the one whose first-metric value is closest to the first metric's median (ties: run id)
        first = next(c for c in row if c.kind == "value" and c.coords.get("metric") == item.metrics[0]
                     and c.coords.get("column") == cell.coords.get("column"))
        vals = store.values(item.metrics[0], first.runs)
        med = statistics.median(vals.values())
        rep_run = min(vals, key=lambda r: (abs(vals[r] - med), r))
        assert cell.runs == [rep_run] and cell.value == pytest.approx(stored[rep_run], rel=1e-11), where
        return
    values = [stored[r] for r in cell.runs]
    if aggregation == "published":
        assert len(values) == 1 and "transcribed" in cell.flags, where
        expected = values[0]
    else:
        expected = AGGREGATE[aggregation](values)
        if aggregation == "single":
            assert len(values) == 1, where
        condition = _condition_runs(store, item, cell.coords)
        if condition is not None:  # no run of the condition that has the metric is left out, none added
            assert set(cell.runs) == set(store.values(metric, sorted(condition))), where
    assert math.isclose(cell.value, expected, rel_tol=1e-11, abs_tol=1e-11), (where, cell.value, expected)


def test_a_representative_column_says_so_in_header_csv_and_methods(reports, tmp_path):
    """companions = "representative" is allowed, and then its header, its CSV column and the methods page say
    the column is one run's value: never under a label a median would carry."""
    from kansoku.analysis.table_kinds import compute_table
    from kansoku.model import Chapter
    from kansoku.report.methods import method_notes
    from kansoku.spec.model import load_report
    from kansoku.store.db import open_store

    _, db, _ = reports
    text = (ROOT / "data" / "reports" / "example.toml").read_text(encoding="utf-8")
    spec = tmp_path / "example.toml"
    spec.write_text(text.replace('id = "read-tps"\ncaption', 'id = "read-tps"\ncompanions = "representative"\ncaption', 1),
                    encoding="utf-8")
    report = load_report(spec)
    item = next(it for ch in report.chapters for it in ch.tables if it.id == "read-tps")
    assert item.companions == "representative"
    store = open_store(db, read_only=True)
    try:
        table = compute_table(store, report, item).to_model()
    finally:
        store.close()
    aggs = [c.aggregation for c in table.columns if c.kind == "value"]
    assert aggs == ["median", "representative"] * 2
    leaf = [h for row in table.header for h in row if h.kind == "value"]
    assert [h.aggregation["en"] for h in leaf] == ["median", "representative run"] * 2
    assert [h.aggregation["ja"] for h in leaf] == ["中央値", "代表実行の値"] * 2
    head = table.csv_rows("en")[0]
    assert any(h.startswith("Mean CPU %idle") and h.endswith("[representative run]") for h in head), head
    assert any(h.startswith("TPS") and h.endswith("[median]") for h in head), head
    chapter = Chapter(id="scaleup", number=1, title={"ja": "", "en": ""}, tables={table.id: table})
    notes = {n.id: n for n in method_notes(None, [chapter], [])}  # no runs: the store is not asked
    assert "representative run" in notes["aggregate"].text["en"] and "Table 1.1" in notes["aggregate"].text["en"]
    assert "代表実行の値" in notes["aggregate"].text["ja"] and "表 1.1" in notes["aggregate"].text["ja"]


def test_site_headers_and_csv_say_the_aggregation(reports):
    """Table 1.1 on the site: each value column's header carries its aggregation; its CSV names it."""
    _, _, public = reports
    for lang, word in (("en", "median"), ("ja", "中央値")):
        html = (public / lang / "reports/example/scaleup/index.html").read_text(encoding="utf-8")
        fig = re.search(r'<figure class="kansoku-table" id="table-read-tps">(.*?)</figure>', html, re.S).group(1)
        assert fig.count(f'<span class="col-agg">{word}</span>') == 4
        rows = list(csv.reader((public / f"csv/example/read-tps.{lang}.csv").read_text(encoding="utf-8-sig").splitlines()))
        assert sum(h.endswith(f"[{word}]") for h in rows[0]) == 4, rows[0]
