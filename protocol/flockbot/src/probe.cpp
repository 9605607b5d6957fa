#include "flockbridge/protocol/flockbot/probe.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace flockbridge::protocol::flockbot {
namespace {

using namespace std::chrono_literals;

constexpr std::array<ProbeSpeed, 1> kSpeeds{{{115200, 2500ms}}};

}  // namespace

std::span<const ProbeSpeed> FlockbotProbe::speeds() const noexcept {
  return kSpeeds;
}

Bytes FlockbotProbe::start(std::size_t /*index*/) {
  decoder_ = FrameDecoder();
  return {};
}

ProbeStep FlockbotProbe::feed(ByteView bytes) {
  decoder_.feed(bytes);
  constexpr std::string_view kAck = "ACK";
  while (const auto event = decoder_.next()) {
    if (event->kind == FrameDecoder::EventKind::Frame &&
        std::equal(event->payload.begin(), event->payload.end(), kAck.begin(), kAck.end())) {
      return ProbeStep::recognised("the Uno's boot ACK at 115200 baud");
    }
  }
  return {};
}

}  // namespace flockbridge::protocol::flockbot
