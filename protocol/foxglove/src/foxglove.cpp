#include "flockbridge/protocol/foxglove/foxglove.hpp"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/json_depth.hpp"

namespace flockbridge::protocol::foxglove {
namespace {

using Json = nlohmann::json;
using Ordered = nlohmann::ordered_json;

constexpr Byte kMessageData = 1;

void put_u32(Bytes& out, std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<Byte>((value >> shift) & 0xFFU));
}

void put_u64(Bytes& out, std::uint64_t value) {
  for (int shift = 0; shift < 64; shift += 8) out.push_back(static_cast<Byte>((value >> shift) & 0xFFU));
}

/// An unsigned 32-bit id of `object[key]`, or an Error naming `what`.
Result<std::uint32_t> id_in(const Json& object, const char* key, std::string_view what) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_unsigned() ||
      found->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max()) {
    return Error{std::string(what) + ": \"" + key + "\" must be a whole number from 0 to 4294967295"};
  }
  return static_cast<std::uint32_t>(found->get<std::uint64_t>());
}

Result<std::string> text_in(const Json& object, const char* key, std::string_view what) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_string()) {
    return Error{std::string(what) + ": \"" + key + "\" must be text"};
  }
  return found->get<std::string>();
}

/// `object[key]` as an array, or an Error.
Result<const Json*> array_in(const Json& object, const char* key, std::string_view op) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_array()) {
    return Error{std::string(op) + ": \"" + key + "\" must be a list"};
  }
  return &*found;
}

Result<ClientOp> subscribe(const Json& message) {
  auto list = array_in(message, "subscriptions", "subscribe");
  if (!list) return list.error();
  Subscribe op;
  for (const Json& item : *list.value()) {
    if (!item.is_object()) return Error{"subscribe: each subscription must be {\"id\",\"channelId\"}"};
    auto id = id_in(item, "id", "subscribe");
    if (!id) return id.error();
    auto channel = id_in(item, "channelId", "subscribe");
    if (!channel) return channel.error();
    op.subscriptions.push_back({id.value(), channel.value()});
  }
  return ClientOp{std::move(op)};
}

/// A list of ids under `key` (unsubscribe's subscriptionIds, unadvertise's channelIds).
Result<std::vector<std::uint32_t>> ids(const Json& message, const char* key, std::string_view op) {
  auto list = array_in(message, key, op);
  if (!list) return list.error();
  std::vector<std::uint32_t> out;
  for (const Json& item : *list.value()) {
    if (!item.is_number_unsigned() || item.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max()) {
      return Error{std::string(op) + ": \"" + key + "\" must hold whole numbers from 0 to 4294967295"};
    }
    out.push_back(static_cast<std::uint32_t>(item.get<std::uint64_t>()));
  }
  return out;
}

Result<ClientOp> advertise_op(const Json& message) {
  auto list = array_in(message, "channels", "advertise");
  if (!list) return list.error();
  Advertise op;
  for (const Json& item : *list.value()) {
    if (!item.is_object())
      return Error{"advertise: each channel must be {\"id\",\"topic\",\"encoding\",\"schemaName\"}"};
    auto id = id_in(item, "id", "advertise");
    if (!id) return id.error();
    auto topic = text_in(item, "topic", "advertise");
    if (!topic) return topic.error();
    auto encoding = text_in(item, "encoding", "advertise");
    if (!encoding) return encoding.error();
    ClientChannel channel{id.value(), std::move(topic).value(), std::move(encoding).value(), {}};
    if (const auto name = item.find("schemaName"); name != item.end() && name->is_string()) {
      channel.schema_name = name->get<std::string>();
    }
    op.channels.push_back(std::move(channel));
  }
  return ClientOp{std::move(op)};
}

}  // namespace

std::string server_info(std::string_view name, std::span<const std::string> capabilities,
                        std::span<const std::string> supported_encodings,
                        std::span<const std::pair<std::string, std::string>> metadata, std::string_view session_id) {
  Ordered meta = Ordered::object();
  for (const auto& [key, value] : metadata) meta[key] = value;
  return Ordered{{"op", "serverInfo"},           {"name", name},
                 {"capabilities", capabilities}, {"supportedEncodings", supported_encodings},
                 {"metadata", std::move(meta)},  {"sessionId", session_id}}
      .dump();
}

std::string advertise(std::span<const Channel> channels) {
  Ordered list = Ordered::array();
  for (const Channel& c : channels) {
    list.push_back(Ordered{{"id", c.id},
                           {"topic", c.topic},
                           {"encoding", c.encoding},
                           {"schemaName", c.schema_name},
                           {"schema", c.schema},
                           {"schemaEncoding", c.schema_encoding}});
  }
  return Ordered{{"op", "advertise"}, {"channels", std::move(list)}}.dump();
}

std::string status(StatusLevel level, std::string_view message) {
  return Ordered{{"op", "status"}, {"level", static_cast<int>(level)}, {"message", message}}.dump();
}

Bytes message_data(std::uint32_t subscription, std::uint64_t unix_ns, ByteView payload) {
  Bytes out;
  out.reserve(1 + 4 + 8 + payload.size());
  out.push_back(kMessageData);
  put_u32(out, subscription);
  put_u64(out, unix_ns);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Result<ClientOp> parse_client_text(std::string_view text) {
  if (nests_deeper_than(text)) {
    return Error{nesting_error()};
  }
  const Json message = Json::parse(text, nullptr, false);
  if (message.is_discarded() || !message.is_object()) return Error{"not a JSON object"};
  const auto op = message.find("op");
  if (op == message.end() || !op->is_string()) return Error{"no \"op\""};
  const std::string name = op->get<std::string>();
  if (name == "subscribe") return subscribe(message);
  if (name == "unsubscribe") {
    auto list = ids(message, "subscriptionIds", "unsubscribe");
    if (!list) return list.error();
    return ClientOp{Unsubscribe{std::move(list).value()}};
  }
  if (name == "advertise") return advertise_op(message);
  if (name == "unadvertise") {
    auto list = ids(message, "channelIds", "unadvertise");
    if (!list) return list.error();
    return ClientOp{Unadvertise{std::move(list).value()}};
  }
  return Error{"the op \"" + name + "\" is not one this server takes"};
}

Result<ClientOp> parse_client_binary(ByteView bytes) {
  if (bytes.empty()) return Error{"an empty binary message"};
  if (bytes[0] != kMessageData) {
    return Error{"the binary opcode " + std::to_string(bytes[0]) + " is not one this server takes"};
  }
  if (bytes.size() < 5) return Error{"a message without its channel id"};
  std::uint32_t channel = 0;
  for (std::size_t i = 0; i < 4; ++i) channel |= static_cast<std::uint32_t>(bytes[1 + i]) << (8 * i);
  return ClientOp{ClientMessage{channel, Bytes(bytes.begin() + 5, bytes.end())}};
}

}  // namespace flockbridge::protocol::foxglove
