// What a driver's vanished network costs: the time from its laptop's link
// going down to the simulated robot's wheels at zero (the simulator's own
// state, timed by its --timestamps), for every family and every path a
// program can drive through; and a quiet driver whose host answers, left
// driving under the close watch, with the stops it got (none is right).
//
//   network_bench [--trials N] [--soak-seconds S] [--bridge PATH]
//
// --trials 0 leaves the vanished networks out, --soak-seconds 0 the silent
// driver. --bridge measures another build of the daemon (an older one, say) against
// today's simulators. It needs root (the test networks). It prints figures
// and asserts nothing; scripts/bench.sh runs it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "e2e/driving.hpp"
#include "support/measure.hpp"

using namespace flockbridge::testing;
using Clock = std::chrono::steady_clock;
using Stream = ChildProcess::Stream;

namespace {

struct Options {
  int trials = 20;
  int soak_seconds = 600;
  std::string bridge;  ///< empty: this build's
  /// Longest wait for the wheels to stop: a daemon without the watch stops them only after its lease's 10 s.
  std::chrono::milliseconds patience{15000};
};
Options g_options;

void trials();

/// The simulator's monotonic time on a "[123.456789] ..." line, in seconds.
double stamp_of(const std::string& line) {
  return line.size() > 1 && line[0] == '[' ? std::strtod(line.c_str() + 1, nullptr) : -1;
}

double now_seconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

RigOptions bench_rig(TestNetwork& network, const std::string& family, const DrivingPath& path) {
  RigOptions options = rig_on(network, family, path.bridge_args);
  options.sim_args = {"--timestamps"};
  if (!g_options.bridge.empty()) options.bridge_binary = g_options.bridge;
  return options;
}

/// One trial: milliseconds from the cut to the wheels at zero, or -1 when they did not stop.
double trial(const std::string& family, const DrivingPath& path) {
  TestNetwork network;
  Rig rig(bench_rig(network, family, path));
  Driver driver = path.drive(rig, network, family);
  rig.expect_sim("wheels turning");
  const double cut = now_seconds();  // before the command: the figure includes its own few milliseconds
  network.cut();
  const auto stopped = rig.sim().wait_for(Stream::Stdout, "wheels stopped", g_options.patience);
  return stopped ? (stamp_of(*stopped) - cut) * 1000.0 : -1;
}

void soak() {
  TestNetwork network;
  RigOptions options = bench_rig(network, "flockbot", driving_paths().at(1));
  options.bridge_args = {"--lease-idle-ms", std::to_string((g_options.soak_seconds + 60) * 1000)};
  Rig rig(options);
  const std::uint16_t port = rig.json_port();
  auto driver = network.on_laptop([port] { return TcpClient(port); });
  REQUIRE(driver.read_json_type("hello"));
  // Nothing flows either way: only the kernels' keepalive probes and answers.
  driver.send("{\"cmd\":\"unsubscribe\"}\n");
  REQUIRE(driver.read_json_type("ok"));
  driver.send(common_drive().dump() + "\n");
  REQUIRE(driver.read_json_type("ok"));
  rig.expect_sim("wheels turning");
  const auto began = Clock::now();
  const auto stopped =
      rig.sim().wait_for(Stream::Stdout, "wheels stopped", std::chrono::seconds(g_options.soak_seconds));
  const double lasted = std::chrono::duration<double>(Clock::now() - began).count();
  std::printf("a silent live driver (JSON, unsubscribed, sending nothing) under the close watch: %.0f s, %d stops\n",
              lasted, stopped ? 1 : 0);
}

}  // namespace

TEST_CASE("network_bench") {
  if (const std::string why = TestNetwork::unavailable(); !why.empty()) FAIL(why);
  if (g_options.trials > 0) trials();
  if (g_options.soak_seconds > 0) soak();
}

namespace {

void trials() {
  std::printf("from a driver's link going down to the simulated robot's wheels at zero, ms (%d trials each)\n",
              g_options.trials);
  std::printf("%-10s %-10s %8s %8s %8s %8s\n", "family", "path", "p50", "p99", "max", "stopped");
  for (const DrivingPath& path : driving_paths()) {
    for (const std::string& family : robot_families()) {
      if (!path.serves(family)) continue;  // a family without a port of its own
      std::vector<double> times;
      int stopped = 0;
      for (int i = 0; i < g_options.trials; ++i) {
        const double ms = trial(family, path);
        if (ms >= 0) {
          times.push_back(ms);
          ++stopped;
        } else {
          times.push_back(static_cast<double>(g_options.patience.count()));
        }
      }
      std::sort(times.begin(), times.end());
      std::printf("%-10s %-10s %8.0f %8.0f %8.0f %5d/%d\n", family.c_str(), path.name.c_str(), percentile(times, 0.5),
                  percentile(times, 0.99), times.back(), stopped, g_options.trials);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--trials") {
      g_options.trials = std::max(0, std::atoi(argv[i + 1]));
    } else if (option == "--soak-seconds") {
      g_options.soak_seconds = std::max(0, std::atoi(argv[i + 1]));
    } else if (option == "--bridge") {
      g_options.bridge = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: network_bench [--trials N] [--soak-seconds S] [--bridge PATH]\n");
      return 2;
    }
  }
  doctest::Context context;
  context.setOption("no-intro", true);
  context.setOption("no-version", true);
  return context.run();
}
