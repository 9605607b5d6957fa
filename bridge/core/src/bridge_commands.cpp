// The Bridge's command gate: what a client's command must pass before it
// goes to the robot's driver, in order (the rate limit, the client's role,
// the emergency latch, the control lease), the answers that come back, the
// emergency latch's changes, and the safety stop the bridge sends on its own.
#include "flockbridge/bridge/bridge.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "flockbridge/bridge/json_arguments.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/suggest.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Error;

/// The dead-man times a motion command may carry: from a few of a person's
/// key repeats to a minute.
constexpr std::chrono::milliseconds kShortestDeadman{50};
constexpr std::chrono::milliseconds kLongestDeadman{60000};

/// Stops that wait to be answered with the standing stop they add nothing
/// to; more, in a flood, are answered at once.
constexpr std::size_t kMostStopRiders = 256;

}  // namespace

protocol::Error Bridge::with_suggestion(std::string_view cmd, protocol::Error refusal) const {
  const auto& commands = driver_->commands();
  if (std::find(commands.begin(), commands.end(), cmd) != commands.end()) return refusal;  // known, refused
  std::vector<std::string_view> names(protocol::json::kBridgeRequests.begin(), protocol::json::kBridgeRequests.end());
  names.insert(names.end(), commands.begin(), commands.end());
  if (const auto meant = nearest(cmd, names)) refusal.message += "; did you mean '" + *meant + "'?";
  return refusal;
}

void Bridge::session_robot_command(Session& session, std::string_view cmd, const nlohmann::json& object,
                                   const nlohmann::json& id) {
  if (cmd == "reset_pose") {
    // Every family's, and the driver's to carry out: some robots keep the
    // pose themselves (and are told), for others the bridge adds it up.
    if (auto checked = protocol::json::only(cmd, object, {}); !checked) {
      session.reply_error(id, checked.error());
      return;
    }
    submit_command(
        session, {}, MotionEffect{}, id, [this](protocol::CommandToken token) { return driver_->reset_pose(token); },
        &object);
    return;
  }
  // Every family's motion commands may carry a dead-man time; the driver
  // reads the rest.
  std::chrono::milliseconds deadman{0};
  nlohmann::json without_deadman;
  const nlohmann::json* arguments = &object;
  if (const auto found = object.find("deadman_ms"); found != object.end()) {
    auto value = json_arguments::number(cmd, object, "deadman_ms", static_cast<double>(kShortestDeadman.count()),
                                        static_cast<double>(kLongestDeadman.count()));
    if (!value) {
      session.reply_error(id, value.error());
      return;
    }
    deadman = std::chrono::milliseconds{std::lround(value.value())};
    without_deadman = object;
    without_deadman.erase("deadman_ms");
    arguments = &without_deadman;
  }
  auto command = driver_->command_from_json(cmd, *arguments);
  if (!command) {
    session.reply_error(id, with_suggestion(cmd, command.error()));
    return;
  }
  MotionEffect effect = driver_->motion_effect(command.value());
  if (cmd == "emergency") {
    effect.stops = true;  // whatever the family's bytes look like (some are zero speeds)
    effect.emergency = true;
  }
  if (deadman.count() > 0 && (!effect.motion || effect.stops)) {
    session.reply_error(id, json_arguments::argument_error(cmd,
                                                           "deadman_ms goes only with a command that sets the "
                                                           "robot moving (drive, say)"));
    return;
  }
  effect.deadman = deadman;
  submit_command(session, command.value(), effect, id, {}, &object);
}

