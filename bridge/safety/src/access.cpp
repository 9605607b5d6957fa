#include "flockbridge/bridge/access.hpp"

#include <algorithm>
#include <cctype>

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
    difference |= static_cast<unsigned>(static_cast<unsigned char>(given[i]) ^
                                        static_cast<unsigned char>(expected[i % expected.size()]));
  }
  return difference == 0;
}

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return text;
}

/// The host of an authority ("name:80", "[::1]:80", "name"); empty when malformed.
std::string_view authority_host(std::string_view authority) {
  if (authority.starts_with('[')) {
    const auto end = authority.find(']');
    if (end == std::string_view::npos) return {};
    const std::string_view rest = authority.substr(end + 1);
    if (!rest.empty() && !rest.starts_with(':')) return {};
    return authority.substr(1, end - 1);
  }
  const std::string_view host = authority.substr(0, authority.find(':'));
  const bool plain =
      std::ranges::all_of(host, [](unsigned char c) { return std::isalnum(c) != 0 || c == '-' || c == '.'; });
  return plain ? host : std::string_view{};
}

}  // namespace

std::optional<std::string> origin_host(std::string_view origin) {
  const auto scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return std::nullopt;
  std::string_view authority = origin.substr(scheme_end + 3);
  if (authority.ends_with('/')) authority.remove_suffix(1);  // an origin has no path; tolerate the slash
  if (authority.find_first_of("/?#@") != std::string_view::npos) return std::nullopt;
  const std::string_view host = authority_host(authority);
  if (host.empty()) return std::nullopt;
  return lower(host);
}

std::vector<std::string> host_list(std::string_view list) {
  std::vector<std::string> hosts;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = trimmed(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    if (auto host = origin_host(item)) {
      hosts.push_back(std::move(*host));
    } else {
      hosts.push_back(lower(authority_host(item).empty() ? item : authority_host(item)));
    }
  }
  return hosts;
}

bool origin_allowed(std::optional<std::string_view> origin, const std::vector<std::string>& own_names,
                    const std::vector<std::string>& allowed) {
  if (!origin) return true;
  const auto host = origin_host(*origin);
  if (!host) return false;
  return std::ranges::find(own_names, *host) != own_names.end() || std::ranges::find(allowed, *host) != allowed.end();
}

std::optional<LoginGuard::Wait> LoginGuard::wait(const std::string& address, SteadyTime now) {
  forget_old(now);
  if (settings_.shared_burst > 0) {
    refill(now);
    if (shared_ < 1) {
      const double intervals = 1 - shared_;
      return Wait{std::chrono::ceil<std::chrono::milliseconds>(intervals * settings_.shared_interval), true};
    }
  }
  const auto found = failures_.find(address);
  if (found == failures_.end() || now >= found->second.until) return std::nullopt;
  return Wait{std::chrono::ceil<std::chrono::milliseconds>(found->second.until - now), false};
}

void LoginGuard::refill(SteadyTime now) {
  if (refilled_ == SteadyTime{}) refilled_ = now;
  const double intervals = std::chrono::duration<double>(now - refilled_) / settings_.shared_interval;
  shared_ = std::min(static_cast<double>(settings_.shared_burst), shared_ + intervals);
  refilled_ = now;
}

std::chrono::milliseconds LoginGuard::failed(const std::string& address, SteadyTime now) {
  forget_old(now);
  if (failures_.size() >= settings_.most_addresses && !failures_.contains(address)) {
    const auto oldest = std::min_element(failures_.begin(), failures_.end(),
                                         [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
    failures_.erase(oldest);
  }
  if (settings_.shared_burst > 0) {
    refill(now);
    shared_ -= 1;
  }
  Failures& f = failures_[address];
  ++f.count;
  f.last = now;
  if (f.count <= settings_.free_tries) {
    f.until = now;
    return std::chrono::milliseconds{0};
  }
  auto delay = settings_.first_delay;
  for (unsigned i = settings_.free_tries + 1; i < f.count && delay < settings_.longest; ++i) delay *= 2;
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
