#!/usr/bin/python3
"""A classmate floods the robot with stops: what it costs the driver. One
viewer without the PIN writes `stop` as fast as --rate asks (2,000 a second
by default), never waiting for an answer, while the driver (with the PIN)
sends a motion command every 100 ms and waits for each answer, then its
own stop. Prints how the driver's commands were answered (taken, and
refused by which code) and how long each took (p50, p99, the longest), and
how many of the viewer's stops were answered and how many refused. Asserts
nothing.

    python3 tests/bench/stop_flood_bench.py [--robot flockbot] [--rate 2000] [--seconds 10]

FLOCKBRIDGE_BIN names the bridge (default build/bin/flockbridge).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "clients" / "python" / "tests"))

from conftest import Bridge  # noqa: E402

PIN = "4711"


class Lines:
    """A JSON-lines connection: one reader thread keeps every message."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.answers: Dict[Any, Dict[str, Any]] = {}
        self.arrived: Dict[Any, float] = {}
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

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
                    if message.get("type") != "sensor" and "id" in message:
                        key = json.dumps(message["id"])
                        self.answers[key] = message
                        self.arrived[key] = now
                self.cond.notify_all()

    def send(self, command: Dict[str, Any]) -> None:
        self.socket.sendall((json.dumps(command) + "\n").encode())

    def answer(self, id_: Any, timeout: float = 10.0) -> Dict[str, Any]:
        key = json.dumps(id_)
        with self.cond:
            if not self.cond.wait_for(lambda: key in self.answers, timeout):
                raise SystemExit(f"no answer to {id_!r} within {timeout} s")
            return self.answers[key]


def percentile(values: List[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="flockbot", help="the simulated robot's family")
    parser.add_argument("--rate", type=float, default=2000.0, help="the viewer's stops a second")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the flood lasts")
    options = parser.parse_args()

    bridge = Bridge(options.robot, config=f'[access]\ndriver_pin = "{PIN}"\n')
    try:
        bridge.wait_link_up()
        driver = Lines(bridge.json_port)
        driver.send({"cmd": "unsubscribe", "id": "quiet"})
        driver.send({"cmd": "auth", "pin": PIN, "id": "pin"})
        if driver.answer("pin").get("role") != "driver":
            raise SystemExit("the driver was not let in")
        viewer = Lines(bridge.json_port)
        viewer.send({"cmd": "unsubscribe", "id": "quiet"})
        viewer.answer("quiet")

        flooding = True
        sent = [0]

        def flood() -> None:
            # Stops written in blocks every 10 ms at the asked rate, none awaited.
            block = max(1, int(options.rate / 100))
            next_at = time.monotonic()
            while flooding:
                lines = "".join(json.dumps({"cmd": "stop", "id": sent[0] + i}) + "\n" for i in range(block))
                viewer.socket.sendall(lines.encode())
                sent[0] += block
                next_at += 0.01
                time.sleep(max(0.0, next_at - time.monotonic()))

        flooder = threading.Thread(target=flood)
        flooder.start()
        taken_ms: List[float] = []
        codes: Counter[str] = Counter()
        began = time.monotonic()
        move = 0
        while time.monotonic() - began < options.seconds:
            move += 1
            started = time.monotonic()
            driver.send({"cmd": "drive", "v_mm_s": 100, "w_deg_s": 0, "id": f"move {move}"})
            answer = driver.answer(f"move {move}")
            if answer["type"] == "ok":
                taken_ms.append(1000 * (driver.arrived[json.dumps(f"move {move}")] - started))
            else:
                codes[answer.get("code", "?")] += 1
            time.sleep(max(0.0, started + 0.1 - time.monotonic()))
        started = time.monotonic()
        driver.send({"cmd": "stop", "id": "own stop"})
        own_stop = driver.answer("own stop")
        own_stop_ms = 1000 * (time.monotonic() - started)
        flooding = False
        flooder.join()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with viewer.cond:
                answered = sum(1 for key in viewer.answers if key.isdigit())
            if answered >= sent[0]:
                break
            time.sleep(0.05)
        with viewer.cond:
            stops = [a for key, a in viewer.answers.items() if key.isdigit()]
        refused = Counter(a.get("code", "?") for a in stops if a["type"] != "ok")

        print(f"stop_flood_bench: {options.robot}, a viewer's {options.rate:.0f} stops a second for "
              f"{options.seconds:g} s, the driver's motion command every 100 ms")
        print(f"  the driver's motion commands: {move} sent, {len(taken_ms)} taken, refused: "
              f"{dict(codes) if codes else 'none'}")
        print(f"  taken in p50 {percentile(taken_ms, 0.5):.1f} ms, p99 {percentile(taken_ms, 0.99):.1f} ms, "
              f"longest {max(taken_ms, default=0.0):.1f} ms")
        print(f"  the driver's own stop: {own_stop['type']} in {own_stop_ms:.1f} ms")
        print(f"  the viewer's stops: {sent[0]} sent, {len(stops)} answered, refused: "
              f"{dict(refused) if refused else 'none'}")
    finally:
        bridge.stop()


if __name__ == "__main__":
    main()
