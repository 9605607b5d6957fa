#include "flockbridge/protocol/smr/messages.hpp"

#include <cstdio>

namespace flockbridge::protocol::smr {

Bytes encode_message(MessageType type, ByteView body) {
  Bytes message;
  message.reserve(1 + body.size());
  message.push_back(static_cast<Byte>(static_cast<unsigned>(type) << 5 | (body.size() & 0x1F)));
  message.insert(message.end(), body.begin(), body.end());
  return message;
}

Bytes encode_period_start(std::uint32_t tick, std::uint32_t ts) {
  Bytes body{control::kStart};
  for (const std::uint32_t value : {tick, ts}) {
    for (int shift = 0; shift < 32; shift += 8) body.push_back(static_cast<Byte>(value >> shift));
  }
  return encode_message(MessageType::Control, body);
}

Bytes encode_period_end() {
  const Byte body[] = {control::kEnd};
  return encode_message(MessageType::Control, body);
}

Bytes encode_ready() {
  const Byte body[] = {control::kReady};
  return encode_message(MessageType::Control, body);
}

std::optional<PeriodStart> read_period_start(ByteView body) noexcept {
  if (body.size() != 9 || body[0] != control::kStart) return std::nullopt;
  const auto u32 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(body[at]) | static_cast<std::uint32_t>(body[at + 1]) << 8 |
           static_cast<std::uint32_t>(body[at + 2]) << 16 | static_cast<std::uint32_t>(body[at + 3]) << 24;
  };
  return PeriodStart{u32(1), u32(5)};
}

void MessageDecoder::feed(ByteView bytes) {
  if (pos_ > 0 && pos_ == buffer_.size()) {
    buffer_.clear();
    pos_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  stats_.bytes += bytes.size();
}

std::optional<MessageDecoder::Message> MessageDecoder::next() {
  if (pos_ >= buffer_.size()) return std::nullopt;
  const Byte first = buffer_[pos_];
  const std::size_t length = first & 0x1F;
  if (buffer_.size() - pos_ < 1 + length) {
    // Keep only the message under way, so the buffer stays small.
    if (pos_ > 0) {
      buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
      pos_ = 0;
    }
    return std::nullopt;
  }
  Message message;
  message.type = static_cast<std::uint8_t>(first >> 5);
  message.body = ByteView(buffer_).subspan(pos_ + 1, length);
  pos_ += 1 + length;
  if (is_known_type(message.type)) {
    ++stats_.messages;
  } else {
    ++stats_.unknown_type;
  }
  return message;
}

void MessageDecoder::abandon() noexcept {
  if (!in_message()) return;
  ++stats_.incomplete;
  buffer_.clear();
  pos_ = 0;
}

std::string describe(std::uint8_t type, ByteView body) {
  static constexpr const char* kNames[8] = {"rs485",  "rs232",  "type 2", "simulator",
                                            "type 4", "type 5", "type 6", "control"};
  std::string text = std::string("[") + kNames[type & 7];
  char hex[4];
  for (std::size_t i = 0; i < body.size(); ++i) {
    std::snprintf(hex, sizeof(hex), "%02x", body[i]);
    text += (i == 0 ? ": " : " ");
    text += hex;
  }
  return text + "]";
}

}  // namespace flockbridge::protocol::smr
