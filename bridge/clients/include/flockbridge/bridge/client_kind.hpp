// What kind of client a session serves and which encoding of the bridge's
// messages it reads: shared by sessions, the robot's drivers (which encode
// each message once per encoding) and the clients' hub.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace flockbridge::bridge {

/// Where a client came from. Native: the family's own port, in the original
/// software's protocol. WebSocket clients speak the JSON messages of port
/// 2006, one per WebSocket text message instead of one per line; Foxglove
/// clients (the live view) get the same messages framed as the Foxglove
/// WebSocket protocol frames them.
enum class ClientKind : std::uint8_t { Native, Json, WebSocket, Foxglove };

/// The two encodings of the bridge's messages; each is made once per message
/// and shared by every client that reads it. Native: the robot family's own
/// protocol.
enum class Encoding : std::uint8_t { Native, Json };

/// 0 for Native, 1 for Json: a slot per encoding in arrays of encoded messages.
[[nodiscard]] constexpr std::size_t encoding_index(Encoding encoding) noexcept {
  return encoding == Encoding::Native ? 0 : 1;
}

[[nodiscard]] constexpr Encoding encoding_of(ClientKind kind) noexcept {
  return kind == ClientKind::Native ? Encoding::Native : Encoding::Json;
}

/// The kind's name in JSON messages (lease, stats): "binary" for a native
/// client, as the messages have said since version 1.
[[nodiscard]] std::string_view client_kind_name(ClientKind kind) noexcept;

}  // namespace flockbridge::bridge
