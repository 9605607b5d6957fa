"""Every example of the README and docs/, run as a user would run it.

Each fenced block of README.md and docs/*.md says, in an HTML comment on
the line before it (invisible on the rendered page), how the tests run it:

    <!-- example: KIND ARGUMENTS -->

  python FAMILY        a program: run against a simulated FAMILY, its robot's
                       name replaced by the simulated bridge's address; "every":
                       against each family in turn
  python-fragment FAMILY  lines of a program that has `robot`: run inside
                       `with flockbridge.connect(...) as robot:`
  excerpt FILE         part of FILE, line for line (the robot's name aside),
                       and FILE is run by a test that names it
  session FAMILY       a terminal session: every flockbridge command line
                       parses, and the JSON lines typed (after nc) are sent
                       to a simulated FAMILY and each is answered ok; the
                       first asks for a rate a person can read
  transcript FAMILY    "client:"/"bridge:" lines of port 2006: the client's
                       are sent, the bridge's answers come, of the same type
  bytes FAMILY         "client -> bridge"/"bridge -> client" hex of port 2005
  js FAMILY            a WebSocket program for the dashboard's /ws, run by Node
  options              flockbridge command lines: each parses (--print-config)
  toml NAME            a configuration file (NAME, for the page's commands): it loads
  bad-toml NAME        a configuration file with mistakes in it
  errors NAME          what flockbridge prints for the bad NAME: the same lines
  message TYPE FAMILY  a message: its fields are those of a live one, same types
  fleet TOPIC FAMILY   a fleet topic's payload, from a live bridge on a real broker
  mqtt FAMILY          mosquitto_pub and mosquitto_sub commands, against a real
                       broker and a simulated FAMILY on it: each does what the page says
  cli FAMILY           python3 -m flockbridge commands, against a simulated FAMILY
  replay FAMILY        a flockbridge command that records a simulated FAMILY's run,
                       then commands that replay the file it made: each replay gives
                       a JSON client the run's messages and ends
  start                the README's two commands: the first starts the bridge, which
                       serves; the second is what CI runs
  by-hand              a simulator and a bridge started by hand: the link comes up
  benchmark            a benchmark's command, run shortened (test_benchmarks)
  run-by FILE...       commands that a test of its own runs, which names the page
  diagram              a drawing or a layout, not something to run
  output               what a command prints, shown next to the command itself

FLOCKBRIDGE_BIN names the flockbridge executable (ctest sets it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
KINDS = {
    "python", "python-fragment", "bad-toml", "mqtt", "excerpt", "session", "transcript", "bytes", "js", "options", "toml", "errors", "message", "fleet",
    "cli", "start", "by-hand", "benchmark", "run-by", "diagram", "output", "replay", "foxglove",
}

# The Python client's tests start bridges the same way: one helper for both.
_spec = importlib.util.spec_from_file_location(
    "bridge_helpers", REPOSITORY / "clients" / "python" / "tests" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)
Bridge = helpers.Bridge


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    kind: str
    arguments: List[str]
    text: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPOSITORY)}:{self.line}"


def read_blocks() -> List[Block]:
    found: List[Block] = []
    for page in PAGES:
        lines = page.read_text().split("\n")
        i = 0
        while i < len(lines):
            if lines[i].startswith("```"):
                end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
                said = re.fullmatch(r"<!-- example: (.*?) -->", lines[i - 1].strip()) if i > 0 else None
                words = said.group(1).split() if said else ["", ""]
                found.append(Block(page, i + 1, words[0], words[1:], "\n".join(lines[i + 1 : end]) + "\n"))
                i = end + 1
            else:
                i += 1
    return found


BLOCKS = read_blocks()


def of_kind(*kinds: str) -> List[Any]:
    return [pytest.param(b, id=b.name) for b in BLOCKS if b.kind in kinds]


def test_every_example_says_how_it_is_run() -> None:
    unsaid = [f"{b.name}: {b.text.splitlines()[0] if b.text.strip() else ''}" for b in BLOCKS if b.kind not in KINDS]
    assert not unsaid, "blocks with no <!-- example: KIND --> line before them:\n" + "\n".join(unsaid)
    assert len(BLOCKS) > 40


# ---- the bridges ------------------------------------------------------------


@pytest.fixture
def bridges() -> Iterator[Any]:
    started: List[Any] = []

    def start(family: str, *options: str, config: Optional[str] = None) -> Any:
        bridge = Bridge(family, *options, config=config, simulate=family != "none")
        started.append(bridge)
        if family != "none":
            bridge.wait_link_up()
        return bridge

    yield start
    for bridge in started:
        bridge.stop()


def binary() -> str:
    return str(helpers.bridge_binary())


def with_robot(text: str, bridge: Any) -> str:
    """A program with its robot's name (the first argument of connect or Robot) made the bridge's address."""
    replaced, count = re.subn(r'\b(connect|Robot)\("[^"]*"', lambda m: f'{m.group(1)}("{bridge.address}"', text)
    # A program of port 2005's, in plain sockets.
    replaced, plain = re.subn(r'create_connection\(\("[^"]*", 2005\)', f'create_connection(("127.0.0.1", {bridge.native_port})',
                              replaced)
    assert count + plain >= 1, "the program names no robot to connect to"
    return replaced


def run_python(code: str, timeout: float = 60) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-c", code], env=helpers.client_env(), capture_output=True, text=True, timeout=timeout
    )


class JsonLines:
    """A client of port 2006 that reads what the bridge sends, line by line."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""
        self.next_id = 1000

    def read(self, timeout: float = 10) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "the bridge sent nothing more"
            self.socket.settimeout(left)
            chunk = self.socket.recv(65536)
            assert chunk, "the bridge closed the connection"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: Dict[str, Any] = json.loads(line)
        return message

    def read_type(self, kind: str, timeout: float = 10) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.1, deadline - time.monotonic()))
            if message.get("type") == kind:
                return message

    def command(self, command: Dict[str, Any]) -> Dict[str, Any]:
        """Sends a command with an id of its own; its answer (ok or error)."""
        self.next_id += 1
        self.socket.sendall((json.dumps({**command, "id": self.next_id}) + "\n").encode())
        while True:
            message = self.read()
            if message.get("id") == self.next_id and message.get("type") in ("ok", "error"):
                return message

    def close(self) -> None:
        self.socket.close()


