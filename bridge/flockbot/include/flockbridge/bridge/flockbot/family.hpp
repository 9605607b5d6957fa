// The Flockbot as the family describes itself to the families table
// (bridge/families/, generated from the top-level CMakeLists.txt's list).
#pragma once

#include <string_view>

#include "flockbridge/bridge/robot_family.hpp"

namespace flockbridge::bridge::flockbot {

/// The family's name: --robot flockbot, its settings' [flockbot] table, its simulated robot.
inline constexpr std::string_view kFamily = "flockbot";

/// The family: its robots, port, device, settings, driver.
[[nodiscard]] const RobotFamily& robot_family() noexcept;

}  // namespace flockbridge::bridge::flockbot
