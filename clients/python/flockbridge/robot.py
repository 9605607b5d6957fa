"""A robot behind a flockbridge, over the bridge's JSON lines (port 2006).

One background thread reads everything the bridge sends and connects again
after a loss (a Channel, channel.py, over a Connection, connection.py, which
knows the wire); the program's own thread sends commands and waits for
their answers. This module is the API: what the bridge said, and the
commands. Nothing here retries a command that moves the robot: a command
whose answer was lost raises, and the program decides.
"""

from __future__ import annotations

import atexit
import itertools
import json
import logging
import sys
import threading
import time
import warnings
import weakref
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .channel import Channel, ChannelEvents, answers
from .errors import (
    ConnectionLost,
    FlockbridgeError,
    InvalidCommand,
    LinkDown,
    ReplayWarning,
    Timeout,
    error_for,
)
from .connection import split_address
from .message import Message
from .model import Reading, nearest

Callback = Callable[[Message], Any]

_log = logging.getLogger("flockbridge")

# Commands that never set a robot moving: the bridge's own commands, and the
# two stops. Every other command may drive, so a program that sent one stops
# the robot when it ends.
_NEVER_MOVES = frozenset(
    {
        "approve",
        "auth",
        "clear_emergency",
        "emergency",
        "fleet",
        "fleet_emergency",
        "release",
        "set",
        "stats",
        "stop",
        "subscribe",
        "take",
        "unsubscribe",
    }
)
_STOPS = frozenset({"stop", "emergency"})

_STOP_ON_EXIT_TIMEOUT_S = 1.0


_PACKAGE = str(Path(__file__).resolve().parent)


def _outside_this_package() -> int:
    """The stacklevel for warnings.warn that names the first caller outside this package."""
    level = 1
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


class _Pending:
    __slots__ = ("name", "reply", "lost", "was_moving")

    def __init__(self, name: str, was_moving: bool) -> None:
        self.name = name
        self.reply: Optional[Dict[str, Any]] = None
        self.lost = False
        self.was_moving = was_moving  # whether the robot might have been moving by us before it


