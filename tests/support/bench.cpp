#include "support/bench.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "support/measure.hpp"

namespace flockbridge::testing::bench {

using namespace std::chrono_literals;

double seconds_since(Clock::time_point start, Clock::time_point at) {
  return std::chrono::duration<double>(at - start).count();
}

namespace {

/// utime + stime, in clock ticks (10 ms): coarse for a server that works a
/// few percent of a core.
double cpu_seconds_in_ticks(pid_t pid) {
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

}  // namespace

double cpu_seconds(pid_t pid) {
  // Each thread's time on a CPU, in nanoseconds (the first field of its
  // schedstat), summed over the process's threads.
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code error;
  unsigned long long total_ns = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream in(task.path() / "schedstat");
    unsigned long long ns = 0;
    if (in >> ns) {
      total_ns += ns;
      any = true;
    }
  }
  return any ? static_cast<double>(total_ns) / 1e9 : cpu_seconds_in_ticks(pid);
}

// --- PtyEnd ----------------------------------------------------------------

PtyEnd::PtyEnd(OnRead on_read) : on_read_(std::move(on_read)) {
  master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) throw std::runtime_error("no pty");
  ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
  slave_path_ = ::ptsname(master_);
  // Keep a slave open ourselves, so that the master never sees a hang-up
  // while the server (re)opens the device.
  keep_open_ = ::open(slave_path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  reader_ = std::thread([this] { read_loop(); });
}

PtyEnd::~PtyEnd() {
  stopping_ = true;
  reader_.join();
  ::close(keep_open_);
  ::close(master_);
}

void PtyEnd::write_all(protocol::ByteView bytes) {
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

void PtyEnd::read_loop() {
  std::vector<std::uint8_t> buffer(4096);
  while (!stopping_) {
    pollfd readable{master_, POLLIN, 0};
    if (::poll(&readable, 1, 100) <= 0) continue;
    const ssize_t n = ::read(master_, buffer.data(), buffer.size());
    if (n <= 0) continue;
    on_read_(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)), Clock::now());
  }
}

// --- Sensor packets ----------------------------------------------------------

WallClock::time_point SensorSource::sent_at(std::uint32_t seq) {
  std::lock_guard lock(sent_mutex_);
  return seq < sent_.size() ? sent_[seq] : WallClock::time_point{};
}

void SensorSource::mark_sent(std::uint32_t seq) {
  std::lock_guard lock(sent_mutex_);
  if (sent_.size() <= seq) sent_.resize(seq + 1024);
  sent_[seq] = WallClock::now();
}

void CommandLog::add(protocol::ByteView bytes, Clock::time_point at) {
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(Entry{protocol::Bytes(bytes.begin(), bytes.end()), at});
  }
  arrived_.notify_all();
}

std::size_t CommandLog::size() {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::optional<CommandLog::Entry> CommandLog::wait_for(std::size_t from, const std::function<bool(const Entry&)>& match,
                                                      std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  std::optional<Entry> found;
  arrived_.wait_for(lock, timeout, [&] {
    for (; from < entries_.size() && !found; ++from) {
      if (match(entries_[from])) found = entries_[from];
    }
    return found.has_value();
  });
  return found;
}

SensorStream::SensorStream(SensorSource& source, double rate_hz)
    : thread_([this, &source, rate_hz] {
        if (rate_hz <= 0) return;
        const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_hz));
        auto due = Clock::now();
        while (!stopping_) {
          source.send_sensor(source.next_seq++);
          ++sent_;
          due += period;
          std::this_thread::sleep_until(due);  // the load's pace, not synchronisation
        }
      }) {}

void SensorStream::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

// --- Readers -----------------------------------------------------------------

SeqParser json_lines(long (*seq)(std::string_view line)) {
  return [seq, pending = std::string()](std::string_view bytes, std::vector<long>& seqs) mutable {
    pending.append(bytes);
    std::size_t start = 0;
    for (std::size_t newline; (newline = pending.find('\n', start)) != std::string::npos; start = newline + 1) {
      const long found = seq(std::string_view(pending).substr(start, newline - start));
      if (found >= 0) seqs.push_back(found);
    }
    pending.erase(0, start);
  };
}

namespace {

/// The number after `key` in a JSON line, or nothing.
std::optional<long> json_number_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  long value = 0;
  if (std::from_chars(line.data() + at + key.size(), line.data() + line.size(), value).ec != std::errc{}) {
    return std::nullopt;
  }
  return value;
}

long from_halves(long low, long high) {
  return static_cast<long>(static_cast<std::uint16_t>(low)) |
         (static_cast<long>(static_cast<std::uint16_t>(high)) << 16);
}

}  // namespace

long json_seq(std::string_view line, std::string_view object, std::string_view low, std::string_view high) {
  const auto start = line.find(object);
  if (start == std::string_view::npos) return -1;
  line.remove_prefix(start);
  const auto low_half = json_number_after(line, low);
  const auto high_half = json_number_after(line, high);
  return low_half && high_half ? from_halves(*low_half, *high_half) : -1;
}

