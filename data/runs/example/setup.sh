#!/bin/sh
# Servers for the example campaign (data/runs/example/*.toml): two PostgreSQL clusters of Debian's
# PostgreSQL, page checksums off and on, and for the version study two clusters of PostgreSQL 15 and 18 built
# here (pg-build), all listening on 127.0.0.1 and one port only, one running at a time.
#
#   sh setup.sh install         apt-get install the programs the campaign uses (needs root)
#   sh setup.sh init            initdb both clusters under $BASE (as the postgres OS user when run as root)
#   sh setup.sh start CONFIG    stop every other example cluster, start CONFIG (checksums-off|checksums-on),
#                               create the databases bench_read and bench_update if missing
#   sh setup.sh stop            stop both clusters
#   sh setup.sh wal-sync METHOD start checksums-off with wal_sync_method = METHOD (ALTER SYSTEM, reloaded);
#                               start resets it, so that the other studies run with the default
#   sh setup.sh fio-file        stop both clusters; write the fio test file (256 MiB of random data)
#   sh setup.sh query-data S    the parallel-query study's data (parallel.toml): pgbench's tables at scale S in
#                               bench_query, analysed (once per scale; the running cluster)
#   sh setup.sh sshd-start      the client/server study's "server host" (clientserver.toml): an OpenSSH server
#                               on 127.0.0.1 at a free port with throw-away host and user keys under $BASE/ssh,
#                               and $BASE/ssh/ssh_config naming it kansoku-example-server (as the tests do)
#                               answering as hostname $KANSOKU_EXAMPLE_SERVER_HOSTNAME (default dbserver)
#   sh setup.sh sshd-stop       stop it (its keys stay; clean removes them)
#   sh setup.sh clean           stop all clusters and sshd, and delete $BASE (the builds of pg-build too)
#   sh setup.sh pg-build        the version study (versions.toml): PostgreSQL 15 and 18 built from Debian's source
#                               packages (postgresql-15 from bookworm, postgresql-18 from sid), downloaded with a
#                               private apt state under $BASE/apt (the machine's apt configuration untouched), the
#                               checksums verified against the signed Sources indexes, both built alike (same gcc,
#                               CFLAGS="-O2 -g -fno-omit-frame-pointer", not stripped) into $BASE/pg15 and
#                               $BASE/pg18, each with BUILD.toml saying how; a built prefix is kept (delete it to
#                               rebuild; 4 to 14 minutes a version on 2 cores, as busy as they are)
#   sh setup.sh v-start MAJOR   stop every other example cluster, initdb $BASE/v<MAJOR> with $BASE/pg<MAJOR> if
#                               missing (the settings of init), start it, create bench_read and bench_update
#   sh setup.sh v-stop          stop both version clusters
#   sh setup.sh part-data       the partitioning study (partition.toml): sql/partition_data.sql into bench_part
#                               on the checksums-off cluster (once; part-reset before each run)
#   sh setup.sh part-reset      both tables of bench_part back to days 1 to 30, vacuumed, then a checkpoint
#   sh setup.sh fdw-init        the FDW study (fdw.toml, fdw_write.toml): an "external" cluster $BASE/fdw-ext on
#                               port $FDW_PORT (pgbench's tables at scale 1 and sql/fdw_addrbook.sql in database
#                               ext), and on the checksums-off cluster one database per pattern,
#                               bench_fdw_<addrbook>_<accounts>, each table local or a postgres_fdw foreign table
#                               of ext (pgbench_history follows pgbench_accounts); once, kept
#   sh setup.sh fdw-stop        stop the external cluster
#   sh setup.sh fts-data        the full-text search study (fts.toml): sql/fts_data.sql into bench_fts (once)
#   sh setup.sh fts-index IDX   bench_fts back to its 200,000 records, with a pg_trgm GIN index on the title,
#                               the description, or none (IDX: title|description|none), vacuumed, analysed
#
# Environment: KANSOKU_EXAMPLE_BASE (default /tmp/kansoku_example), KANSOKU_EXAMPLE_PORT (default 5433),
# PG_BINDIR (default: the newest /usr/lib/postgresql/*/bin), KANSOKU_EXAMPLE_FDW_PORT
# (default 5434).
set -eu
BASE=${KANSOKU_EXAMPLE_BASE:-/tmp/kansoku_example}
PORT=${KANSOKU_EXAMPLE_PORT:-5433}
SERVER_HOSTNAME=${KANSOKU_EXAMPLE_SERVER_HOSTNAME:-dbserver}
FDW_PORT=${KANSOKU_EXAMPLE_FDW_PORT:-5434}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
CONFIGS="checksums-off checksums-on"

