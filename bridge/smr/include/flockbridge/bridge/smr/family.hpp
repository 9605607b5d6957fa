// DTU's Small Mobile Robot as the family describes itself to the families table
// (bridge/families/, generated from the top-level CMakeLists.txt's list).
#pragma once

#include <string_view>

#include "flockbridge/bridge/robot_family.hpp"

namespace flockbridge::bridge::smr {

/// The family's name: --robot smr, its settings' [smr] table, its simulated robot.
inline constexpr std::string_view kFamily = "smr";

/// The family: its robots, port, device, settings, driver.
[[nodiscard]] const RobotFamily& robot_family() noexcept;

}  // namespace flockbridge::bridge::smr
