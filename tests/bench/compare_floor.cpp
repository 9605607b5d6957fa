// The floor: the least any server can do to pass a robot's readings on as
// JSON lines, at the size of the bridge's own sensor message of the same
// robot. It reads the pseudo-terminal (polling the robot every period when
// it is polled, as an SMR's bus is), finds the family's readings in its
// bytes, formats one line with one snprintf per reading, and writes it to
// every client with one send() each: no queues, no subscriptions, nothing
// for slow clients (one whose send would block is cut off). Whatever a real
// server spends beyond this is its own overhead. It runs as a process of
// its own, `compare_bench --floor-server ROBOT DEVICE BYTES`, and says
// "listening: json=PORT" on stderr.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/compare.hpp"
#include "support/process.hpp"
#include "support/tcp_client.hpp"

namespace flockbridge::testing::bench {

namespace {

FloorRecipe recipe_for(const std::string& robot) {
  if (robot == "pioneer") return pioneer_floor();
  if (robot == "smr") return smr_floor();
  return flockbot_floor();
}

int listen_on_loopback() {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener, SOMAXCONN) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return -1;
  }
  std::fprintf(stderr, "listening: json=%u\n", ntohs(address.sin_port));
  return listener;
}

/// A 10 ms timer for a polled robot; -1 for one that sends unasked.
int poll_timer(const FloorRecipe& recipe) {
  if (recipe.poll.empty()) return -1;
  const int timer = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  const itimerspec every{{0, 10'000'000}, {0, 10'000'000}};
  ::timerfd_settime(timer, 0, &every, nullptr);
  return timer;
}

/// One reading's line, `bytes` long with its newline.
void format_line(std::string& line, const FloorRecipe& recipe, unsigned long seq, long robot_seq, std::size_t bytes) {
  char head[96];
  const int size = std::snprintf(head, sizeof(head), "{\"type\":\"sensor\",\"seq\":%lu,\"ts\":%.6f,", seq,
                                 std::chrono::duration<double>(WallClock::now().time_since_epoch()).count());
  line.assign(head, static_cast<std::size_t>(size));
  line += recipe.keys(robot_seq);
  line += ",\"pad\":\"";
  constexpr std::size_t kEnd = 3;  // "}\n
  if (line.size() + kEnd < bytes) line.append(bytes - line.size() - kEnd, 'x');
  line += "\"}\n";
}

}  // namespace

int floor_server(const std::string& robot, const std::string& device, std::size_t bytes) {
  const FloorRecipe recipe = recipe_for(robot);
  SeqParser readings = recipe.robot;
  const int serial = ::open(device.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  termios mode{};
  if (serial < 0 || ::tcgetattr(serial, &mode) != 0) return 1;
  ::cfmakeraw(&mode);
  ::tcsetattr(serial, TCSANOW, &mode);
  const int listener = listen_on_loopback();
  if (listener < 0) return 1;
  const int timer = poll_timer(recipe);
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (const int fd : {listener, serial, timer}) {
    if (fd < 0) continue;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
  }
  std::vector<int> clients;
  unsigned long seq = 0;
  std::vector<long> seqs;
  std::string line;
  std::array<char, 4096> buffer{};
  std::array<epoll_event, 8> events{};
  for (;;) {
    const int ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), -1);
    for (int e = 0; e < ready; ++e) {
      const int fd = events[static_cast<std::size_t>(e)].data.fd;
      if (fd == listener) {
        for (int client; (client = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
          const int on = 1;
          ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
          clients.push_back(client);
        }
        continue;
      }
      if (fd == timer) {
        std::uint64_t expirations = 0;
        (void)::read(timer, &expirations, sizeof(expirations));
        (void)::write(serial, recipe.poll.data(), recipe.poll.size());
        continue;
      }
      const ssize_t n = ::read(serial, buffer.data(), buffer.size());
      // The other end of the pseudo-terminal gone (the benchmark ended or was
      // killed): the terminal reads EIO for ever, and the server would spin.
      if (n < 0 && errno != EAGAIN && errno != EINTR) return 0;
      if (n <= 0) continue;
      seqs.clear();
      readings(std::string_view(buffer.data(), static_cast<std::size_t>(n)), seqs);
      for (const long robot_seq : seqs) {
        format_line(line, recipe, ++seq, robot_seq, bytes);
        for (int& client : clients) {
          if (client >= 0 &&
              ::send(client, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
            ::close(client);
            client = -1;
          }
        }
        std::erase(clients, -1);
      }
    }
  }
}

Floor start_floor(const Placement& placement, const std::string& robot, const std::string& device, std::size_t bytes) {
  Floor floor;
  floor.process = std::make_unique<ChildProcess>(
      placement.server_command({std::filesystem::read_symlink("/proc/self/exe").string(), "--floor-server", robot,
                                device, std::to_string(bytes)}));
  const auto listening = floor.process->wait_for(ChildProcess::Stream::Stderr, "listening: json=");
  if (!listening) throw std::runtime_error("the floor server did not start");
  floor.port = static_cast<std::uint16_t>(std::atoi(listening->c_str() + listening->find('=') + 1));
  return floor;
}

FloorServer::FloorServer(const Placement& placement, const std::string& robot, SensorSource& source,
                         const std::string& device, std::size_t bytes, long (*seq)(std::string_view), double rate_hz)
    : floor_(start_floor(placement, robot, device, bytes)), source_(source), seq_(seq), rate_hz_(rate_hz) {}

Workload FloorServer::measure(double seconds, int clients) {
  std::vector<Reader> readers;
  {
    // A reader counts as connected once its first line arrives.
    std::optional<SensorStream> pacing;
    if (rate_hz_ > 0) pacing.emplace(source_, rate_hz_);
    readers = connect_readers(
        clients, 64, [&] { return open_reader(floor_.port, json_lines(seq_)); }, "floor");
  }
  Workload load = stream(source_, floor_.process->pid(), readers, rate_hz_, seconds);
  print_delivery("floor", load);
  return load;
}

double per_message_us(const Workload& load) {
  return load.delivery.messages > 0 ? 1e6 * load.cpu_s / static_cast<double>(load.delivery.messages) : 0.0;
}

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

std::string listed(const std::vector<double>& values) {
  std::string text;
  char number[32];
  for (const double value : values) {
    std::snprintf(number, sizeof(number), "%s%.2f", text.empty() ? "" : ", ", value);
    text += number;
  }
  return text;
}

}  // namespace

