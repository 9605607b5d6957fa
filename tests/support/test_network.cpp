#include "support/test_network.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace flockbridge::testing {
namespace {

void run(const std::string& command) {
  if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
    throw std::runtime_error("test network: '" + command + "' failed");
  }
}

std::atomic<unsigned> g_networks{0};

/// Removes the test networks of processes that are gone (a test killed
/// before its destructors ran): their names carry their process's number.
void remove_orphans() {
  FILE* list = ::popen("ip netns list 2>/dev/null", "r");
  if (list == nullptr) return;
  std::array<char, 256> line{};
  std::vector<std::string> orphans;
  while (std::fgets(line.data(), line.size(), list) != nullptr) {
    const std::string name(line.data(), std::strcspn(line.data(), " \n"));
    for (const std::string prefix : {"fb-robot-", "fb-laptop-"}) {
      if (name.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) orphans.push_back(name);
    }
  }
  ::pclose(list);
  for (const std::string& name : orphans) std::system(("ip netns del " + name + " >/dev/null 2>&1").c_str());
}

}  // namespace

std::string TestNetwork::unavailable() {
  if (::geteuid() != 0) return "network namespaces need root: run the test command as root (CI does)";
  if (std::system("ip -V >/dev/null 2>&1") != 0) return "no 'ip' (iproute2) on this machine";
  return {};
}

TestNetwork::TestNetwork() {
  if (const std::string why = unavailable(); !why.empty()) throw std::runtime_error(why);
  remove_orphans();
  const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(g_networks++);
  robot_ = "fb-robot-" + tag;
  laptop_ = "fb-laptop-" + tag;
  run("ip netns add " + robot_);
  run("ip netns add " + laptop_);
  // Each pair is a network of its own: the same addresses serve every test.
  run("ip -n " + robot_ + " link add fbr type veth peer name fbl netns " + laptop_);
  run("ip -n " + robot_ + " addr add " + robot_address() + "/30 dev fbr");
  run("ip -n " + laptop_ + " addr add 10.249.0.2/30 dev fbl");
  for (const std::string* space : {&robot_, &laptop_}) {
    run("ip -n " + *space + " link set lo up");
  }
  run("ip -n " + robot_ + " link set fbr up");
  mend();
}

TestNetwork::~TestNetwork() {
  // The veth pair goes with the namespaces.
  for (const std::string* space : {&laptop_, &robot_}) {
    std::system(("ip netns del " + *space + " >/dev/null 2>&1").c_str());
  }
}

void TestNetwork::cut() {
  run("ip -n " + laptop_ + " link set fbl down");
}

void TestNetwork::mend() {
  run("ip -n " + laptop_ + " link set fbl up");
}

void TestNetwork::enter(const std::string& name) {
  const int fd = ::open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("test network: no namespace " + name);
  const int rc = ::setns(fd, CLONE_NEWNET);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("test network: cannot enter " + name);
}

}  // namespace flockbridge::testing
