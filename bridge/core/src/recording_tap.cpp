#include "flockbridge/bridge/recording_tap.hpp"

#include <utility>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/bridge/wire.hpp"

namespace flockbridge::bridge {

protocol::Result<protocol::Done> RecordingTap::start(const RecordSettings& settings, RecordingIdentity identity,
                                                     const std::string& by) {
  auto started = recorder_.start(settings, std::move(identity), by);
  if (!started) return started;
  since_ = unix_seconds_now();
  log_info("recording started by " + by + " into " + settings.directory);
  record(Topic::Recording, nlohmann::json{{"event", "started"}, {"by", by}}.dump());
  return protocol::Done{};
}

void RecordingTap::stop(const std::string& by) {
  if (!recorder_.active()) return;
  record(Topic::Recording, nlohmann::json{{"event", "stopped"}, {"by", by}}.dump());
  recorder_.stop();
  log_info("recording stopped by " + by);
}

void RecordingTap::record(Topic topic, std::string_view json) {
  if (!recorder_.active()) return;
  recorder_.record(topic, wire::without_line_end(json), unix_ns_now());
}

void RecordingTap::record_published(Topic topic, const SharedBuffer& json, const SharedBuffer& native) {
  if (!recorder_.active()) return;
  const std::uint64_t now = unix_ns_now();
  const std::string_view text = json ? wire::without_line_end(*json) : std::string_view();
  if (!text.empty()) recorder_.record(topic, text, now);
  if (native && !native->empty()) {
    const nlohmann::ordered_json form{{"json", text.empty() ? nlohmann::ordered_json(nullptr) : topic_name(topic)},
                                      {"bytes", protocol::to_hex(protocol::as_bytes(*native))}};
    recorder_.record(Topic::Native, form.dump(), now);
  }
}

void RecordingTap::record_answer(nlohmann::ordered_json who, const nlohmann::json& id, const protocol::Error* error,
                                 std::optional<bool> confirmed, bool told) {
  if (!recorder_.active()) return;
  who["id"] = id;
  who["ok"] = error == nullptr;
  if (error != nullptr) {
    who["error"] = {{"code", protocol::error_code_name(error->code)}, {"message", error->message}};
  } else {
    who["confirmed"] = confirmed ? nlohmann::ordered_json(*confirmed) : nlohmann::ordered_json(nullptr);
  }
  who["told"] = told;
  record(Topic::Answer, who.dump());
}

std::string RecordingTap::message() const {
  const RecordingStatus& status = recorder_.status();
  nlohmann::ordered_json message{{"type", "recording"}, {"active", status.active}};
  if (status.active) {
    message["since"] = since_;
    message["by"] = status.started_by;
    message["directory"] = status.directory;
  }
  return message.dump();
}

}  // namespace flockbridge::bridge