# ---- programs ---------------------------------------------------------------


@pytest.mark.parametrize("block", of_kind("python"))
def test_python_programs(block: Block, bridges: Any) -> None:
    # "every": the program is written for the common robot model, and runs unchanged on each family.
    families = helpers.robot_families() if block.arguments[0] == "every" else [block.arguments[0]]
    for family in families:
        bridge = bridges(family, *block.arguments[1:])
        # Twice in a row, as a student runs it again: the second run starts
        # where the first left the robot.
        for run_number in (1, 2):
            done = run_python(with_robot(block.text, bridge))
            assert done.returncode == 0, f"{block.name} failed on a {family} (run {run_number}):\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", of_kind("python-fragment"))
def test_python_fragments(block: Block, bridges: Any) -> None:
    bridge = bridges(block.arguments[0])
    program = 'import flockbridge\nwith flockbridge.connect("robot") as robot:\n' + "".join(
        "    " + line + "\n" for line in block.text.splitlines()
    )
    done = run_python(with_robot(program, bridge))
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout}\n{done.stderr}"


def normalised(line: str) -> str:
    """A line of a program, for comparing an excerpt with its file: no comment, any robot name."""
    line = re.sub(r"\s+#.*$", "", line.rstrip())
    return re.sub(r"\b(connect|Robot)\([^)]*\)", r"\1(ROBOT)", line)


@pytest.mark.parametrize("block", of_kind("excerpt"))
def test_excerpts_are_programs_the_tests_run(block: Block) -> None:
    path = REPOSITORY / block.arguments[0]
    whole = [normalised(line) for line in path.read_text().splitlines()]
    at = 0
    for line in block.text.splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        wanted = normalised(line)
        while at < len(whole) and whole[at] != wanted:
            at += 1
        assert at < len(whole), f"{block.name}: {line!r} is not in {path.name} (in this order)"
        at += 1
    runners = [p for p in (REPOSITORY / "clients" / "python" / "tests").glob("test_*.py") if path.name in p.read_text()]
    runners += [p for p in (REPOSITORY / "tests").rglob("*.py") if path.name in p.read_text() and p != Path(__file__)]
    assert runners, f"no test runs {path.name}"


# ---- sessions of port 2006 ------------------------------------------------------


