#include "flockbridge/bridge/log.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace flockbridge::bridge {
namespace {

using Clock = std::chrono::steady_clock;

/// Distinct messages whose repeats are being counted at once; beyond this,
/// the oldest is summarised early.
constexpr std::size_t kMaxTracked = 256;
/// Times a message is written in one window before its repeats are only
/// counted: a link that goes down and up twice still shows each change.
constexpr std::uint64_t kWrittenPerWindow = 3;

/// Log text standard error could not take at once (a journal or pipe whose
/// reader has fallen behind), written before anything newer. Beyond this,
/// lines are dropped and counted: the log never makes the loop wait.
constexpr std::size_t kPendingLimit = std::size_t{64} * 1024;
/// How long the last lines may wait for their reader as the program stops.
constexpr int kFinalWaitMs = 1000;

enum class Style { Plain, Terminal, Journal };

/// Writes what standard error takes now without waiting, and returns how
/// much that was. A socket (journald's stream) is asked not to wait; a pipe,
/// terminal or file is written only when poll says it has room, at most
/// PIPE_BUF bytes, which a pipe with room takes whole. A standard error that
/// is closed or gone takes everything: nobody will read it.
std::size_t write_without_waiting(std::string_view bytes) {
  ssize_t written = ::send(STDERR_FILENO, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (written < 0 && errno == ENOTSOCK) {
    pollfd room{STDERR_FILENO, POLLOUT, 0};
    if (::poll(&room, 1, 0) != 1 || (room.revents & POLLOUT) == 0) return 0;
    written = ::write(STDERR_FILENO, bytes.data(), std::min<std::size_t>(bytes.size(), PIPE_BUF));
  }
  if (written >= 0) return static_cast<std::size_t>(written);
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : bytes.size();
}

/// journald sets JOURNAL_STREAM to the device and inode of the stream it
/// gave the service; stderr is that stream when they match.
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long device = 0;
  unsigned long long inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat status {};
  return ::fstat(STDERR_FILENO, &status) == 0 && status.st_dev == device && status.st_ino == inode;
}

Style detect_style() {
  if (stderr_is_journal()) return Style::Journal;
  if (::isatty(STDERR_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr) return Style::Terminal;
  return Style::Plain;
}

struct Repeats {
  Clock::time_point window_start;
  LogLevel level;
  std::uint64_t written = 1;  ///< times written in this window
  std::uint64_t count = 0;    ///< repeats not written
};

/// Lines of one cause in its window.
struct CauseLines {
  Clock::time_point window_start;
  LogLevel level;
  std::uint64_t written = 0;  ///< lines written in this window
  std::uint64_t count = 0;    ///< lines not written
  std::string last;           ///< the last line not written
};

struct Logger {
  LogLevel level = LogLevel::Info;
  std::string name = "flockbridge";
  Style style = detect_style();
  std::function<void(std::string_view)> output;
  std::function<Clock::time_point()> clock;
  std::map<std::string, Repeats, std::less<>> repeats;
  std::map<std::string, CauseLines, std::less<>> causes;
  double client_budget = kClientLinesBurst;  ///< lines about clients that may be written now
  Clock::time_point budget_refilled{};
  std::uint64_t left_out = 0;  ///< lines about clients neither written nor summarised
  Clock::time_point left_out_since{};
  std::string pending;        ///< written before anything newer (kPendingLimit)
  std::uint64_t dropped = 0;  ///< whole lines dropped since the last written

  Clock::time_point now() const { return clock ? clock() : Clock::now(); }

  void write(LogLevel at, std::string_view message) {
    // syslog priorities: debug 7, info 6, warning 4, error 3.
    static constexpr const char* kPriorities[] = {"<7>", "<6>", "<4>", "<3>"};
    static constexpr const char* kColours[] = {"\x1b[2m", "\x1b[36m", "\x1b[33m", "\x1b[1;31m"};
    const auto index = static_cast<std::size_t>(at);
    std::string line;
    if (output) {
      line = std::string(log_level_name(at)) + ": ";
    } else if (style == Style::Journal) {
      line = std::string(kPriorities[index]).append(log_level_name(at)) + ": ";
    } else if (style == Style::Terminal) {
      line = name + ": " + kColours[index];
      line.append(log_level_name(at)) += "\x1b[0m: ";
    } else {
      line = name + ": ";
      line.append(log_level_name(at)) += ": ";
    }
    line.append(message);
    if (output) {
      output(line);
      return;
    }
    line.push_back('\n');
    emit(line);
  }

  /// Writes a whole line after whatever waits; what does not fit waits, up to kPendingLimit.
  void emit(std::string_view line) {
    drain();
    if (pending.empty() && dropped == 0) line.remove_prefix(write_without_waiting(line));
    if (line.empty()) return;
    if (pending.size() + line.size() > kPendingLimit) {
      ++dropped;
      return;
    }
    pending.append(line);
  }

  /// Writes what waits, then says how many lines were dropped meanwhile.
  void drain() {
    while (!pending.empty()) {
      const std::size_t written = write_without_waiting(pending);
      if (written == 0) return;
      pending.erase(0, written);
    }
    if (dropped == 0) return;
    const std::uint64_t lost = std::exchange(dropped, 0);
    write(LogLevel::Warning, std::to_string(lost) + (lost == 1 ? " log line was" : " log lines were") +
                                 " dropped: standard error was not being read");
  }

  /// As the program stops: gives the reader a moment for what still waits.
  void drain_before_exit() {
    const auto until = Clock::now() + std::chrono::milliseconds(kFinalWaitMs);
    while ((!pending.empty() || dropped > 0) && Clock::now() < until) {
      drain();
      pollfd room{STDERR_FILENO, POLLOUT, 0};
      if (!pending.empty()) ::poll(&room, 1, 10);
    }
  }

  void summarise(const std::string& message, const Repeats& entry, Clock::time_point at) {
    if (entry.count == 0) return;
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(at - entry.window_start).count();
    write(entry.level, "(repeated " + std::to_string(entry.count) + " more " + (entry.count == 1 ? "time" : "times") +
                           " in the last " + std::to_string(std::max<long long>(1, seconds)) + " s) " + message);
  }

  /// Forgets what was counted (for tests, as their output or clock changes).
  void reset_counts() {
    repeats.clear();
    causes.clear();
    client_budget = kClientLinesBurst;
    budget_refilled = {};
    left_out = 0;
  }

  /// Takes one line from the clients' budget, if there is one.
  bool take_client_line(Clock::time_point at) {
    if (budget_refilled != Clock::time_point{}) {
      const double seconds = std::chrono::duration<double>(at - budget_refilled).count();
      client_budget = std::min<double>(kClientLinesBurst, client_budget + seconds * kClientLinesPerSecond);
    }
    budget_refilled = at;
    if (client_budget < 1) return false;
    client_budget -= 1;
    return true;
  }

  void leave_out(std::uint64_t lines, Clock::time_point at) {
    if (left_out == 0) left_out_since = at;
    left_out += lines;
  }

  /// Writes a cause's summary, if it has one, within the clients' budget.
  void summarise_cause(const std::string& key, const CauseLines& entry, Clock::time_point at) {
    if (entry.count == 0) return;
    if (!take_client_line(at)) {
      leave_out(entry.count, at);
      return;
    }
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(at - entry.window_start).count();
    write(entry.level, std::to_string(entry.count) + " more " + key + " in the last " +
                           std::to_string(std::max<long long>(1, seconds)) + " s; the last: " + entry.last);
  }

  void flush_causes(Clock::time_point at, bool everything) {
    for (auto it = causes.begin(); it != causes.end();) {
      if (everything || at - it->second.window_start >= kCauseWindow) {
        summarise_cause(it->first, it->second, at);
        it = causes.erase(it);
      } else {
        ++it;
      }
    }
    if (left_out > 0 && (everything || at - left_out_since >= kCauseWindow)) {
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(at - left_out_since).count();
      write(LogLevel::Warning, std::to_string(left_out) + " lines about clients were left out of the log in the last " +
                                   std::to_string(std::max<long long>(1, seconds)) + " s: it takes " +
                                   std::to_string(kClientLinesPerSecond) + " a second about clients (" +
                                   std::to_string(kClientLinesBurst) + " at once); the counters in stats say more");
      left_out = 0;
    }
  }

  /// Summarises what has been counted, and forgets the messages whose window closed.
  void flush(Clock::time_point at, bool everything) {
    flush_causes(at, everything);
    for (auto it = repeats.begin(); it != repeats.end();) {
      if (everything || at - it->second.window_start >= kRepeatWindow) {
        summarise(it->first, it->second, at);
        it = repeats.erase(it);
      } else {
        ++it;
      }
    }
  }
};

Logger& logger() {
  static Logger instance;
  return instance;
}

}  // namespace

std::string_view log_level_name(LogLevel level) noexcept {
  static constexpr std::array<std::string_view, 4> kNames{"debug", "info", "warning", "error"};
  return kNames[static_cast<std::size_t>(level)];
}

void set_log_level(LogLevel level) noexcept {
  logger().level = level;
}
void set_log_name(std::string_view name) noexcept {
  logger().name = name;
}
void set_log_output(std::function<void(std::string_view)> output) {
  logger().reset_counts();
  logger().output = std::move(output);
}
void set_log_clock(std::function<Clock::time_point()> clock) {
  logger().reset_counts();
  logger().clock = std::move(clock);
}

void log(LogLevel level, std::string_view message) {
  Logger& l = logger();
  if (level < l.level) return;
  const Clock::time_point now = l.now();
  const auto found = l.repeats.find(message);
  if (found != l.repeats.end()) {
    if (now - found->second.window_start < kRepeatWindow) {
      if (found->second.written >= kWrittenPerWindow) {
        ++found->second.count;
        return;
      }
      ++found->second.written;
      l.write(level, message);
      return;
    }
    // The window closed without a flush: summarise, then write this one afresh.
    l.summarise(found->first, found->second, now);
    l.repeats.erase(found);
  }
  if (l.repeats.size() >= kMaxTracked) {
    auto oldest = l.repeats.begin();
    for (auto it = l.repeats.begin(); it != l.repeats.end(); ++it) {
      if (it->second.window_start < oldest->second.window_start) oldest = it;
    }
    l.summarise(oldest->first, oldest->second, now);
    l.repeats.erase(oldest);
  }
  l.repeats.emplace(std::string(message), Repeats{now, level});
  l.write(level, message);
}

void log_about(LogLevel level, const LogCause& cause, std::string_view message) {
  Logger& l = logger();
  if (level < l.level) return;
  const Clock::time_point now = l.now();
  std::string key;
  key.reserve(cause.what.size() + cause.from.size() + 6);
  key.append(cause.what).append(" from ").append(cause.from);
  auto found = l.causes.find(key);
  if (found != l.causes.end() && now - found->second.window_start >= kCauseWindow) {
    l.summarise_cause(found->first, found->second, now);
    l.causes.erase(found);
    found = l.causes.end();
  }
  if (found == l.causes.end()) {
    if (l.causes.size() >= kMostCauses) {
      l.leave_out(1, now);
      return;
    }
    found = l.causes.emplace(std::move(key), CauseLines{now, level, 0, 0, {}}).first;
  }
  CauseLines& entry = found->second;
  if (entry.written < kLinesPerCause && l.take_client_line(now)) {
    ++entry.written;
    l.write(level, message);
    return;
  }
  ++entry.count;
  entry.level = std::max(entry.level, level);
  entry.last.assign(message);
}

void log_lines(LogLevel level, std::string_view lines) {
  while (!lines.empty()) {
    const std::size_t end = std::min(lines.find('\n'), lines.size());
    log(level, lines.substr(0, end));
    lines.remove_prefix(std::min(end + 1, lines.size()));
  }
}

void flush_log_repeats(bool everything) {
  Logger& l = logger();
  l.flush(l.now(), everything);
  if (everything) {
    l.drain_before_exit();
  } else {
    l.drain();
  }
}

}  // namespace flockbridge::bridge
