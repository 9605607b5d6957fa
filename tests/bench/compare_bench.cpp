// compare_bench: flockbridge side by side with ser2net, the raw serial-to-TCP
// proxy people would otherwise use, on the same workloads in one run.
//
// This program plays the Uno itself, fast: it holds the master side of one
// pseudo-terminal per server and writes sensor frames into it at a set rate,
// each carrying a sequence number (in the odometer fields), answers the
// bridge's CFG with ACK, and timestamps every command frame that arrives.
// Its clients are real TCP connections on 127.0.0.1, read by one epoll loop:
// JSON-lines clients of the bridge (port 2006) and raw clients of ser2net,
// which get the Uno's bytes as they are and find the frames themselves. Send
// and receive times are taken on one clock in one process, so a latency is a
// plain difference.
//
// It measures, for each server: command latency (client write to the frame
// complete on the serial side), sensor latency with 1, 10, 100 and 1000
// clients, CPU time per delivered message, peak memory, the highest sensor
// rate delivered to 1000 clients without loss, and what 10 clients that never
// read do to everyone else. It prints figures and the ratio to ser2net, and
// asserts nothing.
//
//   compare_bench [--seconds S] [--rate-hz R] [--no-ser2net]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "flockbridge/protocol/frame.hpp"
#include "flockbridge/protocol/uno_packets.hpp"
#include "support/listening.hpp"
#include "support/measure.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"

using namespace flockbridge;
using namespace flockbridge::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start, Clock::time_point at) {
  return std::chrono::duration<double>(at - start).count();
}

/// The Uno's side of one pseudo-terminal, played fast by this process.
class FastUno {
 public:
  FastUno() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) throw std::runtime_error("no pty");
    ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
    slave_path_ = ::ptsname(master_);
    // Keep a slave open ourselves, so that the master never sees a hang-up
    // while the server (re)opens the device.
    keep_open_ = ::open(slave_path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    reader_ = std::thread([this] { read_loop(); });
  }
  FastUno(const FastUno&) = delete;
  FastUno& operator=(const FastUno&) = delete;
  ~FastUno() {
    stopping_ = true;
    reader_.join();
    ::close(keep_open_);
    ::close(master_);
  }

  [[nodiscard]] const std::string& device() const noexcept { return slave_path_; }
  [[nodiscard]] bool configured() const noexcept { return configured_; }

  /// Writes one sensor frame carrying `seq`; records when it went.
  void send_sensor(std::uint32_t seq) {
    protocol::SensorReading reading;
    reading.battery = 780;
    reading.odometer_left = static_cast<std::int16_t>(seq & 0xFFFF);
    reading.odometer_right = static_cast<std::int16_t>(seq >> 16);
    const protocol::Bytes frame = protocol::encode_frame(protocol::encode_sensor_payload(reading));
    {
      std::lock_guard lock(sent_mutex_);
      if (sent_.size() <= seq) sent_.resize(seq + 1024);
      sent_[seq] = Clock::now();
    }
    write_all(frame);
  }
  [[nodiscard]] Clock::time_point sent_at(std::uint32_t seq) {
    std::lock_guard lock(sent_mutex_);
    return seq < sent_.size() ? sent_[seq] : Clock::time_point{};
  }

  /// Command frames received so far: payload and arrival time.
  std::vector<std::pair<protocol::Bytes, Clock::time_point>> commands() {
    std::lock_guard lock(commands_mutex_);
    return commands_;
  }
  /// Waits until `count` command frames have arrived in all; false after `timeout`.
  bool wait_commands(std::size_t count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(commands_mutex_);
    return command_arrived_.wait_for(lock, timeout, [&] { return commands_.size() >= count; });
  }

 private:
  void write_all(protocol::ByteView bytes) {
    std::lock_guard lock(write_mutex_);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(master_, bytes.data() + done, bytes.size() - done);
      if (n > 0)
        done += static_cast<std::size_t>(n);
      else if (errno != EINTR && errno != EAGAIN)
        return;
    }
  }

  void read_loop() {
    protocol::FrameDecoder decoder;
    std::vector<std::uint8_t> buffer(4096);
    while (!stopping_) {
      pollfd readable{master_, POLLIN, 0};
      if (::poll(&readable, 1, 100) <= 0) continue;
      const ssize_t n = ::read(master_, buffer.data(), buffer.size());
      if (n <= 0) continue;
      const Clock::time_point now = Clock::now();
      decoder.feed(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
      while (auto event = decoder.next()) {
        if (event->kind != protocol::FrameDecoder::EventKind::Frame) continue;
        const protocol::ByteView payload = event->payload;
        if (payload.size() >= 3 && std::memcmp(payload.data(), "CFG", 3) == 0) {
          write_all(protocol::encode_frame(protocol::as_bytes("ACK")));
          configured_ = true;
          continue;
        }
        {
          std::lock_guard lock(commands_mutex_);
          commands_.emplace_back(protocol::Bytes(payload.begin(), payload.end()), now);
        }
        command_arrived_.notify_all();
      }
    }
  }

  int master_ = -1;
  int keep_open_ = -1;
  std::string slave_path_;
  std::atomic<bool> stopping_ = false;
  std::atomic<bool> configured_ = false;
  std::thread reader_;
  std::mutex write_mutex_;
  std::mutex sent_mutex_;
  std::vector<Clock::time_point> sent_;
  std::mutex commands_mutex_;
  std::condition_variable command_arrived_;
  std::vector<std::pair<protocol::Bytes, Clock::time_point>> commands_;
};

