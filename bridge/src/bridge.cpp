#include "flockbridge/bridge/bridge.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <random>
#include <tuple>
#include <variant>

#include "flockbridge/bridge/client_socket.hpp"
#include "flockbridge/bridge/host_address.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/mdns.hpp"
#include "flockbridge/bridge/overloaded.hpp"
#include "flockbridge/bridge/settings.hpp"
#include "flockbridge/bridge/tcp_session.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Done;
using protocol::Error;
using protocol::Result;

constexpr std::chrono::milliseconds kHousekeepingInterval{100};
constexpr std::chrono::milliseconds kFleetInterval{250};
/// Room for a whole class reconnecting at once (after a Wi-Fi drop, say):
/// connections the loop has not accepted yet wait here rather than having
/// their SYNs dropped and retried a second or more later. The kernel caps it
/// at net.core.somaxconn.
constexpr int kListenBacklog = SOMAXCONN;

std::size_t encoding_index(Encoding encoding) {
  return encoding == Encoding::Binary ? 0 : 1;
}

/// Whether a listener bound to `bind` listens on every interface.
bool listens_everywhere(std::string_view bind) {
  return bind == "0.0.0.0" || bind == "::";
}

}  // namespace

std::uint64_t raise_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

std::string new_session_id() {
  std::random_device random;
  const std::uint64_t value = (std::uint64_t{random()} << 32) ^ random();
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string id(16, '0');
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = kDigits[(value >> (60 - 4 * i)) & 0xF];
  return id;
}

Bridge::Bridge(uv_loop_t* loop, Config config, DriverFactory make_driver, const SettingsTable& settings)
    : loop_(loop),
      settings_(settings),
      config_(std::move(config)),
      session_id_(new_session_id()),
      driver_(make_driver(loop, config_, *this)),
      web_(loop, *this),
      fleet_(loop, *this),
      service_(loop) {
  listeners_[0].bridge = listeners_[1].bridge = this;
  listeners_[0].kind = ClientKind::Binary;
  listeners_[0].bind = config_.effective_binary_bind();
  listeners_[0].port = config_.port;
  listeners_[1].kind = ClientKind::Json;
  listeners_[1].bind = config_.effective_json_bind();
  listeners_[1].port = config_.json_port;
}

Bridge::~Bridge() {
  stop();
}

Result<Done> Bridge::start() {
  // A client that vanishes while we write must cost an EPIPE, not the process.
  std::signal(SIGPIPE, SIG_IGN);

  // Each client is one descriptor; the device, the loop and the listeners a few more.
  const std::uint64_t files = raise_file_limit();
  if (files < 2 * config_.max_clients + 32) {
    log_warning("the limit on open files (" + std::to_string(files) + ") is below what " +
                std::to_string(config_.max_clients) + " clients per port need");
  }
  for (Listener& listener : listeners_) {
    // A bridge with no robot (the class hub) has no port for a family's own programs.
    if (listener.kind == ClientKind::Binary && driver_->native_client_limit() == 0) continue;
    auto listening = listen(listener);
    if (!listening) return listening.error();
  }
  if (config_.http) {
    auto serving = start_web_server(files);
    if (!serving) return serving.error();
  }
  if (drainer_.init<Bridge, &Bridge::drain_driver_events>(loop_, this) < 0 ||
      housekeeping_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0 ||
      sweeper_.init<Bridge, &Bridge::sweep_closed>(loop_, this) < 0) {
    return Error{"cannot create the loop's timers"};
  }
  const auto period = static_cast<std::uint64_t>(kHousekeepingInterval.count());
  uv_timer_start(
      housekeeping_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Bridge>(timer)) self->on_housekeeping();
      },
      period, period);
  // SIGINT and SIGTERM stop the bridge, SIGHUP reloads its configuration.
  const std::array<int, 3> watched_signals{SIGINT, SIGTERM, SIGHUP};
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    if (signals_[i].init(this, [this](uv_signal_t* s) { return uv_signal_init(loop_, s); }) < 0) {
      return Error{"cannot watch signals"};
    }
    uv_signal_start(
        signals_[i].get(),
        [](uv_signal_t* handle, int signal_number) {
          auto* self = owner_of<Bridge>(handle);
          if (self == nullptr) return;
          if (signal_number == SIGHUP) {
            self->on_reload_signal();
            return;
          }
          log_info(std::string("received ") + (signal_number == SIGINT ? "SIGINT" : "SIGTERM"));
          self->stop();
        },
        watched_signals[i]);
  }
  if (stats_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"cannot create the loop's timers"};
  }
  arm_stats_timer();
  if (auto started = driver_->start(); !started) return started.error();
  if (auto joined = fleet_.start(config_, driver_->has_robot()); !joined) return joined.error();
  announce();
  if (fleet_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"cannot create the loop's timers"};
  }
  std::string listening =
      (listeners_[0].tcp ? "listening: binary clients on " + host_port(listeners_[0].bind, port()) + ", "
                         : std::string("listening: no robot's programs (no robot), ")) +
      "JSON clients on " + host_port(listeners_[1].bind, json_port());
  if (config_.http) {
    listening += std::string(", dashboard on ") + (config_.http_tls_cert.empty() ? "http://" : "https://") +
                 host_port(config_.effective_http_bind(), http_port()) + "/";
  }
  log_info(listening + "; session " + session_id_);

  // Everything is bound: systemd may start what waits for the bridge.
  if (auto ready = service_.ready(service_status_text()); !ready) return ready.error();
  return Done{};
}

Result<Done> Bridge::start_web_server(std::uint64_t file_limit) {
  WebServer::Settings settings;
  settings.bind = config_.effective_http_bind();
  settings.port = config_.http_port;
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
  return web_.start(std::move(settings));
}

