"""A first Pioneer (or AmigoBot) program: one metre ahead, a quarter turn left."""
import sys

import flockbridge

robot_name = sys.argv[1] if len(sys.argv) > 1 else "pioneer-3.local"  # your robot's name
with flockbridge.connect(robot_name) as robot:
    print("battery:", robot.sensors.battery_v, "V, at", robot.sensors.pose)
    robot.drive(300)  # 300 mm/s ahead
    robot.wait_for(lambda s: s.pose.x_mm > 1000, timeout=10)  # until 1 m on
    robot.drive(0, 45)  # turn left on the spot, 45 degrees a second
    robot.wait_for(lambda s: s.pose.th_deg > 85, timeout=10)
    robot.stop()
    print("now at", robot.sensors.pose, "closest sonar:", min(s.mm for s in robot.sensors.sonar), "mm")
