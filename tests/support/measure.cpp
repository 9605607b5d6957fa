#include "support/measure.hpp"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <fstream>

namespace flockbridge::testing {

std::string process_status(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      line.erase(0, field.size() + 1);
      line.erase(0, line.find_first_not_of(" \t"));
      return line;
    }
  }
  return "?";
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(p * static_cast<double>(sorted.size())))];
}

namespace {

TcpClient& socket_of(TcpClient& client) {
  return client;
}
TcpClient& socket_of(WebSocketClient& client) {
  return client.tcp();
}
TcpClient& socket_of(FoxgloveClient& client) {
  return client.tcp();
}

}  // namespace

template <typename Client>
SensorLatency read_sensor_latency(std::vector<Client>& readers, std::vector<long>& last_seq, double seconds) {
  SensorLatency result;
  std::vector<pollfd> fds;
  fds.reserve(readers.size());
  for (auto& r : readers) fds.push_back({socket_of(r).fd(), POLLIN, 0});
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    ::poll(fds.data(), fds.size(), 50);
    const double wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (std::size_t i = 0; i < readers.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      socket_of(readers[i]).drain_available();
      while (auto message = readers[i].read_json(std::chrono::milliseconds(0))) {
        if ((*message)["type"] != "sensor") continue;
        const long seq = (*message)["seq"];
        if (last_seq[i] != 0 && seq > last_seq[i] + 1) result.missed += seq - last_seq[i] - 1;
        last_seq[i] = seq;
        result.ms.push_back((wall - (*message)["ts"].template get<double>()) * 1000.0);
      }
    }
  }
  std::sort(result.ms.begin(), result.ms.end());
  return result;
}

template SensorLatency read_sensor_latency(std::vector<TcpClient>&, std::vector<long>&, double);
template SensorLatency read_sensor_latency(std::vector<WebSocketClient>&, std::vector<long>&, double);
template SensorLatency read_sensor_latency(std::vector<FoxgloveClient>&, std::vector<long>&, double);

}  // namespace flockbridge::testing
