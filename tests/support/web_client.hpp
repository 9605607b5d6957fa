// Clients of the bridge's web server for end-to-end tests: a plain HTTP GET,
// and a WebSocket client written from RFC 6455 alone (not with the library
// the bridge uses), so the tests check the bridge against an independent
// implementation. Reads have deadlines; nothing sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "support/tcp_client.hpp"

namespace flockbridge::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< names in lower case
  std::string body;
};

/// GET `path` from 127.0.0.1:port (HTTP/1.1, Connection: close).
std::optional<HttpResponse> http_get(std::uint16_t port, const std::string& path,
                                     std::chrono::milliseconds timeout = 5s);

class WebSocketClient {
 public:
  enum Opcode : std::uint8_t { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

  /// Connects to 127.0.0.1:port and upgrades `path`, with an Origin header
  /// when `origin` is not empty (as a browser sends), asking for
  /// `subprotocol` when it is not empty. `accepted()` tells whether the
  /// server switched protocols (and chose the subprotocol asked for).
  explicit WebSocketClient(std::uint16_t port, const std::string& path = "/ws", int receive_buffer = 0,
                           const std::string& origin = {}, const std::string& subprotocol = {});

  [[nodiscard]] bool accepted() const noexcept { return accepted_; }
  /// The server's answer to the upgrade request, up to the blank line.
  [[nodiscard]] const std::string& handshake_response() const noexcept { return response_; }

  void send_text(const std::string& text) { send_frame(Text, text, true); }
  void send_json(const nlohmann::json& message) { send_text(message.dump()); }
  /// One frame, masked as a client's must be.
  void send_frame(Opcode opcode, const std::string& payload, bool fin);
  /// Sends a close frame with `code`.
  void close(int code = 1000);

  /// A whole message: its opcode (Text or Binary) and payload.
  struct Message {
    Opcode opcode;
    std::string payload;
  };
  /// The next whole message (fragments joined, pings answered); nothing on
  /// timeout or once the server has closed.
  std::optional<Message> read_message(std::chrono::milliseconds timeout = 5s);
  /// The next whole message, text or binary, as its payload.
  std::optional<std::string> read_text(std::chrono::milliseconds timeout = 5s);
  std::optional<nlohmann::json> read_json(std::chrono::milliseconds timeout = 5s);
  /// The next JSON message whose "type" is `type`, skipping others.
  std::optional<nlohmann::json> read_json_type(const std::string& type, std::chrono::milliseconds timeout = 5s);
  /// Reads until the server's close frame or the end of the connection.
  bool wait_closed(std::chrono::milliseconds timeout = 5s);

  /// The server's close frame: its code (0 when none came) and reason.
  [[nodiscard]] int close_code() const noexcept { return close_code_; }
  [[nodiscard]] const std::string& close_reason() const noexcept { return close_reason_; }
  [[nodiscard]] TcpClient& tcp() noexcept { return tcp_; }

 private:
  struct Frame {
    bool fin;
    std::uint8_t opcode;
    std::string payload;
  };
  /// The next frame from the buffer, reading more until the deadline.
  std::optional<Frame> read_frame(std::chrono::steady_clock::time_point deadline);

  TcpClient tcp_;
  bool accepted_ = false;
  std::string response_;
  std::string partial_;  ///< a fragmented message so far
  Opcode partial_opcode_ = Text;
  int close_code_ = 0;
  std::string close_reason_;
  bool closed_ = false;
};

}  // namespace flockbridge::testing
