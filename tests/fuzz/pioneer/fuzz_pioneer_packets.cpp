// libFuzzer: the Pioneer/AmigoBot packet decoder, fed the input in pieces
// whose sizes come from the input itself, and every packet it reports read
// as a command, a SIP, a configuration packet and a SYNC2 answer. A packet
// must have a count within 3..200; a SIP and a configuration packet must
// encode back to the same packet (a SIP converts with every model), and a
// command to one that reads the same. Then the robot link is fed the same
// bytes, with the clock and commands driven by the input: every command it
// takes must finish exactly once.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/link.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::pioneer;

namespace {

bool same_bytes(ByteView a, ByteView b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// The robot link, fed the same bytes as if the robot had sent them: it
/// must keep its invariants whatever comes.
struct QuietEvents final : LinkEvents {
  void transmit(ByteView packet) override {
    if (packet.size() < kHeaderLength + kMinCount) __builtin_trap();
  }
  void link_changed(LinkState, std::string_view) override {}
  void sip_received(const StandardSip&, Byte type, ByteView) override {
    if (!is_standard_sip(type)) __builtin_trap();
  }
  void packet_received(Byte, ByteView) override {}
  void command_finished(CommandToken, const Error*) override { ++finished; }
  std::uint64_t finished = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  PacketDecoder decoder;
  const ByteView input(data, size);
  std::size_t at = 0;
  std::size_t step = 1;
  std::uint64_t packets = 0;
  while (at < input.size()) {
    const std::size_t n = std::min(step, input.size() - at);
    decoder.feed(input.subspan(at, n));
    at += n;
    step = 1 + (step * 5 + n) % 17;
    if (n == 1 && input[at - 1] == 0x55) (void)decoder.abandon();  // bytes that stopped coming
    while (const auto event = decoder.next()) {
      if (event->kind != PacketDecoder::EventKind::Packet) continue;
      ++packets;
      if (event->payload.size() > kMaxPayload) __builtin_trap();
      const Bytes packet = encode_packet(event->type, event->payload);
      // A command reads back the same once written (a negative zero is written as zero).
      const Command command = decode_command(event->type, event->payload);
      if (!check_command(command)) __builtin_trap();
      const Bytes written = encode_command(command);
      if (decode_command(written[3], ByteView(written).subspan(4, written.size() - 6)) != command) __builtin_trap();
      if (const auto sip = decode_standard_sip(event->type, event->payload)) {
        if (!same_bytes(encode_standard_sip(sip.value()), packet)) __builtin_trap();
        for (const RobotModel& model : robot_models()) {
          (void)convert_sip(sip.value(), model);
          PoseTracker tracker(model);
          (void)tracker.update(sip.value());
        }
      }
      if (const auto config = decode_config(event->payload); config && event->type == kConfigPacket) {
        if (!same_bytes(encode_config(config.value()), packet)) __builtin_trap();
      }
      (void)decode_identity(event->payload);
    }
  }
  if (decoder.stats().packets != packets || decoder.stats().discarded_bytes > input.size()) __builtin_trap();

  QuietEvents events;
  Link link(LinkSettings{}, events);
  SteadyTime now{};
  link.port_opened(now);
  CommandToken token = 0;
  std::uint64_t accepted = 0;
  for (std::size_t i = 0; i < input.size(); i += 7) {
    link.bytes_received(input.subspan(i, std::min<std::size_t>(7, input.size() - i)), now);
    now += std::chrono::milliseconds(input[i] % 128);
    link.tick(now);
    if (input[i] % 5 == 0 && link.submit(++token, {command::kVel, input[i]}, now)) ++accepted;
  }
  link.port_closed("end");
  // Every command it took is finished exactly once: sent, cancelled or failed.
  if (events.finished != accepted) __builtin_trap();
  return 0;
}
