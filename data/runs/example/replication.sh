#!/bin/sh
# Servers for the example's replication study (replication.toml): a PostgreSQL 15 primary and two
# streaming standbys (pg_basebackup), three clusters on 127.0.0.1 at consecutive ports, as FY2017 chapter 8
# ran its master and slaves on one host machine. The standbys connect as application_name s1 and s2.
#
#   sh replication.sh init          initdb the primary, create bench_repl, pg_basebackup s1 and s2, each with
#                                   a replication slot (as the postgres OS user when run as root); leaves
#                                   everything stopped
#   sh replication.sh pattern P     start the primary and the standbys pattern P needs, stop the others, set
#                                   synchronous_standby_names, wait until the standbys stream in the wanted
#                                   sync_state, then pgbench -i -s 10 (replicated to the running standbys).
#                                   P: none | async-1 | async-2 | sync-1 | sync-2 | mixed-1s1a
#                                   (mixed-1s1a: s1 synchronous, s2 asynchronous)
#   sh replication.sh prepare       before each run (FY2017 8.3.5): VACUUM, then CHECKPOINT on the primary
#   sh replication.sh stop          stop the three clusters
#   sh replication.sh clean         stop them and delete $BASE
#
# Environment: KANSOKU_REPL_BASE (default /tmp/kansoku_replication), KANSOKU_REPL_PORT (the primary's port,
# default 5440; the standbys take the next two), PG_BINDIR (default /usr/lib/postgresql/15/bin).
set -eu
BASE=${KANSOKU_REPL_BASE:-/tmp/kansoku_replication}
PORT=${KANSOKU_REPL_PORT:-5440}
BIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
DB=bench_repl
SCALE=10

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
running() { [ -f "$BASE/$1/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$BASE/$1" status >/dev/null 2>&1; }
start() { running "$1" || as_pg "$BIN/pg_ctl" -D "$BASE/$1" -l "$BASE/$1.log" -w -t 120 start >/dev/null; }
stop() { if running "$1"; then as_pg "$BIN/pg_ctl" -D "$BASE/$1" -m fast -w stop >/dev/null; fi; }
sql() { as_pg "$BIN/psql" -X -q -At -h 127.0.0.1 -p "$PORT" -U postgres -d "${2:-postgres}" -c "$1"; }
port_of() { case "$1" in primary) echo "$PORT";; s1) echo $((PORT + 1));; s2) echo $((PORT + 2));; esac; }

wait_for() {  # SQL that must print "t" on the primary, within 120 s
    i=0
    until [ "$(sql "$1")" = t ]; do
        i=$((i + 1)); [ $i -gt 240 ] && { echo "replication.sh: timed out waiting for: $1" >&2; exit 1; }
        sleep 0.5
    done
}

case "${1:-}" in
init)
    [ -x "$BIN/initdb" ] || { echo "replication.sh: $BIN/initdb not found (apt-get install postgresql-15, or set PG_BINDIR)" >&2; exit 5; }
    mkdir -p "$BASE/sock"
    [ "$(id -u)" = 0 ] && chown postgres: "$BASE" "$BASE/sock"
    if [ ! -f "$BASE/primary/PG_VERSION" ]; then
        as_pg "$BIN/initdb" -D "$BASE/primary" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
        as_pg sh -c "cat >> '$BASE/primary/postgresql.conf'" <<CONF
# kansoku example: replication study (FY2017 chapter 8)
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$BASE/sock'
wal_level = replica
max_wal_senders = 10
hot_standby = on
synchronous_commit = on
autovacuum = off
shared_buffers = 256MB
max_connections = 50
checkpoint_timeout = 30min
max_wal_size = 4GB
log_checkpoints = on
log_line_prefix = '%m [%p] '
CONF
    fi
    start primary
    [ "$(sql "SELECT 1 FROM pg_database WHERE datname = '$DB'")" = 1 ] ||
        as_pg "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DB"
    for s in s1 s2; do
        [ -f "$BASE/$s/PG_VERSION" ] && continue
        # a physical replication slot per standby: the primary keeps the WAL a stopped standby still needs
        as_pg "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PORT" -U postgres -D "$BASE/$s" -X stream -R -c fast -C -S "$s"
        as_pg sh -c "cat >> '$BASE/$s/postgresql.auto.conf'" <<CONF
port = $(port_of "$s")
primary_conninfo = 'host=127.0.0.1 port=$PORT user=postgres application_name=$s'
CONF
    done
    stop primary
    ;;
pattern)
    p=${2:?usage: replication.sh pattern none|async-1|async-2|sync-1|sync-2|mixed-1s1a}
    case "$p" in
        none) standbys=""; names="";;
        async-1) standbys="s1"; names="";;
        async-2) standbys="s1 s2"; names="";;
        sync-1) standbys="s1"; names="s1";;
        sync-2) standbys="s1 s2"; names="FIRST 2 (s1, s2)";;
        mixed-1s1a) standbys="s1 s2"; names="s1";;
        *) echo "replication.sh: unknown pattern $p" >&2; exit 2;;
    esac
    start primary
    # no synchronous standby while standbys come and go (a commit would wait for a stopped one)
    sql "ALTER SYSTEM SET synchronous_standby_names = ''" >/dev/null
    sql "SELECT pg_reload_conf()" >/dev/null
    for s in s1 s2; do
        case " $standbys " in *" $s "*) start "$s";; *) stop "$s";; esac
    done
    n=$(echo $standbys | wc -w)
    wait_for "SELECT count(*) = $n FROM pg_stat_replication WHERE state = 'streaming'"
    sql "ALTER SYSTEM SET synchronous_standby_names = '$names'" >/dev/null
    sql "SELECT pg_reload_conf()" >/dev/null
    nsync=$(case "$p" in sync-1|mixed-1s1a) echo 1;; sync-2) echo 2;; *) echo 0;; esac)
    wait_for "SELECT count(*) FILTER (WHERE sync_state = 'sync') = $nsync FROM pg_stat_replication"
    echo "pattern $p: standbys [$standbys], synchronous_standby_names = '$names'"
    as_pg "$BIN/pgbench" -i -q -s "$SCALE" -h 127.0.0.1 -p "$PORT" -U postgres "$DB"
    ;;
prepare)
    as_pg "$BIN/vacuumdb" -q -z -h 127.0.0.1 -p "$PORT" -U postgres -d "$DB"
    sql "CHECKPOINT" >/dev/null
    ;;
stop)
    for c in s1 s2 primary; do [ -d "$BASE/$c" ] && stop "$c"; done
    true
    ;;
clean)
    sh "$0" stop
    rm -rf "$BASE"
    ;;
*)
    sed -n '2,/^set -eu/p' "$0" | grep '^#'; exit 2
    ;;
esac