def command_lines(text: str) -> List[List[str]]:
    """The flockbridge command lines of a shell block, continued lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    lines = []
    for line in joined.splitlines():
        words = line.split("#", 1)[0].split()
        if words and re.fullmatch(r"(build/bin/)?flockbridge", words[0]):
            lines.append(words[1:])
    return lines


def parses(arguments: List[str], folder: Path) -> "subprocess.CompletedProcess[str]":
    """flockbridge with these options, asked only to print the configuration they make."""
    home = folder / "home"
    arguments = [a.replace("~", str(home)) for a in arguments]
    for i, argument in enumerate(arguments[:-1]):
        # A file an option names is the reader's own: an empty one stands in for it.
        if argument == "--config" or argument.endswith("-file"):
            path = folder / arguments[i + 1]
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("")
                path.chmod(0o600)
    if not any(a in arguments for a in ("--print-config", "--print-default-config")):
        arguments = arguments + ["--print-config"]
    return subprocess.run(
        [binary(), *arguments],
        cwd=folder,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )


def check_command_lines(block: Block, folder: Path) -> None:
    for arguments in command_lines(block.text):
        done = parses(arguments, folder)
        assert done.returncode == 0, f"{block.name}: flockbridge {' '.join(arguments)}:\n{done.stderr}"


@pytest.mark.parametrize("block", of_kind("session"))
def test_sessions_of_the_json_port(block: Block, bridges: Any, tmp_path: Path) -> None:
    check_command_lines(block, tmp_path)
    simulated = [a for a in command_lines(block.text) if "--simulate" in a]
    options = simulated[0] if simulated else ["--robot", block.arguments[0], "--simulate"]
    family = options[options.index("--robot") + 1] if "--robot" in options else "flockbot"
    assert family == block.arguments[0], f"{block.name}: the session's bridge is a {family}"
    typed = [json.loads(line) for line in block.text.splitlines() if line.startswith("{")]
    assert typed, f"{block.name}: nothing typed"
    # Nobody reads 50 to 100 sensor messages a second in a terminal: the
    # session asks for a readable rate first.
    assert typed[0].get("cmd") == "subscribe" and typed[0].get("interval_ms", 0) >= 250, (
        f"{block.name}: the first line typed should be a subscribe of at least 250 ms"
    )
    bridge = bridges(family, *[o for o in options if o not in ("--robot", family, "--simulate")])
    client = JsonLines(bridge.json_port)
    try:
        assert client.read()["type"] == "hello"
        for command in typed:
            answer = client.command(command)
            assert answer["type"] == "ok", f"{block.name}: {command} was answered {answer}"
            if command.get("cmd") == "subscribe":
                # What the person then sees: at most one reading per interval.
                start = time.monotonic()
                first = client.read_type("sensor", timeout=5)
                second = client.read_type("sensor", timeout=5)
                assert second["ts"] - first["ts"] >= command["interval_ms"] / 1000 - 0.02
                assert time.monotonic() - start < 5
    finally:
        client.close()


@pytest.mark.parametrize("block", of_kind("transcript"))
def test_transcripts_of_the_json_port(block: Block, bridges: Any) -> None:
    bridge = bridges(block.arguments[0])
    client = JsonLines(bridge.json_port)
    try:
        steps = [re.match(r"(client|bridge): (\{.*\})", line) for line in block.text.splitlines()]
        for step in [s for s in steps if s]:
            speaker, text = step.group(1), step.group(2)
            if speaker == "client":
                client.socket.sendall((text + "\n").encode())
                continue
            kind = re.search(r'"type":"(\w+)"', text)
            assert kind, f"{block.name}: {text}"
            message = client.read_type(kind.group(1), timeout=15)
            said = re.search(r'"error":"([^"]*)"', text)
            if said:
                assert message["error"] == said.group(1), f"{block.name}: the bridge says {message['error']!r}"
            number = re.search(r'"id":(\d+)', text)
            if number:
                assert message.get("id") == int(number.group(1)), f"{block.name}: {message}"
    finally:
        client.close()


def hex_bytes(text: str) -> Tuple[bytes, bool]:
    """The hex bytes at the start of `text`, and whether "..." follows them."""
    out = bytearray()
    for word in text.split():
        if word == "...":
            return bytes(out), True
        if not re.fullmatch(r"[0-9A-F]{2}", word):
            break
        out.append(int(word, 16))
    return bytes(out), False


@pytest.mark.parametrize("block", of_kind("bytes"))
def test_transcripts_of_port_2005(block: Block, bridges: Any) -> None:
    bridge = bridges(block.arguments[0], "--log-level", "debug")
    port = socket.create_connection(("127.0.0.1", bridge.native_port), timeout=10)
    buffer = b""

    def next_message() -> bytes:
        nonlocal buffer
        while not buffer or len(buffer) < 1 + buffer[0]:
            chunk = port.recv(4096)
            assert chunk, "the bridge closed the connection"
            buffer += chunk
        message, buffer = buffer[: 1 + buffer[0]], buffer[1 + buffer[0] :]
        return message

    try:
        for line in block.text.splitlines():
            if line.startswith("client -> bridge"):
                port.sendall(hex_bytes(line[len("client -> bridge") :])[0])
            elif line.startswith("bridge -> client"):
                expected, partial = hex_bytes(line[len("bridge -> client") :])
                while True:
                    message = next_message()
                    if message[:3] == expected[:3]:
                        break
                assert message.startswith(expected) if partial else message == expected, (
                    f"{block.name}: {message.hex(' ').upper()} for {line.strip()}"
                )
            elif "(on the serial line:" in line:
                frame, _ = hex_bytes(line.split("serial line:")[1])
                bridge.wait_log("rx " + frame[4:-1].hex(" ").upper())  # the simulated Uno got the payload
    finally:
        port.close()


@pytest.mark.parametrize("block", of_kind("js"))
def test_websocket_programs(block: Block, bridges: Any, tmp_path: Path) -> None:
    bridge = bridges(block.arguments[0], "--log-level", "debug")
    program = re.sub(r"ws://[^/\"]+/ws", f"ws://127.0.0.1:{bridge.http_port}/ws", block.text)
    assert program != block.text, f"{block.name}: no ws:// address"
    # The program logs each sensor message: the first one ends it.
    script = tmp_path / "example.mjs"
    script.write_text(
        "const log = console.log;\n"
        "console.log = (...words) => { log(...words); process.exit(0); };\n"
        "setTimeout(() => { log('no sensor message came'); process.exit(1); }, 15000);\n" + program
    )
    node = shutil.which("node")
    assert node, "no node: scripts/browser-deps.sh installs it"
    done = subprocess.run([node, "--experimental-websocket", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{block.name}:\n{done.stdout}\n{done.stderr}"
    assert re.match(r"\d+ \[", done.stdout), done.stdout  # "seq [ir...]"
    bridge.wait_log("simulated Uno: rx 44 4D 53 14")  # and its move went to the robot


# ---- configuration ---------------------------------------------------------------


def page_folder(block: Block, tmp_path: Path) -> Path:
    """A folder with the page's configuration files (its toml blocks), where its commands run."""
    for other in BLOCKS:
        if other.page == block.page and other.kind == "toml" and other.arguments:
            path = tmp_path / other.arguments[0]
            path.write_text(other.text)
            path.chmod(0o600)
    return tmp_path


