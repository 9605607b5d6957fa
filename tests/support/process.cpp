#include "support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <stdexcept>

extern char** environ;

namespace flockbridge::testing {

ChildProcess::ChildProcess(std::vector<std::string> argv, const std::vector<std::string>& extra_env, Program program) {
#ifdef FLOCKBRIDGE_TEST_EMULATOR
  // A cross-built program runs under the emulator (qemu-aarch64): it is the
  // program's process, so signals and the pid work as they would natively.
  if (std::string emulator = FLOCKBRIDGE_TEST_EMULATOR; !emulator.empty() && program == Program::Ours) {
    argv.insert(argv.begin(), emulator);
  }
#else
  (void)program;
#endif
  std::array<int, 2> in{};
  std::array<int, 2> out{};
  std::array<int, 2> err{};
  if (::pipe2(in.data(), O_CLOEXEC) != 0 || ::pipe2(out.data(), O_CLOEXEC) != 0 ||
      ::pipe2(err.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  std::vector<std::string> env_strings(extra_env);
  for (char** entry = environ; *entry != nullptr; ++entry) env_strings.emplace_back(*entry);
  std::vector<char*> env;
  env.reserve(env_strings.size() + 1);
  for (std::string& entry : env_strings) env.push_back(entry.data());
  env.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  stdin_ = in[1];
  stdout_reader_ = std::thread([this, fd = out[0]] { read_loop(fd, stdout_); });
  stderr_reader_ = std::thread([this, fd = err[0]] { read_loop(fd, stderr_); });
}

ChildProcess::~ChildProcess() {
  terminate();
  if (stdin_ >= 0) ::close(stdin_);
  if (stdout_reader_.joinable()) stdout_reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
}

void ChildProcess::read_loop(int fd, Output& output) {
  std::string partial;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n <= 0) break;
    partial.append(buffer.data(), static_cast<std::size_t>(n));
    std::size_t newline;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    while ((newline = partial.find('\n')) != std::string::npos) {
      output.lines.push_back(partial.substr(0, newline));
      output.arrived.push_back(now);
      partial.erase(0, newline + 1);
    }
    changed_.notify_all();
  }
  ::close(fd);
  std::lock_guard lock(mutex_);
  if (!partial.empty()) {
    output.lines.push_back(partial);
    output.arrived.push_back(std::chrono::steady_clock::now());
  }
  output.closed = true;
  changed_.notify_all();
}

void ChildProcess::send_line(std::string_view line) {
  std::string text(line);
  text.push_back('\n');
  if (::write(stdin_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    throw std::runtime_error("cannot write to the child's standard input");
  }
}

std::optional<std::string> ChildProcess::wait_for(Stream stream, std::string_view needle,
                                                  std::chrono::milliseconds timeout) {
  auto found = wait_for_timed(stream, needle, timeout);
  if (!found) return std::nullopt;
  return std::move(found->first);
}

std::optional<std::pair<std::string, std::chrono::steady_clock::time_point>> ChildProcess::wait_for_timed(
    Stream stream, std::string_view needle, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  Output& out = output(stream);
  std::optional<std::pair<std::string, std::chrono::steady_clock::time_point>> found;
  changed_.wait_for(lock, timeout, [&] {
    for (; out.cursor < out.lines.size(); ++out.cursor) {
      if (out.lines[out.cursor].find(needle) != std::string::npos) {
        found.emplace(out.lines[out.cursor], out.arrived[out.cursor]);
        ++out.cursor;
        return true;
      }
    }
    return out.closed;
  });
  return found;
}

bool ChildProcess::wait_seen(Stream stream, std::string_view needle, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  Output& out = output(stream);
  std::size_t checked = 0;
  return changed_.wait_for(lock, timeout, [&] {
    for (; checked < out.lines.size(); ++checked) {
      if (out.lines[checked].find(needle) != std::string::npos) return true;
    }
    return out.closed;
  }) && checked < out.lines.size();
}

bool ChildProcess::seen(Stream stream, std::string_view needle) {
  std::lock_guard lock(mutex_);
  for (const std::string& line : output(stream).lines) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> ChildProcess::lines(Stream stream) {
  std::lock_guard lock(mutex_);
  return output(stream).lines;
}

void ChildProcess::skip_to_end(Stream stream) {
  std::lock_guard lock(mutex_);
  output(stream).cursor = output(stream).lines.size();
}

int ChildProcess::terminate(std::chrono::milliseconds timeout) {
  if (status_) return *status_;
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  return wait_exit(timeout);
}

int ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (status_) return *status_;
  if (pid_ <= 0) return -1;
  // The exit is an event: a pidfd becomes readable when the process ends.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    pollfd exited{pidfd, POLLIN, 0};
    if (::poll(&exited, 1, static_cast<int>(timeout.count())) != 1) ::kill(pid_, SIGKILL);
    ::close(pidfd);
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // The readers may still hold output the process wrote just before it
  // ended: its pipes reach end of file once they are drained.
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [this] { return stdout_.closed && stderr_.closed; });
  return *status_;
}

}  // namespace flockbridge::testing
