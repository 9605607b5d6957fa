// clients_bench: the real flockbridge against the real flockbot-sim, with
// many JSON clients on 127.0.0.1 (port 2006, or the web server's /ws with
// --kind websocket, or the Foxglove live view's viewers subscribed to
// /sensor with --kind foxglove), measured in phases: every client reading, then the same
// with some clients that never read. It prints the readers' sensor latency
// (from the bridge's receive timestamp `ts` to the client's receive time,
// both on this machine's clock), the sequence numbers they missed, and the
// bridge's memory. Then the latency of Stop commands (each after a motion
// command), from a client's send to the simulated Uno receiving D S T, with the readers idle and with them
// reading: telemetry must not delay commands. It asserts nothing: figures only.
//
//   clients_bench [--kind json|websocket|foxglove] [--clients N] [--stalled K] [--rate-hz R] [--seconds S]
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/listening.hpp"
#include "support/measure.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"

using namespace flockbridge::testing;
using Clock = std::chrono::system_clock;

namespace {

enum class Kind { Json, WebSocket, Foxglove };

struct Options {
  Kind kind = Kind::Json;
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
    const std::string text = argv[i + 1];
    if (name == "--kind" && (text == "json" || text == "websocket" || text == "foxglove"))
      options.kind = text == "json" ? Kind::Json : text == "websocket" ? Kind::WebSocket : Kind::Foxglove;
    else if (name == "--clients")
      options.clients = static_cast<int>(value);
    else if (name == "--stalled")
      options.stalled = static_cast<int>(value);
    else if (name == "--rate-hz")
      options.rate_hz = value;
    else if (name == "--seconds")
      options.seconds = value;
    else {
      std::fprintf(stderr,
                   "usage: clients_bench [--kind json|websocket|foxglove] [--clients N] [--stalled K] [--rate-hz R] "
                   "[--seconds S]\n");
      std::exit(2);
    }
  }
  return options;
}

void report(const char* name, const SensorLatency& phase, pid_t bridge) {
  const double p50 = percentile(phase.ms, 0.50);
  const double p99 = percentile(phase.ms, 0.99);
  const double max = phase.ms.empty() ? 0 : phase.ms.back();
  std::printf("%-28s messages %8ld  missed %5ld  latency p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  bridge RSS %s\n",
              name, static_cast<long>(phase.ms.size()), phase.missed, p50, p99, max,
              process_status(bridge, "VmRSS").c_str());
}

/// A client of the kind under test: JSON lines on port 2006, /ws, or the Foxglove live view.
struct Ports {
  std::uint16_t json;
  std::uint16_t http;
  std::uint16_t foxglove;
};

template <typename Client>
Client connect(const Ports& ports, int receive_buffer = 0);

template <>
TcpClient connect<TcpClient>(const Ports& ports, int receive_buffer) {
  return TcpClient(ports.json, receive_buffer);
}

template <>
WebSocketClient connect<WebSocketClient>(const Ports& ports, int receive_buffer) {
  return WebSocketClient(ports.http, "/ws", receive_buffer);
}

/// A viewer as Foxglove opens one: subscribed to the sensor messages and the
/// bridge's own (its dropped notices), with a channel to publish commands on.
template <>
FoxgloveClient connect<FoxgloveClient>(const Ports& ports, int receive_buffer) {
  FoxgloveClient client(ports.foxglove, {}, receive_buffer);
  if (!client.accepted() || !client.open()) throw std::runtime_error("the Foxglove live view did not open");
  client.subscribe(1, "/sensor");
  client.subscribe(2, "/bridge");
  client.advertise(1, "/command");
  return client;
}

void send_command(TcpClient& client, const std::string& json) {
  client.send(json + "\n");
}
void send_command(WebSocketClient& client, const std::string& json) {
  client.send_text(json);
}
void send_command(FoxgloveClient& client, const std::string& json) {
  client.publish(1, json);
}

