#!/bin/sh
# The Debian package in a clean Debian 12 root: built by CPack from the build
# folder given, installed with apt into a root made by debootstrap (its
# dependencies from Debian's archive), checked file by file, and then booted
# with systemd-nspawn, where systemd itself starts the service at boot with
# its sandboxing and tests/package/check_in_container.sh checks it from
# inside. Needs root (or sudo) and Debian's archive; run by ctest.
#
# It is how docs/deployment.md's packages are tested: CPack makes them as
# scripts/package.sh does, and apt installs the Python client's alone (a
# student's laptop) and then the bridge's with its recommendations (a robot).
#
#   tests/package/package_test.sh BUILD_DIR
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
build_dir="$(cd "${1:?usage: package_test.sh BUILD_DIR}" && pwd)"
. "$source_dir/scripts/lib.sh"

work="$build_dir/package-test"
base="$work/base"
root="$work/root"
out="$work/out"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
check() {
  # check DESCRIPTION COMMAND...: runs the command, counts a failure.
  description="$1"
  shift
  if "$@"; then echo "ok: $description"; else fail "$description"; fi
}

in_root() {
  as_root chroot "$root" "$@"
}
conffile_listed() {
  in_root dpkg-query -W -f='${Conffiles}' flockbridge | grep -q '^ /etc/flockbridge/flockbridge.toml '
}
installed_config_is_default() {
  [ "$(in_root flockbridge --print-config)" = "$(in_root flockbridge --no-config --print-config)" ]
}
config_readable_by_group_only() {
  [ "$(in_root stat -c '%U:%G %a' /etc/flockbridge/flockbridge.toml)" = "root:flockbridge-config 640" ]
}
avahi_file_writable_by_service() {
  [ "$(in_root stat -c '%U:%G %a' /etc/avahi/services/flockbridge.service)" = "root:flockbridge-config 664" ]
}
udev_rule_read() {
  # udevadm test names every rules file it reads, and each line it cannot parse as FILE:LINE.
  for rules in /usr/lib/udev/rules.d/98-flockbridge-serial.rules /usr/lib/udev/rules.d/99-flockbot.rules \
    /etc/udev/rules.d/99-robots.rules; do
    grep -q "Reading rules file: $rules" "$work/udev.log" && ! grep -q "$(basename "$rules"):[0-9]" "$work/udev.log" ||
      return 1
  done
}

cleanup() {
  for mount in "$root/proc" "$root/sys" "$root/dev"; do
    if mountpoint -q "$mount" 2>/dev/null; then as_root umount -R "$mount" || true; fi
  done
}
trap cleanup EXIT INT TERM

install_missing dpkg-dev debootstrap systemd-container openssl

echo "== the package"
prefix="$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt")"
if [ "$prefix" != /usr ]; then
  echo "error: $build_dir installs into $prefix; the package needs /usr (cmake -DCMAKE_INSTALL_PREFIX=/usr $build_dir)"
  exit 1
fi
as_root rm -rf "$build_dir/package"
(cd "$build_dir" && cpack -G DEB -B "$build_dir/package" >/dev/null)
deb="$(ls "$build_dir"/package/flockbridge_*.deb)"
python_deb="$(ls "$build_dir"/package/python3-flockbridge_*_all.deb)"
for package in "$deb" "$python_deb"; do
  echo "$(basename "$package"): $(stat -c %s "$package") bytes"
  dpkg-deb -I "$package" | sed -n '/Depends:/p;/Recommends:/p;/Suggests:/p;/Installed-Size:/p'
  dpkg-deb -c "$package" | awk '{ print $1, $3, $6 }'
done
check "the daemon's package holds none of the Python client" sh -c "! dpkg-deb -c '$deb' | grep -q dist-packages"

echo "== a clean Debian 12 root"
# The same archive apt uses on this machine.
mirror="$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p;s/^deb \(http[^ ]*debian\) bookworm .*/\1/p' \
  /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1)"
mirror="${mirror:-http://deb.debian.org/debian}"
if [ ! -f "$base/.complete" ]; then
  as_root rm -rf "$base"
  as_root mkdir -p "$work"
  echo "debootstrap --variant=minbase bookworm from $mirror"
  as_root debootstrap --variant=minbase bookworm "$base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; exit 1; }
  as_root touch "$base/.complete"
fi
as_root rm -rf "$root" "$out"
as_root cp -a "$base" "$root"
as_root mkdir -p "$out"

as_root cp "$deb" "$python_deb" "$root/tmp/"
as_root mount -t proc proc "$root/proc"
as_root mount --rbind /dev "$root/dev"

echo "== apt-get install ./$(basename "$python_deb") in it: a student's laptop"
as_root chroot "$root" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq /tmp/$(basename "$python_deb")" >"$work/install.log" 2>&1 ||
  { tail -n 30 "$work/install.log"; exit 1; }
check "Debian's python3 imports the client, installed alone" in_root python3 -c "import flockbridge, flockbridge.__main__"
check "python3 -m flockbridge runs" in_root sh -c "python3 -m flockbridge --help | grep -q 'watch'"
check "and no bridge came with it" test ! -e "$root/usr/bin/flockbridge"

