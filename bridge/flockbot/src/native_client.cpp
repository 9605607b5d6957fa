#include "flockbridge/bridge/flockbot/native_client.hpp"

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"

namespace flockbridge::bridge::flockbot {

FlockbotClient::FlockbotClient() : decoder_(protocol::MessageDecoder::Framing::LengthPrefixed, 255, true) {}

std::optional<NativeInput> FlockbotClient::next() {
  const auto event = decoder_.next();
  if (!event) return std::nullopt;
  switch (event->kind) {
    case protocol::MessageDecoder::EventKind::Hello:
      // The 2014 client's connection test: answered at once with ACK.
      return native_input::Reply{wire::ack()};
    case protocol::MessageDecoder::EventKind::TooLong:
      return protocol::Error{"message too long; discarded"};
    case protocol::MessageDecoder::EventKind::Message:
      break;
  }
  auto request = protocol::parse_binary_request(event->body);
  if (!request) return request.error();
  return std::move(request).value();
}

std::size_t FlockbotClient::expire(SteadyTime now, std::chrono::milliseconds timeout) {
  const std::size_t waiting = decoder_.buffered();
  return decoder_.expire(now, timeout) ? waiting : 0;
}

bool FlockbotClient::admit(std::string_view message, MessageOrigin /*origin*/) {
  return protocol::legacy_client_parses(protocol::as_bytes(message));
}

}  // namespace flockbridge::bridge::flockbot