/// The simulator's timestamps ("[12.345678] rx 44 53 54") of every Stop it received.
std::vector<double> stop_times(ChildProcess& sim) {
  std::vector<double> times;
  for (const std::string& line : sim.lines(ChildProcess::Stream::Stdout)) {
    if (line.size() > 2 && line[0] == '[' && line.find("] rx 44 53 54") != std::string::npos) {
      times.push_back(std::atof(line.c_str() + 1));
    }
  }
  return times;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Sends `count` Stops, one every 30 ms, each 10 ms after a motion command
/// (a stop to a robot that stands adds nothing to its queue, and reaches no
/// Uno), and returns each Stop's latency to the simulated Uno in
/// milliseconds, sorted. `during` runs meanwhile (the readers' phase, or nothing).
template <typename Client, typename During>
std::vector<double> probe_stops(const Ports& ports, ChildProcess& sim, int count, During during) {
  Client commander = connect<Client>(ports);
  const std::size_t before = stop_times(sim).size();
  std::vector<double> sent;
  std::thread sender([&] {
    for (int i = 0; i < count; ++i) {
      send_command(commander, R"({"cmd":"move","speed":20})");
      std::this_thread::sleep_for(10ms);  // pacing of the load, not synchronisation
      sent.push_back(steady_seconds());
      send_command(commander, R"({"cmd":"stop"})");
      std::this_thread::sleep_for(20ms);
    }
  });
  during();
  sender.join();
  std::vector<double> received;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((received = stop_times(sim)).size() < before + sent.size() && std::chrono::steady_clock::now() < deadline) {
    sim.wait_for(ChildProcess::Stream::Stdout, "rx 44 53 54", 1s);
  }
  std::vector<double> ms;
  for (std::size_t i = 0; i < sent.size() && before + i < received.size(); ++i) {
    ms.push_back((received[before + i] - sent[i]) * 1000.0);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

void report_stops(const char* name, const std::vector<double>& ms, int sent) {
  std::printf("%-28s %3zu of %d reached the Uno  latency p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms\n", name, ms.size(),
              sent, percentile(ms, 0.50), percentile(ms, 0.99), ms.empty() ? 0.0 : ms.back());
}

template <typename Client>
int run(const Options& options, const Ports& ports, ChildProcess& bridge, ChildProcess& sim) {
  const char* kind = options.kind == Kind::WebSocket  ? "WebSocket (/ws)"
                     : options.kind == Kind::Foxglove ? "Foxglove live view"
                                                      : "JSON (port 2006)";
  std::printf("flockbridge clients_bench: %d %s readers, %d stalled, %.0f sensor packets/s, %.1f s per phase\n",
              options.clients, kind, options.stalled, options.rate_hz, options.seconds);
  constexpr int kStops = 50;
  const auto idle = probe_stops<Client>(ports, sim, kStops, [] {});

  std::vector<Client> readers;
  readers.reserve(static_cast<std::size_t>(options.clients));
  for (int i = 0; i < options.clients; ++i) readers.push_back(connect<Client>(ports));
  std::vector<long> last_seq(readers.size(), 0);
  read_sensor_latency(readers, last_seq, 1.0);  // let every client settle
  SensorLatency alone = read_sensor_latency(readers, last_seq, options.seconds);
  report("all clients reading", alone, bridge.pid());

  std::vector<Client> stalled;
  stalled.reserve(static_cast<std::size_t>(options.stalled));
  for (int i = 0; i < options.stalled; ++i) stalled.push_back(connect<Client>(ports, 2048));
  SensorLatency with_stalled = read_sensor_latency(readers, last_seq, options.seconds);
  report("with stalled clients", with_stalled, bridge.pid());
  std::printf("%-28s %s (peak RSS of the bridge)\n", "", process_status(bridge.pid(), "VmHWM").c_str());

  long dropped = 0;
  for (auto& client : stalled) {
    if (auto notice = client.read_json_type("dropped", 2s)) dropped += (*notice)["count"].template get<long>();
  }
  std::printf("%-28s the %d stalled clients were told they lost %ld sensor messages in all\n", "", options.stalled,
              dropped);

  SensorLatency during_stops;
  const auto loaded = probe_stops<Client>(
      ports, sim, kStops, [&] { during_stops = read_sensor_latency(readers, last_seq, kStops * 0.02 + 0.5); });
  std::printf("Stop commands, client send -> simulated Uno (the NAK window of the one before may hold one back):\n");
  report_stops("with no readers", idle, kStops);
  report_stops("while the readers read", loaded, kStops);
  report("  (the readers meanwhile)", during_stops, bridge.pid());
  return 0;
}

}  // namespace

namespace {

int bench(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const auto directory = std::filesystem::temp_directory_path() / ("flockbridge-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const std::string device = (directory / "uno").string();

  ChildProcess sim({FLOCKBOT_SIM_BIN, "--link", device, "--rate-hz", std::to_string(options.rate_hz), "--timestamps"});
  if (!sim.wait_for(ChildProcess::Stream::Stdout, "ready ")) return 1;
  const int limit = options.clients + options.stalled + 8;
  std::vector<std::string> bridge_argv{FLOCKBRIDGE_BIN, "--device", device, "--bind", "127.0.0.1"};
  bridge_argv.insert(bridge_argv.end(),
                     {"--mdns-service-file", "", "--port", "0", "--json-port", "0", "--http-port", "0"});
  bridge_argv.insert(bridge_argv.end(), {"--max-clients", std::to_string(limit), "--stall-timeout-ms", "600000"});
  if (options.kind == Kind::Foxglove) bridge_argv.insert(bridge_argv.end(), {"--foxglove", "--foxglove-port", "0"});
  ChildProcess bridge(bridge_argv);
  const auto listening = bridge.wait_for(ChildProcess::Stream::Stderr, "listening: ");
  const auto ports = listening ? listening_ports(*listening) : std::nullopt;
  if (!ports || !bridge.wait_for(ChildProcess::Stream::Stderr, "robot link up")) {
    std::fprintf(stderr, "clients_bench: the bridge did not start\n");
    return 1;
  }
  const Ports client_ports{ports->json, ports->http, ports->foxglove};
  int status = 0;
  switch (options.kind) {
    case Kind::Json:
      status = run<TcpClient>(options, client_ports, bridge, sim);
      break;
    case Kind::WebSocket:
      status = run<WebSocketClient>(options, client_ports, bridge, sim);
      break;
    case Kind::Foxglove:
      status = run<FoxgloveClient>(options, client_ports, bridge, sim);
      break;
  }
  bridge.terminate();
  sim.terminate();
  std::filesystem::remove_all(directory);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "clients_bench: %s\n", error.what());
    return 1;
  }
}
