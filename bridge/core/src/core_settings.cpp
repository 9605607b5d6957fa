// The core's rows of the settings table (settings.hpp): the serial line,
// the robot's family and model, the listeners, the web server, clients,
// safety, access, the log, the simulator, and the fleet's broker, hub and
// mDNS. Each family's own rows are in its folder (bridge/<family>/).
#include "flockbridge/bridge/settings.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flockbridge/bridge/driver_watch.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/setting_rows.hpp"

namespace flockbridge::bridge {

namespace rows {

bool is_ip_address(const std::string& text) {
  in6_addr scratch{};
  return ::inet_pton(AF_INET, text.c_str(), &scratch) == 1 || ::inet_pton(AF_INET6, text.c_str(), &scratch) == 1;
}

std::string ip_address(const Value& value) {
  return is_ip_address(std::get<std::string>(value)) ? "" : "an IPv4 or IPv6 address such as 0.0.0.0, 127.0.0.1 or ::";
}
std::string ip_address_or_empty(const Value& value) {
  if (std::get<std::string>(value).empty()) return "";
  const std::string allowed = ip_address(value);
  return allowed.empty() ? "" : allowed + ", or \"\" for [listen] bind";
}
std::string not_blank(const Value& value) {
  return std::get<std::string>(value).empty() ? "a name, not \"\"" : "";
}
std::string not_empty(const Value& value) {
  return std::get<std::string>(value).empty() ? "a path, not \"\"" : "";
}

}  // namespace rows

namespace {

using namespace rows;

std::string topic_level_or_empty(const Value& value) {
  const auto& name = std::get<std::string>(value);
  const bool fits = name.size() <= 64 && name.find_first_of("/+#") == std::string::npos &&
                    (name.empty() || (name[0] != '_' && name[0] != '$')) &&
                    std::all_of(name.begin(), name.end(), [](char c) { return c > 0x20 && c < 0x7F; });
  return fits ? "" : "at most 64 printable characters without spaces, '/', '+' or '#', not starting with '_' or '$'";
}
std::string topic_prefix(const Value& value) {
  const auto& prefix = std::get<std::string>(value);
  const bool fits = !prefix.empty() && prefix.size() <= 128 && prefix.find_first_of("+# ") == std::string::npos &&
                    prefix.front() != '/' && prefix.back() != '/' && prefix.front() != '$';
  return fits ? "" : "topic levels joined by '/', without '+', '#' or spaces, such as \"flockbridge/v1\"";
}

/// Recording the runs (recorder.hpp, docs/recording.md).
void add_record_settings(std::vector<Setting>& s) {
  s.push_back(flag(
      {"record", "enabled", "--record-enabled",
       "Record every run from the start into record.directory (MCAP files that Foxglove and "
       "Lichtblick open); the teacher or the driver also starts and stops a recording with "
       "{\"cmd\":\"record_start\"} and {\"cmd\":\"record_stop\"}. --record DIR sets both.",
       kRestart},
      [](auto& c) -> auto& { return c.record.enabled; }));
  s.push_back(text(
      {"record", "directory", "--record",
       "Where the recordings go, one file per run (robot-YYYYmmdd-HHMMSS.mcap); made if missing. "
       "The option also turns recording on from the start.",
       kRestart},
      [](auto& c) -> auto& { return c.record.directory; }, not_empty));
  s.push_back(whole(
      {"record", "file_mb", "--record-file-mb",
       "A recording goes on in a new file once its file holds this many megabytes.", kRestart},
      [](auto& c) -> auto& { return c.record.file_mb; }, 1, 65536));
  s.push_back(duration(
      {"record", "file_minutes", "--record-file-minutes",
       "A recording goes on in a new file once its file is this many minutes old.", kRestart},
      [](auto& c) -> auto& { return c.record.file_minutes; }, 1, 1440));
  s.push_back(whole(
      {"record", "total_mb", "--record-total-mb",
       "The oldest recordings in record.directory are removed once all of them hold more than this "
       "many megabytes.",
       kRestart},
      [](auto& c) -> auto& { return c.record.total_mb; }, 1, 100'000'000));
  s.push_back(text(
      {"replay", "file", "--replay",
       "Serve this recording (a .mcap file of record.directory) as if its robot were attached, instead of a "
       "robot: the same hello, marked as a replay, and the recorded messages at their recorded pace; commands "
       "are refused. robot.family is the recording's. \"\": a robot, no replay.",
       kRestart},
      [](auto& c) -> auto& { return c.replay.file; }));
  s.push_back(real(
      {"replay", "speed", "--replay-speed", "How much faster than recorded a replay plays (0.5: half as fast).",
       kRestart},
      [](auto& c) -> auto& { return c.replay.speed; }, 0.01, 1000));
  s.push_back(flag(
      {"replay", "wait", "--replay-wait",
       "A replay begins when its first client connects (a program, a dashboard), so that it sees the run from "
       "its start; false: at once.",
       kRestart},
      [](auto& c) -> auto& { return c.replay.wait; }));
}

/// The fleet's MQTT broker.
void add_mqtt_settings(std::vector<Setting>& s) {
  s.push_back(flag(
      {"mqtt", "enabled", "--mqtt",
       "Publish this robot's status, telemetry and events to the fleet's MQTT broker, and obey the fleet's "
       "emergency stop (docs/fleet.md).",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.enabled; }));
  s.push_back(text(
      {"mqtt", "host", "--mqtt-host", "The broker's host name or address (looked up again at each connection).",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.host; }, not_blank));
  s.push_back(whole(
      {"mqtt", "port", "--mqtt-port", "The broker's port.", kRestart}, [](auto& c) -> auto& { return c.mqtt.port; }, 1,
      65535));
  s.push_back(text(
      {"mqtt", "robot_name", "--robot-name",
       "This robot's name: in the fleet's topics (flockbridge/v1/<name>/...), as its MQTT client id, and on the "
       "network (mDNS); \"\": the host name.",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.robot_name; }, topic_level_or_empty));
  s.push_back(text(
      {"mqtt", "username", "--mqtt-username",
       "The broker account's user name; \"\": the robot's name when a password file is set, else no account.",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.username; }));
  s.push_back(text(
      {"mqtt", "password_file", "--mqtt-password-file",
       "A file holding the broker account's password on its first line (readable by the bridge only); \"\": none.",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.password_file; }));
  s.push_back(text(
      {"mqtt", "topic_prefix", "--mqtt-topic-prefix", "The topics' common beginning, with the topics' version.",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.topic_prefix; }, topic_prefix));
  s.push_back(real(
      {"mqtt", "telemetry_hz", "--mqtt-telemetry-hz",
       "Telemetry messages a second (battery, pose, link, who drives): a summary, not the sensor stream.", kLive},
      [](auto& c) -> auto& { return c.mqtt.telemetry_hz; }, 0.01, 10));
  s.push_back(duration(
      {"mqtt", "keepalive_s", "--mqtt-keepalive-s",
       "The connection's keepalive: the broker declares the robot offline (its last will) about 1.5 times this "
       "long after its network vanished.",
       kRestart},
      [](auto& c) -> auto& { return c.mqtt.keepalive; }, 5, 3600));
  s.push_back(duration(
      {"mqtt", "reconnect_max_ms", "--mqtt-reconnect-max-ms",
       "The longest wait between attempts to reach the broker (the wait doubles from a quarter second).", kRestart},
      [](auto& c) -> auto& { return c.mqtt.reconnect_max; }, 250, kHour));
  s.push_back(whole(
      {"mqtt", "queue_limit", "--mqtt-queue-limit",
       "Messages waiting for a slow or absent broker; beyond it the oldest is dropped (and counted).", kRestart},
      [](auto& c) -> auto& { return c.mqtt.queue_limit; }, 1, 100'000));
  s.push_back(flag(
      {"fleet", "hub", "--hub",
       "This bridge is the class hub: it follows every robot on the broker and serves the fleet page (/fleet). "
       "The option --hub alone makes a hub with no robot (robot.family none, mqtt.enabled true) unless --robot "
       "is given; a robot that is the hub too sets this in its file.",
       kRestart},
      [](auto& c) -> auto& { return c.fleet_hub; }));
  s.push_back(text(
      {"mdns", "service_file", "--mdns-service-file",
       "The Avahi service file the bridge fills in at start, so that avahi-daemon announces the robot on the "
       "local network: its JSON port as _flockbridge._tcp with its name, family, model and ports, its dashboard "
       "as _http._tcp. It must exist and be writable by the bridge (the package makes it so); \"\": none.",
       kRestart},
      [](auto& c) -> auto& { return c.mdns_service_file; }));
}

}  // namespace

CoreRows core_settings(const FamiliesHelp& families) {
  using namespace rows;
  CoreRows core;
  std::vector<Setting>& s = core.before;

  s.push_back(text(
      {"serial", "device", "--device", families.device, kRestart}, [](auto& c) -> auto& { return c.device; },
      not_empty));
  s.push_back(text(
      {"serial", "search", "--search",
       "Where serial.device auto looks for a robot: glob patterns, separated by spaces, tried in their order after "
       "the names the families' udev rules give. The board's own UARTs, where a login console may run, only when "
       "added here (/dev/ttyAMA* /dev/ttyS*).",
       kRestart},
      [](auto& c) -> auto& { return c.serial_search; }, not_blank));
  s.push_back(whole(
      {"serial", "baud", "--baud",
       "Serial baud rate (each family's default is its robot's; a robot found by serial.device auto is served at "
       "the speed it answered at).",
       kRestart},
      [](auto& c) -> auto& { return c.baud; }, 9600, 2'000'000));
  s.push_back(duration(
      {"serial", "reopen_min_ms", "--reopen-min-ms",
       "First wait before reopening a device that vanished (the wait then doubles).", kRestart},
      [](auto& c) -> auto& { return c.reopen_min; }, 1, kHour));
  s.push_back(duration(
      {"serial", "reopen_max_ms", "--reopen-max-ms", "Longest wait between attempts to reopen the device.", kRestart},
      [](auto& c) -> auto& { return c.reopen_max; }, 1, kHour));

  s.push_back(text(
      {"robot", "family", "--robot", families.family, kRestart}, [](auto& c) -> auto& { return c.family; }, not_blank));
  s.push_back(text(
      {"robot", "model", "--model", families.model, kRestart}, [](auto& c) -> auto& { return c.model; }));
  s.push_back(text(
      {"listen", "bind", "--bind", "Address every listener uses unless it has its own (0.0.0.0: all IPv4 interfaces).",
       kRestart},
      [](auto& c) -> auto& { return c.bind; }, ip_address));
  s.push_back(whole(
      {"listen", "max_clients", "--max-clients", "Most clients per port; more are told so and closed.", kRestart},
      [](auto& c) -> auto& { return c.max_clients; }, 1, 10000));
  s.push_back(whole(
      {"listen", "max_per_address", "--max-per-address",
       "Most connections of one computer (an IPv4 address, an IPv6 /64) to every port together; the robot's own "
       "programs (connecting to localhost: from 127.0.0.1 or ::1) are never limited, and an eighth of each port's "
       "clients are kept for them.",
       kRestart},
      [](auto& c) -> auto& { return c.max_per_address; }, 1, 10000));
  s.push_back(text(
      {"native", "bind", "--native-bind",
       "Address of the listener of the robot family's own client programs (\"\": [listen] bind).", kRestart},
      [](auto& c) -> auto& { return c.native_bind; }, ip_address_or_empty));
  s.back().old_option = "--binary-bind";
  s.push_back(whole(
      {"native", "port", "--port",
       "TCP port for the robot family's own client programs, in its original protocol (0: any free port).", kRestart},
      [](auto& c) -> auto& { return c.native_port; }, 0, 65535));
  {
    // A port given is the port, whichever family robot.family auto finds.
    Setting& port = s.back();
    port.set = [set = port.set](Config& config, const SettingValue& value) {
      set(config, value);
      config.native_port_follows_family = false;
    };
  }
  s.push_back(text(
      {"json", "bind", "--json-bind", "Address of the JSON-lines listener (\"\": [listen] bind).", kRestart},
      [](auto& c) -> auto& { return c.json_bind; }, ip_address_or_empty));
  s.push_back(whole(
      {"json", "port", "--json-port", "TCP port for JSON-lines clients (0: any free port).", kRestart},
      [](auto& c) -> auto& { return c.json_port; }, 0, 65535));
  s.push_back(flag(
      {"http", "enabled", "--no-http",
       "Serve the web dashboard (/) and its WebSocket JSON feed (/ws). The option --no-http turns it "
       "off.",
       kRestart},
      [](auto& c) -> auto& { return c.http; }, true));
  s.push_back(text(
      {"http", "bind", "--http-bind", "Address of the web server (\"\": [listen] bind).", kRestart},
      [](auto& c) -> auto& { return c.http_bind; }, ip_address_or_empty));
  s.push_back(whole(
      {"http", "port", "--http-port", "TCP port of the web dashboard (0: any free port).", kRestart},
      [](auto& c) -> auto& { return c.http_port; }, 0, 65535));
  s.push_back(text(
      {"http", "root", "--http-root",
       "Folder of the dashboard's files (\"\": share/flockbridge/www beside the program's bin/).", kRestart},
      [](auto& c) -> auto& { return c.http_root; }));
  s.push_back(text(
      {"http", "tls_cert", "--http-tls-cert",
       "Serve the dashboard and its WebSocket over TLS (https://, wss://) with this certificate, a PEM "
       "file with its chain (\"\": plain HTTP). Give http.tls_key with it.",
       kRestart},
      [](auto& c) -> auto& { return c.http_tls_cert; }));
  s.push_back(text(
      {"http", "tls_key", "--http-tls-key",
       "The private key of http.tls_cert, a PEM file that only root and the service may read.", kRestart},
      [](auto& c) -> auto& { return c.http_tls_key; }));
  s.push_back(flag(
      {"foxglove", "enabled", "--foxglove",
       "Serve the robot live to Foxglove and Lichtblick (\"Open connection\", Foxglove WebSocket, "
       "ws://ROBOT:8765): the JSON clients' messages as topics with their JSON Schemas, and JSON "
       "commands published on a channel, under the JSON port's rules. Over TLS (wss://) when "
       "http.tls_cert is set.",
       kRestart},
      [](auto& c) -> auto& { return c.foxglove; }));
  s.push_back(text(
      {"foxglove", "bind", "--foxglove-bind", "Address of the Foxglove live view (\"\": [listen] bind).", kRestart},
      [](auto& c) -> auto& { return c.foxglove_bind; }, ip_address_or_empty));
  s.push_back(whole(
      {"foxglove", "port", "--foxglove-port", "TCP port of the Foxglove live view (0: any free port).", kRestart},
      [](auto& c) -> auto& { return c.foxglove_port; }, 0, 65535));

  s.push_back(duration(
      {"clients", "message_timeout_ms", "--message-timeout-ms",
       "A client message not completed within this time is discarded with an error.", kLive},
      [](auto& c) -> auto& { return c.message_timeout; }, 1, kHour));
  s.push_back(whole(
      {"clients", "max_line", "--max-line",
       "Longest JSON line or WebSocket message a client may send, in bytes (for clients that "
       "connect afterwards).",
       kLive},
      [](auto& c) -> auto& { return c.max_line; }, 256, 1 << 20));
  s.push_back(whole(
      {"clients", "queue_limit", "--queue-limit",
       "Messages other than sensor messages that may wait for one client before it is closed (for "
       "clients that connect afterwards).",
       kLive},
      [](auto& c) -> auto& { return c.queue_limit; }, 8, 1'000'000));
  s.push_back(duration(
      {"clients", "stall_timeout_ms", "--stall-timeout-ms",
       "A client that takes none of the data waiting for it for this long is closed.", kLive},
      [](auto& c) -> auto& { return c.stall_timeout; }, 1, kHour));
  s.push_back(whole(
      {"clients", "send_buffer", "--client-send-buffer",
       "Kernel send buffer per client in bytes (0: the system's default; for clients that connect "
       "afterwards).",
       kLive},
      [](auto& c) -> auto& { return c.client_send_buffer; }, 0, 16 << 20));
  s.push_back(flag(
      {"clients", "io_uring", "--client-io-uring",
       "Write several clients' messages with one system call (io_uring) where the kernel allows it, "
       "else one send() a client; false: always one send() a client. The log says which at start.",
       kRestart},
      [](auto& c) -> auto& { return c.client_io_uring; }));
  s.push_back(real(
      {"clients", "command_rate", "--command-rate",
       "Commands a second each client may send on average; stops and emergency stops are never limited (for "
       "clients that connect afterwards).",
       kLive},
      [](auto& c) -> auto& { return c.command_rate; }, 1, 100000));
  s.push_back(real(
      {"clients", "command_burst", "--command-burst",
       "Commands a client may send at once before the rate applies (for clients that connect "
       "afterwards).",
       kLive},
      [](auto& c) -> auto& { return c.command_burst; }, 1, 100000));
  s.push_back(duration(
      {"clients", "dead_peer_timeout_ms", "--dead-peer-timeout-ms",
       "A client whose network vanished (no FIN) is found and closed within about this long (for "
       "clients that connect afterwards).",
       kLive},
      [](auto& c) -> auto& { return c.dead_peer_timeout; }, 2000, kHour));

  s.push_back(flag(
      {"scheduling", "real_time", "--no-real-time",
       "Ask the kernel at start for the real-time class (SCHED_FIFO at scheduling.priority) for the bridge's loop, "
       "so that the robot's link keeps its timing on a busy machine; where the kernel refuses it, the ordinary "
       "class. The start-up log and stats say which. false: the ordinary class.",
       kRestart},
      [](auto& c) -> auto& { return c.real_time; }, true));
  s.push_back(whole(
      {"scheduling", "priority", "--real-time-priority",
       "The loop's real-time priority, 1 to 99 (a control program that needs its periods on time asks for less, "
       "chrt -f 10).",
       kRestart},
      [](auto& c) -> auto& { return c.real_time_priority; }, 1, 99));
  s.push_back(duration(
      {"safety", "motion_watchdog_ms", "--motion-watchdog-ms",
       "Stop a moving robot when no motion command has come for this long (0: off).", kLive},
      [](auto& c) -> auto& { return c.motion_watchdog; }, 0, kHour));
  s.push_back(duration(
      {"safety", "driver_lost_ms", "--driver-lost-ms",
       "The client driving the robot (or the one that last set it moving) whose network vanishes is found within "
       "this long: the robot is stopped, the lease freed and everyone told. Nothing heard from it for nearly this "
       "long while it owes an answer (its kernel acknowledges data and keepalive probes) counts as lost; a quiet "
       "program whose host answers is never stopped for its silence.",
       kLive},
      [](auto& c) -> auto& { return c.driver_lost; }, DriverWatch::kShortest.count(), kHour));
  s.push_back(duration(
      {"safety", "control_silence_ms", "--control-silence-ms",
       "On a family's own port where one program drives at a time, as with the original software: the program holding "
       "control loses it, "
       "and the robot is stopped, after sending nothing for this long.",
       kLive},
      [](auto& c) -> auto& { return c.control_silence; }, 100, kHour));

  s.push_back(duration(
      {"access", "lease_idle_ms", "--lease-idle-ms",
       "The client driving the robot gives up control after sending no command for this long, and the robot is "
       "stopped; then anyone may drive.",
       kLive},
      [](auto& c) -> auto& { return c.access.lease_idle; }, 100, kHour));
  s.push_back(secret(
      {"access", "driver_pin", "",
       "The code a JSON or WebSocket client gives to drive the robot ({\"cmd\":\"auth\",\"pin\":...}); \"\": "
       "anyone may drive. Keep the file unreadable to others (chmod 640).",
       kLive},
      [](auto& c) -> auto& { return c.access.driver_pin; }));
  s.push_back(secret(
      {"access", "teacher_secret", "",
       "The teacher's secret ({\"cmd\":\"auth\",\"teacher\":...}): takes control of the robot from anyone. "
       "\"\": nobody is the teacher. Make it 12 characters or more: then guessing of the PIN never keeps the "
       "teacher out (a shorter one shares the PIN's budget of wrong guesses).",
       kLive},
      [](auto& c) -> auto& { return c.access.teacher_secret; }));
  {
    Setting mode = named({"access", "native_port_mode", "--native-port-mode",
                          "What programs on the robot family's own port (native.port) may do: open (drive, as "
                          "with the original software), readonly (receive only; their commands are counted and "
                          "dropped, stops aside), paired (read-only until someone with the PIN approves the "
                          "connection on the dashboard, until it closes), or auto (paired when a driver PIN is set, "
                          "else open).",
                          kLive},
                         ValueKind::Choice);
    static constexpr std::array<std::pair<NativePortMode, std::string_view>, 4> kModes{{
        {NativePortMode::Auto, "auto"},
        {NativePortMode::Open, "open"},
        {NativePortMode::Readonly, "readonly"},
        {NativePortMode::Paired, "paired"},
    }};
    for (const auto& [each, name] : kModes) mode.choices.emplace_back(name);
    mode.get = [](const Config& config) -> Value {
      for (const auto& [each, name] : kModes) {
        if (each == config.access.native_port_mode) return std::string(name);
      }
      return std::string("auto");
    };
    mode.set = [](Config& config, const Value& value) {
      for (const auto& [each, name] : kModes) {
        if (name == std::get<std::string>(value)) config.access.native_port_mode = each;
      }
    };
    s.push_back(std::move(mode));
  }
  s.push_back(flag(
      {"access", "driver_clears_emergency", "--driver-clears-emergency",
       "A driver (with the PIN, or anyone when no PIN is set) may clear a latched emergency stop "
       "({\"cmd\":\"clear_emergency\"}), not only the teacher. With no teacher secret set, drivers "
       "always may.",
       kLive},
      [](auto& c) -> auto& { return c.access.driver_clears_emergency; }));
  s.push_back(text(
      {"access", "allowed_origins", "--allowed-origins",
       "Host names, comma-separated, whose web pages may open the dashboard's WebSocket, besides "
       "this robot's own names and addresses (a page elsewhere cannot drive it through a "
       "student's browser). Programs that send no Origin are not concerned.",
       kLive},
      [](auto& c) -> auto& { return c.access.allowed_origins; }));

  {
    Setting level =
        named({"log", "level", "--log-level", "Least important messages logged: debug, info, warning or error.", kLive},
              ValueKind::Choice);
    for (const LogLevel each : kLogLevels) level.choices.push_back(log_level_name(each));
    level.get = [](const Config& config) -> Value { return std::string(log_level_name(config.log_level)); };
    level.set = [](Config& config, const Value& value) {
      for (const LogLevel each : kLogLevels) {
        if (log_level_name(each) == std::get<std::string>(value)) config.log_level = each;
      }
    };
    s.push_back(std::move(level));
  }
  s.push_back(duration(
      {"log", "stats_interval_s", "--stats-interval-s", "Log the counters this often (0: never).", kLive},
      [](auto& c) -> auto& { return c.stats_interval; }, 0, 86400));

  s.push_back(flag(
      {"simulator", "enabled", "--simulate",
       "Run against a simulated robot of robot.family and robot.model (the flockbridge-sim program, started on a "
       "pseudo-terminal) instead of serial.device.",
       kRestart},
      [](auto& c) -> auto& { return c.simulate; }));
  add_mqtt_settings(core.after);
  add_record_settings(core.after);
  core.renamed = {Renamed{"binary", "", "native", "the bridge's"}};
  return core;
}

}  // namespace flockbridge::bridge
