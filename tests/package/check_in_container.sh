#!/bin/bash
# Inside the booted package-test container: checks the service as systemd
# runs it. Writes "ok: ..." and "FAIL: ..." lines and finally "done" to the
# file given. Waits on events (journal lines, systemctl's own waiting), never
# on a fixed sleep.
#
# It also runs the commands that docs/deployment.md shows an administrator
# (systemctl status, journalctl -f, a reload after editing the file, TLS for
# the dashboard, joining the class's broker) and the avahi-browse commands of
# docs/fleet.md, as root (no sudo in the container); the editors of sudoedit
# and systemctl edit are stood in for by sed and a drop-in file.
set -u
result="$1"
: >"$result"
say() { echo "$*" | tee -a "$result"; }
check() {
  description="$1"
  shift
  if "$@"; then say "ok: $description"; else say "FAIL: $description"; fi
}
property() { systemctl show -p "$1" --value flockbridge.service; }
# A restart that first clears systemd's count of starts: its limit (five in
# ten seconds) is reached by the checks' restarts in a row, and a start it
# refuses fails whatever check comes next.
restart() {
  systemctl reset-failed flockbridge.service
  systemctl restart flockbridge.service
}
nonzero() { [ -n "$1" ] && [ "$1" != 0 ]; }
same_pid() { nonzero "$1" && [ "$1" = "$2" ]; }
# wait_journal PATTERN SECONDS: waits for a journal line of the service, from the cursor on.
cursor=""
mark() { cursor="$(journalctl -u flockbridge.service -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')"; }
wait_journal() {
  timeout "$2" journalctl -u flockbridge.service ${cursor:+--after-cursor="$cursor"} -f --no-pager -o cat |
    grep -q -m 1 -- "$1"
}

main_pid="$(property MainPID)"
check "systemd started the service at boot and it said READY" [ "$(property ActiveState)" = active ]
check "its status names the robot link's state" sh -c "systemctl show -p StatusText --value flockbridge | grep -q '^robot link '"
uid="$(awk '/^Uid:/ { print $2 }' "/proc/$main_pid/status")"
check "it does not run as root (uid $uid)" nonzero "$uid"
check "it is in the dialout group, for the serial device" grep -q "^Groups:.*\b$(getent group dialout | cut -d: -f3)\b" "/proc/$main_pid/status"
check "it has no capabilities" grep -q '^CapEff:[[:space:]]*0000000000000000$' "/proc/$main_pid/status"
check "its log reaches the journal with levels" sh -c "journalctl -u flockbridge -p info -o cat --no-pager | grep -q '^info: listening: '"
# A JSON client on port 2006 gets its hello.
hello="$(timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/2006 && head -n 1 <&3')"
check "a JSON client on port 2006 is greeted" grep -q '"type":"hello"' <<<"$hello"

# The robot on the network: the service filled in its Avahi service file
# from inside its sandbox, and avahi-daemon announces it, as a laptop's
# avahi-browse finds it, with its family in the TXT records.
check "the service wrote its Avahi service file" grep -q '<txt-record>family=flockbot</txt-record>' \
  /etc/avahi/services/flockbridge.service
announced() {
  timeout 30 avahi-browse --resolve --parsable --no-db-lookup _flockbridge._tcp | grep -q -m 1 '"family=flockbot"'
}
check "avahi-daemon announces the robot (_flockbridge._tcp)" announced
# docs/fleet.md's commands, as a laptop runs them.
check "avahi-browse -rt _flockbridge._tcp lists the robot with its family" \
  sh -c "timeout 30 avahi-browse -rt _flockbridge._tcp | grep -q 'family=flockbot'"
check "avahi-browse -rt _http._tcp lists its dashboard" sh -c "timeout 30 avahi-browse -rt _http._tcp | grep -q 'port = \[8080\]'"

# docs/deployment.md: the service's state and its log.
check "systemctl status flockbridge shows the robot link's state" \
  sh -c "systemctl status flockbridge --no-pager | grep -q 'Status: \"robot link '"
check "journalctl -u flockbridge -f follows its log" \
  sh -c "timeout 5 journalctl -u flockbridge -f --no-pager | grep -q -m 1 'listening: '"

mark
check "systemctl reload is answered" systemctl reload flockbridge.service
check "the reload happened in the daemon" wait_journal "received SIGHUP: reloading the configuration" 10
check "the same process runs on after the reload" same_pid "$main_pid" "$(property MainPID)"

