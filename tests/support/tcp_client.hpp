// A TCP client on 127.0.0.1 for end-to-end tests, reading with deadlines:
// length-prefixed messages for port 2005, JSON lines for port 2006.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flockbridge::testing {

/// What one read of a socket brought, and when the kernel received it.
struct Received {
  std::size_t bytes = 0;
  std::chrono::system_clock::time_point at;
};
/// One read of `fd` into `buffer` without waiting, dated by the kernel's
/// receive timestamp (SO_TIMESTAMPNS, when the socket asked for it) of its
/// last segment, so a read that gathers several messages dates them all by
/// the latest, never earlier than they came; `fallback` when there is none;
/// nothing when there was nothing to read.
std::optional<Received> receive_timestamped(int fd, std::vector<char>& buffer,
                                            std::chrono::system_clock::time_point fallback);

using namespace std::chrono_literals;

/// Reads messages with `read(time left)` until one satisfies `match` and
/// returns it; nothing when `read` gives nothing (a timeout, or the end).
template <typename Read, typename Match>
auto read_until(std::chrono::milliseconds timeout, Read read, Match match) -> decltype(read(timeout)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto message = read(std::max(left, 0ms));
    if (!message || match(*message)) return message;
  }
}

class TcpClient {
 public:
  /// Connects to 127.0.0.1:port. `receive_buffer` > 0 sets SO_RCVBUF first
  /// (a small one makes a client that never reads back up quickly);
  /// `max_segment` > 0 sets the MSS it announces (TCP_MAXSEG), as a client
  /// on a real network would rather than loopback's 65483.
  /// Connects to `port` on 127.0.0.1, or where connect_thread_to() said.
  explicit TcpClient(std::uint16_t port, int receive_buffer = 0, int max_segment = 0);
  /// Clients made by the calling thread from now on connect to `address`
  /// (IPv4) instead of 127.0.0.1: a test's laptop on another network
  /// (test_network.hpp). Every client of the support library is a TcpClient.
  static void connect_thread_to(const std::string& address);
  /// Clients made by the calling thread from now on connect from `source`
  /// (IPv4, one of loopback's 127.0.x.y: another classmate's computer); an
  /// empty one lets the kernel choose again.
  static void connect_thread_from(const std::string& source);
  TcpClient(const TcpClient&) = delete;
  TcpClient& operator=(const TcpClient&) = delete;
  TcpClient(TcpClient&& other) noexcept;
  ~TcpClient();

  void send(const std::string& bytes);
  void send(const std::vector<std::uint8_t>& bytes);
  /// Ends the sending side (what `echo ... | nc -N` does); reading goes on.
  void shutdown_send();
  /// Makes this client's network vanish without a FIN: a socket filter
  /// drops every segment that arrives for it, so its kernel never again
  /// acknowledges anything the bridge sends.
  void vanish();
  /// Makes the close a reset (RST), as a killed program's or a dropped
  /// connection's, instead of an orderly FIN.
  void reset_on_close();

  /// The next length-prefixed message (without its length byte).
  std::optional<std::string> read_message(std::chrono::milliseconds timeout = 5s);
  /// The next line, as it came (without its line end).
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 5s);
  /// The next JSON line, parsed.
  std::optional<nlohmann::json> read_json(std::chrono::milliseconds timeout = 5s);
  /// The next JSON line whose "type" is `type`, skipping others.
  std::optional<nlohmann::json> read_json_type(const std::string& type, std::chrono::milliseconds timeout = 5s);
  /// The next binary message whose tag (first bytes) is `tag`, skipping others.
  std::optional<std::string> read_message_tag(const std::string& tag, std::chrono::milliseconds timeout = 5s);

  /// Reads until the server closes the connection; true if it did in time.
  bool wait_closed(std::chrono::milliseconds timeout = 5s);
  /// Reads whatever is there without waiting; false once the peer has closed.
  bool drain_available();

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// This end's port on 127.0.0.1.
  [[nodiscard]] std::uint16_t local_port() const;
  [[nodiscard]] std::string& buffer() noexcept { return buffer_; }
  /// Reads more into the buffer; false on timeout or EOF.
  bool fill(std::chrono::steady_clock::time_point deadline);
  [[nodiscard]] bool eof() const noexcept { return eof_; }

 private:
  int fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

/// Clients made by the calling thread connect from `source` while it lives
/// (TcpClient::connect_thread_from).
struct ConnectFrom {
  explicit ConnectFrom(const std::string& source) { TcpClient::connect_thread_from(source); }
  ~ConnectFrom() { TcpClient::connect_thread_from(""); }
  ConnectFrom(const ConnectFrom&) = delete;
  ConnectFrom& operator=(const ConnectFrom&) = delete;
};

}  // namespace flockbridge::testing
