// The Pioneer or AmigoBot in the simulator program: `--robot pioneer`.
#include <array>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/sim/pioneer/pioneer_model.hpp"
#include "flockbridge/sim/host/pty_robot.hpp"
#include "flockbridge/sim/host/simulated_family.hpp"

namespace flockbridge::sim::pioneer {

bool model_wheels_turning(const PioneerModel& model) {
  return model.velocity_mm_s() != 0 || model.rot_velocity_deg_s() != 0;
}

bool run_model_command(PioneerModel& model, const std::string& command, std::istringstream& words,
                       const SimRobot::Log& say) {
  if (command == "bumpers") {
    unsigned front = 0;
    unsigned rear = 0;
    words >> front >> rear;
    model.set_bumpers(front, rear);
    say("bumpers front " + std::to_string(front) + " rear " + std::to_string(rear));
    return true;
  }
  if (command != "state") return false;
  std::ostringstream out;
  out << "state x_mm " << model.x_mm() << " y_mm " << model.y_mm() << " th_deg " << model.heading_deg() << " v_mm_s "
      << model.velocity_mm_s() << " w_deg_s " << model.rot_velocity_deg_s() << " motors "
      << (model.motors_enabled() ? "on" : "off") << " watchdog_stops " << model.watchdog_stops();
  say(out.str());
  return true;
}

/// A robot left open by an earlier client goes on sending SIPs.
using PtyPioneer = PtyRobot<PioneerModel, PioneerModelSettings>;

SimulatedFamily simulated_family() {
  return {
      .name = "pioneer",
      .plays =
          "  --robot pioneer:  a Pioneer or AmigoBot (--model): the SYNC handshake, OPEN, CONFIG, SIPs every\n"
          "                    100 ms, motion in the shared 4 x 3 m room (with a box) that its sonar sees\n"
          "                    and its bumpers touch, and its 2 s watchdog; on reboot it forgets its client\n"
          "                    and waits for SYNC0",
      .commands =
          "Pioneer only:\n"
          "  state         print the robot's true pose, speeds, motors and watchdog stops\n"
          "  bumpers F R   press the bumpers whose bits are set in F (front ring) and R (rear ring)",
      .serves_tcp = true,
      .add_options = [](CLI::App& app, LineOptions& /*line*/) -> RobotMaker {
        auto settings = std::make_shared<PioneerModelSettings>();
        std::vector<std::string> models;
        for (const auto& row : protocol::pioneer::robot_models()) models.emplace_back(row.subclass);
        app.add_option("--model", settings->model, "Pioneer: the model, as SYNC2 names it")
            ->capture_default_str()
            ->check(CLI::IsMember(models));
        app.add_option("--name", settings->name, "Pioneer: the robot's name, as SYNC2 gives it")->capture_default_str();
        return [settings](uv_loop_t* loop, const SimulatedLine& line, SimRobot::Log log) {
          return std::make_unique<PtyPioneer>(loop, *settings, line, std::move(log));
        };
      }};
}

}  // namespace flockbridge::sim::pioneer
