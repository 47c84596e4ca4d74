-- Before each run of the partitioning study: both tables back to days 1 to 30 (a run inserts day 31 and
-- removes day 1), vacuumed and analysed, then a checkpoint, so that every run starts from the same state.
DELETE FROM log_plain WHERE ts >= '2026-10-31 00:00+00';
INSERT INTO log_plain SELECT * FROM log_day(1) WHERE NOT EXISTS (SELECT 1 FROM log_plain WHERE ts < '2026-10-02 00:00+00');
TRUNCATE log_part_d31;
INSERT INTO log_part SELECT * FROM log_day(1) WHERE NOT EXISTS (SELECT 1 FROM log_part_d01);
VACUUM ANALYZE log_plain;
VACUUM ANALYZE log_part;
CHECKPOINT;
