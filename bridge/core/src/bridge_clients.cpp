// The Bridge's listeners and client sessions: binding the ports, accepting a
// TCP or WebSocket client, the limit per port, the hello and what a new
// client is told first, and forgetting closed sessions.
#include "flockbridge/bridge/bridge.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "flockbridge/bridge/address_slots.hpp"
#include "flockbridge/bridge/client_socket.hpp"
#include "flockbridge/bridge/foxglove_session.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/tcp_session.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Done;
using protocol::Error;
using protocol::Result;

/// Room for a whole class reconnecting at once (after a Wi-Fi drop, say):
/// connections the loop has not accepted yet wait here rather than having
/// their SYNs dropped and retried a second or more later. The kernel caps it
/// at net.core.somaxconn.
constexpr int kListenBacklog = SOMAXCONN;

/// The slots of a port that only the robot's own programs (loopback) may
/// take: an eighth of them, when there are eight or more.
std::size_t local_room(std::size_t port_limit) {
  return port_limit >= 8 ? port_limit / 8 : 0;
}

}  // namespace

Result<Done> Bridge::start_web_server(std::uint64_t file_limit) {
  WebServer::Settings settings;
  settings.http = config_.http;
  settings.bind = config_.effective_http_bind();
  settings.port = config_.http_port;
  settings.foxglove = config_.foxglove;
  settings.foxglove_bind = config_.effective_foxglove_bind();
  settings.foxglove_port = config_.foxglove_port;
  settings.root = config_.http_root.empty() ? WebServer::default_root() : config_.http_root;
  // A hub with no robot has no robot's dashboard to show: its home is the class's page.
  if (!driver_->has_robot()) settings.home = "fleet.html";
  // lws finds a connection by its descriptor's number, so it must know of
  // every number the process may hand it: each port's clients, the device,
  // the listeners, and the page's own short connections.
  settings.fd_limit = static_cast<unsigned>(
      std::min<std::uint64_t>(file_limit, std::max<std::uint64_t>(1024, 4 * config_.max_clients + 256)));
  settings.tls_cert = config_.http_tls_cert;
  settings.tls_key = config_.http_tls_key;
  settings.allowed_origins = host_list(config_.access.allowed_origins);
  settings.slots = &slots_;
  return web_.start(std::move(settings));
}

Result<Done> Bridge::listen(Listener& listener) {
  const std::string where = host_port(listener.bind, listener.port);
  const auto address = socket_address(listener.bind, listener.port);
  if (!address) return Error{"bind address '" + listener.bind + "' is not an IPv4 or IPv6 address"};
  int rc = listener.tcp.init(&listener, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); });
  if (rc == 0) rc = uv_tcp_bind(listener.tcp.get(), reinterpret_cast<const sockaddr*>(&*address), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(listener.tcp.get()), kListenBacklog,
                   [](uv_stream_t* server, int status) {
                     if (auto* l = owner_of<Listener>(server)) l->bridge->on_connection(*l, status);
                   });
  }
  if (rc < 0) return Error{listen_failure(where, listener.what, listener.port_option, listener.bind_option, -rc)};
  sockaddr_storage bound{};
  int length = sizeof(bound);
  uv_tcp_getsockname(listener.tcp.get(), reinterpret_cast<sockaddr*>(&bound), &length);
  listener.bound_port = ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return Done{};
}

void Bridge::on_connection(Listener& listener, int status) {
  if (status < 0) {
    log_warning("accepting a client failed: " + uv_error_text(status));
    return;
  }
  // A class connecting at once (a thousand clients after a Wi-Fi drop) is
  // taken in a share at a time: each connection costs tens of microseconds
  // (its session, its hello), and a thousand in one loop turn would hold
  // the robot's link up for tens of milliseconds. A connection left
  // unaccepted makes libuv stop watching its listener until it is accepted:
  // the acceptor does that after the loop has polled, and the rest of the
  // burst follows in the turns after.
  if (!accepting_share_.has_time()) {
    if (std::find(paused_listeners_.begin(), paused_listeners_.end(), &listener) == paused_listeners_.end()) {
      paused_listeners_.push_back(&listener);
    }
    acceptor_.schedule();
    return;
  }
  accept_one(listener);
}

void Bridge::resume_accepting() {
  // This turn's connections may have had its share already.
  if (!accepting_share_.has_time()) {
    acceptor_.schedule();
    return;
  }
  for (Listener* listener : std::exchange(paused_listeners_, {})) {
    if (listener->tcp) accept_one(*listener);
  }
}

