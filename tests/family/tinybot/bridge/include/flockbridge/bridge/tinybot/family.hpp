// The tinybot, the tests' own robot, as the family describes itself to the
// families table (in test builds that list it: FLOCKBRIDGE_TEST_FAMILY).
#pragma once

#include <string_view>

#include "flockbridge/bridge/robot_family.hpp"

namespace flockbridge::bridge::tinybot {

/// The family's name: --robot tinybot, and its simulated robot.
inline constexpr std::string_view kFamily = "tinybot";

[[nodiscard]] const RobotFamily& robot_family() noexcept;

}  // namespace flockbridge::bridge::tinybot
