"""The query-study store (docs/formats.md §10): statements timed one by one (EXPLAIN ANALYZE JSON and psql
``\\timing``), their plan nodes, views and per-run metrics. Formats: ``explain.py``, ``timing.py``."""

from __future__ import annotations

from kansoku.parsers.base import MetricDef, ParserModule
from kansoku.parsers.bounds import LONGEST_MS, MOST, Bound, TableBounds

SCHEMA = """
CREATE TABLE IF NOT EXISTS query_statements (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    query VARCHAR NOT NULL,     -- the statement's id: the collect marker's query=, else the file name (EXPLAIN) or '#N'
    repetition INTEGER,         -- the marker's repetition= (1 when there is none)
    statement_no INTEGER,       -- 1-based position in the file
    mode VARCHAR NOT NULL,      -- 'explain' (EXPLAIN ANALYZE, instrumented) | 'timing' (a plain run, psql \\timing)
    status VARCHAR NOT NULL,    -- 'ok' | 'failed' (the server refused it: no time is stored)
    elapsed_ms DOUBLE,          -- explain: 'Execution Time'; timing: psql's 'Time:' (client round trip)
    planning_ms DOUBLE,         -- explain: 'Planning Time'
    workers_planned INTEGER,    -- explain: sum over the plan's Gather / Gather Merge nodes
    workers_launched INTEGER,
    dominant_node VARCHAR,      -- explain: the node type with the most self time ('Parallel Seq Scan')
    dominant_self_ms DOUBLE,    -- its self time (inclusive time minus its children's)
    error VARCHAR,              -- failed: the server's message
    line INTEGER                -- the marker (or the statement's first) line
);
CREATE TABLE IF NOT EXISTS query_plan_nodes (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    query VARCHAR NOT NULL,
    repetition INTEGER,
    statement_no INTEGER,
    node_no INTEGER,            -- pre-order position in the plan, 1 = the top node
    parent_no INTEGER,          -- NULL for the top node
    depth INTEGER,              -- 0 for the top node
    node_type VARCHAR,          -- 'Seq Scan', 'Gather', 'Hash Join', …
    relation VARCHAR,           -- 'Relation Name' of scans
    parallel_aware BOOLEAN,
    workers_planned INTEGER,    -- Gather / Gather Merge only
    workers_launched INTEGER,
    loops BIGINT,               -- 'Actual Loops' (the leader and the workers each count one below a Gather)
    actual_total_ms DOUBLE,     -- 'Actual Total Time' (per loop, as printed)
    inclusive_ms DOUBLE,        -- time * loops, divided by the processes running it below a Gather (wall time)
    self_ms DOUBLE,             -- inclusive_ms minus the children's (never below 0)
    actual_rows BIGINT,         -- 'Actual Rows' * loops (rows are printed per loop, rounded: 66667 x 3 = 200001)
    plan_rows DOUBLE,           -- the planner's estimate
    shared_hit_blocks BIGINT,   -- BUFFERS: inclusive of the children, as printed
    shared_read_blocks BIGINT,
    shared_dirtied_blocks BIGINT,
    shared_written_blocks BIGINT,
    temp_read_blocks BIGINT,
    temp_written_blocks BIGINT
);
"""

TABLES = ["query_statements", "query_plan_nodes"]

# What EXPLAIN ANALYZE and psql's \timing print (parsers/bounds.py): times within a run, counts never negative.
_TIME = "a time within a run"
WORKERS, _WORKERS = 262143, "workers of a server (max_worker_processes is at most 262143)"
BOUNDS = [
    TableBounds("query_statements", bounds=(
        Bound("elapsed_ms", 0, LONGEST_MS, _TIME), Bound("planning_ms", 0, LONGEST_MS, _TIME),
        Bound("dominant_self_ms", 0, LONGEST_MS, _TIME),
        Bound("workers_planned", 0, WORKERS, _WORKERS), Bound("workers_launched", 0, WORKERS, _WORKERS),
    )),
    TableBounds("query_plan_nodes", line=None, at="'query ' || query || ' node ' || node_no", bounds=(
        Bound("actual_total_ms", 0, LONGEST_MS, _TIME), Bound("inclusive_ms", 0, LONGEST_MS, _TIME),
        Bound("self_ms", 0, LONGEST_MS, _TIME),
        Bound("loops", 0, MOST, "a count"), Bound("actual_rows", 0, MOST, "a count"),
        Bound("plan_rows", 0, None, "the planner's estimate of rows"),
        *(Bound(c, 0, MOST, "a count of blocks") for c in (
            "shared_hit_blocks", "shared_read_blocks", "shared_dirtied_blocks", "shared_written_blocks",
            "temp_read_blocks", "temp_written_blocks")),
    )),
]

