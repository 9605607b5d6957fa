#include "flockbridge/bridge/bridge.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <random>
#include <tuple>
#include <variant>

#include "flockbridge/bridge/client_socket.hpp"
#include "flockbridge/bridge/host_address.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/mdns.hpp"
#include "flockbridge/bridge/overloaded.hpp"
#include "flockbridge/bridge/scheduling.hpp"
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
      watch_(config_.driver_lost),
      service_(loop),
      recording_(loop, *this) {
  native_listener_.bridge = json_listener_.bridge = this;
  native_listener_.kind = ClientKind::Native;
  native_listener_.bind = config_.effective_native_bind();
  native_listener_.what = "the robot's own programs";
  native_listener_.port_option = "--port";
  native_listener_.bind_option = "--native-bind";
  json_listener_.kind = ClientKind::Json;
  json_listener_.bind = config_.effective_json_bind();
  json_listener_.port = config_.json_port;
  json_listener_.what = "JSON clients";
  json_listener_.port_option = "--json-port";
  json_listener_.bind_option = "--json-bind";
}

Bridge::~Bridge() {
  stop();
}

void Bridge::say_welcome() const {
  // A listener on every address is reached here as localhost.
  const auto host = [](const std::string& bind) {
    return bind.empty() || bind == "0.0.0.0" || bind == "::" ? std::string("localhost") : bind;
  };
  const auto where = [&host](const std::string& bind, std::uint16_t port) { return host_port(host(bind), port); };
  const bool tls = !config_.http_tls_cert.empty();
  std::string text = "\nflockbridge serves ";
  text += driver_->replay() != nullptr ? "a replay of a recording of " : "";
  text += std::string(driver_->simulated() ? "a simulated " : "the ") + std::string(driver_->family()) + " robot" +
          (driver_->has_robot() ? "" : " (none: the class's hub)") +
          ". Connect to it from this machine, or from the network by its name or address:\n";
  const auto line = [&text](std::string_view who, const std::string& how) {
    text += "  " + std::string(who) + std::string(who.size() < 36 ? 36 - who.size() : 1, ' ') + how + "\n";
  };
  if (config_.http) {
    const std::string http = where(config_.effective_http_bind(), http_port());
    line("the dashboard, in any browser:", (tls ? "https://" : "http://") + http + "/");
  }
  if (native_listener_.tcp && !driver_->native_programs().empty()) {
    line(std::string(driver_->native_programs()) + ":", "TCP port " + std::to_string(native_port()));
  }
  line("JSON-lines clients:", "TCP port " + std::to_string(json_port()) + ", e.g.  nc " + host(json_listener_.bind) +
                                  " " + std::to_string(json_port()));
  if (config_.http) {
    line("WebSocket JSON clients:",
         (tls ? "wss://" : "ws://") + where(config_.effective_http_bind(), http_port()) + "/ws");
  }
  if (config_.foxglove) {
    line("Foxglove or Lichtblick, live:",
         (tls ? "wss://" : "ws://") + where(config_.effective_foxglove_bind(), foxglove_port()));
  }
  text += "Stop it with Ctrl-C.\n\n";
  std::fputs(text.c_str(), stderr);
}

