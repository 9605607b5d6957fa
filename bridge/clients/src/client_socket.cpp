#include "flockbridge/bridge/client_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace flockbridge::bridge {

std::string host_port(const std::string& address, std::uint16_t port) {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

std::optional<sockaddr_storage> socket_address(const std::string& address, std::uint16_t port) {
  sockaddr_storage socket{};
  if (uv_ip4_addr(address.c_str(), port, reinterpret_cast<sockaddr_in*>(&socket)) == 0 ||
      uv_ip6_addr(address.c_str(), port, reinterpret_cast<sockaddr_in6*>(&socket)) == 0) {
    return socket;
  }
  return std::nullopt;
}

std::string listen_failure(const std::string& where, std::string_view what, std::string_view option,
                           std::string_view bind_option, int error) {
  std::string text = "cannot listen on " + where + " for " + std::string(what) + ": ";
  switch (error) {
    case EADDRINUSE:
      return text + "the port is in use (another flockbridge, or another server); choose another with " +
             std::string(option) + " (0: any free port)";
    case EACCES:
      return text + "ports below 1024 need root or CAP_NET_BIND_SERVICE; choose another with " + std::string(option);
    case EADDRNOTAVAIL:
      return text + "the address is not one of this machine's; see " + std::string(bind_option);
    default:
      return text + std::strerror(error);
  }
}

int try_listening(const std::string& bind, std::uint16_t port) {
  if (port == 0) return 0;
  const auto address = socket_address(bind.empty() ? "0.0.0.0" : bind, port);
  if (!address) return 0;  // a name: the listener's own error says what it is
  const socklen_t length = address->ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  const int fd = ::socket(address->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));  // as every listener sets it
  const int error = ::bind(fd, reinterpret_cast<const sockaddr*>(&*address), length) == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

std::string address_of(const std::string& peer) {
  const std::size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

std::string peer_name(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "unknown peer";
  std::array<char, INET6_ADDRSTRLEN> host{};
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      // An IPv4 client of a dual-stack listener: show it as IPv4.
      ::inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], host.data(), host.size());
    } else {
      ::inet_ntop(AF_INET6, &v6->sin6_addr, host.data(), host.size());
    }
    return host_port(host.data(), ntohs(v6->sin6_port));
  }
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
  ::inet_ntop(AF_INET, &v4->sin_addr, host.data(), host.size());
  return host_port(host.data(), ntohs(v4->sin_port));
}

namespace {

/// Keepalive probes after `idle_s` of quiet both ways, every `interval_s`.
void set_keepalive(int fd, int idle_s, int interval_s) {
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
}

/// The ordinary keepalive: a client whose network vanished sends no FIN.
/// Keepalive probes find an idle one, TCP_USER_TIMEOUT one that leaves data
/// unacknowledged; both within about config.dead_peer_timeout.
void set_ordinary_keepalive(int fd, const Config& config) {
  const auto timeout_ms = static_cast<int>(config.dead_peer_timeout.count());
  const int idle_s = std::max(1, timeout_ms / 2000);
  const int interval_s = std::max(1, timeout_ms / 10000);
  const int probes = std::max(1, (timeout_ms / 1000 - idle_s) / interval_s);
  set_keepalive(fd, idle_s, interval_s);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
}

}  // namespace

void tune_client_socket(int fd, const Config& config) {
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  if (config.client_send_buffer > 0) {
    // A small send buffer keeps a slow client's data fresh: what the kernel
    // holds cannot be replaced by newer sensor values, what we hold can.
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &config.client_send_buffer, sizeof(config.client_send_buffer));
  }
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  set_ordinary_keepalive(fd, config);
  const auto user_timeout = static_cast<unsigned>(config.dead_peer_timeout.count());
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

void watch_client_socket(int fd, bool closely, const Config& config) {
  if (fd < 0) return;
  if (closely) {
    // The kernel's shortest: a probe after a second of quiet both ways, so
    // that a quiet connection owes an answer too (driver_watch.hpp).
    set_keepalive(fd, 1, 1);
  } else {
    set_ordinary_keepalive(fd, config);
  }
}

PeerState peer_state(int fd) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return {};
  // Any segment from the peer carries an acknowledgement: the later of the
  // two is when it was last heard.
  const auto silent = std::min(info.tcpi_last_ack_recv, info.tcpi_last_data_recv);
  return PeerState{std::chrono::milliseconds{silent}, info.tcpi_unacked > 0 || info.tcpi_probes > 0};
}

}  // namespace flockbridge::bridge
