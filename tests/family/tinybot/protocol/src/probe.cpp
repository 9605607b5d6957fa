#include "flockbridge/protocol/tinybot/probe.hpp"

#include <array>

namespace flockbridge::protocol::tinybot {

std::span<const ProbeSpeed> TinybotProbe::speeds() const noexcept {
  static constexpr std::array<ProbeSpeed, 1> kSpeeds{ProbeSpeed{115200, std::chrono::milliseconds{300}}};
  return kSpeeds;
}

Bytes TinybotProbe::start(std::size_t /*index*/) {
  lines_.clear();
  // A line end first: what other probes left on the line ends there, and PING is a line of its own.
  Bytes ping{'\n'};
  const Bytes line = encode_ping();
  ping.insert(ping.end(), line.begin(), line.end());
  return ping;
}

ProbeStep TinybotProbe::feed(ByteView bytes) {
  lines_.feed(bytes);
  while (auto line = lines_.next()) {
    if (*line == "PONG") return ProbeStep::recognised("PONG to PING at 115200 baud");
    if (read_reading(*line)) return ProbeStep::recognised("its readings, at 115200 baud");
    if (*line == "PING") return ProbeStep::ruled_out();  // our own PING, echoed
  }
  return {};
}

}  // namespace flockbridge::protocol::tinybot
