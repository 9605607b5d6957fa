#include "flockbridge/bridge/tinybot/family.hpp"

#include "flockbridge/bridge/tinybot/driver.hpp"
#include "flockbridge/protocol/tinybot/probe.hpp"

namespace flockbridge::bridge::tinybot {

const RobotFamily& robot_family() noexcept {
  static const RobotFamily family{
      .name = kFamily,
      .robots = "the tests' own robot (tests/family/tinybot: text lines on a serial line)",
      .native_port = 0,
      .default_baud = 115200,
      .default_device = "/dev/ttyACM0",
      .device_note = "a tinybot is simulated only: run it with --simulate",
      .make_driver = &make_driver<TinybotDriver>,
      .make_probe = &make_probe<protocol::tinybot::TinybotProbe>,
  };
  return family;
}

}  // namespace flockbridge::bridge::tinybot