Result<Done> Bridge::start() {
  // Before any other thread starts: those started afterwards are ordinary.
  scheduling_ = settle_loop_scheduling(config_.real_time, config_.real_time_priority);
  // Before the first timer is armed: the slack is taken when one is.
  if (!sharpen_timers()) log_warning("scheduling: the kernel refused a 1 ns timer slack; timers may wake 50 us late");
  // A client that vanishes while we write must cost an EPIPE, not the process.
  std::signal(SIGPIPE, SIG_IGN);
  // A recording that reaches a file size limit (RLIMIT_FSIZE) must cost an
  // EFBIG and a new file, not the process.
  std::signal(SIGXFSZ, SIG_IGN);

  // Each client is one descriptor; the device, the loop and the listeners a few more.
  const std::uint64_t files = raise_file_limit();
  if (files < 2 * config_.max_clients + 32) {
    log_warning("the limit on open files (" + std::to_string(files) + ") is below what " +
                std::to_string(config_.max_clients) + " clients per port need");
  }
  if (auto listening = listen_native(); !listening) return listening.error();
  if (auto listening = listen(json_listener_); !listening) return listening.error();
  if (config_.http || config_.foxglove) {
    auto serving = start_web_server(files);
    if (!serving) return serving.error();
  }
  if (drainer_.init<Bridge, &Bridge::drain_driver_events>(loop_, this) < 0 ||
      housekeeping_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0 ||
      sweeper_.init<Bridge, &Bridge::sweep_closed>(loop_, this) < 0 ||
      acceptor_.init<Bridge, &Bridge::resume_accepting>(loop_, this) < 0 || clients_.init(loop_) < 0 ||
      loop_turns_.init(loop_) < 0 ||
      watch_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0 ||
      deadman_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"cannot create the loop's timers"};
  }
  // A real-time loop gives its core away for a moment when it has kept it
  // busy for long: 5% of it at most, in slices the link's timing allows.
  if (scheduling_.real_time) loop_turns_.breathe(std::chrono::milliseconds(4), std::chrono::microseconds(200));
  const auto watch_period = static_cast<std::uint64_t>(DriverWatch::kWatchInterval.count());
  uv_timer_start(
      watch_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Bridge>(timer)) self->on_watch();
      },
      watch_period, watch_period);
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
  if (config_.record.enabled && !config_.replay.file.empty()) {
    // A replay is a recording already: recording it again would only fill
    // record.directory (and could remove the runs it keeps).
    log_info("record.enabled: a replay is not recorded");
  } else if (config_.record.enabled) {
    // A robot without its recording still serves its class: said, not fatal.
    if (auto recording = recording_.start(config_.record, recording_identity(), "the configuration"); !recording)
      log_error(recording.error().message);
    broadcast_recording();
  }
  announce();
  if (fleet_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"cannot create the loop's timers"};
  }
  std::string listening =
      (native_listener_.tcp
           ? "listening: native clients on " + host_port(native_listener_.bind, native_port()) + ", "
           : std::string(driver_->has_robot() ? "listening: no port of the robot's own programs (it has none), "
                                              : "listening: no robot's programs (no robot), ")) +
      "JSON clients on " + host_port(json_listener_.bind, json_port());
  if (config_.http) {
    listening += std::string(", dashboard on ") + (config_.http_tls_cert.empty() ? "http://" : "https://") +
                 host_port(config_.effective_http_bind(), http_port()) + "/";
  }
  if (config_.foxglove) {
    listening += std::string(", Foxglove live view on ") + (config_.http_tls_cert.empty() ? "ws://" : "wss://") +
                 host_port(config_.effective_foxglove_bind(), foxglove_port());
  }
  log_info(listening + "; session " + session_id_);
  if (config_.welcome) say_welcome();
  log_info("client writes: " + clients_.writes().summary());
  const std::string scheduling =
      "scheduling: " + scheduling_.summary + ", timer slack " + std::to_string(timer_slack_ns()) + " ns";
  if (scheduling_.real_time) {
    log_info(scheduling + ": the robot's link is served ahead of ordinary processes");
  } else if (!scheduling_.refused.empty()) {
    log_warning(scheduling + ": the real-time class was asked for, and " + scheduling_.refused +
                "; the bridge works the same, its timing less sure on a busy machine (docs/deployment.md)");
  } else {
    log_info(scheduling + " (scheduling.real_time is off)");
  }

  // Everything is bound: systemd may start what waits for the bridge.
  if (auto ready = service_.ready(service_status_text()); !ready) return ready.error();
  return Done{};
}

void Bridge::session_request(Session& session, protocol::ClientRequest request, const nlohmann::json& id) {
  if (session.knocking()) {
    // In the teacher's room: the teacher's secret lets it in, and a stop is
    // never refused; anything else waits for a place.
    const auto* command = std::get_if<protocol::SendCommand>(&request);
    const bool stop = command != nullptr && driver_->motion_effect(command->payload).stops;
    if (!std::holds_alternative<protocol::Authenticate>(request) && !stop) {
      session.reply_error(id, Error{"this port is full: only the teacher's secret lets this connection in now "
                                    "(auth with \"teacher\"); anything else: try again later",
                                    protocol::ErrorCode::Denied});
      return;
    }
  }
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
                 [&](const protocol::ReleaseControl&) {
                   end_lease(session, "gave up control", true, true);
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
                 [&](const protocol::StartRecording&) { recording_request(session, true, id); },
                 [&](const protocol::StopRecording&) { recording_request(session, false, id); },
             },
             request);
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
                   [&](const driver_event::RobotChanged&) { on_robot_changed(); },
               },
               *event);
  }
  // A thousand clients' writes take milliseconds: a turn writes for its
  // share (ClientHub::flush) and the rest waits for the next turn, after
  // the robot's link has had the loop.
  if (clients_.flush()) drainer_.schedule();
}

