#include "flockbridge/protocol/pioneer/probe.hpp"

#include <array>
#include <string>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"

namespace flockbridge::protocol::pioneer {
namespace {

using namespace std::chrono_literals;

// 9600 first: the speed AROS starts at. Each wait holds the three SYNCs'
// round trips and the identity's 40-odd bytes at that speed, with room.
constexpr std::array<ProbeSpeed, 5> kSpeeds{
    {{9600, 400ms}, {19200, 300ms}, {38400, 300ms}, {57600, 300ms}, {115200, 300ms}}};

}  // namespace

std::span<const ProbeSpeed> PioneerProbe::speeds() const noexcept {
  return kSpeeds;
}

Bytes PioneerProbe::start(std::size_t index) {
  decoder_ = PacketDecoder();
  baud_ = kSpeeds.at(index).baud;
  answered_ = 0;
  return encode_packet(command::kSync0);
}

ProbeStep PioneerProbe::feed(ByteView bytes) {
  decoder_.feed(bytes);
  const std::string at = " at " + std::to_string(baud_) + " baud";
  while (const auto event = decoder_.next()) {
    if (event->kind != PacketDecoder::EventKind::Packet) continue;
    if (is_standard_sip(event->type)) {
      return ProbeStep::recognised("SIPs" + at + " (its servers were left open)");
    }
    if (answered_ < 2 && event->type == answered_ && event->payload.empty()) {
      ++answered_;  // SYNC0 or SYNC1 answered: the next
      return ProbeStep::reply(encode_packet(answered_ == 1 ? command::kSync1 : command::kSync2));
    }
    if (answered_ == 2) {
      auto identity = decode_identity(event->payload);
      if (!identity) return ProbeStep::ruled_out();  // SYNC2 came back as it went: an echo
      return ProbeStep::recognised("SYNC0, SYNC1 and SYNC2 answered" + at + " by \"" + identity.value().name + "\" (" +
                                       identity.value().type + ")",
                                   identity.value().subtype);
    }
  }
  return {};
}

}  // namespace flockbridge::protocol::pioneer
