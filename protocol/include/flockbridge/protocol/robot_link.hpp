// What every robot family's link has in common: its state as clients see
// it, and the token that ties a command to its answer.
#pragma once

#include <cstdint>
#include <string_view>

namespace flockbridge::protocol {

enum class LinkState : std::uint8_t {
  Down,         ///< no serial port, or the robot does not answer at all
  Handshaking,  ///< port open, the family's start-up exchange under way
  Up,           ///< configured; commands flow
  Stale,        ///< was up, but the robot has gone quiet; being configured again
};

/// "down", "handshaking", "up", "stale": the names clients see.
[[nodiscard]] std::string_view link_state_name(LinkState state) noexcept;

/// Ties a command to its answer. Callers' tokens are never 0.
using CommandToken = std::uint64_t;

}  // namespace flockbridge::protocol
