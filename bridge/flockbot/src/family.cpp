#include "flockbridge/bridge/flockbot/family.hpp"

#include "flockbridge/bridge/flockbot/driver.hpp"
#include "flockbridge/bridge/flockbot/settings.hpp"
#include "flockbridge/protocol/flockbot/probe.hpp"

namespace flockbridge::bridge::flockbot {

const RobotFamily& robot_family() noexcept {
  static const RobotFamily family{
      .name = kFamily,
      .robots = "Flockbot (an Arduino Uno on USB serial)",
      .native_port = 2005,
      .default_baud = 115200,
      .default_device = "/dev/flockbot",
      .device_note = "a Flockbot's Uno is /dev/flockbot once the package's udev rule is installed, else /dev/ttyACM0",
      .make_driver = &make_driver<FlockbotDriver>,
      .settings = &settings_rows,
      .native_replay = &native_replay,
      .make_probe = &make_probe<protocol::flockbot::FlockbotProbe>,
  };
  return family;
}

}  // namespace flockbridge::bridge::flockbot
