#include "flockbridge/bridge/driver_watch.hpp"

#include <algorithm>
#include <cstdio>

namespace flockbridge::bridge {

DriverWatch::Changes DriverWatch::watch(std::optional<std::uint64_t> holder, std::optional<std::uint64_t> mover) {
  std::vector<std::uint64_t> wanted;
  if (holder) wanted.push_back(*holder);
  if (mover && mover != holder) wanted.push_back(*mover);
  Changes changes;
  std::vector<Watched> next;
  for (const std::uint64_t client : wanted) {
    if (const Watched* known = find(client)) {
      next.push_back(*known);
    } else {
      changes.started.push_back(client);
      next.push_back(Watched{client, std::nullopt, false});
    }
  }
  for (const Watched& w : state_) {
    if (std::find(wanted.begin(), wanted.end(), w.client) == wanted.end()) changes.ended.push_back(w.client);
  }
  state_ = std::move(next);
  return changes;
}

bool DriverWatch::watched(std::uint64_t client) const noexcept {
  return std::any_of(state_.begin(), state_.end(), [&](const Watched& w) { return w.client == client; });
}

std::vector<std::uint64_t> DriverWatch::clients() const {
  std::vector<std::uint64_t> clients;
  for (const Watched& w : state_) clients.push_back(w.client);
  return clients;
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
