#include "flockbridge/bridge/host_address.hpp"

#include <uv.h>

#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace flockbridge::bridge {

std::optional<std::pair<std::uint8_t, std::uint8_t>> local_ipv4_octets() {
  uv_interface_address_t* addresses = nullptr;
  int count = 0;
  if (uv_interface_addresses(&addresses, &count) != 0) return std::nullopt;
  std::optional<std::pair<std::uint8_t, std::uint8_t>> octets;
  for (int i = 0; i < count && !octets; ++i) {
    const auto& entry = addresses[i];
    if (entry.is_internal != 0 || entry.address.address4.sin_family != AF_INET) continue;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&entry.address.address4.sin_addr.s_addr);
    octets = std::pair{bytes[2], bytes[3]};
  }
  uv_free_interface_addresses(addresses, count);
  return octets;
}

std::vector<std::string> interface_addresses(bool with_loopback) {
  std::vector<std::string> v4;
  std::vector<std::string> v6;
  uv_interface_address_t* addresses = nullptr;
  int count = 0;
  if (uv_interface_addresses(&addresses, &count) != 0) return v4;
  for (int i = 0; i < count; ++i) {
    const auto& entry = addresses[i];
    if (entry.is_internal != 0 && !with_loopback) continue;
    std::array<char, 64> text{};
    const bool ipv4 = entry.address.address4.sin_family == AF_INET;
    const int named = ipv4 ? uv_ip4_name(&entry.address.address4, text.data(), text.size())
                           : uv_ip6_name(&entry.address.address6, text.data(), text.size());
    if (named != 0) continue;
    std::string address(text.data());
    address = address.substr(0, address.find('%'));  // a link-local address's zone
    auto& list = ipv4 ? v4 : v6;
    if (std::ranges::find(list, address) == list.end()) list.push_back(std::move(address));
  }
  uv_free_interface_addresses(addresses, count);
  v4.insert(v4.end(), v6.begin(), v6.end());
  return v4;
}

std::vector<std::string> own_host_names() {
  std::vector<std::string> names{"localhost"};
  std::array<char, 256> host{};
  std::size_t size = host.size();
  if (uv_os_gethostname(host.data(), &size) == 0 && size > 0) {
    std::string name(host.data(), size);
    std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    names.push_back(name);
    if (name.find('.') == std::string::npos) names.push_back(name + ".local");
  }
  for (std::string& address : interface_addresses(true)) {
    if (std::ranges::find(names, address) == names.end()) names.push_back(std::move(address));
  }
  return names;
}

}  // namespace flockbridge::bridge
