-- Steady state of each pgbench run, from its per-second TPS series (pgbench_tps_per_second).
-- Loaded by tools/kansoku/parsers/pgbench/steady.py, which fills in the parameters in braces
-- (STEADY_PARAMS there); the rule is described in docs/steady-state.md.

-- The samples of each run on the per-second charts' time axis. The -P progress lines come first when a
-- run has them: they count every transaction, while a per-transaction log is often sampled
-- (--sampling-rate) and its per-second counts then carry sampling noise that is not the server's.
-- Otherwise the run's pgbench_tps_per_second series (the per-transaction or the aggregate log).
-- Intervals that reach outside the run's window (run.toml start/end) are left out, as the
-- TPS-over-time chart leaves them out (the first and last wall-clock seconds of a per-transaction
-- log hold only part of a second).
-- column series_source: where a per-second value comes from: 'txlog' (-l), 'aggregate' (--aggregate-interval) or 'progress' (-P)
-- column sample_no: 1-based number of the interval in its run's series
-- column samples: number of intervals in the run's series
CREATE OR REPLACE VIEW pgbench_tps_samples AS
WITH prog AS (
    -- without a wall clock (no run.toml start, no --progress-timestamp) the elapsed seconds are the axis
    SELECT p.run_id, p.tps,
           coalesce(p.elapsed_s, epoch(p.ts)) - coalesce(lag(coalesce(p.elapsed_s, epoch(p.ts))) OVER w,
                                                         CASE WHEN p.elapsed_s IS NOT NULL THEN 0 END) AS interval_s,
           coalesce(epoch(p.ts), p.elapsed_s) AS end_epoch_s, p.ts IS NOT NULL AS clock, 'progress' AS series_source
    FROM pgbench_progress p
    WHERE p.run_id IS NOT NULL AND (p.ts IS NOT NULL OR p.elapsed_s IS NOT NULL)
    WINDOW w AS (PARTITION BY p.source_id ORDER BY p.line)
), other AS (
    SELECT s.run_id, s.tps, s.interval_s, epoch(s.ts) + s.interval_s AS end_epoch_s, true AS clock, s.series_source
    FROM pgbench_tps_per_second s
    WHERE s.run_id NOT IN (SELECT run_id FROM prog WHERE run_id IS NOT NULL)
), both_ AS (
    SELECT * FROM prog UNION ALL SELECT * FROM other
), axis AS (
    SELECT b.*, b.end_epoch_s - CASE WHEN b.clock THEN coalesce(epoch(r.start_time),
                                         min(b.end_epoch_s - b.interval_s) OVER (PARTITION BY b.run_id)) ELSE 0 END
                AS elapsed_s,
           r.start_time, r.end_time
    FROM both_ b LEFT JOIN runs r USING (run_id)
), kept AS (
    SELECT run_id, CASE WHEN clock THEN to_timestamp(end_epoch_s - interval_s) END AS ts, elapsed_s, interval_s,
           tps, series_source
    FROM axis
    WHERE tps IS NOT NULL AND interval_s > 0 AND (start_time IS NULL OR end_time IS NULL
           OR (elapsed_s - interval_s >= -0.001 AND elapsed_s <= epoch(end_time) - epoch(start_time) + 0.001))
)
SELECT run_id, ts, elapsed_s, interval_s, tps, series_source,
       row_number() OVER (PARTITION BY run_id ORDER BY elapsed_s) AS sample_no,
       count(*) OVER (PARTITION BY run_id) AS samples
FROM kept;

-- The origin of a run's time axis (seconds since the run's start): run.toml 'start', else the
-- start of the first interval of its per-second series; the same origin as pgbench_tps_per_second.
-- column origin_epoch_s: the run's time zero (Unix epoch seconds)
-- column end_s: the run's end (run.toml 'end') in seconds since its start
CREATE OR REPLACE VIEW run_time_axis AS
SELECT r.run_id,
       coalesce(epoch(r.start_time), min(epoch(s.ts))) AS origin_epoch_s,
       epoch(r.end_time) - coalesce(epoch(r.start_time), min(epoch(s.ts))) AS end_s
