"""The robot model's helpers on a reading: each range by its name in the
message, each sensor's mounting from the robot's geometry (hello)."""

from typing import Any, Dict, Optional

import pytest

import flockbridge

GEOMETRY = [
    {"name": "left", "kind": "ir", "deg": 90.0, "x_mm": 0.0, "y_mm": 80.0, "max_mm": 800.0},
    {"name": "front", "kind": "ir", "deg": 0.0, "x_mm": 80.0, "y_mm": 0.0, "max_mm": 800.0},
    {"name": "right", "kind": "ir", "deg": -90.0, "x_mm": 0.0, "y_mm": -80.0, "max_mm": 800.0},
]


def reading(ranges: Dict[str, Any]) -> flockbridge.Reading:
    mounted = [flockbridge.Message(sensor) for sensor in GEOMETRY]
    return flockbridge.Reading({"type": "sensor", "seq": 1, "ranges": ranges}, mounted)


def found(sensor: Optional[flockbridge.Message]) -> flockbridge.Message:
    assert sensor is not None
    return sensor


def test_a_reading_joins_each_range_with_its_mounting() -> None:
    s = reading({"left": 300, "front": None, "right": 120})
    assert s.ranges.left == 300  # as the bridge sent it
    assert s.to_dict()["ranges"] == {"left": 300, "front": None, "right": 120}
    joined = flockbridge.range_sensors(s)
    assert [r.name for r in joined] == ["left", "front", "right"]
    assert joined[0].deg == 90.0 and joined[0].kind == "ir" and joined[0].mm == 300
    assert joined[1].mm is None


def test_nearest_and_distance_by_direction_and_name() -> None:
    s = reading({"left": 300, "front": 500, "right": 120})
    assert found(flockbridge.nearest(s)).name == "right"
    ahead = found(flockbridge.nearest(s, -30, 30))
    assert ahead.name == "front" and ahead.mm == 500 and ahead.x_mm == 80.0
    assert found(flockbridge.nearest(s, 60, 120)).name == "left"
    assert flockbridge.nearest(reading({"left": None, "front": None, "right": None})) is None
    assert flockbridge.distance(s, "front") == 500.0
    with pytest.raises(KeyError, match="left, front, right"):
        flockbridge.distance(s, "rear")


def test_a_reading_without_geometry_still_has_names_and_distances() -> None:
    s = flockbridge.Message({"type": "sensor", "ranges": {"front": 410}})
    assert flockbridge.distance(s, "front") == 410.0
    assert flockbridge.nearest(s) is None  # no direction known: nothing to choose by


def test_a_version_1_reading_lists_its_sensors_with_their_mounting() -> None:
    s = flockbridge.Message({"type": "sensor", "ranges": [dict(GEOMETRY[1], mm=250)]})
    assert found(flockbridge.nearest(s, -10, 10)).mm == 250
