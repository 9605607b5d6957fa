// compare_bench: flockbridge side by side with ser2net, the raw serial-to-TCP
// proxy people would otherwise use, on the same workloads in one run.
//
// This program plays the Uno itself, fast: it holds the master side of one
// pseudo-terminal per server and writes sensor frames into it at a set rate,
// each carrying a sequence number (in the odometer fields), answers the
// bridge's CFG with ACK, and timestamps every command frame that arrives.
// Its clients are real TCP connections on 127.0.0.1, read by one epoll loop:
// JSON-lines clients of the bridge (port 2006) and raw clients of ser2net,
// which get the Uno's bytes as they are and find the frames themselves.
//
// A sensor message's latency runs from this process writing the frame into
// the pseudo-terminal to the message reaching the client's socket: the
// kernel's receive timestamp (SO_TIMESTAMPNS), taken when the server's send
// lands in the client's receive path. That is what the server controls; when
// this one reader thread gets round to each of 1000 sockets is shown beside
// it ("read by the client") but is the benchmark's own speed, the same for
// both servers.
//
// On loopback the kernel does each client's receive work (TCP input, waking
// the reader) inside the sender's send call, so it would be charged to the
// server, which on a real network never pays it. Run as root on two cores or
// more, the benchmark therefore moves itself into a network namespace of its
// own, runs each server on core 0 and itself on the others, and steers the
// loopback's receive work to the clients' cores (RPS); the 1000-client phase
// is then measured once more with the receive work left on the server's core.
// Without root it runs in place and says so.
//
// It measures, for each server: command latency (client write to the frame
// complete on the serial side), sensor latency with 1, 10, 100 and 1000
// clients, CPU time per delivered message, peak memory, the highest sensor
// rate delivered to 1000 clients without loss, and what 10 clients that never
// read do to everyone else. It prints figures and the ratio to ser2net, and
// asserts nothing.
//
//   compare_bench [--seconds S] [--rate-hz R] [--no-ser2net] [--in-place]
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"
#include "support/listening.hpp"
#include "support/measure.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"

