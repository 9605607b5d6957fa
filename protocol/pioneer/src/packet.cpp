#include "flockbridge/protocol/pioneer/packet.hpp"

#include <algorithm>
#include <cassert>

namespace flockbridge::protocol::pioneer {

std::uint16_t packet_checksum(ByteView body) noexcept {
  std::uint32_t sum = 0;
  std::size_t i = 0;
  for (; i + 1 < body.size(); i += 2) sum = (sum + (std::uint32_t{body[i]} << 8 | body[i + 1])) & 0xFFFF;
  if (i < body.size()) sum ^= body[i];
  return static_cast<std::uint16_t>(sum);
}

Bytes encode_packet(Byte type, ByteView payload) {
  assert(payload.size() <= kMaxPayload);
  Bytes packet;
  packet.reserve(kHeaderLength + 1 + payload.size() + 2);
  packet.push_back(kSync0);
  packet.push_back(kSync1);
  packet.push_back(static_cast<Byte>(payload.size() + kMinCount));
  packet.push_back(type);
  packet.insert(packet.end(), payload.begin(), payload.end());
  const std::uint16_t checksum = packet_checksum(ByteView(packet).subspan(kHeaderLength));
  packet.push_back(static_cast<Byte>(checksum >> 8));
  packet.push_back(static_cast<Byte>(checksum & 0xFF));
  return packet;
}

void PacketDecoder::feed(ByteView bytes) {
  // Everything before the candidate header has been looked at for good.
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
  buffer_position_ += pos_;
  pos_ = 0;
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void PacketDecoder::reset() noexcept {
  buffer_position_ += buffer_.size();
  buffer_.clear();
  pos_ = 0;
}

void PacketDecoder::skip_one() noexcept {
  ++stats_.discarded_bytes;
  ++pos_;
}

std::optional<PacketDecoder::Event> PacketDecoder::abandon() noexcept {
  if (!in_packet()) return std::nullopt;
  const bool had_count = buffer_.size() - pos_ >= kHeaderLength;
  const std::uint64_t position = buffer_position_ + pos_;
  skip_one();
  if (!had_count) return std::nullopt;
  ++stats_.incomplete;
  return Event{EventKind::Incomplete, 0, {}, position};
}

std::optional<PacketDecoder::Event> PacketDecoder::next() {
  while (pos_ < buffer_.size()) {
    const std::size_t available = buffer_.size() - pos_;
    if (buffer_[pos_] != kSync0) {
      skip_one();
      continue;
    }
    if (available < 2) return std::nullopt;
    if (buffer_[pos_ + 1] != kSync1) {
      skip_one();
      continue;
    }
    if (available < kHeaderLength) return std::nullopt;
    const std::size_t count = buffer_[pos_ + 2];
    const std::uint64_t position = buffer_position_ + pos_;
    if (count < kMinCount || count > kMaxCount) {
      ++stats_.bad_count;
      skip_one();
      return Event{EventKind::BadCount, 0, {}, position};
    }
    if (available < kHeaderLength + count) return std::nullopt;
    const ByteView body(buffer_.data() + pos_ + kHeaderLength, count - 2);
    const auto received = static_cast<std::uint16_t>(buffer_[pos_ + kHeaderLength + count - 2] << 8 |
                                                     buffer_[pos_ + kHeaderLength + count - 1]);
    const Event event{received == packet_checksum(body) ? EventKind::Packet : EventKind::BadChecksum, body[0],
                      body.subspan(1), position};
    if (event.kind == EventKind::BadChecksum) {
      ++stats_.bad_checksum;
      skip_one();
    } else {
      ++stats_.packets;
      pos_ += kHeaderLength + count;
    }
    return event;
  }
  return std::nullopt;
}

}  // namespace flockbridge::protocol::pioneer
