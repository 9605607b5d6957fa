"""Reading the robot model every robot's sensor messages share.

Each reading carries `ranges`: one entry per range sensor, with its name,
its kind ("ir" or "sonar"), the angle of its axis (`deg`, from the robot's
front, counter-clockwise) and the distance it measures (`mm`, None when it
sees nothing). These helpers pick from them the same way on every robot.
"""

from __future__ import annotations

from typing import Optional

from .message import Message


def _in_sector(deg: float, from_deg: float, to_deg: float) -> bool:
    if to_deg - from_deg >= 360:
        return True
    span = (to_deg - from_deg) % 360
    return (deg - from_deg) % 360 <= span


def nearest(reading: Message, from_deg: float = -180.0, to_deg: float = 180.0) -> Optional[Message]:
    """The range sensor that sees the nearest obstacle, among those whose axis
    lies between from_deg and to_deg (counter-clockwise from from_deg; the
    robot's front is 0, its left 90); None when none of them sees anything.

        ahead = flockbridge.nearest(robot.sensors, -30, 30)
        if ahead is not None and ahead.mm < 300: ...
    """
    best: Optional[Message] = None
    for sensor in reading.get("ranges") or []:
        if sensor.get("mm") is None or sensor.get("deg") is None:
            continue
        if not _in_sector(float(sensor.deg), from_deg, to_deg):
            continue
        if best is None or sensor.mm < best.mm:
            best = sensor
    return best


def distance(reading: Message, name: str) -> Optional[float]:
    """What the range sensor called `name` ("front", "left", "sonar3", ...)
    measures, in mm; None when it sees nothing in its range. A name the
    robot does not have raises KeyError naming those it has."""
    ranges = reading.get("ranges") or []
    for sensor in ranges:
        if sensor.get("name") == name:
            mm = sensor.get("mm")
            return None if mm is None else float(mm)
    raise KeyError(f"no range sensor {name!r} (this robot has: {', '.join(str(r.get('name')) for r in ranges) or 'none'})")
