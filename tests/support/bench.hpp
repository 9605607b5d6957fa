// What the side-by-side benchmarks (compare_bench, for every family) share:
// the robot's end of a pseudo-terminal played by the benchmark, a steady
// sensor stream whose packets carry sequence numbers, many reading clients
// read by one epoll loop with the kernel's receive timestamps, the servers'
// CPU time, ser2net started on a device, and where everything runs.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "support/listening.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"

namespace flockbridge::testing::bench {

using Clock = std::chrono::steady_clock;
/// The kernel's receive timestamps are on the real-time clock, so sensor
/// packets' send times are too.
using WallClock = std::chrono::system_clock;

double seconds_since(Clock::time_point start, Clock::time_point at);

/// CPU seconds a process has used (user + system), summed over its threads:
/// to the nanosecond from their schedstat, else in clock ticks.
double cpu_seconds(pid_t pid);

/// The master side of one pseudo-terminal: the robot's end of its serial
/// line, played by the benchmark. A thread reads what the server writes and
/// hands it to `on_read` with the time it arrived.
class PtyEnd {
 public:
  using OnRead = std::function<void(protocol::ByteView, Clock::time_point)>;
  explicit PtyEnd(OnRead on_read);
  PtyEnd(const PtyEnd&) = delete;
  PtyEnd& operator=(const PtyEnd&) = delete;
  ~PtyEnd();

  [[nodiscard]] const std::string& device() const noexcept { return slave_path_; }
  /// Writes the bytes, unless the server has stopped reading the device
  /// (ser2net does when one of its clients stops reading): after 100 ms
  /// without room the rest is lost, as on a real line.
  void write_all(protocol::ByteView bytes);

 private:
  void read_loop();

  OnRead on_read_;
  int master_ = -1;
  int keep_open_ = -1;
  std::string slave_path_;
  std::mutex write_mutex_;
  std::atomic<bool> stopping_ = false;
  std::thread reader_;  ///< last: started when everything else is ready, joined first
};

/// What plays the robot for a server: sends sensor packet `seq` (carrying
/// the number) and remembers when each went.
class SensorSource {
 public:
  virtual ~SensorSource() = default;
  virtual void send_sensor(std::uint32_t seq) = 0;
  [[nodiscard]] WallClock::time_point sent_at(std::uint32_t seq);
  std::atomic<std::uint32_t> next_seq = 0;

 protected:
  void mark_sent(std::uint32_t seq);

 private:
  std::mutex sent_mutex_;
  std::vector<WallClock::time_point> sent_;
};

/// The commands the robot received, each with when it arrived; waited for
/// as events.
class CommandLog {
 public:
  struct Entry {
    protocol::Bytes bytes;  ///< the family's command, as its decoder gave it
    Clock::time_point at;
  };
  void add(protocol::ByteView bytes, Clock::time_point at);
  [[nodiscard]] std::size_t size();
  /// The first entry from the `from`th on for which `match` holds, waiting
  /// for it up to `timeout`.
  std::optional<Entry> wait_for(std::size_t from, const std::function<bool(const Entry&)>& match,
                                std::chrono::milliseconds timeout);

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<Entry> entries_;
};

/// Sends sensor packets at a steady rate from a thread of its own; at a
/// rate of 0 it sends nothing (a robot that is polled, as an SMR's bus is,
/// paces itself).
class SensorStream {
 public:
  SensorStream(SensorSource& source, double rate_hz);
  SensorStream(const SensorStream&) = delete;
  SensorStream& operator=(const SensorStream&) = delete;
  ~SensorStream() { stop(); }
  void stop();
  [[nodiscard]] long sent() const noexcept { return sent_; }

