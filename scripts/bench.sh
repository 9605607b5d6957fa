#!/bin/sh
# Builds and runs the benchmarks, which print figures (medians, percentiles,
# memory) and assert nothing. Arguments go to clients_bench, e.g.
#   scripts/bench.sh --clients 200 --stalled 10 --rate-hz 100 --seconds 5
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DFLOCKBRIDGE_TESTS=ON
exec "${BUILD_DIR:-build}/bin/clients_bench" "$@"
