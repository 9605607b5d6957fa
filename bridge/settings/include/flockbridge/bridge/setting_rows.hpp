// The builders of the settings table's rows (settings.hpp), for the core's
// rows and each family's (bridge/<family>/): a row names its section, key,
// option and help, and reaches its value in a Config through an accessor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "flockbridge/bridge/settings.hpp"

namespace flockbridge::bridge::rows {

using Value = SettingValue;

/// What every builder below shares: where the setting lives and what it says.
struct Names {
  std::string_view section;
  std::string_view name;
  std::string_view option;
  std::string_view help;
  bool reloadable;
};

inline Setting named(const Names& names, ValueKind kind) {
  Setting setting;
  setting.section = names.section;
  setting.name = names.name;
  setting.option = names.option;
  setting.help = names.help;
  setting.reloadable = names.reloadable;
  setting.kind = kind;
  return setting;
}

// Each builder takes an accessor, a generic lambda that returns a reference
// to the setting's field in a Config (const or not), so that one lambda
// serves reading and writing.

template <typename Access>
Setting whole(const Names& names, Access access, std::int64_t min, std::int64_t max) {
  Setting setting = named(names, ValueKind::Whole);
  setting.min = static_cast<double>(min);
  setting.max = static_cast<double>(max);
  setting.get = [access](const Config& config) -> Value { return static_cast<std::int64_t>(access(config)); };
  setting.set = [access](Config& config, const Value& value) {
    using Field = std::remove_reference_t<decltype(access(config))>;
    access(config) = static_cast<Field>(std::get<std::int64_t>(value));
  };
  return setting;
}

template <typename Access>
Setting duration(const Names& names, Access access, std::int64_t min, std::int64_t max) {
  Setting setting = named(names, ValueKind::Whole);
  setting.min = static_cast<double>(min);
  setting.max = static_cast<double>(max);
  setting.get = [access](const Config& config) -> Value { return static_cast<std::int64_t>(access(config).count()); };
  setting.set = [access](Config& config, const Value& value) {
    using Field = std::remove_reference_t<decltype(access(config))>;
    access(config) = Field{std::get<std::int64_t>(value)};
  };
  return setting;
}

template <typename Access>
Setting real(const Names& names, Access access, double min, double max) {
  Setting setting = named(names, ValueKind::Real);
  setting.min = min;
  setting.max = max;
  setting.get = [access](const Config& config) -> Value { return static_cast<double>(access(config)); };
  setting.set = [access](Config& config, const Value& value) { access(config) = std::get<double>(value); };
  return setting;
}

template <typename Access>
Setting flag(const Names& names, Access access, bool inverted_option = false) {
  Setting setting = named(names, ValueKind::Flag);
  setting.inverted_flag = inverted_option;
  setting.get = [access](const Config& config) -> Value { return static_cast<bool>(access(config)); };
  setting.set = [access](Config& config, const Value& value) { access(config) = std::get<bool>(value); };
  return setting;
}

template <typename Access>
Setting text(const Names& names, Access access, std::function<std::string(const Value&)> check = {}) {
  Setting setting = named(names, ValueKind::Text);
  setting.check = std::move(check);
  setting.get = [access](const Config& config) -> Value { return std::string(access(config)); };
  setting.set = [access](Config& config, const Value& value) { access(config) = std::get<std::string>(value); };
  return setting;
}

/// A secret: text of the file only (no option), never shown nor logged.
template <typename Access>
Setting secret(const Names& names, Access access) {
  Setting setting = text(names, access, [](const Value& value) -> std::string {
    const auto& given = std::get<std::string>(value);
    const bool printable =
        std::all_of(given.begin(), given.end(), [](char c) { return c >= 0x21 && c <= 0x7E; }) && given.size() <= 128;
    return printable ? "" : "at most 128 printable ASCII characters without spaces, or \"\"";
  });
  setting.secret = true;
  return setting;
}

/// An IPv4 or IPv6 address.
[[nodiscard]] bool is_ip_address(const std::string& text);
/// The checks of text values: "" when the value is fine, else what is allowed.
[[nodiscard]] std::string ip_address(const Value& value);
[[nodiscard]] std::string ip_address_or_empty(const Value& value);
[[nodiscard]] std::string not_blank(const Value& value);
[[nodiscard]] std::string not_empty(const Value& value);

constexpr std::int64_t kHour = 3'600'000;  ///< the longest duration most settings take, in ms
constexpr bool kLive = true;               ///< a reload applies the setting at once
constexpr bool kRestart = false;           ///< the setting waits for a restart


}  // namespace flockbridge::bridge::rows
