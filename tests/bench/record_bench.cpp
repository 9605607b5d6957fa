// record_bench: what recording a run costs, for each family at its robot's
// full rate (the Flockbot's 100 packets a second, the Pioneer's 10 SIPs, the
// SMR's 100 periods): the bridge's CPU with the recording off and on (in
// turns, the median of each), the bytes it writes an hour, and how closely
// a replay of the run keeps the recorded pace (--replay). The real
// daemon against its simulated robot (--simulate), one JSON client reading
// as in a lesson. It prints figures and asserts nothing.
//
//   record_bench [--robot FAMILY|all] [--seconds N] [--trials N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/bench.hpp"
#include "support/listening.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace flockbridge::testing;
using bench::cpu_seconds;
using bench::seconds_since;
using Clock = std::chrono::steady_clock;

struct Trial {
  double cpu_share = 0;   ///< of one core, the bridge's threads together
  double messages_s = 0;  ///< sensor messages the client got a second
  double bytes_hour = 0;  ///< written to disk (compressed), recording on
  double recorded_s = 0;  ///< messages recorded a second, every topic
  double line_bytes = 0;  ///< the client's sensor lines, on average
  /// The run replayed: how far from its place in the recorded schedule each
  /// sensor message reached a JSON client (ms: median, p99, the most).
  double pace_p50_ms = 0;
  double pace_p99_ms = 0;
  double pace_max_ms = 0;
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

nlohmann::json stats(TcpClient& client) {
  client.send("{\"cmd\":\"stats\"}\n");
  auto message = client.read_json_type("stats", std::chrono::seconds(10));
  if (!message) throw std::runtime_error("no stats came");
  return *message;
}

/// Replays `file` to a JSON client; how far each message came from its time.
void replay(const std::filesystem::path& file, Trial& trial) {
  ChildProcess bridge({bench::bridge_under_test(), "--no-config", "--replay", file.string(), "--bind", "127.0.0.1", "--port", "0",
                       "--json-port", "0", "--no-http", "--mdns-service-file", "", "--stats-interval-s", "0"});
  const auto listening = bridge.wait_for(ChildProcess::Stream::Stderr, "listening: ");
  const auto ports = listening ? listening_ports(*listening) : std::nullopt;
  if (!ports) throw std::runtime_error("the replay did not start");
  TcpClient client(ports->json);                          // the replay begins with its first client
  std::vector<std::pair<Clock::time_point, double>> got;  // when it came, and its recorded ts
  for (;;) {
    auto message = client.read_json(std::chrono::seconds(30));
    if (!message) throw std::runtime_error("the replay stopped sending");
    const std::string type = message->value("type", "");
    if (type == "sensor") got.emplace_back(Clock::now(), (*message)["ts"].get<double>());
    if (type == "link" && (*message)["state"] == "down") break;
  }
  // Each one's arrival after the first less its recorded time after the
  // first, taken from the median of those (the delivery's usual delay).
  std::vector<double> offsets;
  offsets.reserve(got.size());
  for (const auto& [at, ts] : got)
    offsets.push_back((seconds_since(got.front().first, at) - (ts - got.front().second)) * 1000);
  const double usual = median(offsets);
  std::vector<double> errors;
  errors.reserve(offsets.size());
  for (const double offset : offsets) errors.push_back(std::abs(offset - usual));
  std::sort(errors.begin(), errors.end());
  if (errors.empty()) return;
  trial.pace_p50_ms = errors[errors.size() / 2];
  trial.pace_p99_ms = errors[errors.size() * 99 / 100];
  trial.pace_max_ms = errors.back();
}

Trial run(const std::string& robot, bool record, double seconds) {
  const TempDir place;
  std::vector<std::string> command{bench::bridge_under_test(),
                                   "--no-config",
                                   "--robot",
                                   robot,
                                   "--simulate",
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--json-port",
                                   "0",
                                   "--no-http",
                                   "--mdns-service-file",
                                   "",
                                   "--stats-interval-s",
                                   "0"};
  if (robot == "flockbot") command.insert(command.end(), {"--sim-rate-hz", "100"});
  if (record) command.insert(command.end(), {"--record", (place.path() / "recordings").string()});
  ChildProcess bridge(command);
  const auto listening = bridge.wait_for(ChildProcess::Stream::Stderr, "listening: ");
  const auto ports = listening ? listening_ports(*listening) : std::nullopt;
  if (!ports || !bridge.wait_for(ChildProcess::Stream::Stderr, "robot link up", std::chrono::seconds(20))) {
    throw std::runtime_error("the bridge did not come up");
  }
  TcpClient client(ports->json);
  // A second to settle: the first chunk, the file's head.
  const auto settle = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < settle) (void)client.read_json_type("sensor");
  const nlohmann::json before = stats(client);
  const double cpu_before = cpu_seconds(bridge.pid());
  const auto start = Clock::now();
  long sensors = 0;
  double line_bytes = 0;
  while (Clock::now() - start < std::chrono::duration<double>(seconds)) {
    auto line = client.read_line();
    if (!line) break;
    if (line->find("\"type\":\"sensor\"") != std::string::npos) {
      ++sensors;
      line_bytes += static_cast<double>(line->size() + 1);
    }
  }
  const double elapsed = seconds_since(start, Clock::now());
  const double cpu = cpu_seconds(bridge.pid()) - cpu_before;
  const nlohmann::json after = stats(client);
  Trial trial;
  trial.cpu_share = cpu / elapsed;
  trial.messages_s = static_cast<double>(sensors) / elapsed;
  trial.line_bytes = sensors > 0 ? line_bytes / static_cast<double>(sensors) : 0;
  if (record) {
    // The disk's figures move a chunk (a second) at a time: taken over the whole phase.
    const double written = after["recording"]["bytes"].get<double>() - before["recording"]["bytes"].get<double>();
    const double recorded =
        after["recording"]["messages"].get<double>() - before["recording"]["messages"].get<double>();
    trial.bytes_hour = written / elapsed * 3600;
    trial.recorded_s = recorded / elapsed;
    bridge.terminate();  // the file complete
    for (const auto& entry : std::filesystem::directory_iterator(place.path() / "recordings")) {
      replay(entry.path(), trial);
    }
  }
  return trial;
}

}  // namespace

