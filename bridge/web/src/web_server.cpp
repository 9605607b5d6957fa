#include "flockbridge/bridge/web_server.hpp"

#include <arpa/inet.h>
#include <libwebsockets.h>
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>
#include <vector>

#include "flockbridge/bridge/access.hpp"
#include "flockbridge/bridge/client_socket.hpp"
#include "flockbridge/bridge/host_address.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/foxglove/foxglove.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Done;
using protocol::Error;
using protocol::Result;

/// "Try again later" (RFC 6455's registry; lws has no name for it).
constexpr auto kCloseTryAgainLater = static_cast<lws_close_status>(1013);
/// A close frame's reason fits in 123 bytes.
constexpr std::size_t kMaxCloseReason = 123;
/// Seconds a connection may take to say what it wants (a request's
/// headers, a TLS handshake) and to finish any exchange lws waits on.
constexpr unsigned kHandshakeSeconds = 5;

/// lws writes a WebSocket frame's header into the LWS_PRE bytes in front of
/// the payload, so every message is copied behind such room before it is
/// written. One buffer serves every connection: lws keeps what the socket
/// did not take in a buffer of its own.
thread_local std::vector<unsigned char> t_write_buffer;

/// lws's warnings that only echo a refusal the bridge has logged itself,
/// with the address and the reason, within the bounds on lines about
/// clients: at debug level, so a flood of refused WebSockets is not told
/// twice.
constexpr std::array<std::string_view, 1> kEchoesOfOurRefusals{"User code denied connection"};

/// lws's log lines, in the bridge's log: errors and warnings as such, its
/// notices only at debug level.
void log_from_lws(int level, const char* line) {
  std::string text = "web server: " + std::string(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const bool echo = std::any_of(kEchoesOfOurRefusals.begin(), kEchoesOfOurRefusals.end(),
                                [&](std::string_view echoed) { return text.find(echoed) != std::string::npos; });
  if ((level & LLL_ERR) != 0) {
    log_error(text);
  } else if ((level & LLL_WARN) != 0 && !echo) {
    log_warning(text);
  } else {
    log_debug(text);
  }
}

lws_close_status close_status(Session::CloseKind kind, bool refusing) {
  using CloseKind = Session::CloseKind;
  if (refusing) return kCloseTryAgainLater;
  switch (kind) {
    case CloseKind::Normal:
      return LWS_CLOSE_STATUS_NORMAL;
    case CloseKind::Shutdown:
      return LWS_CLOSE_STATUS_GOINGAWAY;
    case CloseKind::Stalled:
    case CloseKind::Behind:
    case CloseKind::Protocol:
      return LWS_CLOSE_STATUS_POLICY_VIOLATION;
    case CloseKind::Dead:
      return LWS_CLOSE_STATUS_NOSTATUS;
  }
  return LWS_CLOSE_STATUS_NORMAL;
}

}  // namespace

/// lws's memory for one /ws connection (zeroed by lws): its session while
/// the session has it, and whether the connection is to be closed with the
/// close frame lws_close_reason() has set.
struct WebSocketConnection {
  WebSocketSession* session;
  bool close_pending;
  bool counted;
};

/// What lws points at, kept until its context is freed (which may be after
/// the WebServer is gone): the server while it runs (lws's context "user"),
/// nothing once it has stopped, so that lws's callbacks while it finishes
/// closing never reach a server that is gone; the number of open WebSocket
/// connections, so that stopping can let their close frames out; and the
/// mounts of the dashboard's folder, which lws reads for every page request:
/// / (the robot's dashboard, or the class hub's page on a hub with no robot)
/// and /fleet (the class hub's page, fleet.html).
struct ServerLink {
  WebServer* server = nullptr;
  lws_vhost* foxglove = nullptr;  ///< the Foxglove live view's vhost, if it serves one
  std::size_t websockets = 0;
  std::string root;
  std::string home;
  lws_http_mount mount{};
  lws_http_mount fleet_mount{};
};

