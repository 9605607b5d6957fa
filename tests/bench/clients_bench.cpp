// clients_bench: the real flockbridge against the real flockbot-sim, with
// many JSON clients on 127.0.0.1, measured in two phases: every client
// reading, then the same with some clients that never read. It prints the
// readers' sensor latency (from the bridge's receive timestamp `ts` to the
// client's receive time, both on this machine's clock), the sequence numbers
// they missed, and the bridge's memory. It asserts nothing: figures only.
//
//   clients_bench [--clients N] [--stalled K] [--rate-hz R] [--seconds S]
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/listening.hpp"
#include "support/measure.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"

using namespace flockbridge::testing;
using Clock = std::chrono::system_clock;

namespace {

struct Options {
  int clients = 100;
  int stalled = 10;
  double rate_hz = 100;
  double seconds = 5;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const double value = std::atof(argv[i + 1]);
    if (name == "--clients")
      options.clients = static_cast<int>(value);
    else if (name == "--stalled")
      options.stalled = static_cast<int>(value);
    else if (name == "--rate-hz")
      options.rate_hz = value;
    else if (name == "--seconds")
      options.seconds = value;
    else {
      std::fprintf(stderr, "usage: clients_bench [--clients N] [--stalled K] [--rate-hz R] [--seconds S]\n");
      std::exit(2);
    }
  }
  return options;
}

/// Reads every reader for `seconds`, collecting latencies and gaps in seq.

void report(const char* name, const SensorLatency& phase, pid_t bridge) {
  const double p50 = percentile(phase.ms, 0.50);
  const double p99 = percentile(phase.ms, 0.99);
  const double max = phase.ms.empty() ? 0 : phase.ms.back();
  std::printf("%-28s messages %8ld  missed %5ld  latency p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  bridge RSS %s\n",
              name, static_cast<long>(phase.ms.size()), phase.missed, p50, p99, max,
              process_status(bridge, "VmRSS").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const auto directory = std::filesystem::temp_directory_path() / ("flockbridge-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const std::string device = (directory / "uno").string();

  ChildProcess sim({FLOCKBOT_SIM_BIN, "--link", device, "--rate-hz", std::to_string(options.rate_hz)});
  if (!sim.wait_for(ChildProcess::Stream::Stdout, "ready ")) return 1;
  const int limit = options.clients + options.stalled + 8;
  ChildProcess bridge({FLOCKBRIDGE_BIN, "--device", device, "--bind", "127.0.0.1", "--port", "0", "--json-port", "0", "--http-port", "0",
                       "--max-clients", std::to_string(limit), "--stall-timeout-ms", "600000"});
  const auto listening = bridge.wait_for(ChildProcess::Stream::Stderr, "listening: ");
  const auto ports = listening ? listening_ports(*listening) : std::nullopt;
  if (!ports || !bridge.wait_for(ChildProcess::Stream::Stderr, "robot link up")) {
    std::fprintf(stderr, "clients_bench: the bridge did not start\n");
    return 1;
  }
  const std::uint16_t json_port = ports->json;

  std::vector<TcpClient> readers;
  for (int i = 0; i < options.clients; ++i) readers.emplace_back(json_port);
  std::vector<long> last_seq(readers.size(), 0);
  read_sensor_latency(readers, last_seq, 1.0);  // let every client settle
  std::printf("flockbridge clients_bench: %d JSON readers, %d stalled, %.0f sensor packets/s, %.1f s per phase\n",
              options.clients, options.stalled, options.rate_hz, options.seconds);
  SensorLatency alone = read_sensor_latency(readers, last_seq, options.seconds);
  report("all clients reading", alone, bridge.pid());

  std::vector<TcpClient> stalled;
  for (int i = 0; i < options.stalled; ++i) stalled.emplace_back(json_port, 2048);
  SensorLatency with_stalled = read_sensor_latency(readers, last_seq, options.seconds);
  report("with stalled clients", with_stalled, bridge.pid());
  std::printf("%-28s %s (peak RSS of the bridge)\n", "", process_status(bridge.pid(), "VmHWM").c_str());

  long dropped = 0;
  for (auto& client : stalled) {
    if (auto notice = client.read_json_type("dropped", 2s)) dropped += (*notice)["count"].get<long>();
  }
  std::printf("%-28s the %d stalled clients were told they lost %ld sensor messages in all\n", "", options.stalled,
              dropped);
  bridge.terminate();
  sim.terminate();
  std::filesystem::remove_all(directory);
  return 0;
}
