// What the programs' command lines share (CLI11): the version, options in
// milliseconds, and parsing that exits where it must.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <deque>
#include <optional>
#include <string>

namespace flockbridge::bridge {

/// "flockbridge X.Y.Z": the project's version, from CMake; the Debian package carries the same.
[[nodiscard]] const char* version_text() noexcept;

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

/// Exit status for a bad command line or configuration (sysexits' EX_CONFIG):
/// the unit does not restart the daemon over it (RestartPreventExitStatus).
inline constexpr int kCommandLineErrorExit = 78;

/// Parses; when the program should stop at once (help, version, a bad
/// option), prints why, in one message, and returns the exit code: 0, or
/// kCommandLineErrorExit.
[[nodiscard]] std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv);

}  // namespace flockbridge::bridge
