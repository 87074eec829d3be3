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

# A pgvector-capable server for the recall tests (tests/support/postgres.rs
# starts it as a separate cluster; the store's other PostgreSQL tests keep
# Debian's PostgreSQL 15, which has no pgvector package here). The `pgserver`
# wheel on PyPI bundles PostgreSQL 16.2 with pgvector 0.6.2; its
# `pgserver/pginstall` folder (bin, lib, share) and the `pgserver.libs` its
# binaries find libpq in (by an rpath relative to them) are unpacked into
# target/test-deps/pgvector in the wheel's layout, with the executable bits the
# zip records. Idempotent: a stamped install is left alone.
cd "$(dirname "$0")/../.."
PGSERVER_VERSION="0.1.4"
PGVECTOR_DIR="target/test-deps/pgvector"
PGVECTOR_STAMP="$PGVECTOR_DIR/.hecate-test-deps"
PGVECTOR_WANT="pgserver==$PGSERVER_VERSION"
PGVECTOR_BIN="$PGVECTOR_DIR/pgserver/pginstall/bin"
if [ -x "$PGVECTOR_BIN/postgres" ] && [ -f "$PGVECTOR_STAMP" ] \
    && [ "$(cat "$PGVECTOR_STAMP")" = "$PGVECTOR_WANT" ]; then
    echo "test-deps: $PGVECTOR_WANT (PostgreSQL with pgvector) already in $PGVECTOR_DIR"
    exit 0
fi
PYTHON="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 \
    "$PGVECTOR_WANT" -d "$work"
"$PYTHON" - "$work" <<'PY'
import os, sys, zipfile
work = sys.argv[1]
wheel = next(f for f in os.listdir(work) if f.endswith(".whl"))
prefixes = ("pgserver/pginstall/", "pgserver.libs/")
with zipfile.ZipFile(os.path.join(work, wheel)) as z:
    for info in z.infolist():
        if not info.filename.startswith(prefixes) or info.is_dir():
            continue
        target = os.path.join(work, "unpacked", info.filename)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as dst:
            dst.write(src.read())
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(target, (mode or 0o644) | 0o444)
PY
test -x "$work/unpacked/pgserver/pginstall/bin/postgres"
test -f "$work/unpacked/pgserver/pginstall/lib/postgresql/vector.so"
"$work/unpacked/pgserver/pginstall/bin/initdb" --version >/dev/null
rm -rf "$PGVECTOR_DIR"
mkdir -p "$(dirname "$PGVECTOR_DIR")"
mv "$work/unpacked" "$PGVECTOR_DIR"
chmod -R a+rX "$PGVECTOR_DIR"
echo "$PGVECTOR_WANT" > "$PGVECTOR_STAMP"
echo "test-deps: PostgreSQL $("$PGVECTOR_BIN/postgres" --version | awk '{print $3}') with pgvector in $PGVECTOR_BIN"
