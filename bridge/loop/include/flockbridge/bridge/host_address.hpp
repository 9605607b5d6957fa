// This machine's own network address, as a robot may need to be told it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flockbridge::bridge {

/// The third and fourth octets of this machine's first non-loopback IPv4
/// address (a robot's configuration may carry them); nothing when there is none.
[[nodiscard]] std::optional<std::pair<std::uint8_t, std::uint8_t>> local_ipv4_octets();

/// This machine's interface addresses, IPv4 first, IPv6 without zone; the
/// loopback's only `with_loopback`.
[[nodiscard]] std::vector<std::string> interface_addresses(bool with_loopback = false);

/// The names a browser may reach this machine by, now, in lower case:
/// "localhost", its host name and that name with ".local" (mDNS), and every
/// address of its interfaces (IPv6 without brackets or zone).
[[nodiscard]] std::vector<std::string> own_host_names();

}  // namespace flockbridge::bridge
