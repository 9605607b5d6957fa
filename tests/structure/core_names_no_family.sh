#!/bin/sh
# The core (bridge/src, bridge/include, protocol/src, protocol/include,
# protocol/json) and the simulator program's host (sim/host), and their
# CMake files, name no robot family: they reach a family through the
# families table only (docs/adding-a-family.md). Prints every line that names one, and fails.
set -eu
cd "$(dirname "$0")/../.."
folders="bridge/src bridge/include protocol/src protocol/include protocol/json sim/host"
for folder in $folders; do
  [ -d "$folder" ] || { echo "no folder $folder"; exit 2; }
done
# Their CMake files too (bridge/CMakeLists.txt is the core library's alone;
# the families' folders beside it have their own): the core links no
# family's codecs.
cmake_files="bridge/CMakeLists.txt protocol/CMakeLists.txt protocol/json/CMakeLists.txt"
# shellcheck disable=SC2086 # the folders and files are separate words
if grep -rniE 'flockbot|pioneer|aros|amigo|smr' $folders $cmake_files; then
  echo "the lines above name a robot family in the core"
  exit 1
fi
echo "the core and sim/host name no robot family"
