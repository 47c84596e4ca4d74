"""Query studies: EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) and psql \\timing output ingested by content;
per statement and per plan node; failures stored as failed with their line, never a zero; bad input refused.

Real files (tests/fixtures/queries/): `tools/collect queries` against PostgreSQL 15 (collect_ok: two statements with
max_parallel_workers_per_gather = 2; collect_failed: a list with a statement the server refuses, repeated twice),
and a plain `psql -At -c "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) …"` after SET commands (explain_plain) and a
psql session with \\timing on (timing).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, one_file_run, ro_con
from kansoku.ingest.detect import detect
from kansoku.ingest.pipeline import ingest

Q = FIXTURES / "queries"


def _warnings(rep) -> list[str]:
    return [w for f in rep.files for w in f.warnings]


def _copy(tmp_path: Path, name: str, src: Path) -> Path:
    d = tmp_path / "runs" / name
    shutil.copytree(src, d)
    return d


def test_formats_are_detected_by_content():
    assert detect(Q / "collect_ok" / "queries-explain.txt").format.name == "explain-json"
    assert detect(Q / "collect_ok" / "queries-timing.txt").format.name == "psql-timing"
    assert detect(Q / "explain_plain" / "explain.json").format.name == "explain-json"
    assert detect(Q / "timing" / "psql-timing.txt").format.name == "psql-timing"
    # the list itself is kept as the study's workload (printed in the method section), not read as a result
    assert detect(Q / "collect_ok" / "queries.sql").format.name == "query-list"


def test_a_collected_query_run(tmp_db, tmp_path):
    rep = ingest([_copy(tmp_path, "ok", Q / "collect_ok")], tmp_db)
    assert rep.ok, rep.errors
    assert {f.format for f in rep.files if f.format} == {"explain-json", "psql-timing", "query-list"}
    con = ro_con(tmp_db)
    st = con.execute("SELECT query, mode, status, elapsed_ms, workers_planned, workers_launched, dominant_node "
                     "FROM query_statements ORDER BY mode, query").fetchall()
    assert [(r[0], r[1], r[2]) for r in st] == [("bybranch", "explain", "ok"), ("count", "explain", "ok"),
                                               ("bybranch", "timing", "ok"), ("count", "timing", "ok")]
    assert all(r[3] > 0 for r in st)
    explain = {r[0]: r for r in st if r[1] == "explain"}
    assert explain["count"][4] == 2 and explain["count"][5] == 2  # parallel workers planned and launched
    # the times as printed: 'Execution Time' of the JSON, 'Time:' of psql
    text = (Q / "collect_ok" / "queries-timing.txt").read_text()
    first = float(text.split("Time: ")[1].split(" ms")[0])
    assert con.execute("SELECT elapsed_ms FROM query_statements WHERE mode = 'timing' AND statement_no = 1"
                       ).fetchone()[0] == first
    # plan nodes: the top node's inclusive time is the plan's total, self times add up to it
    tot = con.execute("SELECT s.elapsed_ms, n.inclusive_ms, (SELECT sum(self_ms) FROM query_plan_nodes m "
                      "WHERE m.query = 'count') FROM query_statements s JOIN query_plan_nodes n USING (query) "
                      "WHERE s.mode = 'explain' AND s.query = 'count' AND n.node_no = 1").fetchone()
    assert tot[1] == pytest.approx(tot[2]) and tot[1] <= tot[0]
    scan = con.execute("SELECT node_type, relation, loops, actual_rows FROM query_plan_nodes WHERE query = 'count' "
                       "AND relation IS NOT NULL").fetchone()
    # rows are printed per loop, rounded (66667 x 3 processes for 200000 rows)
    assert scan == ("Index Only Scan", "pgbench_accounts", 3, 200001)
    # the table's time is the plain run's; the dominant node from the plan
    qt = dict(con.execute("SELECT query, mode FROM query_times").fetchall())
    assert qt == {"count": "timing", "bybranch": "timing"}
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric LIKE 'query%'").fetchall())
    assert m["query_elapsed_ms"] == pytest.approx(sum(r[3] for r in st if r[1] == "timing"))
    assert m["query_workers_launched"] == 2


def test_a_failed_statement_is_stored_as_failed_with_its_line_never_a_zero(tmp_db, tmp_path):
    rep = ingest([_copy(tmp_path, "failed", Q / "collect_failed")], tmp_db)
    assert rep.ok, rep.errors
    warned = [w for w in _warnings(rep) if "failed on the server" in w]
    assert len(warned) == 4 and all("query broken" in w and "nosuchtable" in w for w in warned)
    assert any("queries-timing.txt:6:" in w for w in warned), warned
    con = ro_con(tmp_db)
    failed = con.execute("SELECT mode, repetition, elapsed_ms, error FROM query_statements WHERE status = 'failed' "
                         "ORDER BY ALL").fetchall()
    assert [(r[0], r[1], r[2]) for r in failed] == [("explain", 1, None), ("explain", 2, None), ("timing", 1, None),
                                                   ("timing", 2, None)]
    assert "nosuchtable" in failed[0][3]
    # psql printed 'Time: 0.253 ms' after the error: not stored as the statement's time
    assert "Time: " in (Q / "collect_failed" / "queries-timing.txt").read_text().split("nosuchtable")[2]
    # a run with a failed statement has no total (never a partial sum), the others keep theirs
    m = dict(con.execute("SELECT metric, value FROM run_metrics WHERE metric = 'query_elapsed_ms'").fetchall())
    assert m.get("query_elapsed_ms") is None
    ok = con.execute("SELECT count(*) FROM query_times WHERE elapsed_ms IS NOT NULL").fetchone()[0]
    assert ok == 2
    assert con.execute("SELECT repetitions FROM query_times WHERE query = 'count'").fetchone()[0] == 2


def test_plain_explain_named_by_its_file(tmp_db, tmp_path):
    d = tmp_path / "runs" / "p"
    d.mkdir(parents=True)
    shutil.copy(Q / "explain_plain" / "explain.json", d / "q6.json")
    rep = ingest([d], tmp_db)
    assert rep.ok, rep.errors
    con = ro_con(tmp_db)
    assert con.execute("SELECT query, workers_launched, planning_ms FROM query_statements").fetchone() == ("q6", 2, 0.303)
    dom = con.execute("SELECT node_type, rank FROM query_node_times ORDER BY rank LIMIT 1").fetchone()
    assert dom == ("Aggregate", 1)


def _explain_text() -> str:
    return (Q / "explain_plain" / "explain.json").read_text()


@pytest.mark.parametrize("name, make, line, words", [
    ("cut.json", lambda t: t[: len(t) // 2], None, "cut short"),
    ("noanalyze.json", lambda t: "[\n  {\n    \"Plan\": {\n      \"Node Type\": \"Seq Scan\",\n"
                                  "      \"Total Cost\": 1.0\n    }\n  }\n]\n", 1, "without ANALYZE"),
    ("aligned.json", lambda t: "              QUERY PLAN\n-------------\n [          +\n   {\"Plan\": {\"Node Type\": "
                                "\"Result\"}}+\n ]\n(1 row)\n", 1, "psql -At"),
    ("timing.txt", lambda t: "-- kansoku query=a repetition=1\nTime: 1.5 ms\n-- kansoku query=b repetition=1\n"
                             "-- kansoku query=c repetition=1\nTime: 2.0 ms\n", 3, "a 'Time:' line for query b"),
    ("timing2.txt", lambda t: "Timing is on.\nTime: 1.5 ms\nTime: -2.0 ms\n", 3, "Time: N.NNN ms"),
    # values no tool prints, damaged markers and digits that are not ASCII: refused, never stored or renamed
    ("huge.json", lambda t: re.sub(r'"Execution Time": [0-9.]+', '"Execution Time": 1e300', t), 5, "elapsed_ms"),
    ("huge.txt", lambda t: "Timing is on.\nTime: 1.5 ms\nTime: 100000000000000000000.000 ms\n", 3, "elapsed_ms"),
    ("marker.txt", lambda t: "-- kansoku query=a repetition=1\nTime: 1.5 ms\n-- kansoku query=b repetiton=1\n"
                             "Time: 2.0 ms\n", 3, "a statement marker"),
    ("marker2.txt", lambda t: "-- kansoku query=a repetition=1\nTime: 1.5 ms\n-- kansoXu query=b repetition=1\n"
                              "Time: 2.0 ms\n", 3, "before each timed statement"),
    ("marker3.json", lambda t: "-- kansoku query=a repetition=\uff11\n" + t, 1, "a statement marker"),
    ("fullwidth.txt", lambda t: "Timing is on.\nTime: 1.5 ms\nTime: \uff11\uff12\uff13 ms\n", 3, "Time: N.NNN ms"),
])
def test_bad_input_is_refused_with_file_and_line(tmp_db, tmp_path, name, make, line, words):
    rep = ingest([one_file_run(tmp_path, name, make(_explain_text()))], tmp_db)
    assert not rep.ok, rep.files
    (err,) = rep.errors
    assert name in err and words in err, err
    if line is not None:
        assert f"{name}:{line}:" in err, err


def _plan_with(key: str, nth: int, value: str) -> tuple[str, int]:
    """The example's EXPLAIN JSON with the ``nth`` value of ``key`` replaced by ``value``, and that value's line."""
    text = _explain_text()
    at = [m.start() for m in re.finditer(re.escape(f'"{key}": '), text)][nth - 1]
    return text[:at] + f'"{key}": {value}' + text[text.index(",", at):], text.count("\n", 0, at) + 1


@pytest.mark.parametrize("key, nth, value, words", [
    ("Shared Read Blocks", 2, "1e300", "a count for 'Shared Read Blocks' that fits the store's BIGINT"),
    ("Shared Hit Blocks", 3, "99999999999999999999", "a count for 'Shared Hit Blocks' that fits the store's BIGINT"),
    ("Actual Loops", 2, "1e20", "a count for 'Actual Loops' that fits the store's BIGINT"),
    ("Workers Launched", 1, "99999999999", "a count for 'Workers Launched' that fits the store's INTEGER"),
    ("Actual Rows", 3, "1e19", "'Actual Rows' × 'Actual Loops' that fits the store's BIGINT"),
])
def test_a_plan_count_beyond_the_stores_integer_is_refused_at_its_line(tmp_db, tmp_path, key, nth, value, words):
    """A count no column holds is refused while the file is read, at the line holding it (a plan node keeps no
    line in the store), and nothing of the file is stored."""
    text, line = _plan_with(key, nth, value)
    rep = ingest([one_file_run(tmp_path, "huge.json", text)], tmp_db)
    (err,) = rep.errors
    assert f"huge.json:{line}: expected {words}" in err, err
    assert ro_con(tmp_db).execute("SELECT count(*) FROM query_plan_nodes").fetchone()[0] == 0


def _plan_rows(db: Path) -> tuple[int, int]:
    con = ro_con(db)
    try:
        return con.execute("SELECT (SELECT count(*) FROM query_statements), (SELECT count(*) FROM query_plan_nodes)"
                           ).fetchone()
    finally:
        con.close()


@pytest.mark.quick_sample(2)
@pytest.mark.parametrize("key, nth, value, column", [
    ("Shared Read Blocks", 1, "1e17", "shared_read_blocks"),
    ("Temp Written Blocks", 3, "20000000000000000", "temp_written_blocks"),
    ("Actual Loops", 1, "100000000000000000", "loops"),
    ("Actual Total Time", 3, "1e20", "actual_total_ms"),
    ("Actual Rows", 2, "1e17", "actual_rows"),
])
def test_a_plan_value_outside_its_bounds_is_refused_at_its_line(tmp_db, tmp_path, tool, key, nth, value, column):
    """A value the store's integers hold but no plan prints (1e17 blocks) is refused as the node is read, at the
    line holding it: a plan node keeps no line, so the store's own check named the file alone. Exit 2, and the
    store keeps the run it held."""
    tool("ingest", "--db", tmp_db, _copy(tmp_path, "good", Q / "explain_plain"), check=True)
    before = _plan_rows(tmp_db)
    assert before[1] > 0
    text, line = _plan_with(key, nth, value)
    proc = tool("ingest", "--db", tmp_db, one_file_run(tmp_path, "bounds.json", text))
    assert proc.returncode == 2 and "1 file(s) could not be ingested" in proc.stderr, proc.stderr
    assert f"bounds.json:{line}: expected {column} between 0 and " in proc.stderr, proc.stderr
    assert _plan_rows(tmp_db) == before


def test_a_query_list_error_names_the_list_and_line(tmp_path, tool):
    bad = tmp_path / "q.sql"
    bad.write_text("-- query: a\nSELECT 1;\nSELECT 2\n")
    proc = tool("collect", "queries", "--conninfo", "host=127.0.0.1 port=1", str(bad), cwd=tmp_path)
    assert proc.returncode == 2 and f"{bad}:3: expected the statement to end with ';'" in proc.stderr, proc.stderr
    bad.write_text("SELECT 1;\n\\timing on\n")
    proc = tool("collect", "queries", "--conninfo", "host=127.0.0.1 port=1", str(bad), cwd=tmp_path)
    assert proc.returncode == 2 and f"{bad}:2: expected an SQL statement" in proc.stderr, proc.stderr


def test_the_collect_script_maps_errors_to_the_list():
    from kansoku.collect.queries import Statement, script

    sts = [Statement("a", "SELECT 1;", 2), Statement("b", "SELECT\n  2;", 4)]
    text, where = script(sts, "timing", 2, [("work_mem", "64MB")], "random", 7)
    lines = text.split("\n")
    for no, src in where.items():
        assert lines[no - 1].strip() in ("SELECT 1;", "SELECT", "2;")
        assert src in (2, 4, 5)
    assert text.count("-- kansoku query=b") == 2 and "SET work_mem = E'64MB';" in text and "\\timing on" in text
    ex, _ = script(sts, "explain", 1, [], "listed", 1)
    assert "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT 1;" in ex and "\\o /dev/null" not in ex


def test_a_query_studys_statement_list_is_printed_in_its_method_section(example_db):
    """The parallel-query chapter's commands block holds the statement list its runs used, byte for byte, as a
    pgbench chapter holds its script."""
    from conftest import ROOT, computed_report

    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    ch = next(c for c in rep.chapters if c.id == "parallel")
    (block,) = ch.commands
    (script,) = block.scripts
    assert script.text == (ROOT / "data" / "runs" / "example" / "queries" / "parallel.sql").read_text()
    assert script.runs == block.runs == 15 and script.name == "queries/parallel.sql"


def test_a_statement_list_with_a_psql_meta_command_is_refused_at_ingest_with_its_line(tmp_path):
    from kansoku.errors import ParseError
    from kansoku.parsers.queries import statement_list

    f = tmp_path / "queries.sql"
    f.write_text("-- query: a\nSELECT 1;\n\n-- query: b\n\\! touch pwned\n", encoding="utf-8")
    from sys_helpers import parse

    with pytest.raises(ParseError) as exc:
        parse("query-list", f)
    assert exc.value.line == 5 and "meta-command" in str(exc.value)
    assert statement_list.statements("-- query: a\nSELECT 1;\n")[0].id == "a"


def test_a_query_table_shows_a_plan_node_column_only_for_runs_with_plans(example_db):
    """The parallel-query study ran EXPLAIN ANALYZE: its table ends with the dominant plan node; the partitioning
    study timed its statements alone (psql \\timing): no column of dashes."""
    from conftest import ROOT, computed_report

    rep = computed_report(example_db, ROOT / "data" / "reports" / "example.toml")
    tables = {t.id: t for ch in rep.chapters for t in ch.tables.values()}
    kinds = {tid: [c.kind for c in tables[tid].columns] for tid in ("parallel-times", "partition-times")}
    assert kinds["parallel-times"][-1] == "note"
    assert "note" not in kinds["partition-times"]
    assert all(row[-1].kind == "note" and row[-1].text["en"] != "—" for row in tables["parallel-times"].rows)


@pytest.mark.parametrize("sql, refused", [
    ("CREATE FUNCTION f() RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n  SELECT 1;\nEND;\n", True),
    ("create or replace procedure p() language sql\nbegin atomic\n  insert into t values (1);\nend;\n", True),
    ("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;\n", False),
    ("BEGIN;\n", False),
    ("SELECT 'begin' AS begin_ FROM t;\n", False),
])
def test_a_function_body_psql_versions_split_differently_is_refused(sql, refused):
    """psql 14 and later read CREATE FUNCTION ... BEGIN ATOMIC ... END as one statement, older ones end it at
    the first ';': a list holding one would not be what psql runs, whichever runs it (a dollar-quoted body is
    read alike by all)."""
    from kansoku.parsers.queries import statement_list

    text = "-- query: q1\n" + sql
    if refused:
        with pytest.raises(statement_list.QueryListError) as ei:
            statement_list.statements(text)
        assert ei.value.line == 3 and "BEGIN in a function body" in str(ei.value), str(ei.value)
    else:
        assert [s.id for s in statement_list.statements(text)] == ["q1"]
