// The Bridge's commands: a client's robot command read (its dead-man time,
// the family's bytes), put to the command gate (command_gate.hpp) and, when
// it passes, handed to the driver; the answers that come back, the
// emergency latch's changes, and the safety stop the bridge sends on its own.
#include "flockbridge/bridge/bridge.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/suggest.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_arguments.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Error;

/// The dead-man times a motion command may carry: from a few of a person's
/// key repeats to a minute.
constexpr std::chrono::milliseconds kShortestDeadman{50};
constexpr std::chrono::milliseconds kLongestDeadman{60000};

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
    auto value =
        protocol::json_arguments::number(cmd, object, "deadman_ms", static_cast<double>(kShortestDeadman.count()),
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
    session.reply_error(id,
                        protocol::json_arguments::argument_error(cmd,
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
  const CommandSender sender{.client = session.id(),
                             .role = session.role(),
                             .kind = session.kind(),
                             .exclusive_control = session.exclusive_control(),
                             .waits_for_approval = pairing_.waiting(session.id()),
                             .within_rate = effect.stops || session.allow_command(now)};
  const GateVerdict verdict = gate_.admit(sender, effect, id, now);
  switch (verdict.kind) {
    case GateVerdict::Kind::RateLimited:
      session.reply_error(id, verdict.refusal);
      return;
    case GateVerdict::Kind::Refused:
      refuse(session, id, verdict.refusal);
      return;
    case GateVerdict::Kind::Ignored:
      return;
    case GateVerdict::Kind::Answered:
      session.reply_ok(id, verdict.confirmed);
      return;
    case GateVerdict::Kind::Rides:
      session.command_started();
      return;
    case GateVerdict::Kind::Send:
      break;
  }
  auto submitted = call ? call(verdict.token) : driver_->submit(verdict.token, payload);
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
  if (verdict.takes_lease) take_lease(session, now);
  if (effect.emergency) latch_emergency(StopSource::Local, {session.id(), session.peer(), {}, unix_seconds_now()});
  const bool arm_deadman = gate_.sent(sender, effect, id, verdict.token, now);
  session.command_started();
  // Each motion command, or a stop, replaces the last one's dead-man time.
  if (effect.stops || effect.motion) uv_timer_stop(deadman_timer_.get());
  if (arm_deadman) {
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
  if (!gate_.deadman_applies()) return;
  safety_stop(describe_client(gate_.deadman_client()) + " sent no motion command within its deadman_ms (" +
              std::to_string(gate_.deadman_after().count()) + " ms) of the last");
}

std::string Bridge::describe_client(std::uint64_t client) const {
  const Session* found = clients_.find(client);
  return "client " + std::to_string(client) + (found == nullptr ? std::string() : " (" + found->peer() + ")");
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
  uv_timer_stop(deadman_timer_.get());
  auto sent = driver_->stop_robot(gate_.own_stop());
  const std::string what = sent ? "; sent Stop" : "; could not send Stop: " + sent.error().message;
  if (!tell) {
    // The end of a drive whose robot was standing: not an accident.
    log_info(reason + what);
    return;
  }
  ++counters_.safety_stops;
  log_warning("safety stop: " + reason + what);
  clients_.broadcast([&](const Session& session) { return session.encode(notice::SafetyStop{reason}); });
  if (recording_.active()) recording_.record(Topic::Emergency, *wire::json_notice(notice::SafetyStop{reason}));
  fleet_.event({{"type", "safety_stop"}, {"reason", reason}});
}

void Bridge::on_command_done(const driver_event::CommandDone& done) {
  for (const OwedAnswer& answer : gate_.done(done.token, done.error.has_value(), done.confirmed)) {
    Session* session = clients_.live(answer.client);
    if (session == nullptr) continue;
    if (done.error) {
      session->reply_error(answer.id, *done.error);
    } else {
      session->reply_ok(answer.id, done.confirmed);
    }
    session->command_finished();
  }
}

void Bridge::latch_emergency(StopSource source, EmergencyLatch::Hold hold) {
  const bool was_free = latch_.latch(source, hold);
  gate_.latched();
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
  clients_.broadcast([&](const Session& session) { return wire::json_only(session.encoding(), message); });
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
