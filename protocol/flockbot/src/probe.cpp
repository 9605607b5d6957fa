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

bool FlockbotProbe::may_be_on(const std::optional<UsbIdentity>& usb) const noexcept {
  if (!usb) return true;  // a board's UART, or not known
  static constexpr std::array<UsbIdentity, 6> kUnos{
      {{0x2341, 0x0001}, {0x2341, 0x0043}, {0x2341, 0x0243}, {0x2a03, 0x0043}, {0x1a86, 0x7523}, {0x1a86, 0x5523}}};
  return std::find(kUnos.begin(), kUnos.end(), *usb) != kUnos.end();
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
