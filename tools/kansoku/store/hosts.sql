-- Host and role on every system metric, statistics snapshot and per-host tool output (docs/ingest.md,
-- "Hosts in a run"). Applied after the parser modules' own DDL; filled by the sink (store/db.py FileSink).
ALTER TABLE sys_metrics ADD COLUMN IF NOT EXISTS host VARCHAR;         -- the file's host (sources.host)
ALTER TABLE sys_metrics ADD COLUMN IF NOT EXISTS role VARCHAR;         -- the file's host's role in its run (sources.role)
ALTER TABLE sys_series ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE sys_devices ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE pidstat ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE pidstat ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE pg_stat_snapshot ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE pg_stat_snapshot ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE strace_syscalls ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE strace_syscalls ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE strace_tables ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE strace_tables ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE fio_jobs ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE fio_jobs ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE profile_stacks ADD COLUMN IF NOT EXISTS host VARCHAR;      -- the host perf (or strace -k) profiled
ALTER TABLE profile_stacks ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE profile_sources ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE profile_sources ADD COLUMN IF NOT EXISTS role VARCHAR;
ALTER TABLE pg_checkpoints ADD COLUMN IF NOT EXISTS host VARCHAR;      -- the host whose server log it is
ALTER TABLE pg_checkpoints ADD COLUMN IF NOT EXISTS role VARCHAR;
