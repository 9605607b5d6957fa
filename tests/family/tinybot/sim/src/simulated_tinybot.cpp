// The tinybot in the simulator program: `--robot tinybot` (test builds only).
#include <memory>
#include <sstream>
#include <string>

#include "flockbridge/sim/host/pty_robot.hpp"
#include "flockbridge/sim/host/simulated_family.hpp"
#include "flockbridge/sim/tinybot/tinybot_model.hpp"

namespace flockbridge::sim::tinybot {

bool model_wheels_turning(const TinybotModel& model) {
  return model.speeds().left_mm_s != 0 || model.speeds().right_mm_s != 0;
}

bool run_model_command(TinybotModel& model, const std::string& command, std::istringstream& words,
                       const SimRobot::Log& say) {
  if (command == "state") {
    std::ostringstream out;
    out << "state x_mm " << model.x_mm() << " y_mm " << model.y_mm() << " th_deg " << model.heading_deg()
        << " left_mm_s " << model.speeds().left_mm_s << " right_mm_s " << model.speeds().right_mm_s;
    say(out.str());
    return true;
  }
  if (command == "battery") {
    int millivolts = 0;
    if (!(words >> millivolts) || millivolts < 0) {
      say("error battery takes millivolts");
      return true;
    }
    model.set_battery_mv(millivolts);
    return true;
  }
  return false;
}

using PtyTinybot = PtyRobot<TinybotModel, TinybotModelSettings>;

SimulatedFamily simulated_family() {
  return {.name = "tinybot",
          .plays =
              "  --robot tinybot:  the tests' own robot (tests/family/tinybot): text lines, a reading every\n"
              "                    50 ms once pinged, two wheels, one range sensor and one bumper",
          .commands =
              "tinybot only:\n"
              "  state         print the robot's true pose and its wheels' speeds\n"
              "  battery MV    the battery's millivolts",
          .serves_tcp = false,
          .add_options = [](CLI::App& /*app*/, LineOptions& /*line*/) -> RobotMaker {
            return [](uv_loop_t* loop, const SimulatedLine& line, SimRobot::Log log) {
              return std::make_unique<PtyTinybot>(loop, TinybotModelSettings{}, line, std::move(log));
            };
          }};
}

}  // namespace flockbridge::sim::tinybot