@pytest.mark.parametrize("block", of_kind("options"))
def test_command_lines_parse(block: Block, tmp_path: Path) -> None:
    assert command_lines(block.text), f"{block.name}: no flockbridge command"
    check_command_lines(block, page_folder(block, tmp_path))


@pytest.mark.parametrize("block", of_kind("toml"))
def test_configuration_files_load(block: Block, tmp_path: Path) -> None:
    path = tmp_path / (block.arguments[0] if block.arguments else "example.toml")
    path.write_text(block.text)
    path.chmod(0o600)
    done = parses(["--config", str(path)], tmp_path)
    assert done.returncode == 0, f"{block.name}:\n{done.stderr}"


@pytest.mark.parametrize("block", of_kind("errors"))
def test_configuration_errors_are_as_shown(block: Block, tmp_path: Path) -> None:
    source = next(b for b in BLOCKS if b.page == block.page and b.kind == "bad-toml" and b.arguments == block.arguments)
    path = tmp_path / block.arguments[0]
    path.write_text(source.text)
    path.chmod(0o600)
    done = subprocess.run([binary(), "--config", str(path), "--print-config"], capture_output=True, text=True)
    assert done.returncode == 78
    said = [line.replace(str(path), "/etc/flockbridge/flockbridge.toml") for line in done.stderr.splitlines()]
    for shown in block.text.splitlines():
        # "..." ends a line the page shortens.
        head = shown.split("...")[0]
        assert any(line.startswith(head) for line in said), f"{block.name}: {shown!r} not in:\n" + "\n".join(said)


# ---- messages ---------------------------------------------------------------------


