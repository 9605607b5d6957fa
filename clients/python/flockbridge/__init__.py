"""Drive and watch robots through a flockbridge, from Python.

    import flockbridge

    with flockbridge.connect("flockbot-07.local") as robot:
        robot.drive(150)                     # mm/s ahead
        robot.wait_for(lambda s: s.pose.x_mm > 500, timeout=10)  # half a metre on
    # leaving the block stops the robot

Every robot family (Flockbot, Pioneer/AmigoBot, SMR) through the bridge's
JSON port; docs/python.md has the whole API and classroom recipes.
"""

from .discover import Announcement, discover
from .errors import (
    AuthFailed,
    Busy,
    CommandFailed,
    ConnectionLost,
    EmergencyLatched,
    FlockbridgeError,
    InvalidCommand,
    LinkDown,
    ReplayWarning,
    Timeout,
)
from .message import Message
from .model import Reading, distance, nearest, range_sensors
from .connection import DEFAULT_PORT, split_address
from .robot import Robot, connect

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PORT",
    "Announcement",
    "AuthFailed",
    "Busy",
    "CommandFailed",
    "ConnectionLost",
    "EmergencyLatched",
    "FlockbridgeError",
    "InvalidCommand",
    "LinkDown",
    "Message",
    "Reading",
    "ReplayWarning",
    "Robot",
    "Timeout",
    "connect",
    "discover",
    "distance",
    "nearest",
    "range_sensors",
    "split_address",
]
