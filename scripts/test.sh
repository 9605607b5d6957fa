#!/bin/sh
# The second command of the README: installs what is missing, builds, and
# runs every test, in these stages:
#   1. the whole suite (build/, each target's files compiled as one: unity_build
#      in scripts/lib.sh), with the dashboard's test in headless Chromium
#      and the Debian package's test in a clean Debian root booted with systemd,
#      but the check runs of docs/performance.md's benchmark commands, which
#      then run in the background beside stages 2 and 3 (they mostly wait
#      for robots, clients and networks; those stages compute and time
#      nothing, and their results are counted after stage 3);
#   2. the libFuzzer targets, FUZZ_SECONDS (45 here) each (build-fuzz/), at
#      nice 10, so that the benchmarks beside them get a core when they want one;
#   3. the whole suite again built with clang 14 as a Debug build (no
#      optimisation, assertions on), also a unity build, under AddressSanitizer
#      and UBSan (build-asan/), with the tests' own robot family
#      (tests/family/) beside the others, its tests once the benchmarks are done;
#   4. clang-tidy over the source files of what ships (bridge/, protocol/,
#      sim/) and of the tests' shared support (tests/support/), each file
#      alone, with the compile commands of that build's options configured
#      file by file (build-tidy/; scripts/tidy.sh; the test cases themselves,
#      half the files and half its time, are left to `scripts/tidy.sh`
#      alone and to the two compilers' warnings): it starts with the first
#      stage and runs beside all the others as the scheduler's idle class
#      (SCHED_IDLE, and nice 19), so it only ever takes a core that no build
#      or test wants, and is waited for at the end;
#   5. the arm64 cross build's unit and end-to-end tests under qemu-user
#      (build-arm64/, scripts/arm64.sh); the cross build itself runs beside
#      the stages above from the start, at nice 19: it takes a core when the
#      tests leave one while they wait for the robot, the network and the
#      browser, and almost none when anything else wants it.
# `scripts/test.sh --quick` runs the first stage only. The last lines give
# each stage's time, count every test of every stage, and repeat what the
# tests that failed printed last.
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
# The second compiler, its sanitizer runtime, clang-tidy, and the linker of
# the builds made to be tested (fast_link in scripts/lib.sh).
install_missing clang libclang-rt-14-dev clang-tidy lld || exit 1
# A real MQTT broker and its command-line clients, for the fleet's tests.
install_missing mosquitto mosquitto-clients || exit 1
# The Python client's tests and type check, with Debian's Python.
install_missing python3 python3-pytest python3-zeroconf python3-venv python3-pip python3-setuptools mypy || exit 1
# valgrind counts instructions for the benchmark of what a Raspberry Pi would
# pay where perf cannot (tests/bench/instructions_bench.py).
install_missing valgrind || exit 1

passed=0
failed=0
status=0
times=""
# The tests that failed, by stage, repeated at the very end where a log's
# last lines show them.
failures=""

# What the failed tests printed last, repeated at the end too: a log's last
# lines then say why, not only which (ctest's --output-on-failure prints a
# failed test's output right after its result line, up to the next test's).
failure_output="$(mktemp)"
# last_output_of_failed STAGE_LOG: each failed test's result line and its
# output's last 30 lines (each cut at 300 characters).
last_output_of_failed() {
  awk -v keep=30 '
    function flush(   i, first) {
      if (name != "") {
        print "---- " name
        first = (count > keep) ? count - keep : 0
        if (first > 0) print "  (" first " lines before these)"
        for (i = first; i < count; i++) print substr(lines[i % keep], 1, 300)
      }
      name = ""
      count = 0
    }
    /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
      flush()
      if ($0 !~ / Passed +[0-9.]+ sec$/) { name = $0; sub(/^ +/, "", name) }
      next
    }
    /^ *Start +[0-9]+: / || /^The following tests FAILED:/ || /^[0-9]+% tests passed/ || /^Total Test time/ { flush(); next }
    name != "" { lines[count % keep] = $0; count++ }
    END { flush() }
  ' "$1"
}

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
      {
        echo "== in $name:"
        last_output_of_failed "$log"
      } >>"$failure_output"
    fi
    echo "==== $name: $((stage_total - stage_failed)) passed, $stage_failed failed, in $took s"
    times="$times
  $took s  $name: $((stage_total - stage_failed)) passed, $stage_failed failed"
  fi
  rm -f "$log"
}

