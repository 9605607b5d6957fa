// Splits a client's TCP byte stream into messages: length-prefixed (one
// length byte, then that many bytes) or lines (one JSON object per line).
//
// Conditions of the problem: TCP delivers a message in any number of pieces,
// and a client may stop in the middle of one (a crash, a bug, or a probe that
// is not a message at all). A partial message must neither hang the session
// nor be glued to later bytes forever, so a message not completed within a
// time limit is discarded. Time is passed in; the decoder never reads a clock.
//
// Some original clients test a length-prefixed connection by sending the five
// bytes "hello" with no length byte and waiting for an answer. With
// `hello_probe`, those five bytes at the very start of a stream are one event
// of their own, recognised as soon as they are in (not when the 104 bytes
// their first byte would announce have come), and what follows them is read
// as usual. A family whose first real message could begin with them must not
// ask for the probe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"

namespace flockbridge::protocol {

class MessageDecoder {
 public:
  enum class Framing { LengthPrefixed, Lines };
  enum class EventKind {
    Message,  ///< a complete message (a line without its "\n" or "\r\n")
    TooLong,  ///< a line longer than the limit; its bytes up to the next "\n" are dropped
    Hello,    ///< "hello" at the start of a length-prefixed stream (with hello_probe)
  };
  struct Event {
    EventKind kind;
    ByteView body;  ///< valid until the next call to feed()
  };

  /// `max_message` bounds a message body (for LengthPrefixed it is at most 255 anyway).
  MessageDecoder(Framing framing, std::size_t max_message, bool hello_probe = false);

  /// Buffers `bytes`, received at `now`.
  void feed(ByteView bytes, SteadyTime now);

  /// The next event, or nothing until more bytes arrive.
  [[nodiscard]] std::optional<Event> next();

  /// Discards a partial message that began `timeout` or more before `now`.
  /// Returns true when something was discarded.
  [[nodiscard]] bool expire(SteadyTime now, std::chrono::milliseconds timeout);

  /// When the pending partial message began, if there is one.
  [[nodiscard]] std::optional<SteadyTime> partial_since() const noexcept;

  [[nodiscard]] std::size_t buffered() const noexcept { return buffer_.size() - pos_; }

 private:
  void complete(std::size_t consumed) noexcept;

  Framing framing_;
  std::size_t max_message_;
  Bytes buffer_;
  std::size_t pos_ = 0;
  bool skipping_line_ = false;  ///< dropping the rest of an over-long line
  bool at_start_;               ///< nothing consumed yet, and "hello" may still come
  SteadyTime message_started_{};
  SteadyTime last_feed_{};
};

}  // namespace flockbridge::protocol
