"""Follow a wall on the robot's left with its range sensors, for a minute.

Written once for every robot: it reads only the robot model (the nearest
obstacle each range sensor sees, by the direction it looks), so it runs
unchanged on a Flockbot, a Pioneer or an SMR.
"""
import sys
import time

import flockbridge

KEEP_MM = 300  # the distance to keep from the wall on the left
AHEAD_MM = 350  # a wall this near ahead is a corner
SPEED = 150  # mm/s
GAIN = 0.3  # degrees/s of turning per mm away from KEEP_MM

robot_name = sys.argv[1] if len(sys.argv) > 1 else "smr-1.local"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60  # along the walls, from the first one on
with flockbridge.connect(robot_name) as robot:
    end = None
    for s in robot.stream(interval_ms=100):  # each reading gets a command: the robot stays ours
        if end is not None and time.monotonic() > end:
            break
        ahead = flockbridge.nearest(s, -20, 20)  # the sensors looking ahead
        left = flockbridge.nearest(s, 60, 120)  # and to the left
        if ahead is not None and ahead.mm < AHEAD_MM:  # a wall ahead, a corner: turn right on the spot
            end = end or time.monotonic() + seconds
            robot.drive(0, -60)
        elif end is None:  # straight on to the first wall
            robot.drive(SPEED)
        else:  # too far from the wall (or none seen): turn left, towards it; too near: right
            error = (left.mm if left is not None else 2 * KEEP_MM) - KEEP_MM
            robot.drive(SPEED, max(-60.0, min(60.0, GAIN * error)))
    robot.stop()