echo "== apt-get install ./$(basename "$deb") in it"
# With its recommendations (avahi-daemon), as apt installs it, and
# avahi-browse for the check that the robot is announced.
as_root chroot "$root" sh -c "DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq /tmp/$(basename "$deb") avahi-utils" >"$work/install.log" 2>&1 ||
  { tail -n 30 "$work/install.log"; exit 1; }
echo "installed, with: $(in_root dpkg-query -W -f='${Depends}' flockbridge); $(in_root dpkg-query -W -f='${Depends}' python3-flockbridge)"

for path in /usr/bin/flockbridge /usr/bin/flockbridge-sim /usr/bin/flockbot-sim /usr/lib/systemd/system/flockbridge.service \
  /usr/lib/udev/rules.d/99-flockbot.rules /usr/lib/udev/rules.d/98-flockbridge-serial.rules /usr/lib/sysusers.d/flockbridge.conf /etc/flockbridge/flockbridge.toml \
  /etc/avahi/services/flockbridge.service \
  /usr/share/flockbridge/www/index.html /usr/share/flockbridge/www/dashboard.js /usr/share/flockbridge/www/connection.js \
  /usr/share/flockbridge/www/dashboard.css /usr/share/doc/flockbridge/README.md \
  /usr/share/doc/flockbridge/copyright /usr/lib/python3/dist-packages/flockbridge/__init__.py \
  /usr/lib/python3/dist-packages/flockbridge/py.typed /usr/share/doc/python3-flockbridge/copyright \
  /usr/share/doc/python3-flockbridge/python.md /usr/share/doc/python3-flockbridge/examples/first_smr.py; do
  check "$path is installed" test -f "$root$path"
done
check "the configuration is a conffile, kept on upgrade" conffile_listed
check "the configuration (it may hold secrets) is root:flockbridge-config, mode 640" config_readable_by_group_only
check "the Avahi service file is root:flockbridge-config, mode 664, for the service to fill in" avahi_file_writable_by_service
check "the service is enabled at boot" test -L "$root/etc/systemd/system/multi-user.target.wants/flockbridge.service"
check "the installed configuration file holds every default" installed_config_is_default
check "flockbot-sim runs there" in_root sh -c "flockbot-sim --version >/dev/null"
check "systemd-analyze verify accepts the unit" in_root systemd-analyze verify flockbridge.service
exposure="$(in_root systemd-analyze security --offline=true flockbridge.service 2>/dev/null |
  sed -n 's/.*Overall exposure level for flockbridge.service: \([0-9.]*\).*/\1/p')"
echo "systemd-analyze security flockbridge.service: exposure $exposure"
# 1.5 and the real-time class's 0.5 (docs/deployment.md): sched_setscheduler
# and capset let through the filter, RestrictRealtime= off, CAP_SYS_NICE granted.
check "the service's exposure is at most 2.0" awk -v score="$exposure" 'BEGIN { exit !(score != "" && score <= 2.0) }'
# docs/deployment.md's rule that pins an adapter to a robot, as a teacher adds it.
as_root mkdir -p "$root/etc/udev/rules.d"
grep '^SUBSYSTEM=="tty".*SYMLINK+="pioneer-rosie"' "$source_dir/docs/deployment.md" |
  as_root tee "$root/etc/udev/rules.d/99-robots.rules" >/dev/null
as_root mount -t sysfs sysfs "$root/sys"
in_root udevadm test --action=add /sys/class/tty/tty0 >"$work/udev.log" 2>&1 || true
check "udev reads the rules without complaint, the package's and the pinning rule of docs/deployment.md" udev_rule_read
cleanup

echo "== booting the root with systemd (systemd-nspawn), the service started by systemd"
# docs/deployment.md's certificate and key for the dashboard's TLS, made here
# (the root has no openssl), for the check to install as the page says.
as_root openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=robot7 \
  -keyout "$root/root/robot7.key" -out "$root/root/robot7.pem" >/dev/null 2>&1
as_root cp "$here/check_in_container.sh" "$root/usr/local/bin/check-flockbridge"
as_root cp "$here/flockbridge-check.service" "$root/etc/systemd/system/"
as_root ln -sf /etc/systemd/system/flockbridge-check.service \
  "$root/etc/systemd/system/multi-user.target.wants/flockbridge-check.service"
# The check powers the container off when it is done; the timeout is for a
# check that hangs.
as_root timeout 180 systemd-nspawn --quiet --register=no --keep-unit --private-network \
  --directory="$root" --bind="$out:/out" --boot >"$work/boot.log" 2>&1 || true
if [ -f "$out/result" ]; then
  cat "$out/result"
  failures=$((failures + $(grep -c '^FAIL' "$out/result" || true)))
  grep -q '^done' "$out/result" || fail "the check in the container did not finish"
else
  fail "the check in the container left no result"
  tail -n 40 "$work/boot.log"
fi

if [ "$failures" -ne 0 ]; then
  echo "package test: $failures failed"
  exit 1
fi
echo "package test: every check passed"
