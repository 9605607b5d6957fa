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
