// One client of the bridge: a client of the robot family's own port (in
// the original software's protocol), a JSON-lines client on port 2006, or
// a WebSocket client of the web server (/ws).
//
// Session holds what every client has, whatever carries its bytes: the
// bounded OutputQueue (latest-wins sensor messages, dropped notices), the
// sensor subscription and its throttle, the command rate limit, the
// commands still waiting for the robot, and the rules for closing. A
// transport (TcpSession, WebSocketSession) reads the client's messages,
// hands each to handle_message(), and writes what the queue holds.
//
// A session is never destroyed from inside its own callbacks: close() starts
// closing the transport and tells the Host (the Bridge), which erases the
// session later.
//
// A client of the family's own port (a NativeClient reads its bytes) speaks
// the original robot software's dialect until it asks for the bridge's own
// messages (where its protocol has a way to: native_input::BridgeMessages):
// send() withholds, and counts, every message such a client would not
// parse, and what it did wrong is logged and counted instead of answered
// with ERR.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/access.hpp"
#include "flockbridge/bridge/client_kind.hpp"
#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/bridge/rate_limiter.hpp"
#include "flockbridge/bridge/send_batch.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/client_request.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge {

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
    /// A JSON command for the robot (anything but the bridge's own
    /// requests), for the robot's driver to read: `object` is the whole
    /// command, `cmd` its name.
    virtual void session_robot_command(Session& session, std::string_view cmd, const nlohmann::json& object,
                                       const nlohmann::json& id) = 0;
    /// A client of the native port gave up the robot (native_input::Release).
    virtual void session_released(Session& session) = 0;
    /// The client's side has ended (see input_over): call finish_input_over()
    /// now or in a later loop turn.
    virtual void session_input_over(Session& session) = 0;
    /// The session has started closing; erase it once the current callback is over.
    virtual void session_closed(Session& session) = 0;
    /// The bridge answered a request of the session (`error` null: done;
    /// `told`: whether the client got the answer, which a program of the
    /// original software is not sent), for the recording.
    virtual void session_answered(const Session& /*session*/, const nlohmann::json& /*id*/,
                                  const protocol::Error* /*error*/, std::optional<bool> /*confirmed*/, bool /*told*/) {}
  };

  /// Why a session closed, for the counters.
  enum class CloseKind {
    Normal,    ///< the client left, or was refused
    Stalled,   ///< it took none of its data for the stall timeout
    Behind,    ///< too many messages waited for it
    Dead,      ///< its connection failed or its network vanished
    Protocol,  ///< it broke the framing (a WebSocket message left incomplete, a native message of no known type)
    Shutdown,  ///< the bridge is stopping
  };

  /// `native` reads a Binary client's bytes (null for the others).
  Session(Host& host, std::uint64_t id, ClientKind kind, const Config& config, protocol::BridgeCounters& counters,
          std::unique_ptr<NativeClient> native = nullptr);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  virtual ~Session() = default;

  /// Starts reading; JSON and WebSocket clients are subscribed to sensor
  /// messages from the start.
  void start(SharedBuffer greeting);
  /// Sends `refusal` and closes without reading anything.
  void refuse(SharedBuffer refusal);
  /// A client that found its port full, let in on probation: it is sent
  /// `notice` and nothing of the robot's, and is closed at `until` unless
  /// let_in() first (the teacher's room: only the teacher's secret lets it
  /// in).
  void knock(SharedBuffer notice, SteadyTime until);
  void let_in();
  [[nodiscard]] bool knocking() const noexcept { return knocking_until_.has_value(); }
  /// Closes the connection (idempotent) and logs why.
  void close(std::string_view reason, CloseKind kind = CloseKind::Normal);
  /// Ends what the transport reported through input_over(): the session
  /// answers what the client sent and closes, or closes as lost. The Host
  /// calls it once (later calls do nothing).
  void finish_input_over();

  /// Queues a message that must not be lost; a client too far behind is closed.
  /// A message that a client of the family's port in the original dialect
  /// would not parse is withheld (and counted) instead.
  void send(SharedBuffer message, MessageOrigin origin = MessageOrigin::Bridge);
  /// Queues a sensor message and notes the time for throttling. While the
  /// client is behind (a write waits for it), a newer message replaces the
  /// one waiting (latest wins). With `hold` the message is not written yet:
  /// the Host holds every sensor message of one serial read and then calls
  /// flush_output(), so that a client gets a burst in one write. Returns
  /// true when this call started holding the session's output (the Host
  /// must then flush it).
  bool send_sensor(SharedBuffer message, SteadyTime now, bool hold = false);
  /// Writes what was held: into `batch` when the transport writes a socket
  /// itself (the Host then sends the batch and calls write_sent), else at once.
  void flush_output(SendBatch& batch);
  /// A write this session put in a batch has been sent.
  virtual void write_sent(const SendBatch::Result& /*result*/) {}
  [[nodiscard]] bool wants_sensor(SteadyTime now) const noexcept;

  /// `confirmed` for a command that went to the robot: whether the robot acknowledged it.
  void reply_ok(const nlohmann::json& id, std::optional<bool> confirmed = std::nullopt);
  /// A notice in this client's encoding (its family's dialect on the
  /// family's own port); null when the encoding has no words for it.
  /// `id` is the request's, for an answer.
  [[nodiscard]] SharedBuffer encode(const Notice& notice, const nlohmann::json& id = nullptr) const;
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

  /// Whether the client gets every message of its encoding: JSON and
  /// WebSocket clients always, a family's own programs once they asked for
  /// the bridge's own messages (native_input::BridgeMessages), if their
  /// protocol has a way to.
  [[nodiscard]] bool extended() const noexcept { return extended_; }
  /// Whether this client's motion commands need the robot's control (one
  /// program drives at a time through its port).
  [[nodiscard]] bool exclusive_control() const noexcept { return native_ && native_->exclusive_control(); }
  /// When the client last sent anything.
  [[nodiscard]] SteadyTime last_input() const noexcept { return last_input_; }
  /// A motion command of this client's was not forwarded: another holds the robot's control.
  void count_refused() noexcept { ++refused_; }

  /// What the client may do (the Bridge sets it at connect and at auth).
  [[nodiscard]] Role role() const noexcept { return role_; }
  void set_role(Role role) noexcept { role_ = role; }
  /// On the class hub: the client asked for the fleet's messages.
  void follow_fleet() noexcept { follows_fleet_ = true; }
  [[nodiscard]] bool follows_fleet() const noexcept { return follows_fleet_; }
  /// The peer's address without its port: whom a wrong secret makes wait.
  [[nodiscard]] std::string address() const;
  /// Logs a line about what this client did, within the log's bounds for
  /// its cause (log_cause) and address.
  void log_event(LogLevel level, std::string_view cause, std::string_view message) const;

  /// Closes a client whose output has been stuck too long, then lets the
  /// transport expire what it must. Call it a few times a second.
  void housekeeping(SteadyTime now);

  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] ClientKind kind() const noexcept { return kind_; }
  [[nodiscard]] Encoding encoding() const noexcept { return encoding_of(kind_); }
  [[nodiscard]] const std::string& peer() const noexcept { return peer_; }
  [[nodiscard]] bool closing() const noexcept { return closing_; }
  /// Why the session closed (Normal until it has).
  [[nodiscard]] CloseKind close_kind() const noexcept { return close_kind_; }
  /// The client's TCP socket, for the close watch on a driver (-1 when it has none now).
  [[nodiscard]] virtual int socket_fd() const noexcept { return -1; }
  [[nodiscard]] bool refusing() const noexcept { return refusing_; }
  [[nodiscard]] protocol::ClientSnapshot snapshot() const;

 protected:
  /// One whole JSON message from the client: parsed, then answered or handed to the Host.
  void handle_message(protocol::ByteView body);
  /// Bytes from a client of the native port: read by its NativeClient,
  /// then answered or handed to the Host.
  void handle_native_bytes(protocol::ByteView bytes, SteadyTime now);
  /// A native client chose the bridge's own messages, or its original ones.
  void choose_messages(native_input::BridgeMessages& choice);
  /// Discards a native message left incomplete for the message timeout, and says so.
  void expire_native_input(SteadyTime now);
  /// Tells the client that a message it left incomplete was discarded.
  void report_incomplete(std::size_t bytes);
  /// Notes that the client sent something.
  void note_input(SteadyTime now) noexcept { last_input_ = now; }
  /// The client has finished sending (`lost` empty: it may still read, and
  /// its answers are sent before the session closes) or its connection is
  /// gone (`lost` says why). The Host decides when the session ends: a
  /// class leaving at once costs each session its close, its log line and
  /// its bookkeeping, and a thousand of them in one loop turn would hold the
  /// robot's link up, so they are taken a share at a time.
  void input_over(std::string lost = {});
  /// What to write next, oldest first: a dropped notice when sensor messages
  /// were lost since the last one, then up to `most` queued messages.
  [[nodiscard]] std::vector<SharedBuffer> take_output(std::size_t most);
  /// The same, appended to `into`.
  void take_output(std::size_t most, std::vector<SharedBuffer>& into);
  [[nodiscard]] bool output_empty() const noexcept { return queue_.empty(); }
  /// The transport could not hand everything to the kernel and waits for
  /// the client to read; a wait longer than the stall timeout closes it.
  void set_writing(bool writing) noexcept;
  [[nodiscard]] bool writing() const noexcept { return writing_; }
  /// After a write: closes a refused client once its refusal went out, or a
  /// client that has stopped sending once it has had every answer.
  void after_write();

  /// Starts reading the client's messages.
  virtual void start_transport() = 0;
  /// Writes what the queue holds, as far as the transport can now.
  virtual void flush() = 0;
  /// Puts the queue's next write into `batch`; false when the transport
  /// does not batch, or has nothing to write now.
  virtual bool add_write(SendBatch& /*batch*/) { return false; }
  /// Closes the connection; the session is erased soon after.
  virtual void close_transport(std::string_view reason, CloseKind kind) = 0;
  /// Transport-specific expiry (a message left incomplete, say).
  virtual void transport_housekeeping(SteadyTime /*now*/) {}

  const Config& config_;
  protocol::BridgeCounters& counters_;
  std::string peer_;

 private:
  void finish_if_done();
  /// Queues a message whatever the client's dialect.
  void queue_message(SharedBuffer message);

  Host& host_;
  std::uint64_t id_;
  Role role_ = Role::Viewer;
  ClientKind kind_;
  std::unique_ptr<NativeClient> native_;
  SteadyTime last_input_{};
  OutputQueue queue_;
  RateLimiter limiter_;
  std::uint64_t commands_ = 0;
  std::uint64_t refused_ = 0;   ///< messages of the client's that were refused
  std::uint64_t withheld_ = 0;  ///< messages not sent: not in the client's dialect
  bool extended_;               ///< the client gets the bridge's own messages (see extended())
  bool writing_ = false;
  SteadyTime write_started_{};
  bool closing_ = false;
  CloseKind close_kind_ = CloseKind::Normal;
  bool refusing_ = false;
  std::optional<SteadyTime> knocking_until_;
  bool input_closed_ = false;
  bool input_over_waiting_ = false;  ///< reported, not yet finished by the Host
  std::string lost_;                 ///< why the connection was lost ("": the client finished sending)
  std::size_t pending_commands_ = 0;
  bool subscribed_ = false;
  bool follows_fleet_ = false;
  bool output_held_ = false;
  std::chrono::milliseconds interval_{0};
  SteadyTime last_sensor_{};
};

}  // namespace flockbridge::bridge