Result<Done> Bridge::listen(Listener& listener) {
  const std::string where = host_port(listener.bind, listener.port);
  sockaddr_storage address{};
  if (uv_ip4_addr(listener.bind.c_str(), listener.port, reinterpret_cast<sockaddr_in*>(&address)) != 0 &&
      uv_ip6_addr(listener.bind.c_str(), listener.port, reinterpret_cast<sockaddr_in6*>(&address)) != 0) {
    return Error{"bind address '" + listener.bind + "' is not an IPv4 or IPv6 address"};
  }
  int rc = listener.tcp.init(&listener, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); });
  if (rc == 0) rc = uv_tcp_bind(listener.tcp.get(), reinterpret_cast<const sockaddr*>(&address), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(listener.tcp.get()), kListenBacklog,
                   [](uv_stream_t* server, int status) {
                     if (auto* l = owner_of<Listener>(server)) l->bridge->on_connection(*l, status);
                   });
  }
  if (rc < 0) return Error{"cannot listen on " + where + ": " + uv_error_text(rc)};
  sockaddr_storage bound{};
  int length = sizeof(bound);
  uv_tcp_getsockname(listener.tcp.get(), reinterpret_cast<sockaddr*>(&bound), &length);
  listener.bound_port = ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return Done{};
}

std::size_t Bridge::active_clients(ClientKind kind) const {
  std::size_t count = 0;
  for (const auto& [id, session] : sessions_) {
    if (session->kind() == kind && !session->closing() && !session->refusing()) ++count;
  }
  return count;
}

void Bridge::on_connection(Listener& listener, int status) {
  if (status < 0) {
    log_warning("accepting a client failed: " + uv_error_text(status));
    return;
  }
  auto session =
      std::make_unique<TcpSession>(loop_, *this, next_session_++, listener.kind, config_, counters_,
                                   listener.kind == ClientKind::Binary ? driver_->make_native_client() : nullptr);
  if (const int rc = session->accept(reinterpret_cast<uv_stream_t*>(listener.tcp.get())); rc < 0) {
    log_warning("accepting a client failed: " + uv_error_text(rc));
    return;
  }
  admit(std::move(session), listener.bound_port);
}

WebSocketSession* Bridge::websocket_opened(lws* wsi, WebSocketConnection* connection) {
  if (stopped_) return nullptr;
  auto session = std::make_unique<WebSocketSession>(*this, next_session_++, config_, counters_, wsi, connection);
  WebSocketSession* opened = session.get();
  admit(std::move(session), http_port());
  return opened;
}

void Bridge::admit(std::unique_ptr<Session> session, std::uint16_t port) {
  const std::uint64_t id = session->id();
  const ClientKind kind = session->kind();
  Session& added = *sessions_.emplace(id, std::move(session)).first->second;
  session_list_.push_back(&added);
  // Programs of the original software cannot give a PIN: their port's mode
  // says what they may do. JSON and WebSocket clients drive when no PIN is
  // set, and watch until they give it when one is.
  const NativePortMode native_mode = config_.access.effective_native_port_mode();
  if (kind == ClientKind::Binary) {
    added.set_role(native_mode == NativePortMode::Open ? Role::Driver : Role::Viewer);
  } else {
    added.set_role(config_.access.driver_pin.empty() ? Role::Driver : Role::Viewer);
  }
  const std::size_t active = active_clients(kind) - 1;
  const std::size_t limit =
      kind == ClientKind::Binary ? std::min(config_.max_clients, driver_->native_client_limit()) : config_.max_clients;
  if (active >= limit) {
    const std::string text = "too many clients: " + std::to_string(active) + " already connected to port " +
                             std::to_string(port) + " (the limit is " + std::to_string(limit) + "); try again later";
    log_warning("refused client " + added.peer() + " on port " + std::to_string(port) + ": " + text);
    ++counters_.clients_refused;
    added.refuse(added.encode(notice::Failed{Error{text}}));
    return;
  }
  ++counters_.clients_accepted;
  log_info("client " + std::to_string(id) + " (" + std::string(client_kind_name(kind)) + ", " + added.peer() +
           ") connected");
  added.start(wire::json_only(
      added.encoding(),
      protocol::json::hello(
          session_id_, driver_->link_state(), driver_->link_reason(), id, role_name(added.role()),
          {driver_->family(), driver_->model(), driver_->commands(), driver_->simulated(), driver_->simulated_room()},
          {!config_.access.driver_pin.empty(), !config_.access.teacher_secret.empty()})));
  if (lease_.holder()) added.send(wire::json_only(added.encoding(), lease_message({})));  // who drives, from the start
  if (latch_.latched()) added.send(wire::json_only(added.encoding(), latch_message()));
  if (!pairing_.list().empty()) added.send(wire::json_only(added.encoding(), pairing_message()));
  if (kind == ClientKind::Binary && native_mode == NativePortMode::Paired) {
    pairing_.wait(id, unix_seconds_now());
    log_info("client " + std::to_string(id) + " (" + added.peer() +
             ") waits to be approved on the dashboard before it may drive (access.native_port_mode paired)");
    broadcast_pairing();
  }
}

void Bridge::session_request(Session& session, protocol::ClientRequest request, const nlohmann::json& id) {
  std::visit(Overloaded{
                 [&](const protocol::SendCommand& command) {
                   submit_command(session, command.payload, driver_->motion_effect(command.payload), id);
                 },
                 [&](const protocol::Subscribe& subscribe) {
                   session.subscribe(subscribe.interval_ms);
                   session.reply_ok(id);
                 },
                 [&](const protocol::Unsubscribe&) {
                   session.unsubscribe();
                   session.reply_ok(id);
                 },
                 [&](const protocol::StatsRequest&) {
                   protocol::StatsSnapshot stats = snapshot();
                   // Who is connected, from where, is the teacher's to see, when there is one.
                   stats.list_clients = config_.access.teacher_secret.empty() || session.role() == Role::Teacher;
                   session.send(session.encoding() == Encoding::Json ? wire::stats(id, stats) : nullptr);
                 },
                 [&](const protocol::SetExtensions& extensions) { session.set_extensions(extensions.version); },
                 [&](const protocol::ReleaseControl&) {
                   end_lease(session, "gave up control", true);
                   session.reply_ok(id);
                 },
                 [&](const protocol::TakeControl&) { take_control(session, id); },
                 [&](const protocol::ClearEmergency&) { clear_emergency(session, id); },
                 [&](const protocol::ApproveClient& approve) { approve_client(session, approve.client, id); },
                 [&](const protocol::ChangeSetting& change) { change_setting(session, change, id); },
                 [&](const protocol::Authenticate& auth) { authenticate(session, auth, id); },
                 [&](const protocol::FollowFleet&) {
                   if (!fleet_.hub()) {
                     session.reply_error(id, Error{"this bridge is not the class hub (fleet.hub); the hub's page "
                                                   "is /fleet on the bridge started with --hub"});
                     return;
                   }
                   session.follow_fleet();
                   session.reply_ok(id);
                   session.send(wire::json_only(session.encoding(), fleet_message()));
                 },
                 [&](const protocol::FleetEmergency& emergency) { stop_fleet(session, emergency, id); },
             },
             request);
}

