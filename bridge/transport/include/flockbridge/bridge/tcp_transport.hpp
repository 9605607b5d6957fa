// A robot, or a simulator, reached over TCP (`--device tcp:HOST:PORT`): the
// name resolved and the connection made on the loop, reconnected with the
// serial device's backoff when it fails or closes.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "flockbridge/bridge/host_lookup.hpp"
#include "flockbridge/bridge/transport.hpp"
#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

/// "tcp:HOST:PORT" (HOST may be [an IPv6 address]) as host and port; nothing
/// for another path or a malformed one.
struct TcpAddress {
  std::string host;
  std::string port;
};
[[nodiscard]] std::optional<TcpAddress> parse_tcp_path(const std::string& path);

class TcpTransport final : public Transport {
 public:
  TcpTransport(uv_loop_t* loop, Settings settings, Listener& listener);
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;
  TcpTransport(TcpTransport&&) = delete;
  TcpTransport& operator=(TcpTransport&&) = delete;
  ~TcpTransport() override { close(); }

  void start() override;
  void write(protocol::ByteView bytes) override;
  void write_now(protocol::ByteView bytes) override;
  void close() override;
  [[nodiscard]] bool is_open() const noexcept override { return connected_; }
  void set_path(std::string path) override { settings_.path = std::move(path); }

 private:
  void try_connect();
  void on_resolved(const std::string& error, const addrinfo* result);
  void on_connected(int status);
  void on_read(ssize_t nread, const uv_buf_t* buf);
  /// The connection failed or ended: tells the listener (once) and tries again later.
  void lose(const std::string& reason);
  void retry_later(const std::string& reason);

  uv_loop_t* loop_;
  Settings settings_;
  Listener& listener_;

  UvHandle<uv_tcp_t> tcp_;
  HostLookup lookup_;  ///< the name resolution under way; cancelled when this transport goes
  DeadlineTimer retry_;
  std::chrono::milliseconds backoff_{0};
  std::string last_failure_;
  bool running_ = false;
  bool connected_ = false;
  std::uint64_t attempt_ = 0;  ///< numbers the attempts, so that a late answer to an old one is ignored
  std::array<char, 4096> buffer_{};
};

}  // namespace flockbridge::bridge
