"""The tinybot's first program (the tests' own robot): ahead until its
front range sensor sees a wall, then stop."""
import sys

import flockbridge

robot_name = sys.argv[1] if len(sys.argv) > 1 else "localhost"
with flockbridge.connect(robot_name) as robot:
    print("battery:", robot.sensors.battery_mv, "mV")
    robot.drive(200)  # 200 mm/s ahead
    reading = robot.wait_for(lambda s: flockbridge.nearest(s, -20, 20) is not None and flockbridge.nearest(s, -20, 20).mm < 400, timeout=20)
    robot.stop()
    print("a wall ahead at x =", round(reading.pose.x_mm), "mm; odometer:", reading.odometer.left_mm, "mm")
