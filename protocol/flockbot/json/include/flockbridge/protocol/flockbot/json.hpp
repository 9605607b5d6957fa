// The Flockbot's sensor packets and commands in their JSON form: what the
// Flockbot's driver gives JSON and WebSocket clients, and how it reads their
// robot commands (a row of the command table by name, or "raw" bytes that
// pass it). The bridge's own messages are the JSON codec's (json_codec.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/client_request.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"

namespace flockbridge::protocol::flockbot {

/// {"type":"sensor","seq":N,"ts":T,"battery":..,"ir":[..],"l_bump":..,"h_bump":..,
///  "odometer":{"left":..,"right":..,"avg":..},"wheel_watcher":{"left":..,"right":..}}, followed by the
/// converted values for each factor of `units` that is set: "ir_v":[..],
/// "odometer_mm":{"left","right","avg"}, "wheel_watcher_mm":{"left","right"}. (Battery volts are
/// the common robot model's battery_v, which the driver adds.)
[[nodiscard]] std::string sensor_json(const SensorReading& reading, std::uint64_t seq, double unix_seconds,
                                      const SensorUnits& units = {});

/// {"type":"packet","tag":"DMC","payload":[68,77,67]}: a payload of the Uno's
/// that is no sensor packet, as it came.
[[nodiscard]] std::string packet_json(ByteView payload);

/// A command from its JSON form: a row of the command table by name with its
/// arguments, or "raw" with a payload that passes the table.
[[nodiscard]] Result<SendCommand> parse_json_command(std::string_view cmd, const nlohmann::json& object);

/// "drive" {v_mm_s, w_deg_s (0 when left out)}: the robot's speed and turn
/// rate as the "wheels" command's two wheel speeds (-100..100, in steps of
/// `units.wheel_mm_s_per_percent`, turning about `units.wheel_base_mm`).
/// Its arguments are read as every family reads them (json_arguments.hpp);
/// refused when the wheel speed is not configured, or a wheel would go
/// faster than 100.
[[nodiscard]] Result<Bytes> drive_command(const nlohmann::json& object, const SensorUnits& units);

struct ParsedRequest {
  nlohmann::json id;  ///< the command's "id", null when it had none (or was unreadable)
  Result<ClientRequest> request;
};

/// A line from a JSON client of a Flockbot's bridge, read all the way: the
/// line, the bridge's own requests, then the Flockbot's commands. Never throws.
[[nodiscard]] ParsedRequest parse_json_request(std::string_view line);

}  // namespace flockbridge::protocol::flockbot
