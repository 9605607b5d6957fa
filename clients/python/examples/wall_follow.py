"""Follow a wall on the robot's left with the IR sensors, for a minute.

Written for the SMR, whose IR sensor 0 looks left and 2 ahead. On a
Flockbot, find which of ir[0..4] look left and ahead with
`python3 -m flockbridge watch ROBOT`, and its readings near a wall.
"""
import sys
import time

import flockbridge

LEFT, AHEAD = 0, 2  # which IR sensors look left and ahead
KEEP = 120  # the left sensor's reading at the distance to keep (nearer reads higher)
SPEED = 150  # mm/s
GAIN = 0.5  # degrees/s of turning per count away from KEEP

robot_name = sys.argv[1] if len(sys.argv) > 1 else "smr-1.local"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60  # along the walls, from the first one on
with flockbridge.connect(robot_name) as robot:
    end = None
    for s in robot.stream(interval_ms=100):  # each reading gets a command: the robot stays ours
        if end is not None and time.monotonic() > end:
            break
        if s.ir[AHEAD] > KEEP:  # a wall ahead, a corner: turn right on the spot
            end = end or time.monotonic() + seconds
            robot.drive(0, -60)
        elif end is None:  # straight on to the first wall
            robot.drive(SPEED)
        else:  # too far from the wall (low reading): turn left, towards it; too near: right
            error = KEEP - s.ir[LEFT]
            robot.drive(SPEED, max(-60.0, min(60.0, GAIN * error)))
