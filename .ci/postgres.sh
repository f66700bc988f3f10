#!/usr/bin/env bash
# A throwaway PostgreSQL for the catalog tests, on 127.0.0.1 and a free port.
#
#   source .ci/postgres.sh && start_postgres && trap stop_postgres EXIT   # as .ci/run does
#   bash .ci/postgres.sh start | stop                                     # by hand
#
# start_postgres installs Debian's `postgresql` when no initdb is found, makes a cluster
# under $TMPDIR/iceberg-ci-postgres (owned by an unprivileged user when run as root: postgres refuses
# root), starts it, creates the database `iceberg_test` and exports ICEBERG_TEST_POSTGRES_URL.

# Outside the checkout: the unprivileged server user may not be able to enter its path.
PG_ROOT="${PG_ROOT:-${TMPDIR:-/tmp}/iceberg-ci-postgres}"
PG_USER_OS="${PG_USER_OS:-iceberg_pg}"

_pg_find_bin() {
    if command -v initdb >/dev/null 2>&1; then return 0; fi
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ]; then PATH="$d:$PATH"; return 0; fi
    done
    return 1
}

_pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u "$PG_USER_OS" -- "$@"; else "$@"; fi
}

start_postgres() {
    if ! _pg_find_bin; then
        echo "postgres.sh: installing postgresql from Debian's packages" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        _pg_find_bin || { echo "postgres.sh: no initdb after install" >&2; return 1; }
    fi
    if [ "$(id -u)" = 0 ] && ! id "$PG_USER_OS" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER_OS"
    fi
    if [ -f "$PG_ROOT/data/postmaster.pid" ]; then
        _pg_as_owner pg_ctl -D "$PG_ROOT/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$PG_ROOT"
    mkdir -p "$PG_ROOT"
    if [ "$(id -u)" = 0 ]; then chown "$PG_USER_OS" "$PG_ROOT"; fi
    _pg_as_owner initdb -D "$PG_ROOT/data" -U iceberg --auth=trust -E UTF8 >"$PG_ROOT/initdb.log" 2>&1 \
        || { cat "$PG_ROOT/initdb.log" >&2; return 1; }
    PG_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    _pg_as_owner pg_ctl -D "$PG_ROOT/data" -l "$PG_ROOT/server.log" -w \
        -o "-h 127.0.0.1 -p $PG_PORT -k $PG_ROOT -c fsync=off -c max_connections=200" start >/dev/null \
        || { cat "$PG_ROOT/server.log" >&2; return 1; }
    _pg_as_owner createdb -h 127.0.0.1 -p "$PG_PORT" -U iceberg iceberg_test
    export ICEBERG_TEST_POSTGRES_URL="postgresql://iceberg@127.0.0.1:$PG_PORT/iceberg_test"
    echo "postgres.sh: $(pg_ctl --version) at $ICEBERG_TEST_POSTGRES_URL" >&2
}

stop_postgres() {
    _pg_find_bin || return 0
    if [ -f "$PG_ROOT/data/postmaster.pid" ]; then
        _pg_as_owner pg_ctl -D "$PG_ROOT/data" -m fast -w stop >/dev/null && echo "postgres.sh: stopped" >&2
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        start) start_postgres && echo "export ICEBERG_TEST_POSTGRES_URL=$ICEBERG_TEST_POSTGRES_URL" ;;
        stop) stop_postgres ;;
        *) echo "usage: $0 start|stop" >&2; exit 2 ;;
    esac
fi
