#!/bin/sh
# The whole example campaign, as it was run for data/runs/example (about 65 minutes on 2 vCPUs, of which
# the replication study, last, about 15).
# Run from the repository root as root (the clusters run as the postgres OS user):
#   sh data/runs/example/run_campaign.sh
# Interrupted? Run it again: finished runs are skipped.
set -eu
HERE=$(dirname "$0")
sh "$HERE/setup.sh" init
tools/collect --plan "$HERE/scaleup.toml"
tools/collect --plan "$HERE/syscalls.toml"
tools/collect --plan "$HERE/fio.toml"
# issue 26: a parallel-query study and CPU profiles of the update workload (about 25 minutes more)
tools/collect --plan "$HERE/parallel.toml"
tools/collect --plan "$HERE/profile.toml"
sh "$HERE/setup.sh" stop
# the replication study: a primary and two standbys of their own (replication.sh), about 15 minutes
sh "$HERE/replication.sh" init
tools/collect --plan "$HERE/replication.toml"
sh "$HERE/replication.sh" stop
