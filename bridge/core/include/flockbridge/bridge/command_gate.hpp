// The command gate: what a client's command must pass before it goes to the
// robot's driver, in order (the client's rate limit, its role, the emergency
// latch, a stop that adds nothing to a standing one, the control lease), the
// tokens the commands go under and the answers owed for them, and what the
// robot was last told to do (moving or not, and by whom; a motion command's
// dead-man time). It sends nothing and talks to nobody: the Bridge asks it,
// hands the command to the driver, and tells the clients
// (bridge_commands.cpp); tests/bridge/command_gate_test.cpp checks it alone.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/access.hpp"
#include "flockbridge/bridge/client_kind.hpp"
#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/control_lease.hpp"
#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/emergency_latch.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge {

/// Who sent a command, as far as the gate looks at them.
struct CommandSender {
  std::uint64_t client = 0;
  Role role = Role::Viewer;
  ClientKind kind = ClientKind::Json;
  /// A program of the original software on a one-driver port (its refusals
  /// are counted, not told: some send ten commands a second).
  bool exclusive_control = false;
  /// A native connection that waits to be approved (pairing).
  bool waits_for_approval = false;
  /// Whether its own rate limit lets one more command through now.
  bool within_rate = true;
};

/// What the gate decided about one command.
struct GateVerdict {
  enum class Kind : std::uint8_t {
    RateLimited,  ///< not sent, over the client's rate: `refusal`, told to the client
    Refused,      ///< not sent: `refusal` (counted only for an exclusive_control sender)
    Ignored,      ///< not sent, and not told: a one-driver port's program while another drives
    Answered,     ///< a stop that adds nothing to the standing one: answer it now with `confirmed`
    Rides,        ///< a stop that is answered with the standing one, when the robot has taken it
    Send,         ///< goes to the robot under `token`; `takes_lease` once it has gone
  };
  Kind kind = Kind::Send;
  protocol::Error refusal{};
  std::optional<bool> confirmed;
  protocol::CommandToken token = 0;
  bool takes_lease = false;
};

/// A command's answer that is owed: to whom, with the id it came with.
struct OwedAnswer {
  std::uint64_t client = 0;
  nlohmann::json id;
};

class CommandGate {
 public:
  /// How a client is named in a refusal ("client 4 (10.0.0.7:51234)").
  using Describe = std::function<std::string(std::uint64_t client)>;

  /// `config`, `lease` and `latch` are the Bridge's, read at each command;
  /// `counters` counts the refusals.
  CommandGate(const Config& config, ControlLease& lease, const EmergencyLatch& latch,
              protocol::BridgeCounters& counters, Describe describe);

  /// Checks a command of `sender` whose `effect` on the robot's motion is
  /// given. A stop that rides on the standing one is owed its answer (`id`)
  /// from now on; a command to send has its token, and is owed nothing
  /// until sent() says it went.
  [[nodiscard]] GateVerdict admit(const CommandSender& sender, const MotionEffect& effect, const nlohmann::json& id,
                                  protocol::SteadyTime now);
  /// A command admitted with GateVerdict::Kind::Send has gone to the robot:
  /// its answer is owed, and the robot's motion is what it says. Returns
  /// whether a dead-man time is to be armed (effect.deadman, for a motion
  /// command); any earlier one is void after a stop or a motion command.
  bool sent(const CommandSender& sender, const MotionEffect& effect, const nlohmann::json& id,
            protocol::CommandToken token, protocol::SteadyTime now);
  /// The robot has taken, or failed to take, the command sent under
  /// `token`: the answers owed for it (and for the stops that rode on it).
  [[nodiscard]] std::vector<OwedAnswer> done(protocol::CommandToken token, bool failed, std::optional<bool> confirmed);

  /// A token for a command the bridge sends of its own accord (the fleet's
  /// emergency stop). No answer is owed for it.
  [[nodiscard]] protocol::CommandToken own_token() noexcept { return next_token_++; }
  /// The bridge sends a stop of its own accord (a safety stop): the robot
  /// stands, nobody drives it; returns the stop's token.
  [[nodiscard]] protocol::CommandToken own_stop();
  /// The emergency stop latched: the robot stands.
  void latched();
  /// The robot's link changed: a robot that was away may not be standing,
  /// and one that restarts (`restarted`: handshaking or down) is not moving.
  void link_changed(bool restarted);
  /// The robot said it stopped on its own (a bumper, its watchdog).
  void robot_stopped() noexcept { moving_ = false; }
  /// The bridge stops: no answer is owed any more.
  void clear();

  /// Whether the robot was last told to keep moving.
  [[nodiscard]] bool moving() const noexcept { return moving_; }
  /// The client whose motion command set the robot moving, until a stop.
  [[nodiscard]] const std::optional<std::uint64_t>& motion_owner() const noexcept { return motion_owner_; }
  [[nodiscard]] protocol::SteadyTime last_motion() const noexcept { return last_motion_; }
  /// The dead-man time that was armed last: whose, and how long.
  [[nodiscard]] std::uint64_t deadman_client() const noexcept { return deadman_client_; }
  [[nodiscard]] std::chrono::milliseconds deadman_after() const noexcept { return deadman_after_; }
  /// Whether the dead-man time that ran out still stands for the robot's
  /// motion (no stop or other client's motion command since).
  [[nodiscard]] bool deadman_applies() const noexcept { return moving_ && motion_owner_ == deadman_client_; }
  /// Answers owed, for the tests.
  [[nodiscard]] std::size_t owed() const noexcept { return owed_.size(); }

 private:
  /// The last stop handed to the robot, while no motion command has gone
  /// after it: another stop then adds nothing to the robot's queue (a flood
  /// of stops from someone who may not drive keeps no driver's command out)
  /// and is answered as that one is. Motion, an emergency stop, a stop the
  /// bridge sends of its own accord and any change of the link end it.
  struct StandingStop {
    protocol::CommandToken token = 0;
    bool taken = false;             ///< the robot has taken it
    std::optional<bool> confirmed;  ///< then: whether the robot confirmed it (if its family does)
    std::size_t riders = 0;         ///< stops waiting for it to be taken
  };

  [[nodiscard]] protocol::Error role_refusal(const CommandSender& sender) const;
  [[nodiscard]] protocol::Error latch_refusal() const;
  [[nodiscard]] GateVerdict lease_verdict(const CommandSender& sender, const MotionEffect& effect,
                                          protocol::SteadyTime now);
  void stands();

  const Config& config_;
  ControlLease& lease_;
  const EmergencyLatch& latch_;
  protocol::BridgeCounters& counters_;
  Describe describe_;
  protocol::CommandToken next_token_ = 1;
  /// Commands on their way to the robot, answered when it has taken them
  /// (a stop that rode on a standing stop waits under that stop's token).
  std::multimap<protocol::CommandToken, OwedAnswer> owed_;
  std::optional<StandingStop> standing_stop_;
  bool moving_ = false;
  std::optional<std::uint64_t> motion_owner_;
  protocol::SteadyTime last_motion_{};
  std::uint64_t deadman_client_ = 0;
  std::chrono::milliseconds deadman_after_{0};
};

}  // namespace flockbridge::bridge
