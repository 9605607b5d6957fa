#!/usr/bin/python3
"""A class arriving and leaving at once: how late the bridge began the SMR's
10 ms periods while a thousand JSON clients connected together, and while
they all left together (closing, as programs that end do, or resetting, as
killed ones and dropped connections do). The figures are the link's own
counters from `stats` (how late each period began after its deadline),
read just before and after each burst. Asserts nothing.

    python3 tests/bench/burst_bench.py [--clients 1000] [--trials 3] [--ordinary]

The bridge asks for the real-time class itself, as installed (as root, or
with CAP_SYS_NICE; it says what it got); --ordinary keeps it in the ordinary
class (its --no-real-time). Beside each burst's figures, the machine's own
timer over the same burst (machine_timer.py), in the bridge's class (just
below its priority when real-time). FLOCKBRIDGE_BIN names the bridge
(default build/bin/flockbridge).
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Optional

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "clients" / "python"))
sys.path.insert(0, str(REPOSITORY / "clients" / "python" / "tests"))

from conftest import Bridge  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_timer import MachineTimer, describe  # noqa: E402


class Readers:
    """The clients' connections, read by one thread as a class's programs read."""

    def __init__(self, port: int, count: int) -> None:
        self.sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
        self.selector = selectors.DefaultSelector()
        for connection in self.sockets:
            connection.setblocking(False)
            self.selector.register(connection, selectors.EVENT_READ)
        self.running = True
        self.thread = threading.Thread(target=self.read)
        self.thread.start()

    def read(self) -> None:
        while self.running:
            for key, _ in self.selector.select(0.05):
                try:
                    key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
                except OSError:
                    pass

    def leave(self, reset: bool) -> None:
        self.running = False
        self.thread.join()
        for connection in self.sockets:
            self.selector.unregister(connection)
            if reset:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        for connection in self.sockets:
            connection.close()


def burst(before: Dict[str, Any], after: Dict[str, Any]) -> str:
    # The link keeps the latest since it started: a burst that did not beat it was at most that late.
    grew = after["start_late_max_us"] > before["start_late_max_us"]
    latest = f"{'' if grew else 'at most '}{after['start_late_max_us'] / 1000:.2f} ms late"
    return (
        f"the latest period began {latest}, over 0.5 ms late {after['started_over_500us'] - before['started_over_500us']}, "
        f"over 2 ms late {after['started_over_2ms'] - before['started_over_2ms']} "
        f"of {after['periods'] - before['periods']} periods"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000, help="JSON clients in each burst")
    parser.add_argument("--trials", type=int, default=3, help="bursts of each kind")
    parser.add_argument("--ordinary", action="store_true", help="the bridge in the ordinary class (--no-real-time)")
    args = parser.parse_args()

    print(f"{args.clients} JSON clients arriving and leaving at once, a bridge with a simulated SMR, {args.trials} trials:")
    for trial in range(args.trials):
        bridge = Bridge("smr", "--max-clients", str(args.clients + 10), *(["--no-real-time"] if args.ordinary else []))
        timer: Optional[MachineTimer] = None
        try:
            bridge.wait_link_up()
            scheduling = bridge.stats().get("scheduling", {})
            if trial == 0:
                print(f"  the bridge's loop: {scheduling.get('summary', 'not said')}")
            timer = MachineTimer(10 if scheduling.get("class") == "real-time" else 0)
            while bridge.link_stats().get("periods", 0) < 100:
                time.sleep(0.1)
            quiet = bridge.link_stats()
            timer.phase()
            readers = Readers(bridge.json_port, args.clients)
            arrived = bridge.link_stats()
            machine_arriving = timer.phase()
            time.sleep(2)
            before = bridge.link_stats()
            timer.phase()
            reset = trial % 2 == 1
            readers.leave(reset)
            time.sleep(1)
            after = bridge.link_stats()
            machine_leaving = timer.phase()
            print(f"  trial {trial + 1}: connecting: {burst(quiet, arrived)}")
            print(f"             the machine's own timer meanwhile: {describe(machine_arriving)}")
            print(f"           all {'resetting' if reset else 'closing'}: {burst(before, after)}")
            print(f"             the machine's own timer meanwhile: {describe(machine_leaving)}", flush=True)
        finally:
            if timer is not None:
                timer.close()
            bridge.stop()


if __name__ == "__main__":
    main()
