#!/usr/bin/python3
"""Whether the SMR's 10 ms period drifts over a long run: an SMR program on
port 24901 of the real bridge and its simulated SMR reads every period
(READY at each START, as the SMR library keeps its periods banked) and
finds each START's place on the 10 ms grid of the first: how far past the
nearest grid line it came. A bridge that timed each period from the one
before would move off the grid by its callbacks' delay every period; on a
grid the place stays within the wake-up's jitter however long the run, and
a period held up for a whole period or more is skipped (counted by the
bridge), never made up in a burst. Prints, each minute and at the end, the
periods received and skipped and the place's median over the minute, and
beside it the machine's own timer over the same minute (machine_timer.py,
in the program's class: ordinary); asserts nothing.

    python3 tests/bench/period_drift.py [--seconds 3600]

FLOCKBRIDGE_BIN names the bridge (default build/bin/flockbridge).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import List, Optional

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "clients" / "python"))
sys.path.insert(0, str(REPOSITORY / "clients" / "python" / "tests"))

from conftest import Bridge  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_timer import MachineTimer, describe  # noqa: E402

PERIOD_S = 0.010
READY = bytes([0xE1, 0x02])


def starts(buffer: bytearray) -> List[int]:
    """The ticks of the whole STARTs in `buffer` (SMRD's framing: a byte of
    type << 5 | N, then N bytes), which loses what it has read."""
    ticks = []
    while buffer:
        length = buffer[0] & 0x1F
        if len(buffer) < 1 + length:
            break
        body = bytes(buffer[1 : 1 + length])
        if buffer[0] >> 5 == 7 and length == 9 and body[0] == 0x00:
            ticks.append(int.from_bytes(body[1:5], "little"))
        del buffer[: 1 + length]
    return ticks


def skipped_periods(bridge: Bridge) -> int:
    return int(bridge.link_stats().get("skipped_periods", 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3600.0, help="length of the run")
    args = parser.parse_args()

    bridge = Bridge("smr")
    timer: Optional[MachineTimer] = None
    try:
        bridge.wait_link_up()
        scheduling = bridge.stats().get("scheduling", {}).get("summary", "not said")
        timer = MachineTimer()
        skipped_before = skipped_periods(bridge)
        program = socket.create_connection(("127.0.0.1", bridge.native_port))
        program.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        program.sendall(READY)
        buffer = bytearray()
        first: Optional[float] = None
        minute: List[float] = []
        places_ms: List[float] = []  # each minute's median place on the grid
        received = 0
        began = time.monotonic()
        report_at = began + 60
        print(f"SMR periods at a program on port 24901 for {args.seconds:.0f} s (the bridge's simulated SMR):")
        print(f"  the bridge's loop: {scheduling}")
        while time.monotonic() - began < args.seconds:
            data = program.recv(65536)
            if not data:
                raise SystemExit("the bridge closed the program's connection")
            arrived = time.monotonic()
            buffer.extend(data)
            for _ in starts(buffer):
                program.sendall(READY)
                received += 1
                # The first START answers the first READY with the period so
                # far, wherever in its period that came: the grid is the second's.
                if received == 2:
                    first = arrived
                if first is None:
                    continue
                # How far past the nearest line of the grid this START came, in ms.
                periods = (arrived - first) / PERIOD_S
                minute.append((periods - round(periods)) * PERIOD_S * 1000)
            if arrived >= report_at and minute:
                places_ms.append(statistics.median(minute))
                print(
                    f"  after {arrived - began:5.0f} s: {received} periods, {skipped_periods(bridge) - skipped_before} "
                    f"skipped; on the grid p50 {places_ms[-1]:+.3f} ms over the last minute; the machine's own "
                    f"timer: {describe(timer.phase())}",
                    flush=True,
                )
                minute.clear()
                report_at += 60
        elapsed = time.monotonic() - began
        if minute:
            places_ms.append(statistics.median(minute))
        skipped = skipped_periods(bridge) - skipped_before
        drift = places_ms[-1] - places_ms[0] if places_ms else 0.0
        print(
            f"  in all: {received} periods in {elapsed:.1f} s ({received / elapsed:.3f} a second), "
            f"{skipped} skipped by the bridge, {elapsed / PERIOD_S:.0f} due in that time"
        )
        print(
            f"  drift: on the grid p50 {places_ms[0] if places_ms else 0.0:+.3f} ms in the first minute, "
            f"{places_ms[-1] if places_ms else 0.0:+.3f} ms in the last ({drift:+.3f} ms over the run)"
        )
        program.close()
        last = timer.phase()
        print(f"  the machine's own timer over the last part: {describe(last)}")
    finally:
        if timer is not None:
            timer.close()
        bridge.stop()


if __name__ == "__main__":
    main()
