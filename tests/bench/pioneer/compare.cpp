// compare_bench --robot pioneer: flockbridge serving a Pioneer beside
// ser2net relaying the same robot's bytes.
//
// This process plays the robot on one pseudo-terminal per server, as an
// AROS robot behaves: it answers SYNC0, SYNC1 and SYNC2 (naming itself a
// p3dx-sh), starts its SIPs on OPEN and ends them on CLOSE, answers CONFIG,
// and timestamps every command that arrives. Each SIP carries a sequence
// number in its XPOS and YPOS fields. The robot behind ser2net is open from
// the start (ser2net has no handshake of its own: whoever connects would
// have to do it, and every client gets every byte).
//
// The bridge's clients are ARIA programs on port 8101, each connected with
// ARIA's own sequence (tests/support/pioneer/aria_client), and JSON clients; ser2net's
// are raw TCP clients that find the SIPs in the robot's bytes. Latency runs
// from this process writing the SIP into the pseudo-terminal to the kernel's
// receive timestamp on the client's socket, as for the Flockbot.
//
// It also measures what ser2net cannot do: how soon the robot is stopped
// after the program driving it is killed.

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/compare.hpp"
#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"
#include "support/listening.hpp"
#include "support/measure.hpp"
#include "support/pioneer/aria_client.hpp"

namespace flockbridge::testing::bench {

namespace {

namespace codec = protocol::pioneer;
namespace command = codec::command;
using namespace std::chrono_literals;

/// The robot, played fast.
class FastPioneer final : public SensorSource {
 public:
  /// `open`: sending SIPs from the start, as a robot some earlier client opened.
  explicit FastPioneer(bool open) : open_(open) {}

  [[nodiscard]] const std::string& device() const noexcept { return pty_.device(); }

  /// A SIP as a p3dx-sh sends it with its sonar on: eight discs' readings.
  void send_sensor(std::uint32_t seq) override {
    if (!open_) return;
    codec::StandardSip sip;
    sip.x = static_cast<std::uint16_t>(seq & 0xFFFF);
    sip.y = static_cast<std::uint16_t>(seq >> 16);
    sip.battery_tenths = 128;
    sip.flags = 0x0001;
    for (std::uint8_t disc = 0; disc < 8; ++disc) {
      sip.sonar.push_back(codec::SonarReading{disc, static_cast<std::uint16_t>(1000 + 100 * disc)});
    }
    const protocol::Bytes packet = codec::encode_standard_sip(sip);
    mark_sent(seq);
    pty_.write_all(packet);
  }

  /// Waits for a command numbered `number` arriving after `after`; when it came.
  std::optional<Clock::time_point> wait_command(protocol::Byte number, Clock::time_point after,
                                                std::chrono::milliseconds timeout) {
    const auto command = commands_.wait_for(
        0, [&](const CommandLog::Entry& entry) { return entry.bytes.front() == number && entry.at > after; }, timeout);
    if (!command) return std::nullopt;
    return command->at;
  }

 private:
  void on_read(protocol::ByteView bytes, Clock::time_point now) {
    decoder_.feed(bytes);
    while (auto event = decoder_.next()) {
      if (event->kind != codec::PacketDecoder::EventKind::Packet) continue;
      const protocol::Byte type = event->type;
      if (!open_) {
        // Not connected: SYNC0, SYNC1, SYNC2 in turn (SYNC0 starts again), then OPEN.
        if (type == command::kSync0) synced_ = 0;
        if (synced_ == 3 && type == command::kOpen) {
          open_ = true;
        } else if (synced_ < 3 && type == synced_) {
          pty_.write_all(type == command::kSync2 ? codec::encode_identity({"bench", "Pioneer", "p3dx-sh"})
                                                 : codec::encode_packet(type));
          ++synced_;
        }
        continue;
      }
      if (type == command::kClose) {
        open_ = false;
        synced_ = 0;
      } else if (type == command::kConfig) {
        codec::ConfigPacket config;
        config.type = "Pioneer";
        config.subtype = "p3dx-sh";
        config.serial_number = "BENCH";
        config.name = "bench";
        config.sip_cycle_ms = 100;
        config.watchdog_ms = 2000;
        config.firmware_version = "bench";
        pty_.write_all(codec::encode_config(config));
      }
      commands_.add(protocol::ByteView(&type, 1), now);
    }
  }

