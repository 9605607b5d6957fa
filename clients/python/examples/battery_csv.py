"""Log the robot's battery to a CSV file once a second, until Ctrl-C."""
import csv
import sys
import time

import flockbridge

robot_name = sys.argv[1] if len(sys.argv) > 1 else "localhost"
path = sys.argv[2] if len(sys.argv) > 2 else "battery.csv"
with flockbridge.connect(robot_name) as robot, open(path, "w", newline="") as file:
    # Volts (battery_v); a Flockbot whose bridge does not know volts per count has only counts (battery).
    field = "battery_v" if robot.sensors.get("battery_v") is not None else "battery"
    table = csv.writer(file)
    table.writerow(["time", field, "link"])
    try:
        for s in robot.stream(interval_ms=1000):
            table.writerow([time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.ts)), s[field], robot.link])
            file.flush()
    except KeyboardInterrupt:
        print("saved", path)
