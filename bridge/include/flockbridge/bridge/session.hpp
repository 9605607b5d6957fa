// One TCP client of the bridge, on port 2005 (binary) or 2006 (JSON lines).
//
// A session reads and splits the client's messages, hands each request to
// its Host (the Bridge), and writes what the bridge sends it through a
// bounded OutputQueue with at most one write in flight. It is never
// destroyed from inside its own callbacks: close() starts closing the socket
// and tells the Host, which erases the session later.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/bridge/rate_limiter.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/client_codec.hpp"
#include "flockbridge/protocol/message_decoder.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge {

enum class ClientKind : std::uint8_t { Binary, Json };

[[nodiscard]] std::string_view client_kind_name(ClientKind kind) noexcept;

class Session {
 public:
  class Host {
   public:
    Host() = default;
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    virtual ~Host() = default;
    /// A well-formed request; `id` is the JSON command's id (null for binary clients).
    virtual void session_request(Session& session, protocol::ClientRequest request, const nlohmann::json& id) = 0;
    /// The session has started closing; erase it once the current callback is over.
    virtual void session_closed(Session& session) = 0;
  };

  /// Why a session closed, for the counters.
  enum class CloseKind { Normal, Stalled, Behind, Dead };

  Session(uv_loop_t* loop, Host& host, std::uint64_t id, ClientKind kind, const Config& config,
          protocol::BridgeCounters& counters);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  /// Accepts the pending connection of `server`. Returns a libuv code.
  [[nodiscard]] int accept(uv_stream_t* server);
  /// Starts reading; JSON clients are subscribed to sensor messages from the start.
  void start(SharedBuffer greeting);
  /// Sends `refusal` and closes without reading anything.
  void refuse(SharedBuffer refusal);
  /// Closes the connection (idempotent) and logs why.
  void close(std::string_view reason, CloseKind kind = CloseKind::Normal);

  /// Queues a message that must not be lost; a client too far behind is closed.
  void send(SharedBuffer message);
  /// Queues a sensor message (latest wins) and notes the time for throttling.
  void send_sensor(SharedBuffer message, SteadyTime now);
  [[nodiscard]] bool wants_sensor(SteadyTime now) const noexcept;

  void reply_ok(const nlohmann::json& id, bool acknowledged = false);
  /// Tells the client why its message was refused or its command failed, and counts it.
  void reply_error(const nlohmann::json& id, const protocol::Error& error);

  /// Takes a token of the client's command rate; false when it sends too fast.
  [[nodiscard]] bool allow_command(SteadyTime now) noexcept { return limiter_.allow(now); }

  /// A command of this client went to the link; the session stays open until
  /// it is finished, even after the client has stopped sending.
  void command_started() noexcept {
    ++pending_commands_;
    ++commands_;
  }
  void command_finished();

  void subscribe(std::uint32_t interval_ms);
  void unsubscribe() noexcept { subscribed_ = false; }

  /// Discards a message left incomplete too long; closes a client whose
  /// writes have been stuck too long. Call it a few times a second.
  void housekeeping(SteadyTime now);

  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] ClientKind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& peer() const noexcept { return peer_; }
  [[nodiscard]] bool closing() const noexcept { return closing_; }
  [[nodiscard]] bool refusing() const noexcept { return refusing_; }
  [[nodiscard]] protocol::ClientSnapshot snapshot() const;

 private:
  void watch_for_dead_peer();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void handle_message(protocol::ByteView body);
  void flush();
  void on_write_done(int status);
  /// Closes a client that has stopped sending once it has had every answer.
  void finish_if_done();

  uv_loop_t* loop_;
  Host& host_;
  std::uint64_t id_;
  ClientKind kind_;
  const Config& config_;
  protocol::BridgeCounters& counters_;
  UvHandle<uv_tcp_t> tcp_;
  std::string peer_;
  protocol::MessageDecoder decoder_;
  OutputQueue queue_;
  RateLimiter limiter_;
  std::uint64_t commands_ = 0;
  bool writing_ = false;
  SteadyTime write_started_{};
  bool closing_ = false;
  bool refusing_ = false;
  bool input_closed_ = false;
  std::size_t pending_commands_ = 0;
  bool subscribed_ = false;
  std::chrono::milliseconds interval_{0};
  SteadyTime last_sensor_{};
};

}  // namespace flockbridge::bridge
