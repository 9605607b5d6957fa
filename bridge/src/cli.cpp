#include "flockbridge/bridge/cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <deque>
#include <map>
#include <optional>

namespace flockbridge::bridge {
namespace {

constexpr const char* kVersion = "flockbridge 0.1.0";

/// Millisecond options, read as whole numbers and stored as durations after parsing.
class MillisecondOptions {
 public:
  void add(CLI::App& app, const std::string& name, std::chrono::milliseconds& target, const std::string& help,
           long long low = 1, long long high = 3'600'000) {
    auto& slot = slots_.emplace_back(Slot{target.count(), &target});
    app.add_option(name, slot.value, help)->capture_default_str()->check(CLI::Range(low, high));
  }
  void apply() const {
    for (const Slot& slot : slots_) *slot.target = std::chrono::milliseconds{slot.value};
  }

 private:
  struct Slot {
    long long value;
    std::chrono::milliseconds* target;
  };
  std::deque<Slot> slots_;
};

const std::map<std::string, LogLevel> kLogLevelNames{
    {"debug", LogLevel::Debug}, {"info", LogLevel::Info}, {"warning", LogLevel::Warning}, {"error", LogLevel::Error}};

/// Parses; when the program should stop at once (help, version, a bad
/// option), prints why and returns the exit code.
std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return std::nullopt;
}

}  // namespace

