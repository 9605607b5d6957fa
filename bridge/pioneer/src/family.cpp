#include "flockbridge/bridge/pioneer/family.hpp"

#include "flockbridge/bridge/pioneer/driver.hpp"
#include "flockbridge/protocol/pioneer/probe.hpp"

namespace flockbridge::bridge::pioneer {

const RobotFamily& robot_family() noexcept {
  static const RobotFamily family{
      .name = kFamily,
      .robots = "Pioneer 2/3 and AmigoBot (AROS, on the robot's HOST serial port)",
      .native_port = 8101,
      .default_baud = 9600,
      .default_device = "/dev/ttyUSB0",
      .device_note =
          "a Pioneer's HOST serial port is usually on a USB serial adapter, /dev/ttyUSB0, or reached over the network "
          "at tcp:HOST:PORT",
      .make_driver = &make_driver<PioneerDriver>,
      .models = &model_names,
      .make_probe = &make_probe<protocol::pioneer::PioneerProbe>,
  };
  return family;
}

}  // namespace flockbridge::bridge::pioneer
