"""flockbridge doctor: each finding it can make, made to happen on this
machine: a bad configuration, the service in each state (systemctl and
timedatectl are played by scripts earlier on PATH: this machine may run no
systemd), a robot on a device, a device no robot answers on, the wrong
family configured, a device the service may not open, one another program
holds, a port taken, the clock, the recordings' disk, the class's broker
(a real mosquitto), the udev rules, a running bridge, and the exit status
0 only when everything is well. docs/plug-and-play.md's doctor commands
are these runs.

FLOCKBRIDGE_BIN names the flockbridge executable (ctest sets it); the
simulator is the flockbridge-sim beside it.
"""

from __future__ import annotations

import importlib.util
import os
import pty
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

# A real mosquitto is started as the Python client's tests start theirs.
_spec = importlib.util.spec_from_file_location(
    "bridge_helpers", REPOSITORY / "clients" / "python" / "tests" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)


def binary() -> str:
    return os.environ.get("FLOCKBRIDGE_BIN") or str(REPOSITORY / "build" / "bin" / "flockbridge")


SIMULATOR = str(Path(binary()).parent / "flockbridge-sim")
FAMILIES = subprocess.run([binary(), "--list-families"], capture_output=True, text=True, check=True).stdout.split()


class Machine:
    """What doctor sees of the machine: the programs it asks, and a folder of devices."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.devices = root / "dev"
        self.devices.mkdir()
        self.records = root / "recordings"
        self.records.mkdir()
        self.clock("yes")

    def program(self, name: str, prints: str, status: int = 0) -> None:
        script = self.bin / name
        script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{prints}\nEOF\nexit {status}\n")
        script.chmod(0o755)

    def service(self, **properties: str) -> None:
        """systemctl show flockbridge.service, as systemd would print it (a property of several
        values, one per line of `value`, on a line each)."""
        self.program("systemctl", "\n".join(f"{key}={each}" for key, value in properties.items()
                                             for each in value.split("\n")))

    def clock(self, synchronised: str) -> None:
        self.program("timedatectl", synchronised)

    def doctor(self, *options: str, configured: bool = False) -> "subprocess.CompletedProcess[str]":
        environment = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}")
        arguments = [binary(), "doctor", *([] if configured else ["--no-config"])]
        arguments += ["--device", "auto", "--search", str(self.devices / "tty*"), "--record", str(self.records)]
        arguments += ["--port", "0", "--json-port", "0", "--http-port", "0", *options]
        return subprocess.run(arguments, capture_output=True, text=True, timeout=120, env=environment)


# A running service whose user may open the test's devices (pseudo-terminals, root's here).
RUNNING = dict(LoadState="loaded", ActiveState="active", SubState="running", Result="success", MainPID="4242",
               ExecMainStatus="0", User="root", SupplementaryGroups="dialout flockbridge-config", DevicePolicy="auto")


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


class Robot:
    """A family's simulated robot, plugged in at `link`."""

    def __init__(self, family: str, link: Path) -> None:
        self.process = subprocess.Popen([SIMULATOR, "--robot", family, "--link", str(link)], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("ready "):
                break
        else:
            pytest.fail(f"the simulated {family} did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def robots() -> Iterator[List[Robot]]:
    started: List[Robot] = []
    yield started
    for robot in started:
        robot.stop()


class Echo:
    """A device that echoes what it is sent: no robot."""

    def __init__(self, link: Path) -> None:
        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        self.slave = os.ttyname(slave)
        os.close(slave)
        link.symlink_to(self.slave)
        self.running = True
        self.thread = threading.Thread(target=self.play, daemon=True)
        self.thread.start()

    def play(self) -> None:
        import select

        while self.running:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    os.write(self.master, os.read(self.master, 256))
                except OSError:
                    time.sleep(0.02)  # nobody has it open

    def close(self) -> None:
        self.running = False
        self.thread.join()
        os.close(self.master)


def problems(shown: "subprocess.CompletedProcess[str]") -> List[str]:
    return [line for line in shown.stdout.splitlines() if line.startswith("  PROBLEM ")]


def line_of(shown: "subprocess.CompletedProcess[str]", topic: str) -> str:
    for line in shown.stdout.splitlines():
        if topic in line:
            return line
    raise AssertionError(f"no line about {topic!r}:\n{shown.stdout}{shown.stderr}")


def fix_after(shown: "subprocess.CompletedProcess[str]", topic: str) -> str:
    lines = shown.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if topic in line and "PROBLEM" in line)
    fix = next(line for line in lines[at + 1 :] if line.strip().startswith("fix: "))
    return fix.strip()


def test_everything_well_is_exit_0(machine: Machine, robots: List[Robot]) -> None:
    machine.service(**RUNNING)
    robots.append(Robot(FAMILIES[0], machine.devices / "ttyUSB0"))
    shown = machine.doctor()
    assert problems(shown) == [], shown.stdout
    assert shown.stdout.rstrip().endswith("Everything is well."), shown.stdout
    assert shown.returncode == 0, shown.stdout + shown.stderr


def test_a_bad_configuration_is_told_with_its_line_and_the_rest_is_still_checked(machine: Machine) -> None:
    config = machine.root / "flockbridge.toml"
    config.write_text('[serial]\nbaud = "fast"\n')
    shown = machine.doctor("--config", str(config), configured=True)
    assert shown.returncode == 1
    line = line_of(shown, "configuration:")
    assert "PROBLEM" in line and str(config) in line, shown.stdout
    assert "serial.baud" in shown.stdout and "fix: mend what each line says" in shown.stdout
    assert "the clock:" in shown.stdout  # the other checks were made


@pytest.mark.parametrize(
    "state, said, fix",
    [
        (dict(LoadState="not-found"), "not installed", "install the package"),
        (dict(RUNNING, ActiveState="failed", SubState="failed", Result="exit-code", ExecMainStatus="78"),
         "failed (result exit-code, exit status 78)", "journalctl -u flockbridge"),
        (dict(RUNNING, ActiveState="inactive", SubState="dead"), "not running (inactive, dead)",
         "sudo systemctl enable --now flockbridge"),
        (dict(RUNNING, ActiveState="activating", SubState="auto-restart"), "restarting after a failure",
         "journalctl -u flockbridge"),
    ],
)
def test_the_service_in_each_state(machine: Machine, state: Dict[str, str], said: str, fix: str) -> None:
    machine.service(**state)
    shown = machine.doctor()
    assert said in line_of(shown, "the service:"), shown.stdout
    assert fix in fix_after(shown, "the service:")
    assert shown.returncode == 1


def test_no_systemd_is_a_note(machine: Machine) -> None:
    shown = machine.doctor()  # no systemctl on PATH answers: the script is not there
    if shutil.which("systemctl") is not None and subprocess.run(["systemctl", "show", "flockbridge.service"],
                                                                capture_output=True).returncode == 0:
        pytest.skip("systemd runs on this machine")
    assert line_of(shown, "the service:").startswith("  note ")


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_robot_is_found_on_its_device(machine: Machine, robots: List[Robot], family: str) -> None:
    machine.service(**RUNNING)
    robots.append(Robot(family, machine.devices / "ttyUSB0"))
    shown = machine.doctor()
    line = line_of(shown, f"serial device {machine.devices / 'ttyUSB0'}:")
    assert line.startswith("  ok ") and f"a {family} robot" in line and " baud in " in line, shown.stdout


def test_a_device_no_robot_answers_on_is_a_problem_and_says_why(machine: Machine) -> None:
    machine.service(**RUNNING)
    echo = Echo(machine.devices / "ttyUSB0")
    try:
        shown = machine.doctor()
    finally:
        echo.close()
    line = line_of(shown, f"serial device {machine.devices / 'ttyUSB0'}:")
    assert "PROBLEM" in line and "it talks, but as no robot does" in line, shown.stdout
    assert "switched on" in fix_after(shown, "serial device")


def test_no_device_at_all_is_a_problem(machine: Machine) -> None:
    shown = machine.doctor()
    assert "PROBLEM serial devices: none on" in shown.stdout, shown.stdout
    assert "plug the robot in" in fix_after(shown, "serial devices")


def test_the_wrong_family_configured_is_told(machine: Machine, robots: List[Robot]) -> None:
    if len(FAMILIES) < 2:
        pytest.fail("two families are needed")
    robots.append(Robot(FAMILIES[0], machine.devices / "ttyUSB0"))
    shown = machine.doctor("--robot", FAMILIES[1])
    assert f"robot.family is {FAMILIES[1]}, but a {FAMILIES[0]} robot answered here" in shown.stdout, shown.stdout
    assert f"--robot {FAMILIES[0]}" in fix_after(shown, "robot.family is")


def test_a_device_the_service_may_not_open(machine: Machine, robots: List[Robot]) -> None:
    # The packaged unit's user (a dynamic one, in dialout) may not open a pseudo-terminal (root's, not
    # dialout's), and its devices are closed but for USB serial adapters'.
    machine.service(**dict(RUNNING, User="", DynamicUser="yes", DevicePolicy="closed",
                           DeviceAllow="char-ttyUSB rw\nchar-ttyACM rw"))
    robots.append(Robot(FAMILIES[0], machine.devices / "ttyUSB0"))
    shown = machine.doctor()
    said = [line for line in problems(shown) if "ttyUSB0" in line]
    assert any("the service may not open it" in line and "dialout" in line for line in said), shown.stdout
    assert any("DeviceAllow= lets the service open no char-pts device" in line for line in said), shown.stdout
    assert "DeviceAllow=char-pts rw" in shown.stdout


def hold(device: str, name: str, folder: Path) -> "subprocess.Popen[bytes]":
    """A program called `name` that holds `device` open, once it does."""
    holder = folder / name
    shutil.copy("/bin/sleep", holder)
    held = subprocess.Popen(["/bin/sh", "-c", f'exec 3<>"{device}"; exec "{holder}" 60'])
    deadline = time.monotonic() + 10
    while not any(os.path.realpath(f"/proc/{held.pid}/fd/{fd}") == device
                  for fd in (os.listdir(f"/proc/{held.pid}/fd") if os.path.exists(f"/proc/{held.pid}/fd") else [])):
        assert time.monotonic() < deadline, "the holder did not open the device"
        time.sleep(0.02)
    return held


@pytest.mark.parametrize("name, fix", [
    ("ModemManager", "98-flockbridge-serial.rules"),  # as it opens a new adapter to look for a modem
    ("agetty", "sudo systemctl disable --now serial-getty@"),  # a login console on the device
])
def test_a_device_another_program_holds(machine: Machine, robots: List[Robot], name: str, fix: str) -> None:
    robots.append(Robot(FAMILIES[0], machine.devices / "ttyUSB0"))
    device = os.path.realpath(machine.devices / "ttyUSB0")
    held = hold(device, name, machine.root)
    try:
        shown = machine.doctor()
    finally:
        held.kill()
        held.wait()
    assert f"held by {name} (pid {held.pid})" in shown.stdout, shown.stdout
    assert fix in fix_after(shown, f"held by {name}")


def test_a_second_bridge_beside_the_service(machine: Machine, robots: List[Robot]) -> None:
    machine.service(**RUNNING)  # the service's bridge is pid 4242; another one holds the device
    robots.append(Robot(FAMILIES[0], machine.devices / "ttyUSB0"))
    bridge = subprocess.Popen([binary(), "--no-config", "--robot", FAMILIES[0], "--device",
                               str(machine.devices / "ttyUSB0"), "--port", "0", "--json-port", "0", "--http-port", "0",
                               "--bind", "127.0.0.1"], stderr=subprocess.PIPE, text=True)
    try:
        assert bridge.stderr is not None
        for line in bridge.stderr:
            if "robot link up" in line:
                break
        shown = machine.doctor()
    finally:
        bridge.terminate()
        bridge.wait(timeout=20)
    assert f"held by a second bridge (pid {bridge.pid})" in shown.stdout, shown.stdout
    assert "one bridge serves a robot" in fix_after(shown, "held by a second bridge")


def test_a_port_another_program_holds(machine: Machine) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        shown = machine.doctor("--json-port", str(port))
    line = line_of(shown, f"port {port}:")
    assert "PROBLEM" in line and f"taken by python3 (pid {os.getpid()})" in line, shown.stdout
    assert "--json-port PORT" in fix_after(shown, f"port {port}:")


def test_the_clock_not_synchronised(machine: Machine) -> None:
    machine.clock("no")
    shown = machine.doctor()
    assert "PROBLEM the clock: not synchronised" in shown.stdout, shown.stdout
    assert "timedatectl set-ntp true" in fix_after(shown, "the clock:")


def test_a_recordings_folder_that_cannot_be_made(machine: Machine) -> None:
    blocker = machine.root / "a-file"
    blocker.write_text("")
    shown = machine.doctor("--record", str(blocker / "recordings"))
    assert f"{blocker} is no folder" in line_of(shown, "recordings "), shown.stdout


def test_a_recordings_disk_nearly_full(machine: Machine) -> None:
    if os.geteuid() != 0:
        pytest.fail("the test command runs as root: a small disk of its own is mounted in a namespace")
    small = machine.root / "small"
    small.mkdir()
    environment = dict(os.environ, PATH=f"{machine.bin}:{os.environ['PATH']}")
    shown = subprocess.run(
        ["unshare", "--mount", "sh", "-c",
         f'mount -t tmpfs -o size=1m tmpfs "{small}" && exec "{binary()}" doctor --no-config --device auto '
         f'--search "{machine.devices}/tty*" --record "{small}/recordings" --port 0 --json-port 0 --http-port 0'],
        capture_output=True, text=True, timeout=60, env=environment)
    line = line_of(shown, "recordings ")
    assert "PROBLEM" in line and "only 1 MB free" in line or "only 0 MB free" in line, shown.stdout + shown.stderr
    assert "record.total_mb" in fix_after(shown, "recordings ")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[int]:
    """A real mosquitto on 127.0.0.1 that takes the account robot1 / its password only; its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "mosquitto"
    folder.mkdir()
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(folder / "passwd"), "robot1", "s3cret"], check=True,
                   capture_output=True)
    (folder / "mosquitto.conf").write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {folder / 'passwd'}\npersistence false\n"
        "user root\n")
    with helpers.running_mosquitto(folder / "mosquitto.conf", port):
        yield port


@pytest.mark.parametrize("password, said", [("s3cret", "takes the account robot1"), ("wrong", "refused the account robot1")])
def test_the_class_broker_with_the_configured_account(machine: Machine, broker: int, password: str, said: str) -> None:
    secret = machine.root / "mqtt-password"
    secret.write_text(password + "\n")
    config = machine.root / "flockbridge.toml"
    config.write_text(f'[mqtt]\nenabled = true\nhost = "127.0.0.1"\nport = {broker}\nrobot_name = "robot1"\n'
                      f'password_file = "{secret}"\n')
    config.chmod(0o600)
    shown = machine.doctor("--config", str(config), configured=True)
    assert said in line_of(shown, "the class's broker:"), shown.stdout
    if password == "wrong":
        assert "mqtt.password_file" in fix_after(shown, "the class's broker:")


def test_the_class_broker_unreachable(machine: Machine) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nobody listens there
    config = machine.root / "flockbridge.toml"
    config.write_text(f'[mqtt]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\n')
    shown = machine.doctor("--config", str(config), configured=True)
    assert f"PROBLEM the class's broker: cannot reach 127.0.0.1:{port}" in shown.stdout, shown.stdout


def in_udev_namespace(machine: Machine, rules: Optional[List[str]]) -> "subprocess.CompletedProcess[str]":
    """doctor where udev runs (a /run/udev of its own), with `rules` in /etc/udev/rules.d (None: none there)."""
    if os.geteuid() != 0:
        pytest.fail("the test command runs as root: udev's folders of its own are mounted in a namespace")
    copies = machine.root / "rules"
    copies.mkdir()
    for rule in rules or []:
        shutil.copy(REPOSITORY / "deploy" / rule, copies / rule)
    script = (f'mount -t tmpfs tmpfs /run && mkdir -p /run/udev && touch /run/udev/control && '
              f'mkdir -p /etc/udev/rules.d && mount --bind "{copies}" /etc/udev/rules.d && '
              f'for folder in /lib/udev/rules.d /usr/lib/udev/rules.d; do '
              f'[ -d "$folder" ] && mount -t tmpfs tmpfs "$folder"; done; '
              f'exec "{binary()}" doctor --no-config --device auto --search "{machine.devices}/tty*" '
              f'--record "{machine.records}" --port 0 --json-port 0 --http-port 0')
    environment = dict(os.environ, PATH=f"{machine.bin}:{os.environ['PATH']}")
    return subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=60,
                          env=environment)


def test_the_udev_rules_missing_where_udev_runs(machine: Machine) -> None:
    shown = in_udev_namespace(machine, None)
    line = line_of(shown, "udev rules:")
    assert "PROBLEM" in line and "98-flockbridge-serial.rules and 99-flockbot.rules not installed" in line, (
        shown.stdout + shown.stderr)
    assert "udevadm control --reload" in fix_after(shown, "udev rules:")
    (machine.root / "again").mkdir()
    installed = in_udev_namespace(Machine(machine.root / "again"), ["98-flockbridge-serial.rules", "99-flockbot.rules"])
    assert line_of(installed, "udev rules:").startswith("  ok "), installed.stdout + installed.stderr


def test_a_running_bridge_is_asked_and_its_device_left_alone(machine: Machine, robots: List[Robot]) -> None:
    robots.append(Robot(FAMILIES[0], machine.devices / "ttyUSB0"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    bridge = subprocess.Popen([binary(), "--no-config", "--robot", "auto", "--device", "auto", "--search",
                               str(machine.devices / "tty*"), "--port", "0", "--json-port", str(port),
                               "--http-port", "0", "--bind", "127.0.0.1"], stderr=subprocess.PIPE, text=True)
    try:
        assert bridge.stderr is not None
        for line in bridge.stderr:
            if "robot link up" in line:
                break
        else:
            pytest.fail("the bridge's robot link did not come up")
        shown = machine.doctor("--json-port", str(port))
    finally:
        bridge.terminate()
        bridge.wait(timeout=20)
    assert f"served by the running bridge (pid {bridge.pid})" in shown.stdout, shown.stdout
    assert f"the bridge listens there (pid {bridge.pid}" in line_of(shown, f"port {port}:")
    assert f"the running bridge serves a {FAMILIES[0]} robot" in line_of(shown, "the robot:")
