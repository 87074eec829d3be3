#!/usr/bin/env bash
# Installs what the console's browser tests (tests/interop/console_browser.rs,
# driving tests/console/*.mjs) need, and checks the console's vendored libraries:
#
#   chromium (Debian's package, /usr/bin/chromium)   the real browser, run headless
#   playwright-core 1.64.1                           drives it (no browser download)
#   marked 18.2.1, eventsource-parser 4.1.3          what console/vendor/ is copied from
#
# pinned by scripts/test-deps/console/package{,-lock}.json, into
# target/test-deps/console. Idempotent: keyed by a hash of those files and this
# script. The vendor check runs every time: console/vendor/ must hold exactly the
# files the pinned packages ship, so the embedded console is what its source says.
set -euo pipefail
cd "$(dirname "$0")/../.."

SRC="scripts/test-deps/console"
DEST="target/test-deps/console"
STAMP="$DEST/.hecate-test-deps"
MODULES="$DEST/node_modules"

want=$(cat "$SRC/package.json" "$SRC/package-lock.json" scripts/test-deps/console.sh | sha256sum | cut -d' ' -f1)

# The tests launch /usr/bin/chromium by that path.
ensure_chromium() {
    [ -x /usr/bin/chromium ] && return 0
    if [ "$(id -u)" != "0" ]; then
        echo "test-deps: chromium is missing and this is not root: install Debian's chromium package" >&2
        return 1
    fi
    echo "test-deps: installing Debian's chromium"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
    [ -x /usr/bin/chromium ]
}

check_vendor() {
    local pair vendored shipped status=0
    for pair in \
        "console/vendor/marked.esm.js:$MODULES/marked/lib/marked.esm.js" \
        "console/vendor/eventsource-parser/parse.js:$MODULES/eventsource-parser/dist/parse.js" \
        "console/vendor/eventsource-parser/errors.js:$MODULES/eventsource-parser/dist/errors.js"; do
        vendored=${pair%%:*}
        shipped=${pair#*:}
        if ! cmp -s "$vendored" "$shipped"; then
            echo "test-deps: $vendored is not the file the pinned package ships ($shipped);" \
                "copy it again: cp $shipped $vendored" >&2
            status=1
        fi
    done
    return "$status"
}

ensure_chromium
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -d "$MODULES/playwright-core" ]; then
    echo "test-deps: console test packages already installed in $DEST"
else
    started=$SECONDS
    rm -rf "$DEST"
    mkdir -p "$DEST"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
    (cd "$DEST" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error 2>&1 | grep -v EBADENGINE || true)
    [ -d "$MODULES/playwright-core" ] || { echo "test-deps: npm did not install playwright-core" >&2; exit 1; }
    echo "$want" > "$STAMP"
    echo "test-deps: console test packages installed in $((SECONDS - started)) s"
fi
check_vendor
echo "test-deps: $(/usr/bin/chromium --version 2>/dev/null | head -n 1), playwright-core $(node -p "require('./$MODULES/playwright-core/package.json').version")"
