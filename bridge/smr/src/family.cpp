#include "flockbridge/bridge/smr/family.hpp"

#include "flockbridge/bridge/smr/driver.hpp"
#include "flockbridge/bridge/smr/settings.hpp"
#include "flockbridge/protocol/smr/probe.hpp"

namespace flockbridge::bridge::smr {

const RobotFamily& robot_family() noexcept {
  static const RobotFamily family{
      .name = kFamily,
      .robots = "DTU Small Mobile Robot (SMRD's RS485 bus, on a serial adapter)",
      .native_port = 24901,
      .default_baud = 115200,
      .default_device = "/dev/ttyS0",
      .device_note = "an SMR's RS485 bus adapter is /dev/ttyS0, or /dev/ttyUSB0 on USB",
      .make_driver = &make_driver<SmrDriver>,
      .settings = &settings_rows,
      .native_replay = &native_replay,
      .make_probe = &make_probe<protocol::smr::SmrProbe>,
  };
  return family;
}

}  // namespace flockbridge::bridge::smr
