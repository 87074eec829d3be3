#!/usr/bin/env bash
# Installs LiteLLM's proxy (`litellm[proxy]`, an exact pinned version) into a venv
# under target/test-deps/litellm/, for the model-gateway benchmark's comparison
# (`cargo bench --bench hub -- gateway`), which runs it in front of the same
# fixture model server as Hecate. Idempotent: a matching stamp costs a second.
# Not called by scripts/test: the bench says when it is missing, and its smoke
# run in `cargo test --all-targets` leaves LiteLLM out. (Newer releases pin
# proxy-extra packages the registry lacks: 1.110.2 `litellm-proxy`, 1.108.14
# `litellm-proxy-extras==0.4.110.post1`, 1.108.10
# `litellm-enterprise==0.1.79.post2`; 1.108.0 installs.)
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR="target/test-deps/litellm"
PY_PKGS=("litellm[proxy]==1.108.0")
WANT="${PY_PKGS[*]}"
STAMP="$DIR/.hecate-test-deps"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x "$DIR/venv/bin/litellm" ]; then
    echo "test-deps: LiteLLM proxy already installed in $DIR"
    exit 0
fi

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-deps: $PYTHON not found" >&2; exit 1; }

rm -rf "$DIR"
mkdir -p "$DIR"
"$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PY_PKGS[@]}"
"$DIR/venv/bin/litellm" --version

echo "$WANT" > "$STAMP"
echo "test-deps: installed $WANT in $DIR"
