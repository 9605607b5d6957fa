#!/bin/sh
# The second command of the README: installs what is missing, builds, and
# runs every test, in these stages:
#   1. the whole suite (build/), with the dashboard's test in headless Chromium
#      and the Debian package's test in a clean Debian root booted with systemd,
#   2. the whole suite again built with clang 14 as a Debug build (no
#      optimisation, assertions on), under AddressSanitizer and UBSan
#      (build-asan/),
#   3. clang-tidy over every source file, with that build's compile commands
#      (scripts/tidy.sh): it starts with the first stage and runs beside all
#      the others as the scheduler's idle class (SCHED_IDLE, and nice 19),
#      so it only ever takes a core that no build or test wants (their
#      tests leave cores idle while they wait for the robot, the network and
#      the browser), and is waited for at the end,
#   4. the libFuzzer targets, FUZZ_SECONDS (60) each (build-fuzz/),
#   5. the arm64 cross build's unit and end-to-end tests under qemu-user
#      (build-arm64/, scripts/arm64.sh).
# `scripts/test.sh --quick` runs the first stage only. The last lines give
# each stage's time and count every test of every stage.
# (These are the commands docs/development.md lists: deps.sh, browser-deps.sh,
# build.sh, tidy.sh, fuzz.sh and arm64.sh.)
set -u
cd "$(dirname "$0")/.." || exit 1
began_all="$(date +%s)"
# The machine's busy and idle time so far, in clock ticks (/proc/stat), to say
# at the end how much of the cores the whole command used.
cpu_ticks() {
  awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat
}
ticks_before="$(cpu_ticks)"
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
times=""
# The tests that failed, by stage, repeated at the very end where a log's
# last lines show them.
failures=""

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
    times="$times
  $took s  $name: did not run its tests"
  else
    stage_failed="$(echo "$summary" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')"
    stage_total="$(echo "$summary" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/')"
    passed=$((passed + stage_total - stage_failed))
    failed=$((failed + stage_failed))
    [ "$stage_failed" -eq 0 ] || status=1
    # ctest lists them after "The following tests FAILED:", a tab before each.
    stage_failures="$(sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' | sed -E 's/^[[:space:]]+//')"
    if [ -n "$stage_failures" ]; then
      failures="$failures
  in $name:
$(echo "$stage_failures" | sed 's/^/    /')"
    fi
    echo "==== $name: $((stage_total - stage_failed)) passed, $stage_failed failed, in $took s"
    times="$times
  $took s  $name: $((stage_total - stage_failed)) passed, $stage_failed failed"
  fi
  rm -f "$log"
}

# suite BUILD_DIR CMAKE_OPTION... [-E REGEX]: builds, and runs ctest there
# (without the tests that REGEX matches).
suite() {
  build_dir="$1"
  shift
  cmake_options=""
  exclude=""
  while [ "$#" -gt 0 ]; do
    if [ "$1" = "-E" ]; then
      exclude="$2"
      shift 2
    else
      cmake_options="$cmake_options $1"
      shift
    fi
  done
  # shellcheck disable=SC2086
  BUILD_DIR="$build_dir" scripts/build.sh -DFLOCKBRIDGE_TESTS=ON $cmake_options &&
    (cd "$build_dir" && ctest --output-on-failure --parallel 2 ${exclude:+-E "$exclude"})
}

clang_build="-DFLOCKBRIDGE_SANITIZE=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug"
if [ "${1:-}" != "--quick" ]; then
  # clang-tidy needs the clang build's compile commands only, not its build.
  # As the idle class it waits whenever a build or a test wants a core, so
  # the stages' timing is theirs; it fills what they leave.
  # shellcheck disable=SC2086 # the options are separate words
  cmake -S . -B build-asan -G Ninja -DFLOCKBRIDGE_TESTS=ON $clang_build >/dev/null || exit 1
  idle=""
  if chrt --idle 0 true 2>/dev/null; then idle="chrt --idle 0"; fi
  tidy_log="$(mktemp)"
  tidy_began="$(date +%s)"
  # shellcheck disable=SC2086 # "chrt --idle 0", or nothing
  $idle nice -n 19 scripts/tidy.sh build-asan >"$tidy_log" 2>&1 &
  tidy_pid=$!
fi
run_stage "tests" suite build
if [ "${1:-}" != "--quick" ]; then
  # shellcheck disable=SC2086
  run_stage "tests built with clang, under AddressSanitizer and UndefinedBehaviorSanitizer" \
    suite build-asan $clang_build -E "^clang-tidy"
  run_stage "fuzzing" scripts/fuzz.sh
  run_stage "arm64: cross-built, tested under qemu-user" scripts/arm64.sh
  echo "==== clang-tidy (running beside the stages above, in the time they left idle)"
  tidy_status=0
  wait "$tidy_pid" || tidy_status=$?
  took=$(($(date +%s) - tidy_began))
  cat "$tidy_log"
  rm -f "$tidy_log"
  if [ "$tidy_status" -eq 0 ]; then
    passed=$((passed + 1))
    result="1 passed, 0 failed"
  else
    failed=$((failed + 1))
    status=1
    result="0 passed, 1 failed"
  fi
  echo "==== clang-tidy: $result, in $took s from the first stage's start"
  times="$times
  $took s  clang-tidy, from the first stage's start, beside the others: $result"
fi
ticks_after="$(cpu_ticks)"
busy="$(echo "$ticks_before $ticks_after" | awk '{ b = $3 - $1; i = $4 - $2; if (b + i > 0) printf "%d", 100 * b / (b + i); else print 0 }')"
echo "==== each stage's time:$times
  $(($(date +%s) - began_all)) s  in all, the cores $busy% busy"
if [ -n "$failures" ]; then
  echo "==== the tests that failed:$failures"
fi
echo "flockbridge: $passed passed, $failed failed"
exit $status
