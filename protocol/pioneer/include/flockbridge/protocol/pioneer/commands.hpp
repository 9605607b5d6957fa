// Client commands to an AROS robot: a packet whose type is the command
// number, with no argument or one of three argument kinds:
//
//   0x3B lo hi   an integer >= 0 (16 bits, little-endian)
//   0x1B lo hi   a negative integer, as its magnitude
//   0x2B n text  a string of n characters
//
// The numbers are those of ARIA's ArCommands.h and the robots' manuals.
// Before a client's SYNC handshake is done, types 0, 1 and 2 are SYNC0,
// SYNC1 and SYNC2; afterwards they are PULSE, OPEN and CLOSE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"

namespace flockbridge::protocol::pioneer {

namespace command {
inline constexpr Byte kSync0 = 0;
inline constexpr Byte kSync1 = 1;
inline constexpr Byte kSync2 = 2;
inline constexpr Byte kPulse = 0;
inline constexpr Byte kOpen = 1;
inline constexpr Byte kClose = 2;
inline constexpr Byte kPolling = 3;
inline constexpr Byte kEnable = 4;
inline constexpr Byte kSetA = 5;
inline constexpr Byte kSetV = 6;
inline constexpr Byte kSetO = 7;
inline constexpr Byte kMove = 8;
inline constexpr Byte kRotate = 9;
inline constexpr Byte kSetRV = 10;
inline constexpr Byte kVel = 11;
inline constexpr Byte kHead = 12;
inline constexpr Byte kDHead = 13;
inline constexpr Byte kSay = 15;
inline constexpr Byte kConfig = 18;
inline constexpr Byte kEncoder = 19;
inline constexpr Byte kRVel = 21;
inline constexpr Byte kDCHead = 22;
inline constexpr Byte kSetRA = 23;
inline constexpr Byte kSonar = 28;
inline constexpr Byte kStop = 29;
inline constexpr Byte kDigOut = 30;
inline constexpr Byte kVel2 = 32;
inline constexpr Byte kGripper = 33;
inline constexpr Byte kHostBaud = 50;
inline constexpr Byte kEStop = 55;
inline constexpr Byte kBatteryInfo = 62;
}  // namespace command

inline constexpr Byte kPositiveInt = 0x3B;
inline constexpr Byte kNegativeInt = 0x1B;
inline constexpr Byte kString = 0x2B;

/// The largest magnitude an integer argument carries.
inline constexpr int kMaxIntArgument = 0xFFFF;

struct NoArgument {
  friend bool operator==(const NoArgument&, const NoArgument&) = default;
};
/// Any other payload: some commands carry data of their own (ARIA's
/// comDataN, the simulators' commands); kept as it came.
struct RawArgument {
  Bytes data;
  friend bool operator==(const RawArgument&, const RawArgument&) = default;
};
using Argument = std::variant<NoArgument, int, std::string, RawArgument>;

struct Command {
  Byte number = 0;
  Argument argument;

  friend bool operator==(const Command&, const Command&) = default;
};

/// The command's packet. Requires an integer argument within
/// -kMaxIntArgument..kMaxIntArgument and a string of at most
/// kMaxPayload - 2 characters (check_command() says whether it is).
[[nodiscard]] Bytes encode_command(const Command& command);

/// Whether encode_command() can encode it, and if not, why.
[[nodiscard]] Result<Done> check_command(const Command& command);

/// Reads a command packet's payload (what follows the type byte): nothing,
/// an integer (its marker and exactly two bytes), a string (its marker, a
/// length and exactly that many characters), or else the bytes as they came.
[[nodiscard]] Command decode_command(Byte number, ByteView payload);

/// The command packets of a command in the family's form (one or more whole
/// AROS command packets back to back), in order; an error when the bytes are
/// not whole packets with good checksums.
[[nodiscard]] Result<std::vector<Command>> split_commands(ByteView packets);

/// "VEL", "ENABLE", ... or "command 77": for logs and errors.
[[nodiscard]] std::string command_name(Byte number);

}  // namespace flockbridge::protocol::pioneer