 private:
  std::atomic<bool> stopping_ = false;
  std::atomic<long> sent_ = 0;
  std::thread thread_;
};

/// Finds the sequence numbers of the sensor packets in what one client
/// received (keeping what it cannot parse yet).
using SeqParser = std::function<void(std::string_view bytes, std::vector<long>& seqs)>;

/// A parser for JSON lines, with `seq` finding the number in one line (-1: none).
SeqParser json_lines(long (*seq)(std::string_view line));

/// A sequence number carried in two 16-bit fields, low and high: in the
/// JSON object that starts with `object` ("\"raw\":{"), the numbers after
/// `low` and `high` ("\"x\":"); -1 when the line has none.
long json_seq(std::string_view line, std::string_view object, std::string_view low, std::string_view high);

/// The same in a packet: little-endian at `at` and `at + 2`.
long packet_seq(protocol::ByteView payload, std::size_t at);

/// A parser for a family's packets: feeds its `Decoder` and asks `seq_of`
/// each event for a sequence number (-1: not a sensor packet).
template <typename Decoder, typename SeqOf>
SeqParser decoded(SeqOf seq_of) {
  return [decoder = Decoder(), seq_of](std::string_view bytes, std::vector<long>& seqs) mutable {
    decoder.feed(protocol::ByteView(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    while (auto event = decoder.next()) {
      if (const long seq = seq_of(*event); seq >= 0) seqs.push_back(seq);
    }
  };
}

/// The segment size a client on Wi-Fi or Ethernet announces. Readers
/// announce it too: on loopback (MSS 65483) the kernel sizes a connection's
/// send buffer to megabytes, and a client that never reads would take many
/// minutes to fill it, which no real client's connection does.
constexpr int kWifiMss = 1448;

/// One reading client: its connection, how it finds sequence numbers, and
/// the one it saw last.
struct Reader {
  TcpClient connection;
  SeqParser parse;
  long last_seq = -1;
};

/// A reader of `connection`, which is made to give receive timestamps.
Reader timestamped_reader(TcpClient connection, SeqParser parse);
/// A reader on 127.0.0.1:port that asks for receive timestamps.
Reader open_reader(std::uint16_t port, SeqParser parse, int receive_buffer = 0);

/// Opens `count` readers with `open`, each counted as connected once its
/// first bytes arrive, no more than `window` waiting at once (ser2net
/// listens with a backlog of 5: a connection beyond it would have its SYN
/// dropped and retried a second later). `who` names the server in errors.
std::vector<Reader> connect_readers(int count, std::size_t window, const std::function<Reader()>& open,
                                    const std::string& who);

struct Delivery {
  std::vector<double> ms;       ///< every message's latency to the client's socket, sorted
  std::vector<double> read_ms;  ///< every message's latency to this process reading it, sorted
  long missed = 0;              ///< gaps in the sequence numbers
  long messages = 0;
};

/// Reads every reader for `seconds` with one epoll loop and adds the
/// latencies of sequence numbers from `first_seq` on to `delivery` (earlier
/// ones are the tail of a previous phase).
void read_for(std::vector<Reader>& readers, SensorSource& source, double seconds, long first_seq, Delivery& delivery);

struct Workload {
  Delivery delivery;
  double cpu_s = 0;
  double wall_s = 0;
  long expected = 0;  ///< sensor packets sent during the phase, times readers
};

/// Streams sensor packets at `rate_hz` to `readers` for `seconds` (after a
/// settling half second) and measures, charging CPU time to `server`. At a
/// rate of 0 the source sends its packets by itself.
Workload stream(SensorSource& source, pid_t server, std::vector<Reader>& readers, double rate_hz, double seconds);

/// One line of figures for a workload.
void print_delivery(const char* server, const Workload& load);

/// The ratio of two samples' medians, and the 95% interval of that ratio
/// over 2000 resamplings of both: how far the machine's noise alone moves it.
struct MedianRatio {
  double ratio = 0;
  double low = 0;
  double high = 0;
};
MedianRatio median_ratio(const std::vector<double>& a, const std::vector<double>& b);

void print_ratio(const char* what, double bridge, double ser2net, const char* target);

/// Where the servers and this process run, and which core does the
/// loopback's receive work for the clients.
class Placement {
 public:
  /// As root with two cores or more: moves this process into a network
  /// namespace (and mount namespace, for that namespace's /sys) of its own,
  /// gives the servers the first core and this process the others, and
  /// steers the loopback's receive work to this process's cores. Otherwise
  /// leaves everything as it is and says why. Call before any thread starts:
  /// a namespace change applies to one thread only.
  static Placement arrange(bool wanted);

  [[nodiscard]] bool isolated() const noexcept { return isolated_; }
  [[nodiscard]] std::string describe() const;
  /// What goes before a server's command line to start it on its core.
  [[nodiscard]] std::vector<std::string> server_prefix() const;
  /// Runs the calling thread on the servers' core, when they have one (to
  /// see what a process there sees); in place, leaves it where it is.
  void join_server_core() const;
  /// `server_prefix()` followed by `command`.
  [[nodiscard]] std::vector<std::string> server_command(const std::vector<std::string>& command) const;
  /// Steers the loopback's receive work to the clients' cores (true), or
  /// leaves it on the sender's core, the kernel's default (false).
  bool steer_receive_work(bool to_clients) const;

 private:
  Placement refused(std::string why);

  bool isolated_ = false;
  std::string why_not_;
  int server_cpu_ = 0;
  std::string client_mask_;
};

/// flockbridge started for a benchmark, and where it listens.
struct StartedBridge {
  std::unique_ptr<ChildProcess> process;
  ListeningPorts ports;
};

/// Starts flockbridge on `device` as a benchmark wants it: no configuration
/// file, its ports on 127.0.0.1 chosen by the kernel, no dashboard, 2000
/// clients, no stall cut-off, rate limit or periodic stats, and `extra`
/// (the family's options); returns once it listens. Throws when it does not.
StartedBridge start_flockbridge(const Placement& placement, const std::string& device,
                                const std::vector<std::string>& extra);

/// The daemon a benchmark measures: FLOCKBRIDGE_BENCH_BRIDGE, another
/// build's (an earlier commit's, say) for a before-and-after in one
/// session, else this build's.
[[nodiscard]] std::string bridge_under_test();

/// Waits for the bridge's link to the robot (played meanwhile) to come up;
/// throws, printing the bridge's log, when it does not.
void await_link_up(ChildProcess& bridge);

/// A port nothing listens on now: bound once, noted, let go (for ser2net,
/// which cannot be told to take any free port and say which).
std::uint16_t free_port();

/// ser2net 4.x relaying `device` at `baud` as raw TCP on 127.0.0.1:port, as
/// many connections as the bridge takes, no character delay, Nagle off (its
/// fastest); returns once it accepts connections. Throws when it cannot.
std::unique_ptr<ChildProcess> start_ser2net(const Placement& placement, const std::filesystem::path& directory,
                                            const std::string& device, int baud, std::uint16_t port);

}  // namespace flockbridge::testing::bench
