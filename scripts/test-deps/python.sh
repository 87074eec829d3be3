#!/usr/bin/env bash
# Installs the Python tools the end-to-end tests drive (Schemathesis, for property
# testing the HTTP API against its OpenAPI document) into a venv under
# target/test-deps/venv. Idempotent: a venv whose pinned versions are already
# installed is left alone, so running it before every test run costs a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

SCHEMATHESIS_VERSION="4.32.5"
VENV="target/test-deps/venv"
STAMP="$VENV/.hecate-test-deps"
WANT="schemathesis==$SCHEMATHESIS_VERSION"

if [ -x "$VENV/bin/schemathesis" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "test-deps: $WANT already installed in $VENV"
    exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "test-deps: $PYTHON not found; install Python 3.9+ (with the venv module)" >&2
    exit 1
fi

rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$WANT"
"$VENV/bin/schemathesis" --version
echo "$WANT" > "$STAMP"
echo "test-deps: installed $WANT in $VENV"
