// The SMR's periods and commands in their JSON form: what the SMR's driver
// gives JSON and WebSocket clients, and how it reads their robot commands.
// The bridge's own messages are the JSON codec's (json_codec.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/smr/link.hpp"
#include "flockbridge/protocol/smr/odometry.hpp"

namespace flockbridge::protocol::smr {

/// One period with what the driver knew when it ended.
struct PeriodSnapshot {
  Period period;
  Pose pose;
  std::int8_t left_speed = 0;   ///< last sent, as on the bus
  std::int8_t right_speed = 0;  ///< last sent, as on the bus (mirrored)
  RobotState state;             ///< the common robot model's fields
  std::shared_ptr<const json::RobotStateEncoder> model;
  /// What the period itself brought (period.reading.parts also counts the
  /// parts held from a module's last answer: ReadingHold).
  unsigned fresh_parts = 0;
};

/// {"type":"sensor","seq","ts","tick","tick_ts_us","pose":{"x_mm","y_mm","th_deg"},"v_mm_s","w_deg_s",
///  "battery_v","wheels":{"left","right":{"encoder","speed","pwm","status":[...]}},"line":[8],"ir":[6],
///  "power":{"inputs":[...],"analog":[5]},"missing":[...]} and a line end. The wheels as struct smr
/// shows them (the right one not mirrored); what the period brought, or held
/// from a module's last answer; "missing" names the modules that did not answer in it.
[[nodiscard]] std::string period_json(const PeriodSnapshot& snapshot, std::uint64_t seq, double unix_seconds);

/// {"type":"power_switch","on":B} and a line end: the power module's switch
/// turned off (held, as SMRD counts before it powers off) or on again.
[[nodiscard]] std::string power_switch_json(bool on);

/// The family's own fields of its sensor message, as JSON Schema properties.
[[nodiscard]] nlohmann::ordered_json sensor_properties();

/// The bus messages of a JSON command: stop, emergency (both motors to 0),
/// drive {v_mm_s, w_deg_s}, wheels {left_mm_s, right_mm_s} (converted with
/// `geometry`), speeds {left, right} (struct smr's speed units, -127..127,
/// forward positive on both wheels).
[[nodiscard]] Result<Bytes> command_messages(std::string_view cmd, const nlohmann::json& object,
                                             const Geometry& geometry);

/// The commands command_messages() takes.
[[nodiscard]] std::span<const std::string> json_commands();

}  // namespace flockbridge::protocol::smr
