// The daemon's core: one libuv loop that serves the robot family's own
// client programs on its native port, JSON-lines clients on port 2006 and
// the web dashboard with its WebSocket feed on port 8080, forwards their
// commands to the robot's driver (driver.hpp) and fans the robot's messages
// out to them, with the safety rules for every robot. All work happens in
// loop callbacks; the only other thread is the recording's writer
// (recorder.hpp), which owns no robot or client state.
//
// Bridge keeps the loop's lifecycle and drains the driver's events
// (bridge.cpp); its rules live in rooms of their own (CommandGate,
// ControlLease, EmergencyLatch, Pairing, LoginGuard, ServiceStatus) and its
// work in files named for it: bridge_clients.cpp (listeners and sessions),
// bridge_commands.cpp (commands through the gate, the latch, the safety stop),
// bridge_control.cpp (the lease's changes, sign-in, pairing, live settings),
// bridge_fleet.cpp (what the fleet sees), bridge_stats.cpp (the counters).
#pragma once

#include <uv.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/access.hpp"
#include "flockbridge/bridge/address_slots.hpp"
#include "flockbridge/bridge/client_hub.hpp"
#include "flockbridge/bridge/command_gate.hpp"
#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/control_lease.hpp"
#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/driver_watch.hpp"
#include "flockbridge/bridge/emergency_latch.hpp"
#include "flockbridge/bridge/fleet.hpp"
#include "flockbridge/bridge/foxglove_session.hpp"
#include "flockbridge/bridge/pairing.hpp"
#include "flockbridge/bridge/recorder.hpp"
#include "flockbridge/bridge/recording_tap.hpp"
#include "flockbridge/bridge/robot_family.hpp"
#include "flockbridge/bridge/scheduling.hpp"
#include "flockbridge/bridge/service_status.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/bridge/settings.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/bridge/web_server.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge {

/// The most a loop turn spends on each kind of bulk work (writing clients'
/// output, accepting new connections, ending departed ones: a TurnShare
/// each) before the loop polls again: a deadline of the robot's link that
/// falls due meanwhile waits at most about this long for each.
inline constexpr std::chrono::microseconds kLoopShare{100};

