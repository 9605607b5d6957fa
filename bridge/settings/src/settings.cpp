#include "flockbridge/bridge/settings.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <type_traits>

#include <toml++/toml.h>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/setting_rows.hpp"
#include "flockbridge/bridge/suggest.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Error;
using Value = SettingValue;

#ifndef FLOCKBRIDGE_SYSCONFDIR
#define FLOCKBRIDGE_SYSCONFDIR "/etc"
#endif

std::string format_number(double number) {
  std::ostringstream out;
  out.precision(15);
  out << number;
  std::string text = out.str();
  // TOML tells floats from integers by the point.
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string kind_phrase(const Setting& setting) {
  switch (setting.kind) {
    case ValueKind::Text:
      return "text in quotes";
    case ValueKind::Flag:
      return "true or false";
    case ValueKind::Whole:
      return "a whole number";
    case ValueKind::Real:
      return "a number";
    case ValueKind::Choice:
      break;
  }
  std::string phrase = "one of";
  for (std::size_t i = 0; i < setting.choices.size(); ++i) {
    phrase += (i == 0 ? " \"" : i + 1 == setting.choices.size() ? " or \"" : ", \"");
    phrase += std::string(setting.choices[i]) + "\"";
  }
  return phrase;
}

std::string range_phrase(const Setting& setting) {
  const auto bound = [&](double value) {
    return setting.kind == ValueKind::Whole ? std::to_string(static_cast<std::int64_t>(value)) : format_number(value);
  };
  return kind_phrase(setting) + " from " + bound(setting.min) + " to " + bound(setting.max);
}

/// What a value of the right kind must be when it is not ("a whole number
/// from 1 to 20"); "" when it is fine.
std::string problem(const Setting& setting, const Value& value) {
  switch (setting.kind) {
    case ValueKind::Whole: {
      const auto number = static_cast<double>(std::get<std::int64_t>(value));
      if (number < setting.min || number > setting.max) return range_phrase(setting);
      break;
    }
    case ValueKind::Real: {
      const double number = std::get<double>(value);
      if (!std::isfinite(number) || number < setting.min || number > setting.max) {
        return range_phrase(setting);
      }
      break;
    }
    case ValueKind::Choice: {
      const auto& chosen = std::get<std::string>(value);
      if (std::find(setting.choices.begin(), setting.choices.end(), chosen) == setting.choices.end()) {
        return kind_phrase(setting);
      }
      break;
    }
    case ValueKind::Text:
    case ValueKind::Flag:
      break;
  }
  if (setting.check) {
    if (std::string allowed = setting.check(value); !allowed.empty()) return allowed;
  }
  return "";
}

/// A value from the file, of the setting's kind; nothing when the node is of another type.
std::optional<Value> from_node(const Setting& setting, const toml::node& node) {
  switch (setting.kind) {
    case ValueKind::Flag:
      if (const auto* value = node.as_boolean()) return Value{value->get()};
      break;
    case ValueKind::Whole:
      if (const auto* value = node.as_integer()) return Value{value->get()};
      break;
    case ValueKind::Real:
      if (const auto* value = node.as_floating_point()) return Value{value->get()};
      if (const auto* value = node.as_integer()) return Value{static_cast<double>(value->get())};
      break;
    case ValueKind::Text:
    case ValueKind::Choice:
      if (const auto* value = node.as_string()) return Value{value->get()};
      break;
  }
  return std::nullopt;
}

/// The whole of `text` as a number of type T; nothing when any of it is not.
template <typename T>
std::optional<Value> number_from(const std::string& text) {
  T number{};
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc{} || at != end || text.empty()) return std::nullopt;
  return Value{number};
}

/// A value from the command line, as typed; nothing when it does not read as the setting's kind.
std::optional<Value> from_text(const Setting& setting, const std::string& text) {
  switch (setting.kind) {
    case ValueKind::Flag:
      if (text == "true") return Value{true};
      if (text == "false") return Value{false};
      break;
    case ValueKind::Whole:
      return number_from<std::int64_t>(text);
    case ValueKind::Real:
      return number_from<double>(text);
    case ValueKind::Text:
    case ValueKind::Choice:
      return Value{text};
  }
  return std::nullopt;
}

