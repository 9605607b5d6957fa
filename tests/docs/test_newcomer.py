"""What a newcomer meets in their first hour with the bridge, from the
README's first command on: the start's banner, --help, a mistyped option, a
busy port, a mistyped JSON command, a recording folder the bridge may not
write. Each against the real daemon and its simulated robots.

FLOCKBRIDGE_BIN names the flockbridge executable (ctest sets it).
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def binary() -> str:
    return os.environ.get("FLOCKBRIDGE_BIN") or str(REPOSITORY / "build" / "bin" / "flockbridge")


# Every robot family, from the bridge itself.
FAMILIES = subprocess.run([binary(), "--list-families"], capture_output=True, text=True, check=True).stdout.split()


def run(*arguments: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([binary(), "--no-config", *arguments], capture_output=True, text=True, timeout=30)


class Started:
    """A bridge on free ports, its stderr read line by line as it comes."""

    def __init__(self, *arguments: str) -> None:
        configured = "--config" in arguments
        self.process = subprocess.Popen(
            [binary(), *([] if configured else ["--no-config"]), "--port", "0", "--json-port", "0", "--http-port", "0",
             *arguments],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: List[str] = []
        self.partial = ""  # a line begun, not yet ended

    def read_until(self, pattern: str, timeout: float = 20) -> str:
        """The first line the bridge wrote that matches `pattern`, waiting for it.

        Read from the pipe itself, not through Python's buffer, which would
        hide from select() the lines it has already taken in."""
        assert self.process.stderr is not None
        fd = self.process.stderr.fileno()
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines:
                if re.search(pattern, line):
                    return line
            left = deadline - time.monotonic()
            assert left > 0, f"no line like {pattern!r}; the bridge wrote:\n" + "".join(self.lines) + self.partial
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536).decode(errors="replace")
                assert chunk, "the bridge ended; it wrote:\n" + "".join(self.lines) + self.partial
                *whole, self.partial = (self.partial + chunk).split("\n")
                self.lines += [line + "\n" for line in whole]

    def json_port(self) -> int:
        return int(re.search(r"JSON clients on [^ ,]*:(\d+)", self.read_until("listening: ")).group(1))  # type: ignore

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def started() -> Iterator[List[Started]]:
    running: List[Started] = []
    yield running
    for bridge in running:
        bridge.stop()


def json_session(port: int) -> Tuple[socket.socket, "socket.SocketIO"]:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s, s.makefile("rwb")  # type: ignore[return-value]


def ask(lines: "socket.SocketIO", command: Dict[str, object], reply_id: int) -> Dict[str, object]:
    lines.write((json.dumps({**command, "id": reply_id}) + "\n").encode())  # type: ignore[attr-defined]
    lines.flush()
    while True:
        message = json.loads(lines.readline())  # type: ignore[attr-defined]
        if message.get("id") == reply_id and message.get("type") in ("ok", "error", "stats"):
            return dict(message)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_start_says_where_to_connect_for_its_own_family_only(family: str, started: List[Started]) -> None:
    bridge = Started("--robot", family, "--simulate", "--welcome")
    started.append(bridge)
    bridge.read_until("Stop it with Ctrl-C")
    banner = "".join(bridge.lines[next(i for i, l in enumerate(bridge.lines) if "flockbridge serves" in l) :])
    assert f"a simulated {family} robot" in banner
    own = re.search(r"^  (.*programs.*):\s+TCP port (\d+)$", banner, re.MULTILINE)
    listening = bridge.read_until("listening: ")
    if "native clients on " in listening:
        assert own is not None, banner
        assert f":{own.group(2)}," in listening  # the port in use, not a default
    else:  # a family whose robot has no programs of its own: no such port, and none named
        assert own is None, banner
    for other in FAMILIES:
        if other != family:
            assert other not in banner.lower().replace(f"{family} robot", ""), banner
    assert "nc localhost " in banner and "http://localhost:" in banner and "ws://localhost:" in banner


def test_help_begins_with_what_a_newcomer_needs() -> None:
    shown = run("--help")
    assert shown.returncode == 0
    options = [line.split()[0] for line in shown.stdout.splitlines() if line.startswith("  -")]
    first = options[:10]
    for needed in ("--robot", "--simulate", "--device", "--http-port", "--json-port", "--port"):
        assert needed in first, first


def test_a_mistyped_option_gets_one_message_and_the_configuration_error_status() -> None:
    said = run("--simulte")
    assert said.returncode == 78
    assert said.stderr.splitlines() == [
        "flockbridge: there is no option --simulte; did you mean --simulate?",
        "Run flockbridge --help for its options.",
    ]
    assert run("--baud").returncode == 78


@pytest.mark.parametrize("option", ["--http-port", "--json-port", "--port"])
def test_a_busy_port_names_the_option_that_moves_it(option: str) -> None:
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ports = {"--port": "0", "--json-port": "0", "--http-port": "0", option: str(port)}
        said = run("--simulate", *[word for pair in ports.items() for word in pair])
    assert said.returncode != 0
    errors = [line for line in said.stderr.splitlines() if "error" in line]
    assert errors and f":{port} " in errors[0] and "the port is in use" in errors[0], said.stderr
    assert f"choose another with {option}" in errors[0], said.stderr
    assert "ERROR on binding" not in said.stderr  # libwebsockets' own words come no more


def test_a_mistyped_json_command_gets_the_one_meant(started: List[Started]) -> None:
    bridge = Started("--robot", "smr", "--simulate")
    started.append(bridge)
    s, lines = json_session(bridge.json_port())
    with s:
        for typed, meant in (("drve", "drive"), ("stat", "stats"), ("subscrib", "subscribe"), ("emergncy", "emergency")):
            refused = ask(lines, {"cmd": typed}, 1)
            assert refused["type"] == "error" and refused["code"] == "invalid"
            assert str(refused["error"]).endswith(f"did you mean '{meant}'?"), refused
        refused = ask(lines, {"cmd": "fly"}, 2)
        assert "did you mean" not in str(refused["error"])  # nothing near: no guess


def test_recording_into_a_folder_the_bridge_cannot_write_suggests_record_dir(
    started: List[Started], tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    config = tmp_path / "flockbridge.toml"
    config.write_text(f'[record]\ndirectory = "{blocker}/recordings"\n')
    bridge = Started("--robot", "smr", "--simulate", "--config", str(config))
    started.append(bridge)
    s, lines = json_session(bridge.json_port())
    with s:
        bridge.read_until("robot link up")
        refused = ask(lines, {"cmd": "record_start"}, 1)  # the dashboard's Record button
    assert refused["type"] == "error", refused
    assert f"cannot record into {blocker}/recordings" in str(refused["error"]), refused
    assert "start the bridge with --record DIR" in str(refused["error"]), refused


def test_the_families_listed_are_the_robots_robot_takes() -> None:
    # The one list the tests, benchmarks and scripts cover: every family
    # --robot takes that has a robot, once each, and not the hub's "none".
    assert FAMILIES and len(set(FAMILIES)) == len(FAMILIES), FAMILIES
    assert "none" not in FAMILIES
    for family in FAMILIES:
        chosen = run("--robot", family, "--print-config")
        assert chosen.returncode == 0, chosen.stderr
        assert f"family = '{family}'" in chosen.stdout
    assert "--list-families" in run("--help").stdout
