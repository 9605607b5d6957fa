#!/bin/sh
# The first command of the README: installs what is missing, builds, and
# starts the bridge. Unless a device is given it runs against a simulated
# robot (a Flockbot's Uno; with --robot pioneer a Pioneer 3-DX, with --robot smr an SMR); with a
# robot, give its device: scripts/start.sh --device /dev/ttyACM0
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
simulate=--simulate
for argument in "$@"; do
  case "$argument" in
    --device|--device=*|--simulate) simulate= ;;
  esac
done
if [ -n "$simulate" ]; then
  set -- "$@" --simulate
fi
cat <<'INFO'

flockbridge is starting. Connect to it from this machine or the network:
  the dashboard, in any browser:               http://localhost:8080/  (or this machine's name or address)
  the robot's own clients:                    TCP port 2005 (Flockbot), 8101 (Pioneer: ARIA programs), 24901 (SMR)
  JSON-lines clients:                          TCP port 2006, e.g.  nc localhost 2006
  WebSocket JSON clients:                      ws://localhost:8080/ws
Stop it with Ctrl-C.

INFO
exec build/bin/flockbridge "$@"