void Bridge::on_link_changed(const driver_event::LinkChanged& changed) {
  const protocol::LinkState state = changed.state;
  // A robot that was away may not be standing; one that is being
  // configured has just reset: it is not moving.
  gate_.link_changed(state == protocol::LinkState::Handshaking || state == protocol::LinkState::Down);
  const std::string text = "robot link " + std::string(protocol::link_state_name(state)) +
                           (changed.reason.empty() ? "" : ": " + changed.reason);
  if (state == protocol::LinkState::Up || state == protocol::LinkState::Handshaking) {
    log_info(text);
  } else {
    log_warning(text);
  }
  service_.update(service_status_text());
  clients_.broadcast([&](const Session& session) { return session.encode(notice::Link{state, changed.reason}); });
  if (recording_.active()) {
    recording_.record(Topic::Link, *wire::json_notice(notice::Link{state, changed.reason}));
    // The model may be known now: the next file's hello says so.
    if (state == protocol::LinkState::Up) recording_.set_identity(recording_identity());
  }
  // And the next Foxglove viewer's offer.
  if (state == protocol::LinkState::Up) foxglove_offer_.reset();
  fleet_.event({{"type", "link"}, {"state", protocol::link_state_name(state)}, {"reason", changed.reason}});
  fleet_.status_changed();
}

void Bridge::on_robot_changed() {
  const std::string robot = describe_robot();
  log_info("the robot is " + robot);
  // Another robot is not moving at the word of the last one's driver, and
  // nobody drives it yet.
  gate_.link_changed(true);
  if (const auto& lease = lease_.holder()) {
    if (const Session* holder = clients_.find(lease->client)) {
      end_lease(*holder, "drove the robot that was there before (the robot is " + robot + " now)", true);
    }
  }
  // The family's own programs spoke the last robot's protocol: their
  // connections end, and the port follows the robot's family.
  for (Session* session : clients_.sessions()) {
    if (session->kind() == ClientKind::Native) session->close("the robot behind the bridge is another one now");
  }
  native_listener_.tcp.reset();
  native_listener_.bound_port = 0;
  if (auto listening = listen_native(); !listening) {
    log_error(listening.error().message);
  } else if (native_listener_.tcp) {
    log_info("listening: native clients on " + host_port(native_listener_.bind, native_port()) + ", for " +
             std::string(driver_->native_programs()));
  }
  // Everyone else is told who is there now, as a client just connected is.
  for (Session* session : clients_.sessions()) {
    if (session->kind() != ClientKind::Native && !session->closing()) {
      session->send(wire::json_only(session->encoding(), hello_text(session->id(), session->role())));
    }
  }
  foxglove_offer_.reset();
  if (recording_.active()) recording_.set_identity(recording_identity());
  announce();
  service_.update(service_status_text());
  fleet_.status_changed();
}

std::string Bridge::describe_robot() const {
  // Where and how it was found is the driver's to log, as it finds it.
  if (driver_->found() == nullptr) return "none yet (" + driver_->link_reason() + ")";
  return "a " + std::string(driver_->family()) + " robot" +
         (driver_->model().empty() || driver_->model() == driver_->family()
              ? ""
              : " (" + std::string(driver_->model()) + ")");
}

Result<Done> Bridge::listen_native() {
  // A bridge with no robot (the class hub, or plug and play before it has
  // found one) has no port for a family's own programs.
  if (driver_->native_client_limit() == 0) return Done{};
  native_listener_.port = driver_->native_port(config_.native_port);
  return listen(native_listener_);
}

