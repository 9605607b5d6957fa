// The bridge's side of recording a run (recorder.hpp): what each message of
// the recording holds, who may start and stop it, and what the clients are
// told.
#include <chrono>
#include <string>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/fleet.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {

using protocol::Done;
using protocol::Error;
using protocol::Result;

std::string Bridge::hello_text(std::uint64_t client, Role role) const {
  return protocol::json::hello(
      session_id_, driver_->link_state(), driver_->link_reason(), client, role_name(role),
      {driver_->family(), driver_->model(), driver_->commands(), driver_->simulated(), driver_->simulated_room(),
       driver_->simulated_boxes(), &driver_->geometry(), driver_->replay()},
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
          protocol::json::sensor_schema(driver_->family(), driver_->sensor_properties()).dump(),
          driver_->simulated()};
}

Result<Done> Bridge::start_recording(const std::string& by) {
  auto started = recorder_.start(config_.record, recording_identity(), by);
  if (!started) return started;
  recording_since_ = unix_seconds_now();
  log_info("recording started by " + by + " into " + config_.record.directory);
  record(Topic::Recording, nlohmann::json{{"event", "started"}, {"by", by}}.dump());
  return Done{};
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
  if (start ? recorder_.active() : !recorder_.active()) {
    session.reply_ok(id);  // already so: what was asked is done
    return;
  }
  if (start) {
    if (auto started = start_recording(by); !started) {
      session.reply_error(id, started.error());
      return;
    }
    session.reply_ok(id);
  } else {
    session.reply_ok(id);  // recorded, as the last answer of the recording
    record(Topic::Recording, nlohmann::json{{"event", "stopped"}, {"by", by}}.dump());
    recorder_.stop();
    log_info("recording stopped by " + by);
  }
  broadcast_recording();
}

std::string Bridge::recording_message() const {
  const RecordingStatus& status = recorder_.status();
  nlohmann::ordered_json message{{"type", "recording"}, {"active", status.active}};
  if (status.active) {
    message["since"] = recording_since_;
    message["by"] = status.started_by;
    message["directory"] = status.directory;
  }
  return message.dump();
}

void Bridge::broadcast_recording() {
  const std::string message = recording_message();
  broadcast([&](const Session& session) { return wire::json_only(session.encoding(), message); });
}

void Bridge::record(Topic topic, std::string_view json) {
  if (!recorder_.active()) return;
  recorder_.record(topic, wire::without_line_end(json), unix_ns_now());
}

void Bridge::record_published(Topic topic, const SharedBuffer& json, const SharedBuffer& native) {
  const std::uint64_t now = unix_ns_now();
  const std::string_view text = json ? wire::without_line_end(*json) : std::string_view();
  if (!text.empty()) recorder_.record(topic, text, now);
  if (native && !native->empty()) {
    const nlohmann::ordered_json form{{"json", text.empty() ? nlohmann::ordered_json(nullptr) : topic_name(topic)},
                                      {"bytes", protocol::to_hex(protocol::as_bytes(*native))}};
    recorder_.record(Topic::Native, form.dump(), now);
  }
}

nlohmann::ordered_json Bridge::client_json(const Session& session) {
  return {{"client", session.id()},
          {"kind", client_kind_name(session.kind())},
          {"peer", session.peer()},
          {"role", role_name(session.role())}};
}

void Bridge::session_answered(const Session& session, const nlohmann::json& id, const Error* error,
                              std::optional<bool> confirmed, bool told) {
  if (!recorder_.active()) return;
  nlohmann::ordered_json answer = client_json(session);
  answer["id"] = id;
  answer["ok"] = error == nullptr;
  if (error != nullptr) {
    answer["error"] = {{"code", protocol::error_code_name(error->code)}, {"message", error->message}};
  } else {
    answer["confirmed"] = confirmed ? nlohmann::ordered_json(*confirmed) : nlohmann::ordered_json(nullptr);
  }
  answer["told"] = told;
  record(Topic::Answer, answer.dump());
}

void Bridge::recording_note(bool warning, const std::string& text) {
  if (warning) {
    log_warning(text);
  } else {
    log_info(text);
  }
}

}  // namespace flockbridge::bridge