void Bridge::session_robot_command(Session& session, std::string_view cmd, const nlohmann::json& object,
                                   const nlohmann::json& id) {
  auto command = driver_->command_from_json(cmd, object);
  if (!command) {
    session.reply_error(id, command.error());
    return;
  }
  MotionEffect effect = driver_->motion_effect(command.value());
  if (cmd == "emergency") {
    effect.stops = true;  // whatever the family's bytes look like (some are zero speeds)
    effect.emergency = true;
  }
  submit_command(session, command.value(), effect, id);
}

void Bridge::submit_command(Session& session, protocol::ByteView payload, MotionEffect effect,
                            const nlohmann::json& id) {
  ++counters_.commands_received;
  const SteadyTime now = steady_now();
  // Stop and emergency stop are never held back by the rate limit.
  if (!effect.stops && !session.allow_command(now)) {
    session.reply_error(id,
                        Error{"too many commands: at most " + std::to_string(static_cast<int>(config_.command_rate)) +
                                  " a second (bursts of " + std::to_string(static_cast<int>(config_.command_burst)) +
                                  "); this one was not sent",
                              protocol::ErrorCode::RateLimited});
    return;
  }
  if (!effect.stops && session.role() == Role::Viewer) {
    // Stopping is anyone's; the rest needs the driver PIN, or a port open to drive.
    refuse(
        session, id,
        Error{
            session.kind() == ClientKind::Binary
                ? (pairing_.waiting(session.id())
                       ? "not sent: this connection waits to be approved on the robot's dashboard by someone with "
                         "the PIN (access.native_port_mode paired); only stops go"
                       : "not sent: this port is read-only (access.native_port_mode); only stops go")
                : R"(not sent: this connection may watch and stop the robot; to drive it, give the robot's PIN first: {"cmd":"auth","pin":"..."})",
            protocol::ErrorCode::Denied,
            pairing_.waiting(session.id()) ? "not sent: this connection waits to be approved on the robot's dashboard; only "
                                     "stops go"
                                   : ""});
    return;
  }
  if (effect.motion && latch_.latched()) {
    ++counters_.control_refused;
    const EmergencyLatch::Hold& hold = *latch_.first_hold();
    const std::string who = hold.client == 0 ? hold.by : "client " + std::to_string(hold.client) + ", " + hold.by;
    const bool fleet = latch_.hold(StopSource::Fleet).has_value();
    refuse(session, id,
           Error{"not sent: the robot's emergency stop is latched (by " + who +
                     (hold.reason.empty() ? "" : ": " + hold.reason) + "); " + latch_.who_may_clear(config_.access) +
                     (fleet ? " clears it" : R"( clears it with {"cmd":"clear_emergency"} or on the dashboard)"),
                 protocol::ErrorCode::Latched,
                 fleet ? "not sent: the class's emergency stop is latched; the teacher clears it"
                       : "not sent: the emergency stop is latched; it must be cleared on the dashboard first"});
    return;
  }
  const LeaseCheck lease = effect.stops ? LeaseCheck::Allowed : check_lease(session, effect, id, now);
  if (lease == LeaseCheck::Refused) return;
  const protocol::CommandToken token = next_token_++;
  auto submitted = driver_->submit(token, payload);
  if (!submitted) {
    const protocol::Error& error = submitted.error();
    if (error.code == protocol::ErrorCode::LinkDown) {
      // Said the same way for every family, with why the link is down (a
      // missing robot says which device was tried and what to do).
      const std::string state(protocol::link_state_name(driver_->link_state()));
      session.reply_error(id, Error{"the robot link is " + state +
                                        (driver_->link_reason().empty() ? "" : " (" + driver_->link_reason() + ")") +
                                        "; command not sent",
                                    error.code, "the robot link is " + state + "; command not sent"});
      return;
    }
    session.reply_error(id, error);
    return;
  }
  if (lease == LeaseCheck::Takes) take_lease(session, now);
  if (effect.emergency) latch_emergency(StopSource::Local, {session.id(), session.peer(), {}, unix_seconds_now()});
  pending_.emplace(token, PendingCommand{session.id(), id});
  session.command_started();
  if (effect.stops) {
    moving_ = false;
    motion_owner_.reset();
  } else if (effect.motion) {
    motion_owner_ = session.id();
    moving_ = effect.keeps_moving;
    last_motion_ = now;
  }
}

Bridge::LeaseCheck Bridge::check_lease(Session& session, const MotionEffect& effect, const nlohmann::json& id,
                                       SteadyTime now) {
  switch (lease_.check(session.id(), effect.motion, session.exclusive_control(), now)) {
    case ControlLease::Verdict::Allowed:
      return LeaseCheck::Allowed;
    case ControlLease::Verdict::Takes:
      return LeaseCheck::Takes;
    case ControlLease::Verdict::Ignored:
      ++counters_.control_ignored;
      return LeaseCheck::Refused;
    case ControlLease::Verdict::Busy:
      break;
  }
  ++counters_.control_refused;
  const std::uint64_t holder = lease_.holder()->client;
  const auto found = sessions_.find(holder);
  const std::string who = found == sessions_.end() ? "client " + std::to_string(holder)
                                                   : "client " + std::to_string(holder) + " (" + found->second->peer() + ")";
  refuse(session, id,
         Error{(effect.motion ? "not sent: " : "not sent: only the driver may do this; ") + who +
                   " drives the robot; it is yours once it releases control, goes away or sends no command for " +
                   std::to_string(config_.access.lease_idle.count()) + " ms",
               protocol::ErrorCode::Busy, "not sent: " + who + " drives the robot"});
  return LeaseCheck::Refused;
}

void Bridge::refuse(Session& session, const nlohmann::json& id, const Error& error) {
  if (session.exclusive_control()) {
    session.count_refused();
    log_debug("client " + std::to_string(session.id()) + ": " + error.message);
  } else {
    session.reply_error(id, error);
  }
}

void Bridge::latch_emergency(StopSource source, EmergencyLatch::Hold hold) {
  const bool was_free = latch_.latch(source, hold);
  moving_ = false;
  motion_owner_.reset();
  if (was_free || source == StopSource::Fleet) {
    log_warning((hold.client == 0 ? hold.by : "client " + std::to_string(hold.client) + " (" + hold.by + ")") +
                " sent " + (source == StopSource::Fleet ? "the class's emergency stop" : "an emergency stop") +
                (hold.reason.empty() ? "" : " (" + hold.reason + ")") + ": no motion command goes to the robot until " +
                latch_.who_may_clear(config_.access) + " clears it");
  }
  fleet_.event({{"type", "emergency"},
                {"latched", true},
                {"source", stop_source_name(source)},
                {"client", hold.client},
                {"by", hold.by},
                {"reason", hold.reason}});
  latch_changed();
}

void Bridge::latch_changed() {
  broadcast([&](const Session& session) { return wire::json_only(session.encoding(), latch_message()); });
  fleet_.status_changed();
}

void Bridge::fleet_emergency(const std::string& by, const std::string& reason) {
  // Latched even when the stop cannot go now (the link is down): the robot
  // must not drive off when it comes back.
  auto command = driver_->command_from_json("emergency", nlohmann::json{{"cmd", "emergency"}});
  if (command) {
    ++counters_.commands_received;
    auto sent = driver_->submit(next_token_++, command.value());
    if (!sent) log_warning("the fleet's emergency stop could not go to the robot now: " + sent.error().message);
  }
  latch_emergency(StopSource::Fleet, {0, by, reason, unix_seconds_now()});
}

void Bridge::fleet_clear(const std::string& by, const std::string& reason) {
  auto cleared = latch_.clear(EmergencyLatch::Clearer::Fleet, config_.access, {0, by, reason, unix_seconds_now()});
  if (!cleared.value().fleet) {
    log_info("mqtt: " + by + " cleared the class's emergency stop; this robot had none");
    return;
  }
  const EmergencyLatch::Hold* local = latch_.first_hold();
  log_warning(by + " cleared the class's emergency stop" +
              (local == nullptr ? std::string(": the robot may drive again")
                                : "; the robot's own emergency stop (client " + std::to_string(local->client) + ", " +
                                      local->by + ") still holds"));
  fleet_.event({{"type", "emergency"},
                {"latched", latch_.latched()},
                {"source", "fleet"},
                {"client", 0},
                {"by", by},
                {"reason", reason}});
  latch_changed();
}

void Bridge::announce() const {
  const std::string& path = config_.mdns_service_file;
  if (path.empty()) return;
  if (::access(path.c_str(), F_OK) != 0) {
    log_debug("mDNS: no " + path + " (the package installs it): the robot is not announced on the network");
    return;
  }
  const std::string name = config_.mqtt.robot_name.empty() ? default_robot_name() : config_.mqtt.robot_name;
  MdnsAnnouncement announcement;
  announcement.json_port = json_port();
  announcement.http_port = config_.http ? http_port() : 0;
  announcement.txt = {"txtvers=1", "robot=" + name, "json=" + std::to_string(json_port())};
  if (config_.http) announcement.txt.push_back("http=" + std::to_string(http_port()));
  if (driver_->has_robot()) {
    announcement.name = name + " (" + std::string(driver_->family()) + ")";
    announcement.txt.push_back("family=" + std::string(driver_->family()));
    if (!driver_->model().empty()) announcement.txt.push_back("model=" + std::string(driver_->model()));
    announcement.txt.push_back("native=" + std::to_string(port()));
  } else {
    announcement.name = name + " (class hub)";
  }
  if (config_.fleet_hub) {
    announcement.txt.emplace_back("hub=1");
    if (!driver_->has_robot()) announcement.http_path = "/fleet/";
  }
  announcement.txt.emplace_back("version=" FLOCKBRIDGE_VERSION);
  if (auto written = write_avahi_service_file(path, announcement); !written) {
    log_warning("mDNS: the robot is not announced on the network: " + written.error().message);
    return;
  }
  log_info("mDNS: announced as \"" + announcement.name + "\" (" + path + ")");
}

void Bridge::fleet_changed() {
  // At most four fleet messages a second, however busy the class.
  if (fleet_due_ || !fleet_timer_) return;
  fleet_due_ = true;
  uv_timer_start(
      fleet_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Bridge>(timer)) self->send_fleet();
      },
      kFleetInterval.count(), 0);
}

void Bridge::send_fleet() {
  fleet_due_ = false;
  std::array<SharedBuffer, 2> encoded;
  for (Session* session : session_list_) {
    if (session->closing() || !session->follows_fleet()) continue;
    SharedBuffer& buffer = encoded[encoding_index(session->encoding())];
    if (!buffer) buffer = wire::json_only(session->encoding(), fleet_message());
    session->send(buffer);
  }
}

std::string Bridge::fleet_message() const {
  nlohmann::ordered_json message{{"type", "fleet"}, {"now", unix_seconds_now()}, {"robots", fleet_.robots()}};
  return message.dump();
}

