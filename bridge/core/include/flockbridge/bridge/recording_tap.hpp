// The run's recording as the bridge feeds it: the recorder (recorder.hpp),
// since when it records and who started it, and the forms the bridge's
// events take in it (a robot's message with its native bytes beside, an
// answer with who was answered). Every call is a no-op while nothing is
// recorded, so the bridge feeds it without asking first.
#pragma once

#include <uv.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/bridge/recorder.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

class RecordingTap {
 public:
  RecordingTap(uv_loop_t* loop, Recorder::Host& host) : recorder_(loop, host) {}

  [[nodiscard]] bool active() const noexcept { return recorder_.active(); }
  [[nodiscard]] const RecordingStatus& status() const noexcept { return recorder_.status(); }

  /// Starts recording, says so in the log and as the recording's first
  /// event ({"event":"started","by":...}); an error that says why it cannot.
  [[nodiscard]] protocol::Result<protocol::Done> start(const RecordSettings& settings, RecordingIdentity identity,
                                                       const std::string& by);
  /// Records {"event":"stopped","by":...} as the last event, closes the
  /// recording (its last job finishes the file) and logs it.
  void stop(const std::string& by);

  /// One message on a topic (`json` with its line end or without).
  void record(Topic topic, std::string_view json);
  /// A robot's message: its JSON form on `topic` (when it has one) and its
  /// native form on /native, at one time, so that a replay gives each of its
  /// clients what the original run gave them.
  void record_published(Topic topic, const SharedBuffer& json, const SharedBuffer& native);
  /// What the bridge answered a request: `who` (the client, as client_json
  /// writes it) with the request's id, ok or the error, whether the robot
  /// confirmed, and whether the client was told.
  void record_answer(nlohmann::ordered_json who, const nlohmann::json& id, const protocol::Error* error,
                     std::optional<bool> confirmed, bool told);

  /// {"type":"recording","active":...} and, while recording, since when
  /// (Unix seconds), by whom and where.
  [[nodiscard]] std::string message() const;

  /// Closes a chunk that is old enough.
  void housekeeping(SteadyTime now) { recorder_.housekeeping(now); }
  /// The robot is better known: the next file says so.
  void set_identity(RecordingIdentity identity) { recorder_.set_identity(std::move(identity)); }

 private:
  Recorder recorder_;
  double since_ = 0;  ///< Unix seconds
};

}  // namespace flockbridge::bridge
