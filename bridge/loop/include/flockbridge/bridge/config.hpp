// Everything the daemon can be told, with the defaults it runs with.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/family_settings.hpp"

namespace flockbridge::bridge {

enum class LogLevel { Debug, Info, Warning, Error };

/// What a program on a robot family's own port (native.port) may do.
enum class NativePortMode : std::uint8_t {
  Auto,      ///< Paired when a driver PIN is set, else Open
  Open,      ///< drive, under the control lease, as with the original software
  Readonly,  ///< receive only: its commands (stops aside) are refused and counted
  Paired,    ///< as Readonly until someone with the PIN approves the connection on the dashboard
};

/// Who may drive ([access]). The secrets come from the file only.
struct AccessSettings {
  /// The code a JSON or WebSocket client gives to drive ({"cmd":"auth","pin":...}); empty: anyone may.
  std::string driver_pin;
  /// The teacher's secret ({"cmd":"auth","teacher":...}); empty: nobody is the teacher.
  std::string teacher_secret;
  /// A driver that has sent no command this long gives up control of the robot.
  std::chrono::milliseconds lease_idle{10000};
  NativePortMode native_port_mode = NativePortMode::Auto;
  /// The mode in force: Auto resolved by whether a PIN is set.
  [[nodiscard]] NativePortMode effective_native_port_mode() const noexcept {
    if (native_port_mode != NativePortMode::Auto) return native_port_mode;
    return driver_pin.empty() ? NativePortMode::Open : NativePortMode::Paired;
  }
  /// A driver may clear a latched emergency stop, not only the teacher (always
  /// so when no teacher secret is set: someone must be able to).
  bool driver_clears_emergency = false;
  /// Host names, comma-separated, whose web pages may open the dashboard's
  /// WebSocket besides the bridge's own names and addresses.
  std::string allowed_origins;
};

/// The fleet's MQTT broker ([mqtt]): where the bridge publishes its status,
/// telemetry and events, and hears the fleet's emergency stop.
struct FleetMqttSettings {
  bool enabled = false;
  std::string host = "localhost";
  std::uint16_t port = 1883;
  std::string robot_name;  ///< the topics' robot name and the client id; empty: the host name
  std::string username;    ///< empty: the robot name when a password file is set, else no credentials
  std::string password_file;
  std::string topic_prefix = "flockbridge/v1";
  double telemetry_hz = 1;
  std::chrono::seconds keepalive{10};
  std::chrono::milliseconds reconnect_max{10000};
  std::size_t queue_limit = 64;
};

/// Recording the runs in MCAP files ([record], recorder.hpp).
struct RecordSettings {
  bool enabled = false;  ///< record from the start; record_start and record_stop turn it on and off
  std::string directory = "/var/lib/flockbridge/recordings";
  std::uint64_t file_mb = 64;             ///< a new file once the current one holds this many megabytes
  std::chrono::minutes file_minutes{60};  ///< or is this old
  std::uint64_t total_mb = 2048;          ///< the oldest files are removed once all of them hold more
};

/// A replay: the bridge serves a recording as if its robot were attached.
struct ReplaySettings {
  std::string file;  ///< the recording (.mcap); empty: no replay, a robot
  double speed = 1;  ///< how much faster than recorded
  bool wait = true;  ///< begin when the first client connects, not at once
};

/// robot.family's and serial.device's word for "whichever answers": plug and
/// play looks at the serial devices for a robot (bridge/autodetect/).
inline constexpr std::string_view kAnyFamily = "auto";
inline constexpr std::string_view kAnyDevice = "auto";

struct Config {
  // The robot. The families table (families.hpp) gives each family's
  // defaults of the family's own port, device and speed.
  std::string family;  ///< the robot family; empty: the table's first
  std::string model;   ///< the family's model; empty: the robot names it

  // The serial link.
  std::string device;  ///< the robot's serial device, or tcp:HOST:PORT; "auto": whichever answers (plug and play)
  /// Where --device auto looks: glob patterns, separated by spaces, in the order their devices are tried.
  std::string serial_search = "/dev/serial/by-id/* /dev/ttyACM* /dev/ttyUSB*";
  int baud = 115200;
  std::chrono::milliseconds reopen_min{250};   ///< first wait before reopening a vanished device
  std::chrono::milliseconds reopen_max{5000};  ///< the wait doubles up to this
  /// Each family's own settings, in its slot (bridge/<family>/settings.hpp).
  FamilySettings families;

