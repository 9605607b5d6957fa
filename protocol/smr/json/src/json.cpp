#include "flockbridge/protocol/smr/json.hpp"

#include <array>
#include <cmath>
#include <numbers>

#include "flockbridge/protocol/json_arguments.hpp"
#include "flockbridge/protocol/smr/bus.hpp"

namespace flockbridge::protocol::smr {
namespace {

using namespace json_arguments;
using ordered = nlohmann::ordered_json;
using nlohmann::json;

constexpr double kDegPerRad = 180.0 / std::numbers::pi;

std::string line_of(const ordered& message) {
  std::string text = message.dump(-1, ' ', false, ordered::error_handler_t::replace);
  text.push_back('\n');
  return text;
}

ordered motor_status_names(int status) {
  ordered names = ordered::array();
  if ((status & motor_status::kEncoderTooFast) != 0) names.push_back("encoder_too_fast");
  if ((status & motor_status::kBlocked) != 0) names.push_back("blocked");
  if ((status & motor_status::kNoEncoder) != 0) names.push_back("no_encoder");
  return names;
}

/// A wheel as struct smr shows it: the right one mirrored back.
ordered wheel(const MotorState& motor, int speed, bool mirrored) {
  const auto encoder = mirrored ? static_cast<std::uint16_t>(-motor.encoder) : motor.encoder;
  ordered out{{"encoder", encoder}, {"speed", mirrored ? -speed : speed}};
  if (motor.pwm) out["pwm"] = mirrored ? -*motor.pwm : *motor.pwm;
  if (motor.status) out["status"] = motor_status_names(*motor.status);
  return out;
}

Bytes both_speeds(int left, int right) {
  Bytes bytes = encode_speed(module::kLeftSpeed, left);
  const Bytes more = encode_speed(module::kRightSpeed, -right);  // mirrored on the bus
  bytes.insert(bytes.end(), more.begin(), more.end());
  return bytes;
}

/// Wheel speeds in m/s as speed units, or why they are too fast.
Result<Bytes> wheel_speeds(std::string_view cmd, double left_m_s, double right_m_s, const Geometry& geometry) {
  const double left = geometry.speed_units(left_m_s);
  const double right = geometry.speed_units(right_m_s);
  if (std::abs(left) > 127.5 || std::abs(right) > 127.5) {
    return argument_error(cmd, "faster than the motors go: a wheel's most is " +
                                   std::to_string(std::lround(geometry.wheel_speed(127) * 1000)) +
                                   " mm/s (127 speed units with [smr] wheel_diameter_m)");
  }
  return both_speeds(static_cast<int>(std::lround(left)), static_cast<int>(std::lround(right)));
}

}  // namespace

std::string period_json(const PeriodSnapshot& s, std::uint64_t seq, double unix_seconds) {
  const Reading& r = s.period.reading;
  ordered message{{"type", "sensor"},
                  {"seq", seq},
                  {"ts", unix_seconds},
                  {"tick", s.period.start.tick},
                  {"tick_ts_us", s.period.start.ts}};
  ordered wheels;
  if ((r.parts & part::kLeft) != 0) wheels["left"] = wheel(r.left, s.left_speed, false);
  if ((r.parts & part::kRight) != 0) wheels["right"] = wheel(r.right, s.right_speed, true);
  if (!wheels.empty()) message["wheels"] = std::move(wheels);
  if ((r.parts & part::kLine) != 0) message["line"] = r.line;
  if ((r.parts & part::kInfrared) != 0) message["ir"] = r.ir;
  if ((r.parts & part::kPower) != 0) {
    ordered inputs = ordered::array();
    if ((r.digital & power_status::kPowerOn) != 0) inputs.push_back("power_on");
    if ((r.digital & power_status::kExternalPower) != 0) inputs.push_back("external_power");
    if ((r.digital & power_status::kCharging) != 0) inputs.push_back("charging");
    message["power"] = ordered{{"inputs", std::move(inputs)}, {"digital", r.digital}, {"analog", r.analog}};
  }
  static constexpr std::array<std::pair<unsigned, const char*>, 5> kParts{{{part::kLeft, "left_motor"},
                                                                           {part::kRight, "right_motor"},
                                                                           {part::kLine, "line_sensor"},
                                                                           {part::kInfrared, "ir"},
                                                                           {part::kPower, "power"}}};
  ordered missing = ordered::array();
  for (const auto& [part, name] : kParts) {
    if ((s.fresh_parts & part) == 0) missing.push_back(name);
  }
  if (!missing.empty()) message["missing"] = std::move(missing);
  if (!s.model) return line_of(message);
  std::string text = s.model->add_to(message.dump(-1, ' ', false, ordered::error_handler_t::replace), s.state);
  text.push_back('\n');
  return text;
}

std::string power_switch_json(bool on) {
  return line_of(ordered{{"type", "power_switch"}, {"on", on}});
}

std::span<const std::string> json_commands() {
  static const std::array<std::string, 6> names{"drive", "stop", "emergency", "wheels", "speeds", "reset_pose"};
  return names;
}

Result<Bytes> command_messages(std::string_view cmd, const json& object, const Geometry& geometry) {
  if (cmd == "stop" || cmd == "emergency") {
    if (auto checked = only(cmd, object, {}); !checked) return checked.error();
    return both_speeds(0, 0);
  }
  if (cmd == "drive") {
    auto drive = drive_arguments(cmd, object, 10000, 3600);
    if (!drive) return drive.error();
    const double v = drive.value().v_mm_s / 1000;
    const double turn = drive.value().w_deg_s / kDegPerRad * geometry.wheel_base_m / 2;  // each wheel's share, m/s
    return wheel_speeds(cmd, v - turn, v + turn, geometry);
  }
  if (cmd == "wheels") {
    auto wheels = wheel_arguments(cmd, object, 10000);
    if (!wheels) return wheels.error();
    return wheel_speeds(cmd, wheels.value().left_mm_s / 1000, wheels.value().right_mm_s / 1000, geometry);
  }
  if (cmd == "speeds") {
    if (auto checked = only(cmd, object, {"left", "right"}); !checked) return checked.error();
    auto left = number(cmd, object, "left", -127, 127);
    if (!left) return left.error();
    auto right = number(cmd, object, "right", -127, 127);
    if (!right) return right.error();
    return both_speeds(static_cast<int>(std::lround(left.value())), static_cast<int>(std::lround(right.value())));
  }
  std::string known;
  for (const std::string& name : json_commands()) known += (known.empty() ? "" : ", ") + name;
  return Error{"unknown command '" + std::string(cmd) + "'; an SMR takes " + known};
}

nlohmann::ordered_json sensor_properties() {
  // The family's own fields of its sensor message (the recording's schema).
  return nlohmann::ordered_json::parse(R"json({
    "tick": {"type": "integer", "description": "the period's number"},
    "tick_ts_us": {"type": "integer", "description": "the period's start, microseconds on the bridge's clock"},
    "wheels": {"type": "object", "properties": {
      "left": {"type": "object", "properties": {"encoder": {"type": "integer"}, "speed": {"type": "integer"}, "pwm": {"type": "integer"}, "status": {"type": "array", "items": {"type": "string"}}}},
      "right": {"type": "object", "properties": {"encoder": {"type": "integer"}, "speed": {"type": "integer"}, "pwm": {"type": "integer"}, "status": {"type": "array", "items": {"type": "string"}}}}}},
    "line": {"type": "array", "items": {"type": "integer"}, "description": "the eight line sensors, left to right"},
    "ir": {"type": "array", "items": {"type": "integer"}},
    "power": {"type": "object", "properties": {"inputs": {"type": "array", "items": {"type": "string"}},
      "digital": {"type": "integer"}, "analog": {"type": "array", "items": {"type": "integer"}}}}
  })json");
}

}  // namespace flockbridge::protocol::smr
