#!/bin/sh
# Builds the Debian packages of flockbridge for this machine's architecture:
# build/package/flockbridge_<version>_<arch>.deb, the bridge, and
# build/package/python3-flockbridge_<version>_all.deb, the Python client.
# (scripts/arm64.sh makes the arm64 ones.) Install them with:
# sudo apt install ./build/package/*.deb
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
scripts/deps.sh
install_missing dpkg-dev
# The package installs into /usr, and the daemon reads /etc/flockbridge/.
scripts/build.sh -DCMAKE_INSTALL_PREFIX=/usr
(cd build && cpack -G DEB -B "$(pwd)/package")
ls -l build/package/*.deb
