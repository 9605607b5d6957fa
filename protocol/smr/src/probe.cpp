#include "flockbridge/protocol/smr/probe.hpp"

#include <array>

#include "flockbridge/protocol/smr/bus.hpp"

namespace flockbridge::protocol::smr {
namespace {

using namespace std::chrono_literals;

constexpr std::array<ProbeSpeed, 1> kSpeeds{{{115200, 300ms}}};

/// A poll as SMRD sends it: the module's number, then its zeros.
void add_poll(Bytes& out, Byte module, std::size_t padding) {
  const Byte body[] = {module};
  const Bytes request = encode_message(MessageType::Bus, body);
  out.insert(out.end(), request.begin(), request.end());
  out.insert(out.end(), padding, Byte{0});
}

}  // namespace

std::span<const ProbeSpeed> SmrProbe::speeds() const noexcept {
  return kSpeeds;
}

Bytes SmrProbe::start(std::size_t /*index*/) {
  decoder_ = MessageDecoder();
  answered_ = 0;
  // First as many zeros as the longest message's body: a module's reader
  // that what came before (another family's probe) left inside a message
  // is back at a message's start, as SMRD's padding puts it every period.
  Bytes polls(kMaxBody, Byte{0});
  add_poll(polls, module::kLeftMotor, 10);
  add_poll(polls, module::kPower, 16);
  return polls;
}

ProbeStep SmrProbe::feed(ByteView bytes) {
  decoder_.feed(bytes);
  while (const auto message = decoder_.next()) {
    const ByteView body = message->body;
    // The zeros between polls, and the polls themselves heard back.
    if (body.empty() || (body.size() == 1 && (body[0] == module::kLeftMotor || body[0] == module::kPower))) continue;
    Reading reading;
    const unsigned part = message->type == static_cast<std::uint8_t>(MessageType::Bus) ? apply_reply(body, reading) : 0;
    if (part != part::kLeft && part != part::kPower) return ProbeStep::ruled_out();
    answered_ |= part;
    if (answered_ == (part::kLeft | part::kPower)) {
      return ProbeStep::recognised("the left motor and the power module answered their polls at 115200 baud");
    }
  }
  return {};
}

}  // namespace flockbridge::protocol::smr
