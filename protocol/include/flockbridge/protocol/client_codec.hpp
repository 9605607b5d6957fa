// The port-2005 client protocol (protocol decisions, section 4): every
// message in both directions is one length byte, then that many bytes.
//
//   client -> bridge: a direct command ("DGO"), RT + inner length + payload,
//                     SS + int32 interval, SF (2 or 6 bytes), ST
//   bridge -> client: SP sensor, the Uno's other packets as they came,
//                     ERR + reason, and two notices of the bridge's own:
//                     LNK + link state, DRP + uint32 count of dropped sensor messages
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/commands.hpp"
#include "flockbridge/protocol/uno_packets.hpp"

namespace flockbridge::protocol {

/// A payload for the Uno that passed check_command(), with its table entry.
struct SendCommand {
  Bytes payload;
  const CommandSpec* spec = nullptr;
};
/// Send sensor messages at most once every `interval_ms` (0: every packet).
struct Subscribe {
  std::uint32_t interval_ms = 0;
};
struct Unsubscribe {};
/// The bridge's counters (JSON clients only).
struct StatsRequest {};

/// What a client asks of the bridge, whichever port it came through.
using ClientRequest = std::variant<SendCommand, Subscribe, Unsubscribe, StatsRequest>;

/// Parses one port-2005 message body (what follows the length byte).
[[nodiscard]] Result<ClientRequest> parse_binary_request(ByteView body);

/// The longest text an ERR message can carry (the length byte stays below 128).
inline constexpr std::size_t kMaxErrorText = 124;

/// `1C 'S' 'P'` + the 26 value bytes of a SEN payload.
[[nodiscard]] Bytes encode_binary_sensor(ByteView sen_payload);
/// Length byte + the Uno's payload as it came.
[[nodiscard]] Bytes encode_binary_packet(ByteView payload);
/// Length byte + "ERR" + text (cut to kMaxErrorText).
[[nodiscard]] Bytes encode_binary_error(std::string_view text);
/// Length byte + "LNK" + the link state's name.
[[nodiscard]] Bytes encode_binary_link(std::string_view state);
/// `07 'D' 'R' 'P'` + uint32 LE count.
[[nodiscard]] Bytes encode_binary_dropped(std::uint32_t count);

}  // namespace flockbridge::protocol
