#!/bin/sh
# Builds and runs faults_bench, the figures of the fault-injection tests:
# noise (10,000 commands at a bit-error rate of 1e-3 both ways), recovery
# from reboots and unplugs, slow and vanished clients, connection churn.
# It prints figures and asserts nothing. Arguments go to faults_bench, e.g.
#   scripts/faults.sh --commands 10000 --ber 1e-3 --rate-hz 300 --trials 30 --seconds 5
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DFLOCKBRIDGE_TESTS=ON
exec "${BUILD_DIR:-build}/bin/faults_bench" "$@"
