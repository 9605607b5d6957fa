#include "flockbridge/bridge/address_slots.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace flockbridge::bridge {

std::optional<std::string> AddressSlots::computer_of(std::string_view address) {
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  const std::string text(address.substr(0, address.find('%')));  // without an IPv6 zone
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    if (ntohl(v4.s_addr) == INADDR_LOOPBACK) return std::nullopt;
    return text;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) != 1) return std::nullopt;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return std::nullopt;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    std::memcpy(&v4.s_addr, &v6.s6_addr[12], sizeof(v4.s_addr));
    std::array<char, INET_ADDRSTRLEN> host{};
    ::inet_ntop(AF_INET, &v4, host.data(), host.size());
    return computer_of(host.data());
  }
  std::fill(std::begin(v6.s6_addr) + 8, std::end(v6.s6_addr), 0);
  std::array<char, INET6_ADDRSTRLEN> host{};
  ::inet_ntop(AF_INET6, &v6, host.data(), host.size());
  return std::string(host.data()) + "/64";
}

bool AddressSlots::take(const std::string& computer) {
  std::size_t& held = held_[computer];
  if (held >= per_address_) {
    if (held == 0) held_.erase(computer);
    return false;
  }
  ++held;
  return true;
}

void AddressSlots::give_back(const std::string& computer) {
  const auto found = held_.find(computer);
  if (found == held_.end()) return;
  if (--found->second == 0) held_.erase(found);
}

std::size_t AddressSlots::held(const std::string& computer) const {
  const auto found = held_.find(computer);
  return found == held_.end() ? 0 : found->second;
}

}  // namespace flockbridge::bridge