def same_shape(shown: Any, live: Any, where: str) -> List[str]:
    """Where the page's message has a field the live one lacks, or of another type (null is any)."""
    if shown is None or live is None:
        return []
    if isinstance(shown, dict):
        if not isinstance(live, dict):
            return [f"{where} is not an object"]
        problems = []
        for key, value in shown.items():
            if key not in live:
                problems.append(f"{where}.{key} is not in the bridge's message")
            else:
                problems += same_shape(value, live[key], f"{where}.{key}")
        return problems
    if isinstance(shown, list):
        if not isinstance(live, list):
            return [f"{where} is not a list"]
        if shown and live and isinstance(shown[0], dict):
            return same_shape(shown[0], live[0], f"{where}[0]")
        return []
    kinds = {bool: "bool", int: "number", float: "number", str: "text"}
    if kinds.get(type(shown)) != kinds.get(type(live)):
        return [f"{where} is {type(live).__name__} in the bridge's message, {type(shown).__name__} on the page"]
    return []


def live_message(client: JsonLines, kind: str, wanted: Any) -> Dict[str, Any]:
    """A message of `kind` with every field the page shows, if one comes within 10 s (else the last).

    `stats` is an answer: it is asked for each time, as a client asks for it."""

    def next_one() -> Dict[str, Any]:
        if kind == "stats":
            client.socket.sendall(b'{"cmd":"stats"}\n')
        return client.read_type(kind)

    deadline = time.monotonic() + 10
    message = next_one()
    while same_shape(wanted, message, kind) and time.monotonic() < deadline:
        message = next_one()
    return message


@pytest.mark.parametrize("block", of_kind("message"))
def test_messages_are_as_the_bridge_sends_them(block: Block, bridges: Any) -> None:
    kind, family = block.arguments
    shown = json.loads(block.text)
    bridge = bridges(family)
    client = JsonLines(bridge.json_port)
    try:
        if kind == "sensor" and family == "pioneer":
            client.command({"cmd": "drive", "v_mm_s": 300, "w_deg_s": 10})  # a moving robot, as on the page
        message = live_message(client, kind, shown)
        assert not same_shape(shown, message, kind), same_shape(shown, message, kind)
    finally:
        client.close()


def wait_output(process: "subprocess.Popen[str]", text: str, timeout: float, stream: Any = None) -> str:
    """What `process` printed (on `stream`, its stdout unless told) until it printed `text`.

    Read from the pipe itself, not through Python's buffer, which would hide
    from select() what it has already taken in."""
    fd = (stream or process.stdout).fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r}; it printed:\n{seen.decode(errors='replace')}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"it ended without {text!r}:\n{seen.decode(errors='replace')}"
            seen += chunk
    return seen.decode(errors="replace")


def drain(fd: int) -> None:
    while os.read(fd, 65536):
        pass


def start_broker(folder: Path) -> Tuple["subprocess.Popen[str]", int]:
    port = helpers.free_port()
    config = folder / "mosquitto.conf"
    config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n")
    process = subprocess.Popen(["mosquitto", "-c", str(config)], stderr=subprocess.PIPE, text=True)
    wait_output(process, " running", 10, process.stderr)
    # What it says from then on is read and dropped, so that it never waits for a full pipe.
    threading.Thread(target=drain, args=(process.stderr.fileno(),), daemon=True).start()
    return process, port


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[int]:
    """A real mosquitto on 127.0.0.1, anonymous: its port."""
    process, port = start_broker(tmp_path)
    yield port
    process.terminate()
    process.wait(timeout=10)


@pytest.mark.parametrize("block", of_kind("fleet"))
def test_fleet_payloads_are_as_the_bridge_publishes_them(block: Block, bridges: Any, broker: int) -> None:
    topic, family = block.arguments
    shown = json.loads(block.text)
    bridges(family, "--mqtt", "--mqtt-host", "127.0.0.1", "--mqtt-port", str(broker), "--robot-name", "r1",
            "--mqtt-telemetry-hz", "10")
    deadline = time.monotonic() + 15
    problems = ["nothing came"]
    while problems and time.monotonic() < deadline:
        got = subprocess.run(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker), "-C", "1", "-W", "5", "-t", f"flockbridge/v1/r1/{topic}"],
            capture_output=True, text=True, timeout=30,
        )
        if got.returncode == 0:
            problems = same_shape(shown, json.loads(got.stdout), topic)
    assert not problems, f"{block.name}: {problems}"


# ---- recording a run and replaying it ----------------------------------------------------