FROM runs r LEFT JOIN pgbench_tps_per_second s USING (run_id)
GROUP BY r.run_id, r.start_time, r.end_time;

-- One row per run with a per-second series (docs/steady-state.md):
-- column series_source: the per-second series used: 'progress' (-P), else 'txlog' or 'aggregate'
-- column samples: intervals in the run's series
-- column steady_found: true when the rule found a steady window; false: the window is the fallback (first and last 10 % dropped)
-- column warmup_samples: intervals before the steady window
-- column rampdown_samples: intervals after the steady window
-- column warmup_s: seconds from the run's start to the start of the steady window
-- column rampdown_s: seconds from the end of the steady window to the end of the last interval
-- column steady_start_s: start of the steady window, seconds since the run's start
-- column steady_end_s: end of the steady window, seconds since the run's start
-- column steady_s: length of the steady window (sum of its intervals)
-- column tps_steady: steady-state TPS: time-weighted mean of the per-second TPS in the steady window
-- column tps_steady_median: median per-second TPS in the steady window
-- column tps_steady_min: lowest per-second TPS in the steady window
-- column tps_cv_pct: coefficient of variation of the per-second TPS in the steady window (100 x stddev / mean)
-- column stall_below_tps: the stall threshold: the lower of half the window's median TPS (stall_fraction) and the median minus 4 robust standard deviations (stall_mads), but at least a fifth of the median (stall_floor_fraction)
-- column stall_s: seconds of the steady window with no transaction or TPS below stall_below_tps
-- column zero_s: seconds of the steady window with no transaction at all
-- column tps_slope_per_s: Theil-Sen slope of TPS over time in the steady window (TPS per second)
-- column tps_drift_pct: the slope's change over the whole steady window, % of tps_steady_median
-- column trend_z: Mann-Kendall statistic of the steady window (normal approximation; |z| >= 2.576: 1 % level)
-- column drifts: significant trend (trend_z) and a change of at least drift_min_pct %
-- column stalls: stall_s > 0
-- column flags: 'no_steady_state', 'drift', 'stall': notes for the cells that use the run
CREATE OR REPLACE VIEW pgbench_steady_state AS
WITH samples_ AS MATERIALIZED (
    SELECT * FROM pgbench_tps_samples
), ref AS (
    -- the reference level: median and robust spread (MAD) of all the run's samples; robust as long as
    -- warm-up, ramp-down and dips together stay under half of the run
    SELECT run_id, max(samples) AS samples, any_value(series_source) AS series_source,
           max(elapsed_s) AS last_end_s,
           median(tps) AS ref_tps, mad(tps) AS ref_mad
    FROM samples_ GROUP BY run_id
), banded AS (
    SELECT s.*, f.ref_tps, f.last_end_s,
           greatest({band_fraction} * f.ref_tps, {band_mads} * 1.4826 * f.ref_mad) AS band,
           (abs(s.tps - f.ref_tps) <= greatest({band_fraction} * f.ref_tps, {band_mads} * 1.4826 * f.ref_mad))::INTEGER
               AS in_band
    FROM samples_ s JOIN ref f USING (run_id)
), runs_of_band AS (
    SELECT *,
           sum(in_band) OVER (PARTITION BY run_id ORDER BY sample_no
                              ROWS BETWEEN CURRENT ROW AND {consecutive} - 1 FOLLOWING) AS ahead,
           sum(in_band) OVER (PARTITION BY run_id ORDER BY sample_no
                              ROWS BETWEEN {consecutive} - 1 PRECEDING AND CURRENT ROW) AS behind
    FROM banded
), edges AS (
    SELECT run_id, max(samples) AS samples, any_value(ref_tps) AS ref_tps, any_value(band) AS band,
           any_value(series_source) AS series_source, max(last_end_s) AS last_end_s,
           min(sample_no) FILTER (WHERE ahead = {consecutive} AND sample_no + {consecutive} - 1 <= samples)
               AS first_ok,
           max(sample_no) FILTER (WHERE behind = {consecutive} AND sample_no >= {consecutive}) AS last_ok
    FROM runs_of_band GROUP BY run_id
), windowed AS (
    SELECT run_id, samples, ref_tps, band, series_source, last_end_s,
           samples >= {min_samples} AND first_ok IS NOT NULL AND last_ok IS NOT NULL
             AND first_ok - 1 <= floor({max_warmup_fraction} * samples)
             AND samples - last_ok <= floor({max_rampdown_fraction} * samples)
             AND last_ok - first_ok + 1 >= {consecutive} AS found,
           first_ok, last_ok
    FROM edges
), chosen AS (
    -- no steady window found: fall back to dropping the first and last {fallback_trim_pct} % (at least
    -- one sample at each end), the rule tps_steady used before
    SELECT run_id, samples, ref_tps, band, found, series_source, last_end_s,
           CASE WHEN found THEN first_ok ELSE greatest(1, floor(samples * {fallback_trim_fraction})) + 1 END
               AS steady_first,
           CASE WHEN found THEN last_ok ELSE samples - greatest(1, floor(samples * {fallback_trim_fraction})) END
               AS steady_last
    FROM windowed
), steady AS (
    SELECT s.*, c.ref_tps, c.band, c.found, c.steady_first, c.steady_last, c.last_end_s
    FROM samples_ s JOIN chosen c USING (run_id)
    WHERE s.sample_no BETWEEN c.steady_first AND c.steady_last
), level AS (
    -- a stall: TPS below {stall_fraction} x the window's median and also more than {stall_mads} robust
    -- standard deviations below it (a very noisy run's ordinary low seconds are not stalls), and always
    -- below {stall_floor_fraction} x the median (or zero)
    SELECT run_id, median(tps) AS steady_median,
           greatest({stall_floor_fraction} * median(tps),
                    least({stall_fraction} * median(tps), median(tps) - {stall_mads} * 1.4826 * mad(tps))) AS stall_below
    FROM steady GROUP BY run_id
), stats AS (
    SELECT st.run_id, any_value(st.found) AS found, max(st.samples) AS samples,
           any_value(st.series_source) AS series_source, any_value(st.last_end_s) AS last_end_s,
           any_value(st.steady_first) AS steady_first, any_value(st.steady_last) AS steady_last,
           min(st.elapsed_s - st.interval_s) AS steady_start_s, max(st.elapsed_s) AS steady_end_s,
           sum(st.interval_s) AS steady_s,
           sum(st.tps * st.interval_s) / nullif(sum(st.interval_s), 0) AS tps_steady,
           any_value(l.steady_median) AS tps_steady_median,
           100.0 * stddev_samp(st.tps) / nullif(avg(st.tps), 0) AS tps_cv_pct,
           min(st.tps) AS tps_steady_min,
           any_value(l.stall_below) AS stall_below_tps,
           coalesce(sum(st.interval_s) FILTER (WHERE st.tps = 0 OR st.tps < l.stall_below), 0) AS stall_s,
           coalesce(sum(st.interval_s) FILTER (WHERE st.tps = 0), 0) AS zero_s
    FROM steady st JOIN level l USING (run_id)
    GROUP BY st.run_id
), buckets AS (
    -- trend over at most {max_trend_points} points (bucket means): bounds the pairwise work of long runs
    SELECT run_id, b, avg(elapsed_s) AS t, avg(tps) AS tps
    FROM (SELECT run_id, elapsed_s, tps,
                 floor((sample_no - steady_first) * least(1.0, {max_trend_points}
                       / (steady_last - steady_first + 1))) AS b
          FROM steady)
    GROUP BY run_id, b
), pairs AS (
    SELECT a.run_id, (b.tps - a.tps) / (b.t - a.t) AS slope, sign(b.tps - a.tps) AS s
    FROM buckets a JOIN buckets b ON a.run_id = b.run_id AND a.b < b.b
), trend AS (
    SELECT p.run_id, median(p.slope) AS slope_tps_per_s, sum(p.s) AS kendall_s,
           any_value(m.points) AS trend_points
    FROM pairs p JOIN (SELECT run_id, count(*) AS points FROM buckets GROUP BY run_id) m USING (run_id)
    GROUP BY p.run_id
), tested AS (
    SELECT run_id, slope_tps_per_s, trend_points,
           CASE WHEN trend_points >= 3 THEN
               (kendall_s - sign(kendall_s))
               / sqrt(trend_points * (trend_points - 1) * (2 * trend_points + 5) / 18.0) END AS trend_z
    FROM trend
)
SELECT st.run_id,
       st.found AS steady_found,
       st.series_source,
       st.samples,
       st.steady_first - 1 AS warmup_samples,
       st.samples - st.steady_last AS rampdown_samples,
       st.steady_start_s AS warmup_s,
       st.last_end_s - st.steady_end_s AS rampdown_s,
       st.steady_start_s, st.steady_end_s, st.steady_s,
       st.tps_steady, st.tps_steady_median, st.tps_steady_min, st.tps_cv_pct,
       st.stall_below_tps, st.stall_s, st.zero_s,
       t.slope_tps_per_s AS tps_slope_per_s,
       100.0 * t.slope_tps_per_s * (st.steady_end_s - st.steady_start_s) / nullif(st.tps_steady_median, 0)
           AS tps_drift_pct,
       t.trend_z,
       coalesce(abs(t.trend_z) >= {drift_z} AND abs(100.0 * t.slope_tps_per_s * (st.steady_end_s - st.steady_start_s)
                / nullif(st.tps_steady_median, 0)) >= {drift_min_pct}, false) AS drifts,
       st.stall_s > 0 AS stalls,
       list_filter([CASE WHEN NOT st.found THEN 'no_steady_state' END,
                    CASE WHEN coalesce(abs(t.trend_z) >= {drift_z} AND abs(100.0 * t.slope_tps_per_s
                         * (st.steady_end_s - st.steady_start_s) / nullif(st.tps_steady_median, 0)) >= {drift_min_pct},
                         false) THEN 'drift' END,
                    CASE WHEN st.stall_s > 0 THEN 'stall' END], lambda x: x IS NOT NULL) AS flags
FROM stats st LEFT JOIN tested t USING (run_id);

-- Stalls: stretches of consecutive steady-window samples below stall_below_tps (or at zero).
-- column start_s: start of the span, seconds since the run's start
-- column end_s: end of the span, seconds since the run's start
-- column tps_min: lowest per-second TPS of the stall
CREATE OR REPLACE VIEW pgbench_stalls AS
WITH low AS (
    SELECT s.run_id, s.sample_no, s.elapsed_s, s.interval_s, s.tps,
           s.sample_no - row_number() OVER (PARTITION BY s.run_id ORDER BY s.sample_no) AS grp
    FROM pgbench_tps_samples s JOIN pgbench_steady_state st USING (run_id)
    WHERE s.elapsed_s - s.interval_s >= st.steady_start_s - 0.001 AND s.elapsed_s <= st.steady_end_s + 0.001
      AND (s.tps = 0 OR s.tps < st.stall_below_tps)
)
SELECT run_id, min(elapsed_s - interval_s) AS start_s, max(elapsed_s) AS end_s, sum(interval_s) AS stall_s,
       min(tps) AS tps_min, count(*) AS samples
FROM low GROUP BY run_id, grp;
