#include "flockbridge/bridge/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/cli_support.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/recording_file.hpp"
#include "flockbridge/bridge/settings.hpp"

namespace flockbridge::bridge {

static_assert(kConfigErrorExit == kCommandLineErrorExit, "a bad option and a bad file end the same way");

namespace {

/// A default as --help shows it: text without the file's quotes.
std::string default_text(const SettingValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return format_value(value);
}

}  // namespace

std::variant<BridgeCommandLine, int> parse_bridge_command_line(int argc, const char* const* argv,
                                                               const SettingsTable& settings,
                                                               std::string_view family_list, BadConfiguration bad,
                                                               std::string_view program) {
  CLI::App app{
      "flockbridge: the bridge between a robot's serial link and the classroom network.\n"
      "The robot family's own client programs connect to --port, JSON-lines clients to --json-port;\n"
      "the web dashboard and its WebSocket feed (/ws) are on --http-port.\n"
      "Every option is also a setting of the configuration file (--config); an option overrides the file.",
      std::string(program)};
  app.set_version_flag("--version", version_text());
  // A later option overrides an earlier one (a wrapper script's defaults, then the user's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  // What a newcomer needs comes first in --help: which robot, simulated or
  // on which device, and where to connect.
  constexpr std::string_view kStartHere = "Start here";
  constexpr std::array<std::string_view, 6> kNewcomers{"--robot",     "--simulate",  "--device",
                                                       "--http-port", "--json-port", "--port"};
  const auto for_newcomers = [&](const Setting& setting) {
    return std::find(kNewcomers.begin(), kNewcomers.end(), setting.option) != kNewcomers.end();
  };
  app.get_help_ptr()->group(std::string(kStartHere));
  app.get_version_ptr()->group(std::string(kStartHere));
  app.option_defaults()->group("The configuration file");

  std::string config_path = default_config_path();
  bool no_config = false;
  bool print_config = false;
  bool print_default_config = false;
  bool welcome = false;
  auto* config_option =
      app.add_option("--config", config_path,
                     "Configuration file (TOML); the default path may be missing, a path given must exist")
          ->capture_default_str();
  app.add_flag("--no-config", no_config, "Read no configuration file: built-in defaults and the command line only")
      ->excludes(config_option);
  app.add_flag("--print-config", print_config, "Print the configuration in force, as a file, and exit");
  app.add_flag("--print-default-config", print_default_config,
               "Print the default configuration file, every value commented out, and exit");
  app.add_flag("--welcome", welcome, "Once listening, say where to connect, for a person at a terminal")
      ->group(std::string(kStartHere));
  bool list_families = false;
  if (!family_list.empty()) {
    app.add_flag("--list-families", list_families,
                 "Print the robot families --robot takes, one a line (for scripts), and exit")
        ->group(std::string(kStartHere));
  }

  // Each setting's option, read as text and checked by the same rules as the
  // file's values, so that a bad value gets the same message either way.
  struct Given {
    const Setting* setting;
    CLI::Option* option;
    std::string text;
    bool flag = false;
  };
  std::deque<Given> given;
  const Config defaults = settings.defaults();
  std::vector<const Setting*> in_order;
  for (const std::string_view option : kNewcomers) {
    for (const Setting& setting : settings.rows()) {
      if (setting.option == option) in_order.push_back(&setting);
    }
  }
  for (const Setting& setting : settings.rows()) {
    if (!setting.option.empty() && !for_newcomers(setting)) in_order.push_back(&setting);
  }
  for (const Setting* row : in_order) {
    const Setting& setting = *row;
    Given& slot = given.emplace_back(Given{&setting, nullptr, {}});
    const std::string help = std::string(setting.help) + " [" + setting.key() + "]";
    const std::string names =
        std::string(setting.option) + (setting.old_option.empty() ? "" : "," + std::string(setting.old_option));
    if (setting.kind == ValueKind::Flag) {
      slot.option = app.add_flag(names, slot.flag, help);
    } else {
      slot.option = app.add_option(names, slot.text, help)
                        ->default_str(default_text(setting.get(defaults)))
                        ->type_name(setting.kind == ValueKind::Whole  ? "INT"
                                    : setting.kind == ValueKind::Real ? "NUMBER"
                                                                      : "TEXT");
    }
    slot.option->group(for_newcomers(setting) ? std::string(kStartHere) : "Every setting");
  }

  if (const auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  if (list_families) {
    std::fwrite(family_list.data(), 1, family_list.size(), stdout);
    return 0;
  }
  if (print_default_config) {
    std::fputs(format_config(settings, defaults, true).c_str(), stdout);
    return 0;
  }

  BridgeCommandLine command_line;
  ConfigSources& sources = command_line.sources;
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
  // --hub alone: the class hub on a machine with no robot.
  const auto given_key = [&](std::string_view key) {
    return std::any_of(sources.overrides.begin(), sources.overrides.end(),
                       [&](const auto& override) { return override.first == key; });
  };
  const auto hub = std::find_if(sources.overrides.begin(), sources.overrides.end(),
                                [](const auto& override) { return override.first == "fleet.hub"; });
  if (hub != sources.overrides.end() && hub->second == "true") {
    if (!given_key("robot.family")) sources.overrides.emplace(sources.overrides.begin(), "robot.family", "none");
    if (!given_key("mqtt.enabled")) sources.overrides.emplace_back("mqtt.enabled", "true");
  }
  // --record DIR: recording on from the start, into DIR.
  if (given_key("record.directory") && !given_key("record.enabled")) {
    sources.overrides.emplace_back("record.enabled", "true");
  }
  auto loaded = load_config(settings, sources);
  if (!loaded && bad == BadConfiguration::Report) {
    command_line.config_error = loaded.error();
    ConfigSources options_only = sources;
    options_only.file.clear();
    loaded = load_config(settings, options_only);
    if (!loaded) loaded = settings.defaults();
  }
  if (!loaded) {
    log_lines(LogLevel::Error, loaded.error().message);
    return kConfigErrorExit;
  }
  // A replay's robot family is the recording's: its port, its clients.
  if (!loaded.value().replay.file.empty()) {
    auto recording = RecordingFile::open(loaded.value().replay.file);
    if (!recording) {
      log_error(recording.error().message);
      return kConfigErrorExit;
    }
    const std::string& family = recording.value()->identity().family;
    if (loaded.value().family != family) {
      if (given_key("robot.family")) {
        log_error("--replay " + loaded.value().replay.file + " is a recording of a robot of the family " + family +
                  ", not " + loaded.value().family + "; leave --robot out");
        return kConfigErrorExit;
      }
      sources.overrides.emplace(sources.overrides.begin(), "robot.family", family);
      loaded = load_config(settings, sources);
      if (!loaded) {
        log_lines(LogLevel::Error, loaded.error().message);
        return kConfigErrorExit;
      }
    }
  }
  if (print_config) {
    std::fputs(format_config(settings, loaded.value()).c_str(), stdout);
    return 0;
  }
  command_line.config = std::move(loaded).value();
  command_line.config.welcome = welcome;
  for (const std::string& notice : command_line.config.notices) log_warning(notice);
  return command_line;
}

}  // namespace flockbridge::bridge
