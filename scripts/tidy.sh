#!/bin/sh
# clang-tidy over every source file of the project (the checks of
# .clang-tidy; tests/.clang-tidy leaves the static analyzer out of the
# tests/ folder), with the compile commands of a clang build configured file
# by file (not a unity build): BUILD (default build-tidy, which the test
# command configures), or over the files whose path matches FOLDERS (a
# regular expression of folders, default every one:
# '(bridge|protocol|sim|tests)/'). Each file is compiled alone, so a missing
# #include is a finding too. Prints every finding and fails when there is
# one. A ctest test of such a build runs it over everything; the test command
# runs it over what ships and the tests' shared support (see
# scripts/test.sh). It needs clang-tidy (scripts/test.sh installs it).
#
#   scripts/tidy.sh [BUILD] [FOLDERS]
set -eu
cd "$(dirname "$0")/.."
build_dir="${1:-build-tidy}"
folders="${2:-(bridge|protocol|sim|tests)/}"
if [ ! -f "$build_dir/compile_commands.json" ]; then
  echo "tidy: no $build_dir/compile_commands.json: configure a clang build there first" >&2
  exit 2
fi
if grep -q '/Unity/unity_[0-9]*_cxx.cxx"' "$build_dir/compile_commands.json"; then
  echo "tidy: $build_dir is a unity build, whose files are compiled together: configure one file by file" \
    "(without -DCMAKE_UNITY_BUILD=ON), e.g. cmake -S . -B build-tidy -G Ninja -DFLOCKBRIDGE_TESTS=ON -DCMAKE_CXX_COMPILER=clang++" >&2
  exit 2
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# run-clang-tidy's own exit status does not say whether anything was found.
# Colour codes are taken out, so that the findings can be counted.
# The static analyzer explores at most 75,000 nodes per function (clang's
# shallow mode's budget, a third of its default): the bridge's handlers, which
# build JSON, otherwise each spend seconds at the limit, and the whole check
# three times as long.
analyzer_budget="-extra-arg=-Xclang -extra-arg=-analyzer-config -extra-arg=-Xclang -extra-arg=max-nodes=75000"
# shellcheck disable=SC2086 # the budget's words are separate arguments
run-clang-tidy -p "$build_dir" -j "$(nproc)" -quiet $analyzer_budget "$(pwd)/$folders" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' >"$log" || true
files="$(grep -c "^clang-tidy" "$log" || true)"
findings="$(grep -cE "(warning|error): " "$log" || true)"
if [ "$findings" -ne 0 ]; then
  grep -vE "^clang-tidy|warnings? generated|^Suppressed|^Use -header-filter" "$log"
  echo "tidy: $findings findings in $files files"
  exit 1
fi
if [ "$files" -eq 0 ]; then
  echo "tidy: no file was checked"
  exit 1
fi
echo "tidy: $files files, no findings"