/// Sends sensor frames at a steady rate from a thread of its own.
class SensorStream {
 public:
  SensorStream(FastUno& uno, double rate_hz, std::uint32_t& next_seq)
      : thread_([this, &uno, rate_hz, &next_seq] {
          const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_hz));
          auto due = Clock::now();
          while (!stopping_) {
            uno.send_sensor(next_seq++);
            ++sent_;
            due += period;
            std::this_thread::sleep_until(due);  // the load's pace, not synchronisation
          }
        }) {}
  SensorStream(const SensorStream&) = delete;
  SensorStream& operator=(const SensorStream&) = delete;
  ~SensorStream() { stop(); }
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] long sent() const noexcept { return sent_; }

 private:
  std::atomic<bool> stopping_ = false;
  std::atomic<long> sent_ = 0;
  std::thread thread_;
};

enum class Wire { JsonLines, RawFrames };

/// One reading client: its connection, what it has not parsed yet, and the
/// sequence number it saw last.
struct Reader {
  TcpClient connection;
  std::string pending;
  protocol::FrameDecoder frames;
  long last_seq = -1;
};

struct Delivery {
  std::vector<double> ms;  ///< every message's latency, sorted
  long missed = 0;         ///< gaps in the sequence numbers
  long messages = 0;
};

/// The sequence number in a JSON sensor line, or -1.
long json_seq(std::string_view line) {
  static constexpr std::string_view kLeft = "\"odometer\":{\"left\":";
  static constexpr std::string_view kRight = ",\"right\":";
  const auto left_at = line.find(kLeft);
  if (left_at == std::string_view::npos) return -1;
  const char* end = line.data() + line.size();
  long left = 0;
  long right = 0;
  const auto [after_left, left_error] = std::from_chars(line.data() + left_at + kLeft.size(), end, left);
  if (left_error != std::errc{} ||
      std::string_view(after_left, static_cast<std::size_t>(end - after_left)).substr(0, kRight.size()) != kRight) {
    return -1;
  }
  if (std::from_chars(after_left + kRight.size(), end, right).ec != std::errc{}) return -1;
  return static_cast<long>(static_cast<std::uint16_t>(left)) |
         (static_cast<long>(static_cast<std::uint16_t>(right)) << 16);
}

