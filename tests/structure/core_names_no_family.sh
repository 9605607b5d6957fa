#!/bin/sh
# The core (the daemon's parts under bridge/ that bridge/CMakeLists.txt
# lists, the replay and no-robot drivers, protocol/src, protocol/include,
# protocol/json) and the simulator program's host (sim/host), and their
# CMake files, name no robot family, nor the families' own words (their
# messages and programs, their controllers, their ports): they reach a
# family through the families table only (docs/adding-a-family.md). Prints
# every line that names one, and fails.
set -eu
cd "$(dirname "$0")/../.."
parts=$(sed -n 's/^foreach(part \(.*\))$/\1/p' bridge/CMakeLists.txt)
[ -n "$parts" ] || { echo "bridge/CMakeLists.txt lists no parts (foreach(part ...))"; exit 2; }
folders="bridge/replay bridge/none protocol/src protocol/include protocol/json sim/host"
for part in $parts; do folders="$folders bridge/$part"; done
for folder in $folders; do
  [ -d "$folder" ] || { echo "no folder $folder"; exit 2; }
done
# The CMake files of the core's library and of what it links: it links no
# family's codecs.
cmake_files="bridge/CMakeLists.txt protocol/CMakeLists.txt protocol/json/CMakeLists.txt"
# shellcheck disable=SC2086 # the folders and files are separate words
if grep -rniE 'flockbot|pioneer|aros|amigo|smr' $folders $cmake_files; then
  echo "the lines above name a robot family in the core"
  exit 1
fi
# The families' own words, whole and in their case: the Flockbot's EMG and
# EXT and its Uno, the Pioneer's SIPs, AROS and ARIA, the SMR's SMRD, and
# the families' ports.
# shellcheck disable=SC2086
if grep -rnwE 'EMG|EXT|Uno|SIPs?|ARIA|SMRD|2005|8101|24901' $folders $cmake_files; then
  echo "the lines above use a robot family's own words in the core"
  exit 1
fi
echo "the core ($parts) and sim/host name no robot family"