void Bridge::submit_command(Session& session, protocol::ByteView payload, MotionEffect effect, const nlohmann::json& id,
                            const DriverCall& call, const nlohmann::json* request) {
  ++counters_.commands_received;
  if (recording_.active()) {
    // Who sent what: the JSON command as it came, and the family's bytes it became.
    nlohmann::ordered_json command = client_json(session);
    command["id"] = id;
    if (request != nullptr) command["request"] = *request;
    command["bytes"] = protocol::to_hex(payload);
    recording_.record(Topic::Command, command.dump());
  }
  const SteadyTime now = steady_now();
  // Stop and emergency stop are never held back by the rate limit.
  if (!effect.stops && !session.allow_command(now)) {
    session.reply_error(id,
                        Error{"too many commands: at most " + std::to_string(static_cast<int>(config_.command_rate)) +
                                  " a second (bursts of " + std::to_string(static_cast<int>(config_.command_burst)) +
                                  "); this one was not sent",
                              protocol::ErrorCode::RateLimited});
    return;
  }
  if (!effect.stops && session.role() == Role::Viewer) {
    // Stopping is anyone's; the rest needs the driver PIN, or a port open to drive.
    refuse(
        session, id,
        Error{
            session.kind() == ClientKind::Native
                ? (pairing_.waiting(session.id())
                       ? "not sent: this connection waits to be approved on the robot's dashboard by someone with "
                         "the PIN (access.native_port_mode paired); only stops go"
                       : "not sent: this port is read-only (access.native_port_mode); only stops go")
                : R"(not sent: this connection may watch and stop the robot; to drive it, give the robot's PIN first: {"cmd":"auth","pin":"..."})",
            protocol::ErrorCode::Denied,
            pairing_.waiting(session.id())
                ? "not sent: this connection waits to be approved on the robot's dashboard; only "
                  "stops go"
                : ""});
    return;
  }
  if (effect.motion && latch_.latched()) {
    ++counters_.control_refused;
    const EmergencyLatch::Hold& hold = *latch_.first_hold();
    const std::string who = hold.client == 0 ? hold.by : "client " + std::to_string(hold.client) + ", " + hold.by;
    const bool fleet = latch_.hold(StopSource::Fleet).has_value();
    refuse(session, id,
           Error{"not sent: the robot's emergency stop is latched (by " + who +
                     (hold.reason.empty() ? "" : ": " + hold.reason) + "); " + latch_.who_may_clear(config_.access) +
                     (fleet ? " clears it" : R"( clears it with {"cmd":"clear_emergency"} or on the dashboard)"),
                 protocol::ErrorCode::Latched,
                 fleet ? "not sent: the class's emergency stop is latched; the teacher clears it"
                       : "not sent: the emergency stop is latched; it must be cleared on the dashboard first"});
    return;
  }
  if (effect.stops && !effect.emergency && standing_stop_) {
    // The robot's last motion command is a stop already: this one adds
    // nothing to its queue, and is answered as that one is (at once once
    // the robot has taken it, or with it; a flood answered at once beyond
    // a bound, since the stop it rides on is on its way).
    if (standing_stop_->taken || standing_stop_->riders >= kMostStopRiders) {
      session.reply_ok(id, standing_stop_->confirmed);
    } else {
      ++standing_stop_->riders;
      pending_.emplace(standing_stop_->token, PendingCommand{session.id(), id});
      session.command_started();
    }
    return;
  }
  const LeaseCheck lease = effect.stops ? LeaseCheck::Allowed : check_lease(session, effect, id, now);
  if (lease == LeaseCheck::Refused) return;
  const protocol::CommandToken token = next_token_++;
  auto submitted = call ? call(token) : driver_->submit(token, payload);
  if (!submitted) {
    const protocol::Error& error = submitted.error();
    if (error.code == protocol::ErrorCode::LinkDown) {
      // Said the same way for every family, with why the link is down (a
      // missing robot says which device was tried and what to do).
      const std::string state(protocol::link_state_name(driver_->link_state()));
      session.reply_error(id, Error{"the robot link is " + state +
                                        (driver_->link_reason().empty() ? "" : " (" + driver_->link_reason() + ")") +
                                        "; command not sent",
                                    error.code, "the robot link is " + state + "; command not sent"});
      return;
    }
    session.reply_error(id, error);
    return;
  }
  if (lease == LeaseCheck::Takes) take_lease(session, now);
  if (effect.emergency) latch_emergency(StopSource::Local, {session.id(), session.peer(), {}, unix_seconds_now()});
  pending_.emplace(token, PendingCommand{session.id(), id});
  session.command_started();
  if (effect.stops && !effect.emergency) {
    standing_stop_ = StandingStop{token, false, std::nullopt, 0};
  } else if (effect.motion || effect.emergency) {
    standing_stop_.reset();
  }
  if (effect.stops) {
    moving_ = false;
    motion_owner_.reset();
  } else if (effect.motion) {
    motion_owner_ = session.id();
    moving_ = effect.keeps_moving;
    last_motion_ = now;
  }
  // Each motion command, or a stop, replaces the last one's dead-man time.
  if (effect.stops || effect.motion) uv_timer_stop(deadman_timer_.get());
  if (effect.motion && !effect.stops && effect.deadman.count() > 0) {
    deadman_client_ = session.id();
    deadman_after_ = effect.deadman;
    uv_timer_start(
        deadman_timer_.get(),
        [](uv_timer_t* timer) {
          if (auto* self = owner_of<Bridge>(timer)) self->on_deadman();
        },
        static_cast<std::uint64_t>(effect.deadman.count()), 0);
  }
}

void Bridge::on_deadman() {
  // Only the motion the dead-man time was given for: a stop or another
  // motion command since has disarmed it.
  if (!moving_ || motion_owner_ != deadman_client_) return;
  const auto found = sessions_.find(deadman_client_);
  const std::string who = "client " + std::to_string(deadman_client_) +
                          (found == sessions_.end() ? std::string() : " (" + found->second->peer() + ")");
  safety_stop(who + " sent no motion command within its deadman_ms (" + std::to_string(deadman_after_.count()) +
              " ms) of the last");
}

