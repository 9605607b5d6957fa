// libFuzzer: the port-2005 client stream: message splitting, expiry of
// partial messages, and the parsing of each message. Whatever the client
// sends, the decoder stays bounded and every accepted command passes the
// command table.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <variant>

#include "flockbridge/protocol/flockbot/client_codec.hpp"
#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/message_decoder.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  MessageDecoder decoder(MessageDecoder::Framing::LengthPrefixed, 255);
  SteadyTime now{};
  std::size_t at = 0;
  while (at < size) {
    const std::size_t n = std::min<std::size_t>(1 + data[at] % 17, size - at);
    decoder.feed(ByteView(data + at, n), now);
    at += n;
    now += std::chrono::milliseconds(data[at - 1] % 8 == 0 ? 2500 : 10);
    (void)decoder.expire(now, std::chrono::milliseconds(2000));
    while (const auto event = decoder.next()) {
      auto request = parse_binary_request(event->body);
      if (!request) continue;
      if (const auto* command = std::get_if<SendCommand>(&request.value())) {
        if (!check_command(command->payload)) __builtin_trap();
      }
    }
    if (decoder.buffered() > 256 + 17) __builtin_trap();
  }
  return 0;
}