long packet_seq(protocol::ByteView payload, std::size_t at) {
  if (payload.size() < at + 4) return -1;
  return from_halves(protocol::read_u16le(payload, at), protocol::read_u16le(payload, at + 2));
}

Reader timestamped_reader(TcpClient connection, SeqParser parse) {
  const int on = 1;
  ::setsockopt(connection.fd(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
  return Reader{std::move(connection), std::move(parse), -1};
}

Reader open_reader(std::uint16_t port, SeqParser parse, int receive_buffer) {
  return timestamped_reader(TcpClient(port, receive_buffer, kWifiMss), std::move(parse));
}

std::vector<Reader> connect_readers(int count, std::size_t window, const std::function<Reader()>& open,
                                    const std::string& who) {
  std::vector<Reader> readers;
  readers.reserve(static_cast<std::size_t>(count));
  std::vector<std::size_t> waiting;
  char sink[4096];
  while (readers.size() < static_cast<std::size_t>(count) || !waiting.empty()) {
    while (readers.size() < static_cast<std::size_t>(count) && waiting.size() < window) {
      readers.push_back(open());
      waiting.push_back(readers.size() - 1);
    }
    std::vector<pollfd> polls;
    polls.reserve(waiting.size());
    for (const std::size_t i : waiting) polls.push_back(pollfd{readers[i].connection.fd(), POLLIN, 0});
    if (::poll(polls.data(), polls.size(), 5000) <= 0) {
      throw std::runtime_error(who + " did not serve a new connection within 5 s");
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

void read_for(std::vector<Reader>& readers, SensorSource& source, double seconds, long first_seq, Delivery& delivery) {
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = i;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, readers[i].connection.fd(), &event);
  }
  std::vector<epoll_event> events(256);
  std::vector<char> buffer(65536);
  std::vector<long> seqs;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    const int ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 50);
    const WallClock::time_point now = WallClock::now();
    for (int e = 0; e < ready; ++e) {
      Reader& reader = readers[events[static_cast<std::size_t>(e)].data.u64];
      const auto received = receive_timestamped(reader.connection.fd(), buffer, now);
      if (!received) continue;
      const WallClock::time_point arrived = received->at;
      seqs.clear();
      reader.parse(std::string_view(buffer.data(), received->bytes), seqs);
      for (const long seq : seqs) {
        if (seq < first_seq) continue;
        const WallClock::time_point sent = source.sent_at(static_cast<std::uint32_t>(seq));
        if (sent != WallClock::time_point{}) {
          delivery.ms.push_back(std::chrono::duration<double, std::milli>(arrived - sent).count());
          delivery.read_ms.push_back(std::chrono::duration<double, std::milli>(now - sent).count());
        }
        if (reader.last_seq >= 0 && seq > reader.last_seq + 1) delivery.missed += seq - reader.last_seq - 1;
        reader.last_seq = std::max(reader.last_seq, seq);
        ++delivery.messages;
      }
    }
  }
  ::close(epoll);
}

Workload stream(SensorSource& source, pid_t server, std::vector<Reader>& readers, double rate_hz, double seconds) {
  // Settle: every reader has its first message before the measured phase.
  {
    Delivery ignored;
    SensorStream warmup(source, rate_hz);
    read_for(readers, source, 0.5, 0, ignored);
  }
  for (Reader& reader : readers) reader.last_seq = -1;
  Workload load;
  const long first_seq = source.next_seq;
  const double cpu_before = cpu_seconds(server);
  const auto started = Clock::now();
  SensorStream sensors(source, rate_hz);
  read_for(readers, source, seconds, first_seq, load.delivery);
  sensors.stop();
  load.wall_s = seconds_since(started, Clock::now());
  load.cpu_s = cpu_seconds(server) - cpu_before;
  const long sent = rate_hz > 0 ? sensors.sent() : static_cast<long>(source.next_seq) - first_seq;
  load.expected = sent * static_cast<long>(readers.size());
  // What is still on its way counts too; a server that is behind has a
  // backlog here, and what is not in by the end of the drain was late.
  read_for(readers, source, 0.3, first_seq, load.delivery);
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

// --- Placement -----------------------------------------------------------------

namespace {

constexpr std::size_t kCpus = CPU_SETSIZE;

/// Brings the namespace's loopback up, with one more address on it:
/// ser2net resolves its accepter's address with AI_ADDRCONFIG, which
/// finds no IPv4 at all in a namespace that has only 127.0.0.1.
bool bring_loopback_up() {
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
std::string cpu_mask(const cpu_set_t& set) {
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

}  // namespace

Placement Placement::arrange(bool wanted) {
  Placement placement;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (!wanted) return placement.refused("--in-place was given");
  if (::geteuid() != 0) return placement.refused("not run as root (scripts/compare.sh uses sudo)");
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2) {
    return placement.refused("fewer than two cores");
  }
  if (::unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) return placement.refused(std::string("unshare: ") + strerror(errno));
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

std::string Placement::describe() const {
  if (!isolated_) {
    return "in place (" + why_not_ +
           "): the loopback does each client's receive work on the sending server's core, and it is charged to "
           "the server";
  }
  return "in a network namespace of its own; servers on core " + std::to_string(server_cpu_) +
         ", clients and the loopback's receive work (RPS mask " + client_mask_ + ") on the others";
}

std::vector<std::string> Placement::server_prefix() const {
  if (!isolated_) return {};
  return {"taskset", "-c", std::to_string(server_cpu_)};
}

void Placement::join_server_core() const {
  if (!isolated_) return;
  cpu_set_t core;
  CPU_ZERO(&core);
  CPU_SET(static_cast<std::size_t>(server_cpu_), &core);
  ::pthread_setaffinity_np(::pthread_self(), sizeof(core), &core);
}

std::vector<std::string> Placement::server_command(const std::vector<std::string>& command) const {
  std::vector<std::string> whole = server_prefix();
  whole.insert(whole.end(), command.begin(), command.end());
  return whole;
}

bool Placement::steer_receive_work(bool to_clients) const {
  if (!isolated_) return false;
  std::ofstream rps("/sys/class/net/lo/queues/rx-0/rps_cpus");
  rps << (to_clients ? client_mask_ : "0") << std::flush;
  return static_cast<bool>(rps);
}

Placement Placement::refused(std::string why) {
  why_not_ = std::move(why);
  isolated_ = false;
  return *this;
}

// --- The servers -------------------------------------------------------------

std::string bridge_under_test() {
  const char* other = std::getenv("FLOCKBRIDGE_BENCH_BRIDGE");
  return other != nullptr && *other != '\0' ? other : FLOCKBRIDGE_BIN;
}

StartedBridge start_flockbridge(const Placement& placement, const std::string& device,
                                const std::vector<std::string>& extra) {
  std::vector<std::string> command{bridge_under_test(),
                                   "--no-config",
                                   "--mdns-service-file",
                                   "",
                                   "--device",
                                   device,
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--json-port",
                                   "0",
                                   "--no-http",
                                   "--max-clients",
                                   "2000",
                                   "--stall-timeout-ms",
                                   "600000",
                                   "--command-rate",
                                   "100000",
                                   "--command-burst",
                                   "100000",
                                   "--stats-interval-s",
                                   "0"};
  command.insert(command.end(), extra.begin(), extra.end());
  // FLOCKBRIDGE_BENCH_BRIDGE_ARGS: more of the daemon's options, separated by
  // spaces (--record DIR: the same run with the recording on).
  if (const char* more = std::getenv("FLOCKBRIDGE_BENCH_BRIDGE_ARGS"); more != nullptr) {
    std::istringstream words(more);
    for (std::string word; words >> word;) command.push_back(word);
  }
  StartedBridge bridge{std::make_unique<ChildProcess>(placement.server_command(command)), {}};
  const auto listening = bridge.process->wait_for(ChildProcess::Stream::Stderr, "listening: ");
  const auto ports = listening ? listening_ports(*listening) : std::nullopt;
  if (!ports) throw std::runtime_error("flockbridge did not start");
  bridge.ports = *ports;
  return bridge;
}

void await_link_up(ChildProcess& bridge) {
  if (bridge.wait_for(ChildProcess::Stream::Stderr, "robot link up")) return;
  for (const std::string& line : bridge.lines(ChildProcess::Stream::Stderr)) {
    std::printf("  flockbridge: %s\n", line.c_str());
  }
  throw std::runtime_error("the bridge's link to the robot did not come up");
}

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

std::unique_ptr<ChildProcess> start_ser2net(const Placement& placement, const std::filesystem::path& directory,
                                            const std::string& device, int baud, std::uint16_t port) {
  const auto config = directory / ("ser2net-" + std::to_string(port) + ".yaml");
  // nodelay: ser2net leaves Nagle's algorithm on by default, which would
  // hold small writes back; the comparison is with ser2net at its fastest.
  std::ofstream(config) << "%YAML 1.1\n---\nconnection: &bench\n  accepter: tcp(nodelay),127.0.0.1," << port
                        << "\n  connector: serialdev," << device << "," << baud
                        << "n81,local\n  options:\n    max-connections: 2000\n    chardelay: false\n"
                           "    kickolduser: false\n";
  auto process = std::make_unique<ChildProcess>(placement.server_command({"ser2net", "-n", "-d", "-u", "-c", config}));
  // ser2net says nothing when it is ready: a connection that succeeds is the event.
  const auto deadline = Clock::now() + 10s;
  while (true) {
    try {
      TcpClient probe(port);
      break;
    } catch (const std::exception&) {
      if (Clock::now() > deadline) throw std::runtime_error("ser2net did not start");
      std::this_thread::sleep_for(20ms);  // polling a server that gives no signal
    }
  }
  return process;
}

}  // namespace flockbridge::testing::bench