@pytest.mark.parametrize("block", of_kind("replay"))
def test_a_run_recorded_and_replayed(block: Block, bridges: Any, tmp_path: Path) -> None:
    """The first command records a run; each next one replays the file it made, as shown."""
    family = block.arguments[0]
    first, *replays = command_lines(block.text)
    assert "--record" in first and replays, f"{block.name}: a recording, then replays"
    home = tmp_path / "home"
    recorder = bridges(family, *[a.replace("~", str(home)) for a in first if a not in ("--robot", family, "--simulate")])
    recorder.wait_log("recording into ")
    client = JsonLines(recorder.json_port)
    try:
        got = [client.read_type("sensor") for _ in range(20)]
    finally:
        client.close()
    recorder.stop()
    (made,) = (home / "recordings").glob("*.mcap")
    for options in replays:
        shown = next(a for a in options if a.endswith(".mcap"))
        options = [str(made) if a == shown else a for a in options]
        replay = Bridge(family, *options, simulate=False)
        try:
            client = JsonLines(replay.json_port)
            hello = client.read()
            assert hello["replay"]["file"] == made.name, f"{block.name}: {hello}"
            speed = float(options[options.index("--replay-speed") + 1]) if "--replay-speed" in options else 1.0
            assert hello["replay"]["speed"] == speed
            played = {}
            while True:
                message = client.read()
                if message["type"] == "sensor":
                    played[message["seq"]] = message
                if message["type"] == "link" and message["state"] == "down":
                    assert "has ended" in message["reason"]
                    break
            # The messages the run's client got, as it got them.
            assert all(played.get(m["seq"]) == m for m in got), f"{block.name}: not the recorded messages"
            client.close()
        finally:
            replay.stop()


