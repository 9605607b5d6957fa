#!/bin/sh
# Builds the libFuzzer targets with clang (ASan and UBSan on) into
# build-fuzz/ and runs each for FUZZ_SECONDS (default 60) from the seed
# corpus in tests/fuzz/corpus/, two at a time (each target is one process on
# one core). What a run finds stays in build-fuzz/.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
install_missing clang libclang-rt-14-dev lld
seconds="${FUZZ_SECONDS:-60}"
# shellcheck disable=SC2086 # unity_build and fast_link (scripts/lib.sh) are separate words
BUILD_DIR=build-fuzz scripts/build.sh -DFLOCKBRIDGE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ $unity_build $fast_link \
  -DFLOCKBRIDGE_FUZZ_SECONDS="$seconds" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cd build-fuzz
ctest --output-on-failure --parallel 2