namespace {

/// Destroys an lws context on a foreign libuv loop, in three steps on a
/// timer of its own (it owns itself, so the WebServer may be long gone):
///  1. wait, for at most a second, until the WebSocket clients have had
///     their close frames and closed;
///  2. lws_context_destroy() starts closing lws's libuv handles, whose close
///     callbacks still use the context and the evlib plugin's code;
///  3. once no handle of the loop is still closing, lws_context_destroy()
///     again frees both.
void destroy_on_loop(uv_loop_t* loop, lws_context* context, ServerLink* link) {
  struct Destroyer {
    uv_timer_t timer{};
    lws_context* context = nullptr;
    ServerLink* link = nullptr;
    bool started = false;
    int ticks = 0;
  };
  constexpr int kMostCloseTicks = 1000;   // close frames: a second at most
  constexpr int kMostFinishTicks = 3000;  // handle closes take one loop turn
  auto* destroyer = new Destroyer;
  destroyer->context = context;
  destroyer->link = link;
  destroyer->timer.data = destroyer;
  uv_timer_init(loop, &destroyer->timer);
  const auto step = [](uv_timer_t* timer) {
    auto* self = static_cast<Destroyer*>(timer->data);
    ++self->ticks;
    if (!self->started) {
      if (self->link->websockets > 0 && self->ticks < kMostCloseTicks) return;
      self->started = true;
      lws_context_destroy(self->context);
      return;
    }
    bool closing = false;
    uv_walk(
        timer->loop,
        [](uv_handle_t* handle, void* found) {
          if (uv_is_closing(handle) != 0) *static_cast<bool*>(found) = true;
        },
        &closing);
    if (closing && self->ticks < kMostFinishTicks) return;
    if (closing) log_warning("web server: libuv handles still closing; freeing the web server's context anyway");
    lws_context_destroy(self->context);
    delete self->link;
    uv_timer_stop(timer);
    uv_close(reinterpret_cast<uv_handle_t*>(timer),
             [](uv_handle_t* handle) { delete static_cast<Destroyer*>(handle->data); });
  };
  uv_timer_start(&destroyer->timer, step, 0, 1);
}

}  // namespace

struct WebServerCallbacks {
  static int callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, std::size_t length);
  /// Whether the page behind a /ws upgrade may open it (origin_allowed); logs a refusal.
  static bool accepts_origin(const WebServer& server, lws* wsi);
};

namespace {

const lws_protocols kProtocols[] = {
    // The first protocol serves HTTP too, and every /ws upgrade that names no
    // subprotocol (a browser's `new WebSocket(url)`) is bound to it.
    {"flockbridge.json.v1", &WebServerCallbacks::callback, sizeof(WebSocketConnection), 4096, 0, nullptr, 0},
    {nullptr, nullptr, 0, 0, 0, nullptr, 0},
};

/// The Foxglove live view's vhost speaks its one subprotocol (lws refuses an
/// upgrade that asks for another).
const lws_protocols kFoxgloveProtocols[] = {
    // (a literal's view: its data ends in the NUL lws reads to)
    {protocol::foxglove::kSubprotocol.data(), &WebServerCallbacks::callback, sizeof(WebSocketConnection), 4096, 0,
     nullptr, 0},
    {nullptr, nullptr, 0, 0, 0, nullptr, 0},
};

/// Whether an upgrade asks for Foxglove's subprotocol among those it names
/// (Sec-WebSocket-Protocol: a list separated by commas).
bool asks_for_foxglove(lws* wsi) {
  const int length = lws_hdr_total_length(wsi, WSI_TOKEN_PROTOCOL);
  if (length <= 0) return false;
  std::string header(static_cast<std::size_t>(length) + 1, '\0');
  header.resize(
      static_cast<std::size_t>(std::max(lws_hdr_copy(wsi, header.data(), length + 1, WSI_TOKEN_PROTOCOL), 0)));
  std::string_view rest(header);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name == protocol::foxglove::kSubprotocol) return true;
  }
  return false;
}

}  // namespace

