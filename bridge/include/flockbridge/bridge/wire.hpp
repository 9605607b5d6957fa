// Each message the bridge sends, in each encoding: the binary messages of
// port 2005, or one JSON object and a line end for port 2006 (WebSocket
// clients get the same JSON without the line end, one object per message).
// Where an encoding has no such message (a binary client gets no "ok"), the
// result is null and nothing is sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge::wire {

/// A message of a kind port-2005 programs have no tag for (json_codec's
/// lease, ...), for JSON and WebSocket clients only: nothing for port 2005.
[[nodiscard]] SharedBuffer json_only(Encoding encoding, std::string message);
[[nodiscard]] SharedBuffer link(Encoding encoding, protocol::LinkState state, std::string_view reason);
/// JSON adds the converted values for each factor of `units` that is set; binary carries raw values only.
[[nodiscard]] SharedBuffer sensor(Encoding encoding, protocol::ByteView payload, const protocol::SensorReading& reading,
                                  std::uint64_t seq, double unix_seconds, const protocol::SensorUnits& units);
/// The Uno's packets other than sensors: EMG becomes {"type":"emergency"} in JSON.
[[nodiscard]] SharedBuffer packet(Encoding encoding, const protocol::UnoPacket& packet, protocol::ByteView payload);
[[nodiscard]] SharedBuffer dropped(Encoding encoding, std::uint64_t count);
/// Binary only: `03 'A' 'C' 'K'`, as the Uno's ACK reaches a client.
[[nodiscard]] SharedBuffer ack();
/// Binary only: `04 'E' 'X' 'T' v`, the answer to EXT.
[[nodiscard]] SharedBuffer extensions(std::uint8_t version);
/// JSON: {"type":"ok"}, with "confirmed" for a command that went to the robot.
/// Binary: the Uno's ACK when it confirmed the command, else nothing.
[[nodiscard]] SharedBuffer ok(Encoding encoding, const nlohmann::json& id, std::optional<bool> confirmed);
[[nodiscard]] SharedBuffer error(Encoding encoding, const nlohmann::json& id, const protocol::Error& error);
/// The bridge stopped the robot on its own. Binary: ERR "safety stop: ...".
[[nodiscard]] SharedBuffer safety_stop(Encoding encoding, std::string_view reason);
/// JSON only.
[[nodiscard]] SharedBuffer stats(Encoding encoding, const nlohmann::json& id, const protocol::StatsSnapshot& snapshot);

}  // namespace flockbridge::bridge::wire
