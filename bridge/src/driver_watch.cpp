#include "flockbridge/bridge/driver_watch.hpp"

#include <algorithm>
#include <cstdio>

namespace flockbridge::bridge {

DriverWatch::Changes DriverWatch::watch(std::optional<std::uint64_t> holder, std::optional<std::uint64_t> mover) {
  std::vector<std::uint64_t> wanted;
  if (holder) wanted.push_back(*holder);
  if (mover && mover != holder) wanted.push_back(*mover);
  Changes changes;
  for (const std::uint64_t client : wanted) {
    if (!watched(client)) {
      changes.started.push_back(client);
      state_.push_back(Watched{client, std::nullopt, false});
    }
  }
  for (const std::uint64_t client : clients_) {
    if (std::find(wanted.begin(), wanted.end(), client) == wanted.end()) changes.ended.push_back(client);
  }
  std::erase_if(state_, [&](const Watched& w) {
    return std::find(wanted.begin(), wanted.end(), w.client) == wanted.end();
  });
  clients_ = std::move(wanted);
  return changes;
}

bool DriverWatch::watched(std::uint64_t client) const noexcept {
  return std::find(clients_.begin(), clients_.end(), client) != clients_.end();
}

DriverWatch::Watched* DriverWatch::find(std::uint64_t client) noexcept {
  const auto found = std::find_if(state_.begin(), state_.end(), [&](const Watched& w) { return w.client == client; });
  return found == state_.end() ? nullptr : &*found;
}

std::optional<std::string> DriverWatch::check(std::uint64_t client, const PeerState& peer, protocol::SteadyTime now) {
  Watched* watched = find(client);
  if (watched == nullptr || watched->lost) return std::nullopt;
  if (!peer.awaiting) {
    watched->awaiting_since.reset();
    return std::nullopt;
  }
  if (!watched->awaiting_since) watched->awaiting_since = now;
  // A reading comes every kWatchInterval, and may come just after the
  // bound: the silence that counts leaves room for two of them.
  const auto silence_limit = std::max(kAnswerWindow, lost_after_ - 2 * kWatchInterval);
  if (now - *watched->awaiting_since < kAnswerWindow || peer.silent < silence_limit) return std::nullopt;
  watched->lost = true;
  char seconds[16];
  std::snprintf(seconds, sizeof(seconds), "%.1f", static_cast<double>(peer.silent.count()) / 1000.0);
  return std::string("lost its network: nothing heard from it for ") + seconds + " s";
}

}  // namespace flockbridge::bridge
