// A child process for end-to-end tests: started with pipes on its standard
// streams, whose output lines are collected by a reader thread each so that
// a test can wait for a line as an event (with a deadline), never by sleeping.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace flockbridge::testing {

class ChildProcess {
 public:
  enum class Stream { Stdout, Stderr };

  /// Whether the program is one of ours (run under the emulator of a cross
  /// build) or one of this machine's (mosquitto and the like).
  enum class Program { Ours, System };

  /// Starts argv[0] with the test's environment, plus `extra_env`
  /// (NAME=value), which comes first and so wins.
  explicit ChildProcess(std::vector<std::string> argv, const std::vector<std::string>& extra_env = {},
                        Program program = Program::Ours);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  /// Writes a line to the child's standard input.
  void send_line(std::string_view line);

  /// Waits for a line containing `needle` after the stream's cursor; on
  /// success moves the cursor past it and returns the line.
  std::optional<std::string> wait_for(Stream stream, std::string_view needle,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// The same, with the time the line arrived (for benchmarks).
  std::optional<std::pair<std::string, std::chrono::steady_clock::time_point>> wait_for_timed(
      Stream stream, std::string_view needle, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Waits for a line containing `needle` anywhere in the output, from the
  /// start; the cursor does not move.
  bool wait_seen(Stream stream, std::string_view needle, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Whether any line so far, from the start, contains `needle`.
  bool seen(Stream stream, std::string_view needle);
  /// Every line so far.
  std::vector<std::string> lines(Stream stream);
  /// Moves the cursor to the end: later waits only see new lines.
  void skip_to_end(Stream stream);

  /// Sends SIGTERM and waits for the exit; returns the exit status (or
  /// 128 + signal).
  int terminate(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Waits for the child to exit on its own (killing it after `timeout`);
  /// returns the exit status (or 128 + signal).
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  struct Output {
    std::vector<std::string> lines;
    std::vector<std::chrono::steady_clock::time_point> arrived;  ///< when each line came
    std::size_t cursor = 0;
    bool closed = false;
  };
  void read_loop(int fd, Output& output);
  Output& output(Stream stream) { return stream == Stream::Stdout ? stdout_ : stderr_; }

  pid_t pid_ = -1;
  int stdin_ = -1;
  std::optional<int> status_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Output stdout_;
  Output stderr_;
  std::thread stdout_reader_;
  std::thread stderr_reader_;
};

}  // namespace flockbridge::testing
