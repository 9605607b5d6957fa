#include "flockbridge/bridge/log.hpp"

#include <cstdio>
#include <string>

namespace flockbridge::bridge {
namespace {

LogLevel g_level = LogLevel::Info;
std::string g_name = "flockbridge";

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return "debug";
    case LogLevel::Info:
      return "info";
    case LogLevel::Warning:
      return "warning";
    case LogLevel::Error:
      return "error";
  }
  return "info";
}

}  // namespace

void set_log_level(LogLevel level) noexcept {
  g_level = level;
}
void set_log_name(std::string_view name) noexcept {
  g_name = name;
}

void log(LogLevel level, std::string_view message) {
  if (level < g_level) return;
  std::string line = g_name + ": " + level_name(level) + ": ";
  line.append(message);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace flockbridge::bridge
