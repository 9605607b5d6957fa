#!/usr/bin/python3
"""What a Raspberry Pi would pay: the bridge's instructions for each of its
jobs, counted on this machine, and what one Pi 4 core would spend on a
class. Asserts nothing.

For each robot family (flockbridge --list-families), a bridge with its
simulated robot serves one phase of --seconds each: no client (the robot's
link alone: per SMR period, per Pioneer SIP, per Flockbot packet), --clients
JSON clients reading every message, as many WebSocket clients (the
dashboard's feed), a recording, and one Foxglove viewer subscribed to
/sensor. Instructions are counted by `perf stat -e instructions:u,
instructions:k` where the machine has the counter, else by valgrind's
callgrind (user space only: the kernel's share, the sockets' sends, is then
estimated from the same phase's system and user CPU time in a run without
valgrind, and the estimate says so). Each phase's instructions less the
no-client phase's, per message and per client, is that client's cost.

    python3 tests/bench/instructions_bench.py [--seconds 10] [--clients 10] [--ipc 1.0]

The estimate for a Pi 4 (Cortex-A72 at 1.5 GHz): a class of 30 dashboards
(each at its page's rate), a recording and a Foxglove viewer, at --ipc
instructions a cycle (the A72 is a 3-wide out-of-order core; 1.0 is a
middling figure for a server's branchy code, and the range 0.7 to 1.3 is
printed beside it). FLOCKBRIDGE_BIN names the bridge.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "clients" / "python"))
sys.path.insert(0, str(REPOSITORY / "clients" / "python" / "tests"))

from conftest import Bridge, bridge_binary  # noqa: E402

# The rate each family's dashboard asks for (bridge/www/family-*.js: an
# SMR's page subscribes with interval_ms 50); None: every message.
DASHBOARD_HZ: Dict[str, Optional[float]] = {"smr": 20.0}
CLASS = 30  # dashboards in a class
TICKS = os.sysconf("SC_CLK_TCK")


def perf_counts_instructions() -> bool:
    if shutil.which("perf") is None:
        return False
    done = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u", "true"], capture_output=True, text=True)
    return done.returncode == 0 and "not supported" not in done.stderr and "<not" not in done.stderr


class Counter:
    """Counts one process's instructions over phases: perf or callgrind."""

    def __init__(self, how: str, pid: int, folder: Path) -> None:
        self.how = how
        self.pid = pid
        self.folder = folder
        self.perf: Optional[subprocess.Popen[str]] = None
        self.dumps = 0

    def begin(self) -> None:
        if self.how == "perf":
            self.perf = subprocess.Popen(
                ["perf", "stat", "-x,", "-e", "instructions:u,instructions:k", "-p", str(self.pid)],
                stderr=subprocess.PIPE, text=True)
            time.sleep(0.2)  # perf attached
        else:
            subprocess.run(["callgrind_control", "-z", str(self.pid)], capture_output=True, check=True)

    def end(self) -> Tuple[float, Optional[float]]:
        """User and kernel instructions since begin() (kernel None: not counted)."""
        if self.perf is not None:
            self.perf.send_signal(2)
            _, err = self.perf.communicate()
            self.perf = None
            counts = {}
            for line in err.splitlines():
                fields = line.split(",")
                if len(fields) > 2 and fields[0].replace(".", "").isdigit():
                    counts[fields[2]] = float(fields[0])
            return counts.get("instructions:u", 0.0), counts.get("instructions:k")
        subprocess.run(["callgrind_control", "-d", str(self.pid)], capture_output=True, check=True)
        self.dumps += 1
        dump = self.folder / f"callgrind.out.{self.pid}.{self.dumps}"
        for _ in range(100):
            if dump.exists() and "totals:" in dump.read_text(errors="replace"):
                break
            time.sleep(0.1)
        totals = re.search(r"^totals:\s+(\d+)", dump.read_text(errors="replace"), re.M)
        return (float(totals.group(1)) if totals else 0.0), None


class CountedBridge(Bridge):
    """A bridge started under valgrind's callgrind when perf cannot count."""

    prefix: List[str] = []

    def command_line(self) -> List[str]:
        return self.prefix + super().command_line()


def cpu_ticks(pid: int) -> Tuple[int, int]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])  # utime, stime (fields 14 and 15)