/// Sets a value read from the file or the command line when it is allowed;
/// otherwise returns what it must be ("a whole number from 1 to 20").
std::string apply_value(const Setting& setting, const std::optional<Value>& value, Config& config) {
  if (!value) return kind_phrase(setting);
  if (std::string wrong = problem(setting, *value); !wrong.empty()) return wrong;
  setting.set(config, *value);
  return "";
}

std::string node_text(const toml::node& node) {
  std::ostringstream out;
  node.visit([&out](const auto& value) { out << value; });
  std::string text = out.str();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::string where(std::string_view origin, const toml::source_region& source) {
  return std::string(origin) + ":" + std::to_string(source.begin.line);
}

/// The texts joined with `separator` between them.
template <typename Texts>
std::string joined(const Texts& texts, std::string_view separator) {
  std::string out;
  for (const auto& text : texts) {
    if (!out.empty()) out += separator;
    out += text;
  }
  return out;
}

/// Checks that involve more than one setting.
std::vector<std::string> cross_checks(const Config& config) {
  std::vector<std::string> problems;
  if (config.reopen_min > config.reopen_max) {
    problems.push_back("serial.reopen_min_ms (" + std::to_string(config.reopen_min.count()) +
                       ") must not be above serial.reopen_max_ms (" + std::to_string(config.reopen_max.count()) + ")");
  }
  const auto listeners = std::array{std::pair{"native.port", config.native_port}, std::pair{"json.port", config.json_port},
                                    std::pair{"http.port", config.http ? config.http_port : std::uint16_t{0}}};
  for (std::size_t i = 0; i < listeners.size(); ++i) {
    for (std::size_t j = i + 1; j < listeners.size(); ++j) {
      if (listeners[i].second != 0 && listeners[i].second == listeners[j].second) {
        problems.push_back(std::string(listeners[i].first) + " and " + listeners[j].first + " are both " +
                           std::to_string(listeners[i].second) + "; each listener needs its own port");
      }
    }
  }
  if (config.simulate && (config.family == kAnyFamily || config.device == kAnyDevice)) {
    problems.emplace_back(
        "simulator.enabled plays one family's robot on a device of its own: name the family with robot.family "
        "(--robot) and leave serial.device to the simulator");
  }
  if (config.family == kAnyFamily && config.device.starts_with("tcp:")) {
    problems.push_back("robot.family auto finds a robot on a serial device; the robot at " + config.device +
                       " must be named with robot.family (--robot)");
  }
  if (config.fleet_hub && !config.mqtt.enabled) {
    problems.emplace_back("fleet.hub needs the broker: set mqtt.enabled (and mqtt.host) as well");
  }
  if (config.fleet_hub && !config.http) {
    problems.emplace_back("fleet.hub serves the fleet page: http.enabled must not be false");
  }
  return problems;
}

/// The configuration when it has no problems, alone or between settings;
/// otherwise every problem, one per line.
protocol::Result<Config> checked(Config config, std::vector<std::string> problems) {
  if (problems.empty()) problems = cross_checks(config);
  if (problems.empty()) return config;
  return Error{joined(problems, "\n")};
}

/// Where a setting of the old name `section`.`name` lives now, if it moved.
const Renamed* moved_to(const SettingsTable& table, std::string_view section, std::string_view name) {
  for (const Renamed& renamed : table.renamed()) {
    if (renamed.section == section && (renamed.name.empty() || renamed.name == name)) return &renamed;
  }
  return nullptr;
}

/// Whether `name` is a section, one of its parents ("robot" of
/// "robot.units"), or a section's old name.
bool is_section_or_parent(const SettingsTable& table, std::string_view name) {
  for (const std::string_view section : table.sections()) {
    if (section == name || (section.size() > name.size() && section.starts_with(name) && section[name.size()] == '.')) {
      return true;
    }
  }
  return std::ranges::any_of(table.renamed(),
                             [&](const Renamed& renamed) { return renamed.section == name && renamed.name.empty(); });
}

/// One value of the file, with the section it is written in.
struct FileValue {
  std::string section;
  std::string_view name;
  const toml::node* node;
};

/// The values of a section's table; a table inside it is a section of its
/// own when one is called so ([robot.link] inside [robot]).
void collect_values(const SettingsTable& settings, const toml::table& table, const std::string& section,
                    std::vector<FileValue>& values) {
  for (const auto& [key, node] : table) {
    const std::string inner = section + "." + std::string(key.str());
    if (node.is_table() && is_section_or_parent(settings, inner)) {
      collect_values(settings, *node.as_table(), inner, values);
    } else {
      values.push_back(FileValue{section, key.str(), &node});
    }
  }
}

/// Reads the file's values into `config`; returns the problems found, by
/// line, and notes the old names it used in `config.notices`.
std::vector<std::string> apply_file(const SettingsTable& settings, const toml::table& file, std::string_view origin,
                                    Config& config) {
  std::vector<std::pair<std::uint32_t, std::string>> problems;
  const auto known_sections = settings.sections();
  std::vector<FileValue> values;
  for (const auto& [section_key, section_node] : file) {
    const std::string_view section = section_key.str();
    const auto* table = section_node.as_table();
    if (table == nullptr || !is_section_or_parent(settings, section)) {
      problems.emplace_back(section_key.source().begin.line,
                            where(origin, section_key.source()) + ": unknown section or setting '" +
                                std::string(section) + "'" + did_you_mean(section, known_sections) +
                                "; the sections are " + joined(known_sections, ", "));
      continue;
    }
    collect_values(settings, *table, std::string(section), values);
  }
  std::vector<std::string> old_names;
  std::string_view whose;
  for (FileValue& value : values) {
    const toml::node& node = *value.node;
    const std::string place = where(origin, node.source());
    if (const Renamed* renamed = moved_to(settings, value.section, value.name)) {
      old_names.push_back(value.section + "." + std::string(value.name) + " (now " + std::string(renamed->now_in) +
                          "." + std::string(value.name) + ")");
      value.section = renamed->now_in;
      whose = renamed->whose;
    }
    const Setting* setting = settings.find(value.section, value.name);
    if (setting == nullptr) {
      std::vector<std::string_view> known;
      for (const Setting& candidate : settings.rows()) {
        if (candidate.section == value.section) known.push_back(candidate.name);
      }
      problems.emplace_back(
          node.source().begin.line,
          place + ": unknown setting '" + value.section + "." + std::string(value.name) + "'" +
              did_you_mean(value.name, known) +
              (known.empty() ? std::string("; the sections are ") + joined(known_sections, ", ")
                             : "; the settings of [" + value.section + "] are " + joined(known, ", ")));
      continue;
    }
    if (std::string wrong = apply_value(*setting, from_node(*setting, node), config); !wrong.empty()) {
      problems.emplace_back(node.source().begin.line, place + ": " + setting->key() + " = " + node_text(node) +
                                                          " is not allowed: it must be " + wrong);
    }
  }
  if (!old_names.empty()) {
    config.notices.push_back(std::string(origin) +
                             " uses " + std::string(whose) + " settings under their old names: " + joined(old_names, ", ") +
                             ". They are read as before; `flockbridge --print-config` writes the new names.");
  }
  std::stable_sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> lines;
  lines.reserve(problems.size());
  for (auto& [line, text] : problems) lines.push_back(std::move(text));
  return lines;
}

/// Reads TOML text's values into `config`: the problems of its values, by
/// line, or an Error when it is not TOML at all (toml++ throws; the place
/// goes into the message).
protocol::Result<std::vector<std::string>> read_toml(const SettingsTable& table, std::string_view text,
                                                     std::string_view origin, Config& config) {
  try {
    return apply_file(table, toml::parse(text, origin), origin, config);
  } catch (const toml::parse_error& error) {
    return Error{std::string(origin) + ":" + std::to_string(error.source().begin.line) + ":" +
                 std::to_string(error.source().begin.column) + ": not valid TOML: " + std::string(error.description())};
  }
}

/// A setting's value as the file writes it, a secret that is set as "***".
std::string shown_value(const Setting& setting, const Config& config) {
  const Value value = setting.get(config);
  if (setting.secret && !std::get<std::string>(value).empty()) return format_value(Value{std::string("***")});
  return format_value(value);
}

/// A file that sets a secret must keep it from the machine's other users.
std::optional<Error> check_secret_file(const SettingsTable& table, const std::string& file, const Config& config) {
  std::vector<std::string> secrets;
  for (const Setting& setting : table.rows()) {
    if (setting.secret && !std::get<std::string>(setting.get(config)).empty()) secrets.push_back(setting.key());
  }
  if (secrets.empty()) return std::nullopt;
  std::error_code error;
  const auto permissions = std::filesystem::status(file, error).permissions();
  if (error) return std::nullopt;  // read a moment ago; gone now, and nothing to protect
  using std::filesystem::perms;
  if ((permissions & (perms::others_read | perms::others_write)) == perms::none) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(permissions) & 0777U);
  return Error{file + " holds " + joined(secrets, " and ") + " but every user of this machine may read it (mode " +
               mode + "); make it readable by its owner and group only: chmod 640 " + file};
}