# A driver PIN in the configuration file, which only root and the service's
# group may read: the service takes it on reload, and a JSON client watches.
sed -i 's/^#driver_pin = .*/driver_pin = "4711"/' /etc/flockbridge/flockbridge.toml
mark
systemctl reload flockbridge.service
check "a PIN in the 640 configuration file is read on reload" wait_journal "reloaded access.driver_pin: changed" 10
hello="$(timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/2006 && head -n 1 <&3')"
check "and a JSON client then watches until it gives the PIN" grep -q '"role":"viewer"' <<<"$hello"

# With the simulated Uno (a pseudo-terminal, allowed for this test only) the
# link comes up inside the sandbox.
mkdir -p /run/systemd/system/flockbridge.service.d
cat >/run/systemd/system/flockbridge.service.d/simulate.conf <<'CONF'
[Service]
ExecStart=
ExecStart=/usr/bin/flockbridge --config /etc/flockbridge/flockbridge.toml --simulate
DeviceAllow=/dev/ptmx rw
DeviceAllow=char-pts rw
WatchdogSec=2s
CONF
systemctl daemon-reload
mark
restart
check "with the simulated Uno the robot link comes up in the sandbox" wait_journal "robot link up" 15
check "and systemd's status says so" sh -c "systemctl show -p StatusText --value flockbridge | grep -q '^robot link up'"
# The unit's system-call filter (@system-service, which holds @aio) lets the
# daemon write its clients through io_uring: where the kernel gives this
# container a ring at all (io_uring_setup is system call 425 on amd64 and
# arm64 alike), the daemon must say it uses one.
if python3 -c 'import ctypes, sys; params = ctypes.create_string_buffer(120); sys.exit(0 if ctypes.CDLL(None).syscall(425, 2, params) >= 0 else 1)'; then
  check "the sandbox lets the daemon write its clients through io_uring" wait_journal "client writes: io_uring" 15
else
  check "where the kernel refuses io_uring, the daemon says so and writes with send()" \
    wait_journal "client writes: one send() a client (io_uring refused" 15
fi
# docs/deployment.md: the real-time class by default. The daemon asked for
# it at its last start, got it with the capability the unit grants, and let
# go of the capability; its simulator child runs as an ordinary process.
check "the daemon runs its loop in the real-time class and says so" \
  wait_journal "scheduling: real-time (SCHED_FIFO, priority 20)" 15
check "journalctl -u flockbridge -b | grep 'scheduling:' shows it, as docs/deployment.md says" \
  sh -c "journalctl -u flockbridge -b --no-pager | grep 'scheduling:' | tail -n 1 | grep -q 'real-time (SCHED_FIFO, priority 20)'"
main_pid="$(property MainPID)"
check "and it holds no capability once started" grep -q '^CapEff:[[:space:]]*0000000000000000$' "/proc/$main_pid/status"
# Field 4 of /proc/PID/stat is the parent, field 41 the scheduling policy (0: ordinary).
children_policies="$(awk -v parent="$main_pid" '$4 == parent { print $41 }' /proc/[0-9]*/stat 2>/dev/null)"
check "its simulator child runs in the ordinary class" \
  sh -c "[ -n '$children_policies' ] && [ -z \"\$(echo '$children_policies' | grep -v '^0\$')\" ]"
# A kernel that refuses the class (stood in for by a unit without the
# capability): the unit does not fail, the daemon says why and serves.
cat >/run/systemd/system/flockbridge.service.d/no-nice.conf <<'CONF'
[Service]
AmbientCapabilities=
CapabilityBoundingSet=
CONF
systemctl daemon-reload
mark
restart
check "refused the real-time class, the daemon says so and why" \
  wait_journal "the real-time class was asked for, and the kernel refused it (EPERM)" 15
check "and serves in the ordinary class: its link comes up" wait_journal "robot link up" 15
check "and the unit is active" [ "$(property ActiveState)" = active ]
rm /run/systemd/system/flockbridge.service.d/no-nice.conf
systemctl daemon-reload
# The setting that keeps the ordinary class.
sed -i 's/^#real_time = true/real_time = false/' /etc/flockbridge/flockbridge.toml
mark
restart
check "real_time = false keeps the ordinary class" wait_journal "(scheduling.real_time is off)" 15
sed -i 's/^real_time = false/#real_time = true/' /etc/flockbridge/flockbridge.toml
# A drop-in of an earlier version's docs, which set the class by systemd: still served.
cat >/run/systemd/system/flockbridge.service.d/realtime.conf <<'CONF'
[Service]
CPUSchedulingPolicy=fifo
CPUSchedulingPriority=20
CPUSchedulingResetOnFork=yes
CONF
systemctl daemon-reload
mark
restart
check "an earlier drop-in's real-time class is kept" wait_journal "scheduling: real-time (SCHED_FIFO, priority 20)" 15
rm /run/systemd/system/flockbridge.service.d/realtime.conf
systemctl daemon-reload
mark
restart
check "and without it the daemon asks for the class itself again" \
  wait_journal "scheduling: real-time (SCHED_FIFO, priority 20)" 15

