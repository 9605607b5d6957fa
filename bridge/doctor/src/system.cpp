#include "system.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

extern char** environ;

namespace flockbridge::bridge::doctor {

namespace fs = std::filesystem;

std::optional<Printed> run_program(const std::vector<std::string>& argv) {
  std::array<int, 2> pipe_ends{};
  if (::pipe2(pipe_ends.data(), O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_ends[1]);
  if (spawned != 0) {
    ::close(pipe_ends[0]);
    return std::nullopt;
  }
  Printed printed;
  // A program that hangs (systemctl waiting on a bus) is given 5 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::array<char, 4096> buffer{};
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd ready{pipe_ends[0], POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(pipe_ends[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    printed.out.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(pipe_ends[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  printed.succeeded = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  // posix_spawnp reports a program it could not find as an exit of 127.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && printed.out.empty()) return std::nullopt;
  return printed;
}

std::optional<std::map<std::string, std::string>> unit_properties(const std::string& unit) {
  const auto shown = run_program({"systemctl", "show", unit, "--no-pager"});
  if (!shown || !shown->succeeded) return std::nullopt;
  std::map<std::string, std::string> properties;
  std::istringstream lines(shown->out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    std::string& value = properties[line.substr(0, equals)];
    value += (value.empty() ? "" : "\n") + line.substr(equals + 1);
  }
  if (properties.empty()) return std::nullopt;
  return properties;
}

namespace {

/// Every process's number, from /proc.
std::vector<pid_t> processes() {
  std::vector<pid_t> pids;
  std::error_code error;
  for (fs::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
      pids.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return pids;
}

std::string name_of(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

/// The first process with a descriptor that leads to `target` (a path, or "socket:[INODE]").
std::vector<Process> with_open(const std::string& target, bool first_only) {
  std::vector<Process> found;
  const pid_t self = ::getpid();
  for (const pid_t pid : processes()) {
    if (pid == self) continue;
    std::error_code error;
    const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
    for (fs::directory_iterator it(fds, error), end; !error && it != end; it.increment(error)) {
      std::error_code unreadable;
      const fs::path to = fs::read_symlink(it->path(), unreadable);
      if (!unreadable && to.string() == target) {
        found.push_back(Process{pid, name_of(pid)});
        break;
      }
    }
    if (first_only && !found.empty()) break;
  }
  return found;
}

}  // namespace

std::vector<Process> holders_of(const fs::path& node) {
  return with_open(node.string(), false);
}

std::optional<Process> listener_of(std::uint16_t port) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream file(table);
    std::string line;
    std::getline(file, line);  // the heading
    while (std::getline(file, line)) {
      std::istringstream fields(line);
      std::string slot;
      std::string local;
      std::string remote;
      std::string state;
      fields >> slot >> local >> remote >> state;
      if (state != "0A") continue;  // LISTEN
      const std::size_t colon = local.rfind(':');
      if (colon == std::string::npos || std::stoul(local.substr(colon + 1), nullptr, 16) != port) continue;
      std::string skipped;
      for (int i = 0; i < 5; ++i) fields >> skipped;  // tx/rx queues, timer, retransmits, uid, timeout
      std::string inode;
      fields >> inode;
      const auto holders = with_open("socket:[" + inode + "]", true);
      if (!holders.empty()) return holders.front();
      return Process{0, ""};  // someone listens; /proc does not say who
    }
  }
  return std::nullopt;
}

std::string char_driver_name(unsigned major) {
  std::ifstream devices("/proc/devices");
  std::string line;
  bool characters = false;
  while (std::getline(devices, line)) {
    if (line.starts_with("Character devices")) {
      characters = true;
      continue;
    }
    if (line.starts_with("Block devices")) break;
    if (!characters) continue;
    std::istringstream fields(line);
    unsigned number = 0;
    std::string name;
    if (fields >> number >> name && number == major) return name;
  }
  return {};
}

std::vector<std::string> groups_of(const std::string& user) {
  std::vector<std::string> names;
  const passwd* entry = ::getpwnam(user.c_str());
  if (entry == nullptr) return names;
  int count = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  if (::getgrouplist(user.c_str(), entry->pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<std::size_t>(count));
    ::getgrouplist(user.c_str(), entry->pw_gid, groups.data(), &count);
  }
  groups.resize(static_cast<std::size_t>(count));
  for (const gid_t gid : groups) {
    if (const group* g = ::getgrgid(gid)) names.emplace_back(g->gr_name);
  }
  return names;
}

std::string mode_text(mode_t mode) {
  std::string text;
  for (const auto& [bit, letter] : std::array<std::pair<mode_t, char>, 9>{{{S_IRUSR, 'r'},
                                                                            {S_IWUSR, 'w'},
                                                                            {S_IXUSR, 'x'},
                                                                            {S_IRGRP, 'r'},
                                                                            {S_IWGRP, 'w'},
                                                                            {S_IXGRP, 'x'},
                                                                            {S_IROTH, 'r'},
                                                                            {S_IWOTH, 'w'},
                                                                            {S_IXOTH, 'x'}}}) {
    text.push_back((mode & bit) != 0 ? letter : '-');
  }
  return text;
}

}  // namespace flockbridge::bridge::doctor
