#include "support/tcp_client.hpp"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

namespace flockbridge::testing {

namespace {

/// When the kernel received the data a recvmsg returned: the timestamp of its last segment.
std::optional<std::chrono::system_clock::time_point> receive_timestamp(msghdr& message) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_TIMESTAMPNS) continue;
    timespec stamp{};
    std::memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
    return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(stamp.tv_sec) + std::chrono::nanoseconds(stamp.tv_nsec)));
  }
  return std::nullopt;
}

}  // namespace

std::optional<Received> receive_timestamped(int fd, std::vector<char>& buffer,
                                            std::chrono::system_clock::time_point fallback) {
  alignas(cmsghdr) std::array<char, 256> control{};
  iovec into{buffer.data(), buffer.size()};
  msghdr message{};
  message.msg_iov = &into;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(fd, &message, MSG_DONTWAIT);
  if (n <= 0) return std::nullopt;
  return Received{static_cast<std::size_t>(n), receive_timestamp(message).value_or(fallback)};
}

namespace {

/// Where the calling thread's new clients connect (IPv4, network order).
thread_local in_addr_t t_connect_to = htonl(INADDR_LOOPBACK);
thread_local std::optional<in_addr_t> t_connect_from;

}  // namespace

void TcpClient::connect_thread_from(const std::string& source) {
  if (source.empty()) {
    t_connect_from.reset();
    return;
  }
  in_addr parsed{};
  if (::inet_pton(AF_INET, source.c_str(), &parsed) != 1) throw std::runtime_error("not an IPv4 address: " + source);
  t_connect_from = parsed.s_addr;
}

void TcpClient::connect_thread_to(const std::string& address) {
  in_addr parsed{};
  if (::inet_pton(AF_INET, address.c_str(), &parsed) != 1) throw std::runtime_error("not an IPv4 address: " + address);
  t_connect_to = parsed.s_addr;
}

TcpClient::TcpClient(std::uint16_t port, int receive_buffer, int max_segment) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  if (max_segment > 0) ::setsockopt(fd_, IPPROTO_TCP, TCP_MAXSEG, &max_segment, sizeof(max_segment));
  if (t_connect_from) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = *t_connect_from;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot bind a client to its source address");
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = t_connect_to;
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    std::array<char, INET_ADDRSTRLEN> host{};
    ::inet_ntop(AF_INET, &address.sin_addr, host.data(), host.size());
    throw std::runtime_error("cannot connect to " + std::string(host.data()) + ":" + std::to_string(port));
  }
}

TcpClient::TcpClient(TcpClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)), eof_(other.eof_) {}

TcpClient::~TcpClient() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpClient::send(const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    sent += static_cast<std::size_t>(n);
  }
}

void TcpClient::send(const std::vector<std::uint8_t>& bytes) {
  send(std::string(bytes.begin(), bytes.end()));
}

std::uint16_t TcpClient::local_port() const {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

void TcpClient::shutdown_send() {
  ::shutdown(fd_, SHUT_WR);
}

void TcpClient::vanish() {
  sock_filter drop_all[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
  sock_fprog program{1, drop_all};
  if (::setsockopt(fd_, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program)) != 0) {
    throw std::runtime_error("SO_ATTACH_FILTER failed");
  }
}

void TcpClient::reset_on_close() {
  const linger abort{1, 0};
  if (::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort)) != 0) {
    throw std::runtime_error("SO_LINGER failed");
  }
}

bool TcpClient::fill(std::chrono::steady_clock::time_point deadline) {
  if (eof_) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  pollfd readable{fd_, POLLIN, 0};
  if (::poll(&readable, 1, static_cast<int>(std::max<long>(left.count(), 0))) != 1) return false;
  std::array<char, 65536> chunk{};
  const ssize_t n = ::recv(fd_, chunk.data(), chunk.size(), 0);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  buffer_.append(chunk.data(), static_cast<std::size_t>(n));
  return true;
}

bool TcpClient::drain_available() {
  while (!eof_) {
    std::array<char, 65536> chunk{};
    const ssize_t n = ::recv(fd_, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      buffer_.append(chunk.data(), static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    eof_ = true;
  }
  return false;
}

std::optional<std::string> TcpClient::read_message(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!buffer_.empty()) {
      const std::size_t length = static_cast<unsigned char>(buffer_[0]);
      if (buffer_.size() >= 1 + length) {
        std::string message = buffer_.substr(1, length);
        buffer_.erase(0, 1 + length);
        return message;
      }
    }
    if (!fill(deadline)) return std::nullopt;
  }
}

std::optional<std::string> TcpClient::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (!fill(deadline)) return std::nullopt;
  }
}

std::optional<nlohmann::json> TcpClient::read_json(std::chrono::milliseconds timeout) {
  auto line = read_line(timeout);
  if (!line) return std::nullopt;
  return nlohmann::json::parse(*line);
}

std::optional<nlohmann::json> TcpClient::read_json_type(const std::string& type, std::chrono::milliseconds timeout) {
  return read_until(
      timeout, [this](std::chrono::milliseconds left) { return read_json(left); },
      [&](const nlohmann::json& message) { return message["type"] == type; });
}

std::optional<std::string> TcpClient::read_message_tag(const std::string& tag, std::chrono::milliseconds timeout) {
  return read_until(
      timeout, [this](std::chrono::milliseconds left) { return read_message(left); },
      [&](const std::string& message) { return message.rfind(tag, 0) == 0; });
}

bool TcpClient::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!eof_) {
    if (!fill(deadline) && !eof_) return false;
  }
  return true;
}

}  // namespace flockbridge::testing
