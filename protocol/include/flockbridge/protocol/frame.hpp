// The serial frame between the Pi and the Uno.
//
//   0xBD 0xBD 0xBD | LEN | PAYLOAD (LEN bytes) | CHK,  CHK = LEN ^ PAYLOAD[0] ^ ... ^ PAYLOAD[LEN-1]
//
// Conditions of the problem: the line is a raw byte stream with no idle
// marker, so a decoder may start in the middle of a frame and must find the
// next header by itself. 0xBD is NOT reserved: a speed of -67 or any 16-bit
// sensor value may contain it, so a frame's end is found by LEN, never by
// scanning for the header. Noise can corrupt any byte, including LEN; after a
// rejected frame the hunt for a header restarts one byte after the start of
// the rejected header, so that a corrupted LEN cannot swallow the good frames
// behind it. The 8-bit XOR misses two flipped bits in the same bit position of
// two bytes; the packet tables (uno_packets.hpp) catch part of what it misses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol {

inline constexpr Byte kSyncByte = 0xBD;
inline constexpr std::size_t kSyncLength = 3;
/// Header (3) + LEN (1) + CHK (1).
inline constexpr std::size_t kFrameOverhead = kSyncLength + 2;
/// The longest payload in the tables is the 29-byte sensor packet; anything
/// above this default is taken for corruption.
inline constexpr std::size_t kDefaultMaxPayload = 64;
/// LEN is one byte.
inline constexpr std::size_t kMaxPayloadLimit = 255;

/// XOR of LEN and every payload byte. Promises: matches the rule of the
/// protocol decisions, e.g. 0x54 for payload 44 4D 53 0A.
[[nodiscard]] Byte frame_checksum(ByteView payload) noexcept;

/// Appends the framed payload to `out`. Requires 1 <= payload.size() <= 255.
void append_frame(Bytes& out, ByteView payload);

/// Returns the framed payload. Requires 1 <= payload.size() <= 255.
[[nodiscard]] Bytes encode_frame(ByteView payload);

/// Counters of everything the decoder saw; never reset by the decoder.
struct FrameDecoderStats {
  std::uint64_t frames = 0;           ///< frames with a good checksum
  std::uint64_t bad_checksum = 0;     ///< frames whose checksum did not match
  std::uint64_t bad_length = 0;       ///< headers followed by LEN 0 or LEN above the maximum
  std::uint64_t discarded_bytes = 0;  ///< bytes that were not part of any good frame
};

/// Incremental decoder. Feed it bytes as they arrive, then call next() until
/// it says "not yet"; its state is all in the object, so one decoder serves
/// one byte stream.
class FrameDecoder {
 public:
  enum class State { Sync1, Sync2, Sync3, Length, Payload, Checksum };
  enum class EventKind { Frame, BadChecksum, BadLength };

  struct Event {
    EventKind kind;
    /// Frame: the payload. BadChecksum: the rejected payload. BadLength: empty.
    /// Valid until the next call to feed().
    ByteView payload;
    /// Where the frame's first header byte was in the stream (bytes fed before it).
    std::uint64_t position = 0;
  };

  /// `max_payload` is clamped to 1..255.
  explicit FrameDecoder(std::size_t max_payload = kDefaultMaxPayload);

  /// Appends bytes to the decoder's buffer. The buffer holds at most one
  /// partial frame plus what was fed since the last next() returned nothing.
  void feed(ByteView bytes);

  /// The next event, or nothing when more bytes are needed.
  [[nodiscard]] std::optional<Event> next();

  /// Forgets any partial frame (after the line was closed and reopened).
  void reset() noexcept;

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] const FrameDecoderStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::size_t max_payload() const noexcept { return max_payload_; }

 private:
  /// Abandons the candidate frame starting at start_: its first byte is
  /// discarded and the hunt resumes on the byte after it.
  void reject_candidate() noexcept;

  std::size_t max_payload_;
  Bytes buffer_;
  std::uint64_t buffer_position_ = 0;  ///< stream position of buffer_[0]
  std::size_t pos_ = 0;                ///< next byte to examine
  std::size_t start_ = 0;              ///< first header byte of the candidate frame
  std::size_t length_ = 0;             ///< LEN of the candidate frame
  State state_ = State::Sync1;
  FrameDecoderStats stats_;
};

}  // namespace flockbridge::protocol