class Bridge final : public RobotDriver::Host,
                     public Session::Host,
                     public WebServer::Host,
                     public Fleet::Host,
                     public Recorder::Host {
 public:
  /// `settings`: every setting (families.hpp), for SIGHUP and `set`; it outlives the bridge.
  Bridge(uv_loop_t* loop, Config config, DriverFactory make_driver, const SettingsTable& settings);
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;
  ~Bridge() override;

  /// Binds the listeners (failure is fatal: the message says why) and starts
  /// the driver, which keeps trying to reach the robot.
  [[nodiscard]] protocol::Result<protocol::Done> start();
  /// Stops the robot if it can, closes every client and handle; the loop
  /// then runs out. Safe to call twice.
  void stop();

  /// What SIGHUP calls to read the configuration again (the file and the
  /// command line). Without it, SIGHUP is logged and changes nothing.
  void set_config_loader(std::function<protocol::Result<Config>()> loader) { config_loader_ = std::move(loader); }
  /// Applies, without dropping a client, each setting that SIGHUP may change
  /// (new robot settings are sent to the robot at once); logs each change, and
  /// each change that waits for a restart.
  void reload(const Config& loaded);
  [[nodiscard]] const Config& config() const noexcept { return config_; }

  /// The family's own port, for its original client programs.
  [[nodiscard]] std::uint16_t native_port() const noexcept { return native_listener_.bound_port; }
  [[nodiscard]] std::uint16_t json_port() const noexcept { return json_listener_.bound_port; }
  /// The web server's port; 0 when it is off.
  [[nodiscard]] std::uint16_t http_port() const noexcept { return web_.port(); }
  [[nodiscard]] std::uint16_t foxglove_port() const noexcept { return web_.foxglove_port(); }
  [[nodiscard]] const RobotDriver& driver() const noexcept { return *driver_; }
  [[nodiscard]] const std::string& session_id() const noexcept { return session_id_; }
  [[nodiscard]] std::size_t client_count() const noexcept { return clients_.size(); }
  /// Every counter, as clients get it in a "stats" message.
  [[nodiscard]] protocol::StatsSnapshot snapshot() const;

 private:
  struct Listener {
    Bridge* bridge = nullptr;
    ClientKind kind = ClientKind::Native;
    std::string bind;
    std::uint16_t port = 0;
    std::uint16_t bound_port = 0;
    std::string_view what;         ///< who it is for, in messages ("JSON clients")
    std::string_view port_option;  ///< the options that move it, for a message about it
    std::string_view bind_option;
    UvHandle<uv_tcp_t> tcp;
  };

  // RobotDriver::Host
  void driver_has_events() override;

  // Session::Host
  void session_request(Session& session, protocol::ClientRequest request, const nlohmann::json& id) override;
  void session_robot_command(Session& session, std::string_view cmd, const nlohmann::json& object,
                             const nlohmann::json& id) override;
  void session_released(Session& session) override;
  void session_input_over(Session& session) override;
  void session_closed(Session& session) override;
  void session_answered(const Session& session, const nlohmann::json& id, const protocol::Error* error,
                        std::optional<bool> confirmed, bool told) override;

  // Recorder::Host
  void recording_note(bool warning, const std::string& text) override;

  // Recording (bridge_recording.cpp).
  /// The hello a JSON client numbered `client` gets.
  [[nodiscard]] std::string hello_text(std::uint64_t client, Role role) const;
  [[nodiscard]] RecordingIdentity recording_identity() const;
  /// What the Foxglove live view serves: made for the first viewer, and
  /// again after the link has come up (the robot better known: its model).
  [[nodiscard]] std::shared_ptr<const FoxgloveOffer> foxglove_offer();
  /// record_start, record_stop: the teacher's or a driver's.
  void recording_request(Session& session, bool start, const nlohmann::json& id);
  /// Tells the JSON and WebSocket clients that recording started or stopped.
  void broadcast_recording();
  /// Who a session is, for the recording's messages.
  [[nodiscard]] static nlohmann::ordered_json client_json(const Session& session);

  // WebServer::Host
  WebSocketSession* websocket_opened(lws* wsi, WebSocketConnection* connection, bool foxglove) override;

  // Fleet::Host
  [[nodiscard]] nlohmann::ordered_json fleet_status() const override;
  [[nodiscard]] nlohmann::ordered_json fleet_telemetry() const override;
  void fleet_emergency(const std::string& by, const std::string& reason) override;
  void fleet_clear(const std::string& by, const std::string& reason) override;
  void fleet_changed() override;
  /// The hub's fleet message: {"type":"fleet","now":...,"robots":[...]}.
  [[nodiscard]] std::string fleet_message() const;
  void send_fleet();
  /// The hub's stop button (the teacher only).
  void stop_fleet(Session& session, const protocol::FleetEmergency& request, const nlohmann::json& id);
  /// Who drives, for the fleet's topics; null when nobody does.
  [[nodiscard]] nlohmann::ordered_json lease_holder_json() const;

  [[nodiscard]] protocol::Result<protocol::Done> listen(Listener& listener);
  /// A connection waiting on a listener: accepted, unless this loop turn
  /// has accepted for its share already (a class connecting at once).
  void on_connection(Listener& listener, int status);
  void accept_one(Listener& listener);
  /// The listeners paused for the turn, each accepting again.
  void resume_accepting();
  /// Takes a new client in, or refuses it when its port has too many.
  void admit(std::unique_ptr<Session> session, std::uint16_t port);
  [[nodiscard]] protocol::Result<protocol::Done> start_web_server(std::uint64_t file_limit);
  /// mDNS: fills in the Avahi service file with the robot's name, family and ports.
  void announce() const;
  /// A refused command's error, with the command likely meant when `cmd` is none.
  [[nodiscard]] protocol::Error with_suggestion(std::string_view cmd, protocol::Error refusal) const;
  /// --welcome: tells the person at the terminal where to connect, with the ports in use.
  void say_welcome() const;
  /// Sends a command in the robot family's form, under the safety rules;
  /// `effect` is what it does to the robot's motion.
  /// What the command gate calls instead of the driver's submit(command), when given.
  using DriverCall = std::function<protocol::Result<protocol::Done>(protocol::CommandToken)>;
  /// `request`: the JSON command, when it came as one (for the recording).
  void submit_command(Session& session, protocol::ByteView command, MotionEffect effect, const nlohmann::json& id,
                      const DriverCall& call = {}, const nlohmann::json* request = nullptr);
  /// Refuses a command: a program of the original software on a one-driver
  /// port (some send ten a second) is counted and logged at debug level,
  /// anyone else is told (or logged, when its dialect has no error message).
  void refuse(Session& session, const nlohmann::json& id, const protocol::Error& error);
  /// "client 4 (10.0.0.7:51234)", or "client 4" once it has gone.
  [[nodiscard]] std::string describe_client(std::uint64_t client) const;
  /// `session`'s motion command has gone to the robot: it drives now.
  void take_lease(const Session& session, SteadyTime now);
  /// The lease of `session` ends (`why` it did, after "client N (peer), which drove the robot, ");
  /// the robot is stopped, `at_once` or once the current callbacks are done.
  /// The stop is told to everyone (a safety_stop) unless it is the
  /// `normal_end` of a drive (the driver released the robot or closed its
  /// connection) and the robot was standing.
  void end_lease(const Session& session, const std::string& why, bool at_once, bool normal_end = false);
  /// auth: a secret for a role, checked against [access] behind the login backoff.
  void authenticate(Session& session, const protocol::Authenticate& auth, const nlohmann::json& id);
  /// take: the teacher takes control at once; a driver asks the driver to hand over.
  void take_control(Session& session, const nlohmann::json& id);
  /// An emergency stop from a client of this robot's or from the fleet has
  /// gone to the robot: no motion until it is cleared (emergency_latch.hpp).
  void latch_emergency(StopSource source, EmergencyLatch::Hold hold);
  /// clear_emergency: whoever the latch's rules allow clears it.
  void clear_emergency(Session& session, const nlohmann::json& id);
  /// Tells everyone of a change of the latch: clients, the log's caller, the fleet.
  void latch_changed();
  /// set: the teacher changes a live setting, until the next reload from the file or restart.
  void change_setting(Session& session, const protocol::ChangeSetting& change, const nlohmann::json& id);
  /// approve: someone with the PIN lets a waiting native connection drive.
  void approve_client(Session& session, std::uint64_t client, const nlohmann::json& id);
  [[nodiscard]] std::string pairing_message() const;
  /// Tells every JSON and WebSocket client which native connections wait to be approved.
  void broadcast_pairing();
  /// Tells every JSON and WebSocket client who holds control now.
  void broadcast_lease(std::string_view reason = {});
  [[nodiscard]] std::string lease_message(std::string_view reason) const;
  /// Sends Stop on the bridge's own account and tells every client why
  /// (`tell` false: a stop at the normal end of a drive, logged only).
  void safety_stop(const std::string& reason, bool tell = true);
  /// The close watch on the driver (driver_watch.hpp): who is watched, and
  /// whether a watched client's network is lost. Every kWatchInterval.
  void on_watch();
  /// A watched client's network is lost (`why`): its robot stopped, its lease freed, everyone told.
  void driver_lost(const Session& session, const std::string& why);
  /// The dead-man time of the last motion command ran out (MotionEffect::deadman).
  void on_deadman();
  void log_stats() const;
  void arm_stats_timer();
  void on_reload_signal();
  /// Handles what the driver reported since the last time, then sends each
  /// client its sensor messages of the batch in one write.
  void drain_driver_events();
  void on_link_changed(const driver_event::LinkChanged& changed);
  void on_published(const driver_event::Published& published);
  void on_command_done(const driver_event::CommandDone& done);
  /// Plug and play serves another robot (driver_event::RobotChanged): its
  /// own programs' port follows its family, everyone gets its hello.
  void on_robot_changed();
  /// "a ROBOT robot (MODEL)", or "none yet (why)", for the log.
  [[nodiscard]] std::string describe_robot() const;
  /// Listens on the port of the robot's own programs: native.port, or its
  /// family's under plug and play; nothing when the robot has no such
  /// programs, or there is no robot (yet).
  [[nodiscard]] protocol::Result<protocol::Done> listen_native();
  /// "robot link up; 3 clients", for systemd's STATUS.
  [[nodiscard]] std::string service_status_text() const;
  void on_housekeeping();
  void sweep_closed();

  uv_loop_t* loop_;
  const SettingsTable& settings_;
  Config config_;
  std::string session_id_;
  std::shared_ptr<const FoxgloveOffer> foxglove_offer_;
  std::unique_ptr<RobotDriver> driver_;
  Listener native_listener_;
  Listener json_listener_;
  WebServer web_;
  Fleet fleet_;
  /// The robot's latest sensor message, for the fleet's telemetry.
  std::shared_ptr<const RobotMessage> latest_sensor_;
  std::uint64_t sensor_seq_ = 0;
  protocol::BridgeCounters counters_;
  SteadyTime started_at_ = steady_now();
  protocol::SchedulingSnapshot scheduling_;  ///< how the kernel schedules the loop, settled at start

  /// The robot's control lease: one client drives at a time, on every port.
  ControlLease lease_;
  EmergencyLatch latch_;
  /// What a command must pass to go to the robot, the answers owed for
  /// those that went, and what the robot was last told (command_gate.hpp).
  CommandGate gate_{config_, lease_, latch_, counters_,
                    [this](std::uint64_t client) { return describe_client(client); }};
  /// Connections on the family's own port waiting to be approved (native_port_mode paired).
  Pairing pairing_;
  /// Connections per computer over every port (the web server counts its
  /// own), and the slot each native or JSON session holds.
  AddressSlots slots_{config_.max_per_address};
  std::unordered_map<std::uint64_t, std::string> slot_of_;
  /// Wrong secrets make their address wait; wrong PINs (and a teacher's
  /// secret too short to be safe from many guesses) also draw on one budget
  /// for everyone, which a long teacher's secret never waits for.
  LoginGuard pin_logins_{{.shared_burst = kSharedPinGuesses, .shared_interval = kSharedPinInterval}};
  LoginGuard teacher_logins_;
  /// A Stop owed because the driving client went away, sent after the
  /// current callbacks (never from inside the link controller's).
  struct OwedStop {
    std::string reason;
    bool tell = true;  ///< a safety_stop for everyone, or only the log's
  };
  std::optional<OwedStop> owed_stop_;
  /// The lease's holder and the last client to set the robot moving, watched closely.
  DriverWatch watch_;
  UvHandle<uv_timer_t> watch_timer_;
  /// Stops the robot when the last motion command's dead-man time has run out.
  UvHandle<uv_timer_t> deadman_timer_;
  /// Drains the driver's events after the callbacks of the loop turn that
  /// brought them, and goes on writing held output in later turns.
  AfterPoll drainer_;
  /// The loop's turns, which each kind of bulk work's share is counted in.
  LoopTurns loop_turns_;
  /// Every client on every port, their held output and their departures (client_hub.hpp).
  ClientHub clients_{loop_turns_, kLoopShare, config_.client_io_uring};
  UvHandle<uv_timer_t> housekeeping_;
  /// The hub sends the fleet's changes at most this often to those who follow it.
  UvHandle<uv_timer_t> fleet_timer_;
  bool fleet_due_ = false;
  /// Forgets closed sessions once the callbacks that closed them are done.
  AfterPoll sweeper_;
  /// Resumes the listeners paused by a burst of connections, after the loop
  /// has polled, so that the robot's link comes between two shares.
  AfterPoll acceptor_;
  std::vector<Listener*> paused_listeners_;
  TurnShare accepting_share_{loop_turns_, kLoopShare};
  UvHandle<uv_timer_t> stats_timer_;
  std::array<UvHandle<uv_signal_t>, 3> signals_;
  std::function<protocol::Result<Config>()> config_loader_;
  ServiceStatus service_;
  /// The run's recording (MCAP), written off the loop.
  RecordingTap recording_;
  bool stopped_ = false;
};

/// Raises the limit on open files to the hard limit, so that the configured
/// number of clients fits; returns the limit now in force.
std::uint64_t raise_file_limit();

/// 16 random hex digits, new at each start, so clients can tell restarts apart.
[[nodiscard]] std::string new_session_id();

}  // namespace flockbridge::bridge
