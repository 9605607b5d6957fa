#!/bin/sh
# Builds the bridge and measures sensor-to-browser latency in headless
# Chromium: the dashboard and N more WebSocket clients in pages of ten. It
# prints figures and asserts nothing. Arguments go to the benchmark, e.g.
#   scripts/browser-bench.sh --clients 100 --rate-hz 33 --seconds 10
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/browser-deps.sh
scripts/build.sh
FLOCKBRIDGE_BIN="${BUILD_DIR:-build}/bin/flockbridge" exec node tests/browser/latency-bench.mjs "$@"