std::variant<Config, int> parse_bridge_command_line(int argc, const char* const* argv) {
  Config config;
  CLI::App app{
      "flockbridge: the Flockbot's bridge between the Uno's serial link and the classroom network.\n"
      "Binary clients (the Flockbot socket protocol) connect to --port, JSON-lines clients to --json-port;\n"
      "the web dashboard and its WebSocket feed (/ws) are on --http-port.",
      "flockbridge"};
  app.set_version_flag("--version", kVersion);
  // A later option overrides an earlier one (a wrapper script's defaults, then the user's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  MillisecondOptions millis;

  app.add_option("--device", config.device, "Serial device of the Uno")->capture_default_str();
  app.add_option("--baud", config.baud, "Serial baud rate")->capture_default_str()->check(CLI::Range(9600, 2000000));
  app.add_flag("--simulate", config.simulate,
               "Run against a built-in simulated Uno on a pseudo-terminal instead of --device");
  app.add_option("--sim-rate-hz", config.sim.rate_hz, "Sensor packets per second of the simulated Uno")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 2000.0));

  app.add_option("--bind", config.bind, "Address to listen on (IPv4 or IPv6)")->capture_default_str();
  app.add_option("--port", config.port, "TCP port for binary clients (0: any free port)")->capture_default_str();
  app.add_option("--json-port", config.json_port, "TCP port for JSON-lines clients (0: any free port)")
      ->capture_default_str();
  app.add_option("--http-port", config.http_port,
                 "TCP port of the web dashboard (/) and its WebSocket JSON feed (/ws) (0: any free port)")
      ->capture_default_str();
  app.add_option("--http-bind", config.http_bind, "Address the web server listens on (default: --bind)");
  app.add_option("--http-root", config.http_root,
                 "Folder of the dashboard's files (default: share/flockbridge/www beside the program's bin/)");
  bool no_http = false;
  app.add_flag("--no-http", no_http, "Run no web server");
  app.add_option("--max-clients", config.max_clients, "Most clients per port; more are told so and closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  millis.add(app, "--message-timeout-ms", config.message_timeout,
             "A client message not completed within this time is discarded with an error");
  app.add_option("--queue-limit", config.queue_limit,
                 "Messages (other than sensor messages) that may wait for one client before it is closed")
      ->capture_default_str()
      ->check(CLI::Range(8, 1000000));
  millis.add(app, "--stall-timeout-ms", config.stall_timeout,
             "A client that takes none of the data waiting for it for this long is closed");
  app.add_option("--client-send-buffer", config.client_send_buffer,
                 "Kernel send buffer per client in bytes (0: the system's default)")
      ->capture_default_str()
      ->check(CLI::Range(0, 16 * 1024 * 1024));

  app.add_option("--command-rate", config.command_rate,
                 "Commands a second each client may send on average (Stop and EMG are never limited)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 100000.0));
  app.add_option("--command-burst", config.command_burst, "Commands a client may send at once before the rate applies")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 100000.0));
  millis.add(app, "--motion-watchdog-ms", config.motion_watchdog,
             "Stop a moving robot when no motion command has come for this long (0: off)", 0);
  millis.add(app, "--dead-peer-timeout-ms", config.dead_peer_timeout,
             "A client whose network vanished (no FIN) is found and closed within about this long", 2000);
  long long stats_seconds = config.stats_interval.count();
  app.add_option("--stats-interval-s", stats_seconds, "Log the counters this often (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));

  millis.add(app, "--boot-wait-ms", config.link.boot_wait,
             "After opening the port, wait this long for the Uno's boot ACK before sending CFG anyway");
  millis.add(app, "--handshake-timeout-ms", config.link.handshake_timeout, "Wait this long for the ACK to a CFG");
  app.add_option("--handshake-retries", config.link.handshake_retries,
                 "CFG tries before the link is reported down (then one try per --handshake-slow-ms)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  millis.add(app, "--handshake-slow-ms", config.link.handshake_slow_interval,
             "Interval of CFG tries after the quick ones failed");
  millis.add(app, "--nak-window-ms", config.link.nak_window,
             "Each command is alone on the line this long; a NAK within it resends the command");
  app.add_option("--nak-retries", config.link.nak_retries, "Resends of a NAKed command before it fails")
      ->capture_default_str()
      ->check(CLI::Range(0, 20));
  millis.add(
      app, "--reboot-confirm-ms", config.link.reboot_confirm,
      "After an ACK that nothing explains, a packet other than ACK within this time shows the Uno did not reboot");
  millis.add(app, "--stale-timeout-ms", config.link.stale_timeout,
             "Silence from the Uno after which the link is reported stale and CFG is sent again");
  app.add_option("--max-payload", config.link.max_payload, "Serial frames with a longer LEN are taken for noise")
      ->capture_default_str()
      ->check(CLI::Range(29, 255));
  app.add_option("--command-queue", config.link.max_queued_commands, "Commands that may wait for the serial line")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_flag("--command-ack", config.link.require_command_ack,
               "The firmware acknowledges every command: a command not acknowledged within its window is resent, "
               "and fails when no try was acknowledged");
  millis.add(app, "--reopen-min-ms", config.reopen_min, "First wait before reopening a vanished device");
  millis.add(app, "--reopen-max-ms", config.reopen_max, "Longest wait between attempts to reopen the device");

  // One-byte settings are read as numbers (not characters) and range-checked.
  int robot_id = config.robot.id;
  int gripper = config.robot.gripper;
  int servo_model = config.robot.servo_model;
  app.add_option("--robot-id", robot_id, "Robot id sent in CFG")->capture_default_str()->check(CLI::Range(0, 255));
  app.add_option("--gripper", gripper, "Gripper type sent in CFG")->capture_default_str()->check(CLI::Range(0, 255));
  app.add_option("--left-wheel-stop", config.robot.left_wheel_stop, "Left wheel servo stop point sent in CFG")
      ->capture_default_str();
  app.add_option("--right-wheel-stop", config.robot.right_wheel_stop, "Right wheel servo stop point sent in CFG")
      ->capture_default_str();
  app.add_option("--servo-model", servo_model, "Servo model sent in CFG")
      ->capture_default_str()
      ->check(CLI::Range(0, 255));
  std::string robot_ip;
  app.add_option("--robot-ip", robot_ip,
                 "IPv4 address whose last two octets CFG carries (default: this machine's first non-loopback address)")
      ->check(CLI::ValidIPV4);

  std::string level = "info";
  app.add_option("--log-level", level, "debug, info, warning or error")
      ->capture_default_str()
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}));

  if (const auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  millis.apply();
  config.http = !no_http;
  config.stats_interval = std::chrono::seconds{stats_seconds};
  config.robot.id = static_cast<std::uint8_t>(robot_id);
  config.robot.gripper = static_cast<std::uint8_t>(gripper);
  config.robot.servo_model = static_cast<std::uint8_t>(servo_model);
  config.log_level = kLogLevelNames.at(level);
  if (!robot_ip.empty()) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (std::sscanf(robot_ip.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) == 4) {
      config.robot.ip3 = static_cast<std::uint8_t>(c);
      config.robot.ip4 = static_cast<std::uint8_t>(d);
      config.robot_ip_auto = false;
    }
  }
  if (config.simulate) config.device.clear();
  return config;
}

