// The messages of DTU's Small Mobile Robot (SMR): what SMRD and its client
// programs exchange on TCP port 24901, and what travels on the robot's
// RS485 bus. Both use the same framing (seed 000, smr.h, smrd.c):
//
//   first byte: type << 5 | N      then N bytes (N = 0..31)
//
// type 0 the RS485 bus, 1 the RS232 line sensor port, 3 the simulator,
// 7 SMRD's control messages. Every byte value is a valid first byte, so a
// stream has no way to resynchronise: what a decoder can tell is a type
// that has no meaning (2, 4, 5, 6) and a message that stops coming.
//
// SMRD's control messages (type 7, first body byte the subcommand):
//   E9 00 tick(u32) ts(u32)  START of a period: its number and timestamp
//                            (little-endian: SMRD writes them in the
//                            x86's own order, which client programs read)
//   E1 01                    END of a period
//   E1 02                    a client is READY for a period
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::smr {

enum class MessageType : std::uint8_t {
  Bus = 0,         ///< the RS485 bus: module commands and replies
  LineSerial = 1,  ///< the RS232 port of the serial line sensor
  Simulator = 3,   ///< the simulator's packets (its time)
  Control = 7,     ///< SMRD's own: period start and end, client ready
};

/// The most bytes after the first.
inline constexpr std::size_t kMaxBody = 31;

/// Whether a type (0..7) names anything.
[[nodiscard]] constexpr bool is_known_type(std::uint8_t type) noexcept {
  return type == 0 || type == 1 || type == 3 || type == 7;
}

/// SMRD's control subcommands.
namespace control {
inline constexpr Byte kStart = 0;
inline constexpr Byte kEnd = 1;
inline constexpr Byte kReady = 2;
}  // namespace control

/// The whole message. Requires body.size() <= kMaxBody.
[[nodiscard]] Bytes encode_message(MessageType type, ByteView body);

/// START of period `tick`, stamped `ts`.
[[nodiscard]] Bytes encode_period_start(std::uint32_t tick, std::uint32_t ts);
/// END of a period: E1 01.
[[nodiscard]] Bytes encode_period_end();
/// A client's READY: E1 02.
[[nodiscard]] Bytes encode_ready();

/// A period's START, read from a control message's body.
struct PeriodStart {
  std::uint32_t tick = 0;
  std::uint32_t ts = 0;

  friend bool operator==(const PeriodStart&, const PeriodStart&) = default;
};
/// Nothing unless `body` is a START's (subcommand 0 and 8 bytes).
[[nodiscard]] std::optional<PeriodStart> read_period_start(ByteView body) noexcept;

/// Counters of everything a decoder saw; never reset by the decoder.
struct DecoderStats {
  std::uint64_t messages = 0;      ///< whole messages of a known type
  std::uint64_t unknown_type = 0;  ///< whole messages of types 2, 4, 5 and 6
  std::uint64_t incomplete = 0;    ///< messages abandoned because their bytes stopped coming
  std::uint64_t bytes = 0;         ///< every byte fed

  friend bool operator==(const DecoderStats&, const DecoderStats&) = default;
};

/// Incremental decoder of one stream (a client's connection, or the bus).
class MessageDecoder {
 public:
  struct Message {
    std::uint8_t type = 0;  ///< 0..7; see is_known_type()
    ByteView body;          ///< the N bytes after the first; valid until feed()
  };

  /// Appends bytes.
  void feed(ByteView bytes);
  /// The next whole message, or nothing when more bytes are needed.
  [[nodiscard]] std::optional<Message> next();
  /// Whether a message has begun and is not complete.
  [[nodiscard]] bool in_message() const noexcept { return pos_ < buffer_.size(); }
  /// The type of the message under way, known from its first byte.
  [[nodiscard]] std::optional<std::uint8_t> pending_type() const noexcept {
    if (!in_message()) return std::nullopt;
    return static_cast<std::uint8_t>(buffer_[pos_] >> 5);
  }
  /// The bytes of the message under way (0 when none).
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return buffer_.size() - pos_; }
  /// Gives up the message under way, whose bytes stopped coming (counted);
  /// the next byte fed starts a new message.
  void abandon() noexcept;

  [[nodiscard]] const DecoderStats& stats() const noexcept { return stats_; }

 private:
  Bytes buffer_;
  std::size_t pos_ = 0;  ///< first byte not yet consumed
  DecoderStats stats_;
};

/// A message for logs: its type's name and its bytes in hex, "[rs485: a1 12 34]".
[[nodiscard]] std::string describe(std::uint8_t type, ByteView body);

}  // namespace flockbridge::protocol::smr
