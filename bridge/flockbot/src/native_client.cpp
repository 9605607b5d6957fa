#include "flockbridge/bridge/flockbot/native_client.hpp"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "flockbridge/bridge/overloaded.hpp"
#include "flockbridge/protocol/flockbot/client_codec.hpp"

namespace flockbridge::bridge::flockbot {
namespace {

namespace codec = protocol::flockbot;

SharedBuffer buffer(const protocol::Bytes& bytes) {
  return make_buffer(std::string(bytes.begin(), bytes.end()));
}

/// `03 'A' 'C' 'K'`, as the Uno's ACK reaches a client.
SharedBuffer ack() {
  return buffer(codec::encode_binary_packet(protocol::as_bytes("ACK")));
}

}  // namespace

SharedBuffer native_sensor(protocol::ByteView sen_payload) {
  return buffer(codec::encode_binary_sensor(sen_payload));
}

SharedBuffer native_packet(protocol::ByteView payload) {
  return buffer(codec::encode_binary_packet(payload));
}

FlockbotClient::FlockbotClient() : decoder_(protocol::MessageDecoder::Framing::LengthPrefixed, 255, true) {}

std::optional<NativeInput> FlockbotClient::next() {
  const auto event = decoder_.next();
  if (!event) return std::nullopt;
  switch (event->kind) {
    case protocol::MessageDecoder::EventKind::Hello:
      // The 2014 client's connection test: answered at once with ACK.
      return native_input::Reply{ack()};
    case protocol::MessageDecoder::EventKind::TooLong:
      return protocol::Error{"message too long; discarded"};
    case protocol::MessageDecoder::EventKind::Message:
      break;
  }
  auto request = codec::parse_binary_request(event->body);
  if (!request) return request.error();
  return std::visit(
      [](auto& asked) -> NativeInput {
        if constexpr (std::is_same_v<std::decay_t<decltype(asked)>, codec::SetExtensions>) {
          // Answered with the version in force: the client's, or ours if it asks for a later one.
          const std::uint8_t version = std::min(asked.version, codec::kExtensionsVersion);
          return native_input::BridgeMessages{version > 0, buffer(codec::encode_binary_extensions(version)),
                                              "EXT " + std::to_string(version)};
        } else {
          return protocol::ClientRequest{std::move(asked)};
        }
      },
      request.value());
}

std::size_t FlockbotClient::expire(SteadyTime now, std::chrono::milliseconds timeout) {
  const std::size_t waiting = decoder_.buffered();
  return decoder_.expire(now, timeout) ? waiting : 0;
}

bool FlockbotClient::admit(std::string_view message, MessageOrigin /*origin*/) {
  return protocol::flockbot::legacy_client_parses(protocol::as_bytes(message));
}

SharedBuffer FlockbotClient::encode(const Notice& notice) const {
  return std::visit(
      Overloaded{
          [](const notice::Link& link) {
            return buffer(codec::encode_binary_link(protocol::link_state_name(link.state)));
          },
          [](const notice::Dropped& dropped) {
            return buffer(codec::encode_binary_dropped(
                static_cast<std::uint32_t>(std::min<std::uint64_t>(dropped.count, UINT32_MAX))));
          },
          // Port 2005 has no "ok": a command the Uno confirmed gets its ACK.
          [](const notice::Done& done) { return done.confirmed.value_or(false) ? ack() : SharedBuffer{}; },
          [](const notice::Failed& failed) {
            const protocol::Error& error = failed.error;
            return buffer(codec::encode_binary_error(error.brief.empty() ? error.message : error.brief));
          },
          [](const notice::SafetyStop& stop) {
            return buffer(codec::encode_binary_error("safety stop: " + std::string(stop.reason)));
          },
      },
      notice);
}

}  // namespace flockbridge::bridge::flockbot