std::variant<SimulatorOptions, int> parse_simulator_command_line(int argc, const char* const* argv) {
  SimulatorOptions options;
  sim::UnoModelSettings& model = options.uno.model;
  CLI::App app{
      "flockbot-sim: a simulated Flockbot Uno on a pseudo-terminal.\n"
      "It creates a pseudo-terminal, makes --link a symlink to it, and plays the Uno: the boot ACK when the port\n"
      "is opened, CFG, sensor packets, a model of the robot's motion, DMC when a bounded move completes.\n"
      "Faults can be injected on the line, in the Uno, and in the device, by options or by commands.\n"
      "Events go to standard output, one line each. Commands on standard input, one per line:\n"
      "  reboot        reset the Uno while the port stays open (it sends ACK and waits for CFG)\n"
      "  unplug        close the pseudo-terminal and remove the link (the device vanishes)\n"
      "  replug        create a new pseudo-terminal at the same link\n"
      "  nak-next [N]  answer the next N frames received (default 1) with NAK\n"
      "  corrupt-next  send the next packet with a bad checksum\n"
      "  silent on|off stop or resume sending anything\n"
      "  emergency     send EMG\n"
      "  bump L H      set the bumper bytes\n"
      "  counters      print what the line faults have done so far\n"
      "  quit          exit (the end of standard input does the same)",
      "flockbot-sim"};
  app.set_version_flag("--version", kVersion);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--link", options.link,
                 "Path of the symlink to the pseudo-terminal (give this path to flockbridge --device)")
      ->required();
  app.add_option("--rate-hz", model.rate_hz, "Sensor packets per second")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 2000.0));
  MillisecondOptions millis;
  millis.add(app, "--boot-ms", model.boot_delay, "From the port's opening to the boot ACK", 0);
  app.add_flag("--ack-commands", model.ack_commands, "Acknowledge every command with ACK, as some firmware does");
  app.add_option("--seed", model.seed, "Seed of the IR readings' noise and of every random fault")
      ->capture_default_str();

  const auto rate = CLI::Range(0.0, 1.0);
  double ber = 0;
  double ber_to_host = -1;
  double ber_to_uno = -1;
  double drop = 0;
  double duplicate = 0;
  app.add_option("--ber", ber, "Bit-error rate on the line, both directions")->capture_default_str()->check(rate);
  app.add_option("--ber-to-host", ber_to_host, "Bit-error rate on what the Uno sends (default: --ber)")->check(rate);
  app.add_option("--ber-to-uno", ber_to_uno, "Bit-error rate on what the Uno receives (default: --ber)")->check(rate);
  app.add_option("--drop-rate", drop, "Share of bytes lost on the line, both directions")
      ->capture_default_str()
      ->check(rate);
  app.add_option("--dup-rate", duplicate, "Share of bytes that arrive twice, both directions")
      ->capture_default_str()
      ->check(rate);
  app.add_option("--nak-rate", model.nak_rate, "Share of good frames the Uno answers with NAK anyway")
      ->capture_default_str()
      ->check(rate);
  const auto seconds = CLI::Range(0.0, 86400.0);
  app.add_option("--reboot-every-s", options.reboot_every_s, "Reboot at random, on average this often (0: never)")
      ->capture_default_str()
      ->check(seconds);
  app.add_option("--silence-every-s", options.silence_every_s, "Go silent at random, on average this often (0: never)")
      ->capture_default_str()
      ->check(seconds);
  millis.add(app, "--silence-ms", options.silence_for, "How long each random silence lasts");
  app.add_option("--unplug-every-s", options.unplug_every_s,
                 "Vanish as a device at random, on average this often (0: never)")
      ->capture_default_str()
      ->check(seconds);
  millis.add(app, "--unplug-ms", options.unplug_for, "How long the device stays away each time");
  app.add_flag("--report-frames", options.uno.report_frames,
               "Print every sensor packet sent, and every frame whose damage a checksum cannot see");
  app.add_flag("--timestamps", options.timestamps, "Prefix each event line with the monotonic clock, in seconds");

  if (const auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  millis.apply();
  options.uno.to_host = {ber_to_host >= 0 ? ber_to_host : ber, drop, duplicate};
  options.uno.to_uno = {ber_to_uno >= 0 ? ber_to_uno : ber, drop, duplicate};
  return options;
}

}  // namespace flockbridge::bridge