VERSIONS="15 18"

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
running() { [ -f "$BASE/$1/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$BASE/$1" status >/dev/null 2>&1; }
# the version study's clusters $BASE/v<MAJOR>, each run by its own build $BASE/pg<MAJOR>
v_running() { [ -f "$BASE/v$1/postmaster.pid" ] && as_pg "$BASE/pg$1/bin/pg_ctl" -D "$BASE/v$1" status >/dev/null 2>&1; }
v_stop() { for v in $VERSIONS; do v_running "$v" && as_pg "$BASE/pg$v/bin/pg_ctl" -D "$BASE/v$v" -m fast -w stop; done; true; }
# the settings of every example cluster, appended to its postgresql.conf
settings() {
    as_pg sh -c "cat >> '$1/postgresql.conf'" <<CONF
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
}
sql() {  # each argument a statement, run on the running checksums cluster's postgres database
    for q in "$@"; do as_pg "$BIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc "$q" >/dev/null; done
}
psql_on() {  # $1: port, $2: database, then psql's arguments
    port=$1; db=$2; shift 2
    as_pg "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d "$db" "$@"
}
ensure_db() {  # $1: port, $2: database
    psql_on "$1" postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$2'" | grep -q 1 ||
        as_pg "$BIN/createdb" -h 127.0.0.1 -p "$1" -U postgres "$2"
}
fdw_running() { [ -f "$BASE/fdw-ext/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$BASE/fdw-ext" status >/dev/null 2>&1; }
create_dbs() {  # $1: the bin directory of the running cluster
    for db in bench_read bench_update bench_query; do
        as_pg "$1/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc \
            "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 ||
            as_pg "$1/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$db"
    done
}

case "${1:-}" in
install)
    apt-get install -y postgresql sysstat fio strace procps linux-perf openssh-server openssh-client
    # pg-build: PostgreSQL 15 and 18 from Debian's source packages (18's release tarball no longer carries
    # the generated parser and scanner files: bison and flex)
    apt-get install -y gcc make libc6-dev zlib1g-dev bzip2 bison flex debian-archive-keyring
    ;;
init)
    mkdir -p "$BASE/sock"
    [ "$(id -u)" = 0 ] && chown postgres: "$BASE" "$BASE/sock"
    for cfg in $CONFIGS; do
        [ -f "$BASE/$cfg/PG_VERSION" ] && continue
        extra=""; [ "$cfg" = checksums-on ] && extra="--data-checksums"
        as_pg "$BIN/initdb" -D "$BASE/$cfg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 $extra
        settings "$BASE/$cfg"
    done
    ;;
start)
    cfg=${2:?usage: setup.sh start checksums-off|checksums-on}
    v_stop  # the version study's clusters listen on the same port
    for other in $CONFIGS; do
        [ "$other" != "$cfg" ] && running "$other" && as_pg "$BIN/pg_ctl" -D "$BASE/$other" -m fast -w stop
    done
    if ! running "$cfg"; then
        as_pg "$BIN/pg_ctl" -D "$BASE/$cfg" -l "$BASE/$cfg.log" -w start
    fi
    create_dbs "$BIN"
    [ "${3:-}" = keep ] || sql "ALTER SYSTEM RESET wal_sync_method" "SELECT pg_reload_conf()"
    ;;
wal-sync)
    method=${2:?usage: setup.sh wal-sync fdatasync|fsync|open_datasync|open_sync}
    sh "$0" start checksums-off keep
    sql "ALTER SYSTEM SET wal_sync_method = '$method'" "SELECT pg_reload_conf()"
    ;;
v-start)
    major=${2:?usage: setup.sh v-start 15|18}
    vbin=$BASE/pg$major/bin
    [ -x "$vbin/postgres" ] || { echo "$BASE/pg$major is not built: sh setup.sh pg-build" >&2; exit 1; }
    sh "$0" stop  # the checksums clusters listen on the same port
    for other in $VERSIONS; do
        [ "$other" != "$major" ] && v_running "$other" && as_pg "$BASE/pg$other/bin/pg_ctl" -D "$BASE/v$other" -m fast -w stop
    done
    mkdir -p "$BASE/sock"
    [ "$(id -u)" = 0 ] && chown postgres: "$BASE" "$BASE/sock"
    if [ ! -f "$BASE/v$major/PG_VERSION" ]; then
        # page checksums off in both: initdb of PostgreSQL 18 turns them on unless told not to
        extra=""; "$vbin/initdb" --help | grep -q -- --no-data-checksums && extra="--no-data-checksums"
        as_pg "$vbin/initdb" -D "$BASE/v$major" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 $extra
        settings "$BASE/v$major"
    fi
    # the port given now, whatever the cluster was created with
    v_running "$major" || as_pg "$vbin/pg_ctl" -D "$BASE/v$major" -l "$BASE/v$major.log" -o "-p $PORT" -w start
    create_dbs "$vbin"
    ;;