/// Wraps help text into comment lines of at most 79 columns.
void append_comment(std::string& out, std::string_view text) {
  std::string line = "#";
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t space = text.find(' ', at);
    if (space == std::string_view::npos) space = text.size();
    const std::string_view word = text.substr(at, space - at);
    if (line.size() + 1 + word.size() > 79 && line.size() > 1) {
      out += line + "\n";
      line = "#";
    }
    line += " ";
    line += word;
    at = space + 1;
  }
  out += line + "\n";
}

}  // namespace


std::string default_config_path() {
  return FLOCKBRIDGE_SYSCONFDIR "/flockbridge/flockbridge.toml";
}

std::string Setting::key() const {
  return std::string(section) + "." + std::string(name);
}

SettingsTable::SettingsTable(std::vector<Setting> rows, std::vector<Renamed> renamed, FamilyDefaults family_defaults,
                             std::string default_family)
    : rows_(std::move(rows)),
      renamed_(std::move(renamed)),
      family_defaults_(std::move(family_defaults)),
      default_family_(std::move(default_family)) {}

const Setting* SettingsTable::find(std::string_view section, std::string_view name) const {
  for (const Setting& setting : rows_) {
    if (setting.section == section && setting.name == name) return &setting;
  }
  return nullptr;
}

const Setting* SettingsTable::find(std::string_view key) const {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? nullptr : find(key.substr(0, dot), key.substr(dot + 1));
}

