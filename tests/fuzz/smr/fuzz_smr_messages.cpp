// libFuzzer: the SMR message decoder (SMRD's clients and the RS485 bus use
// the same framing), fed the input in pieces whose sizes come from the input
// itself. Every message must have at most 31 bytes after the first and
// encode back to the bytes it came from; the decoder must account for every
// byte; every bus message is read as a module reply and as a speed command,
// and a power reply must encode back to itself; every control message is
// read as a period START, which must encode back to itself.
//
// The same pieces reach the bridge's bus link as the modules' replies, with
// its periods passing as they come: it must relay every whole message it
// read, deliver each period at most once and with only what came, and
// account for every byte.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/link.hpp"
#include "flockbridge/protocol/smr/messages.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;

namespace {

bool same_bytes(ByteView a, ByteView b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// The bus link's events, checked as they come.
struct Checked final : LinkEvents {
  std::uint64_t relayed = 0;  ///< bytes of whole messages relayed
  std::uint32_t last_delivered = 0;
  void transmit(ByteView bytes) override {
    if (bytes.size() < kPeriodBytes) __builtin_trap();
  }
  void link_changed(LinkState, std::string_view) override {}
  void period_ended() override {}
  void period_started(const PeriodStart&, ByteView, ByteView) override {}
  void bus_messages(ByteView messages) override { relayed += messages.size(); }
  void period_complete(const Period& period) override {
    if (period.start.tick <= last_delivered || period.reading.parts == 0) __builtin_trap();
    last_delivered = period.start.tick;
  }
  void command_finished(CommandToken, const Error*) override {}
  void power_switch(bool) override {}
};

/// Feeds the whole input to a bus link, a period passing every few pieces.
void run_link(ByteView input) {
  Checked events;
  Link link(LinkSettings{}, events);
  SteadyTime now{};
  link.port_opened(now);
  link.tick(now);
  std::size_t at = 0;
  std::size_t step = 1;
  while (at < input.size()) {
    const std::size_t n = std::min(step, input.size() - at);
    link.bytes_received(input.subspan(at, n), now);
    at += n;
    step = 1 + (step * 3 + n) % 23;
    now += std::chrono::milliseconds(1 + n % 7);
    link.tick(now);
  }
  const LinkStats stats = link.stats();
  if (stats.decoder.bytes != input.size() || events.relayed > input.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  MessageDecoder decoder;
  const ByteView input(data, size);
  Reading reading;
  std::size_t at = 0;
  std::size_t step = 1;
  std::size_t consumed = 0;
  std::uint64_t known = 0;
  std::uint64_t unknown = 0;
  while (at < input.size()) {
    const std::size_t n = std::min(step, input.size() - at);
    decoder.feed(input.subspan(at, n));
    at += n;
    step = 1 + (step * 5 + n) % 17;
    while (const auto message = decoder.next()) {
      if (message->body.size() > kMaxBody || message->type > 7) __builtin_trap();
      const ByteView original = input.subspan(consumed, 1 + message->body.size());
      consumed += original.size();
      (is_known_type(message->type) ? known : unknown) += 1;
      if (!same_bytes(encode_message(static_cast<MessageType>(message->type), message->body), original)) {
        __builtin_trap();
      }
      if (message->type == static_cast<std::uint8_t>(MessageType::Bus)) {
        const unsigned filled = apply_reply(message->body, reading);
        if ((filled & ~reading.parts) != 0) __builtin_trap();
        if (filled == part::kPower && !same_bytes(encode_power(reading.digital, reading.analog), original)) {
          __builtin_trap();
        }
        if (const auto speed = read_speed(message->body); speed && speed->speed != -128) {
          if (!same_bytes(encode_speed(speed->module, speed->speed), original)) __builtin_trap();
        }
      }
      if (message->type == static_cast<std::uint8_t>(MessageType::Control)) {
        if (const auto start = read_period_start(message->body)) {
          if (!same_bytes(encode_period_start(start->tick, start->ts), original)) __builtin_trap();
        }
      }
    }
    if (n == 1 && input[at - 1] == 0x55 && decoder.in_message()) {
      // Bytes that stopped coming: what was fed of the message is given up.
      std::size_t held = at - consumed;
      decoder.abandon();
      consumed += held;
    }
  }
  const DecoderStats& stats = decoder.stats();
  if (stats.messages != known || stats.unknown_type != unknown || stats.bytes != input.size()) __builtin_trap();
  run_link(input);
  return 0;
}
