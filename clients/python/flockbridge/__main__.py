"""The command line: python3 -m flockbridge list | watch ROBOT | drive ROBOT | calibrate ROBOT."""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import select
import sys
import threading
import time
from typing import Any, Callable, List, Optional, Sequence, TextIO, Tuple

from .calibrate import calibrate
from .discover import discover
from .errors import FlockbridgeError, LinkDown, Timeout
from .message import Message
from .robot import Robot

_EVENTS = ("link", "lease", "safety_stop", "emergency_latch", "error", "packet", "disconnect", "reconnect")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m flockbridge", description="Find, watch and drive robots through their flockbridge."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    listing = commands.add_parser("list", help="the robots on the network (mDNS, or the class hub)")
    listing.add_argument("--hub", help="ask this class hub (host or host:port) for the robots on its broker")
    listing.add_argument("--timeout", type=float, default=3.0, help="seconds to listen (default 3)")

    watch = commands.add_parser("watch", help="print a robot's readings and events until Ctrl-C")
    watch.add_argument("robot", metavar="ROBOT", help="the robot's host name or address, optionally :port")
    watch.add_argument("--interval-ms", type=int, default=500, help="at most one reading per interval (default 500)")
    watch.add_argument("--json", action="store_true", help="print every message as the bridge sent it")

    drive = commands.add_parser("drive", help="drive a robot with the arrow keys (space stops, q quits)")
    drive.add_argument("robot", metavar="ROBOT", help="the robot's host name or address, optionally :port")
    drive.add_argument("--pin", default=os.environ.get("FLOCKBRIDGE_PIN"), help="the driver PIN, if the robot has one")
    drive.add_argument("--speed", type=float, default=200.0, help="mm/s ahead and back (default 200)")
    drive.add_argument("--turn", type=float, default=45.0, help="degrees/s turning (default 45)")

    calibrating = commands.add_parser(
        "calibrate", help="measure a Flockbot's or an SMR's conversions with the robot, and print its settings"
    )
    calibrating.add_argument("robot", metavar="ROBOT", help="the robot's host name or address, optionally :port")
    calibrating.add_argument("--pin", default=os.environ.get("FLOCKBRIDGE_PIN"), help="the driver PIN, if the robot has one")

    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            return list_robots(args.hub, args.timeout)
        if args.command == "watch":
            return watch_robot(args.robot, args.interval_ms, args.json)
        if args.command == "calibrate":
            return calibrate_robot(args.robot, args.pin)
        return drive_robot(args.robot, args.pin, args.speed, args.turn)
    except FlockbridgeError as e:
        print(f"flockbridge: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        # The reader of the output has gone (`watch ROBOT | head`): end
        # quietly, and let nothing try to flush into the closed pipe again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def list_robots(hub: Optional[str], timeout: float) -> int:
    robots = discover(timeout, hub=hub)
    if not robots:
        print("no robots found" + (f" on {hub}'s broker" if hub else " (is avahi-daemon running on the robots?)"))
        return 0
    rows: List[Tuple[str, ...]] = [("ROBOT", "FAMILY", "MODEL", "STATE", "BATTERY", "CONNECT", "DASHBOARD")]
    for robot in robots:
        telemetry = robot.details.get("telemetry") or {}
        # An offline robot's last battery is not its battery now: none is shown.
        battery = telemetry.get("battery_v") if isinstance(telemetry, dict) and robot.online else None
        if hub:
            since = robot.details.get("since")
            state = "online" if robot.online else "offline" + (f" {_ago(since)}" if isinstance(since, (int, float)) else "")
        else:
            state = "hub" if robot.hub else "announced"
        rows.append(
            (
                robot.name,
                robot.family or "-",
                robot.model or "-",
                state,
                f"{battery:.1f} V" if isinstance(battery, (int, float)) else "-",
                robot.address,
                robot.dashboard or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


def _ago(unix_seconds: float) -> str:
    """ "5 min ago", for how long a robot has been offline."""
    seconds = max(0, round(time.time() - unix_seconds))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


def describe(message: Message) -> str:
    """One line for a reading: its fields, numbers rounded, the raw block left out,
    each range sensor as its name and distance (its mounting is in robot.geometry)."""
    parts = []
    for key, value in message.items():
        if key in ("type", "ts", "raw"):
            continue
        if key == "ranges" and isinstance(value, Message):
            seen = (f"{name}:{_short(mm) if mm is not None else '-'}" for name, mm in value.items())
            parts.append("ranges=[" + ",".join(seen) + "]")
            continue
        parts.append(f"{key}={_short(value)}")
    return " ".join(parts)


def _short(value: Any) -> str:
    if isinstance(value, Message):
        return "{" + ",".join(f"{k}:{_short(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_short(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.1f}"
    return json.dumps(value) if isinstance(value, str) else str(value)


def _robot_name(robot: Robot) -> str:
    """The robot's family, and its model where that says more ("pioneer p3dx", "smr")."""
    if not robot.model or robot.model == robot.family:
        return str(robot.family)
    return f"{robot.family} {robot.model}"


def watch_robot(address: str, interval_ms: int, as_json: bool) -> int:
    printing = threading.Lock()

    def say(line: str) -> None:
        with printing:
            try:
                print(line, flush=True)
            except BrokenPipeError:
                # Said on the reader's thread too; the main thread's next
                # line ends the program.
                if threading.current_thread() is threading.main_thread():
                    raise

    with Robot(address) as robot:
        # With --json, the output is JSON lines only (for jq and the like):
        # the header goes to stderr.
        print(
            f"{_robot_name(robot)} at {robot.host}:{robot.port}, link {robot.link}; Ctrl-C ends",
            file=sys.stderr if as_json else sys.stdout,
            flush=True,
        )

        def event(message: Message) -> None:
            kind = message.get("type")
            if as_json and kind not in ("disconnect", "reconnect"):
                say(json.dumps(message.to_dict(), separators=(",", ":")))
            elif kind in _EVENTS:
                say(f"-- {kind}: {describe(message)}")

        for kind in _EVENTS:
            robot.on(kind, event)
        while True:
            try:
                for reading in robot.stream(interval_ms=interval_ms):
                    if as_json:
                        say(json.dumps(reading.to_dict(), separators=(",", ":")))
                    else:
                        say(f"{time.strftime('%H:%M:%S')} {describe(reading)}")
            except (LinkDown, Timeout) as e:
                if not as_json:
                    say(f"-- {e}; waiting for the robot")
                robot.wait_for(lambda reading: True, timeout=None)


# ---- drive ------------------------------------------------------------------

_ARROWS = {b"A": "up", b"B": "down", b"C": "right", b"D": "left"}
_FIRST_REPEAT_S = 0.75  # longer than a terminal's delay before a held key repeats
_MIN_RELEASE_S = 0.1
_RESEND_S = 0.15  # while a key is held, its drive command goes again this often
_DEADMAN_S = 0.5  # and the bridge stops the robot this long after the last one


def parse_keys(data: bytes) -> Tuple[List[str], bytes]:
    """Key names in terminal input, and the unfinished rest of an escape sequence."""
    keys: List[str] = []
    i = 0
    while i < len(data):
        byte = data[i : i + 1]
        if byte == b"\x1b":
            if i + 1 >= len(data):
                return keys, data[i:]
            if data[i + 1 : i + 2] in (b"[", b"O"):
                if i + 2 >= len(data):
                    return keys, data[i:]
                keys.append(_ARROWS.get(data[i + 2 : i + 3], "other"))
                i += 3
                continue
            keys.append("escape")
            i += 1
            continue
        keys.append({b" ": "space", b"q": "quit", b"Q": "quit", b"+": "faster", b"-": "slower"}.get(byte, "other"))
        i += 1
    return keys, b""


class _Screen:
    """The status line at the bottom of the terminal, and every message above
    it on a line of its own: the status line is cleared, the message written
    with its newline, and the status line drawn again beneath it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.status = ""

    def show(self, status: str) -> None:
        with self.lock:
            if status != self.status:
                self.status = status
                self.out.write("\r\x1b[K" + status)
                self.out.flush()

    def say(self, line: str) -> None:
        with self.lock:
            self.out.write("\r\x1b[K" + line + "\n" + self.status)
            self.out.flush()

    def end(self) -> None:
        with self.lock:
            self.out.write("\n")
            self.out.flush()


class _ScreenLog(logging.Handler):
    """The client's own log lines (a lease the bridge ended, a lost connection), each on a line of its own."""

    def __init__(self, screen: _Screen) -> None:
        super().__init__(logging.INFO)
        self.screen = screen

    def emit(self, record: logging.LogRecord) -> None:
        self.screen.say(record.getMessage())


class _Driver:
    """Hold an arrow key to drive; releasing it stops the robot.

    A terminal reports no key releases: a held key repeats, so the robot
    stops when the repeats stop (three repeat gaps after the last, or
    _FIRST_REPEAT_S before the first repeat came). While a key is held its
    drive command goes again every _RESEND_S with a dead-man time: a
    program that freezes, a laptop that sleeps or a network that goes stops
    the robot within _DEADMAN_S without a word from here. What the bridge
    says goes to `tell`, a line of its own, never into the status line.
    """

    def __init__(self, robot: Robot, speed: float, turn: float, tell: Callable[[str], None]) -> None:
        self.robot, self.speed, self.turn = robot, speed, turn
        self.tell = tell
        self.key: Optional[str] = None
        self.last_press = 0.0
        self.last_sent = 0.0
        self.gap: Optional[float] = None

    def press(self, key: str, now: float) -> bool:
        if key in ("quit", "escape"):
            return False
        if key == "space":
            self.halt()
        elif key in ("faster", "slower"):
            factor = 1.25 if key == "faster" else 0.8
            self.speed, self.turn = self.speed * factor, self.turn * factor
            if self.key is not None:
                self.send(self.key)
        elif key in ("up", "down", "left", "right"):
            if key == self.key:
                gap = now - self.last_press
                self.gap = gap if self.gap is None else min(self.gap, gap)
            else:
                self.gap = None
                self.send(key, now)
            self.last_press = now
        return True

    def tick(self, now: float) -> None:
        if self.key is None:
            return
        patience = _FIRST_REPEAT_S if self.gap is None else max(3 * self.gap, _MIN_RELEASE_S)
        if now - self.last_press > patience:
            self.halt()
        elif now - self.last_sent >= _RESEND_S:
            self.send(self.key, now)  # still held

    def send(self, key: str, now: Optional[float] = None) -> None:
        v = {"up": self.speed, "down": -self.speed}.get(key, 0.0)
        w = {"left": self.turn, "right": -self.turn}.get(key, 0.0)
        try:
            self.robot.drive(v, w, deadman=_DEADMAN_S)
            self.key = key
            self.last_sent = time.monotonic() if now is None else now
        except FlockbridgeError as e:
            self.key = None
            self.tell(f"flockbridge: {e}")

    def halt(self) -> None:
        self.key, self.gap = None, None
        try:
            self.robot.stop()
        except FlockbridgeError as e:
            self.tell(f"flockbridge: {e}")

    def status(self) -> str:
        doing = {"up": "ahead", "down": "back", "left": "turning left", "right": "turning right"}.get(
            self.key or "", "stopped"
        )
        reading = self.robot.last("sensor")
        battery = reading.get("battery_v") if reading is not None else None
        parts = [doing, f"speed {self.speed:.0f} mm/s, turn {self.turn:.0f} deg/s", f"link {self.robot.link}"]
        if isinstance(battery, (int, float)):
            parts.append(f"battery {battery:.1f} V")
        if self.robot.latched:
            parts.append("EMERGENCY STOP LATCHED")
        return " | ".join(parts)


def drive_robot(address: str, pin: Optional[str], speed: float, turn: float) -> int:
    if not sys.stdin.isatty():
        raise FlockbridgeError("drive reads the arrow keys: run it in a terminal")
    try:
        import termios
        import tty
    except ImportError:
        raise FlockbridgeError("drive needs a POSIX terminal (Linux, macOS)") from None
    with Robot(address, pin=pin) as robot:
        if robot.role == "viewer":
            robot.auth(pin=getpass.getpass(f"Driver PIN for {address}: "))
        print(f"{_robot_name(robot)} at {robot.host}:{robot.port}")
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)  # keys one at a time, no echo; Ctrl-C still interrupts
        # Said once the keys are read one at a time: a key pressed on reading it counts.
        print("hold an arrow key to drive; space stops; + and - change the speed; q quits", flush=True)
        screen = _Screen(sys.stdout)
        driver = _Driver(robot, speed, turn, screen.say)
        # What the bridge and the client have to say, each on a line of its own.
        log = logging.getLogger("flockbridge")
        handler = _ScreenLog(screen)
        log.addHandler(handler)
        propagated, log.propagate = log.propagate, False
        robot.on("safety_stop", lambda m: screen.say(f"-- the bridge stopped the robot: {m.get('reason', '')}"))
        robot.on("emergency_latch", lambda m: screen.say("-- " + _latch_news(m)))
        robot.on("link", lambda m: screen.say(f"-- robot link {m.get('state')}" + _because(m.get("reason"))))
        rest = b""
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 0.03)
                now = time.monotonic()
                if ready:
                    keys, rest = parse_keys(rest + os.read(fd, 64))
                    if not all(driver.press(key, now) for key in keys):
                        break
                elif rest == b"\x1b":
                    break  # Escape alone: no arrow key follows it
                driver.tick(now)
                screen.show(driver.status())
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            screen.end()
            log.removeHandler(handler)
            log.propagate = propagated
    return 0


def calibrate_robot(address: str, pin: Optional[str]) -> int:
    def ask(question: str, default: str) -> str:
        print(question + (f" [{default}] " if default else " "), end="", flush=True)
        answer = sys.stdin.readline()
        if not answer:
            raise FlockbridgeError("calibration stopped: no more answers")
        return answer.strip()

    with Robot(address, pin=pin) as robot:
        if robot.role == "viewer":
            robot.auth(pin=pin or getpass.getpass(f"Driver PIN for {address}: "))
        lines = calibrate(robot, ask, lambda line: print(line, flush=True))
    print()
    print("Add these lines to the robot's /etc/flockbridge/flockbridge.toml, then: sudo systemctl reload flockbridge")
    print()
    for line in lines:
        print(line)
    return 0


def _because(reason: Any) -> str:
    return f": {reason}" if reason else ""


def _latch_news(message: Message) -> str:
    """An emergency_latch message in words."""
    by = message.get("by")
    who = ""
    if isinstance(by, Message):
        who = str(by.get("peer", "")) if by.get("client") == 0 else f"client {by.get('client')} ({by.get('peer', '')})"
    if not message.get("latched"):
        return f"emergency stop cleared by {who}"
    clear_by = message.get("clear_by")
    return (
        f"EMERGENCY STOP latched by {who}"
        + _because(message.get("reason"))
        + (f"; {clear_by} may clear it" if clear_by else "")
    )


if __name__ == "__main__":
    sys.exit(main())
