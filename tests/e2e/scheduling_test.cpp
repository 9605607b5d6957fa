// The real-time class by default: the bridge asks the kernel for it for its
// loop at start, keeps the threads and processes it starts afterwards
// ordinary, lets go of the capability it needed, falls back to the ordinary
// class where the kernel refuses, and says which in its log and in stats.
#include <doctest/doctest.h>

#include <linux/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;

namespace {

/// A task's scheduling policy (0 ordinary, 1 SCHED_FIFO) and real-time
/// priority, from /proc/PID/task/TID/stat (fields 41 and 40).
struct TaskScheduling {
  int policy = -1;
  int priority = -1;
};

TaskScheduling task_scheduling(const std::filesystem::path& stat) {
  std::ifstream file(stat);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The fields after the command's closing parenthesis begin with field 3.
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  TaskScheduling result;
  for (int number = 3; fields >> field; ++number) {
    if (number == 40) result.priority = std::stoi(field);
    if (number == 41) result.policy = std::stoi(field);
  }
  return result;
}

/// Whether a process holds CAP_SYS_NICE in its effective or permitted set.
bool holds_sys_nice(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  bool holds = false;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0 || line.rfind("CapPrm:", 0) == 0) {
      holds = holds || ((std::stoull(line.substr(7), nullptr, 16) >> CAP_SYS_NICE) & 1U) != 0;
    }
  }
  return holds;
}

/// Whether this test may put a process in the real-time class: root, or a
/// real-time priority limit of 20 or more.
bool may_have_real_time() {
  rlimit limit{};
  return ::geteuid() == 0 || (::getrlimit(RLIMIT_RTPRIO, &limit) == 0 && limit.rlim_cur >= 20);
}

}  // namespace

TEST_CASE("scheduling: the bridge asks for the real-time class for its loop, and says what it got") {
  Rig rig(smr_rig());
  auto client = rig.json_client();
  const nlohmann::json scheduling = bridge_stats(client)["scheduling"];
  CHECK(scheduling["asked"] == true);
  const pid_t pid = rig.bridge().pid();
  const auto main_thread = task_scheduling("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/stat");
  if (may_have_real_time()) {
    CHECK(scheduling["class"] == "real-time");
    CHECK(scheduling["summary"] == "real-time (SCHED_FIFO, priority 20)");
    CHECK(scheduling["refused"] == "");
    CHECK(rig.bridge().wait_seen(Stream::Stderr, "info: scheduling: real-time (SCHED_FIFO, priority 20)"));
    CHECK(main_thread.policy == 1);
    CHECK(main_thread.priority == 20);
  } else {
    CHECK(scheduling["class"] == "ordinary");
    CHECK(scheduling["refused"].get<std::string>().find("EPERM") != std::string::npos);
    CHECK(main_thread.policy == 0);
  }
  // Every other thread (an emulator's own, libuv's workers) is ordinary,
  // and the capability it needed is gone.
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    if (task.path().filename() == std::to_string(pid)) continue;
    CAPTURE(task.path().string());
    CHECK(task_scheduling(task.path() / "stat").policy == 0);
  }
  CHECK_FALSE(holds_sys_nice(pid));
  // It serves the robot as ever.
  CHECK(sensor_where(client, [](const nlohmann::json& m) { return m.contains("tick"); }).contains("ranges"));
}

TEST_CASE(
    "scheduling: where the kernel refuses the real-time class, the bridge runs in the ordinary class and says why") {
  RigOptions options = smr_rig();
  // No CAP_SYS_NICE (root can give it up for good: the bounding set) and no real-time limit.
  if (::geteuid() == 0) options.bridge_prefix = {"setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"};
  options.bridge_prefix.insert(options.bridge_prefix.end(), {"prlimit", "--rtprio=0", "--"});
  Rig rig(options);
  CHECK(rig.bridge().wait_seen(Stream::Stderr,
                               "ns: the real-time class was asked for, and the kernel refused it (EPERM)"));
  CHECK(rig.bridge().seen(Stream::Stderr, "warning: scheduling: ordinary (SCHED_OTHER"));
  auto client = rig.json_client();
  const nlohmann::json scheduling = bridge_stats(client)["scheduling"];
  CHECK(scheduling["class"] == "ordinary");
  CHECK(scheduling["asked"] == true);
  CHECK(scheduling["refused"].get<std::string>().find("CAP_SYS_NICE") != std::string::npos);
  CHECK(sensor_where(client, [](const nlohmann::json& m) { return m.contains("tick"); }).contains("ranges"));
}

TEST_CASE("scheduling: --no-real-time keeps the ordinary class") {
  RigOptions options = smr_rig();
  options.bridge_args = {"--no-real-time"};
  Rig rig(options);
  CHECK(rig.bridge().wait_seen(Stream::Stderr, "ns (scheduling.real_time is off)"));
  auto client = rig.json_client();
  const nlohmann::json scheduling = bridge_stats(client)["scheduling"];
  CHECK(scheduling["class"] == "ordinary");
  CHECK(scheduling["asked"] == false);
  const pid_t pid = rig.bridge().pid();
  CHECK(task_scheduling("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/stat").policy == 0);
}
