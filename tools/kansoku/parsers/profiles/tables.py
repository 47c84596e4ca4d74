"""The profile store (docs/formats.md §9): the tables every profile format fills, the views analysis reads
and the per-run metrics. The formats themselves are ``perf_script.py``, ``folded.py`` and ``strace_stack.py``.

Two kinds of profile are kept apart: ``cpu`` (perf samples, folded stacks) and ``syscalls`` (one ``strace -k``
stack per system call). Every view is per (run, profile); a run with several files of one kind sums them.
"""

from __future__ import annotations

from kansoku.parsers.base import MetricDef, ParserModule

SCHEMA = """
CREATE TABLE IF NOT EXISTS profile_stacks (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    profile VARCHAR NOT NULL,   -- 'cpu' (perf script, folded stacks) | 'syscalls' (strace -k: one stack per call)
    event VARCHAR,              -- the perf event ('cpu-clock', 'cycles:P'), the system call's name for strace -k
    process VARCHAR,            -- the command (perf's comm); NULL for folded stacks, which do not say
    pid BIGINT,                 -- the process (perf's pid, or tid when only one is printed); NULL for folded stacks
    stack VARCHAR NOT NULL,     -- frames root first, joined by ';' (unresolved frames kept: '[unknown] (libc.so.6)')
    leaf VARCHAR,               -- the last frame: where the sample was taken (the function's self time)
    depth INTEGER,              -- number of frames
    samples BIGINT NOT NULL,    -- samples with this stack (folded stacks: the line's count)
    weight BIGINT,              -- perf: the sum of the samples' periods (ns for cpu-clock); NULL otherwise
    line INTEGER                -- the line of the first sample with this stack
);
CREATE TABLE IF NOT EXISTS profile_sources (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    format VARCHAR,             -- 'perf-script' | 'folded-stacks' | 'strace-stacks'
    profile VARCHAR,            -- 'cpu' | 'syscalls'
    compressed BOOLEAN,         -- the file was gzip-compressed (kept compressed in the run)
    event VARCHAR,              -- the event kept (perf script: the first event of the file; others are warned)
    samples BIGINT,             -- samples (or system calls) stored from the file
    stacks BIGINT,              -- distinct (process, pid, stack)
    unresolved_samples BIGINT,  -- samples with at least one frame perf could not resolve
    max_depth INTEGER,          -- deepest stack
    first_time DOUBLE,          -- perf: the first and last sample time (seconds, perf's clock)
    last_time DOUBLE,
    skipped_samples BIGINT,     -- perf: samples of other events, not stored
    first_line INTEGER
);
"""

TABLES = ["profile_stacks", "profile_sources"]

