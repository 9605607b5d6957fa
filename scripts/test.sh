#!/bin/sh
# The second command of the README: installs what is missing, builds, and
# runs every test through ctest.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DFLOCKBRIDGE_TESTS=ON
cd "${BUILD_DIR:-build}"
ctest --output-on-failure --parallel 2 "$@"