using namespace flockbridge;
using namespace flockbridge::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
/// The kernel's receive timestamps are on the real-time clock, so sensor
/// frames' send times are too.
using WallClock = std::chrono::system_clock;

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
      sent_[seq] = WallClock::now();
    }
    write_all(frame);
  }
  [[nodiscard]] WallClock::time_point sent_at(std::uint32_t seq) {
    std::lock_guard lock(sent_mutex_);
    return seq < sent_.size() ? sent_[seq] : WallClock::time_point{};
  }

  using Command = std::pair<protocol::Bytes, Clock::time_point>;  ///< a payload and when it arrived
  /// How many command frames have arrived so far.
  std::size_t command_count() {
    std::lock_guard lock(commands_mutex_);
    return commands_.size();
  }
  /// Waits for the first command frame from the `from`th on whose payload
  /// starts with `code`; nothing after `timeout`. (Others come too: the
  /// bridge stops the robot when the client that set it moving leaves.)
  std::optional<Command> wait_command(std::size_t from, std::string_view code, std::chrono::milliseconds timeout) {
    std::unique_lock lock(commands_mutex_);
    std::optional<Command> found;
    command_arrived_.wait_for(lock, timeout, [&] {
      for (; from < commands_.size() && !found; ++from) {
        const protocol::Bytes& payload = commands_[from].first;
        if (payload.size() >= code.size() && std::memcmp(payload.data(), code.data(), code.size()) == 0) {
          found = commands_[from];
        }
      }
      return found.has_value();
    });
    return found;
  }

 private:
  /// Writes a frame, unless the server has stopped reading the device
  /// (ser2net does when one of its clients stops reading): after 100 ms
  /// without room the rest is lost, as on a real line.
  void write_all(protocol::ByteView bytes) {
    std::lock_guard lock(write_mutex_);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(master_, bytes.data() + done, bytes.size() - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
      } else if (errno == EAGAIN) {
        pollfd room{master_, POLLOUT, 0};
        if (::poll(&room, 1, 100) <= 0) return;
      } else if (errno != EINTR) {
        return;
      }
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
  std::vector<WallClock::time_point> sent_;
  std::mutex commands_mutex_;
  std::condition_variable command_arrived_;
  std::vector<Command> commands_;
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
  std::vector<double> ms;       ///< every message's latency to the client's socket, sorted
  std::vector<double> read_ms;  ///< every message's latency to this process reading it, sorted
  long missed = 0;              ///< gaps in the sequence numbers
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

/// When the kernel received the data a recvmsg returned: the timestamp of
/// its last segment (so a read that gathers several messages dates them all
/// by the latest, never earlier than they came).
std::optional<WallClock::time_point> receive_timestamp(msghdr& message) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_TIMESTAMPNS) continue;
    timespec stamp{};
    std::memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
    return WallClock::time_point(std::chrono::duration_cast<WallClock::duration>(
        std::chrono::seconds(stamp.tv_sec) + std::chrono::nanoseconds(stamp.tv_nsec)));
  }
  return std::nullopt;
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
  alignas(cmsghdr) std::array<char, 256> control{};
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto record = [&](Reader& reader, long seq, WallClock::time_point arrived, WallClock::time_point read) {
    if (seq < first_seq) return;
    const WallClock::time_point sent = uno.sent_at(static_cast<std::uint32_t>(seq));
    if (sent != WallClock::time_point{}) {
      delivery.ms.push_back(std::chrono::duration<double, std::milli>(arrived - sent).count());
      delivery.read_ms.push_back(std::chrono::duration<double, std::milli>(read - sent).count());
    }
    if (reader.last_seq >= 0 && seq > reader.last_seq + 1) delivery.missed += seq - reader.last_seq - 1;
    reader.last_seq = std::max(reader.last_seq, seq);
    ++delivery.messages;
  };
  while (Clock::now() < end) {
    const int ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 50);
    const WallClock::time_point now = WallClock::now();
    for (int e = 0; e < ready; ++e) {
      Reader& reader = readers[events[static_cast<std::size_t>(e)].data.u64];
      iovec into{buffer.data(), buffer.size()};
      msghdr message{};
      message.msg_iov = &into;
      message.msg_iovlen = 1;
      message.msg_control = control.data();
      message.msg_controllen = control.size();
      const ssize_t n = ::recvmsg(reader.connection.fd(), &message, MSG_DONTWAIT);
      if (n <= 0) continue;
      const WallClock::time_point arrived = receive_timestamp(message).value_or(now);
      if (wire == Wire::RawFrames) {
        reader.frames.feed(
            protocol::ByteView(reinterpret_cast<const std::uint8_t*>(buffer.data()), static_cast<std::size_t>(n)));
        while (auto frame = reader.frames.next()) {
          if (frame->kind != protocol::FrameDecoder::EventKind::Frame || frame->payload.size() != 29) continue;
          record(reader,
                 static_cast<long>(protocol::read_u16le(frame->payload, 17)) |
                     (static_cast<long>(protocol::read_u16le(frame->payload, 19)) << 16),
                 arrived, now);
        }
        continue;
      }
      reader.pending.append(buffer.data(), static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t newline; (newline = reader.pending.find('\n', start)) != std::string::npos;
           start = newline + 1) {
        record(reader, json_seq(std::string_view(reader.pending).substr(start, newline - start)), arrived, now);
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

/// Where the servers and this process run, and which core does the
/// loopback's receive work for the clients.
class Placement {
  static constexpr std::size_t kCpus = CPU_SETSIZE;

 public:
  /// As root with two cores or more: moves this process into a network
  /// namespace (and mount namespace, for that namespace's /sys) of its own,
  /// gives the servers the first core and this process the others, and
  /// steers the loopback's receive work to this process's cores. Otherwise
  /// leaves everything as it is and says why.
  static Placement arrange(bool wanted) {
    Placement placement;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (!wanted) return placement.refused("--in-place was given");
    if (::geteuid() != 0) return placement.refused("not run as root (scripts/compare.sh uses sudo)");
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2) {
      return placement.refused("fewer than two cores");
    }
    if (::unshare(CLONE_NEWNET | CLONE_NEWNS) != 0)
      return placement.refused(std::string("unshare: ") + strerror(errno));
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) {
      return placement.refused(std::string("mount: ") + strerror(errno));
    }
    if (!bring_loopback_up()) return placement.refused(std::string("loopback: ") + strerror(errno));
    cpu_set_t clients = allowed;
    for (std::size_t cpu = 0; cpu < kCpus; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) {
        placement.server_cpu_ = static_cast<int>(cpu);
        CPU_CLR(cpu, &clients);
        break;
      }
    }
    placement.client_mask_ = cpu_mask(clients);
    if (::sched_setaffinity(0, sizeof(clients), &clients) != 0) {
      return placement.refused(std::string("sched_setaffinity: ") + strerror(errno));
    }
    placement.isolated_ = true;
    if (!placement.steer_receive_work(true)) return placement.refused("cannot set the loopback's rps_cpus");
    return placement;
  }

  [[nodiscard]] bool isolated() const noexcept { return isolated_; }
  [[nodiscard]] std::string describe() const {
    if (!isolated_) {
      return "in place (" + why_not_ +
             "): the loopback does each client's receive work on the sending server's core, and it is charged to "
             "the server";
    }
    return "in a network namespace of its own; servers on core " + std::to_string(server_cpu_) +
           ", clients and the loopback's receive work (RPS mask " + client_mask_ + ") on the others";
  }
  /// What goes before a server's command line to start it on its core.
  [[nodiscard]] std::vector<std::string> server_prefix() const {
    if (!isolated_) return {};
    return {"taskset", "-c", std::to_string(server_cpu_)};
  }
  /// Steers the loopback's receive work to the clients' cores (true), or
  /// leaves it on the sender's core, the kernel's default (false).
  bool steer_receive_work(bool to_clients) const {
    if (!isolated_) return false;
    std::ofstream rps("/sys/class/net/lo/queues/rx-0/rps_cpus");
    rps << (to_clients ? client_mask_ : "0") << std::flush;
    return static_cast<bool>(rps);
  }

 private:
  Placement refused(std::string why) {
    why_not_ = std::move(why);
    isolated_ = false;
    return *this;
  }

  /// Brings the namespace's loopback up, with one more address on it:
  /// ser2net resolves its accepter's address with AI_ADDRCONFIG, which
  /// finds no IPv4 at all in a namespace that has only 127.0.0.1.
  static bool bring_loopback_up() {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    ifreq request{};
    std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    bool up = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0;
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    up = up && ::ioctl(fd, SIOCSIFFLAGS, &request) == 0;
    ifreq alias{};
    std::strncpy(alias.ifr_name, "lo:1", IFNAMSIZ - 1);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(0x0AFF0001);  // 10.255.0.1, never routed anywhere from here
    std::memcpy(&alias.ifr_addr, &address, sizeof(address));
    up = up && ::ioctl(fd, SIOCSIFADDR, &alias) == 0;
    address.sin_addr.s_addr = htonl(0xFFFFFFFF);
    std::memcpy(&alias.ifr_netmask, &address, sizeof(address));
    up = up && ::ioctl(fd, SIOCSIFNETMASK, &alias) == 0;
    ::close(fd);
    return up;
  }

  /// A CPU set as sysfs writes masks: hex, in comma-separated 32-bit words.
  static std::string cpu_mask(const cpu_set_t& set) {
    std::vector<std::uint32_t> words(kCpus / 32, 0);
    for (std::size_t cpu = 0; cpu < kCpus; ++cpu) {
      if (CPU_ISSET(cpu, &set)) words[cpu / 32] |= 1U << (cpu % 32);
    }
    while (words.size() > 1 && words.back() == 0) words.pop_back();
    std::string mask;
    char word[16];
    for (auto it = words.rbegin(); it != words.rend(); ++it) {
      std::snprintf(word, sizeof(word), mask.empty() ? "%x" : ",%08x", *it);
      mask += word;
    }
    return mask;
  }

  bool isolated_ = false;
  std::string why_not_;
  int server_cpu_ = 0;
  std::string client_mask_;
};