// ---- WebSocketSession -------------------------------------------------------

WebSocketSession::WebSocketSession(Host& host, std::uint64_t id, const Config& config,
                                   protocol::BridgeCounters& counters, lws* wsi, WebSocketConnection* connection,
                                   ClientKind kind)
    : Session(host, id, kind, config, counters), wsi_(wsi), connection_(connection) {
  connection_->session = this;
  const int fd = lws_get_socket_fd(wsi_);
  peer_ = peer_name(fd);
  tune_client_socket(fd, config_);
}

WebSocketSession::~WebSocketSession() {
  detach();
}

int WebSocketSession::socket_fd() const noexcept {
  return wsi_ == nullptr || closing() ? -1 : lws_get_socket_fd(wsi_);
}

void WebSocketSession::detach() noexcept {
  if (connection_ != nullptr) connection_->session = nullptr;
  connection_ = nullptr;
  wsi_ = nullptr;
}

void WebSocketSession::on_receive(const char* data, std::size_t length, bool last, bool binary) {
  if (!in_message_) {
    in_message_ = true;
    message_.clear();
    message_binary_ = binary;
    message_too_long_ = false;
    message_started_ = steady_now();
  }
  if (!message_too_long_) {
    if (message_.size() + length > config_.max_line) {
      message_too_long_ = true;
      message_.clear();
    } else {
      message_.append(data, length);
    }
  }
  if (!last) return;
  in_message_ = false;
  if (message_too_long_) {
    reply_error(nullptr,
                protocol::Error{"message longer than " + std::to_string(config_.max_line) + " bytes; discarded"});
  } else {
    on_message(message_, message_binary_);
  }
  message_.clear();
}

void WebSocketSession::on_message(std::string_view message, bool binary) {
  if (binary) {
    reply_error(nullptr, protocol::Error{"binary WebSocket messages are not understood: send each JSON command as a "
                                         "text message"});
    return;
  }
  handle_message(protocol::ByteView(reinterpret_cast<const protocol::Byte*>(message.data()), message.size()));
}

WebSocketSession::Frame WebSocketSession::next_frame(std::vector<unsigned char>& out) {
  if (taken_.empty()) {
    for (SharedBuffer& message : take_output(1)) taken_.push_back(std::move(message));
  }
  if (taken_.empty()) return Frame::None;
  const SharedBuffer message = std::move(taken_.front());
  taken_.pop_front();
  const std::string_view text = wire::without_line_end(*message);
  out.insert(out.end(), text.begin(), text.end());
  return Frame::Text;
}

bool WebSocketSession::frames_waiting() const {
  return !taken_.empty() || !output_empty();
}

void WebSocketSession::flush() {
  if (wsi_ == nullptr || closing() || writing()) return;
  if (!frames_waiting()) {
    after_write();
    return;
  }
  set_writing(true);
  lws_callback_on_writable(wsi_);
}