void Bridge::stop_fleet(Session& session, const protocol::FleetEmergency& request, const nlohmann::json& id) {
  const char* what = request.clear ? "clear the class's emergency stop" : "stop the class";
  if (!fleet_.hub()) {
    session.reply_error(id, Error{"this bridge is not the class hub (fleet.hub)"});
    return;
  }
  if (session.role() != Role::Teacher) {
    session.reply_error(id, Error{config_.access.teacher_secret.empty()
                                      ? std::string("only the teacher may ") + what +
                                            " from the hub, and no teacher secret is set on it (access.teacher_secret)"
                                      : std::string("only the teacher may ") + what +
                                            R"( from the hub: {"cmd":"auth","teacher":"..."})",
                                  protocol::ErrorCode::Denied});
    return;
  }
  const std::string by = "the teacher at " + session.peer();
  auto sent = request.clear ? fleet_.publish_clear(request.robot, by) : fleet_.publish_emergency(request.robot, by);
  if (!sent) {
    session.reply_error(id, sent.error());
    return;
  }
  const std::vector<std::string>& offline = sent.value().offline;
  if (offline.empty()) {
    session.reply_ok(id);
    return;
  }
  // A robot that is offline does not hear it now: say so, and what happens.
  std::string names;
  for (const std::string& name : offline) names += (names.empty() ? "" : ", ") + name;
  const std::string note = names + (offline.size() == 1 ? " is" : " are") +
                           " offline and did not hear it; the hub keeps the " + (request.clear ? "clearing" : "stop") +
                           " and sends it the moment " + (offline.size() == 1 ? "it is" : "each is") +
                           " back on the broker" + (request.clear ? "" : " (Clear on the hub cancels it)");
  session.send(wire::json_only(session.encoding(), protocol::json::fleet_sent(id, offline, note)));
}

nlohmann::ordered_json Bridge::lease_holder_json() const {
  const auto& lease = lease_.holder();
  if (!lease) return nullptr;
  const auto found = sessions_.find(lease->client);
  if (found == sessions_.end()) return nullptr;
  const Session& s = *found->second;
  return {{"client", s.id()}, {"peer", s.peer()}, {"kind", client_kind_name(s.kind())}, {"since", lease->since}};
}

nlohmann::ordered_json Bridge::fleet_status() const {
  const std::string scheme = config_.http_tls_cert.empty() ? "http://" : "https://";
  // Where clients reach the robot: its JSON listener's address, or every
  // address of its interfaces when it listens on all of them.
  const std::string& json_bind = config_.effective_json_bind();
  const std::vector<std::string> addresses =
      listens_everywhere(json_bind) ? interface_addresses() : std::vector<std::string>{json_bind};
  nlohmann::ordered_json status{
      {"family", driver_->family()},
      {"model", driver_->model()},
      {"version", FLOCKBRIDGE_VERSION},
      {"session", session_id_},
      {"addresses", addresses},
      {"ports", {{"native", port()}, {"json", json_port()}, {"http", http_port()}}},
      {"link", {{"state", protocol::link_state_name(driver_->link_state())}, {"reason", driver_->link_reason()}}},
      {"lease", lease_holder_json()},
      {"emergency", latch_.latched()},
      {"latch", latch_json()},
  };
  if (config_.http && http_port() != 0) {
    const std::string& bind = config_.effective_http_bind();
    const std::string host = !listens_everywhere(bind) ? bind : addresses.empty() ? "localhost" : addresses.front();
    const bool ipv6 = host.find(':') != std::string::npos;
    status["dashboard"] = scheme + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(http_port()) + "/";
  }
  return status;
}

nlohmann::ordered_json Bridge::fleet_telemetry() const {
  const protocol::StatsSnapshot stats = snapshot();
  nlohmann::ordered_json telemetry{{"link", protocol::link_state_name(stats.link_state)}};
  if (latest_sensor_ && stats.link_state == protocol::LinkState::Up) {
    // The family's own sensor message, read for the fields every family shares.
    const SharedBuffer encoded = latest_sensor_->encode(Encoding::Json, sensor_seq_, unix_seconds_now());
    const nlohmann::json sensor = encoded ? nlohmann::json::parse(*encoded, nullptr, false) : nlohmann::json{};
    if (sensor.is_object()) {
      for (const char* key : {"battery_v", "pose", "v_mm_s", "w_deg_s"}) {
        if (const auto found = sensor.find(key); found != sensor.end()) telemetry[key] = *found;
      }
    }
  }
  const nlohmann::ordered_json holder = lease_holder_json();
  telemetry["lease"] = holder.is_object() ? holder["peer"] : nlohmann::ordered_json(nullptr);
  telemetry["emergency"] = latch_.latched();
  telemetry["clients"] = stats.clients.size();
  std::uint64_t failed = 0;
  for (const std::uint64_t n : stats.bridge.failed) failed += n;
  telemetry["errors"] = {{"bad_checksum", protocol::counter(stats.link_counters, "bad_checksum")},
                         {"commands_failed", failed},
                         {"safety_stops", stats.bridge.safety_stops},
                         {"sensor_messages_dropped", stats.bridge.sensor_messages_dropped}};
  return telemetry;
}

void Bridge::clear_emergency(Session& session, const nlohmann::json& id) {
  auto cleared = latch_.clear(EmergencyLatch::clearer(session.role()), config_.access,
                              {session.id(), session.peer(), {}, unix_seconds_now()});
  if (!cleared) {
    session.reply_error(id, cleared.error());
    return;
  }
  if (cleared.value().any()) {
    log_warning("client " + std::to_string(session.id()) + " (" + session.peer() + ", " +
                std::string(role_name(session.role())) + ") cleared the emergency stop" +
                (cleared.value().fleet ? " (the class's too)" : ""));
    fleet_.event({{"type", "emergency"},
                  {"latched", false},
                  {"source", "local"},
                  {"client", session.id()},
                  {"by", session.peer()},
                  {"reason", ""}});
    latch_changed();
  }
  session.reply_ok(id);
}

void Bridge::change_setting(Session& session, const protocol::ChangeSetting& change, const nlohmann::json& id) {
  if (session.role() != Role::Teacher) {
    session.reply_error(id, Error{R"(only the teacher may change settings: {"cmd":"auth","teacher":"..."})",
                                  protocol::ErrorCode::Denied});
    return;
  }
  auto changed = with_setting(settings_, config_, change.key, change.value);
  if (!changed) {
    session.reply_error(id, changed.error());
    return;
  }
  log_info("client " + std::to_string(session.id()) + " (" + session.peer() + ", teacher) sets " + change.key + " = " +
           change.value + ", until the next reload or restart");
  reload(changed.value());
  session.reply_ok(id);
}

void Bridge::approve_client(Session& session, std::uint64_t client, const nlohmann::json& id) {
  const auto found = sessions_.find(client);
  const bool leaving = found == sessions_.end() || found->second->closing();
  if (auto approved = pairing_.approve(session.role(), client, leaving); !approved) {
    session.reply_error(id, approved.error());
    return;
  }
  Session& approved = *found->second;
  approved.set_role(Role::Driver);
  log_info("client " + std::to_string(client) + " (" + approved.peer() + ") was approved by client " +
           std::to_string(session.id()) + " (" + session.peer() + "): it may drive until it disconnects");
  broadcast_pairing();
  session.reply_ok(id);
}

std::string Bridge::pairing_message() const {
  return pairing_.message([&](std::uint64_t client) -> std::optional<std::string> {
    const auto found = sessions_.find(client);
    if (found == sessions_.end()) return std::nullopt;
    return found->second->peer();
  });
}

void Bridge::broadcast_pairing() {
  broadcast([&](const Session& session) { return wire::json_only(session.encoding(), pairing_message()); });
}

std::string Bridge::latch_message() const {
  const AccessSettings& access = config_.access;
  const auto describe = [&](StopSource source, const EmergencyLatch::Hold& hold, bool latched) {
    return protocol::json::LatchHold{stop_source_name(source),
                                     hold.client,
                                     hold.by,
                                     hold.reason,
                                     hold.since,
                                     latched ? EmergencyLatch::may_clear(source, access) : std::vector<std::string>{}};
  };
  protocol::json::LatchState state;
  const std::string clear_by = latch_.who_may_clear(access);
  state.latched = latch_.latched();
  state.clear_by = clear_by;
  state.may_clear = latch_.may_clear(access);
  for (const StopSource source : {StopSource::Fleet, StopSource::Local}) {
    if (const auto& hold = latch_.hold(source)) state.holds.push_back(describe(source, *hold, true));
  }
  if (!state.holds.empty()) {
    state.by = state.holds.front();
  } else if (const auto& cleared = latch_.last_cleared()) {
    state.by = describe(latch_.last_cleared_by(), *cleared, false);
  }
  return protocol::json::emergency_latch(state);
}

nlohmann::ordered_json Bridge::latch_json() const {
  const EmergencyLatch::Hold* hold = latch_.first_hold();
  if (hold == nullptr) return nullptr;
  return {{"source", latch_.hold(StopSource::Fleet) ? "fleet" : "local"},
          {"client", hold->client},
          {"by", hold->by},
          {"reason", hold->reason},
          {"since", hold->since},
          {"local_too", latch_.hold(StopSource::Fleet) && latch_.hold(StopSource::Local)},
          {"may_clear", latch_.may_clear(config_.access)},
          {"clear_by", latch_.who_may_clear(config_.access)}};
}

void Bridge::take_lease(const Session& session, SteadyTime now) {
  lease_.take(session.id(), unix_seconds_now(), now);
  ++counters_.control_changes;
  log_info("client " + std::to_string(session.id()) + " (" + session.peer() + ") drives the robot");
  broadcast_lease();
}

void Bridge::authenticate(Session& session, const protocol::Authenticate& auth, const nlohmann::json& id) {
  const SteadyTime now = steady_now();
  const std::string address = session.address();
  const char* what = auth.teacher ? "teacher's secret" : "driver PIN";
  const std::string& expected = auth.teacher ? config_.access.teacher_secret : config_.access.driver_pin;
  if (expected.empty()) {
    session.reply_error(id, Error{std::string("no ") + what + " is set on this robot" +
                                      (auth.teacher ? "" : ": anyone may drive it, without auth"),
                                  protocol::ErrorCode::Denied});
    return;
  }
  if (const auto wait = logins_.wait(address, now)) {
    session.reply_error(id, Error{"too many wrong secrets from " + address + ": try again in " +
                                      std::to_string((wait->count() + 999) / 1000) + " s",
                                  protocol::ErrorCode::Denied});
    return;
  }
  if (!same_secret(auth.secret, expected)) {
    const auto delay = logins_.failed(address, now);
    const std::string wait = delay.count() == 0
                                 ? std::string("try again")
                                 : "the next try is taken in " + std::to_string((delay.count() + 999) / 1000) + " s";
    log_warning("client " + std::to_string(session.id()) + " (" + session.peer() + ") gave a wrong " + what +
                (delay.count() == 0 ? std::string() : "; its address waits " + std::to_string(delay.count()) + " ms"));
    session.reply_error(id, Error{std::string("wrong ") + what + "; " + wait, protocol::ErrorCode::Denied});
    return;
  }
  logins_.succeeded(address);
  const Role role = auth.teacher ? Role::Teacher : std::max(session.role(), Role::Driver);
  session.set_role(role);
  log_info("client " + std::to_string(session.id()) + " (" + session.peer() + ") is now " +
           std::string(role_name(role)));
  session.send(wire::json_only(session.encoding(), protocol::json::authorised(id, role_name(role))));
}

void Bridge::take_control(Session& session, const nlohmann::json& id) {
  if (lease_.held_by(session.id())) {
    session.reply_ok(id);
    return;
  }
  if (session.role() == Role::Viewer) {
    session.reply_error(
        id, Error{R"(only a driver may take control: give the robot's PIN first: {"cmd":"auth","pin":"..."})",
                  protocol::ErrorCode::Denied});
    return;
  }
  const SteadyTime now = steady_now();
  if (!lease_.holder()) {
    take_lease(session, now);
    session.reply_ok(id);
    return;
  }
  const auto holder = sessions_.find(lease_.holder()->client);
  if (session.role() == Role::Teacher) {
    if (holder != sessions_.end()) {
      end_lease(*holder->second, "was taken over by the teacher, client " + std::to_string(session.id()), true);
    }
    take_lease(session, now);
    session.reply_ok(id);
    return;
  }
  // A driver asks; the driver hands over with release, or does not.
  if (holder != sessions_.end() && holder->second->encoding() == Encoding::Json) {
    holder->second->send(wire::json_only(Encoding::Json, protocol::json::lease_request(session.id(), session.peer())));
    session.reply_ok(id);
    return;
  }
  session.reply_error(id, Error{"client " + std::to_string(lease_.holder()->client) +
                                    " drives the robot and cannot be asked to hand over (a program of the original "
                                    "software); it is yours once it goes away or sends no command for " +
                                    std::to_string(config_.access.lease_idle.count()) + " ms",
                                protocol::ErrorCode::Busy});
}

void Bridge::end_lease(const Session& session, const std::string& why, bool at_once) {
  if (!lease_.end(session.id())) return;
  const std::string reason =
      "client " + std::to_string(session.id()) + " (" + session.peer() + "), which drove the robot, " + why;
  log_info(reason);
  broadcast_lease(reason);
  // Stopped whether or not the bridge thinks it moves: what it cannot see
  // (a raw command, a move whose DMC was lost) must not keep it driving.
  if (at_once) {
    safety_stop(reason);
  } else {
    owed_stop_ = reason;  // once the session is gone (sweep_closed)
  }
}

std::string Bridge::lease_message(std::string_view reason) const {
  std::optional<protocol::json::LeaseHolder> holder;
  if (const auto& lease = lease_.holder()) {
    if (const auto found = sessions_.find(lease->client); found != sessions_.end()) {
      const Session& s = *found->second;
      holder = protocol::json::LeaseHolder{s.id(), s.peer(), client_kind_name(s.kind()), lease->since};
    }
  }
  return protocol::json::lease(holder, reason);
}

void Bridge::broadcast_lease(std::string_view reason) {
  broadcast([&](const Session& session) { return wire::json_only(session.encoding(), lease_message(reason)); });
  fleet_.event({{"type", "lease"}, {"holder", lease_holder_json()}, {"reason", reason}});
  fleet_.status_changed();
}

void Bridge::session_released(Session& session) {
  end_lease(session, "gave up control (CLOSE)", true);
}

void Bridge::safety_stop(const std::string& reason) {
  moving_ = false;
  motion_owner_.reset();
  ++counters_.safety_stops;
  auto sent = driver_->stop_robot(next_token_++);
  log_warning("safety stop: " + reason + (sent ? "; sent Stop" : "; could not send Stop: " + sent.error().message));
  broadcast([&](const Session& session) { return session.encode(notice::SafetyStop{reason}); });
  fleet_.event({{"type", "safety_stop"}, {"reason", reason}});
}

protocol::StatsSnapshot Bridge::snapshot() const {
  protocol::StatsSnapshot snapshot;
  snapshot.uptime_s = std::chrono::duration<double>(steady_now() - started_at_).count();
  driver_->add_stats(snapshot);
  snapshot.bridge = counters_;
  if (const auto& lease = lease_.holder()) snapshot.control_holder = lease->client;
  if (const MqttCounters* mqtt = fleet_.counters()) {
    snapshot.mqtt = protocol::NamedCounters{{"connected", fleet_.connected() ? 1 : 0},
                                            {"connects", mqtt->connects},
                                            {"connect_failures", mqtt->connect_failures},
                                            {"disconnects", mqtt->disconnects},
                                            {"published", mqtt->published},
                                            {"queued", fleet_.queued()},
                                            {"replaced", mqtt->replaced},
                                            {"dropped", mqtt->dropped},
                                            {"received", mqtt->received}};
  }
  for (const auto& [id, session] : sessions_) {
    if (!session->closing() && !session->refusing()) snapshot.clients.push_back(session->snapshot());
  }
  return snapshot;
}

void Bridge::log_stats() const {
  const protocol::StatsSnapshot s = snapshot();
  std::uint64_t failed = 0;
  for (const std::uint64_t n : s.bridge.failed) failed += n;
  log_info("stats: link " + std::string(protocol::link_state_name(s.link_state)) +
           (s.link_summary.empty() ? "" : ", " + s.link_summary) + ", commands " +
           std::to_string(s.bridge.commands_received) + " (failed " + std::to_string(failed) + "), clients " +
           std::to_string(s.clients.size()) + " (refused " + std::to_string(s.bridge.clients_refused) + ", dead " +
           std::to_string(s.bridge.clients_dead) + "), sensor messages dropped " +
           std::to_string(s.bridge.sensor_messages_dropped));
}

void Bridge::session_closed(Session& session) {
  closed_sessions_.push_back(session.id());
  if (pairing_.forget(session.id())) {
    broadcast_pairing();
  }
  const bool held_control = lease_.held_by(session.id());
  end_lease(session, "is gone", false);
  if (!held_control && moving_ && motion_owner_ == session.id()) {
    owed_stop_ =
        "client " + std::to_string(session.id()) + " (" + session.peer() + "), which set the robot moving, is gone";
  }
  sweeper_.schedule();
}

void Bridge::sweep_closed() {
  std::erase_if(session_list_, [](const Session* session) { return session->closing(); });
  for (const std::uint64_t id : closed_sessions_) sessions_.erase(id);
  closed_sessions_.clear();
  if (owed_stop_) {
    const std::string reason = std::move(*owed_stop_);
    owed_stop_.reset();
    // Unless another client has set the robot moving since.
    if (!motion_owner_ || !sessions_.contains(*motion_owner_)) safety_stop(reason);
  }
}

template <typename Encode>
void Bridge::broadcast(Encode&& encode, MessageOrigin origin) {
  std::array<SharedBuffer, 2> encoded;
  std::array<bool, 2> done{};
  for (Session* session : session_list_) {
    if (session->closing() || session->refusing()) continue;
    const std::size_t k = encoding_index(session->encoding());
    if (!done[k]) {
      encoded[k] = encode(*session);
      done[k] = true;
    }
    session->send(encoded[k], origin);
  }
}

void Bridge::driver_has_events() {
  drainer_.schedule();
}

