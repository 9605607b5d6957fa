// plug_bench: how long plug and play takes to recognise each family's robot
// (the simulated robot on a pseudo-terminal, as the bridge's SerialProber
// runs every family's probe over it), beside the waits its probes must sit
// out before that family's answer can come (the listening Flockbot's 2.5 s,
// the speeds tried before the robot's): the ratio says what the prober adds.
// And how soon a device linked where the bridge searches is told (the
// kernel's notice, then the settling). Prints figures; asserts nothing.
//
//   build/bin/plug_bench --trials 10
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/device_watch.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/serial_candidates.hpp"
#include "flockbridge/bridge/serial_prober.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace flockbridge;
using Milliseconds = std::chrono::duration<double, std::milli>;

/// Every family's probe, in the prober's order: those that only listen first.
std::vector<std::unique_ptr<protocol::SerialProbe>> every_probe() {
  auto probes = bridge::make_probes(bridge::robot_families());
  std::stable_partition(probes.begin(), probes.end(), [](const auto& probe) { return probe->listens_only(); });
  return probes;
}

/// The waits the probes sit out before `family`'s answer at `baud` can come.
Milliseconds scheduled_waits(std::string_view family, int baud) {
  Milliseconds waits{0};
  for (const auto& probe : every_probe()) {
    for (const protocol::ProbeSpeed& speed : probe->speeds()) {
      if (probe->family() == family && speed.baud == baud) return waits;
      waits += speed.wait;
    }
  }
  return waits;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(std::lround(p * static_cast<double>(values.size() - 1)));
  return values[std::min(at, values.size() - 1)];
}

void recognition(const std::string& family, int trials) {
  testing::TempDir devices;
  const std::string device = (devices.path() / "ttyUSB0").string();
  testing::ChildProcess robot({FLOCKBOT_SIM_BIN, "--robot", family, "--link", device});
  if (!robot.wait_for(testing::ChildProcess::Stream::Stdout, "ready ")) {
    std::printf("%-10s the simulated robot did not start\n", family.c_str());
    std::exit(1);
  }
  std::vector<double> took;
  int baud = 0;
  for (int trial = 0; trial < trials; ++trial) {
    robot.skip_to_end(testing::ChildProcess::Stream::Stdout);
    // A pseudo-terminal is on no USB: every probe has its turn.
    auto outcome = bridge::probe_device(
        device, every_probe(), [](const std::string&) { return std::optional<protocol::UsbIdentity>{}; });
    // A robot that resets at each opening is handed its device open: nobody serves it here, so it is closed.
    if (outcome) outcome->open_device.reset();
    // Each trial is a robot plugged in anew: the simulator has seen its port close (an Uno resets at each opening).
    (void)robot.wait_for(testing::ChildProcess::Stream::Stdout, "port closed by the host", std::chrono::seconds(5));
    if (!outcome || outcome->family != family) {
      std::printf(
          "%-10s not recognised: %s\n", family.c_str(),
          outcome ? (outcome->family.empty() ? outcome->why_not.c_str() : outcome->family.c_str()) : "no outcome");
      std::exit(1);
    }
    took.push_back(outcome->took.count());
    baud = outcome->baud;
  }
  const double waits = scheduled_waits(family, baud).count();
  const double median = percentile(took, 0.5);
  std::printf("%-10s %7d %10.1f %10.1f %10.1f %12.1f ", family.c_str(), baud, median, percentile(took, 0.99),
              *std::max_element(took.begin(), took.end()), waits);
  if (waits > 0) {
    std::printf("%8.3f\n", median / waits);
  } else {
    std::printf("%8s\n", "-");  // the first probe's answer: nothing to sit out before it
  }
}

void hotplug(int trials) {
  testing::TempDir devices;
  bridge::CandidateScan scan;
  scan.patterns = {(devices.path() / "ttyUSB*").string()};
  // A pseudo-terminal for the link to lead to: a device node, as udev's links lead to one.
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) std::exit(1);
  const std::string slave = ::ptsname(master);
  uv_loop_t loop;
  uv_loop_init(&loop);
  std::vector<double> told;
  {
    std::chrono::steady_clock::time_point linked{};
    bool changed = false;
    bridge::DeviceWatch watch(
        &loop,
        [&](const std::filesystem::path& folder, std::string_view name) { return concerns_scan(scan, folder, name); },
        [&] { changed = true; });
    if (!watch.watch(bridge::candidate_folders(scan))) std::exit(1);
    for (int trial = 0; trial < trials; ++trial) {
      const auto link = devices.path() / "ttyUSB0";
      if (std::filesystem::remove(link)) {
        changed = false;
        while (!changed && uv_run(&loop, UV_RUN_ONCE) != 0) {  // the removal, told
        }
      }
      changed = false;
      linked = std::chrono::steady_clock::now();
      std::filesystem::create_symlink(slave, link);
      while (!changed && uv_run(&loop, UV_RUN_ONCE) != 0) {
      }
      told.push_back(Milliseconds(std::chrono::steady_clock::now() - linked).count());
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  ::close(master);
  std::printf(
      "a device linked where the bridge searches is told after: p50 %.1f ms, p99 %.1f ms "
      "(of which %lld ms is the settling, DeviceWatch::kSettle)\n",
      percentile(told, 0.5), percentile(told, 0.99), static_cast<long long>(bridge::DeviceWatch::kSettle.count()));
}

}  // namespace

int main(int argc, char** argv) try {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it comes, also into a pipe
  int trials = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string_view(argv[i]) == "--trials") trials = std::max(1, std::atoi(argv[i + 1]));
  }
  std::printf(
      "plug and play: each family's simulated robot recognised %d times on a pseudo-terminal (no USB "
      "identity: every probe has its turn)\n",
      trials);
  std::printf("%-10s %7s %10s %10s %10s %12s %8s\n", "family", "baud", "p50 ms", "p99 ms", "max ms", "waits ms",
              "ratio");
  for (const std::string_view family : bridge::robot_family_names()) {
    const bridge::RobotFamily* described = bridge::find_robot_family(family);
    if (described == nullptr || described->make_probe == nullptr) {
      std::printf("%-10s cannot be recognised: its RobotFamily has no make_probe\n", std::string(family).c_str());
      return 1;
    }
    recognition(std::string(family), trials);
  }
  std::printf("(waits: what the probes before the answer must sit out; ratio: p50 over them)\n");
  hotplug(trials);
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "plug_bench: %s\n", error.what());
  return 1;
}
