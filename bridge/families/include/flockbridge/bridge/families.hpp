// The robot families the bridge serves: one row each, with the driver that
// speaks to the robot. The only place that names every family.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "flockbridge/bridge/bridge.hpp"

namespace flockbridge::bridge {

struct RobotFamily {
  std::string_view name;      ///< what --robot takes
  std::string_view robots;    ///< the robots it covers, for --help and logs
  std::uint16_t native_port;  ///< where the family's own client programs connect
  int default_baud;           ///< the robot's serial speed unless told otherwise
  DriverFactory make_driver;
};

[[nodiscard]] std::span<const RobotFamily> robot_families() noexcept;

/// The family of that name; nullptr when there is none.
[[nodiscard]] const RobotFamily* find_robot_family(std::string_view name) noexcept;

}  // namespace flockbridge::bridge
