// The robot families the bridge serves: each family's own description
// (robot_family.hpp), listed by a table CMake makes from the one list of
// families. The core dispatches through it and names no family.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/robot_family.hpp"
#include "flockbridge/bridge/settings.hpp"

namespace flockbridge::bridge {

/// Every family, each as it describes itself, in the one list's order
/// (the first is the default), "none" last. Made by CMake
/// (family_table.cpp.in).
[[nodiscard]] std::span<const RobotFamily* const> robot_families() noexcept;

/// The families with a robot (those with their own programs' port: not the
/// hub's "none"): the one list the tests, benchmarks and scripts cover.
[[nodiscard]] std::vector<std::string_view> robot_family_names();

/// The same, one name a line: what `flockbridge --list-families` prints.
[[nodiscard]] std::string robot_family_list();

/// The driver for a configuration: the family's, or a replay's when
/// replay.file names a recording (the family is then the recording's).
[[nodiscard]] DriverFactory driver_factory(const Config& config) noexcept;

/// The family of that name; nullptr when there is none.
[[nodiscard]] const RobotFamily* find_robot_family(std::string_view name) noexcept;

/// The built-in configuration with a family's defaults (device, baud, client
/// port); an error naming the families for a name that is none of them.
[[nodiscard]] protocol::Result<Config> family_defaults(const std::string& name);

/// Every setting: the core's and each family's, with the families' defaults.
[[nodiscard]] const SettingsTable& settings_table();

}  // namespace flockbridge::bridge