void Bridge::accept_one(Listener& listener) {
  std::unique_ptr<NativeClient> native;
  if (listener.kind == ClientKind::Native) {
    // None: the robot has just gone (plug and play), and this listener
    // closes when the core hears of it, after this turn's callbacks.
    native = driver_->make_native_client();
    if (!native) return;
  }
  auto session = std::make_unique<TcpSession>(loop_, *this, clients_.next_id(), listener.kind, config_, counters_,
                                              std::move(native));
  if (const int rc = session->accept(reinterpret_cast<uv_stream_t*>(listener.tcp.get())); rc < 0) {
    log_warning("accepting a client failed: " + uv_error_text(rc));
    return;
  }
  admit(std::move(session), listener.bound_port);
}

WebSocketSession* Bridge::websocket_opened(lws* wsi, WebSocketConnection* connection, bool foxglove) {
  if (stopped_) return nullptr;
  std::unique_ptr<WebSocketSession> session;
  if (foxglove) {
    session = std::make_unique<FoxgloveSession>(*this, clients_.next_id(), config_, counters_, wsi, connection,
                                                foxglove_offer());
  } else {
    session = std::make_unique<WebSocketSession>(*this, clients_.next_id(), config_, counters_, wsi, connection);
  }
  WebSocketSession* opened = session.get();
  admit(std::move(session), foxglove ? foxglove_port() : http_port());
  return opened;
}

std::shared_ptr<const FoxgloveOffer> Bridge::foxglove_offer() {
  // One offer for every viewer (its channels' schemas are a few kilobytes);
  // the link coming up forgets it (the robot may have named its model).
  if (!foxglove_offer_)
    foxglove_offer_ = std::make_shared<const FoxgloveOffer>(make_foxglove_offer(recording_identity()));
  return foxglove_offer_;
}

void Bridge::admit(std::unique_ptr<Session> session, std::uint16_t port) {
  Session& added = clients_.add(std::move(session));
  const std::uint64_t id = added.id();
  const ClientKind kind = added.kind();
  // Programs of the original software cannot give a PIN: their port's mode
  // says what they may do. JSON and WebSocket clients drive when no PIN is
  // set, and watch until they give it when one is.
  const NativePortMode native_mode = config_.access.effective_native_port_mode();
  if (kind == ClientKind::Native) {
    added.set_role(native_mode == NativePortMode::Open ? Role::Driver : Role::Viewer);
  } else {
    added.set_role(config_.access.driver_pin.empty() ? Role::Driver : Role::Viewer);
  }
  const std::size_t active = clients_.active(kind) - 1;
  const std::size_t port_limit =
      kind == ClientKind::Native ? std::min(config_.max_clients, driver_->native_client_limit()) : config_.max_clients;
  // The robot's own programs (loopback) are never limited by address, and
  // the last of each port's slots are theirs: a class that fills a port
  // leaves room for them.
  const std::optional<std::string> computer = AddressSlots::computer_of(added.address());
  const std::size_t limit = computer ? port_limit - local_room(port_limit) : port_limit;
  std::string text;
  // The teacher's room: a JSON or WebSocket client that finds its port full
  // may still come in with the teacher's secret (not beyond its computer's
  // share).
  bool knock = false;
  if (active >= limit) {
    if (!config_.access.teacher_secret.empty() && kind != ClientKind::Native &&
        clients_.knocking(kind) < kTeacherRoom) {
      knock = true;
    } else {
      text = "too many clients: " + std::to_string(active) + " already connected to port " + std::to_string(port) +
             " (the limit is " + std::to_string(limit) +
             (limit < port_limit ? ", and " + std::to_string(port_limit - limit) + " more for the robot's own programs"
                                 : std::string()) +
             "); try again later";
    }
  }
  if (text.empty() && computer && (kind == ClientKind::Native || kind == ClientKind::Json)) {
    // A WebSocket's connection was counted as the web server took it.
    if (slots_.take(*computer)) {
      slot_of_.emplace(id, *computer);
    } else {
      text = "too many connections from " + added.address() + ": " + std::to_string(slots_.held(*computer)) +
             " already, to this robot's ports together (the limit for one computer is " +
             std::to_string(slots_.per_address()) + ", listen.max_per_address); close some and try again";
    }
  }
  if (!text.empty()) {
    added.log_event(LogLevel::Warning, log_cause::kRefusedConnections,
                    "refused client " + added.peer() + " on port " + std::to_string(port) + ": " + text);
    ++counters_.clients_refused;
    if (recording_.active()) {
      nlohmann::ordered_json event = client_json(added);
      event["event"] = "refused";
      event["reason"] = text;
      recording_.record(Topic::Client, event.dump());
    }
    added.refuse(added.encode(notice::Failed{Error{text}}));
    return;
  }
  ++counters_.clients_accepted;
  added.log_event(LogLevel::Info, log_cause::kConnections,
                  "client " + std::to_string(id) + " (" + std::string(client_kind_name(kind)) + ", " + added.peer() +
                      ") connected");
  added.start(wire::json_only(added.encoding(), hello_text(id, added.role())));
  if (knock) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(kTeacherWait).count();
    added.log_event(LogLevel::Info, log_cause::kConnections,
                    "client " + std::to_string(id) + " (" + added.peer() + ") found port " + std::to_string(port) +
                        " full: it waits " + std::to_string(seconds) + " s for the teacher's secret");
    added.knock(added.encode(notice::Failed{
                    Error{"too many clients: " + std::to_string(active) + " already connected to port " +
                          std::to_string(port) + "; only the teacher may come in now: give the teacher's secret " +
                          "(auth with \"teacher\") within " + std::to_string(seconds) + " s, or try again later"}}),
                steady_now() + kTeacherWait);
  }
  if (recording_.active()) {
    nlohmann::ordered_json event = client_json(added);
    event["event"] = "connected";
    recording_.record(Topic::Client, event.dump());
  }
  // What is so now, from the start. A Foxglove viewer is told each state
  // even when it is the usual one (the link's, nobody drives, not latched,
  // not recording): it keeps the latest of each topic for a panel that
  // subscribes later, and a panel must not stay empty.
  const bool every_state = kind == ClientKind::Foxglove;
  if (every_state) added.send(added.encode(notice::Link{driver_->link_state(), driver_->link_reason()}));
  if (lease_.holder() || every_state) added.send(wire::json_only(added.encoding(), lease_message({})));
  if (latch_.latched() || every_state) {
    added.send(wire::json_only(added.encoding(), latch_.message(config_.access)));
  }
  if (!pairing_.list().empty()) added.send(wire::json_only(added.encoding(), pairing_message()));
  if (recording_.active() || every_state) added.send(wire::json_only(added.encoding(), recording_.message()));
  if (kind == ClientKind::Native && native_mode == NativePortMode::Paired) {
    pairing_.wait(id, unix_seconds_now());
    added.log_event(LogLevel::Info, log_cause::kConnections,
                    "client " + std::to_string(id) + " (" + added.peer() +
                        ") waits to be approved on the dashboard before it may drive (access.native_port_mode paired)");
    broadcast_pairing();
  }
  driver_->client_arrived();
}

