// Logging: one line per event with its level, and a flood of one message
// summarised instead of written.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "flockbridge/bridge/log.hpp"
#include "support/read_available.hpp"

using namespace flockbridge::bridge;
using namespace std::chrono_literals;

namespace {

/// Collects what the log writes, on a clock the test moves.
struct CapturedLog {
  CapturedLog() {
    set_log_output([this](std::string_view line) { lines.emplace_back(line); });
    set_log_clock([this] { return now; });
    set_log_level(LogLevel::Debug);
  }
  ~CapturedLog() {
    set_log_output({});
    set_log_clock({});
    set_log_level(LogLevel::Info);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::vector<std::string> lines;
  std::chrono::steady_clock::time_point now{};
};

}  // namespace

TEST_CASE("each line carries its level, and lines below the level are left out") {
  CapturedLog log;
  set_log_level(LogLevel::Warning);
  log_info("robot link up");
  log_warning("robot link down: unplugged");
  log_error("cannot listen on 0.0.0.0:2005: address already in use");
  CHECK(log.lines == std::vector<std::string>{"warning: robot link down: unplugged",
                                              "error: cannot listen on 0.0.0.0:2005: address already in use"});
}

TEST_CASE("a message repeated in a flood is written three times, then summarised once its window closes") {
  CapturedLog log;
  for (int i = 0; i < 50; ++i) {
    log_warning("cannot open /dev/flockbot: No such file or directory");
    log.now += 100ms;
  }
  log_info("something else");
  CHECK(log.lines.size() == 4);  // three of the flood, and the other message
  log.now += kRepeatWindow;
  flush_log_repeats();
  REQUIRE(log.lines.size() == 5);
  CHECK(log.lines.back() ==
        "warning: (repeated 47 more times in the last 15 s) cannot open /dev/flockbot: No such file or directory");
  // A later repeat opens a new window and is written again.
  log_warning("cannot open /dev/flockbot: No such file or directory");
  CHECK(log.lines.size() == 6);
  CHECK(log.lines.back() == "warning: cannot open /dev/flockbot: No such file or directory");
}

TEST_CASE("a link that flaps twice still shows every change, and the summary comes at the latest on exit") {
  CapturedLog log;
  for (int i = 0; i < 3; ++i) {
    log_warning("robot link down: the serial device vanished");
    log_info("robot link up");
  }
  CHECK(log.lines.size() == 6);
  log_warning("robot link down: the serial device vanished");
  CHECK(log.lines.size() == 6);
  flush_log_repeats();  // the window has not closed
  CHECK(log.lines.size() == 6);
  flush_log_repeats(true);
  REQUIRE(log.lines.size() == 7);
  CHECK(log.lines.back() ==
        "warning: (repeated 1 more time in the last 1 s) robot link down: the serial device vanished");
}

TEST_CASE("lines about clients: ten a cause in a minute, then one summary of the rest") {
  CapturedLog log;
  for (int i = 0; i < 422; ++i) {
    log_about(LogLevel::Warning, {"refused WebSockets", "10.0.3.17"},
              "refused a WebSocket from 10.0.3.17:" + std::to_string(40000 + i) + ": its page comes from elsewhere");
    log.now += 100ms;
  }
  // Another cause, and the same kind of event from another address, have their own ten.
  log_about(LogLevel::Info, {"connections and closings", "10.0.3.17"}, "client 1 (json, 10.0.3.17:5000) connected");
  log_about(LogLevel::Warning, {"refused WebSockets", "10.0.3.18"}, "refused a WebSocket from 10.0.3.18:5001");
  CHECK(log.lines.size() == 12);
  CHECK(log.lines[9] == "warning: refused a WebSocket from 10.0.3.17:40009: its page comes from elsewhere");
  flush_log_repeats();  // 42 s: the first cause's window is still open
  CHECK(log.lines.size() == 12);
  log.now += kCauseWindow;
  flush_log_repeats();
  REQUIRE(log.lines.size() == 13);
  CHECK(log.lines.back() ==
        "warning: 412 more refused WebSockets from 10.0.3.17 in the last 102 s; the last: refused a WebSocket from "
        "10.0.3.17:40421: its page comes from elsewhere");
  // A new window: written again.
  log_about(LogLevel::Warning, {"refused WebSockets", "10.0.3.17"}, "refused a WebSocket from 10.0.3.17:1");
  CHECK(log.lines.back() == "warning: refused a WebSocket from 10.0.3.17:1");
}

TEST_CASE("lines about clients from any number of addresses share one budget, and what it leaves out is told") {
  CapturedLog log;
  // 100,000 connections, each from an address of its own, in 100 s.
  for (int i = 0; i < 100000; ++i) {
    log_about(LogLevel::Info, {"connections and closings", "10." + std::to_string(i / 65536) + "." +
                                                               std::to_string(i / 256 % 256) + "." +
                                                               std::to_string(i % 256)},
              "client " + std::to_string(i) + " connected");
    log.now += 1ms;
    if (i % 1000 == 0) flush_log_repeats();
  }
  log.now += kCauseWindow;
  flush_log_repeats();
  // At most the burst, two a second after it, and one line a window for what was left out.
  const std::size_t most = kClientLinesBurst + kClientLinesPerSecond * 160 + 3;
  CHECK(log.lines.size() <= most);
  CHECK(log.lines.size() >= kClientLinesBurst);
  REQUIRE(!log.lines.empty());
  CHECK(log.lines.back().starts_with("warning: "));
  CHECK(log.lines.back().find("lines about clients were left out of the log in the last") != std::string::npos);
  // The lines of a program on the robot itself are not lost in the flood for
  // long: the budget refills.
  log.now += 10s;
  log_about(LogLevel::Info, {"connections and closings", "127.0.0.1"}, "client 100001 connected");
  CHECK(log.lines.back() == "info: client 100001 connected");
  // Lines that are not about clients are never held back by it.
  log_warning("robot link down: unplugged");
  CHECK(log.lines.back() == "warning: robot link down: unplugged");
}

TEST_CASE("a text of several lines is logged as one event per line") {
  CapturedLog log;
  log_lines(LogLevel::Error, "a.toml:2: first\na.toml:5: second");
  CHECK(log.lines == std::vector<std::string>{"error: a.toml:2: first", "error: a.toml:5: second"});
}

TEST_CASE("a log nobody reads never holds the program up: lines wait, then are dropped, counted and reported") {
  set_log_output({});
  set_log_level(LogLevel::Info);
  // Standard error becomes a pipe this test reads only later, as a journald
  // that has stopped reading would be.
  std::array<int, 2> pipe{};
  REQUIRE(::pipe2(pipe.data(), O_CLOEXEC) == 0);
  const int saved = ::dup(STDERR_FILENO);
  REQUIRE(saved >= 0);
  REQUIRE(::dup2(pipe[1], STDERR_FILENO) == STDERR_FILENO);
  REQUIRE(::fcntl(pipe[0], F_SETFL, O_NONBLOCK) == 0);
  const auto read_all = [&] { return flockbridge::testing::read_available(pipe[0]); };

  // About 400 kB, far more than the pipe (64 KiB) and the log's own room
  // hold: a write that waited would never return here.
  constexpr int kLines = 3000;
  const std::string padding(120, '.');
  for (int i = 0; i < kLines; ++i) log_info("line " + std::to_string(i) + " " + padding);

  std::string text = read_all();
  log_info("the reader is back");
  for (int i = 0; i < 100 && text.find("the reader is back") == std::string::npos; ++i) {
    text += read_all();
    flush_log_repeats();
  }
  REQUIRE(::dup2(saved, STDERR_FILENO) == STDERR_FILENO);
  ::close(saved);
  ::close(pipe[0]);
  ::close(pipe[1]);

  // Whole lines, the first ones in order, none cut or repeated.
  int next = 0;
  std::size_t at = 0;
  while ((at = text.find(": line ", at)) != std::string::npos) {
    at += 7;
    CHECK(std::atoi(text.c_str() + at) == next);
    ++next;
  }
  CHECK(next > 0);
  CHECK(next < kLines);
  // Then how many were dropped (every one not written), then the next line.
  const std::string notice =
      std::to_string(kLines - next) + " log lines were dropped: standard error was not being read";
  const auto said = text.find(notice);
  CHECK(said != std::string::npos);
  CHECK(said < text.find("the reader is back"));
  std::size_t complete = 0;
  for (const char c : text) complete += c == '\n' ? 1 : 0;
  CHECK(complete == static_cast<std::size_t>(next) + 2);
}