/// Reads every reader for `seconds` with one epoll loop and adds the
/// latencies of sequence numbers from `first_seq` on to `delivery` (earlier
/// ones are the tail of a previous phase).
void read_for(std::vector<Reader>& readers, Wire wire, FastUno& uno, double seconds, long first_seq,
              Delivery& delivery) {
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = i;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, readers[i].connection.fd(), &event);
  }
  std::vector<epoll_event> events(256);
  std::vector<char> buffer(65536);
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto record = [&](Reader& reader, long seq, Clock::time_point now) {
    if (seq < first_seq) return;
    const Clock::time_point sent = uno.sent_at(static_cast<std::uint32_t>(seq));
    if (sent != Clock::time_point{})
      delivery.ms.push_back(std::chrono::duration<double, std::milli>(now - sent).count());
    if (reader.last_seq >= 0 && seq > reader.last_seq + 1) delivery.missed += seq - reader.last_seq - 1;
    reader.last_seq = std::max(reader.last_seq, seq);
    ++delivery.messages;
  };
  while (Clock::now() < end) {
    const int ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 50);
    const Clock::time_point now = Clock::now();
    for (int e = 0; e < ready; ++e) {
      Reader& reader = readers[events[static_cast<std::size_t>(e)].data.u64];
      const ssize_t n = ::recv(reader.connection.fd(), buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n <= 0) continue;
      if (wire == Wire::RawFrames) {
        reader.frames.feed(
            protocol::ByteView(reinterpret_cast<const std::uint8_t*>(buffer.data()), static_cast<std::size_t>(n)));
        while (auto frame = reader.frames.next()) {
          if (frame->kind != protocol::FrameDecoder::EventKind::Frame || frame->payload.size() != 29) continue;
          record(reader,
                 static_cast<long>(protocol::read_u16le(frame->payload, 17)) |
                     (static_cast<long>(protocol::read_u16le(frame->payload, 19)) << 16),
                 now);
        }
        continue;
      }
      reader.pending.append(buffer.data(), static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t newline; (newline = reader.pending.find('\n', start)) != std::string::npos;
           start = newline + 1) {
        record(reader, json_seq(std::string_view(reader.pending).substr(start, newline - start)), now);
      }
      reader.pending.erase(0, start);
    }
  }
  ::close(epoll);
}