class Robot:
    """A robot, through its bridge. Use it as a context manager:

        with flockbridge.Robot("flockbot-07.local") as robot:
            robot.drive(200)            # 200 mm/s ahead
            robot.wait_for(lambda s: s.ir[2] > 300, timeout=10)
        # here the robot has stopped, whatever happened inside

    `host` may carry the port ("10.0.3.7:2006"); the JSON port is 2006.
    `pin` is the robot's driver PIN and `teacher` the teacher secret, when
    the bridge has them set. Commands wait `timeout` seconds for the
    bridge's answer. `interval_ms` asks the bridge for at most one sensor
    message per interval (less traffic; `sensors` is then that old at most).
    When the connection is lost the client connects again for `reconnect_s`
    seconds, signs in again and carries on; it never sends a motion command
    again by itself.
    """

    def __init__(
        self,
        host: str = "localhost",
        port: Optional[int] = None,
        *,
        pin: Optional[str] = None,
        teacher: Optional[str] = None,
        timeout: float = 5.0,
        interval_ms: Optional[int] = None,
        reconnect_s: float = 30.0,
    ) -> None:
        self.host, self.port = split_address(host, port)
        self.timeout = timeout
        self.reconnect_s = reconnect_s
        self._pin = pin
        self._teacher = teacher
        self._interval_ms = interval_ms

        self._cond = threading.Condition(threading.RLock())
        self._ids = itertools.count(1)
        self._replay_warned = False
        self._connected = False
        self._closed = False
        self._pending: Dict[int, _Pending] = {}
        self._handlers: Dict[str, List[Callback]] = {}
        self._last: Dict[str, Message] = {}
        self._hello: Message = Message({})
        self._latest: Optional[Message] = None
        self._readings = 0
        self._link = "unknown"
        self._link_reason = ""
        self._lease: Optional[Message] = None
        self._latched = False
        self._may_be_moving = False
        self._stopped: Optional[Tuple[float, str]] = None  # when and why the bridge took this program's drive
        self._lost_reason = ""

        self._channel = Channel(
            self.host,
            self.port,
            timeout=timeout,
            reconnect_s=reconnect_s,
            sign_in=self._sign_in_requests,
            next_id=lambda: next(self._ids),
            events=ChannelEvents(
                message=self._dispatch,
                signed_in=self._signed_in,
                opened=self._opened,
                lost=self._connection_lost,
                back=self._back,
                gave_up=self._give_up,
            ),
        )
        _open_robots.add(self)

    # ---- what the bridge said -------------------------------------------

    @property
    def ignored_lines(self) -> int:
        """Lines from the bridge that were not a JSON object (skipped)."""
        return self._channel.ignored_lines

    @property
    def family(self) -> str:
        """The robot's family: "flockbot", "pioneer", "smr" (or "none" on a class hub)."""
        return str(self._hello.get("robot", ""))

    @property
    def model(self) -> str:
        """The robot's model ("p3dx", "amigo", "smr", ...)."""
        return str(self._hello.get("model", ""))

    @property
    def replay(self) -> Optional[Message]:
        """The recording this bridge replays (file, recorded_at, speed), or None for a robot."""
        replay = self._hello.to_dict().get("replay")
        return Message(replay) if isinstance(replay, dict) else None

    @property
    def capabilities(self) -> Tuple[str, ...]:
        """The commands this robot takes; each is a method of this object too."""
        return tuple(str(name) for name in self._hello.get("capabilities", []))

    @property
    def geometry(self) -> Message:
        """What the robot is, the same for every family: footprint (radius_mm,
        length_mm, width_mm), wheel_base_mm, max_v_mm_s, max_w_deg_s, ranges
        (each sensor's name, kind, deg, x_mm, y_mm, max_mm) and bumpers (names).
        None for what the bridge does not know."""
        return Message(dict(self._hello.get("geometry") or {}))

    def nearest(self, from_deg: float = -180.0, to_deg: float = 180.0) -> Optional[Message]:
        """The range sensor of the latest reading that sees the nearest obstacle
        between from_deg and to_deg (see flockbridge.nearest), with its name,
        kind, deg, x_mm, y_mm and mm; None if none does."""
        return nearest(self.sensors, from_deg, to_deg)

    @property
    def session(self) -> str:
        """The bridge's run: a new value after the bridge restarted."""
        return str(self._hello.get("session", ""))

    @property
    def client_id(self) -> int:
        """This connection's number, as the bridge's lease messages name it."""
        return int(self._hello.get("client", 0))

    @property
    def role(self) -> str:
        """"viewer", "driver" or "teacher"."""
        with self._cond:
            return str(self._hello.get("role", ""))

    @property
    def link(self) -> str:
        """The robot link's state: "up", "handshaking", "stale", "down", ..."""
        with self._cond:
            return self._link

    @property
    def link_reason(self) -> str:
        """Why the link is not up ("" when it is)."""
        with self._cond:
            return self._link_reason

    @property
    def connected(self) -> bool:
        """True while the connection to the bridge is open."""
        with self._cond:
            return self._connected

    @property
    def lease(self) -> Optional[Message]:
        """Who drives the robot (client, peer, kind, since), or None."""
        with self._cond:
            return self._lease

    @property
    def driving(self) -> bool:
        """True while this program holds the robot's control lease."""
        with self._cond:
            return self._lease is not None and self._lease.get("client") == self.client_id

    @property
    def latched(self) -> bool:
        """True while an emergency stop is latched on the robot."""
        with self._cond:
            return self._latched

    def last(self, kind: str) -> Optional[Message]:
        """The last message of this type ("link", "safety_stop", ...), or None."""
        with self._cond:
            return self._last.get(kind)

    @property
    def sensors(self) -> Message:
        """The latest sensor reading; waits up to `timeout` for the first one."""
        with self._cond:
            if self._latest is None:
                self._cond.wait_for(lambda: self._latest is not None or self._closed, self.timeout)
            if self._latest is None:
                raise self._no_reading(self.timeout)
            return self._latest

    # ---- waiting for readings -------------------------------------------

    def wait_for(self, predicate: Callable[[Message], Any], timeout: Optional[float] = 10.0) -> Message:
        """Waits until `predicate(reading)` is true, and returns that reading.

        The latest reading counts too. Raises Timeout after `timeout`
        seconds (None: wait as long as it takes).
        """
        began = time.monotonic()
        deadline = None if timeout is None else began + timeout
        seen = -1
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._readings != seen or self._closed, _left(deadline))
                if self._closed:
                    raise self._closed_error()
                reading, seen = self._latest, self._readings
            if reading is not None and predicate(reading):
                return reading
            if deadline is not None and time.monotonic() >= deadline:
                raise Timeout(
                    f"the condition was not met within {timeout:g} s" + self._why_quiet() + self._stopped_since(began)
                )

    def stream(self, interval_ms: int = 100, timeout: Optional[float] = None) -> Iterator[Message]:
        """Yields readings, at most one per `interval_ms` (0: every one).

        Each is the newest at its time; older ones in between are skipped.
        Raises Timeout when no reading comes for `timeout` seconds (by
        default the robot's `timeout`; the link is probably down).
        """
        quiet = self.timeout if timeout is None else timeout
        seen = -1
        due = 0.0
        while True:
            with self._cond:
                arrived = self._cond.wait_for(
                    lambda: (self._latest is not None and self._readings != seen) or self._closed, quiet
                )
                if self._closed:
                    raise self._closed_error()
                if not arrived or self._latest is None:
                    raise self._no_reading(quiet)
                wait = due - time.monotonic()
                if wait > 0:
                    self._cond.wait_for(lambda: self._closed, wait)
                    continue
                reading, seen = self._latest, self._readings
            due = time.monotonic() + interval_ms / 1000.0
            yield reading

    def wait_event(self, kind: str, timeout: Optional[float] = 10.0) -> Message:
        """Waits for the next message of this kind from now on, and returns it.

        `kind` as for on(): "dmc" (a Flockbot's move completed), "lease",
        "safety_stop", "link", ... Raises Timeout after `timeout` seconds.

            robot.move_distance(speed=20, dist=30)
            robot.wait_event("dmc")        # the Flockbot has driven 30 cm
        """
        got: List[Message] = []
        began = time.monotonic()

        def keep(message: Message) -> None:
            with self._cond:
                got.append(message)
                self._cond.notify_all()

        self.on(kind, keep)
        try:
            with self._cond:
                self._cond.wait_for(lambda: bool(got) or self._closed, timeout)
                if got:
                    return got[0]
                if self._closed:
                    raise self._closed_error()
        finally:
            self.off(kind, keep)
        limit = "" if timeout is None else f" within {timeout:g} s"
        raise Timeout(f"no {kind!r} message{limit}" + self._why_quiet() + self._stopped_since(began))

    def on(self, kind: str, callback: Callback) -> Callback:
        """Calls `callback(message)` for every message of this kind.

        `kind` is a message type ("sensor", "link", "lease", "safety_stop",
        "emergency_latch", ...), a robot packet's tag ("dmc": a Flockbot's
        move completed), "disconnect" or "reconnect" (the connection to the
        bridge), or "*" for everything. Callbacks run on the reader thread:
        keep them short. An exception in one is logged, never fatal.
        Returns the callback, so `on` works as a decorator's body too.
        """
        with self._cond:
            self._handlers.setdefault(kind.lower(), []).append(callback)
        return callback

    def off(self, kind: str, callback: Callback) -> None:
        """Stops calling a callback given to `on`."""
        with self._cond:
            handlers = self._handlers.get(kind.lower(), [])
            if callback in handlers:
                handlers.remove(callback)

    # ---- commands -------------------------------------------------------

    def command(self, name: str, *, wait: bool = True, timeout: Optional[float] = None, **arguments: Any) -> Message:
        """Sends a command and waits for the bridge's answer.

        Returns the answer (`ok`, or `stats` for stats). Raises the
        exception matching the bridge's error code, with its words. With
        wait=False it returns at once (an error then goes to `on("error")`).
        """
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        try:
            json.dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidCommand(f"{name}: the arguments cannot be sent as JSON ({e})", command=name) from None
        with self._cond:
            if not self._connected and not self._closed:
                self._cond.wait_for(lambda: self._connected or self._closed, _left(deadline))
            if not self._connected:
                raise ConnectionLost(f"{name}: not connected to the bridge" + self._lost_suffix())
            number = next(self._ids)
            pending = _Pending(name, self._may_be_moving)
            self._pending[number] = pending
            if name not in _NEVER_MOVES:
                self._may_be_moving = True
        try:
            self._send({"cmd": name, **arguments, "id": number})
        except OSError as e:
            with self._cond:
                self._pending.pop(number, None)
            raise ConnectionLost(f"{name}: the connection to the bridge broke while sending ({e})") from None
        if not wait:
            return Message({"type": "sent", "id": number})
        with self._cond:
            self._cond.wait_for(lambda: pending.reply is not None or pending.lost, _left(deadline))
            self._pending.pop(number, None)
            reply = pending.reply
        if reply is None:
            if pending.lost:
                raise ConnectionLost(
                    f"{name}: the connection to the bridge was lost before it answered; the command may or may "
                    "not have reached the robot" + self._lost_suffix()
                )
            raise Timeout(f"{name}: no answer from the bridge within {limit:g} s", command=name)
        if reply.get("type") == "error":
            if reply.get("code") == "replay":
                self._warn_replay(str(reply.get("error", "not sent: a replay")))
                return Message(reply)
            raise error_for(reply.get("code"), str(reply.get("error", "refused")), name)
        return Message(reply)

    def _warn_replay(self, words: str) -> None:
        # Once per connection: a program that drives in a loop would say it
        # at every reading. The warning names the program's own line.
        with self._cond:
            if self._replay_warned:
                return
            self._replay_warned = True
        warnings.warn(
            f"{words}; the program runs on, reading the recorded run (commands are not sent)",
            ReplayWarning,
            stacklevel=_outside_this_package(),
        )

    def drive(self, v_mm_s: float, w_deg_s: float = 0.0, *, deadman: Optional[float] = None) -> None:
        """Drives at v_mm_s (mm/s, negative: backwards) turning at w_deg_s (degrees/s, positive: left).

        The robot keeps going until stop(), another drive, or the end of
        the program. With deadman (seconds, 0.05 to 60) the bridge stops
        it that long after this command unless another motion command came
        first: call drive() again before then to keep going (a control
        loop, a held key), as ROS's cmd_vel timeout does.
        """
        if deadman is None:
            self.command("drive", v_mm_s=v_mm_s, w_deg_s=w_deg_s)
        else:
            self.command("drive", v_mm_s=v_mm_s, w_deg_s=w_deg_s, deadman_ms=round(deadman * 1000))

    def reset_pose(self) -> None:
        """Starts the pose (sensors.pose) again at 0, 0, 0, facing +x, from where the robot is."""
        self.command("reset_pose")

    def stop(self) -> None:
        """Stops the robot. Anyone may stop it, driver or not."""
        self.command("stop")

    def emergency(self) -> None:
        """Emergency stop: the robot stops and stays stopped (latched) until cleared."""
        self.command("emergency")

    def clear_emergency(self) -> None:
        """Clears a latched emergency stop (the teacher, or a driver if the bridge allows)."""
        self.command("clear_emergency")

    def release(self) -> None:
        """Gives up driving (the robot is stopped) so that someone else may drive."""
        self.command("release")

    def take(self) -> None:
        """Asks the driver to hand over; the teacher takes control at once."""
        self.command("take")

    def subscribe(self, interval_ms: int) -> None:
        """Asks the bridge for at most one sensor message per interval (0: all), kept after reconnects."""
        self.command("subscribe", interval_ms=interval_ms)
        self._interval_ms = interval_ms

    def stats(self) -> Message:
        """The bridge's counters: link, commands, sensors, clients."""
        return self.command("stats")

    def auth(self, *, pin: Optional[str] = None, teacher: Optional[str] = None) -> str:
        """Signs in with the driver PIN or the teacher secret; returns the new role.

        Raises AuthFailed for a wrong one. Remembered for reconnects.
        """
        if (pin is None) == (teacher is None):
            raise ValueError("auth takes either pin= or teacher=")
        secret: Dict[str, Any] = {"pin": pin} if pin is not None else {"teacher": teacher}
        reply = self.command("auth", **secret)
        if pin is not None:
            self._pin = pin
        else:
            self._teacher = teacher
        with self._cond:
            self._hello = Message({**self._hello.to_dict(), "role": reply.get("role", "")})
        return str(reply.get("role", ""))

    def __getattr__(self, name: str) -> Callable[..., Message]:
        # The robot family's own commands, from the bridge's hello.
        if name.startswith("_"):
            raise AttributeError(name)
        hello = self.__dict__.get("_hello")
        names = [str(c) for c in hello.get("capabilities", [])] if hello is not None else []
        if name not in names:
            family = hello.get("robot", "this robot") if hello is not None else "this robot"
            raise AttributeError(f"{family} has no command {name!r}; it takes: {', '.join(names) or 'none'}")

        def family_command(*values: Any, **arguments: Any) -> Message:
            if values:
                raise TypeError(self._by_name(name, values))
            return self.command(name, **arguments)

        family_command.__name__ = name
        family_command.__doc__ = f"The robot's {name!r} command; arguments by keyword, as the bridge names them."
        return family_command

    def _by_name(self, name: str, values: Tuple[Any, ...]) -> str:
        """What to say of a family command given values without names: the names it takes."""
        said = f"{name}() takes its arguments by name"
        try:
            # An argument no command has: the bridge refuses it before
            # anything reaches the robot, and says which ones it takes.
            unknown: Dict[str, Any] = {"?": None}
            self.command(name, **unknown)
        except InvalidCommand as e:
            words = str(e)
            taken = words.rpartition("it takes ")[2]
            if words.endswith("it takes none"):
                return f"{name}() takes no arguments"
            if taken and taken != words:
                names = [n.strip() for n in taken.split(",")]
                shown = ", ".join(f"{n}={v!r}" for n, v in zip(names, values))
                return f"{said}: {name}({shown})" + (f" ({', '.join(names)})" if len(values) != len(names) else "")
        except FlockbridgeError:
            pass
        return f"{said}, as the bridge names them (docs/clients.md lists each command's)"

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self.capabilities))

    # ---- the end --------------------------------------------------------

    def close(self) -> None:
        """Stops the robot if this program may have set it moving, and disconnects."""
        with self._cond:
            if self._closed:
                return
            stop = self._connected and (self._may_be_moving or self.driving)
        if stop:
            try:
                self.command("stop", timeout=_STOP_ON_EXIT_TIMEOUT_S)
            except FlockbridgeError as e:
                # Closing the connection stops it too: the bridge stops a
                # robot whose driver went away.
                _log.warning("stop on close: %s", e)
        with self._cond:
            self._closed = True
            self._connected = False
            self._lost_reason = self._lost_reason or "the robot was closed"
            self._fail_pending()
            self._cond.notify_all()
        self._channel.close()
        _open_robots.discard(self)

    def __enter__(self) -> Robot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed" if self._closed else "reconnecting"
        return f"<Robot {self.family or '?'} {self.model or '?'} at {self.host}:{self.port}, {state}, link {self.link}>"

    # ---- inside ---------------------------------------------------------

    def _sign_in_requests(self) -> List[Dict[str, Any]]:
        """What each connection asks after the hello: sign in as before, subscribe as before."""
        requests: List[Dict[str, Any]] = []
        if self._pin is not None:
            requests.append({"cmd": "auth", "pin": self._pin})
        if self._teacher is not None:
            requests.append({"cmd": "auth", "teacher": self._teacher})
        if self._interval_ms is not None:
            requests.append({"cmd": "subscribe", "interval_ms": self._interval_ms})
        return requests

    def _signed_in(self, role: str) -> None:
        with self._cond:
            self._hello = Message({**self._hello.to_dict(), "role": role})

    def _opened(self) -> None:
        with self._cond:
            self._connected = True
            self._cond.notify_all()

    def _dispatch(self, raw: Dict[str, Any]) -> None:
        kind = str(raw.get("type", ""))
        message = Message(raw)
        with self._cond:
            if kind == "hello":
                self._hello = message
                self._link = str(raw.get("link", "unknown"))
                self._link_reason = str(raw.get("reason", ""))
            elif kind == "sensor":
                # The reading knows where its range sensors look (hello's geometry).
                geometry = self._hello.get("geometry")
                mounted = geometry.get("ranges") if isinstance(geometry, Message) else None
                message = Reading(raw, mounted if isinstance(mounted, list) else ())
                self._latest = message
                self._readings += 1
            elif kind == "link":
                self._link = str(raw.get("state", "unknown"))
                self._link_reason = str(raw.get("reason", ""))
            elif kind == "lease":
                holder = message.get("holder")
                was_ours = self._lease is not None and self._lease.get("client") == self.client_id
                self._lease = holder if isinstance(holder, Message) else None
                releasing = any(p.name == "release" for p in self._pending.values())
                if was_ours and self._lease is None and not releasing:
                    # The bridge ended this program's lease: no command for
                    # access.lease_idle_ms, or the teacher took over.
                    reason = str(raw.get("reason", "")) or "this program no longer drives it"
                    self._stopped = (time.monotonic(), reason)
                    if self._may_be_moving:
                        _log.warning("flockbridge: the bridge stopped the robot: %s", reason)
                    else:
                        # It had stopped the robot itself: nothing the program needs to hear.
                        _log.debug("flockbridge: this program no longer drives the robot: %s", reason)
            elif kind == "emergency_latch":
                self._latched = bool(raw.get("latched"))
            if kind in ("safety_stop", "emergency_latch") or (kind == "lease" and self._lease is None):
                self._may_be_moving = False
            self._last[kind] = message
            number = raw.get("id")
            pending = self._pending.get(number) if isinstance(number, int) else None
            if pending is not None and answers(raw, pending.name):
                pending.reply = raw
                if kind == "ok" and pending.name in _STOPS:
                    self._may_be_moving = False
                elif kind == "error" and raw.get("code") in ("busy", "latched", "denied"):
                    self._may_be_moving = False  # somebody else drives, or nobody may
                elif kind == "error" and raw.get("code") == "invalid":
                    self._may_be_moving = pending.was_moving  # it never went out
            handlers = list(self._handlers.get(kind, [])) + list(self._handlers.get("*", []))
            if kind == "packet" and isinstance(raw.get("tag"), str):
                handlers += self._handlers.get(str(raw["tag"]).lower(), [])
            self._cond.notify_all()
        self._call(handlers, message)

    def _call(self, handlers: List[Callback], message: Message) -> None:
        for handler in handlers:
            try:
                handler(message)
            except Exception:  # noqa: BLE001 - a student's callback must not end the reader
                _log.exception("flockbridge: a callback for %r raised", message.get("type"))

    def _connection_lost(self, reason: str) -> None:
        with self._cond:
            self._connected = False
            self._lost_reason = reason
            self._latest = None
            self._lease = None
            self._may_be_moving = False  # the bridge stops the robot of a driver that went away
            self._fail_pending()
            handlers = list(self._handlers.get("disconnect", [])) + list(self._handlers.get("*", []))
            self._cond.notify_all()
        _log.warning("flockbridge: %s; connecting again", reason)
        self._call(handlers, Message({"type": "disconnect", "reason": reason}))

    def _back(self, restarted: bool) -> None:
        _log.warning("flockbridge: connected again%s", " (the bridge had restarted)" if restarted else "")
        with self._cond:
            handlers = list(self._handlers.get("reconnect", [])) + list(self._handlers.get("*", []))
        self._call(handlers, Message({"type": "reconnect", "restarted": restarted, "session": self.session}))

    def _give_up(self, reason: str) -> None:
        with self._cond:
            self._closed = True
            self._lost_reason = reason
            self._cond.notify_all()
        _open_robots.discard(self)
        _log.error("flockbridge: %s", reason)

    def _fail_pending(self) -> None:
        for pending in self._pending.values():
            pending.lost = True

    def _send(self, message: Dict[str, Any]) -> None:
        self._channel.send(message)

    def _closed_error(self) -> ConnectionLost:
        # close() and giving up on reconnecting both say why.
        return ConnectionLost(self._lost_reason or "the robot was closed")

    def _lost_suffix(self) -> str:
        return f" ({self._lost_reason})" if self._lost_reason else ""

    def _stopped_since(self, began: float) -> str:
        stopped = self._stopped
        if stopped is None or stopped[0] < began:
            return ""
        return f"; meanwhile the bridge stopped the robot: {stopped[1]}"

    def _why_quiet(self) -> str:
        if self._link != "up":
            return f"; the robot link is {self._link}" + (f": {self._link_reason}" if self._link_reason else "")
        return ""

    def _no_reading(self, waited: float) -> FlockbridgeError:
        if self._closed:
            return self._closed_error()
        if not self._connected:
            return ConnectionLost("no sensor reading: not connected to the bridge" + self._lost_suffix())
        if self._link != "up":
            return LinkDown(f"no sensor reading within {waited:g} s" + self._why_quiet())
        return Timeout(f"no sensor reading within {waited:g} s")


def connect(host: str = "localhost", port: Optional[int] = None, **options: Any) -> Robot:
    """Connects to a robot's bridge: `flockbridge.connect("flockbot-07.local")`.

    The same as Robot(host, port, **options). The robot is stopped when the
    program ends, or when the connection closes, if this program drove it.
    """
    return Robot(host, port, **options)


def _left(deadline: Optional[float]) -> Optional[float]:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


_open_robots: "weakref.WeakSet[Robot]" = weakref.WeakSet()


@atexit.register
def _stop_at_exit() -> None:
    # A program that ends (normally, by an exception, by Ctrl-C) stops the
    # robots it set moving.
    for robot in list(_open_robots):
        try:
            robot.close()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass
