// libFuzzer: one JSON line from a client. The parser must never throw or
// crash, every command it accepts must pass the command table, and the
// error it answers with must encode (whatever bytes the id held).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/flockbot/json.hpp"
#include "flockbridge/protocol/json_codec.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;
using flockbridge::protocol::flockbot::check_command;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto parsed = flockbot::parse_json_request(line);
  if (!parsed.request) {
    (void)json::error(parsed.id, parsed.request.error());
    return 0;
  }
  if (const auto* command = std::get_if<SendCommand>(&parsed.request.value())) {
    if (!check_command(command->payload)) __builtin_trap();
  }
  (void)json::ok(parsed.id);
  return 0;
}