v-stop)
    v_stop
    ;;
part-data)
    sh "$0" start checksums-off keep
    ensure_db "$PORT" bench_part
    psql_on "$PORT" bench_part -tAc "SELECT 1 FROM pg_class WHERE relname = 'log_part_d32'" | grep -q 1 ||
        { psql_on "$PORT" bench_part -1 -f "$HERE/sql/partition_data.sql" &&
          psql_on "$PORT" bench_part -c "VACUUM ANALYZE log_plain" -c "VACUUM ANALYZE log_part"; }
    ;;
part-reset)
    psql_on "$PORT" bench_part -f "$HERE/sql/partition_reset.sql"
    ;;
fdw-init)
    sh "$0" start checksums-off keep
    if [ ! -f "$BASE/fdw-ext/PG_VERSION" ]; then
        as_pg "$BIN/initdb" -D "$BASE/fdw-ext" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8
        settings "$BASE/fdw-ext"
    fi
    fdw_running || as_pg "$BIN/pg_ctl" -D "$BASE/fdw-ext" -l "$BASE/fdw-ext.log" -o "-p $FDW_PORT" -w start
    if ! psql_on "$FDW_PORT" postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'ext'" | grep -q 1; then
        ensure_db "$FDW_PORT" ext
        pgbench -i -q -s 1 -h 127.0.0.1 -p "$FDW_PORT" -U postgres ext
        psql_on "$FDW_PORT" ext -1 -f "$HERE/sql/fdw_addrbook.sql"
    fi
    for addrbook in local foreign; do
        for accounts in local foreign; do
            db=bench_fdw_${addrbook}_$accounts
            psql_on "$PORT" postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 && continue
            ensure_db "$PORT" "$db"
            pgbench -i -q -s 1 -h 127.0.0.1 -p "$PORT" -U postgres "$db"
            psql_on "$PORT" "$db" -c "CREATE EXTENSION postgres_fdw" \
                -c "CREATE SERVER ext FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '$FDW_PORT', dbname 'ext')" \
                -c "CREATE USER MAPPING FOR postgres SERVER ext OPTIONS (user 'postgres')"
            if [ "$addrbook" = local ]; then
                psql_on "$PORT" "$db" -1 -f "$HERE/sql/fdw_addrbook.sql"
            else
                psql_on "$PORT" "$db" -c "IMPORT FOREIGN SCHEMA public LIMIT TO (addrbook) FROM SERVER ext INTO public"
            fi
            if [ "$accounts" = foreign ]; then
                psql_on "$PORT" "$db" -c "DROP TABLE pgbench_accounts, pgbench_history" \
                    -c "IMPORT FOREIGN SCHEMA public LIMIT TO (pgbench_accounts, pgbench_history) FROM SERVER ext INTO public"
            fi
            psql_on "$PORT" "$db" -c "VACUUM ANALYZE"
        done
    done
    ;;
fdw-stop)
    fdw_running && as_pg "$BIN/pg_ctl" -D "$BASE/fdw-ext" -m fast -w stop
    true
    ;;
fts-data)
    sh "$0" start checksums-off keep
    ensure_db "$PORT" bench_fts
    psql_on "$PORT" bench_fts -tAc "SELECT 1 FROM pg_class WHERE relname = 'videos'" | grep -q 1 ||
        { psql_on "$PORT" bench_fts -1 -f "$HERE/sql/fts_data.sql" && psql_on "$PORT" bench_fts -c "VACUUM ANALYZE videos"; }
    ;;
fts-index)
    idx=${2:?usage: setup.sh fts-index title|description|none}
    case "$idx" in title|description|none) ;; *) echo "fts-index: title, description or none, not $idx" >&2; exit 2 ;; esac
    psql_on "$PORT" bench_fts -c "DROP INDEX IF EXISTS videos_title_trgm, videos_description_trgm" \
        -c "DELETE FROM videos WHERE id > 200000" -c "VACUUM videos"
    [ "$idx" = none ] || psql_on "$PORT" bench_fts -c "SET maintenance_work_mem = '256MB'" \
        -c "CREATE INDEX videos_${idx}_trgm ON videos USING gin ((record->>'$idx') gin_trgm_ops)"
    psql_on "$PORT" bench_fts -c "ANALYZE videos" -c "CHECKPOINT"
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
pg-build)
    # Debian's source packages through deb.debian.org, with an apt state of our own: the machine's sources.list,
    # lists and cache stay as they are. apt checks each file it downloads against the Sources index whose
    # Release file the Debian archive keyring signs; the orig tarball's SHA-256 is checked again below.
    built=0
    for v in $VERSIONS; do [ -f "$BASE/pg$v/BUILD.toml" ] && [ -x "$BASE/pg$v/bin/postgres" ] && built=$((built + 1)); done
    if [ "$built" = 2 ]; then
        echo "$BASE/pg15, $BASE/pg18: built already (their BUILD.toml); delete one to rebuild it"; exit 0
    fi
    for tool in gcc make bison flex bzip2; do
        command -v "$tool" >/dev/null || { echo "pg-build needs $tool: sh setup.sh install" >&2; exit 1; }
    done
    APT=$BASE/apt
    KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
    mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/sources.list.d" "$BASE/src"
    cat > "$APT/sources.list" <<LIST