namespace {

/// Every robot family, from the bridge itself (flockbridge --list-families).
std::vector<std::string> listed_families() {
  ChildProcess listing({FLOCKBRIDGE_BIN, "--list-families"});
  if (listing.wait_exit() != 0) throw std::runtime_error("flockbridge --list-families failed");
  std::vector<std::string> families = listing.lines(ChildProcess::Stream::Stdout);
  if (families.empty()) throw std::runtime_error("flockbridge --list-families listed no family");
  return families;
}

int run_all(int argc, char** argv) {
  std::string which = "all";
  double seconds = 10;
  int trials = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--robot") {
      which = argv[i + 1];
    } else if (option == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (option == "--trials") {
      trials = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "record_bench [--robot FAMILY|all] [--seconds N] [--trials N]\n");
      return 2;
    }
  }
  std::vector<std::string> robots = which == "all" ? listed_families() : std::vector<std::string>{which};
  std::printf(
      "flockbridge record_bench: each family at its full rate, one JSON client, %.0f s a phase, %d trials "
      "off and on in turn (medians)\n\n",
      seconds, trials);
  std::printf(
      "| family | sensor messages/s | line | bridge CPU, recording off | on | recording's share | its cost a "
      "message | written an hour | recorded/s | replayed: from its time, p50 / p99 / most |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& robot : robots) {
    std::vector<double> off;
    std::vector<double> on;
    std::vector<double> rates;
    std::vector<double> hours;
    std::vector<double> recorded;
    std::vector<double> lines;
    std::vector<double> p50;
    std::vector<double> p99;
    double most = 0;
    for (int t = 0; t < trials; ++t) {
      const Trial without = run(robot, false, seconds);
      const Trial with = run(robot, true, seconds);
      off.push_back(without.cpu_share);
      on.push_back(with.cpu_share);
      rates.push_back(with.messages_s);
      hours.push_back(with.bytes_hour);
      recorded.push_back(with.recorded_s);
      lines.push_back(with.line_bytes);
      p50.push_back(with.pace_p50_ms);
      p99.push_back(with.pace_p99_ms);
      most = std::max(most, with.pace_max_ms);
    }
    const double share = median(on) - median(off);
    const double rate = median(rates);
    std::printf(
        "| %s | %.1f | %.0f B | %.2f%% | %.2f%% | %+.2f%% of a core | %+.1f us | %.1f MB | %.0f | %.2f / %.2f "
        "/ %.2f ms |\n",
        robot.c_str(), rate, median(lines), 100 * median(off), 100 * median(on), 100 * share,
        rate > 0 ? share / rate * 1e6 : 0.0, median(hours) / 1e6, median(recorded), median(p50), median(p99), most);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_all(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "record_bench: %s\n", error.what());
    return 1;
  }
}