Bridge::LeaseCheck Bridge::check_lease(Session& session, const MotionEffect& effect, const nlohmann::json& id,
                                       SteadyTime now) {
  switch (lease_.check(session.id(), effect.motion, session.exclusive_control(), now)) {
    case ControlLease::Verdict::Allowed:
      return LeaseCheck::Allowed;
    case ControlLease::Verdict::Takes:
      return LeaseCheck::Takes;
    case ControlLease::Verdict::Ignored:
      ++counters_.control_ignored;
      return LeaseCheck::Refused;
    case ControlLease::Verdict::Busy:
      break;
  }
  ++counters_.control_refused;
  const std::uint64_t holder = lease_.holder()->client;
  const auto found = sessions_.find(holder);
  const std::string who = found == sessions_.end()
                              ? "client " + std::to_string(holder)
                              : "client " + std::to_string(holder) + " (" + found->second->peer() + ")";
  refuse(session, id,
         Error{(effect.motion ? "not sent: " : "not sent: only the driver may do this; ") + who +
                   " drives the robot; it is yours once it releases control, goes away or sends no command for " +
                   std::to_string(config_.access.lease_idle.count()) + " ms",
               protocol::ErrorCode::Busy, "not sent: " + who + " drives the robot"});
  return LeaseCheck::Refused;
}

void Bridge::refuse(Session& session, const nlohmann::json& id, const Error& error) {
  if (session.exclusive_control()) {
    session.count_refused();
    session_answered(session, id, &error, std::nullopt, false);
    log_debug("client " + std::to_string(session.id()) + ": " + error.message);
  } else {
    session.reply_error(id, error);
  }
}

void Bridge::safety_stop(const std::string& reason, bool tell) {
  standing_stop_.reset();
  moving_ = false;
  motion_owner_.reset();
  uv_timer_stop(deadman_timer_.get());
  auto sent = driver_->stop_robot(next_token_++);
  const std::string what = sent ? "; sent Stop" : "; could not send Stop: " + sent.error().message;
  if (!tell) {
    // The end of a drive whose robot was standing: not an accident.
    log_info(reason + what);
    return;
  }
  ++counters_.safety_stops;
  log_warning("safety stop: " + reason + what);
  broadcast([&](const Session& session) { return session.encode(notice::SafetyStop{reason}); });
  if (recording_.active()) recording_.record(Topic::Emergency, *wire::json_notice(notice::SafetyStop{reason}));
  fleet_.event({{"type", "safety_stop"}, {"reason", reason}});
}

void Bridge::on_command_done(const driver_event::CommandDone& done) {
  if (standing_stop_ && standing_stop_->token == done.token) {
    // A stop that did not reach the robot leaves it as it was: the next one goes.
    if (done.error) {
      standing_stop_.reset();
    } else {
      standing_stop_->taken = true;
      standing_stop_->confirmed = done.confirmed;
      standing_stop_->riders = 0;
    }
  }
  // The command, and any stops that rode on it.
  const auto [first, last] = pending_.equal_range(done.token);
  std::vector<PendingCommand> answered;
  for (auto pending = first; pending != last; ++pending) answered.push_back(std::move(pending->second));
  pending_.erase(first, last);
  for (const PendingCommand& command : answered) {
    const auto session = sessions_.find(command.session);
    if (session == sessions_.end() || session->second->closing()) continue;
    if (done.error) {
      session->second->reply_error(command.id, *done.error);
    } else {
      session->second->reply_ok(command.id, done.confirmed);
    }
    session->second->command_finished();
  }
}

void Bridge::latch_emergency(StopSource source, EmergencyLatch::Hold hold) {
  standing_stop_.reset();
  const bool was_free = latch_.latch(source, hold);
  moving_ = false;
  motion_owner_.reset();
  if (was_free || source == StopSource::Fleet) {
    log_warning((hold.client == 0 ? hold.by : "client " + std::to_string(hold.client) + " (" + hold.by + ")") +
                " sent " + (source == StopSource::Fleet ? "the class's emergency stop" : "an emergency stop") +
                (hold.reason.empty() ? "" : " (" + hold.reason + ")") + ": no motion command goes to the robot until " +
                latch_.who_may_clear(config_.access) + " clears it");
  }
  fleet_.event({{"type", "emergency"},
                {"latched", true},
                {"source", stop_source_name(source)},
                {"client", hold.client},
                {"by", hold.by},
                {"reason", hold.reason}});
  latch_changed();
}

void Bridge::latch_changed() {
  const std::string message = latch_.message(config_.access);
  broadcast([&](const Session& session) { return wire::json_only(session.encoding(), message); });
  recording_.record(Topic::Emergency, message);
  fleet_.status_changed();
}

void Bridge::clear_emergency(Session& session, const nlohmann::json& id) {
  auto cleared = latch_.clear(EmergencyLatch::clearer(session.role()), config_.access,
                              {session.id(), session.peer(), {}, unix_seconds_now()});
  if (!cleared) {
    session.reply_error(id, cleared.error());
    return;
  }
  if (cleared.value().any()) {
    log_warning("client " + std::to_string(session.id()) + " (" + session.peer() + ", " +
                std::string(role_name(session.role())) + ") cleared the emergency stop" +
                (cleared.value().fleet ? " (the class's too)" : ""));
    fleet_.event({{"type", "emergency"},
                  {"latched", false},
                  {"source", "local"},
                  {"client", session.id()},
                  {"by", session.peer()},
                  {"reason", ""}});
    latch_changed();
  }
  session.reply_ok(id);
}

}  // namespace flockbridge::bridge