deb-src [signed-by=$KEYRING] http://deb.debian.org/debian bookworm main
deb-src [signed-by=$KEYRING] http://deb.debian.org/debian sid main
LIST
    aptp() {
        cmd=$1; shift
        "$cmd" -o Dir::Etc::SourceList="$APT/sources.list" -o Dir::Etc::SourceParts="$APT/sources.list.d" \
            -o Dir::State::Lists="$APT/lists" -o Dir::Cache="$APT/cache" -o APT::Sandbox::User=root "$@"
    }
    aptp apt-get update
    CFLAGS_BUILD="-O2 -g -fno-omit-frame-pointer"
    for spec in 15:bookworm 18:sid; do
        major=${spec%%:*}; suite=${spec#*:}; pkg=postgresql-$major; prefix=$BASE/pg$major
        if [ -f "$prefix/BUILD.toml" ] && [ -x "$prefix/bin/postgres" ]; then
            echo "$prefix: built already ($prefix/BUILD.toml); delete it to rebuild"; continue
        fi
        dl=$BASE/src/$pkg
        rm -rf "$dl"; mkdir -p "$dl"
        (cd "$dl" && aptp apt-get source --download-only "$pkg/$suite")
        dsc=$(ls "$dl"/"$pkg"_*.dsc)
        version=$(sed -n 's/^Version: //p' "$dsc")
        orig=$(ls "$dl"/"$pkg"_*.orig.tar.*)
        sha=$(sha256sum "$orig" | cut -d' ' -f1)
        # the tarball's SHA-256 as the signed Sources index of $suite lists it for this version
        indexed=$(aptp apt-cache showsrc "$pkg" | awk -v v="$version" -v f="$(basename "$orig")" '
            /^Version: / { cur = $2 } /^Checksums-Sha256:/ { in_sha = 1; next } /^[^ ]/ { in_sha = 0 }
            in_sha && cur == v && $3 == f { print $1 }' | sort -u)
        if [ "$indexed" != "$sha" ]; then
            echo "$orig: sha256 $sha, the Sources index says '${indexed}'" >&2; exit 1
        fi
        echo "$orig: sha256 $sha matches the Sources index of $suite ($pkg $version)"
        build=$BASE/src/build-$major
        rm -rf "$build"; mkdir -p "$build"
        tar -xf "$orig" -C "$build" --strip-components=1
        # the build named in the version string, as Debian's "15.18 (Debian 15.18-0+deb12u1)": every run's
        # SELECT version() and server_version (run.toml [server]) then say which build served it
        extra=" (kansoku build of Debian source $pkg $version, orig sha256 $(echo "$sha" | cut -c1-12), CFLAGS $CFLAGS_BUILD)"
        configure="./configure --prefix=$prefix --without-icu --without-readline"
        (cd "$build" && CC=gcc CFLAGS="$CFLAGS_BUILD" $configure --with-extra-version="$extra" &&
            make -j2 && make install)
        pg_version=$("$prefix/bin/postgres" --version)
        cat > "$prefix/BUILD.toml" <<TOML
# How $prefix was built (data/runs/example/setup.sh pg-build)
[build]
postgres_version = "$pg_version"
source_package = "$pkg"
source_version = "$version"
source_suite = "$suite"
source_mirror = "http://deb.debian.org/debian"
orig_tarball = "$(basename "$orig")"
orig_sha256 = "$sha"
debian_patches = "not applied (the upstream orig tarball, as released)"
configure = "CC=gcc CFLAGS=\"$CFLAGS_BUILD\" $configure --with-extra-version=\"$extra\""
cflags = "$CFLAGS_BUILD"
compiler = "$(gcc --version | head -n 1)"
# used only where the tarball lacks the generated parser and scanner files (18's; 15's carries them)
bison = "$(bison --version | head -n 1)"
flex = "$(flex --version | head -n 1)"
make = "make -j2 && make install"
stripped = false
built_at = "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
TOML
        echo "$prefix: $pg_version"
    done
    ;;
clean)
    sh "$0" stop
    sh "$0" fdw-stop
    v_stop
    sh "$0" sshd-stop
    rm -rf "$BASE"
    ;;
*)
    sed -n '2,47p' "$0"; exit 2
    ;;
esac
