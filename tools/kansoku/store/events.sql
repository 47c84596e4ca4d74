-- Events of each run on the per-second charts' time axis (seconds since the run's start, the axis
-- of pgbench_tps_per_second): run start and end, the steady window's edges, stalls of the per-second
-- TPS and checkpoints from the PostgreSQL server log. Loaded by tools/kansoku/parsers/run_events.py;
-- docs/steady-state.md describes the columns.

-- Checkpoints of each run: those logged in the run's own directory, or in a log that is not itself
-- a run's (no run.toml) in a directory above the run's; in both cases only those that overlap the
-- run's window (run.toml start/end, else its per-second series).
-- column run_id: the run the checkpoint overlaps (pg_checkpoints.run_id is the run of the log file)
-- column source_id: the server log it was read from
-- column start_s: checkpoint start, seconds since the run's start
-- column end_s: checkpoint completion, seconds since the run's start (NULL: not completed in the log)
CREATE OR REPLACE VIEW run_checkpoints AS
WITH windows AS (
    SELECT a.run_id, r.run_dir, a.origin_epoch_s,
           coalesce(epoch(r.end_time), a.origin_epoch_s + (SELECT max(s.elapsed_s) FROM pgbench_tps_per_second s
                                                           WHERE s.run_id = a.run_id)) AS end_epoch_s
    FROM run_time_axis a JOIN runs r USING (run_id)
    WHERE a.origin_epoch_s IS NOT NULL
), logs AS (
    SELECT src.source_id, src.run_id AS log_run_id, regexp_replace(src.path, '/[^/]*$', '') AS log_dir,
           lr.start_time IS NULL AS unattached
    FROM sources src LEFT JOIN runs lr ON lr.run_id = src.run_id
    WHERE src.format IN ('postgres-log', 'postgres-csvlog', 'postgres-jsonlog')
)
SELECT w.run_id, c.*  EXCLUDE (run_id, source_id), c.source_id,
       epoch(c.start_ts) - w.origin_epoch_s AS start_s,
       epoch(c.end_ts) - w.origin_epoch_s AS end_s
FROM pg_checkpoints c
JOIN logs l USING (source_id)
JOIN windows w ON (w.run_id = l.log_run_id
                   OR (l.unattached AND starts_with(w.run_dir, l.log_dir || '/')))
WHERE c.start_ts IS NOT NULL
  AND epoch(c.start_ts) <= w.end_epoch_s
  AND coalesce(epoch(c.end_ts), epoch(c.start_ts)) >= w.origin_epoch_s;

-- One row per event of a run (docs/steady-state.md):
-- column event: 'run_start', 'run_end', 'steady_start' (end of warm-up), 'steady_end' (start of ramp-down), 'stall', 'checkpoint', 'restartpoint'
-- column at_s: when, in seconds since the run's start (the x axis of the per-second TPS charts)
-- column until_s: end of a span (stall, checkpoint), same axis; NULL for an instant
-- column value: checkpoint: buffers written; stall: lowest TPS; steady_start/steady_end: warm-up/ramp-down seconds
-- column unit: unit of value
CREATE OR REPLACE VIEW run_events AS
SELECT run_id, 'run_start' AS event, 0.0 AS at_s, NULL::DOUBLE AS until_s, NULL::VARCHAR AS reason,
       NULL::DOUBLE AS value, NULL::VARCHAR AS unit
FROM runs WHERE start_time IS NOT NULL AND run_id IN (SELECT run_id FROM pgbench_tps_per_second)
UNION ALL
SELECT run_id, 'run_end', end_s, NULL, NULL, NULL, NULL
FROM run_time_axis WHERE end_s IS NOT NULL AND run_id IN (SELECT run_id FROM pgbench_tps_per_second)
UNION ALL
SELECT run_id, 'steady_start', steady_start_s, NULL, NULL, warmup_s, 's'
FROM pgbench_steady_state WHERE steady_found AND warmup_samples > 0
UNION ALL
SELECT run_id, 'steady_end', steady_end_s, NULL, NULL, rampdown_s, 's'
FROM pgbench_steady_state WHERE steady_found AND rampdown_samples > 0
UNION ALL
SELECT run_id, 'stall', start_s, end_s, NULL, tps_min, 'tps'
FROM pgbench_stalls
UNION ALL
SELECT run_id, kind, start_s, end_s, reason, buffers_written, 'buffers'
FROM run_checkpoints;
