// What an AROS robot sends by itself: the standard server information packet
// (SIP, type 0x32 with the motors stopped, 0x33 while moving, every 100 ms),
// and its answer to SYNC2, which names it.
//
// The SIP's fields, in order (the Pioneer 2/3 manual's table 3, the AmigoSH
// manual's table 4, and the order in which ARIA reads them); little-endian:
//
//   XPOS u16, YPOS u16     ARIA uses the low 15 bits and unwraps them
//   THPOS s16              x AngleConvFactor for radians
//   L VEL s16, R VEL s16   x VelConvFactor for mm/s
//   BATTERY u8             tenths of a volt
//   STALL AND BUMPERS u16  bit 0 left stall, bits 1-7 first bumper ring,
//                          bit 8 right stall, bits 9-15 second ring
//   CONTROL s16            the heading servo's setpoint (AngleConvFactor)
//   FLAGS u16              bit 0 motors enabled, bits 1-4 sonar arrays, ...
//   COMPASS u8             2-degree units
//   SONAR COUNT u8, then COUNT x (NUMBER u8, RANGE u16 x RangeConvFactor)
//
// and then, each only when the robot sends it (ARIA reads a group when
// bytes remain): GRIP_STATE u8, ANPORT u8, ANALOG u8, DIGIN u8, DIGOUT u8;
// BATTERYX10 u16; CHARGESTATE u8; ROTVEL s16 (tenths of deg/s); FAULTFLAGS
// u16. Bytes after the last complete group are kept as they came.
//
// Positions, speeds and ranges stay raw here: converting them takes the
// robot model's factors, which are the driver's business.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::pioneer {

inline constexpr Byte kSipStopped = 0x32;
inline constexpr Byte kSipMoving = 0x33;
/// The configuration packet CONFIG asks for.
inline constexpr Byte kConfigPacket = 0x20;

/// Whether a packet type is a standard SIP.
[[nodiscard]] constexpr bool is_standard_sip(Byte type) noexcept {
  return type == kSipStopped || type == kSipMoving;
}

struct SonarReading {
  std::uint8_t number = 0;  ///< the sonar disc, 0-31
  std::uint16_t range = 0;  ///< x RangeConvFactor for mm

  friend bool operator==(const SonarReading&, const SonarReading&) = default;
};

struct SipIo {
  std::uint8_t grip_state = 0;
  std::uint8_t analog_port = 0;
  std::uint8_t analog = 0;  ///< 0-255 = 0-5 V
  std::uint8_t digital_in = 0;
  std::uint8_t digital_out = 0;

  friend bool operator==(const SipIo&, const SipIo&) = default;
};

struct StandardSip {
  bool moving = false;  ///< type 0x33
  std::uint16_t x = 0;
  std::uint16_t y = 0;
  std::int16_t th = 0;
  std::int16_t left_velocity = 0;
  std::int16_t right_velocity = 0;
  std::uint8_t battery_tenths = 0;
  std::uint16_t stall_and_bumpers = 0;
  std::int16_t control = 0;
  std::uint16_t flags = 0;
  std::uint8_t compass = 0;
  std::vector<SonarReading> sonar;
  std::optional<SipIo> io;
  std::optional<std::uint16_t> battery_x10;  ///< tenths of a volt, finer than battery_tenths' range
  std::optional<std::uint8_t> charge_state;
  std::optional<std::int16_t> rotational_velocity_tenths;  ///< tenths of deg/s
  std::optional<std::uint16_t> fault_flags;
  Bytes extra;  ///< what followed the last complete group

  [[nodiscard]] bool left_stalled() const noexcept { return (stall_and_bumpers & 0x0001) != 0; }
  [[nodiscard]] bool right_stalled() const noexcept { return (stall_and_bumpers & 0x0100) != 0; }
  [[nodiscard]] bool motors_enabled() const noexcept { return (flags & 0x0001) != 0; }

  friend bool operator==(const StandardSip&, const StandardSip&) = default;
};

/// The fixed part: XPOS .. SONAR COUNT.
inline constexpr std::size_t kSipFixedLength = 19;

/// Decodes a standard SIP's payload (what follows the type byte). Fails,
/// saying why, on another type, a payload shorter than the fixed part, or
/// sonar readings cut short.
[[nodiscard]] Result<StandardSip> decode_standard_sip(Byte type, ByteView payload);

