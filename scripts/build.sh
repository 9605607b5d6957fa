#!/bin/sh
# Configures and builds flockbridge into build/ (or $BUILD_DIR): everything,
# or only $BUILD_TARGET and what it needs (scripts/start.sh builds the
# daemon, which needs its simulator). Extra arguments go to CMake, e.g.
# -DFLOCKBRIDGE_SANITIZE=ON.
set -eu
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja "$@"
cmake --build "$build_dir" --parallel "$(nproc)" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
