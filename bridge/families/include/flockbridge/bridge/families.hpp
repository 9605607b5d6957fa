// The robot families the bridge serves: one row each, with the driver that
// speaks to the robot. The only place that names every family.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "flockbridge/bridge/bridge.hpp"

namespace flockbridge::bridge {

struct RobotFamily {
  std::string_view name;            ///< what --robot takes
  std::string_view robots;          ///< the robots it covers, for --help and logs
  std::uint16_t native_port;        ///< where the family's own client programs connect
  int default_baud;                 ///< the robot's serial speed unless told otherwise
  std::string_view default_device;  ///< where the robot's serial port usually is
  DriverFactory make_driver;
};

[[nodiscard]] std::span<const RobotFamily> robot_families() noexcept;

/// The family of that name; nullptr when there is none.
[[nodiscard]] const RobotFamily* find_robot_family(std::string_view name) noexcept;

/// The built-in configuration with a family's defaults (device, baud, client
/// port); an error naming the families for a name that is none of them.
[[nodiscard]] protocol::Result<Config> family_defaults(const std::string& name);

}  // namespace flockbridge::bridge
