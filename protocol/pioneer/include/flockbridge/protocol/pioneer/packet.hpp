// The packet of the Pioneer/AmigoBot robots (AROS, P2OS, AmigoSH) in both
// directions, as ARIA and the robots' manuals define it:
//
//   0xFA 0xFB | count | type | payload | chk_hi chk_lo
//
// `count` is the number of bytes after it, checksum included, so a packet
// with no payload has count 3; the manuals put the most at 200. The checksum
// adds the bytes from `type` on as big-endian 16-bit words (kept to 16 bits);
// with an odd number of bytes the last one is XORed into the sum, not added.
// Sent high byte first.
//
// Conditions of the problem: like the Flockbot's line, this one is a raw
// byte stream that a decoder may join in the middle, and 0xFA 0xFB may occur
// inside a payload. So a packet's end is found by its count, and after a
// rejected packet (bad count or checksum) the hunt for a header resumes one
// byte after the rejected header, so that a damaged count cannot swallow the
// good packets behind it. ARIA's receiver drops a partial packet after about
// 100 ms without bytes; the owner, which has the clock, does the same with
// abandon().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::pioneer {

inline constexpr Byte kSync0 = 0xFA;
inline constexpr Byte kSync1 = 0xFB;
/// Header (2) + count (1).
inline constexpr std::size_t kHeaderLength = 3;
/// type (1) + checksum (2): the smallest count.
inline constexpr std::size_t kMinCount = 3;
/// The largest count the manuals allow; anything above is damage.
inline constexpr std::size_t kMaxCount = 200;
/// The longest payload a packet can carry.
inline constexpr std::size_t kMaxPayload = kMaxCount - kMinCount;

/// The checksum of `type + payload` (`body`). Promises: 0x0000 for the bare
/// SYNC0 body `00`, 0x0002 for `02`, 0x0102 for `01 02`.
[[nodiscard]] std::uint16_t packet_checksum(ByteView body) noexcept;

/// The whole packet. Requires payload.size() <= kMaxPayload.
[[nodiscard]] Bytes encode_packet(Byte type, ByteView payload = {});

/// Counters of everything the decoder saw; never reset by the decoder.
struct DecoderStats {
  std::uint64_t packets = 0;          ///< packets with a good checksum
  std::uint64_t bad_checksum = 0;     ///< complete packets whose checksum did not match
  std::uint64_t bad_count = 0;        ///< headers followed by a count below 3 or above 200
  std::uint64_t incomplete = 0;       ///< packets abandoned because their bytes stopped coming
  std::uint64_t discarded_bytes = 0;  ///< bytes that were not part of any good packet

  friend bool operator==(const DecoderStats&, const DecoderStats&) = default;
};

/// Incremental decoder: feed it bytes as they come, then call next() until
/// it returns nothing. One decoder serves one byte stream.
class PacketDecoder {
 public:
  enum class EventKind { Packet, BadChecksum, BadCount, Incomplete };

  struct Event {
    EventKind kind;
    Byte type = 0;               ///< Packet, BadChecksum: the type byte
    ByteView payload;            ///< Packet, BadChecksum: the bytes between type and checksum; valid until feed()
    std::uint64_t position = 0;  ///< where the packet's 0xFA was in the stream (bytes fed before it)
  };

  /// Appends bytes. The buffer keeps at most one partial packet plus what
  /// was fed since next() last returned nothing.
  void feed(ByteView bytes);

  /// The next event, or nothing when more bytes are needed.
  [[nodiscard]] std::optional<Event> next();

  /// Whether a packet has begun (its 0xFA at least) and is not complete.
  [[nodiscard]] bool in_packet() const noexcept { return pos_ < buffer_.size(); }

  /// Gives up the packet under way, whose bytes stopped coming: returns an
  /// Incomplete event when its count had come (nothing for a header cut
  /// short), and next() hunts again from one byte after its 0xFA.
  [[nodiscard]] std::optional<Event> abandon() noexcept;

  /// Forgets everything buffered (after the line was closed and reopened).
  void reset() noexcept;

  [[nodiscard]] const DecoderStats& stats() const noexcept { return stats_; }

 private:
  /// Drops the byte at pos_ (a header that led nowhere) and moves on.
  void skip_one() noexcept;

  Bytes buffer_;
  std::uint64_t buffer_position_ = 0;  ///< stream position of buffer_[0]
  std::size_t pos_ = 0;                ///< first byte not yet consumed: a candidate 0xFA or the end
  DecoderStats stats_;
};

}  // namespace flockbridge::protocol::pioneer