# suite BUILD_DIR CMAKE_OPTION... [-E REGEX] [--after-build COMMAND]: builds
# (a unity build, linked with lld: unity_build and fast_link in
# scripts/lib.sh), runs COMMAND, and runs ctest there (without the tests that
# REGEX matches).
suite() {
  build_dir="$1"
  shift
  cmake_options=""
  exclude=""
  after_build=true
  while [ "$#" -gt 0 ]; do
    case "$1" in
      -E)
        exclude="$2"
        shift 2
        ;;
      --after-build)
        after_build="$2"
        shift 2
        ;;
      *)
        cmake_options="$cmake_options $1"
        shift
        ;;
    esac
  done
  # shellcheck disable=SC2086,SC2154 # separate words; unity_build and fast_link come from scripts/lib.sh
  BUILD_DIR="$build_dir" scripts/build.sh -DFLOCKBRIDGE_TESTS=ON $unity_build $fast_link $cmake_options &&
    $after_build &&
    (cd "$build_dir" && ctest --output-on-failure --parallel 2 ${exclude:+-E "$exclude"})
}

# cpu_of FILE COMMAND...: runs COMMAND, then writes into FILE the processor
# seconds it and everything it started used (its shell's children's times).
# (/proc/PID/stat's 16th and 17th fields: the user and system time of the
# children a process has waited for.)
# shellcheck disable=SC2016 # expanded by the shell that runs it
cpu_script='"$@"; status=$?; awk -v hz="$(getconf CLK_TCK)" "{ printf \"%d\", (\$16 + \$17) / hz }" "/proc/$$/stat" >"$0"; exit $status'
cpu_of() {
  cpu_file="$1"
  shift
  sh -c "$cpu_script" "$cpu_file" "$@"
}

# wait_for_file PATH: until a job in the background has written PATH.
wait_for_file() {
  while [ ! -s "$1" ]; do sleep 2; done
}

# The sanitizer build also serves the tests' own robot family
# (tests/family/): every test that covers all families covers it there.
clang_options="-DFLOCKBRIDGE_SANITIZE=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DFLOCKBRIDGE_TEST_FAMILY=ON"
if [ "${1:-}" != "--quick" ]; then
  # clang-tidy needs the compile commands of a clang build, file by file
  # (build-tidy/, configured only), not a build. As the idle class it waits
  # whenever a build or a test wants a core, so the stages' timing is
  # theirs; it fills what they leave.
  # shellcheck disable=SC2086 # the options are separate words
  cmake -S . -B build-tidy -G Ninja -DFLOCKBRIDGE_TESTS=ON $clang_options >/dev/null || exit 1
  idle=""
  if chrt --idle 0 true 2>/dev/null; then idle="chrt --idle 0"; fi
  tidy_log="$(mktemp)"
  tidy_began="$(date +%s)"
  tidy_cpu="$(mktemp)"
  # shellcheck disable=SC2086 # "chrt --idle 0", or nothing
  cpu_of "$tidy_cpu" $idle nice -n 19 scripts/tidy.sh build-tidy '(bridge|protocol|sim|tests/support)/' >"$tidy_log" 2>&1 &
  tidy_pid=$!
  # The arm64 cross build, also beside the stages (its packages first: apt
  # takes one install at a time): at nice 19 it takes a core whenever the
  # first stages' tests leave one while they wait for the robot, the
  # network and the browser, and almost none while something else wants
  # it; clang-tidy gets what it leaves. Its tests run last, under qemu.
  scripts/arm64.sh --prepare >/dev/null || exit 1
  arm64_log="$(mktemp)"
  arm64_began="$(date +%s)"
  # In a process group of its own, so that it can be paused as a whole. Its
  # own session is also its own scheduling group (the kernel's autogroup),
  # which competes with this one as an equal whatever its processes' nice
  # values: the group itself is given nice 19, or the cross build would take
  # half the machine from the stages it is meant to yield to.
  arm64_cpu="$(mktemp)"
  # shellcheck disable=SC2016 # the inner shell's "$@"
  setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec "$@"' sh \
    sh -c "$cpu_script" "$arm64_cpu" nice -n 19 scripts/arm64.sh --build-only >"$arm64_log" 2>&1 &
  arm64_pid=$!
fi
benchmarks="^docs: the benchmarks' commands"
if [ "${1:-}" = "--quick" ]; then
  run_stage "tests" suite build
