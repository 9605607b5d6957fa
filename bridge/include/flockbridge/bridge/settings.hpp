// The daemon's settings as one table. Each setting has a key in the
// configuration file (`serial.baud`), an option on the command line
// (`--baud`), a help text, the values it allows, and whether SIGHUP can
// change it. Reading the file, the command line's options, --print-config,
// the packaged default file and reloading are all made from this table, so
// they cannot disagree.
//
// Precedence: built-in defaults, then the file, then the command line. A bad
// file or value is refused as a whole, with a message that names the
// setting, the value and what is allowed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

/// Where the packaged daemon looks when --config is not given.
[[nodiscard]] std::string default_config_path();

enum class ValueKind { Text, Flag, Whole, Real, Choice };
using SettingValue = std::variant<bool, std::int64_t, double, std::string>;

struct Setting {
  std::string_view section;  ///< the file's [table]
  std::string_view name;     ///< the key in it
  std::string_view option;   ///< the command-line option; empty: none
  std::string_view help;
  ValueKind kind = ValueKind::Text;
  /// SIGHUP applies a new value without dropping clients; otherwise the
  /// change waits for a restart (and the log says so).
  bool reloadable = false;
  /// For a Flag option: giving the option sets the value false (--no-http).
  bool inverted_flag = false;
  /// A secret: shown as "***" and never logged; only the file may set it.
  bool secret = false;
  double min = 0;  ///< Whole and Real
  double max = 0;
  std::vector<std::string_view> choices;  ///< Choice
  /// Extra rule on the value; returns what is allowed when the value breaks it, "" when it is fine.
  std::function<std::string(const SettingValue&)> check;
  std::function<SettingValue(const Config&)> get;
  std::function<void(Config&, const SettingValue&)> set;

  [[nodiscard]] std::string key() const;
};

/// Every setting, grouped by section, in the order the file lists them.
[[nodiscard]] const std::vector<Setting>& all_settings();

/// Where a configuration comes from: what SIGHUP reads again.
struct ConfigSources {
  std::string file;            ///< empty: no file
  bool file_required = false;  ///< false for the default path, where a missing file means "all defaults"
  /// Values given on the command line, by setting key, as typed.
  std::vector<std::pair<std::string, std::string>> overrides;
  /// The defaults of a robot family (robot.family): its serial speed,
  /// device and client port; an error for a family there is none of. Not
  /// set: the built-in defaults.
  std::function<protocol::Result<Config>(const std::string& family)> family_defaults;
};

/// Defaults, then the file, then the overrides, then the checks that involve
/// two settings. Never throws.
[[nodiscard]] protocol::Result<Config> load_config(const ConfigSources& sources);
/// The same over other defaults.
[[nodiscard]] protocol::Result<Config> load_config(const ConfigSources& sources, Config defaults);

/// `config` with the setting `key` set to `typed` (as the command line would
/// give it: "true", "5000", "paired"), checked as a file's value is; refused
/// for a secret (the file's only) and for what needs a restart.
[[nodiscard]] protocol::Result<Config> with_setting(Config config, std::string_view key, const std::string& typed);

/// Reads a configuration from TOML text (`origin` names it in messages).
[[nodiscard]] protocol::Result<Config> parse_config(std::string_view toml_text, std::string_view origin);

/// The configuration as a TOML file, each setting under its help text; with
/// `commented_out`, every value line is a comment (the packaged default file).
[[nodiscard]] std::string format_config(const Config& config, bool commented_out = false);

/// A value as the file writes it: "quoted" text, true, 42, 0.5.
[[nodiscard]] std::string format_value(const SettingValue& value);

/// What a reload does with a newly loaded configuration.
struct Reload {
  Config config;                      ///< the new configuration, with the running values of what needs a restart
  std::vector<std::string> applied;   ///< "key: old -> new" for each reloadable setting that changed
  std::vector<std::string> deferred;  ///< the same for settings that wait for a restart
};
[[nodiscard]] Reload plan_reload(const Config& running, const Config& loaded);

}  // namespace flockbridge::bridge
