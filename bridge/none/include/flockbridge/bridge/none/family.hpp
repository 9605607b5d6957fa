// "none", a bridge with no robot (the class hub), as it describes itself to
// the families table: listed after the robot families, never the default.
#pragma once

#include <string_view>

#include "flockbridge/bridge/robot_family.hpp"

namespace flockbridge::bridge::none {

/// --robot none: no robot, no port of a family's own programs.
inline constexpr std::string_view kFamily = "none";

[[nodiscard]] const RobotFamily& robot_family() noexcept;

}  // namespace flockbridge::bridge::none
