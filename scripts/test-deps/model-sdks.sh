#!/usr/bin/env bash
# Installs the official model SDKs that tests/interop/gateway_sdks.rs points at
# Hecate's model gateway (/v1), pinned and cached in a venv under
# target/test-deps/model-sdks/: the `openai` and `anthropic` Python packages.
# Idempotent: a stamp file records what is installed; a matching stamp costs a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR="target/test-deps/model-sdks"
PY_PKGS=("openai==3.57.0" "anthropic==2.14.0")
WANT="${PY_PKGS[*]}"
STAMP="$DIR/.hecate-test-deps"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "test-deps: model SDKs already installed in $DIR"
    exit 0
fi

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-deps: $PYTHON not found" >&2; exit 1; }

rm -rf "$DIR"
mkdir -p "$DIR"
"$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PY_PKGS[@]}"
"$DIR/venv/bin/python" -c 'import openai, anthropic; print("openai", openai.__version__, "anthropic", anthropic.__version__)'

echo "$WANT" > "$STAMP"
echo "test-deps: installed model SDKs in $DIR"