double FloorComparison::median_ratio() const {
  return median(ratios);
}

FloorComparison alternate_with_floor(const std::function<Workload()>& bridge_trial,
                                     const std::function<Workload()>& floor_trial, int pairs) {
  std::printf("  1000 JSON clients, the bridge and the floor taking turns:\n");
  FloorComparison comparison;
  for (int pair = 0; pair < pairs; ++pair) {
    double bridge = 0;
    double floor = 0;
    const bool bridge_first = pair % 2 == 0;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == bridge_first) {
        bridge = per_message_us(bridge_trial());
      } else {
        floor = per_message_us(floor_trial());
      }
    }
    comparison.bridge_us.push_back(bridge);
    comparison.floor_us.push_back(floor);
    comparison.ratios.push_back(floor > 0 ? bridge / floor : 0.0);
  }
  return comparison;
}

int floor_pairs(double seconds) {
  return seconds < 1 ? 1 : 3;
}

void print_floor_ratio(const FloorComparison& comparison, std::size_t bytes) {
  std::printf(
      "  CPU per message delivered to 1000 clients, the bridge and the floor taking turns (%zu pair%s, the floor's "
      "lines as long as the bridge's, %zu B): flockbridge %s us, the floor %s us; the bridge / the floor: %s, "
      "median %.2f\n",
      comparison.ratios.size(), comparison.ratios.size() == 1 ? "" : "s", bytes, listed(comparison.bridge_us).c_str(),
      listed(comparison.floor_us).c_str(), listed(comparison.ratios).c_str(), comparison.median_ratio());
}

void summarize_floor(const FloorComparison& comparison, std::size_t bytes) {
  std::printf(
      "  1000 JSON clients: the bridge's CPU per message %.2f us, the floor's %.2f us (%zu B a message, %zu pair%s "
      "of turns): %.2f times the floor (the pairs: %s)\n",
      median(comparison.bridge_us), median(comparison.floor_us), bytes, comparison.ratios.size(),
      comparison.ratios.size() == 1 ? "" : "s", comparison.median_ratio(), listed(comparison.ratios).c_str());
}

std::size_t sensor_line_bytes(std::uint16_t json_port) {
  TcpClient client(json_port);
  for (int lines = 0; lines < 1000; ++lines) {
    const auto line = client.read_line(std::chrono::seconds(5));
    if (!line) break;
    if (line->find("\"type\":\"sensor\"") != std::string::npos) return line->size() + 1;
  }
  throw std::runtime_error("the bridge sent no sensor message to measure");
}

}  // namespace flockbridge::testing::bench
