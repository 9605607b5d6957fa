#include "flockbridge/bridge/access.hpp"

#include <algorithm>

namespace flockbridge::bridge {

std::string_view role_name(Role role) noexcept {
  switch (role) {
    case Role::Viewer:
      return "viewer";
    case Role::Driver:
      return "driver";
    case Role::Teacher:
      return "teacher";
  }
  return "viewer";
}

bool same_secret(std::string_view given, std::string_view expected) noexcept {
  // Every byte of the given text is compared, against the expected one's
  // bytes in turn; a difference in length counts as a difference too.
  unsigned difference = given.size() == expected.size() ? 0U : 1U;
  if (expected.empty()) return false;
  for (std::size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(expected[i % expected.size()]);
  }
  return difference == 0;
}

std::optional<std::chrono::milliseconds> LoginGuard::wait(const std::string& address, SteadyTime now) {
  forget_old(now);
  const auto found = failures_.find(address);
  if (found == failures_.end() || now >= found->second.until) return std::nullopt;
  return std::chrono::ceil<std::chrono::milliseconds>(found->second.until - now);
}

std::chrono::milliseconds LoginGuard::failed(const std::string& address, SteadyTime now) {
  forget_old(now);
  if (failures_.size() >= settings_.most_addresses && !failures_.contains(address)) {
    const auto oldest = std::min_element(failures_.begin(), failures_.end(),
                                         [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
    failures_.erase(oldest);
  }
  Failures& f = failures_[address];
  ++f.count;
  f.last = now;
  auto delay = settings_.first_delay;
  for (unsigned i = 1; i < f.count && delay < settings_.longest; ++i) delay *= 2;
  delay = std::min(delay, settings_.longest);
  f.until = now + delay;
  return delay;
}

void LoginGuard::succeeded(const std::string& address) {
  failures_.erase(address);
}

void LoginGuard::forget_old(SteadyTime now) {
  std::erase_if(failures_, [&](const auto& entry) { return now - entry.second.last >= settings_.forget_after; });
}

}  // namespace flockbridge::bridge
