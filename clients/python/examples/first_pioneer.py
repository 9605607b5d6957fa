"""A first Pioneer (or AmigoBot) program: one metre ahead, a quarter turn left."""
import math
import sys

import flockbridge

robot_name = sys.argv[1] if len(sys.argv) > 1 else "pioneer-3.local"  # your robot's name
with flockbridge.connect(robot_name) as robot:
    # Where it is now (where it started, or where the last program left it), once the robot says.
    start = robot.wait_for(lambda s: s.pose is not None, timeout=10).pose
    print("battery:", robot.sensors.battery_v, "V, at", start)
    robot.drive(300)  # 300 mm/s ahead
    robot.wait_for(lambda s: math.hypot(s.pose.x_mm - start.x_mm, s.pose.y_mm - start.y_mm) > 1000, timeout=10)
    robot.drive(0, 45)  # turn left on the spot, 45 degrees a second
    robot.wait_for(lambda s: 85 < (s.pose.th_deg - start.th_deg) % 360 < 180, timeout=10)  # a quarter turn on
    robot.stop()
    closest = robot.nearest()  # the sonar disc that sees the nearest obstacle, all round
    print("now at", robot.sensors.pose, "closest echo:", closest and f"{closest.mm} mm, {closest.deg} degrees")
