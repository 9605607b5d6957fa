#include "flockbridge/protocol/flockbot/uno_packets.hpp"

#include <algorithm>
#include <string>

namespace flockbridge::protocol::flockbot {
namespace {

struct ShortPacket {
  std::string_view tag;
  UnoPacketKind kind;
};
constexpr std::array<ShortPacket, 4> kShortPackets{{
    {"ACK", UnoPacketKind::Ack},
    {"NAK", UnoPacketKind::Nak},
    {"EMG", UnoPacketKind::Emergency},
    {"DMC", UnoPacketKind::MoveComplete},
}};

bool has_tag(ByteView payload, std::string_view tag) {
  return payload.size() >= tag.size() && std::equal(tag.begin(), tag.end(), payload.begin());
}

SensorReading decode_sensor(ByteView p) {
  SensorReading r;
  r.battery = read_u16le(p, 3);
  for (std::size_t i = 0; i < r.ir.size(); ++i) r.ir[i] = read_u16le(p, 5 + 2 * i);
  r.l_bump = p[15];
  r.h_bump = p[16];
  r.odometer_left = read_i16le(p, 17);
  r.odometer_right = read_i16le(p, 19);
  r.odometer_avg = read_i16le(p, 21);
  r.wheel_watcher_left = read_i16le(p, 23);
  r.wheel_watcher_right = read_i16le(p, 25);
  return r;
}

}  // namespace

std::optional<std::size_t> uno_packet_length(ByteView type) noexcept {
  if (has_tag(type, "SEN")) return kSensorPayloadLength;
  for (const ShortPacket& known : kShortPackets) {
    if (has_tag(type, known.tag)) return 3;
  }
  return std::nullopt;
}

Result<UnoPacket> parse_uno_packet(ByteView payload) {
  if (has_tag(payload, "SEN")) {
    if (payload.size() != kSensorPayloadLength) {
      return Error{"SEN packet of " + std::to_string(payload.size()) + " bytes (expected 29)"};
    }
    if (payload[27] != 0 || payload[28] != 0) return Error{"SEN packet with non-zero reserved bytes"};
    return UnoPacket{UnoPacketKind::Sensor, decode_sensor(payload)};
  }
  for (const ShortPacket& known : kShortPackets) {
    if (!has_tag(payload, known.tag)) continue;
    if (payload.size() != 3) {
      return Error{std::string(known.tag) + " packet of " + std::to_string(payload.size()) + " bytes (expected 3)"};
    }
    return UnoPacket{known.kind, {}};
  }
  if (payload.size() < 3 || !std::all_of(payload.begin(), payload.begin() + 3, is_ascii_letter)) {
    return Error{"packet whose type is not three ASCII letters: " +
                 to_hex(payload.first(std::min<std::size_t>(payload.size(), 3)))};
  }
  return UnoPacket{UnoPacketKind::Other, {}};
}

Bytes encode_sensor_payload(const SensorReading& r) {
  Bytes p{'S', 'E', 'N'};
  p.reserve(kSensorPayloadLength);
  append_u16le(p, r.battery);
  for (std::uint16_t ir : r.ir) append_u16le(p, ir);
  p.push_back(r.l_bump);
  p.push_back(r.h_bump);
  for (std::int16_t v :
       {r.odometer_left, r.odometer_right, r.odometer_avg, r.wheel_watcher_left, r.wheel_watcher_right}) {
    append_u16le(p, static_cast<std::uint16_t>(v));
  }
  p.push_back(0);
  p.push_back(0);
  return p;
}

}  // namespace flockbridge::protocol::flockbot
