"""Drive a square: four sides of 30 cm, four left turns. Any robot family."""
import math
import sys

import flockbridge

SIDE_MM = 300

robot_name = sys.argv[1] if len(sys.argv) > 1 else "localhost"
with flockbridge.connect(robot_name) as robot:
    for corner in range(4):
        if robot.family == "flockbot":  # its own bounded moves; the Uno says when each is done
            robot.move_distance(speed=20, dist=SIDE_MM // 10)
            robot.wait_event("dmc", timeout=15)
            robot.rotate_degrees(speed=20, deg=90)
            robot.wait_event("dmc", timeout=15)
            continue
        start = robot.sensors.pose  # robots that report where they are: Pioneer, SMR
        robot.drive(200)
        robot.wait_for(lambda s: math.hypot(s.pose.x_mm - start.x_mm, s.pose.y_mm - start.y_mm) >= SIDE_MM, 15)
        robot.drive(0, 45)
        robot.wait_for(lambda s: 88 <= (s.pose.th_deg - start.th_deg) % 360 < 180, 15)
        print("corner", corner + 1, "at", robot.sensors.pose)
    robot.stop()
