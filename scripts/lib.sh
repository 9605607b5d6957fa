# Shared by the scripts in this folder: run as root or through sudo, and
# install what is missing from Debian's packages.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "error: '$*' needs root; run as root or install sudo" >&2
    exit 1
  fi
}

# install_missing PACKAGE...: apt-get installs the packages that are not
# installed yet, after refreshing the package lists; does nothing when all are.
install_missing() {
  missing=""
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing="$missing $package"
    fi
  done
  if [ -n "$missing" ]; then
    echo "installing:$missing"
    as_root apt-get update
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
  fi
}

# CMake options for a build made to be tested, not worked in: each target's
# sources compiled as one unit (CMake's unity build), which parses the
# headers they share (nlohmann/json, doctest, the standard library) and
# instantiates their templates once a target instead of once a file: the
# first stage's build takes half the processor time it took file by file,
# and so does the sanitizer build. Each source file of what ships is still
# compiled on its own by clang-tidy, which the test command runs over them
# (a missing include is a finding there), and scripts/start.sh builds file
# by file. A file's names in an anonymous namespace must differ from its
# neighbours' in the same target.
# shellcheck disable=SC2034 # used by the scripts that source this one
unity_build="-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0"

# The linker of the builds made to be tested: LLVM's lld (Debian's lld
# package, which the scripts that use this install), which links the test
# programs in less than half the time GNU ld takes (the sanitizer build's
# programs are large).
# shellcheck disable=SC2034 # used by the scripts that source this one
fast_link="-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld"
