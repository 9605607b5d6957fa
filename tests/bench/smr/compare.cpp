// compare_bench --robot smr: flockbridge doing SMRD's job on an SMR's bus
// beside ser2net relaying the same bus's bytes.
//
// This process plays the bus on one pseudo-terminal per server, as the
// SMR's modules behave: each period's first poll (`01 21`) is answered at
// once with every module's reply, the left encoder carrying a sequence
// number's low 16 bits and the right encoder its high ones; speed commands
// are timestamped as they arrive. The bridge polls the bus itself every
// 10 ms; ser2net has no master of its own, so one of its clients writes the
// polls every 10 ms, as a program driving the bus through it would have to.
//
// The bridge's clients are SMR programs on port 24901, reading as the SMR
// library does (READY when a period begins, so that one is always banked),
// and JSON clients; ser2net's are raw TCP clients that find the replies in
// the bus's bytes. Latency runs from this process writing the replies into
// the pseudo-terminal to the kernel's receive timestamp on the client's
// socket, as for the other families.
//
// It also measures the period as a program sees it (the interval between
// the STARTs it receives, the kernel's timestamps), and what ser2net cannot
// do: how soon the motors are stopped after the program driving them is
// killed.

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/compare.hpp"
#include "bench/machine_timer.hpp"
#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/messages.hpp"
#include "support/measure.hpp"
#include "support/tcp_client.hpp"

namespace flockbridge::testing::bench {

namespace {

namespace smr = protocol::smr;
using namespace std::chrono_literals;

constexpr double kPeriodMs = 10;

/// The bus's modules, played fast.
class FastSmrBus final : public SensorSource {
 public:
  [[nodiscard]] const std::string& device() const noexcept { return pty_.device(); }
  /// The bus is polled: nothing goes out unasked.
  void send_sensor(std::uint32_t /*seq*/) override {}

  /// Waits for a speed command for the left motor arriving after `after`
  /// whose speed is zero (`zero`) or not; when it came.
  std::optional<Clock::time_point> wait_speed(bool zero, Clock::time_point after, std::chrono::milliseconds timeout) {
    const auto command = commands_.wait_for(
        0,
        [&](const CommandLog::Entry& entry) {
          return entry.at > after && entry.bytes[0] == smr::module::kLeftSpeed && (entry.bytes[1] == 0) == zero;
        },
        timeout);
    if (!command) return std::nullopt;
    return command->at;
  }

 private:
  void on_read(protocol::ByteView bytes, Clock::time_point now) {
    decoder_.feed(bytes);
    while (auto message = decoder_.next()) {
      if (message->type != static_cast<std::uint8_t>(smr::MessageType::Bus) || message->body.empty()) continue;
      if (smr::read_speed(message->body)) commands_.add(message->body, now);
      if (message->body.size() != 1 || message->body[0] != smr::module::kLeftMotor) continue;
      const std::uint32_t seq = next_seq++;
      protocol::Bytes replies = smr::encode_motor(smr::reply::kLeftEncoder, seq & 0xFFFF, 0, 0);
      const auto add = [&](const protocol::Bytes& more) { replies.insert(replies.end(), more.begin(), more.end()); };
      add(smr::encode_motor(smr::reply::kRightEncoder, static_cast<std::uint16_t>(seq >> 16), 0, 0));
      add(protocol::Bytes{0x09, smr::reply::kLineSensor, 230, 230, 230, 20, 20, 230, 230, 230});
      add(protocol::Bytes{0x07, smr::reply::kInfrared, 0, 10, 20, 30, 40, 50});
      add(smr::encode_power(smr::power_status::kPowerOn, {973, 0, 0, 0, 0}));
      mark_sent(seq);
      pty_.write_all(replies);
    }
  }