std::vector<std::string_view> SettingsTable::sections() const {
  std::vector<std::string_view> names;
  for (const Setting& setting : rows_) {
    if (std::find(names.begin(), names.end(), setting.section) == names.end()) names.push_back(setting.section);
  }
  return names;
}

Config SettingsTable::defaults() const {
  auto config = family_defaults_(default_family_);
  return config ? std::move(config).value() : Config{};
}

std::string format_value(const SettingValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_number(v);
        } else {
          std::ostringstream out;
          out << toml::value<std::string>(v);
          return out.str();
        }
      },
      value);
}

protocol::Result<Config> parse_config(const SettingsTable& table, std::string_view toml_text, std::string_view origin) {
  Config config = table.defaults();
  auto problems = read_toml(table, toml_text, origin, config);
  if (!problems) return problems.error();
  return checked(std::move(config), std::move(problems).value());
}

protocol::Result<Config> with_setting(const SettingsTable& table, Config config, std::string_view key,
                                      const std::string& typed) {
  const Setting* setting = table.find(key);
  if (setting == nullptr) return Error{"no setting is called " + std::string(key)};
  if (setting->secret) return Error{std::string(key) + " is a secret: only the configuration file sets it"};
  if (!setting->reloadable) {
    return Error{std::string(key) + " needs a restart: set it in the configuration file and restart the bridge"};
  }
  if (std::string wrong = apply_value(*setting, from_text(*setting, typed), config); !wrong.empty()) {
    return Error{std::string(key) + " = " + typed + " is not allowed: it must be " + wrong};
  }
  return checked(std::move(config), {});
}