  // The listeners.
  std::string bind = "0.0.0.0";   ///< every listener's address unless it has its own
  std::string native_bind;        ///< empty: `bind`
  std::uint16_t native_port = 0;  ///< the family's own port, for its original client programs
  /// robot.family "auto" without a native.port of its own: the port is the found family's.
  bool native_port_follows_family = false;
  std::string json_bind;  ///< empty: `bind`
  std::uint16_t json_port = 2006;
  std::size_t max_clients = 32;      ///< per listener
  std::size_t max_per_address = 16;  ///< connections of one computer, over every listener

  // The web server: the dashboard at /, the WebSocket JSON feed at /ws.
  bool http = true;
  std::string http_bind;  ///< empty: the same as `bind`
  std::uint16_t http_port = 8080;
  std::string http_root;  ///< the dashboard's files; empty: share/flockbridge/www beside bin/
  /// HTTPS and WSS on the dashboard's port: the certificate (PEM, chain
  /// included) and its private key; both empty: plain HTTP.
  std::string http_tls_cert;
  std::string http_tls_key;

  // The live view for Foxglove and Lichtblick (foxglove.websocket.v1), on
  // the web server's loop; off unless enabled.
  bool foxglove = false;
  std::string foxglove_bind;  ///< empty: the same as `bind`
  std::uint16_t foxglove_port = 8765;

  [[nodiscard]] const std::string& effective_native_bind() const noexcept { return or_bind(native_bind); }
  [[nodiscard]] const std::string& effective_json_bind() const noexcept { return or_bind(json_bind); }
  [[nodiscard]] const std::string& effective_http_bind() const noexcept { return or_bind(http_bind); }
  [[nodiscard]] const std::string& effective_foxglove_bind() const noexcept { return or_bind(foxglove_bind); }

  // Each client.
  std::chrono::milliseconds message_timeout{2000};  ///< a partial message is discarded after this
  std::size_t max_line = 4096;                      ///< longest JSON line
  std::size_t queue_limit = 256;                    ///< messages waiting for a client (sensor messages never pile up)
  std::chrono::milliseconds stall_timeout{10000};   ///< a client whose writes stay stuck this long is closed
  int client_send_buffer = 32 * 1024;               ///< SO_SNDBUF per client (0: the system's default)
  bool client_io_uring = true;                      ///< several clients' writes a system call, where the kernel allows

  // How the kernel schedules the loop (scheduling.hpp).
  bool real_time = true;        ///< ask for the real-time class at start
  int real_time_priority = 20;  ///< SCHED_FIFO's priority, 1-99

  AccessSettings access;
  FleetMqttSettings mqtt;
  RecordSettings record;
  ReplaySettings replay;
  /// The class hub: follows every robot on the broker and serves /fleet.
  bool fleet_hub = false;
  /// The Avahi service file filled in at start (mDNS); empty: none.
  std::string mdns_service_file = "/etc/avahi/services/flockbridge.service";

  // Safety and dead peers.
  double command_rate = 200;  ///< commands a second per client, on average (a robot taking one per 5 ms)
  double command_burst = 20;  ///< commands a client may send at once
  std::chrono::milliseconds motion_watchdog{0};  ///< stop a moving robot without motion commands this long (0: off)
  /// A program holding control of the robot (one-driver ports) loses it after sending nothing this long.
  std::chrono::milliseconds control_silence{1000};
  std::chrono::milliseconds dead_peer_timeout{10000};  ///< a client whose network vanished is closed within about this
  /// The robot is stopped within this of the network of the client driving it vanishing (driver_watch.hpp).
  std::chrono::milliseconds driver_lost{1000};
  std::chrono::seconds stats_interval{300};  ///< log the counters this often (0: never)

  // The simulated robot (--simulate): the simulator program, started by the
  // bridge on a pseudo-terminal, without line noise.
  bool simulate = false;

  LogLevel log_level = LogLevel::Info;

  /// Once listening, say to the person at the terminal where to connect
  /// (--welcome, which scripts/start.sh gives; not a setting of the file).
  bool welcome = false;

  /// What reading the configuration has to tell its owner (settings under
  /// old names), logged once as a warning by whoever loaded it.
  std::vector<std::string> notices;

 private:
  [[nodiscard]] const std::string& or_bind(const std::string& own) const noexcept { return own.empty() ? bind : own; }
};

}  // namespace flockbridge::bridge
