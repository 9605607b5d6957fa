// One line per event on standard error, with a level, for journald and terminals.
#pragma once

#include <string_view>

#include "flockbridge/bridge/config.hpp"

namespace flockbridge::bridge {

void set_log_level(LogLevel level) noexcept;
void set_log_name(std::string_view name) noexcept;
void log(LogLevel level, std::string_view message);

inline void log_debug(std::string_view message) {
  log(LogLevel::Debug, message);
}
inline void log_info(std::string_view message) {
  log(LogLevel::Info, message);
}
inline void log_warning(std::string_view message) {
  log(LogLevel::Warning, message);
}
inline void log_error(std::string_view message) {
  log(LogLevel::Error, message);
}

}  // namespace flockbridge::bridge
