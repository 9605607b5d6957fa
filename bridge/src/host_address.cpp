#include "flockbridge/bridge/host_address.hpp"

#include <uv.h>

#include <netinet/in.h>

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

}  // namespace flockbridge::bridge
