#include "flockbridge/protocol/flockbot/frame.hpp"

#include <algorithm>
#include <cassert>

namespace flockbridge::protocol::flockbot {

Byte frame_checksum(ByteView payload) noexcept {
  auto sum = static_cast<Byte>(payload.size());
  for (Byte b : payload) sum ^= b;
  return sum;
}

void append_frame(Bytes& out, ByteView payload) {
  assert(!payload.empty() && payload.size() <= kMaxPayloadLimit);
  out.insert(out.end(), kSyncLength, kSyncByte);
  out.push_back(static_cast<Byte>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  out.push_back(frame_checksum(payload));
}

Bytes encode_frame(ByteView payload) {
  Bytes out;
  out.reserve(payload.size() + kFrameOverhead);
  append_frame(out, payload);
  return out;
}

FrameDecoder::FrameDecoder(std::size_t max_payload, LengthTable lengths)
    : max_payload_(std::clamp<std::size_t>(max_payload, 1, kMaxPayloadLimit)), lengths_(lengths) {}

void FrameDecoder::feed(ByteView bytes) {
  // Drop what can never be looked at again: everything before the candidate
  // frame, or everything examined while hunting for a header.
  const std::size_t keep_from = state_ == State::Sync1 ? pos_ : start_;
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(keep_from));
  buffer_position_ += keep_from;
  pos_ -= keep_from;
  start_ -= std::min(start_, keep_from);
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void FrameDecoder::reset() noexcept {
  buffer_position_ += buffer_.size();
  buffer_.clear();
  pos_ = start_ = length_ = 0;
  state_ = State::Sync1;
}

std::optional<FrameDecoder::Event> FrameDecoder::abandon() noexcept {
  if (state_ == State::Sync1) return std::nullopt;
  const bool had_length = state_ == State::Payload || state_ == State::Checksum;
  if (!had_length) {
    // A header cut short: its bytes are examined again, from the second.
    stats_.discarded_bytes += 1;
    pos_ = start_ + 1;
    state_ = State::Sync1;
    return std::nullopt;
  }
  ++stats_.incomplete;
  reject_candidate();
  return Event{EventKind::Incomplete, {}, buffer_position_ + start_};
}

void FrameDecoder::reject_candidate() noexcept {
  ++stats_.discarded_bytes;
  pos_ = start_ + 1;
  state_ = State::Sync1;
}

std::optional<FrameDecoder::Event> FrameDecoder::next() {
  while (pos_ < buffer_.size()) {
    const Byte byte = buffer_[pos_];
    switch (state_) {
      case State::Sync1:
        if (byte == kSyncByte) {
          start_ = pos_;
          state_ = State::Sync2;
        } else {
          ++stats_.discarded_bytes;
        }
        ++pos_;
        break;
      case State::Sync2:
      case State::Sync3:
        if (byte == kSyncByte) {
          state_ = state_ == State::Sync2 ? State::Sync3 : State::Length;
          ++pos_;
        } else {
          // "BD x" or "BD BD x": none of these header bytes can begin a
          // header, and x is examined again from Sync1.
          stats_.discarded_bytes += pos_ - start_;
          state_ = State::Sync1;
        }
        break;
      case State::Length:
        length_ = byte;
        if (length_ == 0 || length_ > max_payload_) {
          ++stats_.bad_length;
          reject_candidate();
          return Event{EventKind::BadLength, {}, buffer_position_ + start_};
        }
        state_ = State::Payload;
        ++pos_;
        break;
      case State::Payload: {
        const std::size_t payload_start = start_ + kSyncLength + 1;
        if (lengths_ != nullptr && length_ >= 3 && buffer_.size() >= payload_start + 3) {
          const auto expected = lengths_(ByteView(buffer_.data() + payload_start, 3));
          if (expected && *expected != length_) {
            ++stats_.bad_length;
            reject_candidate();
            return Event{EventKind::BadLength, {}, buffer_position_ + start_};
          }
        }
        const std::size_t payload_end = payload_start + length_;
        if (buffer_.size() < payload_end) {
          pos_ = buffer_.size();
          return std::nullopt;
        }
        pos_ = payload_end;
        state_ = State::Checksum;
        break;
      }
      case State::Checksum: {
        const ByteView payload{buffer_.data() + start_ + kSyncLength + 1, length_};
        if (byte != frame_checksum(payload)) {
          ++stats_.bad_checksum;
          reject_candidate();
          return Event{EventKind::BadChecksum, payload, buffer_position_ + start_};
        }
        ++stats_.frames;
        ++pos_;
        state_ = State::Sync1;
        return Event{EventKind::Frame, payload, buffer_position_ + start_};
      }
    }
  }
  return std::nullopt;
}

}  // namespace flockbridge::protocol::flockbot
