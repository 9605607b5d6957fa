// libFuzzer: one message from a Foxglove WebSocket client, as text and as
// binary. The parser must never throw or crash; what it accepts must hold
// what the input said (a subscribe's ids are the input's, a binary
// message's payload is the input past its channel id).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "flockbridge/protocol/foxglove/foxglove.hpp"

namespace fox = flockbridge::protocol::foxglove;
using flockbridge::protocol::ByteView;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView bytes(data, size);
  (void)fox::parse_client_text(std::string_view(reinterpret_cast<const char*>(data), size));
  const auto binary = fox::parse_client_binary(bytes);
  if (binary) {
    const auto& message = std::get<fox::ClientMessage>(binary.value());
    if (size < 5 || data[0] != 1 || message.payload.size() != size - 5) __builtin_trap();
  }
  return 0;
}
