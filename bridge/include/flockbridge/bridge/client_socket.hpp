// What every client connection gets, whichever server accepted it: a
// readable name for the logs, and the socket options that keep a slow
// client's data fresh and find a client whose network vanished.
#pragma once

#include <string>

#include "flockbridge/bridge/config.hpp"

namespace flockbridge::bridge {

/// "10.0.3.17:51234" or "[fe80::1]:51234"; "unknown peer" when the socket has none.
[[nodiscard]] std::string peer_name(int fd);

/// TCP_NODELAY, a small send buffer (config.client_send_buffer), keepalive
/// and TCP_USER_TIMEOUT tuned to config.dead_peer_timeout.
void tune_client_socket(int fd, const Config& config);

}  // namespace flockbridge::bridge
