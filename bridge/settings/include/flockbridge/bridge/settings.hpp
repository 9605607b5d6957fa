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
  std::string_view old_option;  ///< the option's name before it was renamed, still taken; empty: none
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

/// A name a setting had before it moved, which files may still use: a
/// whole section (`name` empty) or one setting of it.
struct Renamed {
  std::string_view section;
  std::string_view name;
  std::string_view now_in;
  std::string_view whose;  ///< "the robot's": whose settings they are, for the notice
};

/// A robot family's part of the table: its own settings' rows (which reach
/// their values through the family's slot of Config::families) and their
/// old names.
struct FamilyRows {
  std::vector<Setting> rows;
  std::vector<Renamed> renamed;
};

/// What the core's rows say about the families, written by the families table.
struct FamiliesHelp {
  std::string family;  ///< robot.family: the families, and what the choice sets
  std::string model;   ///< robot.model: each family's models
  std::string device;  ///< serial.device: each family's usual device
};

/// The core's own rows: those the file lists before the families' rows, and after.
struct CoreRows {
  std::vector<Setting> before;
  std::vector<Setting> after;
  std::vector<Renamed> renamed;  ///< the core's settings' old names
};
[[nodiscard]] CoreRows core_settings(const FamiliesHelp& help);

/// Every setting, grouped by section, in the order the file lists them:
/// the core's and each family's (families.hpp makes the one table).
class SettingsTable {
 public:
  /// The built-in configuration of a family (its device, serial speed and
  /// native port); an error naming the families for a name that is none.
  using FamilyDefaults = std::function<protocol::Result<Config>(const std::string& family)>;

  SettingsTable(std::vector<Setting> rows, std::vector<Renamed> renamed, FamilyDefaults family_defaults,
                std::string default_family);

  [[nodiscard]] const std::vector<Setting>& rows() const noexcept { return rows_; }
  [[nodiscard]] const std::vector<Renamed>& renamed() const noexcept { return renamed_; }
  /// The setting called `key` ("serial.baud", "access.lease_idle_ms"), or none.
  [[nodiscard]] const Setting* find(std::string_view key) const;
  [[nodiscard]] const Setting* find(std::string_view section, std::string_view name) const;
  /// Every section, in the file's order.
  [[nodiscard]] std::vector<std::string_view> sections() const;
  [[nodiscard]] protocol::Result<Config> defaults(const std::string& family) const { return family_defaults_(family); }
  /// The defaults of the family a configuration that names none gets.
  [[nodiscard]] Config defaults() const;

 private:
  std::vector<Setting> rows_;
  std::vector<Renamed> renamed_;
  FamilyDefaults family_defaults_;
  std::string default_family_;
};

/// Where a configuration comes from: what SIGHUP reads again.
struct ConfigSources {
  std::string file;            ///< empty: no file
  bool file_required = false;  ///< false for the default path, where a missing file means "all defaults"
  /// Values given on the command line, by setting key, as typed.
  std::vector<std::pair<std::string, std::string>> overrides;
};

/// The family's defaults (robot.family, as the sources give it), then the
/// file, then the overrides, then the checks that involve two settings.
/// Never throws.
[[nodiscard]] protocol::Result<Config> load_config(const SettingsTable& table, const ConfigSources& sources);

/// `config` with the setting `key` set to `typed` (as the command line would
/// give it: "true", "5000", "paired"), checked as a file's value is; refused
/// for a secret (the file's only) and for what needs a restart.
[[nodiscard]] protocol::Result<Config> with_setting(const SettingsTable& table, Config config, std::string_view key,
                                                   const std::string& typed);

/// Reads a configuration from TOML text (`origin` names it in messages),
/// over the default family's defaults.
[[nodiscard]] protocol::Result<Config> parse_config(const SettingsTable& table, std::string_view toml_text,
                                                   std::string_view origin);

/// The configuration as a TOML file, each setting under its help text; with
/// `commented_out`, every value line is a comment (the packaged default file).
[[nodiscard]] std::string format_config(const SettingsTable& table, const Config& config, bool commented_out = false);

/// A value as the file writes it: "quoted" text, true, 42, 0.5.
[[nodiscard]] std::string format_value(const SettingValue& value);

/// What a reload does with a newly loaded configuration.
struct Reload {
  Config config;                      ///< the new configuration, with the running values of what needs a restart
  std::vector<std::string> applied;   ///< "key: old -> new" for each reloadable setting that changed
  std::vector<std::string> deferred;  ///< the same for settings that wait for a restart
};
[[nodiscard]] Reload plan_reload(const SettingsTable& table, const Config& running, const Config& loaded);

}  // namespace flockbridge::bridge