  smr::MessageDecoder decoder_;
  CommandLog commands_;  ///< each speed command's body
  PtyEnd pty_{[this](protocol::ByteView bytes, Clock::time_point now) {
    on_read(bytes, now);
  }};  ///< last: its thread stops first
};

/// The sequence numbers in an SMR byte stream: the left encoder's low half
/// and the right one's high half. For an SMR program (`ready_fd` >= 0) it
/// also says READY at every START, as the SMR library's read does.
SeqParser bus_replies(int ready_fd) {
  return
      [decoder = smr::MessageDecoder(), low = 0L, ready_fd](std::string_view bytes, std::vector<long>& seqs) mutable {
        decoder.feed(protocol::ByteView(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
        while (auto message = decoder.next()) {
          const protocol::ByteView body = message->body;
          if (message->type == static_cast<std::uint8_t>(smr::MessageType::Control) && ready_fd >= 0 &&
              smr::read_period_start(body)) {
            const protocol::Bytes ready = smr::encode_ready();
            (void)::send(ready_fd, ready.data(), ready.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
            continue;
          }
          if (message->type != static_cast<std::uint8_t>(smr::MessageType::Bus) || body.size() < 3) continue;
          const long value = body[1] << 8 | body[2];
          if (body[0] == smr::reply::kLeftEncoder) low = value;
          if (body[0] == smr::reply::kRightEncoder) seqs.push_back(low | value << 16);
        }
      };
}

/// The sequence number in a JSON sensor line: the wheels' encoders as
/// struct smr shows them (the right one mirrored back).
long smr_json_seq(std::string_view line) {
  const auto number_after = [&](std::string_view key) -> long {
    const auto at = line.find(key);
    if (at == std::string_view::npos) return -1;
    return std::strtol(line.data() + at + key.size(), nullptr, 10);
  };
  const long left = number_after("\"left\":{\"encoder\":");
  const long right = number_after("\"right\":{\"encoder\":");
  if (left < 0 || right < 0) return -1;
  return left | ((65536 - right) & 0xFFFF) << 16;
}

}  // namespace

FloorRecipe smr_floor() {
  protocol::Bytes poll = smr::encode_polls();
  poll.resize(smr::kPeriodBytes, 0);
  return FloorRecipe{bus_replies(-1),
                     [](long seq) {
                       // The right wheel mirrored, as struct smr shows it (smr_json_seq).
                       return "\"left\":{\"encoder\":" + std::to_string(seq & 0xFFFF) +
                              "},\"right\":{\"encoder\":" + std::to_string((65536 - (seq >> 16)) & 0xFFFF) + "}";
                     },
                     poll};
}

namespace {

/// An SMR program's connection: READY at once, then at every START.
Reader smr_program(std::uint16_t port) {
  TcpClient connection(port, 0, kWifiMss);
  const int fd = connection.fd();
  Reader reader = timestamped_reader(std::move(connection), bus_replies(fd));
  reader.connection.send(std::vector<std::uint8_t>{0xE1, 0x02});
  return reader;
}

struct SmrServer {
  std::string name;
  std::uint16_t port = 0;       ///< port 24901, or ser2net's raw port
  std::uint16_t json_port = 0;  ///< 0 for ser2net
  std::unique_ptr<FastSmrBus> bus;
  std::unique_ptr<ChildProcess> process;

  /// `count` SMR programs, or as many raw ser2net clients.
  std::vector<Reader> programs(int count) const {
    if (json_port == 0) {
      return connect_readers(
          count, 4, [&] { return open_reader(port, bus_replies(-1)); }, name);
    }
    std::vector<Reader> readers;
    readers.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) readers.push_back(smr_program(port));
    return readers;
  }
  std::vector<Reader> json_clients(int count) const {
    return connect_readers(
        count, 64, [&] { return open_reader(json_port, json_lines(smr_json_seq)); }, name);
  }
  Workload measure(std::vector<Reader>& readers, double seconds) {
    return stream(*bus, process->pid(), readers, 0, seconds);
  }
};

/// ser2net's bus has no master: this writes SMRD's polls every period.
class Poller {
 public:
  explicit Poller(std::uint16_t port)
      : connection_(port), thread_([this] {
          protocol::Bytes period = smr::encode_polls();
          period.resize(smr::kPeriodBytes, 0);
          const std::vector<std::uint8_t> bytes(period.begin(), period.end());
          auto due = Clock::now();
          while (!stopping_) {
            connection_.send(bytes);
            due += std::chrono::microseconds(static_cast<long>(kPeriodMs * 1000));
            std::this_thread::sleep_until(due);  // the bus's pace, not synchronisation
          }
        }) {}
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;
  ~Poller() {
    stopping_ = true;
    thread_.join();
  }

 private:
  TcpClient connection_;
  std::atomic<bool> stopping_ = false;
  std::thread thread_;
};

/// The intervals between the STARTs one SMR program receives, in ms, for
/// `seconds`. The first START is not a period's beginning: it answers the
/// program's first READY with the period so far, wherever in the period
/// that READY came (SMRD does the same), so the intervals begin at the
/// second. (Counted from the first, a sample's largest deviation was that
/// answer's place in its period, up to 10 ms, whatever the load.)
std::vector<double> period_intervals(std::uint16_t port, double seconds) {
  Reader program = smr_program(port);
  std::vector<double> intervals;
  bool answered_first_ready = false;
  std::optional<WallClock::time_point> previous;
  smr::MessageDecoder decoder;
  std::vector<char> buffer(65536);
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    pollfd wait{program.connection.fd(), POLLIN, 0};
    if (::poll(&wait, 1, 50) <= 0) continue;
    const auto received = receive_timestamped(program.connection.fd(), buffer, WallClock::now());
    if (!received) continue;
    const WallClock::time_point arrived = received->at;
    decoder.feed(protocol::ByteView(reinterpret_cast<const std::uint8_t*>(buffer.data()), received->bytes));
    while (auto m = decoder.next()) {
      if (m->type != static_cast<std::uint8_t>(smr::MessageType::Control) || !smr::read_period_start(m->body)) {
        continue;
      }
      const protocol::Bytes ready = smr::encode_ready();
      program.connection.send(std::vector<std::uint8_t>(ready.begin(), ready.end()));
      if (!std::exchange(answered_first_ready, true)) continue;
      if (previous) intervals.push_back(std::chrono::duration<double, std::milli>(arrived - *previous).count());
      previous = arrived;
    }
  }
  std::sort(intervals.begin(), intervals.end());
  return intervals;
}

/// The machine's own floor for waking on time (machine_timer.hpp) for
/// `seconds`, on the servers' core when the placement has one, in ms,
/// sorted. A virtual machine's host may hold its cores for milliseconds: no
/// process on it starts a period sooner than this.
std::vector<double> timer_lateness(double seconds, const Placement& placement) {
  placement.join_server_core();
  return flockbridge::testing::bench::timer_lateness(static_cast<long>(seconds * 1000 / kPeriodMs), kPeriodMs);
}

/// The bridge's stats now, asked by a client of its own (an empty object
/// when it gave none).
nlohmann::json bridge_stats_now(std::uint16_t json_port) {
  TcpClient client(json_port);
  (void)client.read_json();  // hello
  client.send("{\"cmd\":\"stats\"}\n");
  return client.read_json_type("stats").value_or(nlohmann::json::object());
}

/// How the kernel schedules the bridge's loop, from its stats.
std::string bridge_scheduling(std::uint16_t json_port) {
  const nlohmann::json stats = bridge_stats_now(json_port);
  if (!stats.contains("scheduling")) return "not said (a bridge before the real-time class by default)";
  const nlohmann::json& s = stats["scheduling"];
  std::string text = s.value("summary", "");
  if (s.value("asked", false))
    text += s.value("refused", "").empty() ? ", asked for itself" : ", refused: " + s.value("refused", "");
  return text;
}

/// The bridge's link counters now, from its stats (a client of its own).
nlohmann::json link_counters(std::uint16_t json_port) {
  const nlohmann::json stats = bridge_stats_now(json_port);
  if (!stats.contains("link")) throw std::runtime_error("the bridge gave no link stats");
  return stats["link"];
}

/// How late the bridge itself began its periods after their deadlines
/// during a sample, from its link's counters: the machine's timer and the
/// bridge's loop together, before anything reaches a socket.
struct BridgeLateness {
  long periods = 0;
  long over_200us = 0;
  long over_500us = 0;
  long over_2ms = 0;
  long latest_us = 0;  ///< since the bridge started: a maximum cannot be taken apart

  [[nodiscard]] double percent(long count) const {
    return periods > 0 ? 100.0 * static_cast<double>(count) / static_cast<double>(periods) : 0.0;
  }
};

BridgeLateness lateness_between(const nlohmann::json& before, const nlohmann::json& after) {
  const auto grew = [&](const char* key) { return after.value(key, 0L) - before.value(key, 0L); };
  return BridgeLateness{grew("periods"), grew("started_over_200us"), grew("started_over_500us"),
                        grew("started_over_2ms"), after.value("start_late_max_us", 0L)};
}

/// The period as one SMR program saw it for a while, the bridge's own
/// lateness and the machine's floor meanwhile: intervals between STARTs,
/// their deviation from 10 ms, and how late a plain timer woke, all in ms,
/// sorted.
struct PeriodSample {
  std::vector<double> intervals;
  std::vector<double> deviation;
  std::vector<double> floor;
  BridgeLateness bridge;
  /// Intervals of a period and a half or more: a period that never came.
  [[nodiscard]] long skipped() const {
    return static_cast<long>(intervals.end() - std::lower_bound(intervals.begin(), intervals.end(), 1.5 * kPeriodMs));
  }
};

/// Puts the calling thread in the real-time class (SCHED_FIFO) at
/// `priority`, or back in the ordinary class with 0. False when refused.
bool schedule_thread(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  return ::pthread_setschedparam(::pthread_self(), priority > 0 ? SCHED_FIFO : SCHED_OTHER, &param) == 0;
}

/// The bridge asks for SCHED_FIFO 20 (scheduling.priority); an SMR
/// program that asks for the class runs just below it.
constexpr int kProgramPriority = 10;

PeriodSample sample_period(std::uint16_t port, std::uint16_t json_port, double seconds, const Placement& placement,
                           bool real_time) {
  PeriodSample sample;
  const nlohmann::json before = link_counters(json_port);
  std::thread clock([&] {
    if (real_time) schedule_thread(kProgramPriority);
    sample.floor = timer_lateness(seconds, placement);
  });
  if (real_time) schedule_thread(kProgramPriority);
  sample.intervals = period_intervals(port, seconds);
  if (real_time) schedule_thread(0);
  clock.join();
  sample.bridge = lateness_between(before, link_counters(json_port));
  sample.deviation.reserve(sample.intervals.size());
  for (const double interval : sample.intervals) sample.deviation.push_back(std::abs(interval - kPeriodMs));
  std::sort(sample.deviation.begin(), sample.deviation.end());
  return sample;
}

double largest(const std::vector<double>& sorted) {
  return sorted.empty() ? 0.0 : sorted.back();
}

/// The share of a sorted sample above `mark`, in percent.
double over(const std::vector<double>& sorted, double mark) {
  if (sorted.empty()) return 0.0;
  const auto above = sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), mark);
  return 100.0 * static_cast<double>(above) / static_cast<double>(sorted.size());
}

/// A sample's lines: the intervals and their deviation, and the machine's floor.
void print_period(const PeriodSample& s) {
  std::printf(
      "    %-12s p50 %7.3f ms  p99 %7.3f ms  min %7.3f  max %7.3f  (|interval - 10 ms|: p50 %.3f, p99 %.3f, max "
      "%.3f)  %zu periods, %ld skipped\n",
      "flockbridge", percentile(s.intervals, 0.5), percentile(s.intervals, 0.99),
      s.intervals.empty() ? 0.0 : s.intervals.front(), largest(s.intervals), percentile(s.deviation, 0.5),
      percentile(s.deviation, 0.99), largest(s.deviation), s.intervals.size(), s.skipped());
  const BridgeLateness& b = s.bridge;
  std::printf(
      "    %-12s began its periods after their deadlines: over 0.2 ms %.2f%%, over 0.5 ms %.2f%%, over 2 ms %.2f%% of "
      "%ld; the latest since it started %.3f ms\n",
      "the bridge", b.percent(b.over_200us), b.percent(b.over_500us), b.percent(b.over_2ms), b.periods,
      static_cast<double>(b.latest_us) / 1000);
  std::printf(
      "    %-12s a thread on the bridge's core waking every 10 ms was late p50 %.3f ms, p99 %.3f ms, max %.3f ms "
      "(over 0.2 ms %.2f%%, over 0.5 ms %.2f%%, over 2 ms %.2f%%)\n",
      "the machine", percentile(s.floor, 0.5), percentile(s.floor, 0.99), largest(s.floor), over(s.floor, 0.2),
      over(s.floor, 0.5), over(s.floor, 2));
}

/// A sample's line of the summary.
void summarize_period(const char* when, const PeriodSample& s) {
  const double p99 = percentile(s.deviation, 0.99);
  const double floor_p99 = percentile(s.floor, 0.99);
  std::printf(
      "  period at an SMR program, %s: p50 %.3f ms, |deviation from 10 ms| p50 %.3f ms, p99 %.3f ms, max %.3f ms, "
      "%ld skipped\n"
      "    the machine's own timer meanwhile: late p99 %.3f ms, max %.3f ms; the period's deviation beyond it: p99 "
      "%+.3f ms, max %+.3f ms (the bridge began %.2f%% of its periods over 0.5 ms late)\n",
      when, percentile(s.intervals, 0.5), percentile(s.deviation, 0.5), p99, largest(s.deviation), s.skipped(),
      floor_p99, largest(s.floor), p99 - floor_p99, largest(s.deviation) - largest(s.floor),
      s.bridge.percent(s.bridge.over_500us));
}

/// How long after the driving program's socket closes the motors get zero
/// speeds: `count` times, each with a new program that drives and is killed.
std::vector<double> stop_after_kill(SmrServer& bridge, int count) {
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    Clock::time_point killed;
    {
      TcpClient program(bridge.port);
      const auto asked = Clock::now();
      program.send(std::vector<std::uint8_t>{0x02, 0x11, 30, 0x02, 0x12, 0xE2});
      if (!bridge.bus->wait_speed(false, asked, 2s)) {
        throw std::runtime_error("the program's speeds did not reach the bus");
      }
      killed = Clock::now();
    }  // the socket closes, as a killed program's does
    if (const auto stopped = bridge.bus->wait_speed(true, killed, 2s)) {
      ms.push_back(std::chrono::duration<double, std::milli>(*stopped - killed).count());
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace

void compare_smr(const Options& given, const Placement& placement) {
  Options options = given;
  if (options.seconds <= 0) options.seconds = 10;
  const auto directory =
      std::filesystem::temp_directory_path() / ("flockbridge-compare-smr-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);

  SmrServer bridge;
  bridge.name = "flockbridge";
  bridge.bus = std::make_unique<FastSmrBus>();
  std::vector<std::string> bridge_args{"--robot", "smr"};
  for (std::string& arg : class_args(options)) bridge_args.push_back(std::move(arg));
  StartedBridge started = start_flockbridge(placement, bridge.bus->device(), bridge_args);
  bridge.process = std::move(started.process);
  bridge.port = started.ports.native;
  bridge.json_port = started.ports.json;
  await_link_up(*bridge.process);
  std::printf("The bridge's loop: %s.\n", bridge_scheduling(bridge.json_port).c_str());
  if (options.real_time) {
    std::printf(
        "The program timing the period and the machine's timer in SCHED_FIFO %d (a control program that asks for "
        "the class), everything else ordinary.\n",
        kProgramPriority);
  }

  std::optional<SmrServer> ser2net;
  std::unique_ptr<Poller> poller;
  if (options.ser2net) {
    try {
      ser2net.emplace();
      ser2net->name = "ser2net";
      ser2net->bus = std::make_unique<FastSmrBus>();
      ser2net->port = free_port();
      ser2net->process = bench::start_ser2net(placement, directory, ser2net->bus->device(), 115200, ser2net->port);
      poller = std::make_unique<Poller>(ser2net->port);
    } catch (const std::exception& error) {
      ser2net.reset();
      std::printf("ser2net: not compared (%s). scripts/compare.sh installs it.\n", error.what());
    }
  } else {
    std::printf("ser2net: not compared (--no-ser2net)\n");
  }

  std::printf(
      "compare_bench --robot smr: flockbridge (SMR programs on port 24901, JSON clients) and ser2net (raw TCP, one\n"
      "client writing the polls) on pseudo-terminals, the bus answering every 10 ms period, %.1f s per phase.\n"
      "Latency: this process writing the modules' replies to the kernel's receive timestamp on the client's\n"
      "socket; \"read\": to this process's one reader thread reading it. Placement: %s.\n\n",
      options.seconds, placement.describe().c_str());

  std::printf("The period as an SMR program receives it (interval between STARTs; SMRD's is 10 ms):\n");
  const PeriodSample quiet =
      sample_period(bridge.port, bridge.json_port, options.seconds, placement, options.real_time);
  print_period(quiet);

  std::printf("\nReply latency, SMR programs on port 24901 and as many raw ser2net clients:\n");
  Workload at10[2];
  for (const int clients : {1, 10}) {
    std::printf("  %d client%s\n", clients, clients == 1 ? "" : "s");
    auto programs = bridge.programs(clients);
    const Workload ours = bridge.measure(programs, options.seconds);
    print_delivery("flockbridge", ours);
    programs.clear();
    if (clients == 10) at10[0] = ours;
    if (!ser2net) continue;
    auto raw = ser2net->programs(clients);
    const Workload theirs = ser2net->measure(raw, options.seconds);
    print_delivery("ser2net", theirs);
    if (clients == 10) at10[1] = theirs;
    print_ratio("p50", percentile(ours.delivery.ms, 0.5), percentile(theirs.delivery.ms, 0.5), "bridge / ser2net");
    print_ratio("p99", percentile(ours.delivery.ms, 0.99), percentile(theirs.delivery.ms, 0.99), "bridge / ser2net");
  }

  std::printf("\n1000 JSON clients of the bridge (every period, 100 a second each):\n");
  const auto connecting = Clock::now();
  auto json = bridge.json_clients(1000);
  std::printf("    %-12s 1000 connections served in %.2f s\n", "flockbridge", seconds_since(connecting, Clock::now()));
  const Workload json_load = bridge.measure(json, options.seconds);
  print_delivery("flockbridge", json_load);
  const std::string peak = process_status(bridge.process->pid(), "VmHWM");
  std::printf("    %-12s peak RSS %s\n", "flockbridge", peak.c_str());
  json.clear();
  FastSmrBus floor_bus;
  const std::size_t message_bytes = sensor_line_bytes(bridge.json_port);
  // The floor runs for the comparison only: it polls its bus every period while it runs.
  const FloorComparison floor = [&] {
    FloorServer floor_server(placement, "smr", floor_bus, floor_bus.device(), message_bytes, smr_json_seq, 0);
    return alternate_with_floor(
        [&] {
          auto clients = bridge.json_clients(1000);
          Workload load = bridge.measure(clients, options.seconds);
          print_delivery("flockbridge", load);
          return load;
        },
        [&] { return floor_server.measure(options.seconds); }, floor_pairs(options.seconds));
  }();
  print_floor_ratio(floor, message_bytes);

  // A class's load: the period as one of ten SMR programs (SMRD's limit)
  // receives it while 1000 JSON clients read every period and ten JSON
  // clients read nothing at all (their connections' buffers small, as on
  // Wi-Fi). All are read at once by one thread of this process while this
  // one times the STARTs.
  std::printf(
      "\nThe period under a class's load: 10 SMR programs, 1000 JSON clients reading every period, 10 JSON "
      "clients that never read:\n");
  PeriodSample loaded_period;
  {
    auto readers = bridge.json_clients(1000);
    for (auto& program : bridge.programs(9)) readers.push_back(std::move(program));
    constexpr int kSleepers = 10;
    std::vector<TcpClient> sleepers;
    sleepers.reserve(kSleepers);
    for (int i = 0; i < kSleepers; ++i) sleepers.emplace_back(bridge.json_port, 4096, kWifiMss);
    Workload loaded;
    std::thread load([&] { loaded = bridge.measure(readers, options.seconds + 1); });
    loaded_period = sample_period(bridge.port, bridge.json_port, options.seconds, placement, options.real_time);
    load.join();
    print_period(loaded_period);
    print_delivery("  readers", loaded);
  }

  constexpr int kKills = 10;
  std::printf(
      "\nThe program driving the robot killed mid-drive, %d times: its socket closed to zero speeds on the bus:\n",
      kKills);
  const std::vector<double> stops = stop_after_kill(bridge, kKills);
  std::printf("    %-12s p50 %7.1f ms  max %7.1f ms  (%zu of %d stopped)\n", "flockbridge", percentile(stops, 0.5),
              stops.empty() ? 0.0 : stops.back(), stops.size(), kKills);
  std::printf("    %-12s never: the motors keep the last speed written\n", "ser2net");

  std::printf("\nSummary:\n");
  summarize_period("quiet", quiet);
  summarize_period("under a class's load", loaded_period);
  std::printf("  reply latency with 10 SMR programs: p50 %.3f ms, p99 %.3f ms, %.1f%% of a core",
              percentile(at10[0].delivery.ms, 0.5), percentile(at10[0].delivery.ms, 0.99),
              100 * at10[0].cpu_s / at10[0].wall_s);
  if (ser2net) {
    std::printf(" (ser2net, 10 raw clients: p50 %.3f ms, p99 %.3f ms)", percentile(at10[1].delivery.ms, 0.5),
                percentile(at10[1].delivery.ms, 0.99));
  }
  std::printf("\n  1000 JSON clients at 100 periods/s: p50 %.3f ms, p99 %.3f ms, %.1f%% of a core%s, peak RSS %s\n",
              percentile(json_load.delivery.ms, 0.5), percentile(json_load.delivery.ms, 0.99),
              100 * json_load.cpu_s / json_load.wall_s,
              placement.isolated() ? " (the bridge's own work)" : " (with the clients' receive work)", peak.c_str());
  summarize_floor(floor, message_bytes);
  std::printf("  the motors stopped %.1f ms (p50) after their driver was killed; through ser2net, never\n",
              percentile(stops, 0.5));

  poller.reset();
  bridge.process->terminate();
  if (ser2net) ser2net->process->terminate();
  std::filesystem::remove_all(directory);
}

}  // namespace flockbridge::testing::bench
