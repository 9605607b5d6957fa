#!/bin/sh
# The second command of the README: installs what is missing, builds, and
# runs every test, in four stages:
#   1. the whole suite (build/), with the dashboard's test in headless Chromium
#      and the Debian package's test in a clean Debian root booted with systemd,
#   2. the whole suite again built with clang 14 as a Debug build (no
#      optimisation, assertions on), under AddressSanitizer and UBSan, and
#      clang-tidy over every source file (build-asan/),
#   3. the libFuzzer targets, FUZZ_SECONDS (60) each (build-fuzz/),
#   4. the arm64 cross build's unit and end-to-end tests under qemu-user
#      (build-arm64/, scripts/arm64.sh).
# `scripts/test.sh --quick` runs the first stage only. The last line counts
# every test of every stage. Each stage's time is printed with its result.
# (These are the commands docs/development.md lists: deps.sh, browser-deps.sh,
# build.sh, tidy.sh through ctest in stage 2, fuzz.sh and arm64.sh.)
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
scripts/browser-deps.sh || exit 1
. scripts/lib.sh
# The second compiler, its sanitizer runtime, and clang-tidy.
install_missing clang libclang-rt-14-dev clang-tidy || exit 1
# A real MQTT broker and its command-line clients, for the fleet's tests.
install_missing mosquitto mosquitto-clients || exit 1
# The Python client's tests and type check, with Debian's Python.
install_missing python3 python3-pytest python3-zeroconf python3-venv python3-pip python3-setuptools mypy || exit 1

passed=0
failed=0
status=0

# run_stage NAME COMMAND...: runs a stage that ends in ctest and adds up its counts.
run_stage() {
  name="$1"
  shift
  echo "==== $name"
  began="$(date +%s)"
  log="$(mktemp)"
  "$@" 2>&1 | tee "$log"
  took=$(($(date +%s) - began))
  summary="$(grep -E '[0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)"
  if [ -z "$summary" ]; then
    echo "==== $name did not run its tests ($took s)"
    failed=$((failed + 1))
    status=1
  else
    stage_failed="$(echo "$summary" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')"
    stage_total="$(echo "$summary" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/')"
    passed=$((passed + stage_total - stage_failed))
    failed=$((failed + stage_failed))
    [ "$stage_failed" -eq 0 ] || status=1
    echo "==== $name: $((stage_total - stage_failed)) passed, $stage_failed failed, in $took s"
  fi
  rm -f "$log"
}

suite() {
  build_dir="$1"
  shift
  BUILD_DIR="$build_dir" scripts/build.sh -DFLOCKBRIDGE_TESTS=ON "$@" && (cd "$build_dir" && ctest --output-on-failure --parallel 2)
}

run_stage "tests" suite build
if [ "${1:-}" != "--quick" ]; then
  run_stage "tests built with clang, under AddressSanitizer and UndefinedBehaviorSanitizer; clang-tidy" \
    suite build-asan -DFLOCKBRIDGE_SANITIZE=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug
  run_stage "fuzzing" scripts/fuzz.sh
  run_stage "arm64: cross-built, tested under qemu-user" scripts/arm64.sh
fi
echo "flockbridge: $passed passed, $failed failed"
exit $status