/// The segment size a client on Wi-Fi or Ethernet announces. Readers
/// announce it too: on loopback (MSS 65483) the kernel sizes a connection's
/// send buffer to megabytes, and a client that never reads would take many
/// minutes to fill it, which no real client's connection does.
constexpr int kWifiMss = 1448;

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

  /// Connects `count` readers, each counted as accepted once its first
  /// bytes arrive (the bridge's hello; for ser2net, the Uno's bytes, so a
  /// sensor stream runs meanwhile). No more than a few wait at once:
  /// ser2net listens with a backlog of 5, and a connection beyond that
  /// would have its SYN dropped and retried a second later.
  std::vector<Reader> connect(int count, int receive_buffer = 0) {
    const std::size_t window = wire == Wire::RawFrames ? 4 : 64;
    SensorStream pacing(*uno, 50, next_seq);
    std::vector<Reader> readers;
    readers.reserve(static_cast<std::size_t>(count));
    std::vector<std::size_t> waiting;
    char sink[4096];
    while (readers.size() < static_cast<std::size_t>(count) || !waiting.empty()) {
      while (readers.size() < static_cast<std::size_t>(count) && waiting.size() < window) {
        readers.push_back(Reader{TcpClient(port, receive_buffer, kWifiMss), {}, protocol::FrameDecoder(), -1});
        const int on = 1;
        ::setsockopt(readers.back().connection.fd(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
        waiting.push_back(readers.size() - 1);
      }
      std::vector<pollfd> polls;
      polls.reserve(waiting.size());
      for (const std::size_t i : waiting) polls.push_back(pollfd{readers[i].connection.fd(), POLLIN, 0});
      if (::poll(polls.data(), polls.size(), 5000) <= 0) {
        throw std::runtime_error(name + " did not serve a new connection within 5 s");
      }
      std::vector<std::size_t> still;
      for (std::size_t k = 0; k < polls.size(); ++k) {
        if ((polls[k].revents & POLLIN) != 0) {
          while (::recv(polls[k].fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
          }
        } else {
          still.push_back(waiting[k]);
        }
      }
      waiting = std::move(still);
    }
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
  std::sort(load.delivery.read_ms.begin(), load.delivery.read_ms.end());
  return load;
}

void print_delivery(const char* server, const Workload& load) {
  const auto& d = load.delivery;
  std::printf(
      "    %-12s p50 %7.3f ms  p99 %7.3f ms  max %8.2f ms  (read p50 %7.3f, p99 %7.3f)  delivered %8ld of %8ld  "
      "missed %6ld  CPU %5.1f%% of a core, %5.2f us/message\n",
      server, percentile(d.ms, 0.5), percentile(d.ms, 0.99), d.ms.empty() ? 0.0 : d.ms.back(),
      percentile(d.read_ms, 0.5), percentile(d.read_ms, 0.99), d.messages, load.expected, d.missed,
      100.0 * load.cpu_s / load.wall_s, d.messages > 0 ? 1e6 * load.cpu_s / static_cast<double>(d.messages) : 0.0);
}

/// The ratio of two samples' medians, and the 95% interval of that ratio
/// over 2000 resamplings of both: how far the machine's noise alone moves it.
struct MedianRatio {
  double ratio = 0;
  double low = 0;
  double high = 0;
};

MedianRatio median_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  MedianRatio result;
  if (a.empty() || b.empty()) return result;
  result.ratio = percentile(a, 0.5) / percentile(b, 0.5);
  std::mt19937 random(2005);  // the same resamplings every run
  const auto median_of_resample = [&](const std::vector<double>& sample) {
    std::uniform_int_distribution<std::size_t> pick(0, sample.size() - 1);
    std::vector<double> drawn(sample.size());
    for (double& value : drawn) value = sample[pick(random)];
    std::nth_element(drawn.begin(), drawn.begin() + static_cast<std::ptrdiff_t>(drawn.size() / 2), drawn.end());
    return drawn[drawn.size() / 2];
  };
  std::vector<double> ratios(2000);
  for (double& ratio : ratios) ratio = median_of_resample(a) / median_of_resample(b);
  std::sort(ratios.begin(), ratios.end());
  result.low = percentile(ratios, 0.025);
  result.high = percentile(ratios, 0.975);
  return result;
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

/// How the client's socket sends small writes.
enum class Nagle {
  On,  ///< as a socket comes: a small write waits while an earlier one is unacknowledged
  Off  ///< TCP_NODELAY
};

/// One client sending commands to one server's port.
struct CommandProbe {
  const char* what;
  Server* server;
  std::uint16_t port;
  CommandForm form;
  std::vector<double> ms;  ///< each command's latency, sorted
};

/// Sends `count` commands from a new client of each probe's, one every
/// 20 ms (longer than the bridge's NAK window, so none waits behind
/// another), each awaited on the serial side. The probes take turns in
/// blocks of 20 commands, so that every server meets the machine in the
/// same states. Sensor frames flow to every server meanwhile, as from a real
/// Uno, and the clients' incoming data is drained.
void command_latency(std::vector<CommandProbe>& probes, Nagle nagle, int count) {
  std::vector<TcpClient> clients;
  std::vector<std::unique_ptr<SensorStream>> streams;
  std::vector<Server*> streaming;
  for (CommandProbe& probe : probes) {
    probe.ms.clear();
    clients.emplace_back(probe.port);
    if (nagle == Nagle::Off) {
      const int on = 1;
      ::setsockopt(clients.back().fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    }
    if (std::find(streaming.begin(), streaming.end(), probe.server) == streaming.end()) {
      streaming.push_back(probe.server);
      streams.push_back(std::make_unique<SensorStream>(*probe.server->uno, 33, probe.server->next_seq));
    }
  }
  char sink[65536];
  constexpr int kBlock = 20;
  for (int block = 0; block < count; block += kBlock) {
    for (std::size_t p = 0; p < probes.size(); ++p) {
      CommandProbe& probe = probes[p];
      TcpClient& client = clients[p];
      for (int i = block; i < std::min(count, block + kBlock); ++i) {
        while (::recv(client.fd(), sink, sizeof(sink), MSG_DONTWAIT) > 0) {
        }
        const std::size_t before = probe.server->uno->command_count();
        const int speed = i % 100 + 1;
        const std::string bytes = command_bytes(probe.form, speed);
        const Clock::time_point sent = Clock::now();
        client.send(bytes);
        const auto arrived = probe.server->uno->wait_command(before, "DMS", 2s);
        if (arrived && arrived->first.size() == 4 && static_cast<std::int8_t>(arrived->first[3]) == speed) {
          probe.ms.push_back(std::chrono::duration<double, std::milli>(arrived->second - sent).count());
        }
        std::this_thread::sleep_until(sent + 20ms);  // the load's pace
      }
    }
  }
  for (CommandProbe& probe : probes) std::sort(probe.ms.begin(), probe.ms.end());
}

void print_commands(const char* what, const std::vector<double>& ms, int count) {
  std::printf("    %-24s p50 %7.3f ms  p99 %7.3f ms  max %8.2f ms  (%zu of %d arrived)\n", what, percentile(ms, 0.5),
              percentile(ms, 0.99), ms.empty() ? 0.0 : ms.back(), ms.size(), count);
}

struct Options {
  double seconds = 5;
  double rate_hz = 100;
  bool ser2net = true;
  bool isolate = true;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--no-ser2net") {
      options.ser2net = false;
    } else if (name == "--in-place") {
      options.isolate = false;
    } else if (name == "--seconds" && i + 1 < argc) {
      options.seconds = std::atof(argv[++i]);
    } else if (name == "--rate-hz" && i + 1 < argc) {
      options.rate_hz = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: compare_bench [--seconds S] [--rate-hz R] [--no-ser2net] [--in-place]\n");
      std::exit(2);
    }
  }
  return options;
}

/// `prefix` followed by `command`.
std::vector<std::string> prefixed(std::vector<std::string> prefix, const std::vector<std::string>& command) {
  prefix.insert(prefix.end(), command.begin(), command.end());
  return prefix;
}

std::unique_ptr<Server> start_bridge(const Placement& placement) {
  auto server = std::make_unique<Server>();
  server->name = "flockbridge";
  server->wire = Wire::JsonLines;
  server->uno = std::make_unique<FastUno>();
  server->process = std::make_unique<ChildProcess>(prefixed(placement.server_prefix(), {FLOCKBRIDGE_BIN,
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
                                                                                        "0"}));
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
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) address.sin_port = 0;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

/// ser2net 4.x: raw TCP, as many connections as the bridge, no character delay.
std::unique_ptr<Server> start_ser2net(const Placement& placement, const std::filesystem::path& directory) {
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
  server->process = std::make_unique<ChildProcess>(
      prefixed(placement.server_prefix(), {"ser2net", "-n", "-d", "-u", "-c", config.string()}));
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

/// The floor: the least any server can do to pass sensor packets on as
/// JSON lines. It reads the pseudo-terminal, finds frames, formats the
/// bridge's sensor message with one snprintf, and writes it to every client
/// with one send() each: no queues, no subscriptions, nothing for slow
/// clients (one whose send would block is cut off). Whatever a real server spends beyond this is its own overhead. Runs
/// as a process of its own, `compare_bench --floor-server DEVICE`, and says
/// "listening: json=PORT" on stderr.
int floor_server(const std::string& device) {
  const int serial = ::open(device.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  termios mode{};
  if (serial < 0 || ::tcgetattr(serial, &mode) != 0) return 1;
  ::cfmakeraw(&mode);
  ::tcsetattr(serial, TCSANOW, &mode);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener, SOMAXCONN) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 1;
  }
  std::fprintf(stderr, "listening: json=%u\n", ntohs(address.sin_port));
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (const int fd : {listener, serial}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
  }
  std::vector<int> clients;
  unsigned long seq = 0;
  protocol::FrameDecoder frames;
  std::array<std::uint8_t, 4096> buffer{};
  std::array<epoll_event, 8> events{};
  for (;;) {
    const int ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), -1);
    for (int e = 0; e < ready; ++e) {
      if (events[static_cast<std::size_t>(e)].data.fd == listener) {
        for (int client; (client = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
          const int on = 1;
          ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
          clients.push_back(client);
        }
        continue;
      }
      const ssize_t n = ::read(serial, buffer.data(), buffer.size());
      if (n <= 0) continue;
      frames.feed(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
      while (auto frame = frames.next()) {
        if (frame->kind != protocol::FrameDecoder::EventKind::Frame) continue;
        const auto packet = protocol::parse_uno_packet(frame->payload);
        if (!packet || packet.value().kind != protocol::UnoPacketKind::Sensor) continue;
        // The bridge's sensor message, field for field, so that both send as many bytes.
        const protocol::SensorReading& r = packet.value().sensor;
        char line[320];
        const int size = std::snprintf(
            line, sizeof(line),
            "{\"type\":\"sensor\",\"seq\":%lu,\"ts\":%.6f,\"battery\":%u,\"ir\":[%u,%u,%u,%u,%u],\"l_bump\":%u,"
            "\"h_bump\":%u,\"odometer\":{\"left\":%d,\"right\":%d,\"avg\":%d},\"wheel_watcher\":{\"left\":%d,"
            "\"right\":%d}}\n",
            ++seq, std::chrono::duration<double>(WallClock::now().time_since_epoch()).count(), r.battery, r.ir[0],
            r.ir[1], r.ir[2], r.ir[3], r.ir[4], r.l_bump, r.h_bump, r.odometer_left, r.odometer_right, r.odometer_avg,
            r.wheel_watcher_left, r.wheel_watcher_right);
        for (int& client : clients) {
          if (client >= 0 && ::send(client, line, static_cast<std::size_t>(size), MSG_NOSIGNAL) != size) {
            ::close(client);
            client = -1;
          }
        }
        std::erase(clients, -1);
      }
    }
  }
}

std::unique_ptr<Server> start_floor(const Placement& placement, const std::string& self) {
  auto server = std::make_unique<Server>();
  server->name = "floor";
  server->wire = Wire::JsonLines;
  server->uno = std::make_unique<FastUno>();
  server->process = std::make_unique<ChildProcess>(
      prefixed(placement.server_prefix(), {self, "--floor-server", server->uno->device()}));
  const auto listening = server->process->wait_for(ChildProcess::Stream::Stderr, "listening: json=");
  if (!listening) throw std::runtime_error("the floor server did not start");
  server->port = static_cast<std::uint16_t>(std::atoi(listening->c_str() + listening->find('=') + 1));
  return server;
}

/// Runs every workload and prints the figures.
void run(const Options& options, const Placement& placement) {
  const auto directory = std::filesystem::temp_directory_path() / ("flockbridge-compare-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  auto bridge = start_bridge(placement);
  std::unique_ptr<Server> ser2net;
  if (options.ser2net) {
    try {
      ser2net = start_ser2net(placement, directory);
    } catch (const std::exception& error) {
      std::printf("ser2net: not compared (%s). scripts/compare.sh installs it.\n", error.what());
    }
  } else {
    std::printf("ser2net: not compared (--no-ser2net)\n");
  }
  std::vector<Server*> servers{bridge.get()};
  if (ser2net) servers.push_back(ser2net.get());
  // The floor serves the sensor phases only: it takes no commands.
  auto floor = start_floor(placement, std::filesystem::read_symlink("/proc/self/exe").string());
  std::vector<Server*> sensor_servers = servers;
  sensor_servers.push_back(floor.get());
  const std::size_t floor_index = sensor_servers.size() - 1;

  std::printf(
      "compare_bench: flockbridge (JSON lines, port 2006) and ser2net (raw TCP) on pseudo-terminals,\n"
      "%.0f sensor packets/s, %.1f s per phase. Sensor latency: this process writing the frame to the kernel's\n"
      "receive timestamp on the client's socket; \"read\": to this process's one reader thread reading it.\n"
      "Placement: %s.\n\n",
      options.rate_hz, options.seconds, placement.describe().c_str());

  constexpr std::size_t kBridge = 0;
  constexpr std::size_t kSer2net = 1;
  const bool compared = servers.size() == 2;

  // Commands: client write to the whole frame on the serial side, from a
  // client as sockets come (Nagle on) and from one with TCP_NODELAY.
  constexpr int kCommands = 400;
  std::printf(
      "Command latency (client write to the frame complete on the serial side), %d commands each, the servers "
      "taking turns in blocks of 20:\n",
      kCommands);
  std::vector<CommandProbe> probes{
      {"flockbridge, port 2005", bridge.get(), bridge->binary_port, CommandForm::Binary, {}},
      {"flockbridge, port 2006", bridge.get(), bridge->port, CommandForm::Json, {}}};
  if (compared) probes.push_back({"ser2net, raw frame", ser2net.get(), ser2net->port, CommandForm::RawFrame, {}});
  std::vector<std::vector<double>> with_nodelay;
  for (const Nagle nagle : {Nagle::Off, Nagle::On}) {
    std::printf("  client with %s:\n", nagle == Nagle::Off ? "TCP_NODELAY" : "Nagle's algorithm on (a plain socket)");
    command_latency(probes, nagle, kCommands);
    for (const CommandProbe& probe : probes) print_commands(probe.what, probe.ms, kCommands);
    if (nagle == Nagle::Off) {
      for (const CommandProbe& probe : probes) with_nodelay.push_back(probe.ms);
    }
    if (!compared) continue;
    if (nagle == Nagle::Off) {
      print_ratio("p50, port 2005", percentile(probes[0].ms, 0.5), percentile(probes[2].ms, 0.5), "target at most 1.0");
      print_ratio("p50, port 2006", percentile(probes[1].ms, 0.5), percentile(probes[2].ms, 0.5), "target at most 1.0");
    } else {
      print_ratio("p50, port 2006", percentile(probes[1].ms, 0.5), percentile(probes[2].ms, 0.5), "bridge / ser2net");
    }
  }
  const std::vector<double>& binary_commands = with_nodelay[0];
  const std::vector<double>& json_commands = with_nodelay[1];
  const std::vector<double> raw_commands = compared ? with_nodelay[2] : std::vector<double>{};

  std::printf(
      "\nSensor latency, by number of clients (\"floor\": one send() per message per client and nothing else, "
      "the least any server can do):\n");
  std::vector<Workload> at100(sensor_servers.size());
  std::vector<Workload> at1000(sensor_servers.size());
  std::vector<Workload> at1000_charged(sensor_servers.size());
  std::vector<std::string> peak_rss(sensor_servers.size());
  for (const int clients : {1, 10, 100, 1000}) {
    std::printf("  %d client%s\n", clients, clients == 1 ? "" : "s");
    std::vector<Workload> loads;
    for (std::size_t i = 0; i < sensor_servers.size(); ++i) {
      Server* server = sensor_servers[i];
      const auto connecting = Clock::now();
      auto readers = server->connect(clients);
      if (clients >= 100) {
        std::printf("    %-12s %d connections served in %.2f s\n", server->name.c_str(), clients,
                    seconds_since(connecting, Clock::now()));
      }
      loads.push_back(stream(*server, readers, options.rate_hz, options.seconds));
      print_delivery(server->name.c_str(), loads.back());
      if (clients == 100) at100[i] = loads.back();
      if (clients == 1000) {
        at1000[i] = loads.back();
        peak_rss[i] = process_status(server->pid(), "VmHWM");
        std::printf("    %-12s peak RSS %s\n", server->name.c_str(), peak_rss[i].c_str());
        if (placement.steer_receive_work(false)) {
          // The same clients, with the kernel's receive work for them done
          // on the server's core and charged to it, as loopback does.
          at1000_charged[i] = stream(*server, readers, options.rate_hz, options.seconds);
          std::printf("    %-12s the same with each client's receive work on the server's core:\n",
                      server->name.c_str());
          print_delivery("", at1000_charged[i]);
          placement.steer_receive_work(true);
        }
      }
    }
    if (compared) {
      print_ratio("p50", percentile(loads[kBridge].delivery.ms, 0.5), percentile(loads[kSer2net].delivery.ms, 0.5),
                  clients == 100 ? "target at most 0.5" : "bridge / ser2net");
      print_ratio("p99", percentile(loads[kBridge].delivery.ms, 0.99), percentile(loads[kSer2net].delivery.ms, 0.99),
                  clients == 100 ? "target at most 0.5" : "bridge / ser2net");
    }
    print_ratio("p50 to the floor", percentile(loads[kBridge].delivery.ms, 0.5),
                percentile(loads[floor_index].delivery.ms, 0.5), "bridge / floor");
  }
  const auto per_message_us = [](const Workload& load) {
    return load.delivery.messages > 0 ? 1e6 * load.cpu_s / static_cast<double>(load.delivery.messages) : 0.0;
  };
  std::printf("  CPU per message delivered to 1000 clients: flockbridge %.2f us, floor %.2f us",
              per_message_us(at1000[kBridge]), per_message_us(at1000[floor_index]));
  if (compared) std::printf(", ser2net %.2f us", per_message_us(at1000[kSer2net]));
  std::printf("; the bridge / the floor: %.2f\n",
              per_message_us(at1000[kBridge]) / per_message_us(at1000[floor_index]));

  // Ten clients that never read. The kernel lets a server's send buffer to
  // such a client grow to net.ipv4.tcp_wmem's largest (4 MiB on Debian), which
  // at 100 packets/s takes about 20 minutes to fill; so first the stalled
  // connections are filled, 20 s at 10,000 packets/s (6.8 MB each, far above
  // the serial line's rate, but nothing is measured then), and then everyone
  // else is measured as before.
  // The same 100 readers are measured just before the stalled clients
  // come and just after, so that the machine's drift does not pass for
  // their effect.
  std::printf(
      "\n100 reading clients, then the same with 10 more that never read (the connections to those filled "
      "first):\n");
  std::vector<Workload> calm(servers.size());
  std::vector<Workload> stalled(servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    Server* server = servers[i];
    auto readers = server->connect(100);
    calm[i] = stream(*server, readers, options.rate_hz, options.seconds);
    print_delivery(server->name.c_str(), calm[i]);
    auto sleepers = server->connect(10, 4096);
    (void)stream(*server, readers, 10000, 20);
    stalled[i] = stream(*server, readers, options.rate_hz, options.seconds);
    print_delivery("  stalled", stalled[i]);
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
  std::printf("  it sustains %.0f packets/s to 1000 clients: %.0f%% of the line's most\n", best_rate[kBridge],
              100 * best_rate[kBridge] * kFrameWireMs / 1000);

  std::printf("\nTargets:\n");
  const auto verdict = [](bool met) { return met ? "met" : "MISSED"; };
  if (compared) {
    const double p50_ratio = percentile(at100[kBridge].delivery.ms, 0.5) / percentile(at100[kSer2net].delivery.ms, 0.5);
    const double p99_ratio =
        percentile(at100[kBridge].delivery.ms, 0.99) / percentile(at100[kSer2net].delivery.ms, 0.99);
    std::printf("  sensor latency with 100 clients at most half of ser2net's: p50 %.2f, p99 %.2f: %s\n", p50_ratio,
                p99_ratio, verdict(p50_ratio <= 0.5 && p99_ratio <= 0.5));
    const MedianRatio json_ratio = median_ratio(json_commands, raw_commands);
    const MedianRatio binary_ratio = median_ratio(binary_commands, raw_commands);
    const bool met = json_ratio.ratio <= 1.0 && binary_ratio.ratio <= 1.0;
    const bool within_noise = json_ratio.low <= 1.0 && binary_ratio.low <= 1.0;
    std::printf(
        "  command latency p50 no worse than ser2net's (TCP_NODELAY clients): %.2f (port 2006, 95%% interval "
        "%.2f-%.2f), %.2f (port 2005, %.2f-%.2f): %s\n",
        json_ratio.ratio, json_ratio.low, json_ratio.high, binary_ratio.ratio, binary_ratio.low, binary_ratio.high,
        met            ? "met"
        : within_noise ? "MISSED, but within this machine's noise"
                       : "MISSED");
  }
  const double cpu_share = at1000[kBridge].cpu_s / at1000[kBridge].wall_s;
  const double floor_share = at1000[floor_index].cpu_s / at1000[floor_index].wall_s;
  std::printf("  1000 JSON subscribers at %.0f packets/s under a quarter of a core: %.0f%%%s (the floor: %.0f%%): %s\n",
              options.rate_hz, 100 * cpu_share,
              placement.isolated() ? ", the bridge's own work" : ", with the clients' receive work", 100 * floor_share,
              verdict(cpu_share < 0.25));
  const long rss_kb = std::atol(peak_rss[kBridge].c_str());
  std::printf("  peak memory with 1000 clients under 16 MiB: %s: %s\n", peak_rss[kBridge].c_str(),
              verdict(rss_kb > 0 && rss_kb < 16L * 1024));
  const double calm50 = percentile(calm[kBridge].delivery.ms, 0.5);
  const double with_sleepers = percentile(stalled[kBridge].delivery.ms, 0.5);
  const double calm99 = percentile(calm[kBridge].delivery.ms, 0.99);
  const double with_sleepers99 = percentile(stalled[kBridge].delivery.ms, 0.99);
  std::printf(
      "  no measurable change from 10 stalled clients: p50 %.3f -> %.3f ms, p99 %.3f -> %.3f ms, none "
      "missed: %s\n",
      calm50, with_sleepers, calm99, with_sleepers99,
      verdict(stalled[kBridge].delivery.missed == 0 &&
              stalled[kBridge].delivery.messages >= stalled[kBridge].expected && with_sleepers <= calm50 * 1.1 + 0.1));
  std::printf("  highest loss-free rate to 1000 clients: flockbridge %.0f/s%s\n", best_rate[kBridge],
              compared ? (", ser2net " + std::to_string(static_cast<int>(best_rate[kSer2net])) + "/s").c_str() : "");

  bridge->process->terminate();
  if (ser2net) ser2net->process->terminate();
  floor->process->terminate();
  std::filesystem::remove_all(directory);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string_view(argv[1]) == "--floor-server") return floor_server(argv[2]);
    const Options options = parse(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
    // Before any thread starts: a namespace change applies to one thread only.
    const Placement placement = Placement::arrange(options.isolate);
    run(options, placement);  // its servers stop as it unwinds, whatever happens
  } catch (const std::exception& error) {
    std::printf("compare_bench: stopped: %s\n", error.what());
    return 1;
  }
  return 0;
}
