#include "flockbridge/protocol/client_codec.hpp"

#include <algorithm>
#include <string>

#include "flockbridge/protocol/commands.hpp"

namespace flockbridge::protocol {
namespace {

bool starts_with(ByteView body, char a, char b) {
  return body.size() >= 2 && body[0] == static_cast<Byte>(a) && body[1] == static_cast<Byte>(b);
}

Result<ClientRequest> command_request(ByteView payload) {
  auto checked = check_command(payload);
  if (!checked) return checked.error();
  return ClientRequest{SendCommand{Bytes(payload.begin(), payload.end()), checked.value()}};
}

Bytes with_length(std::string_view tag, ByteView rest) {
  Bytes out;
  out.reserve(1 + tag.size() + rest.size());
  out.push_back(static_cast<Byte>(tag.size() + rest.size()));
  out.insert(out.end(), tag.begin(), tag.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

}  // namespace

Result<ClientRequest> parse_binary_request(ByteView body) {
  if (body.empty()) return Error{"empty message (length byte 0)"};
  if (starts_with(body, 'R', 'T')) {
    if (body.size() < 3) return Error{"RT message without an inner length byte"};
    const std::size_t inner = body[2];
    if (body.size() != 3 + inner) {
      return Error{"RT message says its payload is " + std::to_string(inner) + " bytes but carries " +
                   std::to_string(body.size() - 3)};
    }
    return command_request(body.subspan(3));
  }
  if (starts_with(body, 'S', 'S')) {
    if (body.size() != 6) return Error{"SS takes a 4-byte interval: 06 'S' 'S' r0 r1 r2 r3"};
    const auto interval = static_cast<std::int32_t>(read_u16le(body, 2) | (std::uint32_t{read_u16le(body, 4)} << 16));
    if (interval < 0) return Error{"SS interval must not be negative, got " + std::to_string(interval)};
    return ClientRequest{Subscribe{static_cast<std::uint32_t>(interval)}};
  }
  if (starts_with(body, 'S', 'F')) {
    if (body.size() != 2 && body.size() != 6) return Error{"SF is 2 bytes (or 6, as the 2014 client sends it)"};
    return ClientRequest{Unsubscribe{}};
  }
  if (starts_with(body, 'S', 'T')) {
    if (body.size() != 2) return Error{"ST (stop) is 2 bytes"};
    return command_request(as_bytes(kStopCode));
  }
  return command_request(body);
}

Bytes encode_binary_sensor(ByteView sen_payload) {
  return with_length("SP", sen_payload.subspan(3));
}

Bytes encode_binary_packet(ByteView payload) {
  return with_length({}, payload);
}

Bytes encode_binary_error(std::string_view text) {
  return with_length("ERR", as_bytes(text.substr(0, kMaxErrorText)));
}

Bytes encode_binary_link(std::string_view state) {
  return with_length("LNK", as_bytes(state));
}

Bytes encode_binary_dropped(std::uint32_t count) {
  Bytes value;
  append_u32le(value, count);
  return with_length("DRP", value);
}

}  // namespace flockbridge::protocol
