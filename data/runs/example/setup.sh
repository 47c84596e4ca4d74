#!/bin/sh
# Servers for the example campaign (data/runs/example/*.toml): two PostgreSQL clusters of Debian's
# PostgreSQL, page checksums off and on, listening on 127.0.0.1 only, one running at a time.
#
#   sh setup.sh install         apt-get install the programs the campaign uses (needs root)
#   sh setup.sh init            initdb both clusters under $BASE (as the postgres OS user when run as root)
#   sh setup.sh start CONFIG    stop any other example cluster, start CONFIG (checksums-off|checksums-on),
#                               create the databases bench_read and bench_update if missing
#   sh setup.sh stop            stop both clusters
#   sh setup.sh fio-file        stop both clusters; write the fio test file (256 MiB of random data)
#   sh setup.sh query-data S    the parallel-query study's data (parallel.toml): pgbench's tables at scale S in
#                               bench_query, analysed (once per scale; the running cluster)
#   sh setup.sh sshd-start      the client/server study's "server host" (clientserver.toml): an OpenSSH server
#                               on 127.0.0.1 at a free port with throw-away host and user keys under $BASE/ssh,
#                               and $BASE/ssh/ssh_config naming it kansoku-example-server (as the tests do)
#                               answering as hostname $KANSOKU_EXAMPLE_SERVER_HOSTNAME (default dbserver)
#   sh setup.sh sshd-stop       stop it (its keys stay; clean removes them)
#   sh setup.sh clean           stop both clusters and sshd, and delete $BASE
#
# Environment: KANSOKU_EXAMPLE_BASE (default /tmp/kansoku_example), KANSOKU_EXAMPLE_PORT (default 5433),
# PG_BINDIR (default: the newest /usr/lib/postgresql/*/bin).
set -eu
BASE=${KANSOKU_EXAMPLE_BASE:-/tmp/kansoku_example}
PORT=${KANSOKU_EXAMPLE_PORT:-5433}
SERVER_HOSTNAME=${KANSOKU_EXAMPLE_SERVER_HOSTNAME:-dbserver}
BIN=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
CONFIGS="checksums-off checksums-on"

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
running() { [ -f "$BASE/$1/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$BASE/$1" status >/dev/null 2>&1; }

case "${1:-}" in
install)
    apt-get install -y postgresql sysstat fio strace procps linux-perf openssh-server openssh-client
    ;;
init)
    mkdir -p "$BASE/sock"
    [ "$(id -u)" = 0 ] && chown postgres: "$BASE" "$BASE/sock"
    for cfg in $CONFIGS; do
        [ -f "$BASE/$cfg/PG_VERSION" ] && continue
        extra=""; [ "$cfg" = checksums-on ] && extra="--data-checksums"
        as_pg "$BIN/initdb" -D "$BASE/$cfg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 $extra
        as_pg sh -c "cat >> '$BASE/$cfg/postgresql.conf'" <<CONF
# kansoku example campaign
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$BASE/sock'
autovacuum = off
shared_buffers = 1GB
max_connections = 50
checkpoint_timeout = 30min
max_wal_size = 4GB
CONF
    done
    ;;
start)
    cfg=${2:?usage: setup.sh start checksums-off|checksums-on}
    for other in $CONFIGS; do
        [ "$other" != "$cfg" ] && running "$other" && as_pg "$BIN/pg_ctl" -D "$BASE/$other" -m fast -w stop
    done
    if ! running "$cfg"; then
        as_pg "$BIN/pg_ctl" -D "$BASE/$cfg" -l "$BASE/$cfg.log" -w start
    fi
    for db in bench_read bench_update bench_query; do
        as_pg "$BIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc \
            "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 ||
            as_pg "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$db"
    done
    ;;
stop)
    for cfg in $CONFIGS; do running "$cfg" && as_pg "$BIN/pg_ctl" -D "$BASE/$cfg" -m fast -w stop; done
    true
    ;;
fio-file)
    sh "$0" stop
    mkdir -p "$BASE/fio"
    [ -f "$BASE/fio/fio.dat" ] ||
        dd if=/dev/urandom of="$BASE/fio/fio.dat" bs=1M count=256 oflag=direct conv=fsync status=none
    ;;
query-data)
    scale=${2:?usage: setup.sh query-data SCALE}
    have=$(as_pg "$BIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d bench_query -tAc \
        "SELECT count(*) / 100000 FROM pgbench_accounts" 2>/dev/null || echo 0)
    if [ "$have" != "$scale" ]; then
        pgbench -i -q -s "$scale" -h 127.0.0.1 -p "$PORT" -U postgres bench_query
    fi
    as_pg "$BIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d bench_query -c "VACUUM ANALYZE"
    ;;
sshd-start)
    SSH=$BASE/ssh
    if [ -f "$SSH/sshd.pid" ] && kill -0 "$(cat "$SSH/sshd.pid")" 2>/dev/null; then
        echo "sshd already runs ($SSH/ssh_config)"; exit 0
    fi
    mkdir -p "$SSH"; chmod 700 "$SSH"
    for k in host_key user_key; do
        [ -f "$SSH/$k" ] || ssh-keygen -q -t ed25519 -N "" -C "kansoku-example-$k" -f "$SSH/$k"
    done
    cp "$SSH/user_key.pub" "$SSH/authorized_keys"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    login=$(id -un)
    cat > "$SSH/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $SSH/host_key
PidFile $SSH/sshd.pid
AuthorizedKeysFile $SSH/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowUsers $login
LogLevel ERROR
CONF
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$SSH/host_key.pub")" > "$SSH/known_hosts"
    cat > "$SSH/ssh_config" <<CONF
Host kansoku-example-server
    HostName 127.0.0.1
    Port $port
    User $login
    IdentityFile $SSH/user_key
    IdentitiesOnly yes
    IdentityAgent none
    UserKnownHostsFile $SSH/known_hosts
    StrictHostKeyChecking yes
CONF
    [ "$(id -u)" = 0 ] && mkdir -p /run/sshd  # sshd's privilege separation directory
    # the "server host" answers with a hostname of its own (a UTS namespace), as a second machine would: its
    # files print it, and kansoku refuses two hosts of one run with one hostname (docs/ingest.md)
    sshd_bin=$(command -v sshd || echo /usr/sbin/sshd)
    if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
        unshare --uts sh -c 'hostname "$1" && exec "$2" -f "$3"' sh "$SERVER_HOSTNAME" "$sshd_bin" "$SSH/sshd_config"
    else
        echo "sshd-start needs root and unshare to give the server host its own hostname" >&2; exit 1
    fi
    i=0; until ssh -F "$SSH/ssh_config" -o BatchMode=yes kansoku-example-server true 2>/dev/null; do
        i=$((i + 1)); [ "$i" -lt 50 ] || { echo "sshd on port $port does not answer" >&2; exit 1; }; sleep 0.2
    done
    echo "sshd on 127.0.0.1:$port: ssh -F $SSH/ssh_config kansoku-example-server"
    ;;
sshd-stop)
    SSH=$BASE/ssh
    if [ -f "$SSH/sshd.pid" ]; then kill "$(cat "$SSH/sshd.pid")" 2>/dev/null || true; rm -f "$SSH/sshd.pid"; fi
    ;;
clean)
    sh "$0" stop
    sh "$0" sshd-stop
    rm -rf "$BASE"
    ;;
*)
    sed -n '2,23p' "$0"; exit 2
    ;;
esac