void WebSocketSession::on_writeable() {
  set_writing(false);
  if (wsi_ == nullptr || closing()) return;
  // One message a callback (lws's rule: one lws_write per writeable
  // callback); taking one at a time leaves the rest in the queue, where a
  // newer sensor message can still replace an older one.
  t_write_buffer.resize(LWS_PRE);
  const Frame frame = next_frame(t_write_buffer);
  if (frame != Frame::None) {
    const std::size_t length = t_write_buffer.size() - LWS_PRE;
    const int written = lws_write(wsi_, t_write_buffer.data() + LWS_PRE, length,
                                  frame == Frame::Text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
    if (written < static_cast<int>(length)) {
      close("write failed", CloseKind::Dead);
      return;
    }
  }
  flush();
}

void WebSocketSession::on_transport_closed() {
  detach();
  if (peer_close_code_ != 0) {
    close("disconnected (WebSocket close " + std::to_string(peer_close_code_) + ")");
  } else {
    close("connection closed without a WebSocket close");
  }
}

void WebSocketSession::close_transport(std::string_view reason, CloseKind kind) {
  if (wsi_ == nullptr) return;
  lws* wsi = wsi_;
  WebSocketConnection* connection = connection_;
  detach();
  const lws_close_status status = close_status(kind, refusing());
  if (status == LWS_CLOSE_STATUS_NOSTATUS) {
    // Its connection failed: nothing can be said to it.
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    return;
  }
  // lws's way to close with a reason: set it, then return -1 from a
  // callback of the connection. It must be the connection's timer callback:
  // lws takes -1 from a writeable callback for a failed socket and closes
  // without the close frame. A client that does not let the close frame out
  // is cut off after a few seconds.
  const std::string text(reason.substr(0, kMaxCloseReason));
  lws_close_reason(wsi, status, reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())), text.size());
  connection->close_pending = true;
  lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 5);
  lws_set_timer_usecs(wsi, 1);
  // When this runs outside lws's own callbacks (a housekeeping timer, the
  // bridge stopping), lws must be woken to take the new timer into account.
  lws_cancel_service(lws_get_context(wsi));
}

void WebSocketSession::transport_housekeeping(SteadyTime now) {
  // A message cannot be resynchronised inside a WebSocket stream: one left
  // incomplete ends the connection, with the reason.
  if (in_message_ && now - message_started_ >= config_.message_timeout) {
    close("incomplete message: not finished within " + std::to_string(config_.message_timeout.count()) + " ms",
          CloseKind::Protocol);
  }
}

// ---- WebServer --------------------------------------------------------------

WebServer::WebServer(uv_loop_t* loop, Host& host) : loop_(loop), host_(host) {}

WebServer::~WebServer() {
  stop();
}

std::string WebServer::default_root() {
  std::array<char, 4096> path{};
  std::size_t size = path.size();
  if (uv_exepath(path.data(), &size) != 0) return "/usr/share/flockbridge/www";
  const std::filesystem::path program(std::string(path.data(), size));
  return (program.parent_path().parent_path() / "share" / "flockbridge" / "www").string();
}

