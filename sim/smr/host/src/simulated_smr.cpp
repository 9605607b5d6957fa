// The DTU Small Mobile Robot's bus in the simulator program: `--robot smr`.
#include <array>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "flockbridge/sim/host/pty_robot.hpp"
#include "flockbridge/sim/host/simulated_family.hpp"
#include "flockbridge/sim/smr/smr_model.hpp"

namespace flockbridge::sim::smr {

bool model_wheels_turning(const SmrModel& model) {
  return model.left_speed() != 0 || model.right_speed() != 0;
}

bool run_model_command(SmrModel& model, const std::string& command, std::istringstream& words,
                       const SimRobot::Log& say) {
  if (command == "state") {
    std::ostringstream out;
    out << "state x_m " << model.x_m() << " y_m " << model.y_m() << " th_deg " << model.heading_deg() << " left_speed "
        << model.left_speed() << " right_speed " << model.right_speed() << " left_encoder " << model.left_encoder()
        << " right_encoder " << model.right_encoder();
    say(out.str());
    return true;
  }
  if (command == "module-silent") {
    // module-silent left|right|line|ir|power on|off
    std::string name;
    std::string state;
    words >> name >> state;
    static constexpr std::pair<std::string_view, protocol::Byte> kModules[] = {
        {"left", protocol::smr::module::kLeftMotor},
        {"right", protocol::smr::module::kRightMotor},
        {"line", protocol::smr::module::kLineSensor},
        {"ir", protocol::smr::module::kInfrared},
        {"power", protocol::smr::module::kPower}};
    for (const auto& [module_name, address] : kModules) {
      if (module_name == name) {
        model.set_module_silent(address, state != "off");
        return true;
      }
    }
    say("error no module '" + name + "': left, right, line, ir or power");
    return true;
  }
  if (command == "power-switch") {
    std::string state;
    words >> state;
    model.set_power_switch(state != "off");
    return true;
  }
  return false;
}

using PtySmr = PtyRobot<SmrModel, SmrModelSettings>;

SimulatedFamily simulated_family() {
  return {.name = "smr",
          .plays =
              "  --robot smr:      a DTU Small Mobile Robot's RS485 bus: the motor, line sensor, IR and power\n"
              "                    modules answer their polls; motion in a 4 x 3 m room with a line along x; on\n"
              "                    reboot its encoders and speeds go back to 0",
          .commands =
              "SMR only:\n"
              "  state         print the robot's true pose, the speeds on the bus and the encoders\n"
              "  module-silent left|right|line|ir|power on|off\n"
              "                stop or resume one module's answers\n"
              "  power-switch on|off\n"
              "                the power module's switch (SMRD powered the computer off when it stayed off)",
          .serves_tcp = false,
          .add_options = [](CLI::App& /*app*/, LineOptions& /*line*/) -> RobotMaker {
            return [](uv_loop_t* loop, const SimulatedLine& line, SimRobot::Log log) {
              return std::make_unique<PtySmr>(loop, SmrModelSettings{}, line, std::move(log));
            };
          }};
}

}  // namespace flockbridge::sim::smr
