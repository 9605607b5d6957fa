// Each message the bridge sends, in the form of each kind of client: the
// binary messages of port 2005 or one JSON object and a line end for 2006.
// Where a kind has no such message (a binary client gets no "ok"), the
// result is null and nothing is sent.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/protocol/link.hpp"
#include "flockbridge/protocol/stats.hpp"
#include "flockbridge/protocol/uno_packets.hpp"

namespace flockbridge::bridge::wire {

[[nodiscard]] SharedBuffer hello(ClientKind kind, std::string_view session, protocol::LinkState state,
                                 std::string_view reason);
[[nodiscard]] SharedBuffer link(ClientKind kind, protocol::LinkState state, std::string_view reason);
[[nodiscard]] SharedBuffer sensor(ClientKind kind, protocol::ByteView payload, const protocol::SensorReading& reading,
                                  std::uint64_t seq, double unix_seconds);
/// The Uno's packets other than sensors: EMG becomes {"type":"emergency"} in JSON.
[[nodiscard]] SharedBuffer packet(ClientKind kind, const protocol::UnoPacket& packet, protocol::ByteView payload);
[[nodiscard]] SharedBuffer dropped(ClientKind kind, std::uint64_t count);
/// JSON: {"type":"ok"}. Binary: the Uno's ACK when it acknowledged the command, else nothing.
[[nodiscard]] SharedBuffer ok(ClientKind kind, const nlohmann::json& id, bool acknowledged);
[[nodiscard]] SharedBuffer error(ClientKind kind, const nlohmann::json& id, const protocol::Error& error);
/// The bridge stopped the robot on its own. Binary: ERR "safety stop: ...".
[[nodiscard]] SharedBuffer safety_stop(ClientKind kind, std::string_view reason);
/// JSON only.
[[nodiscard]] SharedBuffer stats(ClientKind kind, const nlohmann::json& id, const protocol::StatsSnapshot& snapshot);

}  // namespace flockbridge::bridge::wire
