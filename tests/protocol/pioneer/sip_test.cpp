#include <doctest/doctest.h>

#include <string>

#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"
#include "support/hex.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::pioneer;
using flockbridge::testing::hex;

TEST_CASE("a standard SIP's fields, in the manual's order, each from its own bytes") {
  // XPOS 0x1234, YPOS 0x7FFF, THPOS -2, L VEL 300, R VEL -300, BATTERY 121,
  // STALL 0x0101 (both wheels), CONTROL 90, FLAGS 0x0003, COMPASS 45,
  // two sonar readings (3: 0x0456, 7: 0x1388), then the I/O group,
  // BATTERYX10 0x007B, CHARGESTATE 2.
  const Bytes payload =
      hex("34 12 FF 7F FE FF 2C 01 D4 FE 79 01 01 5A 00 03 00 2D 02 03 56 04 07 88 13 "
          "00 01 80 0F F0 7B 00 02");
  const auto sip = decode_standard_sip(kSipMoving, payload);
  REQUIRE_MESSAGE(sip, sip.error().message);
  const StandardSip& s = sip.value();
  CHECK(s.moving);
  CHECK(s.x == 0x1234);
  CHECK(s.y == 0x7FFF);
  CHECK(s.th == -2);
  CHECK(s.left_velocity == 300);
  CHECK(s.right_velocity == -300);
  CHECK(s.battery_tenths == 121);
  CHECK(s.left_stalled());
  CHECK(s.right_stalled());
  CHECK(s.control == 90);
  CHECK(s.motors_enabled());
  CHECK(s.flags == 0x0003);
  CHECK(s.compass == 45);
  REQUIRE(s.sonar.size() == 2);
  CHECK(s.sonar[0] == SonarReading{3, 0x0456});
  CHECK(s.sonar[1] == SonarReading{7, 0x1388});
  REQUIRE(s.io);
  CHECK(*s.io == SipIo{0, 1, 0x80, 0x0F, 0xF0});
  CHECK(s.battery_x10 == std::uint16_t{0x007B});
  CHECK(s.charge_state == std::uint8_t{2});
  CHECK_FALSE(s.rotational_velocity_tenths);
  CHECK(s.extra.empty());
  // Written back, the packet is the same bytes.
  CHECK(encode_standard_sip(s) == encode_packet(kSipMoving, payload));
}

TEST_CASE("a SIP without the optional groups, or with bytes after the last one, reads as the robot sent it") {
  StandardSip bare;
  bare.x = 100;
  bare.battery_tenths = 130;
  const Bytes packet = encode_standard_sip(bare);
  CHECK(packet.size() == kHeaderLength + 1 + kSipFixedLength + 2);
  PacketDecoder decoder;
  decoder.feed(packet);
  const auto event = decoder.next();
  REQUIRE(event);
  CHECK(event->type == kSipStopped);
  const auto read = decode_standard_sip(event->type, event->payload);
  REQUIRE(read);
  CHECK(read.value() == bare);
  CHECK_FALSE(read.value().io);

  StandardSip full = bare;
  full.io = SipIo{};
  full.battery_x10 = 129;
  full.charge_state = 1;
  full.rotational_velocity_tenths = -155;
  full.fault_flags = 0x8001;
  full.extra = hex("01 02 03");  // later firmware's fields, kept as they came
  const Bytes full_packet = encode_standard_sip(full);
  const auto full_read = decode_standard_sip(full_packet[3], ByteView(full_packet).subspan(4, full_packet.size() - 6));
  REQUIRE(full_read);
  CHECK(full_read.value() == full);
}

TEST_CASE("a SIP that is too short, cut in its sonar readings, or of another type is refused with the reason") {
  CHECK(decode_standard_sip(kSipStopped, hex("00 00 00")).error().message ==
        "a SIP of 3 bytes is shorter than its fixed part (19)");
  Bytes cut(kSipFixedLength, 0);
  cut.back() = 2;  // two readings announced
  cut.insert(cut.end(), {1, 0x10, 0x00, 2});
  CHECK(decode_standard_sip(kSipStopped, cut).error().message == "a SIP announces 2 sonar readings but holds 1");
  CHECK_FALSE(decode_standard_sip(0x20, Bytes(kSipFixedLength, 0)));
}

TEST_CASE("the SYNC2 answer names the robot: name, class and subclass") {
  const RobotIdentity pioneer{"Trilby", "Pioneer", "p3dx-sh"};
  const Bytes packet = encode_identity(pioneer);
  CHECK(packet == encode_packet(2, as_bytes(std::string_view("Trilby\0Pioneer\0p3dx-sh\0", 23))));
  const auto read = decode_identity(ByteView(packet).subspan(4, packet.size() - 6));
  REQUIRE(read);
  CHECK(read.value() == pioneer);
  CHECK(decode_identity(as_bytes(std::string_view("Trilby\0Pioneer", 14))).error().message ==
        "a SYNC2 answer holds 1 NUL-terminated strings; name, class and subclass were expected");
}

TEST_CASE("the configuration packet reads in ARIA's order, and writes back the same bytes") {
  ConfigPacket config;
  config.type = "Pioneer";
  config.subtype = "p3dx-sh";
  config.serial_number = "SN42";
  config.four_motors = 0;
  config.rot_vel_top = 0x0102;
  config.trans_vel_top = 2200;
  config.name = "Trilby";
  config.sip_cycle_ms = 100;
  config.host_baud = 0;
  config.watchdog_ms = 2000;
  config.trans_vel_max = 750;
  config.drift_factor = -7;
  config.shutdown_voltage = 105;
  config.firmware_version = "2.1";
  config.rest = hex("01 02 03 04");
  const Bytes packet = encode_config(config);
  CHECK(packet[3] == kConfigPacket);
  // Strings first, NUL-terminated, then the fourth byte and the tops, low byte first.
  const ByteView payload = ByteView(packet).subspan(4, packet.size() - 6);
  const std::string_view head("Pioneer\0p3dx-sh\0SN42\0", 21);
  CHECK(
      std::equal(head.begin(), head.end(), payload.begin(), [](char a, Byte b) { return static_cast<Byte>(a) == b; }));
  CHECK(payload[21] == 0);
  CHECK(payload[22] == 0x02);
  CHECK(payload[23] == 0x01);
  const auto read = decode_config(payload);
  REQUIRE_MESSAGE(read, read.error().message);
  CHECK(read.value() == config);
  CHECK(read.value().watchdog_ms == 2000);
  CHECK(read.value().drift_factor == -7);
  // Cut before the firmware version: refused, saying so.
  const auto cut = decode_config(payload.first(40));
  REQUIRE_FALSE(cut);
  CHECK(cut.error().message.find("before the firmware version") != std::string::npos);
}
