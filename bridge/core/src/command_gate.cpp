#include "flockbridge/bridge/command_gate.hpp"

#include <utility>

namespace flockbridge::bridge {
namespace {

using protocol::Error;

/// Stops that wait to be answered with the standing stop they add nothing
/// to; more, in a flood, are answered at once.
constexpr std::size_t kMostStopRiders = 256;

GateVerdict verdict(GateVerdict::Kind kind) {
  GateVerdict made;
  made.kind = kind;
  return made;
}

GateVerdict refused(GateVerdict::Kind kind, Error refusal) {
  GateVerdict made = verdict(kind);
  made.refusal = std::move(refusal);
  return made;
}

GateVerdict to_send(protocol::CommandToken token, bool takes_lease = false) {
  GateVerdict made = verdict(GateVerdict::Kind::Send);
  made.token = token;
  made.takes_lease = takes_lease;
  return made;
}

}  // namespace

CommandGate::CommandGate(const Config& config, ControlLease& lease, const EmergencyLatch& latch,
                         protocol::BridgeCounters& counters, Describe describe)
    : config_(config), lease_(lease), latch_(latch), counters_(counters), describe_(std::move(describe)) {}

GateVerdict CommandGate::admit(const CommandSender& sender, const MotionEffect& effect, const nlohmann::json& id,
                               protocol::SteadyTime now) {
  // Stop and emergency stop are never held back by the rate limit.
  if (!effect.stops && !sender.within_rate) {
    return refused(GateVerdict::Kind::RateLimited,
                   Error{"too many commands: at most " + std::to_string(static_cast<int>(config_.command_rate)) +
                             " a second (bursts of " + std::to_string(static_cast<int>(config_.command_burst)) +
                             "); this one was not sent",
                         protocol::ErrorCode::RateLimited});
  }
  // Stopping is anyone's; the rest needs the driver PIN, or a port open to drive.
  if (!effect.stops && sender.role == Role::Viewer) {
    return refused(GateVerdict::Kind::Refused, role_refusal(sender));
  }
  if (effect.motion && latch_.latched()) {
    ++counters_.control_refused;
    return refused(GateVerdict::Kind::Refused, latch_refusal());
  }
  if (effect.stops && !effect.emergency && standing_stop_) {
    // The robot's last motion command is a stop already: this one adds
    // nothing to its queue, and is answered as that one is (at once once
    // the robot has taken it, or with it; a flood answered at once beyond
    // a bound, since the stop it rides on is on its way).
    if (standing_stop_->taken || standing_stop_->riders >= kMostStopRiders) {
      GateVerdict answered = verdict(GateVerdict::Kind::Answered);
      answered.confirmed = standing_stop_->confirmed;
      return answered;
    }
    ++standing_stop_->riders;
    owed_.emplace(standing_stop_->token, OwedAnswer{sender.client, id});
    return verdict(GateVerdict::Kind::Rides);
  }
  if (effect.stops) return to_send(next_token_++);
  return lease_verdict(sender, effect, now);
}

Error CommandGate::role_refusal(const CommandSender& sender) const {
  if (sender.kind == ClientKind::Native) {
    if (sender.waits_for_approval) {
      return Error{
          "not sent: this connection waits to be approved on the robot's dashboard by someone with the PIN "
          "(access.native_port_mode paired); only stops go",
          protocol::ErrorCode::Denied,
          "not sent: this connection waits to be approved on the robot's dashboard; only stops go"};
    }
    return Error{"not sent: this port is read-only (access.native_port_mode); only stops go",
                 protocol::ErrorCode::Denied};
  }
  return Error{
      R"(not sent: this connection may watch and stop the robot; to drive it, give the robot's PIN first: {"cmd":"auth","pin":"..."})",
      protocol::ErrorCode::Denied};
}

Error CommandGate::latch_refusal() const {
  const EmergencyLatch::Hold& hold = *latch_.first_hold();
  const std::string who = hold.client == 0 ? hold.by : "client " + std::to_string(hold.client) + ", " + hold.by;
  const bool fleet = latch_.hold(StopSource::Fleet).has_value();
  return Error{"not sent: the robot's emergency stop is latched (by " + who +
                   (hold.reason.empty() ? "" : ": " + hold.reason) + "); " + latch_.who_may_clear(config_.access) +
                   (fleet ? " clears it" : R"( clears it with {"cmd":"clear_emergency"} or on the dashboard)"),
               protocol::ErrorCode::Latched,
               fleet ? "not sent: the class's emergency stop is latched; the teacher clears it"
                     : "not sent: the emergency stop is latched; it must be cleared on the dashboard first"};
}

GateVerdict CommandGate::lease_verdict(const CommandSender& sender, const MotionEffect& effect,
                                       protocol::SteadyTime now) {
  switch (lease_.check(sender.client, effect.motion, sender.exclusive_control, now)) {
    case ControlLease::Verdict::Allowed:
      return to_send(next_token_++);
    case ControlLease::Verdict::Takes:
      return to_send(next_token_++, true);
    case ControlLease::Verdict::Ignored:
      ++counters_.control_ignored;
      return verdict(GateVerdict::Kind::Ignored);
    case ControlLease::Verdict::Busy:
      break;
  }
  ++counters_.control_refused;
  const std::string who = describe_(lease_.holder()->client);
  return refused(GateVerdict::Kind::Refused,
                 Error{(effect.motion ? "not sent: " : "not sent: only the driver may do this; ") + who +
                           " drives the robot; it is yours once it releases control, goes away or sends no "
                           "command for " +
                           std::to_string(config_.access.lease_idle.count()) + " ms",
                       protocol::ErrorCode::Busy, "not sent: " + who + " drives the robot"});
}

bool CommandGate::sent(const CommandSender& sender, const MotionEffect& effect, const nlohmann::json& id,
                       protocol::CommandToken token, protocol::SteadyTime now) {
  owed_.emplace(token, OwedAnswer{sender.client, id});
  if (effect.stops && !effect.emergency) {
    standing_stop_ = StandingStop{token, false, std::nullopt, 0};
  } else if (effect.motion || effect.emergency) {
    standing_stop_.reset();
  }
  if (effect.stops) {
    moving_ = false;
    motion_owner_.reset();
  } else if (effect.motion) {
    motion_owner_ = sender.client;
    moving_ = effect.keeps_moving;
    last_motion_ = now;
  }
  if (effect.motion && !effect.stops && effect.deadman.count() > 0) {
    deadman_client_ = sender.client;
    deadman_after_ = effect.deadman;
    return true;
  }
  return false;
}

std::vector<OwedAnswer> CommandGate::done(protocol::CommandToken token, bool failed, std::optional<bool> confirmed) {
  if (standing_stop_ && standing_stop_->token == token) {
    // A stop that did not reach the robot leaves it as it was: the next one goes.
    if (failed) {
      standing_stop_.reset();
    } else {
      standing_stop_->taken = true;
      standing_stop_->confirmed = confirmed;
      standing_stop_->riders = 0;
    }
  }
  // The command, and any stops that rode on it.
  const auto [first, last] = owed_.equal_range(token);
  std::vector<OwedAnswer> answers;
  for (auto owed = first; owed != last; ++owed) answers.push_back(std::move(owed->second));
  owed_.erase(first, last);
  return answers;
}

void CommandGate::stands() {
  standing_stop_.reset();
  moving_ = false;
  motion_owner_.reset();
}

protocol::CommandToken CommandGate::own_stop() {
  stands();
  return next_token_++;
}

void CommandGate::latched() {
  stands();
}

void CommandGate::link_changed(bool restarted) {
  standing_stop_.reset();
  if (restarted) moving_ = false;
}

void CommandGate::clear() {
  owed_.clear();
}

}  // namespace flockbridge::bridge
