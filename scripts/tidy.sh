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
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The files: the compile commands' under FOLDERS, each once.
python3 - "$build_dir/compile_commands.json" "$(pwd)/$folders" >"$work/files" <<'PYTHON'
import json, re, sys
pattern = re.compile(sys.argv[2])
print("\n".join(sorted({entry["file"] for entry in json.load(open(sys.argv[1])) if pattern.search(entry["file"])})))
PYTHON
# The static analyzer explores at most 75,000 nodes per function (clang's
# shallow mode's budget, a third of its default): the bridge's handlers, which
# build JSON, otherwise each spend seconds at the limit, and the whole check
# three times as long.
analyzer_budget="-extra-arg=-Xclang -extra-arg=-analyzer-config -extra-arg=-Xclang -extra-arg=max-nodes=75000"
# One clang-tidy a core, each given its share of the files (every core-th),
# rather than one a file: a process that checks file after file reuses the
# memory the one before used, and malloc is told to keep it (not to hand it
# back to the kernel and fault it in again for the next file). On a virtual
# machine whose host takes back what its guest frees, that is a sixth of
# clang-tidy's time. clang-tidy reads each file's own .clang-tidy.
jobs="$(nproc)"
job=0
while [ "$job" -lt "$jobs" ]; do
  awk -v jobs="$jobs" -v job="$job" 'NR % jobs == job' "$work/files" >"$work/files.$job"
  # shellcheck disable=SC2086 # the budget's words are separate arguments
  [ ! -s "$work/files.$job" ] ||
    MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967295 MALLOC_TOP_PAD_=268435456 \
      xargs -a "$work/files.$job" clang-tidy -p "$build_dir" -quiet $analyzer_budget >"$work/log.$job" 2>&1 &
  job=$((job + 1))
done
# clang-tidy's exit status does not say whether anything was found (nor
# xargs's); the findings are counted from what it printed, colour codes taken
# out.
wait
log="$work/log"
cat "$work"/log.* | sed 's/\x1b\[[0-9;]*m//g' >"$log"
files="$(grep -c . "$work/files" || true)"
findings="$(grep -cE "(warning|error): " "$log" || true)"
if [ "$findings" -ne 0 ]; then
  grep -vE "warnings? generated|^Suppressed|^Use -header-filter" "$log"
  echo "tidy: $findings findings in $files files"
  exit 1
fi
if [ "$files" -eq 0 ]; then
  echo "tidy: no file was checked"
  exit 1
fi
echo "tidy: $files files, no findings"
