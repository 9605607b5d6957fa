// What a client asks of the bridge, whichever port and dialect it came
// through: each family's codec of its own port and the JSON codec turn a
// client's message into one of these, and the core acts on it.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol {

/// A command for the robot, in its family's form, already checked by the
/// codec that read it (the driver still decides what it does to motion).
struct SendCommand {
  Bytes payload;
};
/// Send sensor messages at most once every `interval_ms` (0: every packet).
struct Subscribe {
  std::uint32_t interval_ms = 0;
};
struct Unsubscribe {};
/// The bridge's counters (JSON clients only).
struct StatsRequest {};
/// A client gives up control of the robot (JSON `release`).
struct ReleaseControl {};
/// A client asks for control of the robot (JSON `take`): the teacher takes
/// it at once, a driver asks the client that has it to hand over.
struct TakeControl {};
/// A client clears the latched emergency stop (JSON `clear_emergency`).
struct ClearEmergency {};
/// A client with the PIN lets a connection on the family's own port drive
/// (JSON `approve`, in native_port_mode paired).
struct ApproveClient {
  std::uint64_t client = 0;
};
/// The teacher changes a live setting (JSON `set`): `value` as the command
/// line would give it ("true", "5000", "paired").
struct ChangeSetting {
  std::string key;
  std::string value;
};
/// A client gives a secret for a role (JSON `auth`).
struct Authenticate {
  bool teacher = false;  ///< the teacher's secret; else the driver PIN
  std::string secret;
};
/// A client of the class hub follows the fleet (JSON `fleet`): `fleet`
/// messages, now and whenever a robot changes.
struct FollowFleet {};
/// The teacher, on the class hub, stops and latches every robot of the
/// fleet, or the one named (JSON `fleet_emergency`), or clears the fleet's
/// stop on them (JSON `fleet_clear`).
struct FleetEmergency {
  std::string robot;  ///< empty: every robot
  bool clear = false;
};
/// What a client asks of the bridge, whichever port it came through.
/// The teacher or a driver starts or stops recording the run (JSON
/// `record_start`, `record_stop`).
struct StartRecording {};
struct StopRecording {};

using ClientRequest = std::variant<SendCommand, Subscribe, Unsubscribe, StatsRequest, ReleaseControl, TakeControl,
                                   ClearEmergency, ApproveClient, ChangeSetting, Authenticate, FollowFleet,
                                   FleetEmergency, StartRecording, StopRecording>;

}  // namespace flockbridge::protocol
