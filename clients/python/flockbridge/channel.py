"""A Robot's connection to its bridge, kept open: connect, sign in, read, come back.

The Channel opens a Connection (connection.py, the wire), waits for the
bridge's hello, signs in and subscribes as the Robot asks, then reads every
message on a thread of its own and hands each to the Robot. When the
connection breaks it says so, connects again (0.2 s, doubling up to 2 s,
for `reconnect_s` seconds), signs in again, and says whether the bridge had
restarted meanwhile; or it gives up and says why. It never sends a command
of its own but the sign-in: what the messages mean is the Robot's (robot.py).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .connection import Connection
from .errors import AuthFailed, ConnectionLost, FlockbridgeError, error_for

_log = logging.getLogger("flockbridge")

_RECONNECT_FIRST_S = 0.2
_RECONNECT_MAX_S = 2.0


@dataclass(frozen=True)
class ChannelEvents:
    """What the Channel tells its Robot, each from the thread it happened on."""

    message: Callable[[Dict[str, Any]], None]
    """Every message from the bridge, in order (the hello and the sign-in's too)."""
    signed_in: Callable[[str], None]
    """A sign-in's answer named this connection's role."""
    opened: Callable[[], None]
    """Connected, greeted, signed in and subscribed."""
    lost: Callable[[str], None]
    """The connection broke (why); the Channel connects again."""
    back: Callable[[bool], None]
    """Connected again; True when the bridge had restarted meanwhile."""
    gave_up: Callable[[str], None]
    """No bridge again in time, or signing in again failed (why): the Channel reads no more."""


class Channel:
    """Opens at once (raising when it cannot), then reads on its own thread until closed.

    `sign_in` gives the requests sent after each hello (auth, subscribe), in
    order; `next_id` numbers them, from the same count as the Robot's commands.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        timeout: float,
        reconnect_s: float,
        sign_in: Callable[[], List[Dict[str, Any]]],
        next_id: Callable[[], int],
        events: ChannelEvents,
    ) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.reconnect_s = reconnect_s
        self._sign_in = sign_in
        self._next_id = next_id
        self._events = events
        self._wire: Optional[Connection] = None
        self._ignored_before = 0  # lines the earlier connections skipped
        self._closing = threading.Event()
        self._session: Optional[str] = None  # the bridge's run, from its last hello
        self._lost_reason = ""
        self._open()
        self._reader = threading.Thread(target=self._read_forever, name="flockbridge-reader", daemon=True)
        self._reader.start()

    @property
    def ignored_lines(self) -> int:
        """Lines from the bridge that were not JSON objects, over every connection."""
        wire = self._wire
        return self._ignored_before + (wire.ignored_lines if wire is not None else 0)

    def send(self, message: Dict[str, Any]) -> None:
        """Sends one JSON object. Raises ConnectionLost when not connected, OSError when the send fails."""
        wire = self._wire
        if wire is None:
            raise ConnectionLost("not connected")
        wire.send(message)

    def close(self) -> None:
        """Stops reading and closes the connection (from any thread, the reader's too)."""
        self._closing.set()
        self._shutdown_socket()
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout=2.0)

    # ---- inside ---------------------------------------------------------

    def _open(self) -> None:
        """Connects, reads the hello, signs in and subscribes as the Robot asks."""
        deadline = time.monotonic() + self.timeout
        self._wire = Connection(self.host, self.port, self.timeout)
        try:
            while True:
                message = self._receive(deadline)
                if message is None:
                    raise ConnectionLost(
                        f"{self.host}:{self.port} sent no hello within {self.timeout:g} s: is it a flockbridge "
                        "JSON port (2006)?"
                    )
                self._events.message(message)
                if message.get("type") == "hello":
                    self._session = str(message.get("session", ""))
                    break
            for request in self._sign_in():
                self._ask(request, deadline)
        except BaseException:
            self._shutdown_socket()
            raise
        self._events.opened()

    def _ask(self, request: Dict[str, Any], deadline: float) -> None:
        """Sends a sign-in request and waits for its answer, handing on what comes meanwhile."""
        number = self._next_id()
        self.send({**request, "id": number})
        while True:
            message = self._receive(deadline)
            if message is None:
                raise ConnectionLost(f"{request['cmd']}: no answer from the bridge within {self.timeout:g} s")
            if message.get("id") == number and answers(message, str(request["cmd"])):
                if message.get("type") == "error":
                    raise error_for(message.get("code"), str(message.get("error", "refused")), str(request["cmd"]))
                if "role" in message:
                    self._events.signed_in(str(message["role"]))
                return
            self._events.message(message)

    def _receive(self, deadline: Optional[float]) -> Optional[Dict[str, Any]]:
        """The next JSON object from the bridge; None at the deadline. Raises OSError or ConnectionLost."""
        wire = self._wire
        if wire is None:
            raise ConnectionLost("not connected")
        return wire.receive(deadline)

    def _read_forever(self) -> None:
        while not self._closing.is_set():
            try:
                message = self._receive(None)
                if message is not None:
                    self._events.message(message)
                continue
            except (OSError, FlockbridgeError) as e:
                reason = str(e) if isinstance(e, FlockbridgeError) else f"the connection to the bridge broke ({e})"
            except Exception:  # noqa: BLE001 - the reader must outlive any surprise
                _log.exception("flockbridge reader: unexpected error; reading on")
                continue
            if self._closing.is_set():
                return
            self._lost_reason = reason
            self._shutdown_socket()
            self._events.lost(reason)
            if not self._reconnect():
                return

    def _reconnect(self) -> bool:
        deadline = time.monotonic() + self.reconnect_s
        delay = _RECONNECT_FIRST_S
        session = self._session
        while not self._closing.is_set():
            try:
                self._open()
            except AuthFailed as e:
                self._events.gave_up(f"signing in again failed: {e}")
                return False
            except (OSError, FlockbridgeError) as e:
                if time.monotonic() + delay > deadline:
                    self._events.gave_up(f"{self._lost_reason}; no bridge at {self.host}:{self.port} since ({e})")
                    return False
                self._closing.wait(delay)
                delay = min(delay * 2, _RECONNECT_MAX_S)
                continue
            self._events.back(self._session != session)
            return True
        return False

    def _shutdown_socket(self) -> None:
        wire, self._wire = self._wire, None
        if wire is not None:
            self._ignored_before += wire.ignored_lines
            wire.close()


def answers(message: Dict[str, Any], command: str) -> bool:
    """Whether a message carrying a command's id is its answer: ok, error, or
    the message named after it (stats). Others with the id (a later bridge's
    progress reports, say) are only messages."""
    return message.get("type") in ("ok", "error", command)
