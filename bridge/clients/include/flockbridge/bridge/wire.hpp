// The bridge's own messages in their JSON form: one JSON object and a line
// end, as port 2006 sends them (WebSocket clients get the same JSON without
// the line end, one object per message). A family's own port gets them in
// its dialect from its NativeClient, when it has words for them.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge::wire {

/// One JSON message (json_codec's) and its line end.
[[nodiscard]] SharedBuffer json_line(std::string message);
/// A message without the line end of its JSON-lines form: as one WebSocket
/// message, a Foxglove frame's payload, or a recording's message.
[[nodiscard]] constexpr std::string_view without_line_end(std::string_view message) noexcept {
  if (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  return message;
}
/// A message of a kind the families' own ports have no words for (json_codec's
/// lease, ...), for JSON and WebSocket clients only: nothing for a native client.
[[nodiscard]] SharedBuffer json_only(Encoding encoding, std::string message);
/// A notice as JSON clients get it; `id` is the request's, for an answer.
[[nodiscard]] SharedBuffer json_notice(const Notice& notice, const nlohmann::json& id = nullptr);
[[nodiscard]] SharedBuffer stats(const nlohmann::json& id, const protocol::StatsSnapshot& snapshot);

}  // namespace flockbridge::bridge::wire
