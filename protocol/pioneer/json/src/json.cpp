#include "flockbridge/protocol/pioneer/json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/json_arguments.hpp"
#include "flockbridge/protocol/pioneer/commands.hpp"

namespace flockbridge::protocol::pioneer {
namespace {

using protocol::Error;
using ordered = nlohmann::ordered_json;
using nlohmann::json;
using namespace json_arguments;

Bytes packet(Byte number, Argument argument = NoArgument{}) {
  return encode_command(Command{number, std::move(argument)});
}

int rounded(double value) {
  return static_cast<int>(std::lround(value));
}

constexpr double kDefaultMaxVelocity = 2000;  // mm/s, beyond every model of the table
constexpr double kDefaultMaxRotVelocity = 720;

}  // namespace

std::span<const std::string> json_commands() {
  static const std::array<std::string, 10> names{"drive",   "stop",   "emergency", "move",  "turn",
                                                 "heading", "wheels", "motors",    "sonar", "reset_pose"};
  return names;
}

Result<Bytes> command_packets(std::string_view cmd, const json& object, const RobotModel* model) {
  const double max_v = model != nullptr ? model->max_velocity_mm_s : kDefaultMaxVelocity;
  const double max_w = model != nullptr ? model->max_rot_velocity_deg_s : kDefaultMaxRotVelocity;
  Bytes out;
  if (cmd == "stop" || cmd == "emergency") {
    if (auto checked = only(cmd, object, {}); !checked) return checked.error();
    return packet(cmd == "stop" ? command::kStop : command::kEStop);
  }
  if (cmd == "drive") {
    auto drive = drive_arguments(cmd, object, max_v, max_w);
    if (!drive) return drive.error();
    out = packet(command::kVel, rounded(drive.value().v_mm_s));
    const Bytes turn = packet(command::kRVel, rounded(drive.value().w_deg_s));
    out.insert(out.end(), turn.begin(), turn.end());
    return out;
  }
  if (cmd == "move") {
    if (auto checked = only(cmd, object, {"mm"}); !checked) return checked.error();
    auto mm = number(cmd, object, "mm", -kMaxIntArgument, kMaxIntArgument);
    if (!mm) return mm.error();
    return packet(command::kMove, rounded(mm.value()));
  }
  if (cmd == "turn" || cmd == "heading") {
    if (auto checked = only(cmd, object, {"deg"}); !checked) return checked.error();
    auto deg = number(cmd, object, "deg", cmd == "turn" ? -360 : 0, 360);
    if (!deg) return deg.error();
    return packet(cmd == "turn" ? command::kDHead : command::kHead, rounded(deg.value()) % 360);
  }
  if (cmd == "wheels") {
    const double unit = model != nullptr && model->vel2_divisor > 0 ? model->vel2_divisor : 20.0;
    auto wheels = wheel_arguments(cmd, object, std::min(max_v, 127 * unit));
    if (!wheels) return wheels.error();
    // VEL2: the right wheel in the high byte, the left in the low, signed,
    // in units of the model's Vel2Divisor.
    const int l = rounded(wheels.value().left_mm_s / unit);
    const int r = rounded(wheels.value().right_mm_s / unit);
    const int raw = ((r & 0xFF) << 8) | (l & 0xFF);
    // A raw value above 0x7FFF goes as a negative integer of the same bits.
    return packet(command::kVel2, raw > 0x7FFF ? raw - 0x10000 : raw);
  }
  if (cmd == "motors" || cmd == "sonar") {
    if (auto checked = only(cmd, object, {"on"}); !checked) return checked.error();
    auto on = on_off(cmd, object);
    if (!on) return on.error();
    return packet(cmd == "motors" ? command::kEnable : command::kSonar, on.value() ? 1 : 0);
  }
  std::string known;
  for (const std::string& name : json_commands()) known += (known.empty() ? "" : ", ") + name;
  return Error{"unknown command '" + std::string(cmd) + "'; a Pioneer takes " + known};
}

std::string sip_json(const SipSnapshot& s, std::uint64_t seq, double unix_seconds) {
  const StandardSip& sip = s.sip;
  ordered message{{"type", "sensor"}, {"seq", seq}, {"ts", unix_seconds}};
  if (s.reading) {
    const SipReading& r = *s.reading;
    message["wheels_mm_s"] = ordered{{"left", tenths(r.left_velocity_mm_s)}, {"right", tenths(r.right_velocity_mm_s)}};
    // Which discs this packet read: their readings are the model's ranges
    // (sonarN), each given once.
    ordered updated = ordered::array();
    for (const auto& range : r.sonar) updated.push_back(range.sonar);
    message["sonar_updated"] = std::move(updated);
  }
  message["moving"] = sip.moving;
  message["motors"] = sip.motors_enabled();
  message["stall"] = ordered{{"left", sip.left_stalled()}, {"right", sip.right_stalled()}};
  // Bits 1-7 and 9-15 of STALL_AND_BUMPERS: the first and second bumper inputs.
  message["bumpers"] =
      ordered{{"front", (sip.stall_and_bumpers >> 1) & 0x7F}, {"rear", (sip.stall_and_bumpers >> 9) & 0x7F}};
  ordered raw{{"x", sip.x},
              {"y", sip.y},
              {"th", sip.th},
              {"left_vel", sip.left_velocity},
              {"right_vel", sip.right_velocity},
              {"battery", sip.battery_tenths},
              {"stall_bumpers", sip.stall_and_bumpers},
              {"control", sip.control},
              {"flags", sip.flags},
              {"compass", sip.compass}};
  if (sip.battery_x10) raw["battery_x10"] = *sip.battery_x10;
  if (sip.charge_state) raw["charge_state"] = *sip.charge_state;
  if (sip.rotational_velocity_tenths) raw["rotvel"] = *sip.rotational_velocity_tenths;
  if (sip.fault_flags) raw["fault_flags"] = *sip.fault_flags;
  message["raw"] = std::move(raw);
  std::string text = message.dump(-1, ' ', false, ordered::error_handler_t::replace);
  if (s.model) text = s.model->add_to(std::move(text), s.state);
  text.push_back('\n');
  return text;
}

nlohmann::ordered_json sensor_properties() {
  // The family's own fields of its sensor message (the recording's schema).
  return nlohmann::ordered_json::parse(R"json({
    "wheels_mm_s": {"type": "object", "properties": {"left": {"type": "number"}, "right": {"type": "number"}}},
    "sonar_updated": {"type": "array", "description": "the sonar discs this packet read (their readings: ranges.sonarN)", "items": {"type": "integer"}},
    "moving": {"type": "boolean"}, "motors": {"type": "boolean"},
    "stall": {"type": "object", "properties": {"left": {"type": "boolean"}, "right": {"type": "boolean"}}},
    "bumpers": {"type": "object", "properties": {"front": {"type": "integer"}, "rear": {"type": "integer"}}},
    "raw": {"type": "object", "description": "the SIP's fields as the robot sent them"}
  })json");
}

}  // namespace flockbridge::protocol::pioneer
