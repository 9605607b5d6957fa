#include "flockbridge/protocol/robot_link.hpp"

namespace flockbridge::protocol {

std::string_view link_state_name(LinkState state) noexcept {
  switch (state) {
    case LinkState::Down:
      return "down";
    case LinkState::Handshaking:
      return "handshaking";
    case LinkState::Up:
      return "up";
    case LinkState::Stale:
      return "stale";
  }
  return "down";
}

}  // namespace flockbridge::protocol
