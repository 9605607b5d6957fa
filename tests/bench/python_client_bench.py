#!/usr/bin/python3
"""Figures of the Python client (clients/python) against the real bridge and
its simulated SMR (100 sensor messages a second): what a student's program
pays for it. Prints medians and 99th percentiles; asserts nothing.

    python3 tests/bench/python_client_bench.py [--seconds 10] [--commands 2000]

FLOCKBRIDGE_BIN names the bridge (default build/bin/flockbridge).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import List

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "clients" / "python"))
sys.path.insert(0, str(REPOSITORY / "clients" / "python" / "tests"))

import flockbridge  # noqa: E402
from conftest import Bridge  # noqa: E402


def percentiles(values: List[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered):.3f} ms, p99 {p99:.3f} ms (n={len(ordered)})"


def cpu_share(seconds: float) -> float:
    """This process's CPU over `seconds` of waiting, in % of one core: the reader thread's work."""
    cpu, wall = time.process_time(), time.monotonic()
    time.sleep(seconds)
    return 100 * (time.process_time() - cpu) / (time.monotonic() - wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each CPU and latency run")
    parser.add_argument("--commands", type=int, default=2000, help="commands timed for each kind")
    args = parser.parse_args()

    bridge = Bridge("smr")
    try:
        bridge.wait_link_up()
        with flockbridge.connect(bridge.address) as robot:
            robot.wait_for(lambda s: True, timeout=5)

            # A command the bridge answers itself, and one that waits for the bus period.
            kinds = (
                ("stats (answered by the bridge)", robot.stats),
                ("drive (goes out with the next 10 ms bus period)", lambda: robot.drive(0)),
            )
            for name, send in kinds:
                times = []
                for _ in range(args.commands):
                    start = time.perf_counter()
                    send()
                    times.append((time.perf_counter() - start) * 1000)
                print(f"command round trip, {name}: {percentiles(times)}")
            robot.stop()

            # Sensor latency: the bridge's receipt time (ts) to the client's reader.
            delays: List[float] = []
            record = robot.on("sensor", lambda m: delays.append((time.time() - float(m.ts)) * 1000))
            share = cpu_share(args.seconds)
            robot.off("sensor", record)
            print(f"sensor message, bridge to a callback: {percentiles(delays)}")
            print(f"client CPU while 100 sensor messages a second arrive: {share:.2f} % of one core")

            robot.subscribe(100)
            robot.wait_for(lambda s: True, timeout=5)
            print(f"client CPU with subscribe(100), 10 a second: {cpu_share(args.seconds):.2f} % of one core")
    finally:
        bridge.stop()


if __name__ == "__main__":
    main()
