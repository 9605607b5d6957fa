// One line per event on standard error, each with a level, for journald and
// terminals. Under systemd (stderr is the journal's stream) each line starts
// with its syslog priority, "<4>warning: ...", so that journald files it at
// the right level; on a terminal the level is coloured (unless NO_COLOR is
// set); anywhere else lines are plain text.
//
// No flood: a message repeated word for word is written at most three times
// in kRepeatWindow from its first; further repeats in that window are counted
// and then summarised in one line,
// "(repeated 57 more times in the last 10 s) <message>".
//
// No flood from clients either: a line about something a client did (it
// connected or closed, was refused, gave a wrong PIN) names its cause, the
// kind of event and the address it came from. Each cause has
// kLinesPerCause lines in kCauseWindow; its further lines are counted and
// summarised once the window closes, "412 more refused WebSockets from
// 10.0.3.17 in the last 60 s; the last: <message>". Lines about clients,
// summaries included, share one budget whatever the number of addresses
// (kClientLinesBurst at once, kClientLinesPerSecond after); what the budget
// leaves out is counted and told once a window ("N lines about clients were
// left out of the log ..."), so clients can make the log grow by little more
// than 7,200 lines an hour, and never fill an SD card.
//
// Never a wait: a line standard error cannot take at once (journald or a
// pipe whose reader has fallen behind) waits in memory, up to 64 KiB, and is
// written before anything newer; beyond that, lines are dropped and counted,
// and "N log lines were dropped: standard error was not being read" follows
// when the reader is back.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "flockbridge/bridge/config.hpp"

namespace flockbridge::bridge {

inline constexpr std::chrono::seconds kRepeatWindow{10};
/// Lines about clients: per cause, and for all causes together.
inline constexpr std::chrono::seconds kCauseWindow{60};
inline constexpr std::uint64_t kLinesPerCause = 10;
inline constexpr std::size_t kClientLinesBurst = 120;
inline constexpr std::size_t kClientLinesPerSecond = 2;
/// Causes counted at once; lines of a further cause are counted as left out.
inline constexpr std::size_t kMostCauses = 512;

/// What a line about a client is about: the kind of event, as its summary
/// names it ("connections and closings", "refused WebSockets", "wrong
/// PINs"), and the address it came from.
struct LogCause {
  std::string_view what;
  std::string_view from;
};

/// "debug", "info", "warning", "error": the names in log lines and in the configuration.
inline constexpr std::array<LogLevel, 4> kLogLevels{LogLevel::Debug, LogLevel::Info, LogLevel::Warning,
                                                    LogLevel::Error};
[[nodiscard]] std::string_view log_level_name(LogLevel level) noexcept;

void set_log_level(LogLevel level) noexcept;
void set_log_name(std::string_view name) noexcept;
void log(LogLevel level, std::string_view message);
/// The kinds of event the bridge logs about clients.
namespace log_cause {
inline constexpr std::string_view kConnections = "connections and closings";
inline constexpr std::string_view kRefusedConnections = "refused connections";
inline constexpr std::string_view kRefusedWebSockets = "refused WebSockets";
inline constexpr std::string_view kRefusedCommands = "refused commands";
inline constexpr std::string_view kWrongSecrets = "wrong PINs and secrets";
inline constexpr std::string_view kControl = "changes of who drives";
}  // namespace log_cause

/// Logs a line about something a client did, within its cause's and all
/// clients' bounds.
void log_about(LogLevel level, const LogCause& cause, std::string_view message);
/// Logs each line of a text of several lines as its own event.
void log_lines(LogLevel level, std::string_view lines);
/// Writes the summary of each repeated message whose window has closed (of
/// every one, with `everything`, as the program stops, then waits up to a
/// second for standard error to take what still waits), and what waits for
/// standard error. The bridge calls it from its housekeeping timer.
void flush_log_repeats(bool everything = false);

/// For tests: where lines go (each without its line end) and what the
/// clock says; empty functions restore standard error and the steady clock.
void set_log_output(std::function<void(std::string_view line)> output);
void set_log_clock(std::function<std::chrono::steady_clock::time_point()> clock);

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