VIEWS = """
-- Per (run, query, mode): the median over the run's repetitions; NULL when a repetition failed.
CREATE OR REPLACE VIEW query_run_times AS
SELECT run_id, query, mode, count(*) AS repetitions, count(*) FILTER (WHERE status = 'failed') AS failed,
       CASE WHEN bool_and(status = 'ok') THEN median(elapsed_ms) END AS elapsed_ms,
       CASE WHEN bool_and(status = 'ok') THEN median(planning_ms) END AS planning_ms,
       max(workers_planned) AS workers_planned, max(workers_launched) AS workers_launched,
       mode(dominant_node) AS dominant_node, min(line) AS line
FROM query_statements GROUP BY run_id, query, mode;

-- Per (run, query): the time a table shows: the plain timed run when there is one (no EXPLAIN
-- instrumentation overhead), else EXPLAIN ANALYZE's execution time.
CREATE OR REPLACE VIEW query_times AS
SELECT * EXCLUDE (pick) FROM (
    SELECT *, row_number() OVER (PARTITION BY run_id, query ORDER BY mode = 'timing' DESC) AS pick
    FROM query_run_times) WHERE pick = 1;

-- Per (run, query, node type): self time summed over the plan's nodes of that type, median over repetitions,
-- and its share of the statement's execution time: which node dominates.
CREATE OR REPLACE VIEW query_node_times AS
WITH per AS (
    SELECT n.source_id, n.statement_no, n.run_id, n.query, n.node_type, sum(n.self_ms) AS self_ms,
           sum(n.actual_rows) AS actual_rows
    FROM query_plan_nodes n GROUP BY ALL
)
SELECT p.run_id, p.query, p.node_type, median(p.self_ms) AS self_ms,
       median(100.0 * p.self_ms / nullif(s.elapsed_ms, 0)) AS self_pct, median(p.actual_rows) AS actual_rows,
       row_number() OVER (PARTITION BY p.run_id, p.query ORDER BY median(p.self_ms) DESC, p.node_type) AS rank
FROM per p JOIN query_statements s USING (source_id, statement_no)
WHERE s.status = 'ok'
GROUP BY p.run_id, p.query, p.node_type;
"""

_SEL = "SELECT run_id, CASE WHEN count(*) = count({col}) THEN sum({col}) END AS value FROM query_times " \
       "WHERE query IN {{selection}} GROUP BY run_id"

METRICS = [
    # The sum over the run's queries (NULL when one failed: never a partial sum); ``query_elapsed_ms[q1]`` one
    # query, ``[q1+q2]`` several.
    MetricDef("query_elapsed_ms", "SELECT run_id, CASE WHEN count(*) = count(elapsed_ms) THEN sum(elapsed_ms) END "
              "AS value FROM query_times GROUP BY run_id", "ms", False,
              selection_sql=_SEL.format(col="elapsed_ms"), selection_of="query"),
    MetricDef("query_planning_ms", "SELECT run_id, sum(planning_ms) AS value FROM query_run_times "
              "WHERE mode = 'explain' GROUP BY run_id HAVING count(planning_ms) > 0", "ms", False,
              selection_sql="SELECT run_id, sum(planning_ms) AS value FROM query_run_times WHERE mode = 'explain' "
                            "AND query IN {selection} GROUP BY run_id", selection_of="query"),
    MetricDef("query_workers_launched", "SELECT run_id, max(workers_launched) AS value FROM query_run_times "
              "WHERE mode = 'explain' GROUP BY run_id", "workers", True,
              selection_sql="SELECT run_id, max(workers_launched) AS value FROM query_run_times "
                            "WHERE mode = 'explain' AND query IN {selection} GROUP BY run_id", selection_of="query"),
]

MODULE = ParserModule(name="query", formats=[], schema=SCHEMA, views=VIEWS, metrics=METRICS, tables=TABLES)
