"""A first SMR program: ahead until the IR sensors see a wall, then stop."""
import sys

import flockbridge

robot_name = sys.argv[1] if len(sys.argv) > 1 else "smr-1.local"  # your robot's name
with flockbridge.connect(robot_name) as robot:
    print("battery:", robot.sensors.battery_v, "V, IR:", robot.sensors.ir)
    robot.drive(200)  # 200 mm/s ahead
    reading = robot.wait_for(lambda s: s.ir[2] > 150, timeout=20)  # IR 2 looks ahead: nearer reads higher
    robot.stop()
    print("a wall ahead at x =", round(reading.pose.x_mm), "mm; IR:", reading.ir)
