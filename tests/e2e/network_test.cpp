// A robot never drives blind: the driver's network vanishes (its laptop's
// link goes down: no FIN, no RST) on every path that can drive, for every
// family, and the robot is stopped, the lease freed and everyone told,
// within a generous bound; a quiet driver whose host answers drives on. The
// bridge runs on a test network's robot computer (test_network.hpp), the
// driver on its laptop, a watcher beside the bridge.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "e2e/driving.hpp"

using namespace flockbridge::testing;
using namespace std::chrono_literals;
using Stream = ChildProcess::Stream;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

/// Far more than the bound the bridge keeps (1 s), far less than what
/// stopped the robot before the watch (the lease's 10 s idle rule).
constexpr auto kGenerous = 4s;

/// Test networks need root. A developer's test command runs as a user with
/// sudo: then this test case runs again as root through `sudo -n` (its
/// output shown, its result this one's), and true is returned. Fails with
/// the reason when neither can be.
bool ran_as_root() {
  if (::geteuid() == 0) return false;
  if (std::system("sudo -n true >/dev/null 2>&1") != 0) {
    FAIL(TestNetwork::unavailable() << ", or as a user who may use sudo without a password");
  }
  // doctest's filter takes commas as separators: any character matches there.
  std::string name = doctest::getContextOptions()->currentTest->m_name;
  std::replace(name.begin(), name.end(), ',', '?');
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const int status = std::system(("sudo -n '" + self + "' -tc='" + name + "'").c_str());
  CHECK_MESSAGE(status == 0, "as root, the test case failed (its output is above)");
  return true;
}

}  // namespace

TEST_CASE("network: a driver whose network vanishes is found, the robot stopped, the lease freed, everyone told") {
  if (ran_as_root()) return;
  for (const DrivingPath& path : driving_paths()) {
    for (const std::string& family : robot_families()) {
      if (!path.serves(family)) continue;  // a family without a port of its own
      const std::string& path_name = path.name;
      CAPTURE(path_name);
      CAPTURE(family);
      TestNetwork network;
      Rig rig(rig_on(network, family, path.bridge_args));
      auto watcher = rig.json_client();
      Driver driver = path.drive(rig, network, family);
      rig.expect_sim("wheels turning");
      REQUIRE(watcher.read_json_type("lease"));  // the driver holds it

      network.cut();
      const auto cut = Clock::now();
      const auto stopped = rig.sim().wait_for(Stream::Stdout, "wheels stopped", kGenerous);
      const auto stopped_after = Clock::now() - cut;
      CHECK_MESSAGE(stopped, "the robot drove on for " << kGenerous.count() << " s after its driver's network went");
      // The lease's end and the stop, in either order.
      std::optional<json> notice;
      std::optional<json> freed;
      const auto deadline = Clock::now() + kGenerous;
      while ((!notice || !freed) && Clock::now() < deadline) {
        auto message =
            watcher.read_json(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
        if (!message) break;
        if ((*message)["type"] == "safety_stop") notice = message;
        if ((*message)["type"] == "lease" && (*message)["holder"].is_null()) freed = message;
      }
      REQUIRE_MESSAGE(notice, "nobody was told why the robot stopped");
      CHECK_MESSAGE(freed, "the lease was not freed");
      const std::string reason = (*notice)["reason"].get<std::string>();
      // A program of a one-driver port (ARIA) that falls silent for a second
      // loses control too; whichever rule comes first tells why.
      const bool silent_program = family == "pioneer" && path.name == "own port";
      CHECK_MESSAGE((reason.find("lost its network") != std::string::npos ||
                     (silent_program && reason.find("sent nothing for") != std::string::npos)),
                    reason);
      MESSAGE(path_name << ", " << family << ": stopped "
                        << std::chrono::duration_cast<std::chrono::milliseconds>(stopped_after).count()
                        << " ms after the link went down");
    }
  }
}

TEST_CASE(
    "network: a quiet driver whose host answers drives on, and one whose network comes back is told and drives again") {
  if (ran_as_root()) return;
  TestNetwork network;
  Rig rig(rig_on(network, "flockbot", {"--lease-idle-ms", "60000"}));
  auto watcher = rig.json_client();
  const std::uint16_t port = rig.json_port();
  auto driver = network.on_laptop([port] { return TcpClient(port); });
  REQUIRE(driver.read_json_type("hello"));
  // Nothing flows either way from now on: no sensor messages, no commands.
  driver.send(R"({"cmd":"unsubscribe","id":1})"
              "\n");
  REQUIRE(driver.read_json_type("ok"));
  driver.send(common_drive().dump() + "\n");
  REQUIRE(driver.read_json_type("ok"));
  rig.expect_sim("wheels turning");
  // Five seconds of silence: the kernel's keepalive probes, answered, are all there is.
  CHECK_FALSE(rig.sim().wait_for(Stream::Stdout, "wheels stopped", 5s));
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "safety stop"));

  // Now its network goes, long enough to be found, and comes back.
  network.cut();
  rig.expect_sim("wheels stopped", kGenerous);
  const auto notice = watcher.read_json_type("safety_stop", kGenerous);
  REQUIRE(notice);
  CHECK((*notice)["reason"].get<std::string>().find("lost its network") != std::string::npos);
  network.mend();
  // The connection was kept: the driver hears what happened and drives again.
  const auto told = driver.read_json_type("safety_stop", kGenerous);
  REQUIRE(told);
  driver.send(common_drive().dump() + "\n");
  REQUIRE(driver.read_json_type("ok", kGenerous));
  rig.expect_sim("wheels turning");
}
