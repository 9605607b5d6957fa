#include "flockbridge/bridge/wire.hpp"

#include "flockbridge/bridge/overloaded.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge::wire {

namespace json = protocol::json;

SharedBuffer json_line(std::string message) {
  message.push_back('\n');
  return make_buffer(std::move(message));
}

SharedBuffer json_only(Encoding encoding, std::string message) {
  if (encoding == Encoding::Native) return nullptr;
  return json_line(std::move(message));
}

SharedBuffer json_notice(const Notice& notice, const nlohmann::json& id) {
  return std::visit(Overloaded{
                        [](const notice::Link& link) { return json_line(json::link(link.state, link.reason)); },
                        [](const notice::Dropped& dropped) { return json_line(json::dropped(dropped.count)); },
                        [&](const notice::Done& done) { return json_line(json::ok(id, done.confirmed)); },
                        [&](const notice::Failed& failed) { return json_line(json::error(id, failed.error)); },
                        [](const notice::SafetyStop& stop) { return json_line(json::safety_stop(stop.reason)); },
                    },
                    notice);
}

SharedBuffer stats(const nlohmann::json& id, const protocol::StatsSnapshot& snapshot) {
  return json_line(json::stats(id, snapshot));
}

}  // namespace flockbridge::bridge::wire
