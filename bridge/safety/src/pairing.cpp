#include "flockbridge/bridge/pairing.hpp"

#include <algorithm>

#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {

void Pairing::wait(std::uint64_t client, double since) {
  waiting_.push_back(Waiting{client, since});
}

bool Pairing::waiting(std::uint64_t client) const noexcept {
  return std::ranges::any_of(waiting_, [&](const Waiting& w) { return w.client == client; });
}

bool Pairing::forget(std::uint64_t client) {
  return std::erase_if(waiting_, [&](const Waiting& w) { return w.client == client; }) > 0;
}

protocol::Result<protocol::Done> Pairing::approve(Role approver, std::uint64_t client, bool leaving) {
  if (approver == Role::Viewer) {
    return protocol::Error{R"(only someone with the robot's PIN may approve a connection: {"cmd":"auth","pin":"..."})",
                           protocol::ErrorCode::Denied};
  }
  if (leaving || !forget(client)) {
    return protocol::Error{"approve: client " + std::to_string(client) +
                           " is not waiting to be approved (it may have gone, or been approved already)"};
  }
  return protocol::Done{};
}

std::string Pairing::message(const std::function<const std::string*(std::uint64_t)>& peer_of) const {
  std::vector<protocol::json::WaitingClient> listed;
  listed.reserve(waiting_.size());
  for (const Waiting& w : waiting_) {
    if (const std::string* peer = peer_of(w.client)) listed.push_back({w.client, *peer, w.since});
  }
  return protocol::json::pairing(listed);
}

}  // namespace flockbridge::bridge
