#!/bin/sh
# Installs, from Debian 12's packages, what building and testing flockbridge
# needs and this machine lacks, and nc for the README's first try of the JSON
# port.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh

install_missing \
  g++ cmake ninja-build pkg-config \
  libuv1-dev libserialport-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev \
  libwebsockets-dev libwebsockets-evlib-uv libmosquitto-dev liburing-dev libzstd-dev \
  doctest-dev \
  netcat-openbsd
