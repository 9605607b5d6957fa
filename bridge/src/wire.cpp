#include "flockbridge/bridge/wire.hpp"

#include <algorithm>

#include "flockbridge/protocol/flockbot/client_codec.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge::wire {
namespace {

namespace json = protocol::json;

SharedBuffer line(std::string text) {
  text.push_back('\n');
  return make_buffer(std::move(text));
}

SharedBuffer binary(const protocol::Bytes& bytes) {
  return make_buffer(std::string(bytes.begin(), bytes.end()));
}

}  // namespace

SharedBuffer json_only(Encoding encoding, std::string message) {
  if (encoding == Encoding::Binary) return nullptr;
  return line(std::move(message));
}

SharedBuffer link(Encoding encoding, protocol::LinkState state, std::string_view reason) {
  if (encoding == Encoding::Binary) return binary(protocol::encode_binary_link(protocol::link_state_name(state)));
  return line(json::link(state, reason));
}

SharedBuffer sensor(Encoding encoding, protocol::ByteView payload, const protocol::SensorReading& reading,
                    std::uint64_t seq, double unix_seconds, const protocol::SensorUnits& units) {
  if (encoding == Encoding::Binary) return binary(protocol::encode_binary_sensor(payload));
  return line(json::sensor(reading, seq, unix_seconds, units));
}

SharedBuffer packet(Encoding encoding, const protocol::UnoPacket& packet, protocol::ByteView payload) {
  if (encoding == Encoding::Binary) return binary(protocol::encode_binary_packet(payload));
  if (packet.kind == protocol::UnoPacketKind::Emergency) return line(json::emergency());
  return line(json::packet(payload));
}

SharedBuffer dropped(Encoding encoding, std::uint64_t count) {
  if (encoding == Encoding::Binary) {
    return binary(
        protocol::encode_binary_dropped(static_cast<std::uint32_t>(std::min<std::uint64_t>(count, UINT32_MAX))));
  }
  return line(json::dropped(count));
}

SharedBuffer ack() {
  return binary(protocol::encode_binary_packet(protocol::as_bytes("ACK")));
}

SharedBuffer extensions(std::uint8_t version) {
  return binary(protocol::encode_binary_extensions(version));
}

SharedBuffer ok(Encoding encoding, const nlohmann::json& id, std::optional<bool> confirmed) {
  if (encoding == Encoding::Binary) return confirmed.value_or(false) ? ack() : nullptr;
  return line(json::ok(id, confirmed));
}

SharedBuffer error(Encoding encoding, const nlohmann::json& id, const protocol::Error& error) {
  if (encoding == Encoding::Binary) {
    return binary(protocol::encode_binary_error(error.brief.empty() ? error.message : error.brief));
  }
  return line(json::error(id, error));
}

SharedBuffer safety_stop(Encoding encoding, std::string_view reason) {
  if (encoding == Encoding::Binary) return binary(protocol::encode_binary_error("safety stop: " + std::string(reason)));
  return line(json::safety_stop(reason));
}

SharedBuffer stats(Encoding encoding, const nlohmann::json& id, const protocol::StatsSnapshot& snapshot) {
  if (encoding == Encoding::Binary) return nullptr;
  return line(json::stats(id, snapshot));
}

}  // namespace flockbridge::bridge::wire
