// Pioneer 2/3 and AmigoBot robots as the family describes itself to the families table
// (bridge/families/, generated from the top-level CMakeLists.txt's list).
#pragma once

#include <string_view>

#include "flockbridge/bridge/robot_family.hpp"

namespace flockbridge::bridge::pioneer {

/// The family's name: --robot pioneer, its settings' [pioneer] table, its simulated robot.
inline constexpr std::string_view kFamily = "pioneer";

/// The family: its robots, port, device, settings, driver.
[[nodiscard]] const RobotFamily& robot_family() noexcept;

}  // namespace flockbridge::bridge::pioneer
