// The simulator program's commands that only one family's robot knows.
#include <array>
#include <sstream>

#include "flockbridge/sim/host/pty_robot.hpp"

namespace flockbridge::sim {

std::array<double, 4> room_of(const aros::PioneerModelSettings& settings) {
  return {-settings.room_width_mm / 2, -settings.room_depth_mm / 2, settings.room_width_mm / 2,
          settings.room_depth_mm / 2};
}

std::array<double, 4> room_of(const smr::SmrModelSettings& settings) {
  return {-settings.room_width_m * 500, -settings.room_depth_m * 500, settings.room_width_m * 500,
          settings.room_depth_m * 500};
}

bool run_model_command(aros::PioneerModel& model, const std::string& command, std::istringstream& /*words*/,
                       const SimRobot::Log& say) {
  if (command != "state") return false;
  std::ostringstream out;
  out << "state x_mm " << model.x_mm() << " y_mm " << model.y_mm() << " th_deg " << model.heading_deg() << " v_mm_s "
      << model.velocity_mm_s() << " w_deg_s " << model.rot_velocity_deg_s() << " motors "
      << (model.motors_enabled() ? "on" : "off") << " watchdog_stops " << model.watchdog_stops();
  say(out.str());
  return true;
}

bool run_model_command(smr::SmrModel& model, const std::string& command, std::istringstream& words,
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

}  // namespace flockbridge::sim
