// The bridge's web server, on the bridge's own libuv loop: the dashboard's
// files at /, and at /ws a WebSocket that speaks the JSON messages of port
// 2006, one JSON object per text message; and, on a port of its own, the
// live view for Foxglove and Lichtblick (foxglove_session.hpp), the same
// messages in the Foxglove WebSocket protocol.
//
// HTTP and WebSocket are libwebsockets' (Debian's libwebsockets17, whose
// libuv glue is the libwebsockets-evlib-uv plugin): it joins the loop as a
// "foreign loop" and adds its own handles to it. Its context is destroyed
// in two steps, because libuv closes handles asynchronously: stop() starts
// it from inside the loop, the loop then runs until lws's handles have
// closed, and the destructor finishes it.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flockbridge/bridge/address_slots.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/protocol/bytes.hpp"

struct lws;
struct lws_context;

namespace flockbridge::bridge {

struct ServerLink;
struct WebSocketConnection;

/// A WebSocket client: of /ws (this class), or of the Foxglove live view
/// (FoxgloveSession, which frames the same messages its own way). lws owns
/// the connection; the session is told of it through the WebServer's
/// callback, and lets go of it (detach) when it closes first, so that lws's
/// later callbacks for it find no session.
class WebSocketSession : public Session {
 public:
  /// `connection` is lws's memory for this connection, which points back
  /// at the session until the session lets go of it.
  WebSocketSession(Host& host, std::uint64_t id, const Config& config, protocol::BridgeCounters& counters, lws* wsi,
                   WebSocketConnection* connection, ClientKind kind = ClientKind::WebSocket);
  WebSocketSession(const WebSocketSession&) = delete;
  WebSocketSession& operator=(const WebSocketSession&) = delete;
  ~WebSocketSession() override;

  /// A piece of a message from the client; `last` when it ends the message.
  void on_receive(const char* data, std::size_t length, bool last, bool binary);
  /// The socket can take a message.
  void on_writeable();
  /// The client sent a WebSocket close with this code.
  void on_peer_close(int code) noexcept { peer_close_code_ = code; }
  /// lws has closed the connection.
  void on_transport_closed();
  [[nodiscard]] int socket_fd() const noexcept override;

 protected:
  /// How a frame goes out.
  enum class Frame : std::uint8_t { None, Text, Binary };
  /// A whole message from the client (at most clients.max_line bytes).
  virtual void on_message(std::string_view message, bool binary);
  /// Appends the next frame's payload to `out` and says how it goes; None
  /// when there is nothing to write now.
  virtual Frame next_frame(std::vector<unsigned char>& out);
  /// Whether anything waits to be written.
  [[nodiscard]] virtual bool frames_waiting() const;
  void flush() override;

 private:
  void start_transport() override {}
  void close_transport(std::string_view reason, CloseKind kind) override;
  void transport_housekeeping(SteadyTime now) override;
  void detach() noexcept;

  lws* wsi_;
  WebSocketConnection* connection_;
  /// Taken from the queue, not yet written: at most a dropped notice and one message.
  std::deque<SharedBuffer> taken_;
  std::string message_;  ///< the client's message so far
  bool in_message_ = false;
  bool message_binary_ = false;
  bool message_too_long_ = false;
  SteadyTime message_started_{};
  int peer_close_code_ = 0;
};

class WebServer {
 public:
  class Host {
   public:
    Host() = default;
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    virtual ~Host() = default;
    /// A WebSocket client has connected to /ws (`foxglove` false) or to
    /// the Foxglove live view: make its session (it may refuse the client),
    /// or return nullptr to close the connection.
    virtual WebSocketSession* websocket_opened(lws* wsi, WebSocketConnection* connection, bool foxglove) = 0;
  };

  struct Settings {
    bool http = true;        ///< the dashboard and /ws (off: the Foxglove live view alone)
    std::string bind;        ///< IPv4 or IPv6 address
    std::uint16_t port = 0;  ///< 0: any free port
    bool foxglove = false;   ///< the Foxglove live view, on its own port
    std::string foxglove_bind;
    std::uint16_t foxglove_port = 0;
    std::string root;  ///< folder of the dashboard's files
    /// The page of "/": the robot's dashboard, or the class's page (fleet.html) on a hub with no robot.
    std::string home = "index.html";
    unsigned fd_limit = 1024;  ///< highest file descriptor lws may be handed, plus one
    /// HTTPS and WSS: the certificate's and key's PEM files; both empty: plain HTTP.
    std::string tls_cert;
    std::string tls_key;
    /// Host names whose pages may open /ws besides the bridge's own (access.allowed_origins).
    std::vector<std::string> allowed_origins;
    /// Connections per computer over every port (the bridge's), which each
    /// connection of this server takes one of; none: not limited.
    AddressSlots* slots = nullptr;
  };

  WebServer(uv_loop_t* loop, Host& host);
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;
  ~WebServer();

  /// Starts listening; fails with the reason when the address or port
  /// cannot be had or the dashboard's folder has no index.html.
  [[nodiscard]] protocol::Result<protocol::Done> start(Settings settings);
  /// Closes the listener and every connection (WebSocket clients get their
  /// close frames first, for at most a second); the loop finishes it.
  void stop();

  [[nodiscard]] std::uint16_t port() const noexcept { return bound_port_; }
  [[nodiscard]] std::uint16_t foxglove_port() const noexcept { return bound_foxglove_port_; }
  /// New access.allowed_origins (a reload), for the upgrades to come.
  void set_allowed_origins(std::vector<std::string> hosts) { settings_.allowed_origins = std::move(hosts); }

  /// Gives back the slots of connections lws has closed since (the
  /// bridge's housekeeping calls it; lws tells of no close of a connection
  /// that never became a WebSocket).
  void sweep_connections();

  /// The default folder of the dashboard: share/flockbridge/www beside the
  /// program's own bin/ folder (as installed, and as built in build/).
  [[nodiscard]] static std::string default_root();

 private:
  friend struct WebServerCallbacks;  // lws's callback, in web_server.cpp

  uv_loop_t* loop_;
  Host& host_;
  Settings settings_;
  lws_context* context_ = nullptr;
  ServerLink* link_ = nullptr;  ///< freed once lws has finished with it
  /// The connections from other computers, by descriptor: whose slot each
  /// holds, and its socket's inode (a descriptor that is closed, or is
  /// another socket's now, has given its slot back).
  struct Counted {
    std::string computer;
    ino_t inode;
  };
  std::unordered_map<int, Counted> counted_;
  /// Whether a connection just accepted may stay (FILTER_NETWORK_CONNECTION).
  [[nodiscard]] bool admit_connection(int fd);
  std::uint16_t bound_port_ = 0;
  std::uint16_t bound_foxglove_port_ = 0;
};

}  // namespace flockbridge::bridge
