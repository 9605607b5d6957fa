"""Reading the robot model every robot's sensor messages share.

Each reading carries `ranges`: the distance each range sensor measures, by
its name (`reading.ranges.front`, in mm; None when it sees nothing). What a
sensor is and where it looks (its kind, "ir" or "sonar", the angle of its
axis, `deg`, from the robot's front, counter-clockwise, and its place) does
not change, so the bridge says it once, in `robot.geometry.ranges`; the
readings a Robot gives know their robot's geometry, and these helpers join
the two the same way on every robot.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple

from .message import Message


class Reading(Message):
    """A sensor message that knows its robot's range sensors (from hello's
    geometry), so that range_sensors(), nearest() and distance() need nothing
    else. It is the message as the bridge sent it in every other way."""

    __slots__ = ("_mounted",)
    _mounted: Tuple[Mapping[str, Any], ...]

    def __init__(self, fields: Mapping[str, Any], mounted: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(fields)
        object.__setattr__(self, "_mounted", tuple(mounted))


def range_sensors(reading: Message) -> List[Message]:
    """Each range sensor of a reading with its mounting: name, kind, deg,
    x_mm, y_mm, max_mm and mm (None when it sees nothing), in the order of
    robot.geometry.ranges."""
    ranges = reading.get("ranges")
    if isinstance(ranges, list):  # a bridge of protocol version 1 said each sensor's mounting in every reading
        return [r for r in ranges if isinstance(r, Message)]
    if not isinstance(ranges, Message):
        return []
    mounted = reading._mounted if isinstance(reading, Reading) else ()
    if not mounted:  # no geometry: the names and distances alone
        return [Message({"name": name, "mm": mm}) for name, mm in ranges.items()]
    return [Message({**sensor, "mm": ranges.get(str(sensor.get("name")))}) for sensor in mounted]


def _in_sector(deg: float, from_deg: float, to_deg: float) -> bool:
    if to_deg - from_deg >= 360:
        return True
    span = (to_deg - from_deg) % 360
    return (deg - from_deg) % 360 <= span


def nearest(reading: Message, from_deg: float = -180.0, to_deg: float = 180.0) -> Optional[Message]:
    """The range sensor that sees the nearest obstacle, among those whose axis
    lies between from_deg and to_deg (counter-clockwise from from_deg; the
    robot's front is 0, its left 90); None when none of them sees anything.
    It has the sensor's name, kind, deg, x_mm, y_mm and mm.

        ahead = flockbridge.nearest(robot.sensors, -30, 30)
        if ahead is not None and ahead.mm < 300: ...
    """
    best: Optional[Message] = None
    for sensor in range_sensors(reading):
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
    for sensor in range_sensors(reading):
        if sensor.get("name") == name:
            mm = sensor.get("mm")
            return None if mm is None else float(mm)
    names = ", ".join(str(r.get("name")) for r in range_sensors(reading)) or "none"
    raise KeyError(f"no range sensor {name!r} (this robot has: {names})")