VIEWS = """
-- Samples per (run, profile, stack), processes summed.
CREATE OR REPLACE VIEW profile_run_stacks AS
SELECT run_id, profile, stack, any_value(leaf) AS leaf, any_value(depth) AS depth,
       CAST(sum(samples) AS BIGINT) AS samples,
       100.0 * sum(samples) / sum(sum(samples)) OVER (PARTITION BY run_id, profile) AS pct
FROM profile_stacks GROUP BY run_id, profile, stack;

-- Per (run, profile, function): self samples (the function is the leaf) and total samples (the function is
-- anywhere in the stack, counted once per stack however deep the recursion), as shares of the run's samples.
CREATE OR REPLACE VIEW profile_functions AS
WITH tot AS (
    SELECT run_id, profile, fn AS function, CAST(sum(samples) AS BIGINT) AS total_samples
    FROM (SELECT run_id, profile, samples, unnest(list_distinct(string_split(stack, ';'))) AS fn FROM profile_stacks)
    GROUP BY run_id, profile, fn
), self AS (
    SELECT run_id, profile, leaf AS function, CAST(sum(samples) AS BIGINT) AS self_samples
    FROM profile_stacks GROUP BY run_id, profile, leaf
), r AS (
    SELECT run_id, profile, sum(samples) AS run_samples FROM profile_stacks GROUP BY run_id, profile
)
SELECT tot.run_id, tot.profile, tot.function, coalesce(self.self_samples, 0) AS self_samples, tot.total_samples,
       100.0 * coalesce(self.self_samples, 0) / r.run_samples AS self_pct,
       100.0 * tot.total_samples / r.run_samples AS total_pct,
       starts_with(tot.function, '[unknown]') OR regexp_full_match(tot.function, '(0x)?[0-9a-fA-F]{6,16}')
           OR regexp_full_match(tot.function, '\\[[^\\]]+\\]') AS unresolved,
       row_number() OVER (PARTITION BY tot.run_id, tot.profile
                          ORDER BY coalesce(self.self_samples, 0) DESC, tot.total_samples DESC, tot.function)
           AS self_rank
FROM tot LEFT JOIN self USING (run_id, profile, function) JOIN r USING (run_id, profile);

-- Per (run, profile, process): samples and share.
CREATE OR REPLACE VIEW profile_processes AS
SELECT run_id, profile, coalesce(process, '') AS process, count(DISTINCT pid) AS pids,
       CAST(sum(samples) AS BIGINT) AS samples,
       100.0 * sum(samples) / sum(sum(samples)) OVER (PARTITION BY run_id, profile) AS pct
FROM profile_stacks GROUP BY run_id, profile, coalesce(process, '');

-- Per (run, profile, host): which host was profiled and in which role (ParserModule.host_columns: the file's host
-- and role; host = what `hostname` printed there, NULL for the run's own host when unnamed), with its samples.
CREATE OR REPLACE VIEW profile_hosts AS
SELECT run_id, profile, host, role, CAST(sum(samples) AS BIGINT) AS samples
FROM profile_sources GROUP BY run_id, profile, host, role;

-- Per (run, profile): what was sampled.
CREATE OR REPLACE VIEW profile_runs AS
SELECT run_id, profile, CAST(sum(samples) AS BIGINT) AS samples,
       CAST(sum(unresolved_samples) AS BIGINT) AS unresolved_samples,
       100.0 * sum(unresolved_samples) / nullif(sum(samples), 0) AS unresolved_pct,
       string_agg(DISTINCT format, ',') AS formats, string_agg(DISTINCT event, ',') AS events,
       bool_or(compressed) AS compressed, max(max_depth) AS max_depth
FROM profile_sources GROUP BY run_id, profile;
"""

_FN = "SELECT run_id, sum({col}) AS value FROM profile_functions WHERE profile = 'cpu' AND function IN {{selection}} " \
      "GROUP BY run_id"

METRICS = [
    MetricDef("profile_samples", "SELECT run_id, samples AS value FROM profile_runs WHERE profile = 'cpu'",
              "samples", False),
    MetricDef("profile_unresolved_pct",
              "SELECT run_id, unresolved_pct AS value FROM profile_runs WHERE profile = 'cpu'", "%", False),
    # Self and total share of named functions (``profile_self_pct[LWLockAcquire]``); without a selection the
    # share of the run's top function.
    MetricDef("profile_self_pct", "SELECT run_id, self_pct AS value FROM profile_functions "
              "WHERE profile = 'cpu' AND self_rank = 1", "%", False,
              selection_sql=_FN.format(col="self_pct"), selection_of="function"),
    MetricDef("profile_total_pct", "SELECT run_id, max(total_pct) FILTER (WHERE self_rank = 1) AS value "
              "FROM profile_functions WHERE profile = 'cpu' GROUP BY run_id", "%", False,
              selection_sql=_FN.format(col="total_pct"), selection_of="function"),
]

MODULE = ParserModule(name="profile", formats=[], schema=SCHEMA, views=VIEWS, metrics=METRICS, tables=TABLES,
                      host_columns={t: ("host", "role") for t in ("profile_stacks", "profile_sources")})
