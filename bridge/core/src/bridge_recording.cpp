// The bridge's side of recording a run (recorder.hpp): what each message of
// the recording holds, who may start and stop it, and what the clients are
// told.
#include <string>
#include <utility>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/fleet.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {

using protocol::Error;

std::string Bridge::hello_text(std::uint64_t client, Role role) const {
  return protocol::json::hello(
      session_id_, driver_->link_state(), driver_->link_reason(), client, role_name(role),
      {driver_->family(), driver_->model(), driver_->commands(), driver_->simulated(), driver_->simulated_room(),
       driver_->simulated_boxes(), &driver_->geometry(), driver_->replay(), driver_->found()},
      {!config_.access.driver_pin.empty(), !config_.access.teacher_secret.empty()});
}

RecordingIdentity Bridge::recording_identity() const {
  std::string hello = hello_text(0, Role::Viewer);
  hello.resize(wire::without_line_end(hello).size());
  return {config_.mqtt.robot_name.empty() ? default_robot_name() : config_.mqtt.robot_name,
          std::string(driver_->family()),
          std::string(driver_->model()),
          session_id_,
          std::move(hello),
          protocol::json::sensor_schema(driver_->family(), driver_->sensor_properties(), &driver_->geometry()).dump(),
          driver_->simulated()};
}

void Bridge::recording_request(Session& session, bool start, const nlohmann::json& id) {
  if (session.role() == Role::Viewer) {
    session.reply_error(id, Error{std::string("only the teacher or a driver may ") + (start ? "start" : "stop") +
                                      " recording; give the PIN first",
                                  protocol::ErrorCode::Denied});
    return;
  }
  const std::string by = "client " + std::to_string(session.id()) + " (" + session.peer() + ", " +
                         std::string(role_name(session.role())) + ")";
  if (start && !config_.replay.file.empty()) {
    session.reply_error(
        id, Error{"this bridge replays a recording (" + config_.replay.file + "): a replay is not recorded again",
                  protocol::ErrorCode::Replay});
    return;
  }
  if (start ? recording_.active() : !recording_.active()) {
    session.reply_ok(id);  // already so: what was asked is done
    return;
  }
  if (start) {
    if (auto started = recording_.start(config_.record, recording_identity(), by); !started) {
      session.reply_error(id, started.error());
      return;
    }
    session.reply_ok(id);
  } else {
    session.reply_ok(id);  // recorded, as the last answer of the recording
    recording_.stop(by);
  }
  broadcast_recording();
}

void Bridge::broadcast_recording() {
  const std::string message = recording_.message();
  clients_.broadcast([&](const Session& session) { return wire::json_only(session.encoding(), message); });
}

nlohmann::ordered_json Bridge::client_json(const Session& session) {
  return {{"client", session.id()},
          {"kind", client_kind_name(session.kind())},
          {"peer", session.peer()},
          {"role", role_name(session.role())}};
}

void Bridge::session_answered(const Session& session, const nlohmann::json& id, const Error* error,
                              std::optional<bool> confirmed, bool told) {
  if (!recording_.active()) return;  // who was answered is written only for the recording
  recording_.record_answer(client_json(session), id, error, confirmed, told);
}

void Bridge::recording_note(bool warning, const std::string& text) {
  if (warning) {
    log_warning(text);
  } else {
    log_info(text);
  }
}

}  // namespace flockbridge::bridge