Result<Done> WebServer::start(Settings settings) {
  settings_ = std::move(settings);
  std::error_code ignored;
  if (settings_.http &&
      !std::filesystem::is_regular_file(std::filesystem::path(settings_.root) / "index.html", ignored)) {
    return Error{"the dashboard's files are not in '" + settings_.root +
                 "' (no index.html there): give their folder with --http-root, or turn the web server off with "
                 "--no-http"};
  }
  const bool tls = !settings_.tls_cert.empty() || !settings_.tls_key.empty();
  if (tls) {
    if (settings_.tls_cert.empty() || settings_.tls_key.empty()) {
      return Error{"http.tls_cert and http.tls_key go together: give both for https, or neither"};
    }
    for (const std::string* file : {&settings_.tls_cert, &settings_.tls_key}) {
      if (std::ifstream readable(*file); !readable) {
        return Error{"cannot read '" + *file + "' for the dashboard's TLS: " + std::strerror(errno)};
      }
    }
  }
  lws_set_log_level(LLL_ERR | LLL_WARN | LLL_NOTICE, log_from_lws);

  link_ = new ServerLink{this, nullptr, 0, settings_.root, settings_.home, {}, {}};
  for (lws_http_mount* each : {&link_->mount, &link_->fleet_mount}) {
    each->origin = link_->root.c_str();
    each->origin_protocol = LWSMPRO_FILE;
    // The page must never be served stale after an update of the bridge.
    each->cache_max_age = 0;
    each->cache_reusable = 0;
    each->cache_revalidate = 1;
  }
  link_->mount.mountpoint = "/";
  link_->mount.mountpoint_len = 1;
  link_->mount.def = link_->home.c_str();
  // /fleet (lws adds the slash), its files beside the dashboard's.
  link_->fleet_mount.mountpoint = "/fleet";
  link_->fleet_mount.mountpoint_len = 6;
  link_->fleet_mount.def = "fleet.html";
  link_->fleet_mount.mount_next = &link_->mount;

  lws_context_creation_info info{};
  void* loops[] = {loop_};
  info.foreign_loops = loops;
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN |
                 LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE | LWS_SERVER_OPTION_VALIDATE_UTF8 |
                 LWS_SERVER_OPTION_EXPLICIT_VHOSTS | (tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
  info.user = link_;
  info.fd_limit_per_thread = settings_.fd_limit;
  info.server_string = "flockbridge";
  context_ = lws_create_context(&info);
  if (context_ == nullptr) {
    delete std::exchange(link_, nullptr);
    return Error{"cannot start the web server (libwebsockets could not start on the loop)"};
  }

  // One vhost per listening port: the dashboard's, the Foxglove live view's.
  const auto add_vhost = [&](const char* name, const std::string& bind, std::uint16_t port,
                             const lws_protocols* protocols, const lws_http_mount* mounts, const char* what,
                             std::string_view port_option, std::string_view bind_option) -> Result<lws_vhost*> {
    // A port in use, or an address not this machine's, is said here with
    // the option that moves it, before lws would log its own words for it.
    if (const int error = try_listening(bind, port); error != 0) {
      return Error{listen_failure(host_port(bind, port), std::string("the ") + what, port_option, bind_option, error)};
    }
    lws_context_creation_info vhost{};
    vhost.vhost_name = name;
    vhost.port = port;
    vhost.iface = bind.c_str();
    vhost.protocols = protocols;
    vhost.mounts = mounts;
    vhost.options = info.options;
    // lws built with IPv6 (Debian's is) opens an IPv6 socket for every
    // vhost, and an IPv4 address given it is put where the socket does not
    // look, so that it listens on every address: an IPv4 address gets an
    // IPv4 socket, as the native and JSON listeners have.
    if (in_addr v4{}; inet_pton(AF_INET, bind.c_str(), &v4) == 1) vhost.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    // A connection that says nothing, a TLS handshake left half done, a
    // request that never ends: each holds a descriptor and lws's memory
    // (a TLS session about 50 KB), so none is kept long.
    vhost.keepalive_timeout = 5;
    vhost.timeout_secs = kHandshakeSeconds;
    vhost.timeout_secs_ah_idle = kHandshakeSeconds;
    if (tls) {
      vhost.ssl_cert_filepath = settings_.tls_cert.c_str();
      vhost.ssl_private_key_filepath = settings_.tls_key.c_str();
      // HTTP/1.1 only: a browser would otherwise choose HTTP/2 over TLS and
      // open a WebSocket as an HTTP/2 stream (RFC 8441), which this server
      // does not take (a WebSocket session owns its own TCP connection).
      vhost.alpn = "http/1.1";
    }
    lws_vhost* created = lws_create_vhost(context_, &vhost);
    if (created == nullptr && tls) {
      return Error{"cannot start the TLS of the " + std::string(what) + " with '" + settings_.tls_cert + "' and '" +
                   settings_.tls_key + "' (see the lines before: is the key the certificate's, and both PEM?)"};
    }
    if (created == nullptr || lws_get_vhost_listen_port(created) <= 0) {
      // The port and the address were free a moment ago (try_listening):
      // lws failed for a reason of its own, which it logged.
      return Error{"cannot listen on " + host_port(bind, port) + " for the " + what +
                   " (libwebsockets could not: see the lines before)"};
    }
    return created;
  };
  if (settings_.http) {
    auto created =
        add_vhost("flockbridge", settings_.bind, settings_.port, kProtocols, &link_->fleet_mount, "web server",
                  "--http-port", "--http-bind");
    if (!created) {
      stop();
      return created.error();
    }
    bound_port_ = static_cast<std::uint16_t>(lws_get_vhost_listen_port(created.value()));
  }
  if (settings_.foxglove) {
    auto created = add_vhost("foxglove", settings_.foxglove_bind, settings_.foxglove_port, kFoxgloveProtocols, nullptr,
                             "Foxglove live view", "--foxglove-port", "--foxglove-bind");
    if (!created) {
      stop();
      return created.error();
    }
    link_->foxglove = created.value();
    bound_foxglove_port_ = static_cast<std::uint16_t>(lws_get_vhost_listen_port(created.value()));
  }
  return Done{};
}

bool WebServer::admit_connection(int fd) {
  if (settings_.slots == nullptr) return true;
  const std::string peer = peer_name(fd);
  const std::optional<std::string> computer = AddressSlots::computer_of(address_of(peer));
  if (!computer) return true;  // the robot's own programs
  struct stat status {};
  if (::fstat(fd, &status) != 0) return false;
  // A descriptor still counted is one lws has closed and the kernel given again.
  if (const auto stale = counted_.find(fd); stale != counted_.end()) {
    settings_.slots->give_back(stale->second.computer);
    counted_.erase(stale);
  }
  // Other computers may have half of what lws can hold: the rest is the robot's own.
  const std::size_t most = settings_.fd_limit / 2;
  const auto admitted = [&] { return counted_.size() < most && settings_.slots->take(*computer); };
  if (!admitted()) {
    sweep_connections();  // closes lws has not told of may have made room
    if (!admitted()) {
      const bool full = counted_.size() >= most;
      log_about(LogLevel::Warning, {log_cause::kRefusedConnections, address_of(peer)},
                "refused a connection from " + peer + " to the web server: " +
                    (full ? std::to_string(counted_.size()) + " connections from other computers already"
                          : std::to_string(settings_.slots->held(*computer)) +
                                " from it already, to this robot's ports together (the limit for one computer is " +
                                std::to_string(settings_.slots->per_address()) + ", listen.max_per_address)"));
      return false;
    }
  }
  counted_.emplace(fd, Counted{*computer, status.st_ino});
  return true;
}

void WebServer::sweep_connections() {
  for (auto it = counted_.begin(); it != counted_.end();) {
    struct stat status {};
    if (::fstat(it->first, &status) != 0 || status.st_ino != it->second.inode) {
      if (settings_.slots != nullptr) settings_.slots->give_back(it->second.computer);
      it = counted_.erase(it);
    } else {
      ++it;
    }
  }
}

void WebServer::stop() {
  if (context_ == nullptr) return;  // never started, or stopped already
  // Nothing of lws may call back into this server any more.
  lws_context* context = std::exchange(context_, nullptr);
  link_->server = nullptr;
  destroy_on_loop(loop_, context, std::exchange(link_, nullptr));
}

namespace {

/// -1 once, when the session has asked to close its connection: lws then
/// sends the close frame whose reason was set, waits for the client's, and
/// closes.
int take_close(WebSocketConnection* connection) {
  if (!connection->close_pending) return 0;
  connection->close_pending = false;
  return -1;
}

}  // namespace

bool WebServerCallbacks::accepts_origin(const WebServer& server, lws* wsi) {
  std::optional<std::string> origin;
  if (const int length = lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN); length > 0) {
    origin.emplace(static_cast<std::size_t>(length) + 1, '\0');
    const int copied = lws_hdr_copy(wsi, origin->data(), length + 1, WSI_TOKEN_ORIGIN);
    origin->resize(static_cast<std::size_t>(std::max(copied, 0)));
  }
  // The machine's names are looked up at each upgrade: its addresses change
  // (a DHCP lease, a Wi-Fi network that comes up after the bridge).
  if (bridge::origin_allowed(origin, own_host_names(), server.settings_.allowed_origins)) return true;
  const std::string peer = peer_name(lws_get_socket_fd(wsi));
  log_about(LogLevel::Warning, {log_cause::kRefusedWebSockets, address_of(peer)},
            "refused a WebSocket from " + peer + ": its page comes from " + *origin +
                ", not from this robot; a page that may drive it from elsewhere needs its host name in "
                "access.allowed_origins");
  return false;
}

