#!/bin/sh
# Cross-builds flockbridge for arm64 (64-bit Raspberry Pi OS) with Debian's
# cross toolchain and multiarch arm64 -dev packages, into build-arm64/ (or
# $BUILD_DIR), and runs the unit tests and the pseudo-terminal end-to-end
# tests under qemu-user emulation. Extra arguments go to ctest, e.g.
# `scripts/arm64.sh -R e2e_tests`. The arm64 package is build-arm64/package/.
# A first argument does one part only (the test command runs the build
# beside its other stages):
#   --prepare     installs what the cross build needs and configures it;
#   --build-only  prepares and builds (and packages);
#   --test-only   runs the tests of a build made before.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
build_dir="${BUILD_DIR:-build-arm64}"
mode=all
case "${1:-}" in
  --prepare | --build-only | --test-only)
    mode="${1#--}"
    shift
    ;;
esac
if [ "$mode" != test-only ]; then

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "adding arm64 to dpkg's architectures, for the arm64 -dev packages"
  as_root dpkg --add-architecture arm64
  as_root apt-get update
fi
install_missing \
  cmake ninja-build pkg-config dpkg-dev crossbuild-essential-arm64 qemu-user \
  nlohmann-json3-dev libcli11-dev doctest-dev \
  libuv1-dev:arm64 libserialport-dev:arm64 libtomlplusplus-dev:arm64 \
  libwebsockets17:arm64 libwebsockets-evlib-uv:arm64 libmosquitto-dev:arm64 liburing-dev:arm64 libzstd-dev:arm64 \
  libssl-dev:arm64 libcap-dev:arm64 libev-dev:arm64 zlib1g-dev:arm64

# libwebsockets-dev cannot be installed for two architectures at once: both
# ship /usr/include/lws_config.h, which differs in one line (the library's
# own folder, which flockbridge does not use). The arm64 one is unpacked
# into the build folder instead, with its pkg-config file pointing there.
lws_root="$(pwd)/$build_dir/libwebsockets-dev-arm64"
if [ ! -f "$lws_root/.complete" ]; then
  rm -rf "$lws_root"
  mkdir -p "$lws_root"
  (cd "$lws_root" && apt-get download libwebsockets-dev:arm64)
  dpkg-deb -x "$lws_root"/libwebsockets-dev_*_arm64.deb "$lws_root"
  ln -sf /usr/lib/aarch64-linux-gnu/libwebsockets.so.17 "$lws_root/usr/lib/aarch64-linux-gnu/libwebsockets.so"
  sed -i "s|^prefix=.*|prefix=\"$lws_root/usr\"|" "$lws_root/usr/lib/aarch64-linux-gnu/pkgconfig/libwebsockets.pc"
  touch "$lws_root/.complete"
fi

# Optimised as the native build is, with its line tables for debug
# information (-g1, the top CMakeLists.txt's default), and a target's files
# compiled as one (scripts/lib.sh: unity_build).
# shellcheck disable=SC2086 # the options are separate words
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DFLOCKBRIDGE_ARM64_LWS_ROOT="$lws_root" -DFLOCKBRIDGE_TESTS=ON $unity_build
[ "$mode" != prepare ] || exit 0
started="$(date +%s)"
cmake --build "$build_dir" --parallel "$(nproc)"
built="$(date +%s)"
file "$build_dir/bin/flockbridge" 2>/dev/null || true
(cd "$build_dir" && cpack -G DEB -B "$(pwd)/package" >/dev/null && ls -l package/*.deb)
echo "arm64: built in $((built - started)) s"
[ "$mode" != build-only ] || exit 0
fi
built="$(date +%s)"
# Under the emulator: every unit test (codecs, simulators, the core's rules)
# and an end-to-end smoke set, one or two per family and per port, since the
# suite's other end-to-end tests ran natively in the first stage. Arguments
# replace the selection (`scripts/arm64.sh -R e2e_tests` runs them all).
smoke='^(protocol_|sim_|bridge_tests)'
smoke="$smoke|e2e_tests:(an unchanged 2014 student program|handshake: |a command from every client form"
smoke="$smoke|port 8101: an ARIA program connects|pioneer: the bridge connects to a p3dx-sh"
smoke="$smoke|smr: an SMR program.s read gets a whole period|smr: JSON clients get every period"
smoke="$smoke|a WebSocket client gets hello|the client that set the robot moving disconnects"
smoke="$smoke|an emergency stop from anyone latches|stopping the bridge stops the robot)"
[ "$#" -gt 0 ] || set -- -R "$smoke"
status=0
(cd "$build_dir" && ctest --output-on-failure --parallel 2 "$@") || status=$?
finished="$(date +%s)"
echo "arm64: tested under qemu-user in $((finished - built)) s"
exit $status
