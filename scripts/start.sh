#!/bin/sh
# The first command of the README: installs what is missing, builds, and
# starts the bridge. With no robot attached it runs against the built-in
# simulated Uno; with a robot, give its device: scripts/start.sh --device /dev/ttyACM0
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
if [ $# -eq 0 ]; then
  set -- --simulate
fi
cat <<'INFO'

flockbridge is starting. Connect to it from this machine or the network:
  the dashboard, in any browser:               http://localhost:8080/  (or this machine's name or address)
  binary clients (Flockbot socket protocol):  TCP port 2005
  JSON-lines clients:                          TCP port 2006, e.g.  nc localhost 2006
  WebSocket JSON clients:                      ws://localhost:8080/ws
Stop it with Ctrl-C.

INFO
exec build/bin/flockbridge "$@"
