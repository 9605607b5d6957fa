// The port-2005 client protocol (protocol decisions, section 4): every
// message in both directions is one length byte, then that many bytes.
//
//   client -> bridge: a direct command ("DGO"), RT + inner length + payload,
//                     SS + int32 interval, SF (2 or 6 bytes), ST, EXT + version
//   bridge -> client: SP sensor, the Uno's other packets as they came,
//                     ERR + reason, EXT + version (the answer to EXT), and two
//                     notices of the bridge's own: LNK + link state, DRP +
//                     uint32 count of dropped sensor messages
//
// Conditions of the problem: the programs students wrote for the original
// robots (the 2014 client) look the first two letters of every message up in
// a table of SP, AC and DM, unpack it to an exact size, and die on anything
// else; they read the length byte as signed. So a connection gets only what
// such a program parses (legacy_client_parses) until it sends EXT, and the
// bridge's own messages, ERR, LNK, DRP, EMG and unknown Uno packets, only
// after. The same programs test the connection by sending "hello" with no
// length byte (message_decoder.hpp), and pack a degree rotation's angle as a
// signed 16-bit value, -90 meaning 90 degrees to the other side.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/client_request.hpp"
#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"

namespace flockbridge::protocol::flockbot {

/// A client of port 2005 asks for the bridge's own messages (EXT with a
/// version >= 1) or for the original dialect only (EXT 0).
struct SetExtensions {
  std::uint8_t version = 0;
};
/// The version of the bridge's own messages on port 2005 that this bridge speaks.
inline constexpr std::uint8_t kExtensionsVersion = 1;

/// What a port-2005 message asks: a command, subscribe, unsubscribe (the
/// core's requests), or EXT (the port's own).
using PortRequest = std::variant<SendCommand, Subscribe, Unsubscribe, SetExtensions>;

/// Parses one port-2005 message body (what follows the length byte).
[[nodiscard]] Result<PortRequest> parse_binary_request(ByteView body);

/// The longest text an ERR message can carry (the length byte stays below 128).
inline constexpr std::size_t kMaxErrorText = 124;

/// `1C 'S' 'P'` + the 26 value bytes of a SEN payload.
[[nodiscard]] Bytes encode_binary_sensor(ByteView sen_payload);
/// Length byte + the Uno's payload as it came.
[[nodiscard]] Bytes encode_binary_packet(ByteView payload);
/// `text` as it fits in `limit` characters: whole when it does, else ended
/// after the last whole word that fits, followed by "...".
[[nodiscard]] std::string fit_text(std::string_view text, std::size_t limit);
/// Length byte + "ERR" + text (fit_text to kMaxErrorText).
[[nodiscard]] Bytes encode_binary_error(std::string_view text);
/// Length byte + "LNK" + the link state's name.
[[nodiscard]] Bytes encode_binary_link(std::string_view state);
/// `07 'D' 'R' 'P'` + uint32 LE count.
[[nodiscard]] Bytes encode_binary_dropped(std::uint32_t count);
/// `04 'E' 'X' 'T' v`: the answer to EXT, with the version now in
/// force (0: the original dialect only).
[[nodiscard]] Bytes encode_binary_extensions(std::uint8_t version);

/// Whether a client written for the original robots parses this message
/// (length byte included): `1C 'S' 'P'` + 26 bytes, or 3 bytes beginning
/// "AC" or "DM" (ACK, DMC). Everything else would kill it.
[[nodiscard]] bool legacy_client_parses(ByteView message) noexcept;

}  // namespace flockbridge::protocol::flockbot