/// The whole packet, with the optional groups that are present (each
/// requires the ones before it: a group after a missing one is not sent).
[[nodiscard]] Bytes encode_standard_sip(const StandardSip& sip);

/// The robot's answer to SYNC2: `name \0 class \0 subclass \0`. ARIA loads
/// the parameters of the lowercased subclass (params/<subclass>.p).
struct RobotIdentity {
  std::string name;     ///< e.g. "MyPioneer"
  std::string type;     ///< the class, e.g. "Pioneer"
  std::string subtype;  ///< e.g. "p3dx-sh"

  friend bool operator==(const RobotIdentity&, const RobotIdentity&) = default;
};

/// Reads a SYNC2 answer's payload. Fails when it holds fewer than three
/// NUL-terminated strings.
[[nodiscard]] Result<RobotIdentity> decode_identity(ByteView payload);

/// The whole SYNC2 answer packet (type 2). Requires the three strings to fit.
[[nodiscard]] Bytes encode_identity(const RobotIdentity& identity);

/// The configuration packet (type 0x20) that CONFIG asks for, in the order
/// ARIA's ArRobotConfigPacketReader reads it: strings end with NUL, numbers
/// are little-endian. The fields up to the firmware version are read; what
/// follows (later firmware's lateral, power and gyro fields) is kept as it
/// came, so the packet encodes back to the same bytes.
struct ConfigPacket {
  std::string type;
  std::string subtype;
  std::string serial_number;
  std::uint8_t four_motors = 0;  ///< unused by ARIA
  std::uint16_t rot_vel_top = 0;
  std::uint16_t trans_vel_top = 0;
  std::uint16_t rot_accel_top = 0;
  std::uint16_t trans_accel_top = 0;
  std::uint16_t pwm_max = 0;
  std::string name;
  std::uint8_t sip_cycle_ms = 0;
  std::uint8_t host_baud = 0;  ///< 0 9600, 1 19200, 2 38400, 3 57600, 4 115200
  std::uint8_t aux1_baud = 0;
  std::uint16_t has_gripper = 0;
  std::uint16_t front_sonar = 0;
  std::uint8_t rear_sonar = 0;
  std::uint16_t low_battery = 0;  ///< tenths of a volt
  std::uint16_t rev_count = 0;
  std::uint16_t watchdog_ms = 0;
  std::uint8_t normal_motor_packets = 0;
  std::uint16_t stall_val = 0;
  std::uint16_t stall_count = 0;
  std::uint16_t joy_vel = 0;
  std::uint16_t joy_rot_vel = 0;
  std::uint16_t rot_vel_max = 0;
  std::uint16_t trans_vel_max = 0;
  std::uint16_t rot_accel = 0;
  std::uint16_t rot_decel = 0;
  std::uint16_t rot_kp = 0;
  std::uint16_t rot_kv = 0;
  std::uint16_t rot_ki = 0;
  std::uint16_t trans_accel = 0;
  std::uint16_t trans_decel = 0;
  std::uint16_t trans_kp = 0;
  std::uint16_t trans_kv = 0;
  std::uint16_t trans_ki = 0;
  std::uint8_t front_bumps = 0;
  std::uint8_t rear_bumps = 0;
  std::uint8_t has_charger = 0;
  std::uint8_t sonar_cycle_ms = 0;
  std::uint8_t reset_baud = 0;
  std::uint8_t gyro_type = 0;
  std::int16_t drift_factor = 0;
  std::uint8_t aux2_baud = 0;
  std::uint8_t aux3_baud = 0;
  std::uint16_t ticks_mm = 0;
  std::uint16_t shutdown_voltage = 0;  ///< tenths of a volt
  std::string firmware_version;
  Bytes rest;  ///< what followed the firmware version

  friend bool operator==(const ConfigPacket&, const ConfigPacket&) = default;
};

/// Reads a configuration packet's payload. Fails, saying where, when it ends
/// before the firmware version (or a string has no NUL).
[[nodiscard]] Result<ConfigPacket> decode_config(ByteView payload);

/// The whole configuration packet (type 0x20).
[[nodiscard]] Bytes encode_config(const ConfigPacket& config);

}  // namespace flockbridge::protocol::pioneer