  std::atomic<bool> open_;
  int synced_ = 0;  ///< SYNC packets answered in turn
  codec::PacketDecoder decoder_;
  CommandLog commands_;  ///< each command's number
  PtyEnd pty_{[this](protocol::ByteView bytes, Clock::time_point now) {
    on_read(bytes, now);
  }};  ///< last: its thread stops first
};

/// The sequence numbers of the SIPs in an AROS byte stream (port 8101, or
/// the robot's bytes through ser2net).
SeqParser sips() {
  return decoded<codec::PacketDecoder>([](const codec::PacketDecoder::Event& packet) {
    return packet.kind == codec::PacketDecoder::EventKind::Packet && codec::is_standard_sip(packet.type)
               ? packet_seq(packet.payload, 0)
               : -1;
  });
}

}  // namespace

FloorRecipe pioneer_floor() {
  return FloorRecipe{sips(),
                     [](long seq) {
                       return "\"raw\":{\"x\":" + std::to_string(seq & 0xFFFF) + ",\"y\":" + std::to_string(seq >> 16) +
                              "}";
                     },
                     {}};
}

namespace {

/// The sequence number in a JSON sensor line: the SIP's raw x and y.
long sip_json_seq(std::string_view line) {
  return bench::json_seq(line, "\"raw\":{", "\"x\":", "\"y\":");
}

/// A server under test with its robot, which sends SIPs all the time (a
/// robot left without SIPs for a second is taken for lost by the bridge).
struct PioneerServer {
  std::string name;
  std::uint16_t port = 0;       ///< port 8101, or ser2net's raw port
  std::uint16_t json_port = 0;  ///< 0 for ser2net
  std::unique_ptr<FastPioneer> robot;
  std::unique_ptr<ChildProcess> process;
  double rate_hz = 10;
  std::optional<SensorStream> idle;  ///< the SIPs between measured phases

  void keep_streaming() { idle.emplace(*robot, rate_hz); }

  /// `count` ARIA programs, each through the whole connect sequence.
  std::vector<Reader> aria_programs(int count) const {
    std::vector<Reader> readers;
    for (int i = 0; i < count; ++i) {
      AriaClient program(port, kWifiMss);
      if (!program.connect()) throw std::runtime_error(name + ": an ARIA program could not connect");
      readers.push_back(timestamped_reader(std::move(program.socket()), sips()));
    }
    return readers;
  }
  /// `count` raw clients of ser2net, or JSON clients of the bridge.
  std::vector<Reader> plain_clients(int count) const {
    const bool raw = json_port == 0;
    return connect_readers(
        count, raw ? 4 : 64,
        [&] { return open_reader(raw ? port : json_port, raw ? sips() : json_lines(sip_json_seq)); }, name);
  }

  /// 1000 plain clients connected, measured for `seconds`, and the peak
  /// RSS after (into `peak`); prints each figure as it comes.
  Workload thousand_clients(double seconds, std::string& peak) {
    const auto connecting = Clock::now();
    auto clients = plain_clients(1000);
    std::printf("    %-12s 1000 connections served in %.2f s\n", name.c_str(), seconds_since(connecting, Clock::now()));
    Workload load = measure(clients, seconds);
    print_delivery(name.c_str(), load);
    peak = process_status(process->pid(), "VmHWM");
    std::printf("    %-12s peak RSS %s\n", name.c_str(), peak.c_str());
    return load;
  }

