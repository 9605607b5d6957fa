#include "flockbridge/protocol/message_decoder.hpp"

#include <algorithm>
#include <string_view>

namespace flockbridge::protocol {

namespace {

constexpr std::string_view kHello = "hello";

}  // namespace

MessageDecoder::MessageDecoder(Framing framing, std::size_t max_message, bool hello_probe)
    : framing_(framing),
      max_message_(framing == Framing::LengthPrefixed ? std::min<std::size_t>(max_message, 255) : max_message),
      at_start_(hello_probe && framing == Framing::LengthPrefixed) {}

void MessageDecoder::feed(ByteView bytes, SteadyTime now) {
  if (bytes.empty()) return;
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
  pos_ = 0;
  if (buffer_.empty()) message_started_ = now;
  last_feed_ = now;
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<MessageDecoder::Event> MessageDecoder::next() {
  const ByteView rest = ByteView(buffer_).subspan(pos_);
  if (rest.empty()) return std::nullopt;

  if (framing_ == Framing::LengthPrefixed) {
    if (at_start_) {
      const std::size_t compared = std::min(rest.size(), kHello.size());
      if (std::equal(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(compared), kHello.begin())) {
        if (compared < kHello.size()) return std::nullopt;  // so far it could be "hello"
        at_start_ = false;
        complete(kHello.size());
        return Event{EventKind::Hello, rest.first(kHello.size())};
      }
      at_start_ = false;
    }
    const std::size_t length = rest[0];
    if (rest.size() < 1 + length) return std::nullopt;
    complete(1 + length);
    return Event{EventKind::Message, rest.subspan(1, length)};
  }

  const auto newline = std::find(rest.begin(), rest.end(), Byte{'\n'});
  if (newline == rest.end()) {
    if (skipping_line_) {
      pos_ = buffer_.size();
      return std::nullopt;
    }
    if (rest.size() > max_message_) {
      skipping_line_ = true;
      pos_ = buffer_.size();
      return Event{EventKind::TooLong, {}};
    }
    return std::nullopt;
  }
  const auto line_length = static_cast<std::size_t>(newline - rest.begin());
  complete(line_length + 1);
  if (skipping_line_) {
    skipping_line_ = false;
    return next();
  }
  if (line_length > max_message_) return Event{EventKind::TooLong, {}};
  ByteView line = rest.first(line_length);
  if (!line.empty() && line.back() == '\r') line = line.first(line.size() - 1);
  return Event{EventKind::Message, line};
}

void MessageDecoder::complete(std::size_t consumed) noexcept {
  pos_ += consumed;
  // Bytes behind a message that has just been completed arrived with the
  // latest feed (earlier ones were drained by earlier calls), so the next
  // message is timed from there.
  message_started_ = last_feed_;
}

bool MessageDecoder::expire(SteadyTime now, std::chrono::milliseconds timeout) {
  const auto since = partial_since();
  if (!since || now - *since < timeout) return false;
  buffer_.clear();
  pos_ = 0;
  at_start_ = false;
  return true;
}

std::optional<SteadyTime> MessageDecoder::partial_since() const noexcept {
  if (pos_ >= buffer_.size() || skipping_line_) return std::nullopt;
  return message_started_;
}

}  // namespace flockbridge::protocol
