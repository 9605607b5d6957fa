// The Flockbot's own settings ([flockbot], [flockbot.units],
// [flockbot.link], simulator.rate_hz): what CFG carries, the link's timing,
// the units its JSON messages are converted with, and how fast its simulated
// Uno sends. Before the bridge served other families they were [robot],
// [link] and [units]; files may still use those names.
#pragma once

#include <string>
#include <string_view>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/flockbot/family.hpp"
#include "flockbridge/bridge/settings.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"
#include "flockbridge/protocol/flockbot/robot_model.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"

namespace flockbridge::bridge::flockbot {

struct FlockbotSettings {
  protocol::flockbot::LinkSettings link;
  protocol::flockbot::RobotConfig robot;
  /// The IPv4 address whose last two octets CFG carries (robot.ip3, robot.ip4,
  /// set with it); empty: the Pi's first non-loopback IPv4 address at start.
  std::string robot_ip;
  /// Raw sensor counts to volts and millimetres, published beside the raw values.
  protocol::flockbot::SensorUnits units;
  /// The robot's size and its IR sensors' mounting and distance law ([flockbot.geometry]
  /// and the IR rows of [flockbot.units]), for the common robot model.
  protocol::flockbot::FlockbotBody body;
  std::string ir_deg_text;    ///< flockbot.geometry.ir_deg as written: "90, 45, 0, -45, -90", or ""
  double sim_rate_hz = 33.0;  ///< a simulated Uno's sensor packets per second
};

[[nodiscard]] inline FlockbotSettings& settings_of(Config& config) {
  return config.families.get<FlockbotSettings>(kFamily);
}
[[nodiscard]] inline const FlockbotSettings& settings_of(const Config& config) noexcept {
  return config.families.get<FlockbotSettings>(kFamily);
}

/// The link's settings with the line's speed, which the link needs for its timing.
[[nodiscard]] protocol::flockbot::LinkSettings link_settings(const Config& config);

/// The units and body the common robot model reads this robot with: as
/// configured, and under --simulate the simulated Uno's where the
/// configuration leaves a value unknown.
[[nodiscard]] protocol::flockbot::SensorUnits model_units(const Config& config);
[[nodiscard]] protocol::flockbot::FlockbotBody model_body(const Config& config);

/// The Flockbot's rows of the settings table, and its settings' old names.
[[nodiscard]] FamilyRows settings_rows();

}  // namespace flockbridge::bridge::flockbot
