// The SMR's messages for clients: SMRD's stream for port 24901 (START,
// END, echoes, the bus's messages, as SMRD sends them), each period as a
// JSON sensor message, and the power switch's request; and its JSON
// commands as bus messages.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/smr/link.hpp"
#include "flockbridge/protocol/smr/odometry.hpp"

namespace flockbridge::bridge::smr {

/// Bytes of SMRD's stream for the clients of port 24901; none in JSON.
class StreamMessage final : public RobotMessage {
 public:
  explicit StreamMessage(protocol::ByteView bytes) : bytes_(make_buffer(std::string(bytes.begin(), bytes.end()))) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return false; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t, double) const override {
    return encoding == Encoding::Native ? bytes_ : nullptr;
  }
  [[nodiscard]] std::string_view bytes() const noexcept { return *bytes_; }

 private:
  SharedBuffer bytes_;
};

/// One period with what the driver knew when it ended.
struct PeriodSnapshot {
  protocol::smr::Period period;
  protocol::smr::Pose pose;
  std::int8_t left_speed = 0;   ///< last sent, as on the bus
  std::int8_t right_speed = 0;  ///< last sent, as on the bus (mirrored)
  protocol::RobotState state;   ///< the common robot model's fields
  std::shared_ptr<const protocol::json::RobotStateEncoder> model;
  /// What the period itself brought (period.reading.parts also counts the
  /// parts held from a module's last answer: protocol::smr::ReadingHold).
  unsigned fresh_parts = 0;
};

/// {"type":"sensor","seq","ts","tick","tick_ts_us","pose":{"x_mm","y_mm","th_deg"},"v_mm_s","w_deg_s",
///  "battery_v","wheels":{"left","right":{"encoder","speed","pwm","status":[...]}},"line":[8],"ir":[6],
///  "power":{"inputs":[...],"analog":[5]},"missing":[...]} and a line end. The wheels as struct smr
/// shows them (the right one not mirrored); what the period brought, or held
/// from a module's last answer; "missing" names the modules that did not answer in it.
[[nodiscard]] SharedBuffer period_json(const PeriodSnapshot& snapshot, std::uint64_t seq, double unix_seconds);

/// A period as a JSON sensor message; nothing on port 24901 (SMRD's
/// clients read the stream).
class PeriodMessage final : public RobotMessage {
 public:
  explicit PeriodMessage(PeriodSnapshot snapshot) : snapshot_(std::move(snapshot)) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return true; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const override {
    return encoding == Encoding::Json ? period_json(snapshot_, seq, unix_seconds) : nullptr;
  }
  [[nodiscard]] const PeriodSnapshot& snapshot() const noexcept { return snapshot_; }

 private:
  PeriodSnapshot snapshot_;
};

/// {"type":"power_switch","on":B}: the power module's switch turned off
/// (held, as SMRD counts before it powers off) or on again.
class PowerSwitchMessage final : public RobotMessage {
 public:
  explicit PowerSwitchMessage(bool on) : on_(on) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return false; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t, double) const override;

 private:
  bool on_;
};

/// The bus messages of a JSON command: stop, emergency (both motors to 0),
/// drive {v_mm_s, w_deg_s}, wheels {left_mm_s, right_mm_s} (converted with
/// `geometry`), speeds {left, right} (struct smr's speed units, -127..127,
/// forward positive on both wheels).
[[nodiscard]] protocol::Result<protocol::Bytes> command_messages(std::string_view cmd, const nlohmann::json& object,
                                                                 const protocol::smr::Geometry& geometry);

/// The commands command_messages() takes.
[[nodiscard]] std::span<const std::string> json_commands();

/// The speed commands in whole client messages, in order (other messages skipped).
[[nodiscard]] std::vector<protocol::smr::SpeedCommand> speed_commands(protocol::ByteView messages);

/// The family's own fields of its sensor message, as JSON Schema properties.
[[nodiscard]] nlohmann::ordered_json sensor_properties();

}  // namespace flockbridge::bridge::smr
