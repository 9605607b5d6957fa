// The Foxglove WebSocket protocol, version 1 (the subprotocol
// "foxglove.websocket.v1", github.com/foxglove/ws-protocol's spec), as far
// as a live source of JSON messages needs it: the server tells who it is
// (serverInfo) and what it has (advertise: channels, each a topic with its
// JSON Schema); a client subscribes to channels by ids of its own, and gets
// each message as a binary frame (opcode 1, its subscription, a time in
// nanoseconds, the payload); a client that may publish advertises channels
// of its own and sends binary frames on them (opcode 1, its channel, the
// payload). Text is JSON; numbers in binary frames are little-endian.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::foxglove {

inline constexpr std::string_view kSubprotocol = "foxglove.websocket.v1";

/// A channel the server offers.
struct Channel {
  std::uint32_t id = 0;
  std::string topic;
  std::string encoding = "json";  ///< the messages' encoding
  std::string schema_name;
  std::string schema;                          ///< the JSON Schema, as text
  std::string schema_encoding = "jsonschema";  ///< how `schema` is written
};

/// {"op":"serverInfo","name":..,"capabilities":[..],"supportedEncodings":[..],"metadata":{..},"sessionId":..}
[[nodiscard]] std::string server_info(std::string_view name, std::span<const std::string> capabilities,
                                      std::span<const std::string> supported_encodings,
                                      std::span<const std::pair<std::string, std::string>> metadata,
                                      std::string_view session_id);
/// {"op":"advertise","channels":[{"id","topic","encoding","schemaName","schema","schemaEncoding"}..]}
[[nodiscard]] std::string advertise(std::span<const Channel> channels);

enum class StatusLevel : std::uint8_t { Info = 0, Warning = 1, Error = 2 };
/// {"op":"status","level":0|1|2,"message":..}
[[nodiscard]] std::string status(StatusLevel level, std::string_view message);

/// A message on a subscription: opcode 1, the subscription's id (u32), the
/// time (u64 nanoseconds since the epoch), the payload.
[[nodiscard]] Bytes message_data(std::uint32_t subscription, std::uint64_t unix_ns, ByteView payload);

// ---- what a client sends ---------------------------------------------------

struct Subscription {
  std::uint32_t id = 0;       ///< the client's
  std::uint32_t channel = 0;  ///< the server's channel
};
struct Subscribe {
  std::vector<Subscription> subscriptions;
};
struct Unsubscribe {
  std::vector<std::uint32_t> subscriptions;
};
/// A channel a client will publish on.
struct ClientChannel {
  std::uint32_t id = 0;  ///< the client's
  std::string topic;
  std::string encoding;
  std::string schema_name;
};
struct Advertise {
  std::vector<ClientChannel> channels;
};
struct Unadvertise {
  std::vector<std::uint32_t> channels;
};
/// A client's message on one of its channels (binary opcode 1).
struct ClientMessage {
  std::uint32_t channel = 0;
  Bytes payload;
};

using ClientOp = std::variant<Subscribe, Unsubscribe, Advertise, Unadvertise, ClientMessage>;

/// A client's text message; an Error that says what is wrong with it (an
/// op the server does not take is one).
[[nodiscard]] Result<ClientOp> parse_client_text(std::string_view text);
/// A client's binary message.
[[nodiscard]] Result<ClientOp> parse_client_binary(ByteView bytes);

}  // namespace flockbridge::protocol::foxglove
