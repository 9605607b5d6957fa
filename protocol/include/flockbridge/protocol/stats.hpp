// The bridge's counters as one snapshot: what clients get in a "stats"
// message and what the periodic log line summarises. Plain data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/robot_link.hpp"

namespace flockbridge::protocol {

struct ClientSnapshot {
  std::uint64_t id = 0;
  std::string kind;  ///< "binary", "json", "websocket" or "foxglove"
  std::string peer;
  std::uint64_t commands = 0;
  std::uint64_t sensor_dropped = 0;
  std::size_t queued = 0;
  std::uint64_t refused = 0;   ///< its messages that were refused (malformed, out of range, failed)
  std::uint64_t withheld = 0;  ///< messages it was not sent: outside the dialect it speaks
  bool extensions = true;      ///< false: a client of the family's port in its original dialect
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
  std::uint64_t drivers_lost = 0;           ///< of them: the driving client's network vanished (driver watch)
  /// Ports where one program drives at a time (an original client's): motion
  /// commands not forwarded because another program held control, and other
  /// commands not forwarded because their sender did not hold it.
  std::uint64_t control_refused = 0;
  std::uint64_t control_ignored = 0;
  std::uint64_t control_changes = 0;  ///< times a program took control
};

/// A robot link's own counters, named and in the order a family's driver
/// gives them (the "link" object of a stats message).
using NamedCounters = std::vector<std::pair<std::string, std::uint64_t>>;

/// What every robot link counts of the commands it carries (the "commands"
/// object of a stats message).
struct CommandCounters {
  std::uint64_t sent = 0;
  std::uint64_t acknowledged = 0;  ///< ended early by the robot's acknowledgement
  std::uint64_t delivered = 0;     ///< finished without an error: confirmed + unconfirmed
  std::uint64_t confirmed = 0;     ///< the robot acknowledged them
  std::uint64_t unconfirmed = 0;   ///< went out, and no complaint came
  std::uint64_t failed = 0;
};

/// The commands' counters of a robot that acknowledges no command: what
/// went out is delivered and unconfirmed.
[[nodiscard]] constexpr CommandCounters unacknowledged_commands(std::uint64_t sent, std::uint64_t failed) noexcept {
  return {.sent = sent, .acknowledged = 0, .delivered = sent, .confirmed = 0, .unconfirmed = sent, .failed = failed};
}

/// The value of the counter called `name`; 0 when the link has none of that name.
[[nodiscard]] inline std::uint64_t counter(const NamedCounters& counters, std::string_view name) noexcept {
  for (const auto& [key, value] : counters) {
    if (key == name) return value;
  }
  return 0;
}

/// How the kernel schedules the bridge's loop.
struct SchedulingSnapshot {
  bool real_time = false;  ///< in a real-time class
  std::string summary;     ///< "real-time (SCHED_FIFO, priority 20)", "ordinary (SCHED_OTHER, nice 0)"
  bool asked = false;      ///< the bridge asked for the real-time class (scheduling.real_time)
  std::string refused;     ///< why the kernel refused it ("" when it did not)
  /// How often a real-time loop paused to give its core to ordinary threads
  /// after keeping it busy for long.
  std::uint64_t pauses = 0;
};

struct StatsSnapshot {
  double uptime_s = 0;
  SchedulingSnapshot scheduling;
  LinkState link_state = LinkState::Down;
  NamedCounters link_counters;
  /// The link's figures for the periodic log line, in the family's words
  /// ("frames in 10 out 4, bad checksum 0, ...").
  std::string link_summary;
  CommandCounters commands;
  BridgeCounters bridge;
  std::optional<std::uint64_t> control_holder;  ///< the client that holds control, on such a port
  std::vector<ClientSnapshot> clients;
  /// The fleet's MQTT connection ("connected", "published", "dropped", ...), when it is on.
  std::optional<NamedCounters> mqtt;
  /// The run's recording: whether it records, its counters ("files",
  /// "messages", "bytes", "dropped", "write_errors", "removed"), and its
  /// file and last error ("" for none).
  bool recording_active = false;
  NamedCounters recording;
  std::string recording_file;
  std::string recording_error;
  /// Whether the stats message lists the clients (who they are, from where),
  /// or only counts them (for all but the teacher, when one is set).
  bool list_clients = true;
};

}  // namespace flockbridge::protocol
