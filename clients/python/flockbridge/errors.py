"""The exceptions of the flockbridge client.

Every exception this package raises is a FlockbridgeError. A command the
bridge refused raises the subclass that matches the bridge's error `code`,
with the bridge's own words as the message:

    try:
        robot.drive(200)
    except flockbridge.Busy as e:
        print("someone else drives:", e)
"""

from __future__ import annotations

from typing import Optional


class FlockbridgeError(Exception):
    """Something went wrong talking to a robot through its bridge.

    `code` is the bridge's error code (`invalid`, `busy`, ...) when the
    bridge refused a command, and `command` the command's name.
    """

    def __init__(self, message: str, *, code: Optional[str] = None, command: Optional[str] = None) -> None:
        super().__init__(message)
        self.code = code
        self.command = command


class ConnectionLost(FlockbridgeError, ConnectionError):
    """The connection to the bridge is gone (or could not be made)."""


class LinkDown(FlockbridgeError):
    """The bridge is reachable but its robot is not (unplugged, rebooting, off)."""


class Busy(FlockbridgeError):
    """Another program drives the robot; the message says who."""


class AuthFailed(FlockbridgeError, PermissionError):
    """A wrong PIN or teacher secret, or this connection may not do that."""


class EmergencyLatched(FlockbridgeError):
    """An emergency stop is latched: no motion until the teacher clears it."""


class InvalidCommand(FlockbridgeError, ValueError):
    """The bridge does not take this command or these arguments."""


class Timeout(FlockbridgeError, TimeoutError):
    """No answer, or not what was waited for, within the time given."""


class CommandFailed(FlockbridgeError):
    """The command reached the bridge but did not reach the robot.

    The code says why: `queue_full`, `rate_limited`, `refused` (the robot
    answered NAK to every try), `no_ack`, `link_lost`, `cancelled` (an
    emergency stop cancelled it). A bridge that replays a recording answers
    every command but `stop` and `emergency` with the code `replay`, which
    is not raised: see ReplayWarning.
    """


class ReplayWarning(UserWarning):
    """The bridge replays a recording: commands are answered, the robot is not moved.

    Given once per connection, by Python's warnings (printed to stderr),
    at the first command the replay did not send; the program runs on and
    reads the recorded run as it was, so that a program can be run again
    on a run that went wrong. `warnings.simplefilter("error", ReplayWarning)`
    makes it an exception.
    """


_BY_CODE = {
    "invalid": InvalidCommand,
    "link_down": LinkDown,
    "link_lost": LinkDown,
    "busy": Busy,
    "denied": AuthFailed,
    "latched": EmergencyLatched,
}


def error_for(code: Optional[str], message: str, command: Optional[str] = None) -> FlockbridgeError:
    """The exception for a bridge `error` message with this code and text."""
    kind = _BY_CODE.get(code or "", CommandFailed)
    return kind(message, code=code, command=command)
