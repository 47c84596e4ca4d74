-- Core tables of the kansoku store. Tool families add their own tables
-- (see tools/kansoku/parsers/*.py, SCHEMA); every such table has source_id.

CREATE TABLE IF NOT EXISTS kansoku_meta (
    key   VARCHAR,
    value VARCHAR
);

-- One row per run: a directory of raw files (origin 'measured') or a row of a
-- table transcribed from a published report (origin 'transcribed').
CREATE TABLE IF NOT EXISTS runs (
    run_id       VARCHAR NOT NULL,   -- the run directory relative to its campaign root (docs/ingest.md), e.g. 'study=scaleup/workload=read/clients=2/rep=1'
    run_dir      VARCHAR,            -- directory the run was ingested from (absolute)
    origin       VARCHAR NOT NULL,   -- 'measured' | 'transcribed'
    status       VARCHAR NOT NULL,   -- 'ok' | 'failed' | 'aborted'
    status_note  VARCHAR,
    start_time   TIMESTAMPTZ,        -- benchmark start (run.toml 'start')
    end_time     TIMESTAMPTZ,        -- benchmark end (run.toml 'end')
    hostname     VARCHAR,
    citation     VARCHAR,            -- for transcribed runs: where the numbers were printed
    run_toml     JSON,               -- run.toml as JSON, verbatim
    ingested_at  TIMESTAMPTZ
);
-- sha256 of the run.toml as ingested; the file itself is kept under blobs/ (see store/db.py)
ALTER TABLE runs ADD COLUMN IF NOT EXISTS run_toml_sha256 VARCHAR;

-- The run's factors, tall: one row per (run, factor).
CREATE TABLE IF NOT EXISTS run_factors (
    run_id  VARCHAR NOT NULL,
    factor  VARCHAR NOT NULL,
    value   VARCHAR NOT NULL,
    origin  VARCHAR NOT NULL         -- 'path' | 'run.toml' | 'file' | 'transcribed'
);

-- One row per ingested raw file.
CREATE TABLE IF NOT EXISTS sources (
    source_id     VARCHAR NOT NULL,  -- stable id of (run_id, file name)
    run_id        VARCHAR,
    path          VARCHAR NOT NULL,  -- absolute path where the file was last ingested from (the bytes: blobs/<sha256>)
    file_name     VARCHAR NOT NULL,  -- path relative to the run directory
    sha256        VARCHAR NOT NULL,  -- sha256 of the file's bytes (its kept copy: blobs/<first two digits>/<sha256>)
    size_bytes    BIGINT NOT NULL,   -- the file's size in bytes
    tool          VARCHAR NOT NULL,  -- the tool that wrote it: 'pgbench', 'sar', 'iostat', 'strace', 'fio', ...
    format        VARCHAR NOT NULL,  -- its format as detected by content: 'sa-binary', 'sar-text', 'pgbench-txlog', ... (docs/formats.md)
    tool_version  VARCHAR,           -- the tool's version when the file says it (pgbench's banner, the sa file header)
    rows_loaded   BIGINT NOT NULL,   -- rows the file added to the store over every table its parser fills (sys_metrics and its sys_series, ...; 0 for a checked rendering)
    ingested_at   TIMESTAMPTZ NOT NULL  -- when it was last ingested
);

CREATE TABLE IF NOT EXISTS ingest_warnings (
    source_id VARCHAR NOT NULL,
    line      INTEGER,
    message   VARCHAR NOT NULL
);

-- Hosts and machines (docs/ingest.md, "Hosts in a run").
-- The campaign's declared default role (.kansoku-campaign default_role), NULL when it declares none
ALTER TABLE runs ADD COLUMN IF NOT EXISTS default_role VARCHAR;
-- The campaign's declared coverage threshold (.kansoku-campaign coverage_threshold, a fraction), NULL: 0.9
ALTER TABLE runs ADD COLUMN IF NOT EXISTS coverage_threshold DOUBLE;
-- The host the file came from: its host=<name>/ subdirectory's hostname, or the run's own (run.toml hostname)
ALTER TABLE sources ADD COLUMN IF NOT EXISTS host VARCHAR;
-- The role of the file's host in its run: 'server' | 'client' | 'standby' | a name of the campaign's
ALTER TABLE sources ADD COLUMN IF NOT EXISTS role VARCHAR;
-- A rendering of the run's sa file (sar -A text, sadf -d, sadf -j beside sa.bin, docs/ingest.md "Renderings of
-- a sa file"): kept and checked on a sample of its records, not parsed (rows_loaded 0). The file whose stored
-- rows it was checked against (NULL: the file was read whole), that file's sha256, and the records compared.
ALTER TABLE sources ADD COLUMN IF NOT EXISTS checked_against VARCHAR;  -- the run's file whose stored rows it was checked against, e.g. 'sa.bin' (NULL: read whole)
ALTER TABLE sources ADD COLUMN IF NOT EXISTS checked_against_sha256 VARCHAR;  -- that file's sha256 when it was checked
ALTER TABLE sources ADD COLUMN IF NOT EXISTS records_checked INTEGER;  -- the records compared (a sample: first, middle, last)

-- One row per machine: a machine is its inventory (run.toml / host.toml [machine] without hostname).
CREATE TABLE IF NOT EXISTS machines (
    machine_id     VARCHAR NOT NULL,   -- first 12 hex digits of the sha256 of its identity (memory in whole GiB) as canonical JSON
    cpu_model      VARCHAR,            -- [machine] cpu_model
    cpu_count      INTEGER,            -- [machine] cpu_count
    mem_total_kib  BIGINT,             -- [machine] mem_total_kib
    kernel         VARCHAR,            -- [machine] kernel
    os             VARCHAR,            -- [machine] os
    virtualization VARCHAR,            -- [machine] virtualization
    inventory      JSON                -- the whole [machine] table without hostname
);

-- One row per (run, host): the hosts whose outputs a run holds, their roles, machines and clocks.
CREATE TABLE IF NOT EXISTS run_hosts (
    run_id               VARCHAR NOT NULL,
    host                 VARCHAR,      -- what `hostname` printed there (host.toml / run.toml), else the host= directory's name; NULL: the run's own host, unnamed
    role                 VARCHAR NOT NULL, -- 'server' | 'client' | 'standby' | ... (host.toml role; run.toml role or the campaign's default_role)
    host_dir             VARCHAR NOT NULL, -- '' for the run's own host (files at the top of the run directory), else 'host=<name>'
    machine_id           VARCHAR,      -- machines.machine_id; NULL when the host's inventory was not captured
    clock_offset_s       DOUBLE,       -- that host's clock minus the collecting host's, measured at start (0 for the run's own host)
    clock_offset_error_s DOUBLE,       -- half the round trip of that measurement
    host_toml            JSON,         -- host.toml as JSON, verbatim (NULL for the run's own host: see runs.run_toml)
    host_toml_sha256     VARCHAR       -- sha256 of host.toml as ingested (kept under blobs/ like run.toml)
);
