#!/bin/sh
# Builds and runs the benchmarks, which print figures (medians, percentiles,
# memory) and assert nothing.
#
#   scripts/bench.sh all --seconds 5 --trials 30 --commands 4000 --messages 200000 --soak-seconds 600
#       every benchmark in turn, each measured phase that long: clients_bench
#       (JSON, WebSocket and Foxglove viewers), compare_bench for each family beside ser2net
#       (the SMR's includes its period under a class's load), the SMR's
#       period once more with the program timing it in the real-time class too, burst_bench
#       (a class arriving and leaving at once, 3 trials), model_bench,
#       record_bench (what recording a run costs, 3 trials), plug_bench (how long
#       plug and play takes to recognise each family, 3 trials) and faults_bench (--trials and
#       --commands are its, --messages model_bench's), and network_bench (a
#       driver's vanished network, 20 trials a family and path, and a silent
#       driver left driving for --soak-seconds), and instructions_bench (what
#       a Raspberry Pi would pay: each family's instructions per job);
#   scripts/bench.sh --clients 200 --stalled 10 --rate-hz 100 --seconds 5
#       clients_bench alone, with these arguments.
#
# compare_bench runs as root (through sudo when needed), as scripts/compare.sh
# explains.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
scripts/deps.sh
bin="${BUILD_DIR:-build}/bin"
if [ "${1:-}" != all ]; then
  scripts/build.sh -DFLOCKBRIDGE_TESTS=ON
  exec "$bin/clients_bench" "$@"
fi
shift
seconds=5
trials=30
commands=4000
messages=200000
soak=600
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2" ;;
    --trials) trials="$2" ;;
    --commands) commands="$2" ;;
    --messages) messages="$2" ;;
    --soak-seconds) soak="$2" ;;
    *)
      echo "usage: scripts/bench.sh all [--seconds N] [--trials N] [--commands N] [--messages N] [--soak-seconds N]" >&2
      exit 2
      ;;
  esac
  shift 2
done
install_missing ser2net || echo "ser2net could not be installed; compare_bench runs without it"
install_missing valgrind || echo "valgrind could not be installed; instructions_bench needs it where perf cannot count"
scripts/build.sh -DFLOCKBRIDGE_TESTS=ON

# The robot families, from the bridge itself: a new family is benchmarked
# like the others, or its benchmark fails.
families="$("$bin/flockbridge" --list-families)"

# Each benchmark under a heading, with the time it took.
run() {
  heading="$*"
  printf '\n===== %s\n' "${heading#as_root }"
  started=$(date +%s)
  "$@"
  printf '===== %s s\n' "$(($(date +%s) - started))"
}
run "$bin/clients_bench" --clients 1000 --stalled 10 --rate-hz 100 --seconds "$seconds"
run "$bin/clients_bench" --kind websocket --clients 100 --stalled 10 --rate-hz 100 --seconds "$seconds"
run "$bin/clients_bench" --kind foxglove --clients 100 --stalled 10 --rate-hz 100 --seconds "$seconds"
for robot in $families; do
  run as_root "$bin/compare_bench" --robot "$robot" --seconds "$seconds"
done
run as_root "$bin/compare_bench" --robot smr --no-ser2net --in-place --real-time --seconds "$seconds"
# A classmate's attacks: a flood of stops, and each attack of docs/deployment.md.
for robot in $families; do
  run env FLOCKBRIDGE_BIN="$bin/flockbridge" /usr/bin/python3 tests/bench/stop_flood_bench.py --robot "$robot" --seconds "$seconds"
  run env FLOCKBRIDGE_BIN="$bin/flockbridge" /usr/bin/python3 tests/bench/attack_bench.py --robot "$robot" --seconds "$seconds"
done
# Three trials of the slower benchmarks (fewer when --trials asks for fewer).
few=$(( trials < 3 ? trials : 3 ))
run as_root env FLOCKBRIDGE_BIN="$bin/flockbridge" /usr/bin/python3 tests/bench/burst_bench.py --trials "$few"
run "$bin/model_bench" --messages "$messages"
run "$bin/record_bench" --seconds "$seconds" --trials "$few"
run "$bin/plug_bench" --trials "$few"
run "$bin/faults_bench" --commands "$commands" --ber 1e-3 --rate-hz 300 --trials "$trials" --seconds "$seconds"
# Test networks in namespaces of its own: root.
run as_root "$bin/network_bench" --trials "$(( trials < 20 ? trials : 20 ))" --soak-seconds "$soak"
# What a Raspberry Pi would pay: instructions counted by perf, or by valgrind here.
run env FLOCKBRIDGE_BIN="$bin/flockbridge" /usr/bin/python3 tests/bench/instructions_bench.py --seconds "$seconds"