namespace {

protocol::Result<Config> load_config(const SettingsTable& table, const ConfigSources& sources, Config config) {
  std::vector<std::string> problems;
  if (!sources.file.empty()) {
    std::ifstream in(sources.file, std::ios::binary);
    if (!in) {
      const int error = errno;
      std::error_code ignored;
      if (sources.file_required || std::filesystem::exists(sources.file, ignored)) {
        return Error{"cannot read the configuration file " + sources.file + ": " + std::strerror(error)};
      }
    } else {
      std::ostringstream text;
      text << in.rdbuf();
      auto read = read_toml(table, text.str(), sources.file, config);
      if (!read) return read.error();
      problems = std::move(read).value();
      if (auto exposed = check_secret_file(table, sources.file, config)) return *exposed;
    }
  }
  for (const auto& [key, typed] : sources.overrides) {
    const Setting* setting = table.find(key);
    if (setting == nullptr) {
      problems.push_back("no setting is called " + key);
      continue;
    }
    if (std::string wrong = apply_value(*setting, from_text(*setting, typed), config); !wrong.empty()) {
      problems.push_back("command line: " + std::string(setting->option) + " " + typed + " (" + key +
                         ") is not allowed: it must be " + wrong);
    }
  }
  return checked(std::move(config), std::move(problems));
}

}  // namespace

protocol::Result<Config> load_config(const SettingsTable& table, const ConfigSources& sources) {
  // Read once over the default family's defaults to learn the family, whose
  // defaults the values then go over.
  auto family = load_config(table, sources, table.defaults());
  if (!family) return family.error();
  auto defaults = table.defaults(family.value().family);
  if (!defaults) return defaults.error();
  return load_config(table, sources, std::move(defaults).value());
}

std::string format_config(const SettingsTable& table, const Config& config, bool commented_out) {
  std::string out =
      "# flockbridge's configuration, in TOML (https://toml.io).\n"
      "# Options on the command line override it; `flockbridge --print-config` shows\n"
      "# what is in force. SIGHUP (`systemctl reload flockbridge`) applies every\n"
      "# setting not marked \"Needs a restart\" without dropping clients.\n";
  if (commented_out) {
    out +=
        "# Every setting is listed below with its default value, commented out:\n"
        "# remove the '#' in front of a value to change it.\n";
  }
  out += "\n";
  std::string_view section;
  for (const Setting& setting : table.rows()) {
    if (setting.section != section) {
      out += (section.empty() ? "" : "\n") + ("[" + std::string(setting.section) + "]\n");
      section = setting.section;
    }
    std::string help(setting.help);
    if (!setting.option.empty()) help += " Option: " + std::string(setting.option) + ".";
    if (!setting.reloadable) help += " Needs a restart.";
    append_comment(out, help);
    out += (commented_out ? "#" : "") + std::string(setting.name) + " = " + shown_value(setting, config) + "\n";
  }
  return out;
}

Reload plan_reload(const SettingsTable& table, const Config& running, const Config& loaded) {
  Reload reload{loaded, {}, {}};
  for (const Setting& setting : table.rows()) {
    const Value before = setting.get(running);
    const Value after = setting.get(loaded);
    if (before == after) continue;
    const std::string change = setting.secret
                                   ? setting.key() + ": changed"
                                   : setting.key() + ": " + format_value(before) + " -> " + format_value(after);
    if (setting.reloadable) {
      reload.applied.push_back(change);
    } else {
      setting.set(reload.config, before);
      reload.deferred.push_back(change);
    }
  }
  return reload;
}

}  // namespace flockbridge::bridge
