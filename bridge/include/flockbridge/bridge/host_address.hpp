// This machine's own network address, as a robot may need to be told it.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace flockbridge::bridge {

/// The third and fourth octets of this machine's first non-loopback IPv4
/// address (the Flockbot's CFG carries them); nothing when there is none.
[[nodiscard]] std::optional<std::pair<std::uint8_t, std::uint8_t>> local_ipv4_octets();

}  // namespace flockbridge::bridge
