// The Pioneer's SIPs and commands in their JSON form: what the Pioneer's
// driver gives JSON and WebSocket clients, and how it reads their robot
// commands. The bridge's own messages are the JSON codec's (json_codec.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"

namespace flockbridge::protocol::pioneer {

/// One SIP with what the driver knew when it came.
struct SipSnapshot {
  StandardSip sip;
  Bytes packet;                       ///< the whole packet, as it came
  std::optional<SipReading> reading;  ///< none while the model is not known
  Pose pose;
  RobotState state;  ///< the common robot model's fields
  std::shared_ptr<const json::RobotStateEncoder> model;
};

/// {"type":"sensor","seq":N,"ts":T,"wheels_mm_s":{"left","right"},"sonar_updated":[discs],"moving",
///  "motors","stall":{"left","right"},"bumpers":{"front","rear"},"raw":{...the SIP's values as sent},
///  then the common robot model's fields ("pose", "v_mm_s", "w_deg_s", "battery_v", "ranges",
///  "bumped")} and a line end. wheels_mm_s and sonar_updated only when the robot's model is known;
///  the discs' readings are the model's ranges (sonar0, sonar1, ..), each said once.
[[nodiscard]] std::string sip_json(const SipSnapshot& snapshot, std::uint64_t seq, double unix_seconds);

/// The family's own fields of its sensor message, as JSON Schema properties.
[[nodiscard]] nlohmann::ordered_json sensor_properties();

/// The AROS command packets of a JSON command (drive, stop, emergency,
/// move, turn, heading, wheels, motors, sonar, reset_pose), for `model`
/// (which sets the speed limits and VEL2's unit; nullptr: not known yet).
[[nodiscard]] Result<Bytes> command_packets(std::string_view cmd, const nlohmann::json& object,
                                            const RobotModel* model);

/// The commands command_packets() takes.
[[nodiscard]] std::span<const std::string> json_commands();

}  // namespace flockbridge::protocol::pioneer