class Clients:
    """Connections read by one thread, as a class's programs read."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.sockets: List[socket.socket] = []
        self.running = True
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def add(self, connection: socket.socket) -> None:
        connection.setblocking(False)
        self.sockets.append(connection)
        self.selector.register(connection, selectors.EVENT_READ)

    def read(self) -> None:
        while self.running:
            if not self.sockets:
                time.sleep(0.05)
                continue
            for key, _ in self.selector.select(0.05):
                try:
                    key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
                except OSError:
                    pass

    def close(self) -> None:
        self.running = False
        self.thread.join()
        for connection in self.sockets:
            self.selector.unregister(connection)
            connection.close()


def websocket(port: int, path: str, protocol: str = "") -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    extra = f"Sec-WebSocket-Protocol: {protocol}\r\n" if protocol else ""
    connection.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                        f"{extra}\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(1)
        if not chunk:
            raise SystemExit("the WebSocket upgrade was refused")
        head += chunk
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        raise SystemExit(f"the WebSocket upgrade was refused: {head!r}")
    return connection


def read_frame(connection: socket.socket) -> Tuple[int, bytes]:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = connection.recv(n - len(data))
            if not chunk:
                raise SystemExit("the WebSocket closed")
            data += chunk
        return data

    first, second = exactly(2)
    length = second & 0x7F
    if length == 126:
        length = int.from_bytes(exactly(2), "big")
    elif length == 127:
        length = int.from_bytes(exactly(8), "big")
    return first & 0x0F, exactly(length)


def send_text(connection: socket.socket, text: str) -> None:
    payload = text.encode()
    mask = os.urandom(4)
    head = bytes([0x81, 0x80 | len(payload)]) if len(payload) < 126 else bytes([0x81, 0xFE]) + len(payload).to_bytes(2, "big")
    connection.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def foxglove_viewer(port: int) -> socket.socket:
    """A Foxglove viewer subscribed to /sensor."""
    connection = websocket(port, "/", "foxglove.websocket.v1")
    while True:
        opcode, payload = read_frame(connection)
        if opcode != 1:
            continue
        message = json.loads(payload)
        if message.get("op") == "advertise":
            for channel in message["channels"]:
                if channel["topic"] == "/sensor":
                    send_text(connection, json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": channel["id"]}]}))
                    return connection


def json_client(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port))


def request(port: int, command: Dict[str, object]) -> Dict[str, object]:
    """One command on a connection of its own, and its answer."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        reader = connection.makefile("r")
        reader.readline()  # hello
        connection.sendall((json.dumps({**command, "id": "bench"}) + "\n").encode())
        for line in reader:
            message = json.loads(line)
            if message.get("id") == "bench":
                return dict(message)
    raise SystemExit(f"no answer to {command}")


Phase = Tuple[str, Callable[[Bridge, Clients, int], Optional[Callable[[], None]]]]


def phases(count: int) -> List[Phase]:
    def nobody(bridge: Bridge, clients: Clients, n: int) -> None:
        return None

    def json_clients(bridge: Bridge, clients: Clients, n: int) -> None:
        for _ in range(n):
            clients.add(json_client(bridge.json_port))

    def web_clients(bridge: Bridge, clients: Clients, n: int) -> None:
        for _ in range(n):
            clients.add(websocket(bridge.http_port, "/ws"))

    def recording(bridge: Bridge, clients: Clients, n: int) -> Callable[[], None]:
        answer = request(bridge.json_port, {"cmd": "record_start"})
        if answer.get("type") != "ok":
            raise SystemExit(f"record_start refused: {answer}")
        return lambda: None if request(bridge.json_port, {"cmd": "record_stop"}) else None

    def foxglove(bridge: Bridge, clients: Clients, n: int) -> None:
        clients.add(foxglove_viewer(bridge.foxglove_port))

    return [("no client", nobody), ("JSON clients", json_clients), ("WebSocket clients", web_clients),
            ("a recording", recording), ("a Foxglove viewer", foxglove)]


