"""A first Flockbot program: hello on the display, 30 cm ahead, turn round, back."""
import sys

import flockbridge

robot_name = sys.argv[1] if len(sys.argv) > 1 else "flockbot-07.local"  # your robot's name
with flockbridge.connect(robot_name) as robot:
    print("battery:", robot.sensors.battery, "IR:", robot.sensors.ir)
    robot.lcd_write(text="Hello, class!")
    robot.move_distance(speed=20, dist=30)  # 30 cm ahead at 20 cm/s
    robot.wait_event("dmc", timeout=10)  # the robot says: move completed
    robot.rotate_degrees(speed=30, deg=180)  # turn round (positive: to the left)
    robot.wait_event("dmc", timeout=10)
    robot.move_distance(speed=20, dist=30)
    robot.wait_event("dmc", timeout=10)
    print("back; odometer:", robot.sensors.odometer.avg)
