#include "flockbridge/bridge/cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <deque>
#include <optional>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/settings.hpp"
#include "flockbridge/protocol/aros/models.hpp"

namespace flockbridge::bridge {
namespace {

// The project's version, from CMake; the Debian package carries the same.
constexpr const char* kVersion = "flockbridge " FLOCKBRIDGE_VERSION;

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

/// A default as --help shows it: text without the file's quotes.
std::string default_text(const SettingValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return format_value(value);
}

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

std::variant<BridgeCommandLine, int> parse_bridge_command_line(
    int argc, const char* const* argv, std::function<protocol::Result<Config>(const std::string&)> family_defaults) {
  CLI::App app{
      "flockbridge: the Flockbot's bridge between the Uno's serial link and the classroom network.\n"
      "Binary clients (the Flockbot socket protocol) connect to --port, JSON-lines clients to --json-port;\n"
      "the web dashboard and its WebSocket feed (/ws) are on --http-port.\n"
      "Every option is also a setting of the configuration file (--config); an option overrides the file.",
      "flockbridge"};
  app.set_version_flag("--version", kVersion);
  // A later option overrides an earlier one (a wrapper script's defaults, then the user's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  std::string config_path = default_config_path();
  bool no_config = false;
  bool print_config = false;
  bool print_default_config = false;
  auto* config_option =
      app.add_option("--config", config_path,
                     "Configuration file (TOML); the default path may be missing, a path given must exist")
          ->capture_default_str();
  app.add_flag("--no-config", no_config, "Read no configuration file: built-in defaults and the command line only")
      ->excludes(config_option);
  app.add_flag("--print-config", print_config, "Print the configuration in force, as a file, and exit");
  app.add_flag("--print-default-config", print_default_config,
               "Print the default configuration file, every value commented out, and exit");

  // Each setting's option, read as text and checked by the same rules as the
  // file's values, so that a bad value gets the same message either way.
  struct Given {
    const Setting* setting;
    CLI::Option* option;
    std::string text;
    bool flag = false;
  };
  std::deque<Given> given;
  const Config defaults;
  for (const Setting& setting : all_settings()) {
    if (setting.option.empty()) continue;
    Given& slot = given.emplace_back(Given{&setting, nullptr, {}});
    const std::string help = std::string(setting.help) + " [" + setting.key() + "]";
    if (setting.kind == ValueKind::Flag) {
      slot.option = app.add_flag(std::string(setting.option), slot.flag, help);
    } else {
      slot.option = app.add_option(std::string(setting.option), slot.text, help)
                        ->default_str(default_text(setting.get(defaults)))
                        ->type_name(setting.kind == ValueKind::Whole  ? "INT"
                                    : setting.kind == ValueKind::Real ? "NUMBER"
                                                                      : "TEXT");
    }
  }

  if (const auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  if (print_default_config) {
    std::fputs(format_config(defaults, true).c_str(), stdout);
    return 0;
  }

  BridgeCommandLine command_line;
  ConfigSources& sources = command_line.sources;
  sources.family_defaults = std::move(family_defaults);
  if (!no_config) {
    sources.file = config_path;
    sources.file_required = config_option->count() > 0;
  }
  for (const Given& slot : given) {
    if (slot.option->count() == 0) continue;
    const std::string text = slot.setting->kind == ValueKind::Flag
                                 ? (slot.flag != slot.setting->inverted_flag ? "true" : "false")
                                 : slot.text;
    sources.overrides.emplace_back(slot.setting->key(), text);
  }
  auto loaded = load_config(sources);
  if (!loaded) {
    log_lines(LogLevel::Error, loaded.error().message);
    return kConfigErrorExit;
  }
  if (print_config) {
    std::fputs(format_config(loaded.value()).c_str(), stdout);
    return 0;
  }
  command_line.config = std::move(loaded).value();
  return command_line;
}

std::variant<SimulatorOptions, int> parse_simulator_command_line(int argc, const char* const* argv) {
  SimulatorOptions options;
  sim::UnoModelSettings& model = options.uno.model;
  CLI::App app{
      "flockbridge-sim (also called flockbot-sim): a simulated robot on a pseudo-terminal.\n"
      "It creates a pseudo-terminal, makes --link a symlink to it, and plays the robot's controller:\n"
      "  --robot flockbot: the Flockbot's Uno: the boot ACK when the port is opened, CFG, sensor packets,\n"
      "                    a model of the robot's motion, DMC when a bounded move completes;\n"
      "  --robot pioneer:  a Pioneer or AmigoBot (--model): the SYNC handshake, OPEN, CONFIG, SIPs every\n"
      "                    100 ms, motion in a 6 x 4 m room with sonar, and its 2 s watchdog.\n"
      "Faults can be injected on the line, in the robot, and in the device, by options or by commands.\n"
      "Events go to standard output, one line each. Commands on standard input, one per line:\n"
      "  reboot        reset the robot while the port stays open (the Uno sends ACK and waits for CFG;\n"
      "                a Pioneer forgets its client and waits for SYNC0)\n"
      "  unplug        close the pseudo-terminal and remove the link (the device vanishes)\n"
      "  replug        create a new pseudo-terminal at the same link\n"
      "  silent on|off stop or resume sending anything\n"
      "  counters      print what the line faults have done so far\n"
      "  quit          exit (the end of standard input does the same)\n"
      "Flockbot only:\n"
      "  nak-next [N]  answer the next N frames received (default 1) with NAK\n"
      "  corrupt-next  send the next packet with a bad checksum\n"
      "  emergency     send EMG\n"
      "  burst [N]     send N sensor packets (default 5) at once, in one write\n"
      "  bump L H      set the bumper bytes\n"
      "Pioneer only:\n"
      "  state         print the robot's true pose, speeds, motors and watchdog stops",
      "flockbridge-sim"};
  app.set_version_flag("--version", kVersion);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--robot", options.robot, "The robot to play: flockbot or pioneer")
      ->capture_default_str()
      ->check(CLI::IsMember({"flockbot", "pioneer"}));
  std::vector<std::string> pioneer_models;
  for (const auto& row : protocol::aros::robot_models()) pioneer_models.emplace_back(row.subclass);
  app.add_option("--model", options.pioneer.model.model, "The Pioneer's model, as SYNC2 names it")
      ->capture_default_str()
      ->check(CLI::IsMember(pioneer_models));
  app.add_option("--name", options.pioneer.model.name, "The Pioneer's name, as SYNC2 gives it")->capture_default_str();
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
  options.pioneer.to_host = options.uno.to_host;
  options.pioneer.to_robot = options.uno.to_uno;
  options.pioneer.seed = model.seed;
  return options;
}

}  // namespace flockbridge::bridge
