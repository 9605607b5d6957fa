// libFuzzer: the serial frame decoder, fed the input in pieces whose sizes
// come from the input itself. Every frame it reports must have a good
// checksum and a length within the limit, and must decode again the same.
#include <cstddef>
#include <cstdint>

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  FrameDecoder decoder(1 + data[0] % 80);
  const ByteView input(data + 1, size - 1);
  std::size_t at = 0;
  std::size_t step = 1;
  std::uint64_t frames = 0;
  while (at < input.size()) {
    const std::size_t n = std::min(step, input.size() - at);
    decoder.feed(input.subspan(at, n));
    at += n;
    step = 1 + (step * 7 + n) % 13;
    while (const auto event = decoder.next()) {
      if (event->kind != FrameDecoder::EventKind::Frame) continue;
      ++frames;
      if (event->payload.empty() || event->payload.size() > decoder.max_payload()) __builtin_trap();
      FrameDecoder again(decoder.max_payload());
      again.feed(encode_frame(event->payload));
      const auto same = again.next();
      if (!same || same->kind != FrameDecoder::EventKind::Frame ||
          !std::equal(same->payload.begin(), same->payload.end(), event->payload.begin(), event->payload.end())) {
        __builtin_trap();
      }
      (void)parse_uno_packet(event->payload);
    }
  }
  if (decoder.stats().frames != frames || decoder.stats().discarded_bytes > input.size()) __builtin_trap();
  return 0;
}
