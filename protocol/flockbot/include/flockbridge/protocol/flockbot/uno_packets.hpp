// Packets from the Uno: the sensor packet and the short link packets, with
// the plausibility rules that catch what the 8-bit XOR checksum lets through.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::flockbot {

inline constexpr std::size_t kSensorPayloadLength = 29;

/// The sensor packet, raw values as the Uno sent them (protocol decisions, section 3).
struct SensorReading {
  std::uint16_t battery = 0;
  std::array<std::uint16_t, 5> ir{};
  std::uint8_t l_bump = 0;
  std::uint8_t h_bump = 0;
  std::int16_t odometer_left = 0;
  std::int16_t odometer_right = 0;
  std::int16_t odometer_avg = 0;
  std::int16_t wheel_watcher_left = 0;
  std::int16_t wheel_watcher_right = 0;

  friend bool operator==(const SensorReading&, const SensorReading&) = default;
};

/// Factors from raw sensor counts to SI units, from the robot's configuration
/// (the source gives no units). A factor of 0 means "not known": that value
/// is published raw only.
struct SensorUnits {
  double battery_volts_per_count = 0;
  double ir_volts_per_count = 0;  ///< the IR sensors' output voltage (their distance curve is not linear)
  double odometer_mm_per_count = 0;
  double wheel_watcher_mm_per_count = 0;
  /// A wheel's mm/s at wheel speed 1, for JSON drive: the serial page's
  /// own sample ("D M S 10", "move forward 10 cm/s") makes a step 1 cm/s.
  double wheel_mm_s_per_percent = 10;
  double wheel_base_mm = 100;  ///< between the wheels, for drive's turning and the pose's heading

  friend bool operator==(const SensorUnits&, const SensorUnits&) = default;
};

enum class UnoPacketKind : std::uint8_t {
  Sensor,        ///< SEN
  Ack,           ///< ACK
  Nak,           ///< NAK
  Emergency,     ///< EMG
  MoveComplete,  ///< DMC
  Other,         ///< a type this bridge does not know, passed on as it came
};

struct UnoPacket {
  UnoPacketKind kind = UnoPacketKind::Other;
  SensorReading sensor;  ///< meaningful for Sensor only
};

/// The payload length of a packet type the Uno sends (SEN 29; ACK, NAK, EMG,
/// DMC 3), or nothing for a type this bridge does not know. A FrameDecoder's
/// LengthTable.
[[nodiscard]] std::optional<std::size_t> uno_packet_length(ByteView type) noexcept;

/// Classifies a payload that passed its checksum. Refuses, as corrupt, a SEN
/// whose length is not 29 or whose reserved bytes are not zero, an ACK, NAK,
/// EMG or DMC whose length is not 3, and a packet of any other type whose
/// first three bytes are not ASCII letters.
[[nodiscard]] Result<UnoPacket> parse_uno_packet(ByteView payload);

/// The 29-byte SEN payload of a reading (used by the simulated Uno).
[[nodiscard]] Bytes encode_sensor_payload(const SensorReading& reading);

}  // namespace flockbridge::protocol::flockbot
