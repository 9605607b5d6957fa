#include "flockbridge/protocol/flockbot/client_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "flockbridge/protocol/flockbot/commands.hpp"

namespace flockbridge::protocol::flockbot {
namespace {

bool starts_with(ByteView body, char a, char b) {
  return body.size() >= 2 && body[0] == static_cast<Byte>(a) && body[1] == static_cast<Byte>(b);
}

Result<PortRequest> command_request(ByteView payload) {
  auto checked = check_command(payload);
  if (!checked) return checked.error();
  return PortRequest{SendCommand{Bytes(payload.begin(), payload.end())}};
}

// A degree rotation whose angle a client packed as a signed 16-bit value
// (-359..-1, as the 2014 client's programs do to turn the other way) goes to
// the Uno in its documented form: the opposite speed and the positive angle.
Bytes with_positive_rotation(ByteView payload) {
  Bytes out(payload.begin(), payload.end());
  const bool rotation = out.size() == 6 && out[0] == 'D' && out[1] == 'R' && out[2] == 'D';
  if (!rotation) return out;
  const auto degrees = static_cast<std::int16_t>(read_u16le(payload, 4));
  const auto speed = static_cast<std::int8_t>(out[3]);
  if (degrees >= 0 || degrees < -359 || speed == INT8_MIN) return out;
  out[3] = static_cast<Byte>(-speed);
  const auto positive = static_cast<std::uint16_t>(-degrees);
  out[4] = static_cast<Byte>(positive & 0xFF);
  out[5] = static_cast<Byte>(positive >> 8);
  return out;
}

Result<PortRequest> binary_command_request(ByteView payload) {
  const Bytes normalised = with_positive_rotation(payload);
  auto request = command_request(normalised);
  if (!request && normalised.size() == 6 && normalised[0] == 'D' && normalised[1] == 'R' && normalised[2] == 'D') {
    return Error{request.error().message + " (port 2005 also takes -359 to -1: the other way round)"};
  }
  return request;
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

Result<PortRequest> parse_binary_request(ByteView body) {
  if (body.empty()) return Error{"empty message (length byte 0)"};
  if (starts_with(body, 'R', 'T')) {
    if (body.size() < 3) return Error{"RT message without an inner length byte"};
    const std::size_t inner = body[2];
    if (body.size() != 3 + inner) {
      return Error{"RT message says its payload is " + std::to_string(inner) + " bytes but carries " +
                   std::to_string(body.size() - 3)};
    }
    return binary_command_request(body.subspan(3));
  }
  if (starts_with(body, 'S', 'S')) {
    if (body.size() != 6) return Error{"SS takes a 4-byte interval: 06 'S' 'S' r0 r1 r2 r3"};
    const auto interval = static_cast<std::int32_t>(read_u16le(body, 2) | (std::uint32_t{read_u16le(body, 4)} << 16));
    if (interval < 0) return Error{"SS interval must not be negative, got " + std::to_string(interval)};
    return PortRequest{Subscribe{static_cast<std::uint32_t>(interval)}};
  }
  if (starts_with(body, 'S', 'F')) {
    if (body.size() != 2 && body.size() != 6) return Error{"SF is 2 bytes (or 6, as the 2014 client sends it)"};
    return PortRequest{Unsubscribe{}};
  }
  if (starts_with(body, 'S', 'T')) {
    if (body.size() != 2) return Error{"ST (stop) is 2 bytes"};
    return command_request(as_bytes(kStopCode));
  }
  if (body.size() == 4 && body[0] == 'E' && body[1] == 'X' && body[2] == 'T') {
    return PortRequest{SetExtensions{body[3]}};
  }
  return binary_command_request(body);
}

Bytes encode_binary_sensor(ByteView sen_payload) {
  return with_length("SP", sen_payload.subspan(3));
}

Bytes encode_binary_packet(ByteView payload) {
  return with_length({}, payload);
}

std::string fit_text(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  static constexpr std::string_view kMore = "...";
  if (limit <= kMore.size()) return std::string(text.substr(0, limit));
  // The last space at which the words before it, and the dots, fit.
  std::size_t end = text.rfind(' ', limit - kMore.size());
  if (end == std::string_view::npos || end == 0) end = limit - kMore.size();  // one long word: no better place
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == ',' || text[end - 1] == ';' || text[end - 1] == ':')) {
    --end;
  }
  return std::string(text.substr(0, end)) + std::string(kMore);
}

Bytes encode_binary_error(std::string_view text) {
  const std::string fitted = fit_text(text, kMaxErrorText);
  return with_length("ERR", as_bytes(fitted));
}

Bytes encode_binary_link(std::string_view state) {
  return with_length("LNK", as_bytes(state));
}

Bytes encode_binary_dropped(std::uint32_t count) {
  Bytes value;
  append_u32le(value, count);
  return with_length("DRP", value);
}

Bytes encode_binary_extensions(std::uint8_t version) {
  const Byte value[] = {version};
  return with_length("EXT", value);
}

bool legacy_client_parses(ByteView message) noexcept {
  if (message.empty() || message[0] != message.size() - 1) return false;
  const ByteView body = message.subspan(1);
  if (starts_with(body, 'S', 'P')) return body.size() == 2 + kSensorPayloadLength - 3;
  return body.size() == 3 && (starts_with(body, 'A', 'C') || starts_with(body, 'D', 'M'));
}

}  // namespace flockbridge::protocol::flockbot
