// What every client connection gets, whichever server accepted it: a
// readable name for the logs, and the socket options that keep a slow
// client's data fresh and find a client whose network vanished; what the
// close watch on a driver reads of its connection.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/driver_watch.hpp"

namespace flockbridge::bridge {

/// "10.0.3.17:8080", or "[fe80::1]:8080" for an IPv6 address.
[[nodiscard]] std::string host_port(const std::string& address, std::uint16_t port);

/// The socket address of an IPv4 or IPv6 address's text and a port;
/// nothing for any other text (a host name).
[[nodiscard]] std::optional<sockaddr_storage> socket_address(const std::string& address, std::uint16_t port);

/// Why a listener could not be opened, for a person: "cannot listen on
/// 0.0.0.0:8080 for the web server: the port is in use (...); choose
/// another with --http-port". `error` is errno's value.
[[nodiscard]] std::string listen_failure(const std::string& where, std::string_view what, std::string_view option,
                                         std::string_view bind_option, int error);

/// Whether `bind`:`port` can be listened on now: 0, or errno's value (a
/// socket bound and closed, as a listener would bind it; port 0 is always free).
[[nodiscard]] int try_listening(const std::string& bind, std::uint16_t port);

/// A peer's address without its port ("10.0.3.17", "[fe80::1]").
[[nodiscard]] std::string address_of(const std::string& peer);

/// The socket's peer as host_port() writes it; "unknown peer" when the socket has none.
[[nodiscard]] std::string peer_name(int fd);

/// TCP_NODELAY, a small send buffer (config.client_send_buffer), keepalive
/// and TCP_USER_TIMEOUT tuned to config.dead_peer_timeout.
void tune_client_socket(int fd, const Config& config);

/// Keepalive probes after a second of quiet (`closely`: a watched driver,
/// driver_watch.hpp), or as tune_client_socket() set them.
void watch_client_socket(int fd, bool closely, const Config& config);

/// What the kernel knows of the connection's peer (TCP_INFO); nothing heard
/// and nothing owed when it cannot tell.
[[nodiscard]] PeerState peer_state(int fd);

}  // namespace flockbridge::bridge
