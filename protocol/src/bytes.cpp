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

std::string describe_tag(ByteView bytes) {
  if (!bytes.empty() && std::all_of(bytes.begin(), bytes.end(), is_printable_ascii)) {
    return {bytes.begin(), bytes.end()};
  }
  return to_hex(bytes);
}

}  // namespace flockbridge::protocol