/// CPU seconds a process has used (user + system).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The fields after the command name (which may hold spaces) start at the
  // last ')'; utime and stime are the 12th and 13th of them.
  const auto after_name = text.rfind(')');
  unsigned long utime = 0;
  unsigned long stime = 0;
  if (after_name == std::string::npos ||
      std::sscanf(text.c_str() + after_name + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                  &stime) != 2) {
    return 0;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// A server under test: flockbridge or ser2net, on its own pseudo-terminal.
struct Server {
  std::string name;
  Wire wire;
  std::uint16_t port = 0;         ///< where sensor readers connect (JSON lines, or ser2net's raw port)
  std::uint16_t binary_port = 0;  ///< the bridge's port 2005; 0 for ser2net
  std::unique_ptr<FastUno> uno;
  std::unique_ptr<ChildProcess> process;
  std::uint32_t next_seq = 0;

  [[nodiscard]] pid_t pid() const { return process->pid(); }

  std::vector<Reader> connect(int count, int receive_buffer = 0) {
    std::vector<Reader> readers;
    readers.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
      readers.push_back(Reader{TcpClient(port, receive_buffer), {}, protocol::FrameDecoder(), -1});
    return readers;
  }
};

struct Workload {
  Delivery delivery;
  double cpu_s = 0;
  double wall_s = 0;
  long expected = 0;  ///< sensor frames sent during the phase, times readers
};

/// Streams sensors at `rate_hz` to `readers` for `seconds` and measures.
Workload stream(Server& server, std::vector<Reader>& readers, double rate_hz, double seconds) {
  // Settle: every reader has its first message before the measured phase.
  {
    Delivery ignored;
    SensorStream warmup(*server.uno, rate_hz, server.next_seq);
    read_for(readers, server.wire, *server.uno, 0.5, 0, ignored);
  }
  for (Reader& reader : readers) reader.last_seq = -1;
  Workload load;
  const long first_seq = server.next_seq;
  const double cpu_before = cpu_seconds(server.pid());
  const auto started = Clock::now();
  SensorStream sensors(*server.uno, rate_hz, server.next_seq);
  read_for(readers, server.wire, *server.uno, seconds, first_seq, load.delivery);
  sensors.stop();
  load.wall_s = seconds_since(started, Clock::now());
  load.cpu_s = cpu_seconds(server.pid()) - cpu_before;
  load.expected = sensors.sent() * static_cast<long>(readers.size());
  // What is still on its way counts too; a server that is behind has a
  // backlog here, and what is not in by the end of the drain was late.
  read_for(readers, server.wire, *server.uno, 0.3, first_seq, load.delivery);
  std::sort(load.delivery.ms.begin(), load.delivery.ms.end());
  return load;
}

void print_delivery(const char* server, const Workload& load) {
  const auto& d = load.delivery;
  std::printf(
      "    %-12s p50 %7.3f ms  p99 %7.3f ms  max %8.2f ms  delivered %8ld of %8ld  missed %6ld  CPU %5.1f%% of a "
      "core, %5.2f us/message\n",
      server, percentile(d.ms, 0.5), percentile(d.ms, 0.99), d.ms.empty() ? 0.0 : d.ms.back(), d.messages,
      load.expected, d.missed, 100.0 * load.cpu_s / load.wall_s,
      d.messages > 0 ? 1e6 * load.cpu_s / static_cast<double>(d.messages) : 0.0);
}

void print_ratio(const char* what, double bridge, double ser2net, const char* target) {
  if (ser2net <= 0) return;
  std::printf("    ratio %-22s %.2f  (%s)\n", what, bridge / ser2net, target);
}

/// How a client sends a "move at `speed`" command: the bytes it writes.
enum class CommandForm { Binary, Json, RawFrame };

std::string command_bytes(CommandForm form, int speed) {
  const std::string payload = std::string("DMS") + static_cast<char>(static_cast<std::int8_t>(speed));
  switch (form) {
    case CommandForm::Binary:
      return std::string(1, static_cast<char>(payload.size())) + payload;
    case CommandForm::Json:
      return "{\"cmd\":\"move\",\"speed\":" + std::to_string(speed) + "}\n";
    case CommandForm::RawFrame:
      break;
  }
  const protocol::Bytes frame = protocol::encode_frame(protocol::as_bytes(payload));
  return std::string(frame.begin(), frame.end());
}

/// Sends `count` commands, one every 20 ms (longer than the bridge's NAK
/// window, so none waits behind another), each awaited on the serial side;
/// returns each one's latency in ms, sorted. Sensor frames flow meanwhile, as
/// from a real Uno, and the client's incoming data is drained.
std::vector<double> command_latency(Server& server, std::uint16_t port, CommandForm form, int count) {
  TcpClient client(port);
  std::uint32_t& seq = server.next_seq;
  SensorStream sensors(*server.uno, 33, seq);
  std::vector<double> ms;
  char sink[65536];
  for (int i = 0; i < count; ++i) {
    while (::recv(client.fd(), sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
    const std::size_t before = server.uno->commands().size();
    const int speed = i % 100 + 1;
    const std::string bytes = command_bytes(form, speed);
    const Clock::time_point sent = Clock::now();
    client.send(bytes);
    if (!server.uno->wait_commands(before + 1, 2s)) continue;
    const auto arrived = server.uno->commands()[before];
    if (arrived.first.size() == 4 && static_cast<std::int8_t>(arrived.first[3]) == speed) {
      ms.push_back(std::chrono::duration<double, std::milli>(arrived.second - sent).count());
    }
    std::this_thread::sleep_until(sent + 20ms);  // the load's pace
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

void print_commands(const char* what, const std::vector<double>& ms, int count) {
  std::printf("    %-24s p50 %7.3f ms  p99 %7.3f ms  max %8.2f ms  (%zu of %d arrived)\n", what, percentile(ms, 0.5),
              percentile(ms, 0.99), ms.empty() ? 0.0 : ms.back(), ms.size(), count);
}

struct Options {
  double seconds = 5;
  double rate_hz = 100;
  bool ser2net = true;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--no-ser2net") {
      options.ser2net = false;
    } else if (name == "--seconds" && i + 1 < argc) {
      options.seconds = std::atof(argv[++i]);
    } else if (name == "--rate-hz" && i + 1 < argc) {
      options.rate_hz = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: compare_bench [--seconds S] [--rate-hz R] [--no-ser2net]\n");
      std::exit(2);
    }
  }
  return options;
}

std::unique_ptr<Server> start_bridge() {
  auto server = std::make_unique<Server>();
  server->name = "flockbridge";
  server->wire = Wire::JsonLines;
  server->uno = std::make_unique<FastUno>();
  server->process = std::make_unique<ChildProcess>(std::vector<std::string>{FLOCKBRIDGE_BIN,
                                                                            "--no-config",
                                                                            "--device",
                                                                            server->uno->device(),
                                                                            "--bind",
                                                                            "127.0.0.1",
                                                                            "--port",
                                                                            "0",
                                                                            "--json-port",
                                                                            "0",
                                                                            "--no-http",
                                                                            "--max-clients",
                                                                            "2000",
                                                                            "--boot-wait-ms",
                                                                            "50",
                                                                            "--stall-timeout-ms",
                                                                            "600000",
                                                                            "--command-rate",
                                                                            "100000",
                                                                            "--command-burst",
                                                                            "100000",
                                                                            "--stats-interval-s",
                                                                            "0"});
  const auto listening = server->process->wait_for(ChildProcess::Stream::Stderr, "listening: ");
  const auto ports = listening ? listening_ports(*listening) : std::nullopt;
  if (!ports) throw std::runtime_error("flockbridge did not start");
  server->port = ports->json;
  server->binary_port = ports->binary;
  // The link comes up once this Uno has answered CFG and sent a packet.
  SensorStream keep_alive(*server->uno, 50, server->next_seq);
  if (!server->process->wait_for(ChildProcess::Stream::Stderr, "robot link up")) {
    throw std::runtime_error("the bridge's link did not come up");
  }
  return server;
}

/// A port nothing listens on now: bound once, noted, let go (for ser2net,
/// which cannot be told to take any free port and say which).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

/// ser2net 4.x: raw TCP, as many connections as the bridge, no character delay.
std::unique_ptr<Server> start_ser2net(const std::filesystem::path& directory) {
  auto server = std::make_unique<Server>();
  server->name = "ser2net";
  server->wire = Wire::RawFrames;
  server->uno = std::make_unique<FastUno>();
  server->port = free_port();
  const auto config = directory / "ser2net.yaml";
  // nodelay: ser2net leaves Nagle's algorithm on by default, which would
  // hold small writes back; the comparison is with ser2net at its fastest.
  std::ofstream(config) << "%YAML 1.1\n---\nconnection: &bench\n  accepter: tcp(nodelay),127.0.0.1," << server->port
                        << "\n  connector: serialdev," << server->uno->device()
                        << ",115200n81,local\n  options:\n    max-connections: 2000\n    chardelay: false\n"
                           "    kickolduser: false\n";
  server->process =
      std::make_unique<ChildProcess>(std::vector<std::string>{"ser2net", "-n", "-d", "-u", "-c", config.string()});
  // ser2net says nothing when it is ready: a connection that succeeds is the event.
  const auto deadline = Clock::now() + 10s;
  while (true) {
    try {
      TcpClient probe(server->port);
      break;
    } catch (const std::exception&) {
      if (Clock::now() > deadline) throw std::runtime_error("ser2net did not start");
      std::this_thread::sleep_for(20ms);  // polling a server that gives no signal
    }
  }
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  const auto directory = std::filesystem::temp_directory_path() / ("flockbridge-compare-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  auto bridge = start_bridge();
  std::unique_ptr<Server> ser2net;
  if (options.ser2net) {
    try {
      ser2net = start_ser2net(directory);
    } catch (const std::exception& error) {
      std::printf("ser2net: not compared (%s). scripts/compare.sh installs it.\n", error.what());
    }
  } else {
    std::printf("ser2net: not compared (--no-ser2net)\n");
  }
  std::vector<Server*> servers{bridge.get()};
  if (ser2net) servers.push_back(ser2net.get());

  std::printf(
      "compare_bench: flockbridge (JSON lines, port 2006) and ser2net (raw TCP) on pseudo-terminals,\n"
      "%.0f sensor packets/s, %.1f s per phase; latencies from this process writing the frame to a client "
      "reading it\n\n",
      options.rate_hz, options.seconds);

  const std::size_t kBridge = 0;
  const std::size_t kSer2net = 1;
  const bool compared = servers.size() == 2;

  // Commands: client write to the whole frame on the serial side.
  constexpr int kCommands = 200;
  std::printf("Command latency (client write to the frame complete on the serial side), %d commands:\n", kCommands);
  const auto binary_commands = command_latency(*bridge, bridge->binary_port, CommandForm::Binary, kCommands);
  print_commands("flockbridge, port 2005", binary_commands, kCommands);
  const auto json_commands = command_latency(*bridge, bridge->port, CommandForm::Json, kCommands);
  print_commands("flockbridge, port 2006", json_commands, kCommands);
  std::vector<double> raw_commands;
  if (compared) {
    raw_commands = command_latency(*ser2net, ser2net->port, CommandForm::RawFrame, kCommands);
    print_commands("ser2net, raw frame", raw_commands, kCommands);
    print_ratio("p50, port 2005", percentile(binary_commands, 0.5), percentile(raw_commands, 0.5),
                "target at most 1.0");
    print_ratio("p50, port 2006", percentile(json_commands, 0.5), percentile(raw_commands, 0.5), "target at most 1.0");
  }

  std::printf("\nSensor latency, by number of clients:\n");
  std::vector<Workload> at100(servers.size());
  std::vector<Workload> at1000(servers.size());
  std::vector<std::string> peak_rss(servers.size());
  for (const int clients : {1, 10, 100, 1000}) {
    std::printf("  %d client%s\n", clients, clients == 1 ? "" : "s");
    std::vector<Workload> loads;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      Server* server = servers[i];
      const auto connecting = Clock::now();
      auto readers = server->connect(clients);
      if (clients >= 100) {
        std::printf("    %-12s %d connections accepted in %.2f s\n", server->name.c_str(), clients,
                    seconds_since(connecting, Clock::now()));
      }
      loads.push_back(stream(*server, readers, options.rate_hz, options.seconds));
      print_delivery(server->name.c_str(), loads.back());
      if (clients == 100) at100[i] = loads.back();
      if (clients == 1000) {
        at1000[i] = loads.back();
        peak_rss[i] = process_status(server->pid(), "VmHWM");
        std::printf("    %-12s peak RSS %s\n", server->name.c_str(), peak_rss[i].c_str());
      }
    }
    if (compared) {
      print_ratio("p50", percentile(loads[kBridge].delivery.ms, 0.5), percentile(loads[kSer2net].delivery.ms, 0.5),
                  clients == 100 ? "target at most 0.5" : "bridge / ser2net");
      print_ratio("p99", percentile(loads[kBridge].delivery.ms, 0.99), percentile(loads[kSer2net].delivery.ms, 0.99),
                  clients == 100 ? "target at most 0.5" : "bridge / ser2net");
    }
  }

  std::printf("\n100 reading clients and 10 that never read:\n");
  std::vector<Workload> stalled(servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    Server* server = servers[i];
    auto readers = server->connect(100);
    auto sleepers = server->connect(10, 4096);
    stalled[i] = stream(*server, readers, options.rate_hz, options.seconds);
    print_delivery(server->name.c_str(), stalled[i]);
  }

  constexpr double kSustainedP99Ms = 50;
  std::printf("\nThe highest sensor rate to 1000 clients with none lost and p99 under %.0f ms (3 s each):\n",
              kSustainedP99Ms);
  std::vector<double> best_rate(servers.size(), 0);
  for (std::size_t i = 0; i < servers.size(); ++i) {
    Server* server = servers[i];
    auto readers = server->connect(1000);
    for (const double rate : {100.0, 200.0, 338.0, 500.0, 1000.0}) {
      const Workload load = stream(*server, readers, rate, 3);
      const double achieved = static_cast<double>(load.expected) / 1000.0 / load.wall_s;
      // Sustained: the frames went out at the rate asked, every client got
      // every one, and none waited long (a server that falls behind queues).
      const bool lossless = load.delivery.missed == 0 && load.delivery.messages >= load.expected &&
                            achieved >= rate * 0.95 && percentile(load.delivery.ms, 0.99) < kSustainedP99Ms;
      std::printf("    %-12s %6.0f/s asked, %6.0f/s sent:", server->name.c_str(), rate, achieved);
      print_delivery("", load);
      if (!lossless) break;
      best_rate[i] = rate;
    }
  }

  // At 115200 baud a byte takes 10 bit times: a 34-byte sensor frame is on
  // the wire for about 2.95 ms, and at most about 338 fit in a second.
  constexpr double kFrameWireMs = 34 * 10 * 1000.0 / 115200;
  std::printf("\nPhysical limits: a sensor frame takes %.2f ms on the wire at 115200 baud; at most %.0f a second.\n",
              kFrameWireMs, 1000.0 / kFrameWireMs);
  std::printf("  the bridge adds p50 %.3f ms with 100 clients (%.0f%% of one frame's wire time)\n",
              percentile(at100[kBridge].delivery.ms, 0.5),
              100 * percentile(at100[kBridge].delivery.ms, 0.5) / kFrameWireMs);

  std::printf("\nTargets:\n");
  const auto verdict = [](bool met) { return met ? "met" : "MISSED"; };
  if (compared) {
    const double p50_ratio = percentile(at100[kBridge].delivery.ms, 0.5) / percentile(at100[kSer2net].delivery.ms, 0.5);
    const double p99_ratio =
        percentile(at100[kBridge].delivery.ms, 0.99) / percentile(at100[kSer2net].delivery.ms, 0.99);
    std::printf("  sensor latency with 100 clients at most half of ser2net's: p50 %.2f, p99 %.2f: %s\n", p50_ratio,
                p99_ratio, verdict(p50_ratio <= 0.5 && p99_ratio <= 0.5));
    const double command_ratio = percentile(json_commands, 0.5) / percentile(raw_commands, 0.5);
    std::printf("  command latency p50 no worse than ser2net's: %.2f (port 2006), %.2f (port 2005): %s\n",
                command_ratio, percentile(binary_commands, 0.5) / percentile(raw_commands, 0.5),
                verdict(command_ratio <= 1.0));
  }
  const double cpu_share = at1000[kBridge].cpu_s / at1000[kBridge].wall_s;
  std::printf("  1000 JSON subscribers at %.0f packets/s under a quarter of a core: %.0f%%: %s\n", options.rate_hz,
              100 * cpu_share, verdict(cpu_share < 0.25));
  const long rss_kb = std::atol(peak_rss[kBridge].c_str());
  std::printf("  peak memory with 1000 clients under 16 MiB: %s: %s\n", peak_rss[kBridge].c_str(),
              verdict(rss_kb > 0 && rss_kb < 16 * 1024));
  const double calm = percentile(at100[kBridge].delivery.ms, 0.5);
  const double with_sleepers = percentile(stalled[kBridge].delivery.ms, 0.5);
  std::printf("  no measurable change from 10 stalled clients: p50 %.3f -> %.3f ms, none missed: %s\n", calm,
              with_sleepers, verdict(stalled[kBridge].delivery.missed == 0 && with_sleepers <= calm * 1.1 + 0.1));
  std::printf("  highest loss-free rate to 1000 clients: flockbridge %.0f/s%s\n", best_rate[kBridge],
              compared ? (", ser2net " + std::to_string(static_cast<int>(best_rate[kSer2net])) + "/s").c_str() : "");

  bridge->process->terminate();
  if (ser2net) ser2net->process->terminate();
  std::filesystem::remove_all(directory);
  return 0;
}
