#!/bin/sh
# Installs what the dashboard's browser test needs: Debian's Chromium (no
# browser is ever downloaded), Node.js and npm when the machine has none, and
# playwright-core at the version in tests/browser/package-lock.json, and
# openssl, which makes the TLS test's certificate; and the readers of the
# bridge's recordings (@mcap/core, fzstd).
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh

install_missing chromium openssl
if ! command -v node >/dev/null 2>&1; then install_missing nodejs; fi
if ! command -v npm >/dev/null 2>&1; then install_missing npm; fi
# The packages the tests use (tests/browser/package.json): playwright-core,
# and real readers of what the bridge writes (@mcap/core with fzstd, and
# @foxglove/ws-protocol). npm ci again whenever one is missing.
for package in playwright-core @mcap/core fzstd @foxglove/ws-protocol; do
  if [ ! -f "tests/browser/node_modules/$package/package.json" ]; then
    (cd tests/browser && npm ci --no-audit --no-fund)
    break
  fi
done
