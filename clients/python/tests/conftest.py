"""The real daemon, started with a simulated robot, for the client's tests.

FLOCKBRIDGE_BIN names the flockbridge executable (ctest sets it); without
it the tests look in build/bin/ of the repository.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

HERE = Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent
REPOSITORY = PACKAGE_ROOT.parent.parent
sys.path.insert(0, str(PACKAGE_ROOT))

import flockbridge  # noqa: E402

# Ctrl-C (SIGINT) as at a terminal, here and in every program these tests
# start (a caught signal is the default one again in a program started). A
# shell's background job ignores SIGINT, and Python keeps an ignored SIGINT
# ignored: a program that a test ends with Ctrl-C would never end. (The
# docs' tests load this file too.)
signal.signal(signal.SIGINT, signal.default_int_handler)


def bridge_binary() -> str:
    path = os.environ.get("FLOCKBRIDGE_BIN") or str(REPOSITORY / "build" / "bin" / "flockbridge")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no flockbridge executable at {path}: build it, or set FLOCKBRIDGE_BIN")
    return path


def robot_families() -> List[str]:
    """Every robot family, from the bridge itself (`flockbridge --list-families`):
    a test that covers every family covers a new one too, or fails on it."""
    listed = subprocess.run([bridge_binary(), "--list-families"], capture_output=True, text=True, check=True)
    families = listed.stdout.split()
    assert families, "flockbridge --list-families listed no family"
    # A build may run a test for some of them only (the sanitizer build, for
    # the tests' own family): each must be one the bridge has.
    chosen = os.environ.get("FLOCKBRIDGE_FAMILIES", "").split()
    unknown = [family for family in chosen if family not in families]
    assert not unknown, f"FLOCKBRIDGE_FAMILIES names {unknown}, which flockbridge --list-families does not list: {families}"
    return chosen or families


def client_env() -> Dict[str, str]:
    """The environment of a child process that imports this repository's
    client, with Python's fault handler on: a program that hangs, stopped
    with SIGABRT, says where each of its threads was."""
    return {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), "PYTHONFAULTHANDLER": "1"}


def received(watch: flockbridge.Robot) -> int:
    """Commands for the robot the bridge has received from all its clients."""
    return int(watch.stats().commands.received)


def read_until(fd: int, text: bytes, timeout: float = 10.0) -> bytes:
    """What a program wrote to `fd` (a terminal's or a pipe's end) until it wrote `text`."""
    seen = b""
    deadline = time.monotonic() + timeout
    while text not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r} from the program; it wrote {seen!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # a terminal whose program has ended
                chunk = b""
            assert chunk, f"the program ended without {text!r}; it wrote {seen!r}"
            seen += chunk
    return seen


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Bridge:
    """One flockbridge process on 127.0.0.1, its log read as it comes."""

    def __init__(
        self, family: str, *options: str, config: Optional[str] = None, json_port: int = 0, simulate: bool = True
    ) -> None:
        self.family = family
        self.simulate = simulate and family != "none"
        self.options = list(options)
        self.config_text = config
        self.requested_json_port = json_port
        self.lines: List[str] = []
        self._cond = threading.Condition()
        self.process: Optional[subprocess.Popen[str]] = None
        self.json_port = 0
        self.http_port = 0
        self.native_port = 0
        self.foxglove_port = 0
        self._config_dir = tempfile.TemporaryDirectory(prefix="flockbridge-py-")
        self.start()

    def command_line(self) -> List[str]:
        line = [bridge_binary(), "--robot", self.family, "--bind", "127.0.0.1"]
        if self.simulate:
            line.append("--simulate")
        if self.config_text is None:
            line.append("--no-config")
        else:
            path = Path(self._config_dir.name) / "flockbridge.toml"
            path.write_text(self.config_text)
            path.chmod(0o600)
            line += ["--config", str(path)]
        line += ["--port", "0", "--json-port", str(self.requested_json_port), "--http-port", "0"]
        line += ["--foxglove-port", "0"]  # the live view, when an option turns it on
        if not any(o.startswith("--record") for o in self.options) and "[record]" not in (self.config_text or ""):
            # A test bridge records into a folder of its own, and only when asked to.
            line += ["--record", str(Path(self._config_dir.name) / "recordings"), "--record-enabled=false"]
        return line + ["--mdns-service-file", ""] + self.options

    def start(self) -> None:
        self.lines.clear()
        self.process = subprocess.Popen(
            self.command_line(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        threading.Thread(target=self._read_log, args=(self.process,), daemon=True).start()
        listening = self.wait_log("listening:")
        self.json_port = int(re.search(r"JSON clients on [^ ]*:(\d+)", listening).group(1))  # type: ignore[union-attr]
        http = re.search(r"dashboard on http://[^ ]*:(\d+)/", listening)
        self.http_port = int(http.group(1)) if http else 0
        native = re.search(r"native clients on [^ ]*:(\d+)", listening)
        self.native_port = int(native.group(1)) if native else 0
        foxglove = re.search(r"Foxglove live view on wss?://[^ ]*:(\d+)", listening)
        self.foxglove_port = int(foxglove.group(1)) if foxglove else 0
        self.requested_json_port = self.json_port  # a restart keeps the port

    def _read_log(self, process: "subprocess.Popen[str]") -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_log(self, text: str, timeout: float = 15.0, start: int = 0) -> str:
        """The first log line from `start` on that contains `text`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines[start:]:
                    if text in line:
                        return line
                left = deadline - time.monotonic()
                exited = self.process is not None and self.process.poll() is not None
                if left <= 0 or exited:
                    break
                self._cond.wait(min(left, 0.5))
        pytest.fail(f"the bridge did not log {text!r} within {timeout} s; its log:\n" + "\n".join(self.lines))

    def wait_link_up(self) -> None:
        self.wait_log("robot link up")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.json_port}"

    def stats(self) -> Dict[str, Any]:
        """The bridge's stats, asked by a client of its own."""
        with flockbridge.connect(self.address) as robot:
            return dict(robot.stats())

    def link_stats(self) -> Dict[str, Any]:
        """The robot link's counters from the bridge's stats, asked by a client of its own."""
        return dict(self.stats().get("link", {}))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def bridges() -> Iterator[Callable[..., Bridge]]:
    """Starts bridges: bridges("smr"), bridges("flockbot", "--lease-idle-ms", "500"), ...; all stop at the end."""
    started: List[Bridge] = []

    def start(family: str, *options: str, config: Optional[str] = None, simulate: bool = True) -> Bridge:
        bridge = Bridge(family, *options, config=config, simulate=simulate)
        started.append(bridge)
        return bridge

    yield start
    for bridge in started:
        bridge.stop()
        bridge._config_dir.cleanup()


@pytest.fixture
def smr(bridges: Callable[..., Bridge]) -> Bridge:
    bridge = bridges("smr")
    bridge.wait_link_up()
    return bridge


def moving(reading: flockbridge.Message) -> bool:
    return abs(float(reading.v_mm_s)) > 50


def still(reading: flockbridge.Message) -> bool:
    return abs(float(reading.v_mm_s)) < 1 and abs(float(reading.w_deg_s)) < 1


def mosquitto_binary() -> str:
    for path in ("/usr/sbin/mosquitto", shutil.which("mosquitto") or ""):
        if path and os.access(path, os.X_OK):
            return path
    pytest.fail("no mosquitto: scripts/test.sh installs it (Debian: mosquitto)")


@contextlib.contextmanager
def running_mosquitto(config: Path, port: int) -> Iterator[None]:
    """A real mosquitto started with `config`, once it takes connections on 127.0.0.1:`port`."""
    process = subprocess.Popen(
        [mosquitto_binary(), "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"mosquitto did not start: {process.communicate()[1]}")
                time.sleep(0.05)
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)