void Bridge::session_input_over(Session& session) {
  // A class leaving at once is ended a share at a time (ClientHub::depart):
  // the robot's own programs and whoever drives it go first, so that a
  // robot is stopped as soon as the client moving it has gone.
  clients_.depart(session, session.kind() == ClientKind::Native || lease_.held_by(session.id()) ||
                               gate_.motion_owner() == session.id());
}

void Bridge::session_closed(Session& session) {
  clients_.closed(session);
  if (const auto slot = slot_of_.find(session.id()); slot != slot_of_.end()) {
    slots_.give_back(slot->second);
    slot_of_.erase(slot);
  }
  if (recording_.active() && !session.refusing()) {
    nlohmann::ordered_json event = client_json(session);
    event["event"] = "closed";
    recording_.record(Topic::Client, event.dump());
  }
  if (pairing_.forget(session.id())) {
    broadcast_pairing();
  }
  const bool held_control = lease_.held_by(session.id());
  // Closing its connection is a normal end; a connection that failed, or
  // that the bridge closed, is not.
  const bool normal_end = session.close_kind() == Session::CloseKind::Normal;
  end_lease(session, normal_end && !gate_.moving() ? "closed its connection" : "is gone", false, normal_end);
  if (!held_control && gate_.moving() && gate_.motion_owner() == session.id()) {
    owed_stop_ = OwedStop{"client " + std::to_string(session.id()) + " (" + session.peer() +
                          "), which set the robot moving, is gone"};
  }
  sweeper_.schedule();
}

void Bridge::sweep_closed() {
  clients_.forget_closed();
  if (owed_stop_) {
    const OwedStop owed = std::move(*owed_stop_);
    owed_stop_.reset();
    // Unless another client has set the robot moving since.
    const auto& owner = gate_.motion_owner();
    if (!owner || clients_.find(*owner) == nullptr) safety_stop(owed.reason, owed.tell);
  }
}

}  // namespace flockbridge::bridge
