#!/bin/sh
# The first command of the README: installs what is missing, builds the
# bridge and its simulator (only those: scripts/test.sh builds the rest), and
# starts the bridge. Unless a device is given it runs against a simulated
# robot (a Flockbot's Uno; with --robot pioneer a Pioneer 3-DX, with --robot
# smr an SMR); with a robot, give its device: scripts/start.sh --device /dev/ttyACM0
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD_TARGET=flockbridge scripts/build.sh
simulate=--simulate
for argument in "$@"; do
  case "$argument" in
    --device|--device=*|--simulate|--simulate=*|--replay|--replay=*) simulate= ;;
  esac
done
if [ -n "$simulate" ]; then
  set -- "$@" --simulate
fi
echo "flockbridge is starting; once it listens it says where to connect."
exec build/bin/flockbridge --welcome "$@"