else
  # Warnings are errors here: the build scripts/start.sh makes stays
  # warning-free (a new warning fails the first stage, not a newcomer's start).
  run_stage "tests" suite build -DCMAKE_COMPILE_WARNING_AS_ERROR=ON -E "$benchmarks"
  # The benchmarks' commands of docs/performance.md, in their check runs,
  # mostly wait for robots, clients and networks: they run beside the
  # fuzzers and the second build, which compute and time nothing, and
  # before the second stage's tests, which they would disturb.
  bench_log="$(mktemp)"
  bench_done="$(mktemp -u)"
  bench_began="$(date +%s)"
  # In two ctest runs side by side (each of its two tests runs alone in a
  # ctest run of the whole suite), their counts added up in one line.
  (
    (cd build && ctest --output-on-failure -R "$benchmarks.*every benchmark in turn") >"$bench_log.all" 2>&1 &
    all_pid=$!
    each_status=0
    (cd build && ctest --output-on-failure -R "$benchmarks.*each benchmark by its own") >"$bench_log.each" 2>&1 ||
      each_status=$?
    all_status=0
    wait "$all_pid" || all_status=$?
    cat "$bench_log.all" "$bench_log.each" >"$bench_log"
    cat "$bench_log.all" "$bench_log.each" | grep -E '[0-9]+ tests failed out of [0-9]+' |
      sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1 \2/' |
      awk '{ failed += $1; total += $2 } END { printf "both runs: %d tests failed out of %d\n", failed, total }' >>"$bench_log"
    rm -f "$bench_log.all" "$bench_log.each"
    echo $((all_status + each_status)) >"$bench_done"
  ) &
  run_stage "fuzzing (at nice 10, beside the benchmarks)" \
    env FUZZ_SECONDS="${FUZZ_SECONDS:-45}" nice -n 10 scripts/fuzz.sh
  # The sanitizer build's tests run once the benchmarks are done, and with
  # the cross build paused: they keep the machine to themselves and clang-tidy.
  before_second_tests() {
    wait_for_file "$bench_done"
    kill -STOP "-$arm64_pid" 2>/dev/null || true
  }
  # shellcheck disable=SC2086 # the options are separate words
  run_stage "tests built with clang, under AddressSanitizer and UndefinedBehaviorSanitizer" \
    suite build-asan $clang_options -E "^clang-tidy" --after-build before_second_tests
  kill -CONT "-$arm64_pid" 2>/dev/null || true
  run_stage "the benchmarks' commands (from the end of the first stage)" cat "$bench_log"
  echo "==== the benchmarks' commands: $(($(stat -c %Y "$bench_done") - bench_began)) s beside the fuzzers and the second build"
  rm -f "$bench_log" "$bench_done"
  echo "==== arm64: the cross build (running beside the stages above)"
  arm64_status=0
  wait "$arm64_pid" || arm64_status=$?
  tail -n 5 "$arm64_log"
  echo "==== arm64: built in $(($(date +%s) - arm64_began)) s from the first stage's start, with $(cat "$arm64_cpu") s of the processor"
  if [ "$arm64_status" -eq 0 ]; then
    run_stage "arm64: cross-built, tested under qemu-user" scripts/arm64.sh --test-only
  else
    cat "$arm64_log"
    failed=$((failed + 1))
    status=1
    times="$times
  arm64: the cross build failed"
  fi
  rm -f "$arm64_log"
  echo "==== clang-tidy (running beside the stages above, in the time they left idle)"
  tidy_status=0
  wait "$tidy_pid" || tidy_status=$?
  took=$(($(date +%s) - tidy_began))
  cat "$tidy_log"
  tidy_seconds="$(cat "$tidy_cpu")"
  rm -f "$tidy_log" "$tidy_cpu" "$arm64_cpu"
  if [ "$tidy_status" -eq 0 ]; then
    passed=$((passed + 1))
    result="1 passed, 0 failed"
  else
    failed=$((failed + 1))
    status=1
    result="0 passed, 1 failed"
  fi
  echo "==== clang-tidy: $result, in $took s from the first stage's start, with $tidy_seconds s of the processor"
  times="$times
  $took s  clang-tidy, from the first stage's start, beside the others: $result"
fi
if [ -s "$failure_output" ]; then
  echo "==== what the tests that failed printed last:"
  cat "$failure_output"
fi
rm -f "$failure_output"
ticks_after="$(cpu_ticks)"
busy="$(echo "$ticks_before $ticks_after" | awk '{ b = $3 - $1; i = $4 - $2; if (b + i > 0) printf "%d", 100 * b / (b + i); else print 0 }')"
echo "==== each stage's time:$times
  $(($(date +%s) - began_all)) s  in all, the cores $busy% busy"
if [ -n "$failures" ]; then
  echo "==== the tests that failed:$failures"
fi
echo "flockbridge: $passed passed, $failed failed"
exit $status