void Bridge::drain_driver_events() {
  // The sensor messages of one batch go out together. A batch holds one
  // packet while the bridge keeps up; when it has fallen behind (more
  // clients than it can serve at the robot's rate), it holds several, and
  // each client then gets them in one write instead of one write each: the
  // cost per message falls as the load rises, and the bridge catches up
  // without dropping any.
  while (auto event = driver_->next_event()) {
    std::visit(Overloaded{
                   [&](const driver_event::LinkChanged& changed) { on_link_changed(changed); },
                   [&](const driver_event::Published& published) { on_published(published); },
                   [&](const driver_event::CommandDone& done) { on_command_done(done); },
                   [&](const driver_event::Note& note) { log_debug(note.text); },
               },
               *event);
  }
  for (Session* session : held_) session->flush_output();
  held_.clear();
}

void Bridge::on_link_changed(const driver_event::LinkChanged& changed) {
  const protocol::LinkState state = changed.state;
  // A robot that is being configured has just reset: it is not moving.
  if (state == protocol::LinkState::Handshaking || state == protocol::LinkState::Down) moving_ = false;
  const std::string text = "robot link " + std::string(protocol::link_state_name(state)) +
                           (changed.reason.empty() ? "" : ": " + changed.reason);
  if (state == protocol::LinkState::Up || state == protocol::LinkState::Handshaking) {
    log_info(text);
  } else {
    log_warning(text);
  }
  service_.update(service_status_text());
  broadcast([&](const Session& session) { return session.encode(notice::Link{state, changed.reason}); });
  fleet_.event({{"type", "link"}, {"state", protocol::link_state_name(state)}, {"reason", changed.reason}});
  fleet_.status_changed();
}

void Bridge::on_published(const driver_event::Published& published) {
  if (!published.warning.empty()) log_warning(published.warning);
  if (published.robot_stopped) moving_ = false;
  const RobotMessage& message = *published.message;
  if (!message.is_sensor()) {
    broadcast([&](const Session& session) { return message.encode(session.encoding(), 0, 0); }, MessageOrigin::Robot);
    return;
  }
  ++sensor_seq_;
  ++counters_.sensor_packets;
  if (fleet_.enabled()) latest_sensor_ = published.message;
  const SteadyTime now = steady_now();
  const double received = unix_seconds_now();
  std::array<SharedBuffer, 2> encoded;
  for (Session* session : session_list_) {
    if (!session->wants_sensor(now)) continue;
    SharedBuffer& buffer = encoded[encoding_index(session->encoding())];
    if (!buffer) buffer = message.encode(session->encoding(), sensor_seq_, received);
    if (session->send_sensor(buffer, now, true)) held_.push_back(session);
  }
}

void Bridge::on_command_done(const driver_event::CommandDone& done) {
  const auto pending = pending_.find(done.token);
  if (pending == pending_.end()) return;
  const PendingCommand command = std::move(pending->second);
  pending_.erase(pending);
  const auto session = sessions_.find(command.session);
  if (session == sessions_.end() || session->second->closing()) return;
  if (done.error) {
    session->second->reply_error(command.id, *done.error);
  } else {
    session->second->reply_ok(command.id, done.confirmed);
  }
  session->second->command_finished();
}

void Bridge::on_housekeeping() {
  const SteadyTime now = steady_now();
  for (auto& [id, session] : sessions_) session->housekeeping(now);
  service_.update(service_status_text());
  flush_log_repeats();
  if (const auto& lease = lease_.holder()) {
    if (const auto holder = sessions_.find(lease->client); holder != sessions_.end()) {
      const Session& session = *holder->second;
      if (auto why = lease_.expired(now, session.last_input(), session.exclusive_control(), config_.access.lease_idle,
                                    config_.control_silence)) {
        end_lease(session, *why, true);
      }
    }
  }
  if (config_.motion_watchdog.count() > 0 && moving_ && now - last_motion_ >= config_.motion_watchdog) {
    safety_stop("no motion command for " + std::to_string(config_.motion_watchdog.count()) +
                " ms while the robot was moving (motion watchdog)");
  }
}

void Bridge::stop() {
  if (stopped_) return;
  stopped_ = true;
  log_info("stopping");
  service_.stopping();
  // The robot's stop goes out first: do not leave it driving on its own.
  driver_->stop();
  fleet_.stop();
  for (Listener& listener : listeners_) listener.tcp.reset();
  for (auto& [id, session] : sessions_) session->close("the bridge is stopping", Session::CloseKind::Shutdown);
  session_list_.clear();
  held_.clear();
  sessions_.clear();
  web_.stop();
  closed_sessions_.clear();
  pending_.clear();
  drainer_.reset();
  housekeeping_.reset();
  fleet_timer_.reset();
  sweeper_.reset();
  stats_timer_.reset();
  for (auto& signal : signals_) signal.reset();
  flush_log_repeats(true);
}

void Bridge::arm_stats_timer() {
  const auto every =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(config_.stats_interval).count());
  if (every == 0) {
    uv_timer_stop(stats_timer_.get());
    return;
  }
  uv_timer_start(
      stats_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Bridge>(timer)) self->log_stats();
      },
      every, every);
}

std::string Bridge::service_status_text() const {
  return ServiceStatus::describe(driver_->link_state(), driver_->link_reason(), sessions_.size());
}

void Bridge::on_reload_signal() {
  log_info("received SIGHUP: reloading the configuration");
  if (!config_loader_) {
    log_warning("no configuration to reload: nothing changed");
    return;
  }
  service_.reloading();
  auto loaded = config_loader_();
  if (!loaded) {
    log_error("the configuration was not reloaded; the bridge runs on as it was:");
    log_lines(LogLevel::Error, loaded.error().message);
  } else {
    for (const std::string& notice : loaded.value().notices) log_warning(notice);
    reload(loaded.value());
  }
  (void)service_.ready(service_status_text());
}

void Bridge::reload(const Config& loaded) {
  const Reload plan = plan_reload(settings_, config_, loaded);
  config_ = plan.config;
  set_log_level(config_.log_level);
  for (const auto& change : plan.applied) log_info("reloaded " + change);
  for (const auto& change : plan.deferred) log_warning("not reloaded, needs a restart: " + change);
  if (plan.applied.empty() && plan.deferred.empty()) log_info("the configuration is unchanged");

  arm_stats_timer();
  web_.set_allowed_origins(host_list(config_.access.allowed_origins));
  driver_->reload(config_);
  fleet_.reload(config_);
}

}  // namespace flockbridge::bridge
