// A DTU Small Mobile Robot's own settings ([smr], [smr.link]): its
// geometry for odometry and JSON drive, the bus's period and loss rules,
// and how many SMR programs its port serves.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/settings.hpp"
#include "flockbridge/bridge/smr/family.hpp"
#include "flockbridge/protocol/robot_model.hpp"

namespace flockbridge::bridge::smr {

struct SmrSettings {
  std::size_t max_clients = 10;  ///< on port 24901, as SMRD's documentation says
  double wheel_diameter_m = 0.065;
  double wheel_base_m = 0.26;
  unsigned positions_per_turn = 2000;
  protocol::InverseRange ir_range;       ///< IR value to mm (k 0: not known)
  std::chrono::milliseconds period{10};  ///< SMRD's period
  unsigned module_loss_periods = 10;     ///< a module silent this many periods in a row is reported
  unsigned bus_loss_periods = 50;        ///< no module for this many periods: the link is stale
};

[[nodiscard]] inline SmrSettings& settings_of(Config& config) {
  return config.families.get<SmrSettings>(kFamily);
}
[[nodiscard]] inline const SmrSettings& settings_of(const Config& config) noexcept {
  return config.families.get<SmrSettings>(kFamily);
}

/// The IR law the common robot model reads this robot with: as configured,
/// and under --simulate the simulated robot's when none is.
[[nodiscard]] protocol::InverseRange model_ir_range(const Config& config);

/// The SMR's rows of the settings table.
[[nodiscard]] FamilyRows settings_rows();

}  // namespace flockbridge::bridge::smr
