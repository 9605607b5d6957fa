"""A robot's conversions, measured with the robot: python3 -m flockbridge calibrate ROBOT.

The robot model (pose, battery volts, range distances) needs numbers the
robot's raw readings do not carry: millimetres per odometer count, the wheel
base, volts per battery count, and the IR sensors' distance law
mm = k / (reading - offset). This walks a person through measuring them,
with the robot doing the driving, and prints the settings to add to the
bridge's configuration file.

A Flockbot: it drives 50 cm and turns half a turn on the spot (you say how
far it really went and turned), then creeps towards a wall reading its front IR sensor at
known distances (from where you say the wall is, less what it has driven
since), and asks for the battery's voltage. An SMR: the IR law only (its
odometry comes from its wheel geometry, [smr]).
"""

from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence, Tuple

from .errors import FlockbridgeError
from .message import Message
from .robot import Robot

Ask = Callable[[str, str], str]
Say = Callable[[str], None]

APPROACH_MM_S = 400.0  # towards the wall, until near the next distance
CREEP_MM_S = 50.0  # the last 100 mm to it
IR_DISTANCES_MM = (600.0, 350.0, 220.0, 150.0)  # from the front sensor to the wall


def fit_inverse_law(points: Sequence[Tuple[float, float]]) -> Tuple[float, float]:
    """(k, offset) of reading = offset + k / mm, by least squares over (mm, reading) pairs."""
    if len(points) < 2:
        raise FlockbridgeError("the IR law needs readings at two distances at least")
    xs = [1.0 / mm for mm, _ in points]
    ys = [reading for _, reading in points]
    n = len(points)
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        raise FlockbridgeError("the IR readings were all at one distance")
    k = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread
    if k <= 0:
        raise FlockbridgeError("the IR reading did not rise as the wall came nearer: is that the sensor that looks ahead?")
    return k, mean_y - k * mean_x


def _number(ask: Ask, question: str, default: str) -> float:
    while True:
        answer = ask(question, default).strip() or default
        try:
            return float(answer)
        except ValueError:
            pass


def _average(robot: Robot, read: Callable[[Message], float], count: int = 10) -> float:
    values: List[float] = []
    for reading in robot.stream(interval_ms=0, timeout=10):
        values.append(read(reading))
        if len(values) == count:
            break
    return sum(values) / len(values)


def _where(reading: Message) -> Tuple[float, ...]:
    """What changes while the robot moves: a Flockbot's odometers, an SMR's pose."""
    if "odometer" in reading:
        return (float(reading.odometer["left"]), float(reading.odometer["right"]))
    return (float(reading.pose.x_mm), float(reading.pose.y_mm), float(reading.pose.th_deg))


def _settle(robot: Robot, still_readings: int = 8) -> None:
    """Stops the robot and waits until its readings say it stands still."""
    robot.stop()
    last: Optional[Tuple[float, ...]] = None
    same = 0
    for reading in robot.stream(interval_ms=0, timeout=10):
        where = _where(reading)
        same = same + 1 if where == last else 0
        last = where
        if same >= still_readings:
            return


def calibrate(robot: Robot, ask: Ask, say: Say) -> List[str]:
    """Measures what the robot's family needs; returns the configuration lines."""
    family = robot.family
    if family not in ("flockbot", "smr"):
        raise FlockbridgeError(
            f"a {family or 'robot of this kind'} needs no calibration: its bridge knows its conversions"
            " (a Pioneer's come from its model's parameters)"
        )
    lines: List[str] = []
    units: List[str] = []
    geometry: List[str] = []
    first = robot.sensors
    say(f"Calibrating {family} {robot.model}. The robot will move: give it a clear metre of floor ahead.")

    if family == "flockbot":
        ask("Put the robot on the floor, 1 m clear ahead and around; press Enter to start.", "")
        before_move = _average(robot, lambda s: float(s.odometer["avg"]), 3)
        robot.command("move_distance", speed=20, dist=50)  # 50 cm ahead, then it stops by itself
        robot.wait_event("dmc", timeout=20)  # the move is complete
        _settle(robot)
        counts = _average(robot, lambda s: float(s.odometer["avg"]), 3) - before_move
        if abs(counts) < 10:
            raise FlockbridgeError("the odometers did not count while the robot drove: is it on the floor?")
        measured = _number(ask, "How far did it go, in mm (measure it)?", "500")
        mm_per_count = measured / counts
        units.append(f"odometer_mm_per_count = {mm_per_count:.5g}")
        say(f"odometer: {counts:.0f} counts for {measured:.0f} mm, {mm_per_count:.4g} mm a count")

        before = robot.sensors.odometer
        robot.command("rotate_degrees", speed=20, deg=180)
        robot.wait_event("dmc", timeout=30)
        _settle(robot)
        after = robot.sensors.odometer
        wheels_mm = (abs(after["left"] - before["left"]) + abs(after["right"] - before["right"])) * mm_per_count / 2
        turned = _number(ask, "How many degrees did it turn on the spot?", "180")
        if wheels_mm > 0 and turned > 0:
            # Each wheel goes round a circle of the wheel base: travel = base / 2 * angle.
            base = 2 * wheels_mm / math.radians(turned)
            units.append(f"wheel_base_mm = {base:.4g}")
            say(f"wheel base: {base:.0f} mm")

        def moved(s: Message, since: Message) -> float:
            return (float(s.odometer["avg"]) - float(since.odometer["avg"])) * mm_per_count

    else:
        say("An SMR's odometry comes from its wheel geometry ([smr]); only its IR law is measured.")

        def moved(s: Message, since: Message) -> float:
            # It drives straight on: the distance between the two poses.
            return math.hypot(float(s.pose.x_mm) - float(since.pose.x_mm), float(s.pose.y_mm) - float(since.pose.y_mm))

    sensors = len(first.ir)
    ahead = int(_number(ask, f"Which IR sensor looks ahead (0 to {sensors - 1})?", "2"))
    wall = _number(ask, "Face the robot to a wall. How far is the wall from that sensor, in mm?", "1000")
    start = robot.sensors
    points: List[Tuple[float, float]] = []
    for target in IR_DISTANCES_MM:
        if target >= wall:
            continue
        robot.drive(APPROACH_MM_S)
        robot.wait_for(lambda s: wall - moved(s, start) <= target + 100, timeout=60)
        robot.drive(CREEP_MM_S)
        robot.wait_for(lambda s: wall - moved(s, start) <= target, timeout=60)
        _settle(robot)
        distance = wall - moved(robot.sensors, start)
        reading = _average(robot, lambda s: float(s.ir[ahead]))
        points.append((distance, reading))
        say(f"  {distance:4.0f} mm: reads {reading:.1f}")
    robot.stop()
    k, offset = fit_inverse_law(points)
    ir = [f"ir_range_k = {k:.0f}.0", f"ir_range_offset = {offset:.1f}"]
    say(f"IR: mm = {k:.0f} / (reading - {offset:.1f})")

    if family == "flockbot":
        units.extend(ir)
        raw = robot.sensors.battery
        volts = ask("What does a voltmeter read across the battery, in volts (Enter: skip)?", "").strip()
        if volts:
            units.append(f"battery_volts_per_count = {float(volts) / raw:.5g}")
        angles = ask("Where does each IR sensor look, in degrees from ahead, counter-clockwise (ir0..ir4)?",
                     "90, 45, 0, -45, -90").strip()
        geometry.append(f'ir_deg = "{angles or "90, 45, 0, -45, -90"}"')
        lines += ["[flockbot.units]", *units, "", "[flockbot.geometry]", *geometry]
    else:
        lines += ["[smr]", *ir]
    return lines
