#!/bin/sh
# Builds the Debian package of flockbridge for this machine's architecture:
# build/package/flockbridge_<version>_<arch>.deb. (scripts/arm64.sh makes the
# arm64 one.) Install it with: sudo apt install ./build/package/flockbridge_*.deb
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
scripts/deps.sh
install_missing dpkg-dev
# The package installs into /usr, and the daemon reads /etc/flockbridge/.
scripts/build.sh -DCMAKE_INSTALL_PREFIX=/usr
(cd build && cpack -G DEB -B "$(pwd)/package")
ls -l build/package/*.deb
