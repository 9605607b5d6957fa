#!/usr/bin/python3
"""What a hostile classmate's attacks cost: for each attack in turn, for
--seconds each, a legitimate JSON client (a viewer) reads the robot's
sensor messages and sends a `stop` every 200 ms, while the attack runs from
other loopback addresses (127.0.x.y, as other computers). The first phase
has no attack: it is the reference the others are compared with.

For each phase it prints what the legitimate client got (readings a second,
the stop's round trip p50 and p99, stops not answered) and what the bridge
spent (CPU, its memory at the end, the bytes it logged a second). Asserts
nothing.

    python3 tests/bench/attack_bench.py [--robot flockbot] [--seconds 5]

FLOCKBRIDGE_BIN names the bridge (default build/bin/flockbridge).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "clients" / "python" / "tests"))

from conftest import Bridge  # noqa: E402

PIN = "4711"
TICKS = os.sysconf("SC_CLK_TCK")


def connect_from(source: str, port: int, timeout: float = 2.0) -> socket.socket:
    """A connection to the bridge from one of loopback's addresses."""
    connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    connection.bind((source, 0))
    connection.connect(("127.0.0.1", port))
    return connection


def percentile(values: List[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


class Viewer:
    """The legitimate client: counts sensor messages, times its stops."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.readings = 0
        self.answered: Dict[int, float] = {}
        self.cond = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = self.socket.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            now = time.monotonic()
            with self.cond:
                for line in lines:
                    message = json.loads(line)
                    if message.get("type") == "sensor":
                        self.readings += 1
                    elif isinstance(message.get("id"), int):
                        self.answered[message["id"]] = now
                self.cond.notify_all()

    def stop_round_trips(self, seconds: float, first_id: int) -> tuple[List[float], int]:
        """Stops every 200 ms for `seconds`: their round trips, and how many went unanswered."""
        trips: List[float] = []
        missing = 0
        ident = first_id
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            ident += 1
            sent = time.monotonic()
            self.socket.sendall((json.dumps({"cmd": "stop", "id": ident}) + "\n").encode())
            with self.cond:
                if self.cond.wait_for(lambda: ident in self.answered, 2.0):
                    trips.append(1000 * (self.answered[ident] - sent))
                else:
                    missing += 1
            time.sleep(max(0.0, sent + 0.2 - time.monotonic()))
        return trips, missing


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def attacks(bridge: Bridge) -> Dict[str, Optional[Callable[[threading.Event], None]]]:
    """Each attack runs until its event is set."""

    def churn(done: threading.Event) -> None:
        while not done.is_set():
            try:
                connect_from("127.0.7.7", bridge.json_port).close()
            except OSError:
                pass

    def origins(done: threading.Event) -> None:
        request = (f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{bridge.http_port}\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\nOrigin: http://evil.example\r\n\r\n").encode()
        while not done.is_set():
            try:
                with connect_from("127.0.7.8", bridge.http_port) as connection:
                    connection.sendall(request)
                    connection.recv(4096)
            except OSError:
                pass

    def pins(done: threading.Event) -> None:
        guess = 0
        while not done.is_set():
            guess += 1
            source = f"127.0.{8 + guess // 250 % 100}.{1 + guess % 250}"
            try:
                with connect_from(source, bridge.json_port) as connection:
                    connection.sendall((json.dumps({"cmd": "auth", "pin": f"{guess % 10000:04d}", "id": 1}) +
                                        "\n").encode())
                    buffer = b""
                    while b'"id":1' not in buffer:
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        buffer += chunk
            except OSError:
                pass

    def stops(done: threading.Event) -> None:
        with connect_from("127.0.7.9", bridge.json_port) as connection:
            connection.sendall(b'{"cmd":"unsubscribe","id":"quiet"}\n')
            sent = 0
            while not done.is_set():
                lines = "".join(json.dumps({"cmd": "stop", "id": f"f{sent + i}"}) + "\n" for i in range(20))
                connection.sendall(lines.encode())
                sent += 20
                time.sleep(0.01)  # 2,000 a second
                try:
                    connection.setblocking(False)
                    while connection.recv(65536):
                        pass
                except OSError:
                    pass
                finally:
                    connection.setblocking(True)

    def slow_http(done: threading.Event) -> None:
        held: List[socket.socket] = []
        number = 0
        while not done.is_set():
            held = [c for c in held if c.fileno() >= 0]
            while len(held) < 1100 and not done.is_set():
                number += 1
                try:
                    connection = connect_from(f"127.0.{120 + number // 250 % 100}.{1 + number % 250}",
                                              bridge.http_port)
                    connection.sendall(b"GET / HTTP/1.1\r\nHost: robot\r\n")  # never ends its headers
                    held.append(connection)
                except OSError:
                    break
            time.sleep(0.2)
            for connection in list(held):
                try:
                    connection.setblocking(False)
                    if connection.recv(1) == b"":
                        connection.close()
                        held.remove(connection)
                except BlockingIOError:
                    pass
                except OSError:
                    connection.close()
                    held.remove(connection)
        for connection in held:
            connection.close()

    def deep_json(done: threading.Event) -> None:
        line = ('{"cmd":"stop","id":' + "[" * 1500 + "]" * 1500 + "}\n").encode()
        while not done.is_set():
            try:
                with connect_from("127.0.7.10", bridge.json_port) as connection:
                    for _ in range(20):
                        connection.sendall(line)
                    time.sleep(0.01)
            except OSError:
                pass

    return {
        "none (the reference)": None,
        "connect and close, one address": churn,
        "WebSockets from a page of elsewhere": origins,
        "wrong PINs from many addresses": pins,
        "2,000 stops a second from a viewer": stops,
        "1,100 slow HTTP connections": slow_http,
        "JSON nested 1,500 deep": deep_json,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="flockbot", help="the simulated robot's family")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each phase lasts")
    options = parser.parse_args()

    bridge = Bridge(options.robot, "--max-line", "8192", config=f'[access]\ndriver_pin = "{PIN}"\n')
    try:
        bridge.wait_link_up()
        assert bridge.process is not None
        pid = bridge.process.pid
        viewer = Viewer(bridge.json_port)
        print(f"attack_bench: {options.robot}, {options.seconds:g} s a phase; the legitimate client is a JSON "
              "viewer sending a stop every 200 ms")
        print(f"  {'attack':38} {'readings/s':>10} {'stop p50':>9} {'stop p99':>9} {'unanswered':>10} "
              f"{'CPU %':>6} {'RSS MB':>7} {'log B/s':>8}")
        reference: Optional[float] = None
        for number, (name, attack) in enumerate(attacks(bridge).items()):
            done = threading.Event()
            runner = threading.Thread(target=attack, args=(done,)) if attack else None
            if runner:
                runner.start()
                time.sleep(0.5)  # under way
            with viewer.cond:
                readings_before = viewer.readings
            cpu_before = cpu_seconds(pid)
            log_before = sum(len(line) + 1 for line in bridge.lines)
            began = time.monotonic()
            trips, missing = viewer.stop_round_trips(options.seconds, number * 1_000_000)
            elapsed = time.monotonic() - began
            with viewer.cond:
                readings = (viewer.readings - readings_before) / elapsed
            cpu = 100 * (cpu_seconds(pid) - cpu_before) / elapsed
            logged = (sum(len(line) + 1 for line in bridge.lines) - log_before) / elapsed
            memory = rss_mb(pid)
            done.set()
            if runner:
                runner.join()
            if reference is None:
                reference = readings
            print(f"  {name:38} {readings:10.1f} {percentile(trips, 0.5):7.1f}ms {percentile(trips, 0.99):7.1f}ms "
                  f"{missing:10d} {cpu:6.1f} {memory:7.1f} {logged:8.0f}")
        print("  (readings/s of the reference: the robot's own rate; each attack's phase is compared with it)")
    finally:
        bridge.stop()


if __name__ == "__main__":
    main()