int WebServerCallbacks::callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, std::size_t length) {
  auto* connection = static_cast<WebSocketConnection*>(user);
  auto* link = static_cast<ServerLink*>(lws_context_user(lws_get_context(wsi)));
  switch (reason) {
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION: {
      WebServer* server = link != nullptr ? link->server : nullptr;
      const auto* accepted = static_cast<const lws_filter_network_conn_args*>(user);
      if (server == nullptr || accepted == nullptr) return 1;
      return server->admit_connection(static_cast<int>(accepted->accept_fd)) ? 0 : 1;
    }
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
      // On the dashboard's port, WebSocket upgrades are for /ws only; the
      // Foxglove live view's port takes them at any path (its clients
      // connect to ws://ROBOT:8765).
      const WebServer* server = link != nullptr ? link->server : nullptr;
      if (server == nullptr) return 1;
      if (lws_get_vhost(wsi) != link->foxglove) {
        std::array<char, 64> uri{};
        const int n = lws_hdr_copy(wsi, uri.data(), static_cast<int>(uri.size()), WSI_TOKEN_GET_URI);
        if (n <= 0 || std::string_view(uri.data(), static_cast<std::size_t>(n)) != "/ws") return 1;
      } else if (!asks_for_foxglove(wsi)) {
        // lws would bind an upgrade that names no subprotocol to the
        // vhost's first (and only) one; the protocol says a client asks.
        return 1;
      }
      return WebServerCallbacks::accepts_origin(*server, wsi) ? 0 : 1;
    }
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
      // WebSocket only: lws would also take an upgrade to cleartext HTTP/2
      // (h2c), which nothing of the bridge uses.
      return in != nullptr && ::strcasecmp(static_cast<const char*>(in), "websocket") == 0 ? 0 : -1;
    case LWS_CALLBACK_ESTABLISHED: {
      WebServer* server = link != nullptr ? link->server : nullptr;
      if (server == nullptr || connection == nullptr) return -1;
      connection->counted = true;
      ++link->websockets;
      const bool foxglove = lws_get_vhost(wsi) == link->foxglove;
      return server->host_.websocket_opened(wsi, connection, foxglove) != nullptr ? 0 : -1;
    }
    case LWS_CALLBACK_RECEIVE:
      if (connection == nullptr) return -1;
      if (connection->session != nullptr) {
        connection->session->on_receive(static_cast<const char*>(in), length,
                                        lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0,
                                        lws_frame_is_binary(wsi) != 0);
      }
      return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
      if (connection == nullptr) return -1;
      if (connection->session != nullptr) connection->session->on_writeable();
      return 0;
    case LWS_CALLBACK_TIMER:
      return connection != nullptr ? take_close(connection) : 0;
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
      if (connection != nullptr && connection->session != nullptr && length >= 2) {
        const auto* code = static_cast<const unsigned char*>(in);
        connection->session->on_peer_close((code[0] << 8) | code[1]);
      }
      return 0;
    case LWS_CALLBACK_CLOSED:
      if (connection == nullptr) return 0;
      if (connection->counted && link != nullptr) --link->websockets;
      connection->counted = false;
      if (connection->session != nullptr) connection->session->on_transport_closed();
      return 0;
    default:
      return lws_callback_http_dummy(wsi, reason, user, in, length);
  }
}

}  // namespace flockbridge::bridge
