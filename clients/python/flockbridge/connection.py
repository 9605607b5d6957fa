"""One TCP connection to a bridge's JSON port: JSON objects out, JSON objects in.

What it knows is the wire: the address, the socket and its keepalive, lines
of JSON, a line too long to be the bridge's. What the messages mean, and
what to do when the connection is lost, is the Robot's (robot.py).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Dict, Optional, Tuple

from .errors import ConnectionLost

DEFAULT_PORT = 2006
"""The bridge's JSON port, the same for every robot family."""

_MAX_LINE = 1 << 20


def split_address(address: str, port: Optional[int] = None) -> Tuple[str, int]:
    """("host", port) from "host", "host:port", "[v6]:port" or "v6"."""
    host = address.strip()
    if host.startswith("[") and "]" in host:
        inside, _, rest = host[1:].partition("]")
        if rest.startswith(":") and port is None:
            return inside, int(rest[1:])
        return inside, port or DEFAULT_PORT
    if host.count(":") == 1:
        name, _, number = host.partition(":")
        if port is None:
            return name, int(number)
        return name, port
    return host, port or DEFAULT_PORT


class Connection:
    """A connection to `host`:`port`, made at once (ConnectionLost when it cannot be).

    receive() is for one reading thread; send() may be called from any.
    """

    def __init__(self, host: str, port: int, timeout: float) -> None:
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ConnectionLost(f"cannot connect to the bridge at {host}:{port}: {e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _keepalive(sock)
        self._sock: Optional[socket.socket] = sock
        self._send_lock = threading.Lock()
        self._buffer = b""
        self._skipping = False
        self.ignored_lines = 0
        """Lines that were not a JSON object, or too long to be one of the bridge's (skipped)."""

    def receive(self, deadline: Optional[float]) -> Optional[Dict[str, Any]]:
        """The next JSON object from the bridge; None at the deadline (a
        time.monotonic() value; None: wait as long as it takes). Raises
        OSError or ConnectionLost."""
        sock = self._sock
        if sock is None:
            raise ConnectionLost("not connected")
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                message = self._parse(line)
                if message is not None:
                    return message
                continue
            if len(self._buffer) > _MAX_LINE:
                # A runaway line: dropped, and the rest of it when it comes.
                self.ignored_lines += 1
                self._buffer = b""
                self._skipping = True
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                sock.settimeout(left)
            elif sock.gettimeout() is not None:
                # Back to waiting as long as it takes, once: settimeout is a system call.
                sock.settimeout(None)
            try:
                data = sock.recv(65536)
            except socket.timeout:
                return None
            if not data:
                raise ConnectionLost("the bridge closed the connection")
            if self._skipping:
                end = data.find(b"\n")
                if end < 0:
                    continue
                data, self._skipping = data[end + 1 :], False
            self._buffer += data

    def send(self, message: Dict[str, Any]) -> None:
        """Sends one JSON object, whole. Raises OSError or ConnectionLost."""
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._send_lock:
            sock = self._sock
            if sock is None:
                raise ConnectionLost("not connected")
            sock.sendall(data)

    def close(self) -> None:
        """Ends the connection; a receive() waiting in another thread returns with an error."""
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _parse(self, line: bytes) -> Optional[Dict[str, Any]]:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            if line.strip():
                self.ignored_lines += 1
            return None
        return message


def _keepalive(sock: socket.socket) -> None:
    """Finds a bridge whose network vanished in about ten seconds."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (("TCP_KEEPIDLE", 4), ("TCP_KEEPINTVL", 2), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, option):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)
