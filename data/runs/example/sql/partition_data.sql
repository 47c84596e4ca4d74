-- The partitioning study's data (partition.toml; FY2013 chapter 3 at a reduced volume): an access log of
-- 30 days, 40,000 rows a day (1.2 million rows), stored twice in database bench_part: in one table
-- (log_plain) and in a table range-partitioned by day (log_part, a partition a day, days 31 and 32 empty
-- for the inserts). Both indexed on ts. Every row is computed from its day and position: the data is the
-- same each time it is made.
-- Run in one transaction (psql -1): a failure leaves nothing half made; setup.sh vacuums afterwards.
SET client_min_messages = warning;
DROP TABLE IF EXISTS log_plain, log_part;
CREATE TABLE log_plain (ts timestamptz NOT NULL, host int NOT NULL, status int NOT NULL, bytes int NOT NULL,
                        path text NOT NULL);
CREATE TABLE log_part (LIKE log_plain) PARTITION BY RANGE (ts);
DO $$
BEGIN
    FOR d IN 1..32 LOOP
        EXECUTE format('CREATE TABLE log_part_d%s PARTITION OF log_part FOR VALUES FROM (%L) TO (%L)',
                       lpad(d::text, 2, '0'),
                       timestamptz '2026-10-01 00:00+00' + (d - 1) * interval '1 day',
                       timestamptz '2026-10-01 00:00+00' + d * interval '1 day');
    END LOOP;
END $$;
-- one day's rows: day 1 is 2026-10-01 (UTC)
CREATE OR REPLACE FUNCTION log_day(d int)
RETURNS TABLE (ts timestamptz, host int, status int, bytes int, path text) LANGUAGE sql IMMUTABLE AS $$
    SELECT timestamptz '2026-10-01 00:00+00' + (d - 1) * interval '1 day' + i * interval '2160 milliseconds',
           (i * 7919 + d) % 64,
           CASE WHEN (i + d) % 50 = 0 THEN 500 WHEN (i + d) % 9 = 0 THEN 404 ELSE 200 END,
           200 + ((i::bigint * 104729 + d * 31) % 50000)::int,
           '/item/' || ((i * 31 + d * 17) % 5000)
    FROM generate_series(0, 39999) AS i
$$;
INSERT INTO log_plain SELECT l.* FROM generate_series(1, 30) AS d, log_day(d) AS l;
INSERT INTO log_part SELECT l.* FROM generate_series(1, 30) AS d, log_day(d) AS l;
CREATE INDEX log_plain_ts ON log_plain (ts);
CREATE INDEX log_part_ts ON log_part (ts);