# The installed Python client, as a student's program uses it.
python_client() {
  timeout 30 python3 -c '
import flockbridge
with flockbridge.connect("127.0.0.1", pin="4711") as robot:
    assert robot.family == "flockbot" and robot.role == "driver", (robot.family, robot.role)
    robot.wait_for(lambda reading: reading.seq > 0, timeout=10)
    robot.lcd_write(text="hello")
' >/tmp/python-client.log 2>&1 || { tail -n 5 /tmp/python-client.log | sed 's/^/  /' | tee -a "$result"; return 1; }
}
check "the installed Python client signs in, reads the sensors and sends a command" python_client

# docs/deployment.md: TLS for the dashboard, with the certificate the package
# test made (as robot7.pem and robot7.key in root's home).
cd /root
install -m 640 -g flockbridge-config robot7.pem robot7.key /etc/flockbridge/
cp /etc/flockbridge/flockbridge.toml /tmp/before-tls.toml
sed -i 's|^#tls_cert = .*|tls_cert = "/etc/flockbridge/robot7.pem"|; s|^#tls_key = .*|tls_key = "/etc/flockbridge/robot7.key"|' \
  /etc/flockbridge/flockbridge.toml
mark
restart
check "with the docs' certificate and key the dashboard is https" wait_journal "dashboard on https://" 15
cp /tmp/before-tls.toml /etc/flockbridge/flockbridge.toml

# docs/deployment.md: joining the class's broker, with its password in a file
# only the service may read.
echo 'PASSWORD' | install -m 640 -g flockbridge-config /dev/stdin /etc/flockbridge/mqtt-password
check "the password file is root:flockbridge-config, mode 640" \
  sh -c "[ \"\$(stat -c '%U:%G %a' /etc/flockbridge/mqtt-password)\" = 'root:flockbridge-config 640' ]"
sed -i '/^\[mqtt\]/,/^\[/ { s|^#enabled = .*|enabled = true|; s|^#host = .*|host = "teacher-laptop.local"|;
  s|^#robot_name = .*|robot_name = "flockbot-07"|; s|^#password_file = .*|password_file = "/etc/flockbridge/mqtt-password"| }' \
  /etc/flockbridge/flockbridge.toml
mark
restart
# The container has no network: the broker is looked for, and the log says whom the robot is.
check "with [mqtt] on, the service reads its password and joins as flockbot-07" \
  wait_journal "mqtt: this robot is flockbot-07 on teacher-laptop.local:1883, as user flockbot-07" 15
cp /tmp/before-tls.toml /etc/flockbridge/flockbridge.toml
restart

# A loop that hangs stops feeding the watchdog: systemd restarts the service.
main_pid="$(property MainPID)"
mark
systemctl reset-failed flockbridge.service  # the restart the watchdog makes counts too
kill -STOP "$main_pid"
check "a hung daemon is caught by the watchdog" wait_journal "Watchdog timeout" 15
check "and started again" wait_journal "listening: " 30
check "by a new process" [ "$(property NRestarts)" -ge 1 ]

# Stopping tells clients and the robot, and exits cleanly.
mark
systemctl stop flockbridge.service
check "it stops cleanly" [ "$(property Result)" = success ]
check "stopping was logged by the daemon" wait_journal "stopping" 5

# A bad configuration: exit status 78, not restarted over and over.
cp /etc/flockbridge/flockbridge.toml /tmp/good.toml
printf '[serial]\nbaud = 5\n' >/etc/flockbridge/flockbridge.toml
mark
systemctl reset-failed flockbridge.service  # the starts above count towards systemd's limit of five in ten seconds
systemctl start flockbridge.service
check "a bad configuration is refused with its reason" wait_journal "serial.baud = 5 is not allowed" 10
check "and the service is left failed, not restarting" sh -c "[ \"\$(systemctl show -p ExecMainStatus --value flockbridge)\" = 78 ] && [ \"\$(systemctl show -p ActiveState --value flockbridge)\" = failed ]"
cp /tmp/good.toml /etc/flockbridge/flockbridge.toml

say "done"
