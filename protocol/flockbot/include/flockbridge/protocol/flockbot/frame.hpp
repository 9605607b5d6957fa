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
//
// A corrupted LEN larger than the real one would make the decoder wait for
// bytes that are not coming, holding the good frames behind it. Two rules
// bound that wait: with a length table, a frame of a known type whose LEN
// is not that type's length is rejected as soon as its three type bytes are
// in; and the owner, which has the clock, abandons a frame left incomplete
// for longer than a few character times (abandon()). Either way the hunt
// resumes one byte after the rejected header, over the bytes already in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::flockbot {

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

/// The payload length of a packet type (its first three bytes), or nothing
/// for a type whose length is not fixed or not known.
using LengthTable = std::optional<std::size_t> (*)(ByteView type) noexcept;

/// Counters of everything the decoder saw; never reset by the decoder.
struct FrameDecoderStats {
  std::uint64_t frames = 0;        ///< frames with a good checksum
  std::uint64_t bad_checksum = 0;  ///< frames whose checksum did not match
  /// Headers followed by LEN 0, LEN above the maximum, or a LEN that is not
  /// the length of the frame's (known) type.
  std::uint64_t bad_length = 0;
  std::uint64_t incomplete = 0;       ///< frames abandoned because their bytes stopped coming
  std::uint64_t discarded_bytes = 0;  ///< bytes that were not part of any good frame
};

/// Incremental decoder. Feed it bytes as they arrive, then call next() until
/// it says "not yet"; its state is all in the object, so one decoder serves
/// one byte stream.
class FrameDecoder {
 public:
  enum class State { Sync1, Sync2, Sync3, Length, Payload, Checksum };
  enum class EventKind { Frame, BadChecksum, BadLength, Incomplete };

  struct Event {
    EventKind kind;
    /// Frame: the payload. BadChecksum: the rejected payload. BadLength,
    /// Incomplete: empty.
    /// Valid until the next call to feed().
    ByteView payload;
    /// Where the frame's first header byte was in the stream (bytes fed before it).
    std::uint64_t position = 0;
  };

  /// `max_payload` is clamped to 1..255. With a `lengths` table, a frame of
  /// a known type with another LEN is rejected once its type bytes are in.
  explicit FrameDecoder(std::size_t max_payload = kDefaultMaxPayload, LengthTable lengths = nullptr);

  /// Appends bytes to the decoder's buffer. The buffer holds at most one
  /// partial frame plus what was fed since the last next() returned nothing.
  void feed(ByteView bytes);

  /// The next event, or nothing when more bytes are needed.
  [[nodiscard]] std::optional<Event> next();

  /// Forgets any partial frame (after the line was closed and reopened).
  void reset() noexcept;

  /// Whether a frame has begun (a header byte at least) and is not complete.
  [[nodiscard]] bool in_frame() const noexcept { return state_ != State::Sync1; }
  /// Gives up the frame under way, whose bytes stopped coming: returns an
  /// Incomplete event for it (nothing when no frame had its LEN yet), and
  /// next() then hunts again from one byte after its header.
  [[nodiscard]] std::optional<Event> abandon() noexcept;

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] const FrameDecoderStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::size_t max_payload() const noexcept { return max_payload_; }

 private:
  /// Abandons the candidate frame starting at start_: its first byte is
  /// discarded and the hunt resumes on the byte after it.
  void reject_candidate() noexcept;

  std::size_t max_payload_;
  LengthTable lengths_;
  Bytes buffer_;
  std::uint64_t buffer_position_ = 0;  ///< stream position of buffer_[0]
  std::size_t pos_ = 0;                ///< next byte to examine
  std::size_t start_ = 0;              ///< first header byte of the candidate frame
  std::size_t length_ = 0;             ///< LEN of the candidate frame
  State state_ = State::Sync1;
  FrameDecoderStats stats_;
};

}  // namespace flockbridge::protocol::flockbot
