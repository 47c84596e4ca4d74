#!/bin/sh
# The whole example campaign, as it was run for data/runs/example (about 65 minutes on 2 vCPUs, of which
# the replication study about 15), then the client/server study, the version study, and the WAL sync method
# and software-interrupt studies (about 5 minutes), then the partitioning, FDW and full-text search studies
# (about 15 minutes).
# Run from the repository root as root (the clusters run as the postgres OS user):
#   sh data/runs/example/run_campaign.sh                 # every study
#   sh data/runs/example/run_campaign.sh clientserver    # the client/server study alone (clientserver.toml)
#   sh data/runs/example/run_campaign.sh versions        # PostgreSQL 15 against 18 alone (versions.toml)
#   sh data/runs/example/run_campaign.sh walsync         # fsync.toml, walsync.toml and softirq.toml alone
#   sh data/runs/example/run_campaign.sh features        # partition.toml, fdw.toml, fdw_write.toml, fts.toml alone
# Interrupted? Run it again: finished runs are skipped.
set -eu
HERE=$(dirname "$0")
clientserver() {
    # the server host reached over ssh: an OpenSSH server on 127.0.0.1 with throw-away keys (setup.sh)
    sh "$HERE/setup.sh" init
    sh "$HERE/setup.sh" sshd-start
    trap 'sh "$HERE/setup.sh" sshd-stop' EXIT
    tools/collect --plan "$HERE/clientserver.toml"
    sh "$HERE/setup.sh" stop
}
versions() {
    # PostgreSQL 15 and 18 built from Debian's source packages (setup.sh pg-build: minutes the first time,
    # then kept under $BASE/pg15 and $BASE/pg18), one cluster per version, about 20 minutes of runs
    sh "$HERE/setup.sh" pg-build
    tools/collect --plan "$HERE/versions.toml"
    sh "$HERE/setup.sh" v-stop
}
walsync() {
    # pg_test_fsync is not in Debian's PATH; the clusters of setup.sh init (checksums-off), mpstat for softirq
    PATH=/usr/lib/postgresql/15/bin:$PATH tools/collect --plan "$HERE/fsync.toml"
    tools/collect --plan "$HERE/walsync.toml"
    tools/collect --plan "$HERE/softirq.toml"
    sh "$HERE/setup.sh" stop
}
features() {
    # partitioning, FDW (a second cluster on port 5434: setup.sh fdw-init) and full-text search (pg_trgm),
    # on the checksums-off cluster of setup.sh init; each plan makes its own data once
    sh "$HERE/setup.sh" init
    tools/collect --plan "$HERE/partition.toml"
    tools/collect --plan "$HERE/fdw.toml"
    tools/collect --plan "$HERE/fdw_write.toml"
    tools/collect --plan "$HERE/fts.toml"
    sh "$HERE/setup.sh" fdw-stop
    sh "$HERE/setup.sh" stop
}
case "${1:-all}" in
clientserver)
    clientserver
    exit 0
    ;;
versions)
    versions
    exit 0
    ;;
walsync)
    walsync
    exit 0
    ;;
features)
    features
    exit 0
    ;;
all) ;;
*)
    sed -n '2,12p' "$0"; exit 2
    ;;
esac
sh "$HERE/setup.sh" init
tools/collect --plan "$HERE/scaleup.toml"
tools/collect --plan "$HERE/syscalls.toml"
tools/collect --plan "$HERE/fio.toml"
# a parallel-query study and CPU profiles of the update workload (about 25 minutes more)
tools/collect --plan "$HERE/parallel.toml"
sh "$HERE/setup.sh" pg-build   # the profile study's server: PostgreSQL 15 built with symbols (kept once built)
tools/collect --plan "$HERE/profile.toml"
sh "$HERE/setup.sh" v-stop
sh "$HERE/setup.sh" stop
# the replication study: a primary and two standbys of their own (replication.sh), about 15 minutes
sh "$HERE/replication.sh" init
tools/collect --plan "$HERE/replication.toml"
sh "$HERE/replication.sh" stop
# the client/server study: pgbench here, the server over ssh, both monitored, the server profiled
clientserver
# the version study: PostgreSQL 15 against 18, both built here from Debian's source packages
versions
# WAL sync methods (pg_test_fsync, then wal_sync_method) and software interrupts (mpstat)
walsync
# table partitioning, foreign data wrappers and full-text search
features