void Bridge::on_published(const driver_event::Published& published) {
  if (!published.warning.empty()) log_warning(published.warning);
  if (published.robot_stopped) gate_.robot_stopped();
  const RobotMessage& message = *published.message;
  if (!message.is_sensor()) {
    clients_.broadcast([&](const Session& session) { return message.encode(session.encoding(), 0, 0); },
                       MessageOrigin::Robot);
    if (recording_.active()) {
      recording_.record_published(Topic::Robot, message.encode(Encoding::Json, 0, 0),
                                  message.encode(Encoding::Native, 0, 0));
    }
    return;
  }
  ++sensor_seq_;
  ++counters_.sensor_packets;
  if (fleet_.enabled()) latest_sensor_ = published.message;
  const SteadyTime now = steady_now();
  const double received = unix_seconds_now();
  ClientHub::Encoded encoded;
  clients_.publish_sensor([&](Encoding encoding) { return message.encode(encoding, sensor_seq_, received); }, now,
                          encoded);
  if (recording_.active()) {
    // The messages clients get, every one, whether any client wants it or not.
    for (const Encoding encoding : {Encoding::Json, Encoding::Native}) {
      SharedBuffer& buffer = encoded[encoding_index(encoding)];
      if (!buffer) buffer = message.encode(encoding, sensor_seq_, received);
    }
    recording_.record_published(Topic::Sensor, encoded[encoding_index(Encoding::Json)],
                                encoded[encoding_index(Encoding::Native)]);
  }
}

void Bridge::on_housekeeping() {
  const SteadyTime now = steady_now();
  clients_.housekeeping(now);
  recording_.housekeeping(now);
  web_.sweep_connections();
  service_.update(service_status_text());
  flush_log_repeats();
  if (const auto& lease = lease_.holder()) {
    if (const Session* holder = clients_.find(lease->client)) {
      const Session& session = *holder;
      if (auto why = lease_.expired(now, session.last_input(), session.exclusive_control(), config_.access.lease_idle,
                                    config_.control_silence)) {
        end_lease(session, *why, true);
      }
    }
  }
  if (config_.motion_watchdog.count() > 0 && gate_.moving() && now - gate_.last_motion() >= config_.motion_watchdog) {
    safety_stop("no motion command for " + std::to_string(config_.motion_watchdog.count()) +
                " ms while the robot was moving (motion watchdog)");
  }
}

void Bridge::on_watch() {
  const auto& lease = lease_.holder();
  const auto changes = watch_.watch(lease ? std::optional(lease->client) : std::nullopt, gate_.motion_owner());
  for (const std::uint64_t client : changes.started) {
    if (Session* session = clients_.live(client)) watch_client_socket(session->socket_fd(), true, config_);
  }
  for (const std::uint64_t client : changes.ended) {
    if (Session* session = clients_.live(client)) watch_client_socket(session->socket_fd(), false, config_);
  }
  const SteadyTime now = steady_now();
  // A copy: a lost driver changes who is watched at the next reading.
  const std::vector<std::uint64_t> watched = watch_.clients();
  for (const std::uint64_t client : watched) {
    Session* session = clients_.live(client);
    if (session == nullptr) continue;
    if (auto why = watch_.check(client, peer_state(session->socket_fd()), now)) driver_lost(*session, *why);
  }
}

void Bridge::driver_lost(const Session& session, const std::string& why) {
  ++counters_.drivers_lost;
  if (lease_.held_by(session.id())) {
    end_lease(session, why, true);
  } else if (gate_.motion_owner() == session.id()) {
    safety_stop("client " + std::to_string(session.id()) + " (" + session.peer() + "), which set the robot moving, " +
                why);
  }
  // The connection stays, under the ordinary dead-peer timeout: a network
  // that comes back finds its client told, and free to drive again.
}

void Bridge::stop() {
  if (stopped_) return;
  stopped_ = true;
  log_info("stopping");
  service_.stopping();
  // The robot's stop goes out first: do not leave it driving on its own.
  driver_->stop();
  fleet_.stop();
  acceptor_.reset();
  paused_listeners_.clear();
  loop_turns_.reset();
  native_listener_.tcp.reset();
  json_listener_.tcp.reset();
  clients_.close_all("the bridge is stopping");
  web_.stop();
  gate_.clear();
  drainer_.reset();
  housekeeping_.reset();
  watch_timer_.reset();
  deadman_timer_.reset();
  fleet_timer_.reset();
  sweeper_.reset();
  stats_timer_.reset();
  for (auto& signal : signals_) signal.reset();
  recording_.stop("the bridge, stopping");  // its last job finishes the file before the loop runs out
  flush_log_repeats(true);
}

std::string Bridge::service_status_text() const {
  return ServiceStatus::describe(driver_->link_state(), driver_->link_reason(), clients_.size());
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
  watch_.set_lost_after(config_.driver_lost);
  web_.set_allowed_origins(host_list(config_.access.allowed_origins));
  driver_->reload(config_);
  fleet_.reload(config_);
}

}  // namespace flockbridge::bridge
