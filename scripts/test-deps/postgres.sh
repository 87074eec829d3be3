#!/usr/bin/env bash
# Makes sure a PostgreSQL server is installed for the tests that run the store on
# PostgreSQL (tests/support/postgres.rs starts a throwaway cluster of its own with
# initdb and postgres in a temporary directory, on a free port). Debian's
# postgresql-15 package, installed with apt-get when its binaries are missing and
# this runs as root. Running as root, the tests start the server as the `postgres`
# user the package creates (PostgreSQL refuses to run as root). The TLS tests make a
# throwaway CA with the `openssl` command (Debian's openssl package, which
# postgresql's ssl-cert dependency usually brings along).
#
# Idempotent: with the binaries present it only prints where they are.
set -euo pipefail

PG_MAJOR="15"
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"

present() {
    [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/psql" ]
}

if ! present; then
    if [ "$(id -u)" != "0" ]; then
        echo "test-deps: PostgreSQL $PG_MAJOR is missing ($PG_BIN) and this is not root;" \
            "install Debian's postgresql-$PG_MAJOR package (or set HECATE_TEST_PG_BIN)" >&2
        exit 1
    fi
    echo "test-deps: installing postgresql-$PG_MAJOR (the store's PostgreSQL tests start it)"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$PG_MAJOR" >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$PG_MAJOR" >/dev/null
    fi
    present
fi

if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
    echo "test-deps: creating the postgres system user (the tests run the server as it)"
    useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
fi

if ! command -v openssl >/dev/null 2>&1; then
    if [ "$(id -u)" != "0" ]; then
        echo "test-deps: the openssl command is missing and this is not root;" \
            "install Debian's openssl package (the PostgreSQL TLS tests make certificates with it)" >&2
        exit 1
    fi
    echo "test-deps: installing openssl (the PostgreSQL TLS tests make certificates with it)"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
    fi
fi

echo "test-deps: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') in $PG_BIN"