def measure(family: str, seconds: float, count: int, how: str, folder: Path) -> Dict[str, Dict[str, float]]:
    """Per phase: instructions (user, kernel), messages published, periods, CPU ticks (user, system)."""
    CountedBridge.prefix = []
    if how == "callgrind":
        CountedBridge.prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.out.%p",
                                "--dump-instr=no", "--trace-children=no"]
    elif how != "perf" and how != "native":
        raise ValueError(how)
    bridge = CountedBridge(family, "--foxglove", "--max-clients", str(count + 16), "--max-per-address", str(count + 16))
    results: Dict[str, Dict[str, float]] = {}
    try:
        bridge.wait_log("robot link up", timeout=60)
        pid = bridge.process.pid  # type: ignore[union-attr]
        counter = Counter("callgrind" if how == "callgrind" else "perf", pid, folder)
        time.sleep(2)  # the link settled
        for name, start in phases(count):
            clients = Clients()
            stop = start(bridge, clients, count)
            time.sleep(1)  # connected and served before the count begins
            before = bridge.stats()
            ticks_before = cpu_ticks(pid)
            if how != "native":
                counter.begin()
            time.sleep(seconds)
            user, kernel = counter.end() if how != "native" else (0.0, None)
            ticks_after = cpu_ticks(pid)
            after = bridge.stats()
            if stop is not None:
                stop()
            clients.close()
            results[name] = {
                "user": user,
                "kernel": kernel if kernel is not None else float("nan"),
                "published": float(after["sensors"]["published"] - before["sensors"]["published"]),
                "sent": float(after["sensors"]["sent"] - before["sensors"]["sent"]),
                "utime": float(ticks_after[0] - ticks_before[0]) / TICKS,
                "stime": float(ticks_after[1] - ticks_before[1]) / TICKS,
                "seconds": seconds,
                "receivers": float(count if name.endswith("clients") else 1),
            }
    finally:
        bridge.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="each phase")
    parser.add_argument("--clients", type=int, default=10, help="JSON and WebSocket clients in their phases")
    parser.add_argument("--ipc", type=float, default=1.0, help="a Pi 4 core's instructions a cycle")
    args = parser.parse_args()
    families = subprocess.run([bridge_binary(), "--list-families"], capture_output=True, text=True, check=True).stdout.split()
    how = "perf" if perf_counts_instructions() else "callgrind"
    print(f"Instructions a message, counted by {'perf stat' if how == 'perf' else 'callgrind (user space; perf cannot count instructions on this machine)'}; "
          f"{args.seconds:.0f} s a phase, {args.clients} clients in the client phases; each family's simulated robot.")
    with tempfile.TemporaryDirectory(prefix="flockbridge-instructions-") as folder:
        for family in families:
            counted = measure(family, args.seconds, args.clients, how, Path(folder))
            # The kernel's share from CPU time in clock ticks: enough clients for ticks to count.
            native = (measure(family, args.seconds, max(args.clients, 300), "native", Path(folder))
                      if how == "callgrind" else counted)
            report(family, counted, native, args.clients, args.ipc)


def report(family: str, counted: Dict[str, Dict[str, float]], native: Dict[str, Dict[str, float]], clients: int,
           ipc: float) -> None:
    idle = counted["no client"]
    rate = native["no client"]["published"] / native["no client"]["seconds"]
    base_user = idle["user"] / max(idle["published"], 1)

    def kernel_share(phase: str) -> float:
        """Kernel instructions for each user one: counted by perf, else the phase's CPU time split
        (the same instructions a second in the kernel as in user space; 1.0 where too little time
        was spent for the clock's ticks to tell)."""
        c = counted[phase]
        if c["kernel"] == c["kernel"]:  # not NaN: perf counted it
            return c["kernel"] / max(c["user"], 1)
        n = native[phase]
        return n["stime"] / n["utime"] if n["utime"] >= 0.05 else 1.0

    def per_message(phase: str) -> Tuple[float, float]:
        """Instructions a message and receiver beyond the no-client phase: user, with kernel."""
        c = counted[phase]
        receivers = c["receivers"]
        user = (c["user"] / max(c["published"], 1) - base_user) / receivers
        idle_kernel = base_user * kernel_share("no client")
        total = (c["user"] * (1 + kernel_share(phase)) / max(c["published"], 1) - base_user - idle_kernel) / receivers
        return user, total

    unit = {"smr": "period", "pioneer": "SIP", "flockbot": "sensor packet"}.get(family, "message")
    sent = sum(phase["sent"] for phase in counted.values())
    print(f"\n{family}: {rate:.0f} {unit}s a second; {sent:,.0f} sensor messages sent to clients while counted")
    print(f"  the robot's link alone: {base_user:,.0f} instructions a {unit} in user space, "
          f"about {base_user * (1 + kernel_share('no client')):,.0f} with the kernel's "
          f"(native CPU {100 * (native['no client']['utime'] + native['no client']['stime']) / native['no client']['seconds']:.1f}% of a core here)")
    costs: Dict[str, float] = {}
    for phase, key in (("JSON clients", "json"), ("WebSocket clients", "ws"), ("a recording", "record"),
                       ("a Foxglove viewer", "foxglove")):
        user, total = per_message(phase)
        costs[key] = total
        many = counted[phase]["receivers"] > 1
        print(f"  {f'{clients} ' if many else ''}{phase}: {user:,.0f} instructions a message{' and client' if many else ''} "
              f"in user space, about {total:,.0f} with the kernel's")
    dashboards_hz = DASHBOARD_HZ.get(family) or rate
    a_second = (rate * base_user * (1 + kernel_share("no client")) + CLASS * dashboards_hz * costs["ws"]
                + rate * costs["record"] + rate * costs["foxglove"])
    share = a_second / (ipc * 1.5e9)
    low, high = a_second / (1.3 * 1.5e9), a_second / (0.7 * 1.5e9)
    print(f"  a Pi 4 core (Cortex-A72, 1.5 GHz), a class of {CLASS} dashboards at {dashboards_hz:.0f} messages a second, "
          f"a recording and a Foxglove viewer: {a_second / 1e6:,.1f} million instructions a second, "
          f"{100 * share:.1f}% of the core at {ipc:.1f} instructions a cycle ({100 * low:.1f}-{100 * high:.1f}% at 1.3-0.7)")


if __name__ == "__main__":
    main()
