#include "flockbridge/protocol/pioneer/sip.hpp"

#include <algorithm>
#include <type_traits>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"

namespace flockbridge::protocol::pioneer {
namespace {

/// Reads little-endian fields from a payload, front to back.
class Reader {
 public:
  explicit Reader(ByteView bytes) : bytes_(bytes) {}
  [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - at_; }
  std::uint8_t u8() { return bytes_[at_++]; }
  std::uint16_t u16() {
    const std::uint16_t value = read_u16le(bytes_, at_);
    at_ += 2;
    return value;
  }
  std::int16_t s16() { return static_cast<std::int16_t>(u16()); }
  [[nodiscard]] ByteView rest() const noexcept { return bytes_.subspan(at_); }
  /// A NUL-terminated string into `into`; false (and `into` as it was)
  /// when the bytes end first.
  bool text(std::string& into) {
    const ByteView left = rest();
    const auto end = std::find(left.begin(), left.end(), Byte{0});
    if (end == left.end()) return false;
    into.assign(left.begin(), end);
    at_ += into.size() + 1;
    return true;
  }

 private:
  ByteView bytes_;
  std::size_t at_ = 0;
};

void put_s16(Bytes& out, std::int16_t value) {
  append_u16le(out, static_cast<std::uint16_t>(value));
}

void put_text(Bytes& out, const std::string& text) {
  out.insert(out.end(), text.begin(), text.end());
  out.push_back(0);
}

/// The configuration packet's fields in order, for reading and writing
/// alike: `visit` is called with each member and its kind.
template <typename Config, typename Visit>
void config_fields(Config& c, Visit&& visit) {
  visit(c.type);
  visit(c.subtype);
  visit(c.serial_number);
  visit(c.four_motors);
  for (auto* field : {&c.rot_vel_top, &c.trans_vel_top, &c.rot_accel_top, &c.trans_accel_top, &c.pwm_max})
    visit(*field);
  visit(c.name);
  for (auto* field : {&c.sip_cycle_ms, &c.host_baud, &c.aux1_baud}) visit(*field);
  for (auto* field : {&c.has_gripper, &c.front_sonar}) visit(*field);
  visit(c.rear_sonar);
  for (auto* field : {&c.low_battery, &c.rev_count, &c.watchdog_ms}) visit(*field);
  visit(c.normal_motor_packets);
  for (auto* field : {&c.stall_val, &c.stall_count, &c.joy_vel, &c.joy_rot_vel, &c.rot_vel_max, &c.trans_vel_max,
                      &c.rot_accel, &c.rot_decel, &c.rot_kp, &c.rot_kv, &c.rot_ki, &c.trans_accel, &c.trans_decel,
                      &c.trans_kp, &c.trans_kv, &c.trans_ki}) {
    visit(*field);
  }
  for (auto* field : {&c.front_bumps, &c.rear_bumps, &c.has_charger, &c.sonar_cycle_ms, &c.reset_baud, &c.gyro_type}) {
    visit(*field);
  }
  visit(c.drift_factor);
  for (auto* field : {&c.aux2_baud, &c.aux3_baud}) visit(*field);
  for (auto* field : {&c.ticks_mm, &c.shutdown_voltage}) visit(*field);
  visit(c.firmware_version);
}

}  // namespace

Result<StandardSip> decode_standard_sip(Byte type, ByteView payload) {
  if (!is_standard_sip(type)) return Error{"packet type " + to_hex(ByteView(&type, 1)) + " is not a standard SIP"};
  if (payload.size() < kSipFixedLength) {
    return Error{"a SIP of " + std::to_string(payload.size()) + " bytes is shorter than its fixed part (" +
                 std::to_string(kSipFixedLength) + ")"};
  }
  Reader in(payload);
  StandardSip sip;
  sip.moving = type == kSipMoving;
  sip.x = in.u16();
  sip.y = in.u16();
  sip.th = in.s16();
  sip.left_velocity = in.s16();
  sip.right_velocity = in.s16();
  sip.battery_tenths = in.u8();
  sip.stall_and_bumpers = in.u16();
  sip.control = in.s16();
  sip.flags = in.u16();
  sip.compass = in.u8();
  const std::size_t readings = in.u8();
  if (in.left() < 3 * readings) {
    return Error{"a SIP announces " + std::to_string(readings) + " sonar readings but holds " +
                 std::to_string(in.left() / 3)};
  }
  sip.sonar.reserve(readings);
  for (std::size_t i = 0; i < readings; ++i) {
    SonarReading reading;
    reading.number = in.u8();
    reading.range = in.u16();
    sip.sonar.push_back(reading);
  }
  if (in.left() >= 5) {
    SipIo io;
    io.grip_state = in.u8();
    io.analog_port = in.u8();
    io.analog = in.u8();
    io.digital_in = in.u8();
    io.digital_out = in.u8();
    sip.io = io;
    if (in.left() >= 2) {
      sip.battery_x10 = in.u16();
      if (in.left() >= 1) {
        sip.charge_state = in.u8();
        if (in.left() >= 2) {
          sip.rotational_velocity_tenths = in.s16();
          if (in.left() >= 2) sip.fault_flags = in.u16();
        }
      }
    }
  }
  const ByteView rest = in.rest();
  sip.extra.assign(rest.begin(), rest.end());
  return sip;
}

Bytes encode_standard_sip(const StandardSip& sip) {
  Bytes payload;
  append_u16le(payload, sip.x);
  append_u16le(payload, sip.y);
  put_s16(payload, sip.th);
  put_s16(payload, sip.left_velocity);
  put_s16(payload, sip.right_velocity);
  payload.push_back(sip.battery_tenths);
  append_u16le(payload, sip.stall_and_bumpers);
  put_s16(payload, sip.control);
  append_u16le(payload, sip.flags);
  payload.push_back(sip.compass);
  payload.push_back(static_cast<Byte>(sip.sonar.size()));
  for (const SonarReading& reading : sip.sonar) {
    payload.push_back(reading.number);
    append_u16le(payload, reading.range);
  }
  if (sip.io) {
    payload.insert(payload.end(),
                   {sip.io->grip_state, sip.io->analog_port, sip.io->analog, sip.io->digital_in, sip.io->digital_out});
    if (sip.battery_x10) {
      append_u16le(payload, *sip.battery_x10);
      if (sip.charge_state) {
        payload.push_back(*sip.charge_state);
        if (sip.rotational_velocity_tenths) {
          put_s16(payload, *sip.rotational_velocity_tenths);
          if (sip.fault_flags) append_u16le(payload, *sip.fault_flags);
        }
      }
    }
  }
  payload.insert(payload.end(), sip.extra.begin(), sip.extra.end());
  return encode_packet(sip.moving ? kSipMoving : kSipStopped, payload);
}

Result<ConfigPacket> decode_config(ByteView payload) {
  Reader in(payload);
  ConfigPacket config;
  std::size_t field = 0;
  bool short_packet = false;
  config_fields(config, [&](auto& member) {
    if (short_packet) return;
    using Member = std::remove_reference_t<decltype(member)>;
    if constexpr (std::is_same_v<Member, std::string>) {
      if (!in.text(member)) {
        short_packet = true;
        return;
      }
    } else if (in.left() < sizeof(Member)) {
      short_packet = true;
      return;
    } else if constexpr (sizeof(Member) == 1) {
      member = in.u8();
    } else {
      member = static_cast<Member>(in.u16());
    }
    ++field;
  });
  if (short_packet) {
    return Error{"a configuration packet of " + std::to_string(payload.size()) + " bytes ends at its field " +
                 std::to_string(field + 1) + ", before the firmware version"};
  }
  const ByteView rest = in.rest();
  config.rest.assign(rest.begin(), rest.end());
  return config;
}

Bytes encode_config(const ConfigPacket& config) {
  Bytes payload;
  config_fields(config, [&](const auto& member) {
    using Member = std::remove_cvref_t<decltype(member)>;
    if constexpr (std::is_same_v<Member, std::string>) {
      put_text(payload, member);
    } else if constexpr (sizeof(Member) == 1) {
      payload.push_back(member);
    } else {
      append_u16le(payload, static_cast<std::uint16_t>(member));
    }
  });
  payload.insert(payload.end(), config.rest.begin(), config.rest.end());
  return encode_packet(kConfigPacket, payload);
}

Result<RobotIdentity> decode_identity(ByteView payload) {
  std::vector<std::string> parts;
  std::string current;
  for (const Byte byte : payload) {
    if (byte == 0) {
      parts.push_back(std::move(current));
      current.clear();
      if (parts.size() == 3) break;
    } else {
      current.push_back(static_cast<char>(byte));
    }
  }
  if (parts.size() < 3) {
    return Error{"a SYNC2 answer holds " + std::to_string(parts.size()) +
                 " NUL-terminated strings; name, class and subclass were expected"};
  }
  return RobotIdentity{parts[0], parts[1], parts[2]};
}

Bytes encode_identity(const RobotIdentity& identity) {
  Bytes payload;
  for (const std::string* part : {&identity.name, &identity.type, &identity.subtype}) put_text(payload, *part);
  return encode_packet(command::kSync2, payload);
}

}  // namespace flockbridge::protocol::pioneer
