// Who drives: the control lease's changes (take, hand over, end, and what
// every client is told of them), sign-in with the PIN or the teacher's
// secret, pairing a native connection, and the teacher's live settings.
#include "flockbridge/bridge/bridge.hpp"

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Error;

}  // namespace

void Bridge::take_lease(const Session& session, SteadyTime now) {
  lease_.take(session.id(), unix_seconds_now(), now);
  ++counters_.control_changes;
  session.log_event(LogLevel::Info, log_cause::kControl,
                    "client " + std::to_string(session.id()) + " (" + session.peer() + ") drives the robot");
  broadcast_lease();
}

void Bridge::end_lease(const Session& session, const std::string& why, bool at_once, bool normal_end) {
  if (!lease_.end(session.id())) return;
  const std::string reason =
      "client " + std::to_string(session.id()) + " (" + session.peer() + "), which drove the robot, " + why;
  session.log_event(LogLevel::Info, log_cause::kControl, reason);
  broadcast_lease(reason);
  // Stopped whether or not the bridge thinks it moves: what it cannot see
  // (a raw command, a move whose DMC was lost) must not keep it driving.
  // Told as a safety stop, unless a driver that had stopped its robot
  // released it or left: that is how a drive ends.
  const bool tell = !normal_end || gate_.moving();
  if (at_once) {
    safety_stop(reason, tell);
  } else {
    owed_stop_ = OwedStop{reason, tell};  // once the session is gone (sweep_closed)
  }
}

std::string Bridge::lease_message(std::string_view reason) const {
  std::optional<protocol::json::LeaseHolder> holder;
  if (const auto& lease = lease_.holder()) {
    if (const Session* found = clients_.find(lease->client)) {
      const Session& s = *found;
      holder = protocol::json::LeaseHolder{s.id(), s.peer(), client_kind_name(s.kind()), lease->since};
    }
  }
  return protocol::json::lease(holder, reason);
}

void Bridge::broadcast_lease(std::string_view reason) {
  const std::string message = lease_message(reason);
  clients_.broadcast([&](const Session& session) { return wire::json_only(session.encoding(), message); });
  recording_.record(Topic::Lease, message);
  fleet_.event({{"type", "lease"}, {"holder", lease_holder_json()}, {"reason", reason}});
  fleet_.status_changed();
}

nlohmann::ordered_json Bridge::lease_holder_json() const {
  const auto& lease = lease_.holder();
  if (!lease) return nullptr;
  const Session* found = clients_.find(lease->client);
  if (found == nullptr) return nullptr;
  const Session& s = *found;
  return {{"client", s.id()}, {"peer", s.peer()}, {"kind", client_kind_name(s.kind())}, {"since", lease->since}};
}

void Bridge::session_released(Session& session) {
  end_lease(session, "gave up control (CLOSE)", true, true);
}

void Bridge::take_control(Session& session, const nlohmann::json& id) {
  if (lease_.held_by(session.id())) {
    session.reply_ok(id);
    return;
  }
  if (session.role() == Role::Viewer) {
    session.reply_error(
        id, Error{R"(only a driver may take control: give the robot's PIN first: {"cmd":"auth","pin":"..."})",
                  protocol::ErrorCode::Denied});
    return;
  }
  const SteadyTime now = steady_now();
  if (!lease_.holder()) {
    take_lease(session, now);
    session.reply_ok(id);
    return;
  }
  Session* holder = clients_.find(lease_.holder()->client);
  if (session.role() == Role::Teacher) {
    if (holder != nullptr) {
      end_lease(*holder, "was taken over by the teacher, client " + std::to_string(session.id()), true);
    }
    take_lease(session, now);
    session.reply_ok(id);
    return;
  }
  // A driver asks; the driver hands over with release, or does not.
  if (holder != nullptr && holder->encoding() == Encoding::Json) {
    holder->send(wire::json_only(Encoding::Json, protocol::json::lease_request(session.id(), session.peer())));
    session.reply_ok(id);
    return;
  }
  session.reply_error(id, Error{"client " + std::to_string(lease_.holder()->client) +
                                    " drives the robot and cannot be asked to hand over (a program of the original "
                                    "software); it is yours once it goes away or sends no command for " +
                                    std::to_string(config_.access.lease_idle.count()) + " ms",
                                protocol::ErrorCode::Busy});
}

