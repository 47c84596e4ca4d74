-- The partitioning study's statements (partition.toml) on one table (log_plain): the oldest day
-- removed with DELETE.
-- Run in this order by tools/collect queries (psql \timing), once a run; queries/partition_plain.sql and
-- queries/partition_partitioned.sql name the same steps with the same IDs.

-- query: insert_day
INSERT INTO log_plain SELECT * FROM log_day(31);

-- query: count_day
SELECT count(*), sum(bytes) FROM log_plain WHERE ts >= '2026-10-15 00:00+00' AND ts < '2026-10-16 00:00+00';

-- query: errors_day
SELECT path, count(*) FROM log_plain WHERE ts >= '2026-10-20 00:00+00' AND ts < '2026-10-21 00:00+00' AND status = 500 GROUP BY path ORDER BY count(*) DESC, path LIMIT 10;

-- query: month_summary
SELECT date_trunc('day', ts, 'UTC') AS day, count(*), avg(bytes) FROM log_plain GROUP BY 1 ORDER BY 1;

-- query: delete_day
DELETE FROM log_plain WHERE ts < '2026-10-02 00:00+00';

-- query: vacuum
VACUUM log_plain;
