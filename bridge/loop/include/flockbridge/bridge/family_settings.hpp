// Each robot family's own settings (its sections of the file) inside a
// Config: one slot per family, by the family's name, holding a value of a
// type only that family's folder knows. The core carries the slots and
// never looks inside; a family's rows (setting_rows.hpp) and driver reach
// their own through the accessor the family declares.
#pragma once

#include <any>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace flockbridge::bridge {

class FamilySettings {
 public:
  /// The settings of `family`, made with their defaults the first time.
  template <typename Settings>
  [[nodiscard]] Settings& get(std::string_view family) {
    auto found = slots_.find(family);
    if (found == slots_.end()) found = slots_.emplace(std::string(family), Settings{}).first;
    return *std::any_cast<Settings>(&found->second);
  }
  /// The same, read only: the defaults when nothing was set.
  template <typename Settings>
  [[nodiscard]] const Settings& get(std::string_view family) const noexcept {
    static const Settings defaults{};
    const auto found = slots_.find(family);
    const Settings* settings = found == slots_.end() ? nullptr : std::any_cast<const Settings>(&found->second);
    return settings != nullptr ? *settings : defaults;
  }

 private:
  std::map<std::string, std::any, std::less<>> slots_;
};

}  // namespace flockbridge::bridge