void Bridge::authenticate(Session& session, const protocol::Authenticate& auth, const nlohmann::json& id) {
  const SteadyTime now = steady_now();
  const std::string address = session.address();
  const char* what = auth.teacher ? "teacher's secret" : "driver PIN";
  const std::string& expected = auth.teacher ? config_.access.teacher_secret : config_.access.driver_pin;
  if (expected.empty()) {
    session.reply_error(id, Error{std::string("no ") + what + " is set on this robot" +
                                      (auth.teacher ? "" : ": anyone may drive it, without auth"),
                                  protocol::ErrorCode::Denied});
    return;
  }
  // The teacher's long secret is guarded apart: guessing the PIN, from
  // however many addresses, never keeps the teacher out.
  LoginGuard& guard = auth.teacher && expected.size() >= kLongSecret ? teacher_logins_ : pin_logins_;
  if (const auto wait = guard.wait(address, now)) {
    const std::string seconds = std::to_string((wait->left.count() + 999) / 1000) + " s";
    session.reply_error(id,
                        Error{wait->everyone ? "too many wrong PINs on this robot, from everyone together: no " +
                                                   std::string(what) + " is taken for " + seconds +
                                                   (auth.teacher ? "" : " (the teacher's secret is, if one is set)")
                                             : "too many wrong secrets from " + address + ": try again in " + seconds,
                              protocol::ErrorCode::Denied});
    return;
  }
  if (!same_secret(auth.secret, expected)) {
    const auto delay = guard.failed(address, now);
    const std::string wait = delay.count() == 0
                                 ? std::string("try again")
                                 : "the next try is taken in " + std::to_string((delay.count() + 999) / 1000) + " s";
    session.log_event(
        LogLevel::Warning, log_cause::kWrongSecrets,
        "client " + std::to_string(session.id()) + " (" + session.peer() + ") gave a wrong " + what +
            (delay.count() == 0 ? std::string() : "; its address waits " + std::to_string(delay.count()) + " ms"));
    session.reply_error(id, Error{std::string("wrong ") + what + "; " + wait, protocol::ErrorCode::Denied});
    return;
  }
  guard.succeeded(address);
  const Role role = auth.teacher ? Role::Teacher : std::max(session.role(), Role::Driver);
  session.set_role(role);
  if (role == Role::Teacher && session.knocking()) {
    // In from the teacher's room: what it was not told while it waited.
    session.let_in();
    if (lease_.holder()) session.send(wire::json_only(session.encoding(), lease_message({})));
    if (latch_.latched()) session.send(wire::json_only(session.encoding(), latch_.message(config_.access)));
  }
  session.log_event(
      LogLevel::Info, log_cause::kControl,
      "client " + std::to_string(session.id()) + " (" + session.peer() + ") is now " + std::string(role_name(role)));
  session.send(wire::json_only(session.encoding(), protocol::json::authorised(id, role_name(role))));
}

void Bridge::approve_client(Session& session, std::uint64_t client, const nlohmann::json& id) {
  Session* found = clients_.live(client);
  const bool leaving = found == nullptr;
  if (auto approved = pairing_.approve(session.role(), client, leaving); !approved) {
    session.reply_error(id, approved.error());
    return;
  }
  Session& approved = *found;
  approved.set_role(Role::Driver);
  log_info("client " + std::to_string(client) + " (" + approved.peer() + ") was approved by client " +
           std::to_string(session.id()) + " (" + session.peer() + "): it may drive until it disconnects");
  broadcast_pairing();
  session.reply_ok(id);
}

std::string Bridge::pairing_message() const {
  return pairing_.message([&](std::uint64_t client) -> const std::string* {
    const Session* found = clients_.find(client);
    return found == nullptr ? nullptr : &found->peer();
  });
}

void Bridge::broadcast_pairing() {
  clients_.broadcast([&](const Session& session) { return wire::json_only(session.encoding(), pairing_message()); });
}

void Bridge::change_setting(Session& session, const protocol::ChangeSetting& change, const nlohmann::json& id) {
  if (session.role() != Role::Teacher) {
    session.reply_error(id, Error{R"(only the teacher may change settings: {"cmd":"auth","teacher":"..."})",
                                  protocol::ErrorCode::Denied});
    return;
  }
  auto changed = with_setting(settings_, config_, change.key, change.value);
  if (!changed) {
    session.reply_error(id, changed.error());
    return;
  }
  log_info("client " + std::to_string(session.id()) + " (" + session.peer() + ", teacher) sets " + change.key + " = " +
           change.value + ", until the next reload or restart");
  reload(changed.value());
  session.reply_ok(id);
}

}  // namespace flockbridge::bridge
