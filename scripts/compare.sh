#!/bin/sh
# Builds flockbridge and its benchmarks, installs ser2net (Debian's package),
# and runs compare_bench: the bridge and ser2net side by side on the same
# workloads. Figures only. Arguments go to compare_bench, e.g.
#   scripts/compare.sh --seconds 5 --rate-hz 100
#   scripts/compare.sh --robot pioneer --seconds 30
#   scripts/compare.sh --robot smr --seconds 30
#
# compare_bench runs as root (through sudo when needed) so that it can work
# in a network namespace of its own, with the servers on one core and their
# clients on the others; --in-place runs it as it is, without root.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
scripts/deps.sh
# ser2net is only compared, never used by the bridge; without it the
# benchmark says so and measures the bridge alone.
install_missing ser2net || echo "ser2net could not be installed; the benchmark runs without it"
scripts/build.sh -DFLOCKBRIDGE_TESTS=ON
bench="${BUILD_DIR:-build}/bin/compare_bench"
case " $* " in
  *" --in-place "*) exec "$bench" "$@" ;;
esac
as_root "$bench" "$@"
