// The robot families the bridge serves: one row each, with the driver that
// speaks to the robot and the family's own settings. The only place that
// names every family; the core dispatches through it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/settings.hpp"

namespace flockbridge::bridge {

struct RobotFamily {
  std::string_view name;            ///< what --robot takes
  std::string_view robots;          ///< the robots it covers, for --help and logs
  std::uint16_t native_port;        ///< where the family's own client programs connect
  int default_baud;                 ///< the robot's serial speed unless told otherwise
  std::string_view default_device;  ///< where the robot's serial port usually is
  std::string_view device_note;  ///< where the device is found, for serial.device's help (the driver's device_hint();
                                 ///< "": nothing to add)
  DriverFactory make_driver;
  FamilyRows (*settings)();  ///< the family's own settings; null: none
  std::string (*models)();   ///< the family's models, for robot.model's help; null: one model
  /// The family's own programs on a replay of its recording; null: they cannot connect to one.
  std::unique_ptr<NativeReplay> (*native_replay)(const Config& config);
};

[[nodiscard]] std::span<const RobotFamily> robot_families() noexcept;

/// The families with a robot (those with their own programs' port: not the
/// hub's "none"), one name a line: what `flockbridge --list-families`
/// prints, the one list the tests, benchmarks and scripts cover.
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
