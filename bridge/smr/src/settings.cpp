#include "flockbridge/bridge/smr/settings.hpp"

#include <vector>

#include "flockbridge/bridge/setting_rows.hpp"
#include "flockbridge/protocol/smr/robot_model.hpp"

namespace flockbridge::bridge::smr {

using namespace rows;

protocol::InverseRange model_ir_range(const Config& config) {
  const protocol::InverseRange& configured = settings_of(config).ir_range;
  return config.simulate && !configured.known() ? protocol::smr::kSimulatedIrRange : configured;
}

FamilyRows settings_rows() {
  FamilyRows family;
  std::vector<Setting>& s = family.rows;
  s.push_back(whole(
      {"smr", "max_clients", "--smr-max-clients",
       "SMR client programs served at once on port 24901 (SMRD's ten); one more is accepted and closed at once.",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).max_clients; }, 1, 1000));
  s.push_back(real(
      {"smr", "wheel_diameter_m", "--smr-wheel-diameter-m",
       "The wheels' diameter, for odometry and JSON drive (an assumption: measure your robot).", kLive},
      [](auto& c) -> auto& { return settings_of(c).wheel_diameter_m; }, 0.001, 10));
  s.push_back(real(
      {"smr", "wheel_base_m", "--smr-wheel-base-m",
       "The distance between the wheels, for odometry and JSON drive (an assumption: measure your robot).", kLive},
      [](auto& c) -> auto& { return settings_of(c).wheel_base_m; }, 0.01, 10));
  s.push_back(whole(
      {"smr", "positions_per_turn", "--smr-positions-per-turn", "Encoder positions per wheel turn.", kLive},
      [](auto& c) -> auto& { return settings_of(c).positions_per_turn; }, 1, 1'000'000));
  s.push_back(real(
      {"smr", "ir_range_k", "--smr-ir-range-k",
       "The IR sensors' distance law, mm = ir_range_k / (value - ir_range_offset), for the ranges of sensor "
       "messages (0: not known, ranges are null; `python3 -m flockbridge calibrate` measures it).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).ir_range.k; }, 0, 1e9));
  s.push_back(real(
      {"smr", "ir_range_offset", "--smr-ir-range-offset",
       "The IR value that means \"nothing in range\", in the law above.", kLive},
      [](auto& c) -> auto& { return settings_of(c).ir_range.offset; }, -255, 255));
  s.push_back(real(
      {"smr", "ir_max_mm", "--smr-ir-max-mm", "The farthest IR distance reported; beyond it a range is null.", kLive},
      [](auto& c) -> auto& { return settings_of(c).ir_range.max_mm; }, 1, 10000));
  s.push_back(duration(
      {"smr.link", "period_ms", "--smr-period-ms", "The bus's period: every module is polled once a period.", kLive},
      [](auto& c) -> auto& { return settings_of(c).period; }, 1, 1000));
  s.push_back(whole(
      {"smr.link", "module_loss_periods", "--smr-module-loss-periods",
       "A module that misses this many periods in a row is reported as not answering.", kLive},
      [](auto& c) -> auto& { return settings_of(c).module_loss_periods; }, 1, 100'000));
  s.push_back(whole(
      {"smr.link", "bus_loss_periods", "--smr-bus-loss-periods",
       "When no module has answered for this many periods the link is stale.", kLive},
      [](auto& c) -> auto& { return settings_of(c).bus_loss_periods; }, 1, 100'000));
  return family;
}

}  // namespace flockbridge::bridge::smr