class FoxgloveViewer:
    """The least of a Foxglove WebSocket client (foxglove.websocket.v1), as Foxglove connects."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        self.sock.sendall(
            (
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                "Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            assert chunk, "the live view closed the connection"
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head
        assert b"foxglove.websocket.v1" in head.lower(), head

    def _exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            assert chunk, "the live view closed the connection"
            data += chunk
        return data

    def read(self) -> Tuple[int, bytes]:
        """The next message: its opcode (1 text, 2 binary) and payload (the server's frames are whole)."""
        first, second = self._exactly(2)
        size = second & 0x7F
        if size == 126:
            size = int.from_bytes(self._exactly(2), "big")
        elif size == 127:
            size = int.from_bytes(self._exactly(8), "big")
        return first & 0x0F, self._exactly(size)

    def send_text(self, text: str) -> None:
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81, 0x80 | 126]) + len(payload).to_bytes(2, "big") if len(payload) >= 126 else bytes(
            [0x81, 0x80 | len(payload)]
        )
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("block", of_kind("foxglove"))
def test_the_foxglove_live_view(block: Block, bridges: Any) -> None:
    """The command as shown, and a Foxglove client that gets the robot's sensor messages from it."""
    family = block.arguments[0]
    (options,) = command_lines(block.text)
    assert "--foxglove" in options, f"{block.name}: no --foxglove"
    bridge = bridges(family, *[a for a in options if a not in ("--robot", family, "--simulate")])
    assert bridge.foxglove_port, f"{block.name}: the start-up line names no live view"
    viewer = FoxgloveViewer(bridge.foxglove_port)
    try:
        opcode, info = viewer.read()
        assert opcode == 1 and json.loads(info)["op"] == "serverInfo"
        opcode, advertised = viewer.read()
        channels = {c["topic"]: c for c in json.loads(advertised)["channels"]}
        viewer.send_text(json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": channels["/sensor"]["id"]}]}))
        while True:
            opcode, data = viewer.read()
            if opcode == 2:
                break
        assert data[0] == 1 and int.from_bytes(data[1:5], "little") == 1
        assert json.loads(data[13:])["type"] == "sensor"
    finally:
        viewer.close()


# ---- the Python client's command line ------------------------------------------------


@pytest.mark.parametrize("block", of_kind("cli"))
def test_the_python_command_line(block: Block, bridges: Any, broker: int) -> None:
    mqtt = ["--mqtt", "--mqtt-host", "127.0.0.1", "--mqtt-port", str(broker)]
    robot = bridges(block.arguments[0], *mqtt, "--robot-name", "r1")
    hub = bridges("none", "--hub", *mqtt, "--robot-name", "hub")
    for line in block.text.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:3] != ["python3", "-m", "flockbridge"]:
            continue
        command = words[3]
        words = [
            hub.address if w.startswith("teacher") else robot.address if re.fullmatch(r"[a-z0-9-]+\.local", w) else w
            for w in words
        ]
        if "|" in words:
            # A pipe into a reader that leaves early (head): it ends, quietly.
            piped = " ".join(shlex.quote(w) if w != "|" else w for w in [sys.executable, *words[1:]])
            done = subprocess.run(piped, shell=True, env=helpers.client_env(), capture_output=True, text=True,
                                  timeout=60)
            assert done.returncode == 0 and done.stdout.strip(), f"{line}: {done.stderr}"
            assert "Traceback" not in done.stderr, f"{line}: {done.stderr}"
            continue
        argv = [sys.executable, *words[1:]]
        if command == "list":
            done = subprocess.run(argv, env=helpers.client_env(), capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"{line}: {done.stderr}"
            if "--hub" in words:
                deadline = time.monotonic() + 15
                while "r1" not in done.stdout and time.monotonic() < deadline:
                    done = subprocess.run(argv, env=helpers.client_env(), capture_output=True, text=True, timeout=60)
                assert "r1 " in done.stdout, done.stdout
            continue
        terminal, program_side = pty.openpty()
        running = subprocess.Popen(argv, env=helpers.client_env(), stdin=program_side, stdout=program_side,
                                   stderr=program_side)
        os.close(program_side)
        try:
            if command == "watch":
                helpers.read_until(terminal, b"seq" if "--json" not in words else b'"type":"sensor"')
                running.send_signal(signal.SIGINT)  # Ctrl-C ends it
            elif command == "drive":
                helpers.read_until(terminal, b"q quits")
                os.write(terminal, b"q")
            assert running.wait(timeout=15) == 0, line
        finally:
            if running.poll() is None:
                running.kill()
            os.close(terminal)


# ---- the README's commands -----------------------------------------------------------


def started_and_serving(process: "subprocess.Popen[str]", port: int) -> str:
    """Waits until `process` (a bridge, its log on its stdout) listens, and greets a JSON client on `port`."""
    said = wait_output(process, "robot link up", 300)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.settimeout(10)
        assert b'"type":"hello"' in s.recv(4096)
    return said


@pytest.mark.parametrize("block", of_kind("start"))
def test_the_first_command_starts_the_bridge(block: Block) -> None:
    commands = [line.split("#")[0].split() for line in block.text.splitlines()]
    assert commands == [["scripts/start.sh"], ["scripts/test.sh"]], block.text
    # The second is the one CI runs (and runs this test).
    assert "exec scripts/test.sh" in (REPOSITORY / ".ci" / "run").read_text()
    # As a person runs the first: the bridge on its own ports, against the simulated Uno.
    started = subprocess.Popen(["scripts/start.sh"], cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        said = started_and_serving(started, 2006)
    finally:
        started.send_signal(signal.SIGINT)
        output = started.communicate(timeout=30)[0]
    assert started.returncode == 0, output
    assert "flockbridge is starting" in said and "nc localhost 2006" in said, said
    # Where to connect, for the robot it serves: its own programs' port, no other family's.
    assert "TCP port 2005" in said and "8101" not in said and "24901" not in said, said


@pytest.mark.parametrize("block", of_kind("by-hand"))
def test_by_hand(block: Block, tmp_path: Path) -> None:
    commands = [line.split("#")[0].strip() for line in block.text.splitlines() if line.strip()]
    text = "\n".join(commands).replace("/tmp/", f"{tmp_path}/").replace("build/bin/", f"{Path(binary()).parent}/")
    simulator, bridge = text.splitlines()
    assert simulator.endswith("&")
    sim = subprocess.Popen(simulator[:-1].split(), stdout=subprocess.PIPE, text=True)
    try:
        wait_output(sim, "ready ", 15)
        running = subprocess.Popen(bridge.split(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            started_and_serving(running, 2006)
            with socket.create_connection(("127.0.0.1", 2006)) as s:
                s.settimeout(10)
                seen = b""
                while b'"type":"sensor"' not in seen:
                    chunk = s.recv(4096)
                    assert chunk
                    seen += chunk
        finally:
            running.send_signal(signal.SIGTERM)
            assert running.wait(timeout=15) == 0
    finally:
        sim.send_signal(signal.SIGTERM)
        sim.wait(timeout=15)


# ---- the fleet's commands ------------------------------------------------------------


def mqtt_commands(text: str) -> List[List[str]]:
    joined = re.sub(r"\\\n\s*", " ", text)
    return [shlex.split(line) for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def on_broker(words: List[str], port: int) -> List[str]:
    """A command of the page, made to reach the test's broker."""
    out: List[str] = []
    for i, word in enumerate(words):
        if i > 0 and words[i - 1] == "-h":
            out += ["127.0.0.1", "-p", str(port)]
        else:
            out.append(word)
    return out


@pytest.mark.parametrize("block", of_kind("mqtt"))
def test_the_fleets_commands(block: Block, bridges: Any, broker: int) -> None:
    family = block.arguments[0]
    robot = bridges(family, "--mqtt", "--mqtt-host", "127.0.0.1", "--mqtt-port", str(broker), "--robot-name",
                    "flockbot-07", "--mqtt-telemetry-hz", "5", "--log-level", "debug")
    robot.wait_log("mqtt: connected")
    client = JsonLines(robot.json_port)
    try:
        for words in mqtt_commands(block.text):
            assert words[0] in ("mosquitto_pub", "mosquitto_sub"), words
            command = on_broker(words, broker)
            topic = command[command.index("-t") + 1]
            if words[0] == "mosquitto_pub":
                start = len(robot.lines)
                done = subprocess.run(command, capture_output=True, text=True, timeout=30)
                assert done.returncode == 0, done.stderr
                if "-n" in words:
                    said = "it is empty"  # deleting a retained message: nobody is stopped
                elif topic.endswith("/cmd/emergency"):
                    said = "mqtt: emergency stop from the fleet (teacher)"
                else:
                    said = "mqtt: clearing of the emergency stop from the fleet (teacher)"
                robot.wait_log(said, start=start)
                continue
            # A subscriber: the first message it prints, then it ends. Line by
            # line (stdbuf), so that its SUBACK says when it listens.
            watching = subprocess.Popen(["stdbuf", "-oL", *command, "-d", "-C", "1", "-W", "15"],
                                        stdout=subprocess.PIPE, text=True)
            assert watching.stdout is not None
            for line in watching.stdout:
                if "SUBACK" in line:
                    break
            if topic.endswith("/events"):
                # Events happen when something does: the robot is driven, and let go.
                client.command({"cmd": "drive", "v_mm_s": 100, "w_deg_s": 0})
                client.command({"cmd": "release"})
            output = watching.communicate(timeout=30)[0]
            assert watching.returncode == 0, (words, output)
            printed = [line for line in output.splitlines() if line.startswith("flockbridge/v1/flockbot-07/")]
            assert printed, (words, output)
            json.loads(printed[0].split(" ", 1)[1])
    finally:
        client.close()


# ---- the rest ---------------------------------------------------------------------------


@pytest.mark.parametrize("block", of_kind("run-by"))
def test_commands_a_test_of_its_own_runs(block: Block) -> None:
    page = str(block.page.relative_to(REPOSITORY))
    for name in block.arguments:
        runner = REPOSITORY / name
        assert runner.exists(), f"{block.name}: no {name}"
        assert page in runner.read_text(), f"{block.name}: {name} does not say it runs the commands of {page}"


BENCHMARK_SHORTER = [
    (r"--seconds \d+", "--seconds 0.3"),
    (r"--commands \d+", "--commands 40"),
    (r"--trials \d+", "--trials 1"),
    (r"--clients \d+", "--clients 10"),
    (r"--stalled \d+", "--stalled 2"),
    (r"--messages \d+", "--messages 1000"),
    (r"--soak-seconds \d+", "--soak-seconds 3"),
]


@pytest.mark.benchmark
@pytest.mark.parametrize("block", of_kind("benchmark"))
def test_benchmarks(block: Block) -> None:
    # FLOCKBRIDGE_BENCHMARKS=all runs the command that runs every benchmark
    # in turn (scripts/bench.sh all), =each the others: two tests that can
    # run side by side, since they mostly wait.
    part = os.environ.get("FLOCKBRIDGE_BENCHMARKS", "")
    every_one = "scripts/bench.sh all" in block.text
    if (part == "all" and not every_one) or (part == "each" and every_one):
        pytest.skip(f"FLOCKBRIDGE_BENCHMARKS={part}")
    for line in block.text.splitlines():
        command = line.split("#")[0].strip()
        if not command:
            continue
        for pattern, shorter in BENCHMARK_SHORTER:
            command = re.sub(pattern, shorter, command)
        words = command.split()
        if words[0] == "python3":
            words[0] = sys.executable  # Debian's, which has what the benchmarks import
        done = subprocess.run(words, cwd=REPOSITORY, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert re.search(r"p50|sent|written an hour|began", done.stdout), f"{command} printed no figures:\n{done.stdout[-2000:]}"
