// Which robot is on a serial device (serial_prober.hpp): each family's
// simulated robot, on the pseudo-terminal its simulator program makes, is
// recognised as its family, with the speed it answered at and how long it
// took; a device that sends noise and one that echoes what it gets are left
// alone, each family saying why. The families are the table's, every one.
#include <doctest/doctest.h>

#include <uv.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/serial_prober.hpp"
#include "support/process.hpp"
#include "support/pty_pair.hpp"
#include "support/run_until.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

namespace {

/// One probe of each family that has one.
std::vector<std::unique_ptr<protocol::SerialProbe>> every_probe() {
  std::vector<std::unique_ptr<protocol::SerialProbe>> probes;
  for (const bridge::RobotFamily* family : bridge::robot_families()) {
    if (family->make_probe != nullptr) probes.push_back(family->make_probe());
  }
  return probes;
}

/// Probes `device` on a loop of its own and returns what was found.
std::optional<bridge::SerialProber::Outcome> probe(const std::string& device) {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  std::optional<bridge::SerialProber::Outcome> outcome;
  {
    bridge::SerialProber prober(&loop, every_probe(), [&](const auto& found) { outcome = found; });
    REQUIRE(prober.start(device));
    CHECK(run_until(
        &loop, [&] { return outcome.has_value(); }, 20s));
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
  return outcome;
}

/// A device played on a pseudo-terminal's master end by a thread: noise, or an echo.
class PlayedDevice {
 public:
  enum class Kind { Noise, Echo };
  explicit PlayedDevice(Kind kind) : player_([this, kind] { play(kind); }) {}
  PlayedDevice(const PlayedDevice&) = delete;
  PlayedDevice& operator=(const PlayedDevice&) = delete;
  ~PlayedDevice() {
    stop_ = true;
    player_.join();
  }
  [[nodiscard]] const std::string& path() const { return pty_.slave; }

 private:
  void play(Kind kind) {
    std::mt19937 random(5);
    std::array<unsigned char, 256> buffer{};
    while (!stop_) {
      if (kind == Kind::Noise) {
        for (auto& byte : buffer) byte = static_cast<unsigned char>(random());
        (void)::write(pty_.master, buffer.data(), 64);
      } else if (const ssize_t n = ::read(pty_.master, buffer.data(), buffer.size()); n > 0) {
        (void)::write(pty_.master, buffer.data(), static_cast<std::size_t>(n));
      }
      std::this_thread::sleep_for(2ms);
    }
  }

  testing::PtyPair pty_;
  std::atomic<bool> stop_{false};
  std::thread player_;
};

}  // namespace

TEST_CASE("serial prober: each family's simulated robot is recognised as its family, and no other family claims it") {
  testing::TempDir directory;
  for (const bridge::RobotFamily* family : bridge::robot_families()) {
    if (!family->has_robot) continue;
    const std::string name(family->name);
    CAPTURE(name);
    const std::string link = (directory.path() / name).string();
    testing::ChildProcess robot({FLOCKBRIDGE_SIM_BIN, "--robot", name, "--link", link});
    REQUIRE(robot.wait_for(testing::ChildProcess::Stream::Stdout, "ready "));
    const auto outcome = probe(link);
    REQUIRE(outcome);
    if (family->make_probe == nullptr) {
      // A family that cannot be recognised yet: at least no other claims its robot.
      CHECK(outcome->family.empty());
      continue;
    }
    CHECK(outcome->family == name);
    CHECK(outcome->baud > 0);
    CHECK_FALSE(outcome->finding.evidence.empty());
    MESSAGE(name << ": " << outcome->finding.evidence << " in " << outcome->took.count() << " ms");
  }
}

TEST_CASE("serial prober: a device that sends noise and one that echoes are left alone, each family saying why") {
  for (const auto kind : {PlayedDevice::Kind::Noise, PlayedDevice::Kind::Echo}) {
    PlayedDevice device(kind);
    const auto outcome = probe(device.path());
    REQUIRE(outcome);
    CHECK(outcome->family.empty());
    MESSAGE(std::string(kind == PlayedDevice::Kind::Noise ? "noise: " : "echo: ") << outcome->why_not);
    for (const bridge::RobotFamily* family : bridge::robot_families()) {
      if (family->make_probe != nullptr)
        CHECK(outcome->why_not.find(std::string(family->name) + " at ") != std::string::npos);
    }
  }
}
