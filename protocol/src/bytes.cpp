#include "flockbridge/protocol/bytes.hpp"

#include <algorithm>

namespace flockbridge::protocol {

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
