// The Bridge's counters: the snapshot a stats message carries, and the
// periodic log line.
#include "flockbridge/bridge/bridge.hpp"

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {

protocol::StatsSnapshot Bridge::snapshot() const {
  protocol::StatsSnapshot snapshot;
  snapshot.uptime_s = std::chrono::duration<double>(steady_now() - started_at_).count();
  snapshot.scheduling = scheduling_;
  snapshot.scheduling.pauses = loop_turns_.pauses();
  driver_->add_stats(snapshot);
  snapshot.bridge = counters_;
  if (const auto& lease = lease_.holder()) snapshot.control_holder = lease->client;
  if (const MqttCounters* mqtt = fleet_.counters()) {
    snapshot.mqtt = protocol::NamedCounters{{"connected", fleet_.connected() ? 1 : 0},
                                            {"connects", mqtt->connects},
                                            {"connect_failures", mqtt->connect_failures},
                                            {"disconnects", mqtt->disconnects},
                                            {"published", mqtt->published},
                                            {"queued", fleet_.queued()},
                                            {"replaced", mqtt->replaced},
                                            {"dropped", mqtt->dropped},
                                            {"received", mqtt->received}};
  }
  const RecordingStatus& recording = recording_.status();
  snapshot.recording_active = recording.active;
  snapshot.recording = {
      {"files", recording.files},     {"messages", recording.messages},         {"bytes", recording.bytes},
      {"dropped", recording.dropped}, {"write_errors", recording.write_errors}, {"removed", recording.removed}};
  snapshot.recording_file = recording.file;
  snapshot.recording_error = recording.last_error;
  for (const Session* session : clients_.sessions()) {
    if (!session->closing() && !session->refusing()) snapshot.clients.push_back(session->snapshot());
  }
  return snapshot;
}

void Bridge::log_stats() const {
  const protocol::StatsSnapshot s = snapshot();
  std::uint64_t failed = 0;
  for (const std::uint64_t n : s.bridge.failed) failed += n;
  log_info("stats: link " + std::string(protocol::link_state_name(s.link_state)) +
           (s.link_summary.empty() ? "" : ", " + s.link_summary) + ", commands " +
           std::to_string(s.bridge.commands_received) + " (failed " + std::to_string(failed) + "), clients " +
           std::to_string(s.clients.size()) + " (refused " + std::to_string(s.bridge.clients_refused) + ", dead " +
           std::to_string(s.bridge.clients_dead) + "), sensor messages dropped " +
           std::to_string(s.bridge.sensor_messages_dropped) +
           (recording_.active() || recording_.status().files > 0
                ? ", recording " + std::string(recording_.active() ? "on" : "off") + " (" +
                      std::to_string(recording_.status().messages) + " messages, " +
                      std::to_string(recording_.status().bytes) + " bytes, dropped " +
                      std::to_string(recording_.status().dropped) + ")"
                : ""));
}

void Bridge::arm_stats_timer() {
  const auto every =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(config_.stats_interval).count());
  if (every == 0) {
    uv_timer_stop(stats_timer_.get());
    return;
  }
  uv_timer_start(
      stats_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Bridge>(timer)) self->log_stats();
      },
      every, every);
}

}  // namespace flockbridge::bridge
