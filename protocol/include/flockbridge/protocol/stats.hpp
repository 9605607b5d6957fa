// The bridge's counters as one snapshot: what clients get in a "stats"
// message and what the periodic log line summarises. Plain data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"

namespace flockbridge::protocol {

struct ClientSnapshot {
  std::uint64_t id = 0;
  std::string kind;  ///< "binary", "json" or "websocket"
  std::string peer;
  std::uint64_t commands = 0;
  std::uint64_t sensor_dropped = 0;
  std::size_t queued = 0;
  std::uint64_t refused = 0;   ///< its messages that were refused (malformed, out of range, failed)
  std::uint64_t withheld = 0;  ///< messages it was not sent: outside the dialect it speaks
  bool extensions = true;      ///< false: a port-2005 client in the original robot's dialect
};

struct BridgeCounters {
  std::uint64_t commands_received = 0;
  std::array<std::uint64_t, kErrorCodeCount> failed{};  ///< refused or failed commands, by ErrorCode
  std::uint64_t sensor_packets = 0;                     ///< published to clients
  std::uint64_t sensor_messages_sent = 0;               ///< queued for a client
  std::uint64_t sensor_messages_dropped = 0;            ///< replaced before a slow client took them
  std::uint64_t clients_accepted = 0;
  std::uint64_t clients_refused = 0;  ///< over the limit
  std::uint64_t clients_closed_stalled = 0;
  std::uint64_t clients_closed_behind = 0;  ///< too many messages waiting
  std::uint64_t clients_dead = 0;           ///< their network vanished (timeouts, resets)
  std::uint64_t safety_stops = 0;           ///< Stops the bridge sent on its own
  /// Ports where one program drives at a time (Pioneer's 8101): motion
  /// commands not forwarded because another program held control, and other
  /// commands not forwarded because their sender did not hold it.
  std::uint64_t control_refused = 0;
  std::uint64_t control_ignored = 0;
  std::uint64_t control_changes = 0;  ///< times a program took control
};

/// A robot link's own counters, named and in the order a family's driver
/// gives them (the "link" object of a stats message).
using NamedCounters = std::vector<std::pair<std::string, std::uint64_t>>;

struct StatsSnapshot {
  double uptime_s = 0;
  LinkState link_state = LinkState::Down;
  NamedCounters link_counters;
  LinkStats link;  ///< the commands' counters (sent, acknowledged, ...) and the log line's figures
  BridgeCounters bridge;
  std::optional<std::uint64_t> control_holder;  ///< the client that holds control, on such a port
  std::vector<ClientSnapshot> clients;
  /// The fleet's MQTT connection ("connected", "published", "dropped", ...), when it is on.
  std::optional<NamedCounters> mqtt;
  /// Whether the stats message lists the clients (who they are, from where),
  /// or only counts them (for all but the teacher, when one is set).
  bool list_clients = true;
};

}  // namespace flockbridge::protocol