  Workload measure(std::vector<Reader>& readers, double seconds) {
    idle.reset();
    Workload load = stream(*robot, process->pid(), readers, rate_hz, seconds);
    keep_streaming();
    return load;
  }
};

std::unique_ptr<PioneerServer> start_pioneer_bridge(const Placement& placement, const Options& options) {
  const double rate_hz = options.rate_hz;
  auto server = std::make_unique<PioneerServer>();
  server->name = "flockbridge";
  server->rate_hz = rate_hz;
  server->robot = std::make_unique<FastPioneer>(false);
  server->keep_streaming();
  std::vector<std::string> args{"--robot", "pioneer"};
  for (std::string& arg : class_args(options)) args.push_back(std::move(arg));
  StartedBridge started = start_flockbridge(placement, server->robot->device(), args);
  server->process = std::move(started.process);
  server->port = started.ports.native;
  server->json_port = started.ports.json;
  await_link_up(*server->process);
  return server;
}

std::unique_ptr<PioneerServer> start_ser2net(const Placement& placement, const std::filesystem::path& directory,
                                             double rate_hz) {
  auto server = std::make_unique<PioneerServer>();
  server->name = "ser2net";
  server->rate_hz = rate_hz;
  server->robot = std::make_unique<FastPioneer>(true);
  server->keep_streaming();
  server->port = free_port();
  server->process = bench::start_ser2net(placement, directory, server->robot->device(), 9600, server->port);
  return server;
}

/// How long after the controlling program's socket closes the robot gets
/// STOP: `count` times, each with a new program that drives and is killed.
std::vector<double> stop_after_kill(PioneerServer& bridge, int count) {
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    AriaClient program(bridge.port);
    if (!program.connect()) throw std::runtime_error("an ARIA program could not connect");
    const auto asked = Clock::now();
    program.set_velocity(300, 0);
    const auto driving = bridge.robot->wait_command(command::kVel, asked, 2s);
    if (!driving) throw std::runtime_error("the driving program's VEL did not reach the robot");
    program.run_for(200ms);
    const auto killed = Clock::now();
    program.kill();
    if (const auto stopped = bridge.robot->wait_command(command::kStop, killed, 2s)) {
      ms.push_back(std::chrono::duration<double, std::milli>(*stopped - killed).count());
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace

void compare_pioneer(const Options& given, const Placement& placement) {
  Options options = given;
  if (options.seconds <= 0) options.seconds = 10;
  if (options.rate_hz <= 0) options.rate_hz = 10;  // a Pioneer's SIP cycle: 100 ms
  const auto directory =
      std::filesystem::temp_directory_path() / ("flockbridge-compare-pioneer-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  auto bridge = start_pioneer_bridge(placement, options);
  std::unique_ptr<PioneerServer> ser2net;
  if (options.ser2net) {
    try {
      ser2net = start_ser2net(placement, directory, options.rate_hz);
    } catch (const std::exception& error) {
      std::printf("ser2net: not compared (%s). scripts/compare.sh installs it.\n", error.what());
    }
  } else {
    std::printf("ser2net: not compared (--no-ser2net)\n");
  }

  std::printf(
      "compare_bench --robot pioneer: flockbridge (ARIA programs on port 8101, JSON clients) and ser2net (raw TCP)\n"
      "on pseudo-terminals, a p3dx-sh sending %.0f SIPs/s with 8 sonar readings each, %.1f s per phase.\n"
      "SIP latency: this process writing the SIP to the kernel's receive timestamp on the client's socket;\n"
      "\"read\": to this process's one reader thread reading it. Placement: %s.\n\n",
      options.rate_hz, options.seconds, placement.describe().c_str());

  std::printf(
      "SIP latency, ARIA programs on port 8101 (each connected with SYNC0-2, OPEN, CONFIG, ENABLE) and as "
      "many raw ser2net clients:\n");
  std::vector<Workload> at100(2);
  // A check run (phases under a second, as the docs' test runs the page's
  // commands) measures the 100 programs only.
  const std::vector<int> client_counts = options.seconds < 1 ? std::vector<int>{100} : std::vector<int>{1, 10, 100};
  for (const int clients : client_counts) {
    std::printf("  %d client%s\n", clients, clients == 1 ? "" : "s");
    const auto connecting = Clock::now();
    auto programs = bridge->aria_programs(clients);
    if (clients >= 10) {
      std::printf("    %-12s %d ARIA programs connected in %.2f s\n", "flockbridge", clients,
                  seconds_since(connecting, Clock::now()));
    }
    const Workload ours = bridge->measure(programs, options.seconds);
    print_delivery("flockbridge", ours);
    programs.clear();
    if (clients == 100) at100[0] = ours;
    if (!ser2net) continue;
    auto raw = ser2net->plain_clients(clients);
    const Workload theirs = ser2net->measure(raw, options.seconds);
    print_delivery("ser2net", theirs);
    if (clients == 100) at100[1] = theirs;
    print_ratio("p50", percentile(ours.delivery.ms, 0.5), percentile(theirs.delivery.ms, 0.5), "bridge / ser2net");
    print_ratio("p99", percentile(ours.delivery.ms, 0.99), percentile(theirs.delivery.ms, 0.99), "bridge / ser2net");
  }

  std::printf("\n1000 JSON clients of the bridge, and 1000 raw ser2net clients:\n");
  std::vector<std::string> peak(2);
  const Workload json = bridge->thousand_clients(options.seconds, peak[0]);
  FastPioneer floor_robot(true);
  const std::size_t message_bytes = sensor_line_bytes(bridge->json_port);
  // The floor runs for the comparison only.
  const FloorComparison floor = [&] {
    FloorServer floor_server(placement, "pioneer", floor_robot, floor_robot.device(), message_bytes, sip_json_seq,
                             options.rate_hz);
    return alternate_with_floor(
        [&] {
          auto clients = bridge->plain_clients(1000);
          Workload load = bridge->measure(clients, options.seconds);
          print_delivery(bridge->name.c_str(), load);
          return load;
        },
        [&] { return floor_server.measure(options.seconds); }, floor_pairs(options.seconds));
  }();
  print_floor_ratio(floor, message_bytes);
  Workload raw1000;
  if (ser2net) {
    raw1000 = ser2net->thousand_clients(options.seconds, peak[1]);
    print_ratio("p50", percentile(json.delivery.ms, 0.5), percentile(raw1000.delivery.ms, 0.5), "bridge / ser2net");
    print_ratio("p99", percentile(json.delivery.ms, 0.99), percentile(raw1000.delivery.ms, 0.99), "bridge / ser2net");
  }

  constexpr int kKills = 10;
  std::printf(
      "\nThe program driving the robot killed mid-drive, %d times: its socket closed to STOP on the serial "
      "side:\n",
      kKills);
  const std::vector<double> stops = stop_after_kill(*bridge, kKills);
  std::printf("    %-12s p50 %7.1f ms  max %7.1f ms  (%zu of %d stopped)\n", "flockbridge", percentile(stops, 0.5),
              stops.empty() ? 0.0 : stops.back(), stops.size(), kKills);
  std::printf("    %-12s never: the robot drives on until its own watchdog (2 s without a packet from anyone)\n",
              "ser2net");

  std::printf("\nSummary:\n");
  std::printf("  SIP latency with 100 ARIA programs: p50 %.3f ms, p99 %.3f ms", percentile(at100[0].delivery.ms, 0.5),
              percentile(at100[0].delivery.ms, 0.99));
  if (ser2net) {
    std::printf(" (ser2net, 100 raw clients: p50 %.3f ms, p99 %.3f ms)", percentile(at100[1].delivery.ms, 0.5),
                percentile(at100[1].delivery.ms, 0.99));
  }
  std::printf("\n  1000 JSON clients: p50 %.3f ms, p99 %.3f ms, %.1f%% of a core%s, peak RSS %s",
              percentile(json.delivery.ms, 0.5), percentile(json.delivery.ms, 0.99), 100 * json.cpu_s / json.wall_s,
              placement.isolated() ? " (the bridge's own work)" : " (with the clients' receive work)", peak[0].c_str());
  if (ser2net) {
    std::printf(" (ser2net, raw: p50 %.3f ms, p99 %.3f ms, %.1f%% of a core, peak RSS %s)",
                percentile(raw1000.delivery.ms, 0.5), percentile(raw1000.delivery.ms, 0.99),
                100 * raw1000.cpu_s / raw1000.wall_s, peak[1].c_str());
  }
  std::printf("\n");
  summarize_floor(floor, message_bytes);
  std::printf("  the robot stopped %.1f ms (p50) after its driver was killed; through ser2net, never\n",
              percentile(stops, 0.5));

  bridge->idle.reset();
  bridge->process->terminate();
  if (ser2net) {
    ser2net->idle.reset();
    ser2net->process->terminate();
  }
  std::filesystem::remove_all(directory);
}

}  // namespace flockbridge::testing::bench
