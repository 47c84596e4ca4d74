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

-- Checkpoints told by the server's statistics: between two consecutive snapshots of a run's
-- pg_stat_bgwriter (PostgreSQL <= 16: checkpoints_timed, checkpoints_req) or pg_stat_checkpointer (17+:
-- num_timed, num_requested; num_done from 18 when present) the counters rose, so a checkpoint was counted
-- in that interval -- when exactly inside it, the statistics do not say. Only snapshots with their time
-- (snapshot_at) count; a counter that went down (a stats reset) gives no row. An interval that a checkpoint
-- of the server log already explains (run_checkpoints, to the second) is left out.
-- column run_id: the run whose snapshots these are
-- column view: 'pg_stat_bgwriter' or 'pg_stat_checkpointer'
-- column start_s: the earlier snapshot, seconds since the run's start
-- column end_s: the later snapshot, seconds since the run's start
-- column timed: rise of checkpoints_timed / num_timed (checkpoints started by checkpoint_timeout)
-- column requested: rise of checkpoints_req / num_requested (requested: CHECKPOINT, max_wal_size, ...)
-- column checkpoints: checkpoints counted in the interval (num_done's rise when the view has it, else timed + requested)
CREATE OR REPLACE VIEW run_stat_checkpoints AS
WITH snaps AS (
    SELECT run_id, view, snapshot_at,
           sum(value) FILTER (WHERE counter IN ('checkpoints_timed', 'num_timed')) AS timed,
           sum(value) FILTER (WHERE counter IN ('checkpoints_req', 'num_requested')) AS requested,
           sum(value) FILTER (WHERE counter = 'num_done') AS done
    FROM pg_stat_snapshot
    WHERE snapshot_at IS NOT NULL AND run_id IS NOT NULL
      AND view IN ('pg_stat_bgwriter', 'pg_stat_checkpointer')
    GROUP BY run_id, view, snapshot_at
), steps AS (
    SELECT run_id, view, lag(snapshot_at) OVER w AS from_at, snapshot_at AS to_at,
           timed - lag(timed) OVER w AS timed, requested - lag(requested) OVER w AS requested,
           done - lag(done) OVER w AS done
    FROM snaps
    WINDOW w AS (PARTITION BY run_id, view ORDER BY snapshot_at)
), counted AS (
    SELECT s.run_id, s.view, epoch(s.from_at) - a.origin_epoch_s AS start_s,
           epoch(s.to_at) - a.origin_epoch_s AS end_s, s.timed, s.requested,
           coalesce(s.done, s.timed + s.requested) AS checkpoints
    FROM steps s JOIN run_time_axis a USING (run_id)
    WHERE s.from_at IS NOT NULL AND a.origin_epoch_s IS NOT NULL AND s.timed >= 0 AND s.requested >= 0
      AND coalesce(s.done, 0) >= 0
)
SELECT c.* FROM counted c
WHERE c.checkpoints > 0
  AND NOT EXISTS (SELECT 1 FROM run_checkpoints k WHERE k.run_id = c.run_id
                  AND k.start_s <= c.end_s AND coalesce(k.end_s, k.start_s) >= c.start_s);

-- One row per event of a run (docs/steady-state.md):
-- column event: 'run_start', 'run_end', 'steady_start' (end of warm-up), 'steady_end' (start of ramp-down), 'stall', 'checkpoint', 'restartpoint', 'checkpoint_stat' (a checkpoint counted by pg_stat_bgwriter / pg_stat_checkpointer between two snapshots: at_s and until_s are the snapshots, not the checkpoint)
-- column at_s: when, in seconds since the run's start (the x axis of the per-second TPS charts)
-- column until_s: end of a span (stall, checkpoint, the later snapshot of checkpoint_stat), same axis; NULL for an instant
-- column reason: checkpoint: the server log's reason; checkpoint_stat: 'timed', 'requested' or 'timed, requested'
-- column value: checkpoint: buffers written; checkpoint_stat: checkpoints counted; stall: lowest TPS; steady_start/steady_end: warm-up/ramp-down seconds
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
FROM run_checkpoints
UNION ALL
SELECT run_id, 'checkpoint_stat', start_s, end_s,
       concat_ws(', ', CASE WHEN timed > 0 THEN 'timed' END, CASE WHEN requested > 0 THEN 'requested' END),
       checkpoints, 'checkpoints'
FROM run_stat_checkpoints;
