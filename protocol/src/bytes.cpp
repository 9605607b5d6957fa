#include "flockbridge/protocol/bytes.hpp"

#include <algorithm>

namespace flockbridge::protocol {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Invalid:
      return "invalid";
    case ErrorCode::LinkDown:
      return "link_down";
    case ErrorCode::QueueFull:
      return "queue_full";
    case ErrorCode::RateLimited:
      return "rate_limited";
    case ErrorCode::Refused:
      return "refused";
    case ErrorCode::NoAck:
      return "no_ack";
    case ErrorCode::LinkLost:
      return "link_lost";
    case ErrorCode::Cancelled:
      return "cancelled";
    case ErrorCode::Busy:
      return "busy";
    case ErrorCode::Denied:
      return "denied";
    case ErrorCode::Latched:
      return "latched";
    case ErrorCode::Replay:
      return "replay";
  }
  return "invalid";
}

std::string to_hex(ByteView bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string text;
  text.reserve(bytes.size() * 3);
  for (Byte b : bytes) {
    if (!text.empty()) text.push_back(' ');
    text.push_back(kDigits[b >> 4]);
    text.push_back(kDigits[b & 0x0F]);
  }
  return text;
}

std::optional<Bytes> from_hex(std::string_view text) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  Bytes bytes;
  bytes.reserve(text.size() / 2);
  std::size_t at = 0;
  while (at < text.size()) {
    if (!bytes.empty()) {
      if (text[at] == ' ') ++at;
    }
    if (at + 2 > text.size()) return std::nullopt;
    const int high = digit(text[at]);
    const int low = digit(text[at + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes.push_back(static_cast<Byte>(high * 16 + low));
    at += 2;
  }
  return bytes;
}

std::string describe_tag(ByteView bytes) {
  if (!bytes.empty() && std::all_of(bytes.begin(), bytes.end(), is_printable_ascii)) {
    return {bytes.begin(), bytes.end()};
  }
  return to_hex(bytes);
}

}  // namespace flockbridge::protocol
