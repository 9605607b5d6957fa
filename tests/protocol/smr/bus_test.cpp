// The SMR's RS485 bus: SMRD's polls, the motor commands of the client
// library, and the modules' replies read into the robot's state, byte for
// byte from seed 000, struct smr (seed 001), smr.h and smrd.c.
#include <doctest/doctest.h>

#include "flockbridge/protocol/smr/bus.hpp"
#include "support/hex.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;
using flockbridge::testing::hex;

namespace {

/// Applies a whole bus message (first byte included) to `reading`.
unsigned apply_message(const Bytes& message, Reading& reading) {
  REQUIRE(!message.empty());
  REQUIRE((message[0] & 0x1F) + 1U == message.size());
  return apply_reply(ByteView(message).subspan(1), reading);
}

}  // namespace

TEST_CASE("a period's polls: each module asked in turn, each request with its zeros") {
  Bytes expected = hex("01 21");
  expected.insert(expected.end(), 10, 0);
  for (const Byte module : {Byte{0x22}}) {
    expected.push_back(0x01);
    expected.push_back(module);
    expected.insert(expected.end(), 10, 0);
  }
  for (const Byte module : {Byte{0x17}, Byte{0x88}, Byte{0x19}}) {
    expected.push_back(0x01);
    expected.push_back(module);
    expected.insert(expected.end(), 16, 0);
  }
  CHECK(encode_polls() == expected);
  CHECK(encode_polls().size() == 78);
  CHECK(encode_polls().size() < kPeriodBytes);  // room for one client message and the rest in zeros
}

TEST_CASE("motor speed commands as the client library writes them") {
  CHECK(encode_speed(module::kLeftSpeed, 50) == hex("02 11 32"));
  CHECK(encode_speed(module::kRightSpeed, -50) == hex("02 12 CE"));
  CHECK(encode_speed(module::kLeftSpeed, -128) == hex("02 11 81"));  // -128 goes as -127
  CHECK(encode_speed(module::kLeftSpeed, 500) == hex("02 11 7F"));
  CHECK(read_speed(hex("11 32")) == SpeedCommand{module::kLeftSpeed, 50});
  CHECK(read_speed(hex("12 CE")) == SpeedCommand{module::kRightSpeed, -50});
  CHECK_FALSE(read_speed(hex("13 00")));
  CHECK_FALSE(read_speed(hex("11")));
  CHECK_FALSE(read_speed(hex("11 00 00")));
}

TEST_CASE("motor replies: the encoder big-endian, status and pwm when the module sends them") {
  Reading reading;
  CHECK(apply_message(hex("05 A1 12 34 02 90"), reading) == part::kLeft);
  CHECK(reading.left.encoder == 0x1234);
  CHECK(reading.left.status == motor_status::kBlocked);
  CHECK(reading.left.pwm == 16);  // sent offset by 128
  CHECK(apply_message(hex("05 A2 FF FE 00 00"), reading) == part::kRight);
  CHECK(reading.right.encoder == 0xFFFE);
  CHECK(reading.right.pwm == -128);
  // An older module sends the encoder only.
  Reading older;
  CHECK(apply_message(hex("03 A2 00 10"), older) == part::kRight);
  CHECK(older.right.encoder == 16);
  CHECK_FALSE(older.right.status);
  CHECK_FALSE(older.right.pwm);
  CHECK(older.parts == part::kRight);
  CHECK(encode_motor(reply::kLeftEncoder, 0x1234, 2, 16) == hex("05 A1 12 34 02 90"));
}

TEST_CASE("line sensor and IR replies: 8 and 6 bytes of readings") {
  Reading reading;
  CHECK(apply_message(hex("09 17 01 02 03 04 05 06 07 08"), reading) == part::kLine);
  CHECK(reading.line == std::array<std::uint8_t, 8>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(apply_message(hex("09 88 10 20 30 40 50 60 77 77"), reading) == part::kInfrared);
  CHECK(reading.ir == std::array<std::uint8_t, 6>{0x10, 0x20, 0x30, 0x40, 0x50, 0x60});
  CHECK(reading.parts == (part::kLine | part::kInfrared));
  // Too short to hold them: nothing read.
  Reading short_reply;
  CHECK(apply_message(hex("07 17 01 02 03 04 05 06"), short_reply) == 0);
  CHECK(apply_message(hex("06 88 01 02 03 04 05"), short_reply) == 0);
  CHECK(short_reply == Reading{});
}

TEST_CASE("the power module: digital inputs and five 10-bit analog inputs, as the seed lays them out") {
  // fedcba = 000011 (power on, external power), A = 0x3A5, B = 0x100,
  // C = 0x002, D = 0x3FF, E = 0.
  const Bytes message = hex("08 19 0F 4C A5 00 02 FF 00");
  Reading reading;
  CHECK(apply_message(message, reading) == part::kPower);
  CHECK(reading.digital == (power_status::kPowerOn | power_status::kExternalPower));
  CHECK(reading.analog == std::array<int, 5>{0x3A5, 0x100, 0x002, 0x3FF, 0});
  CHECK(encode_power(reading.digital, reading.analog) == message);
  CHECK(analog_volts(0x3A5) == doctest::Approx(11.886).epsilon(0.001));
  // The switch off: bit a clear (what SMRD counted towards powering off).
  Reading off;
  CHECK(apply_message(hex("08 19 00 00 00 00 00 00 00"), off) == part::kPower);
  CHECK((off.digital & power_status::kPowerOn) == 0);
  // Any other length is not a power reply.
  CHECK(apply_message(hex("07 19 0F 4C A5 00 02 FF"), off) == 0);
}

TEST_CASE("what is not a reply leaves the reading as it was") {
  Reading reading;
  CHECK(apply_message(hex("00"), reading) == 0);           // an empty message (a zero byte on the bus)
  CHECK(apply_message(hex("02 11 20"), reading) == 0);     // a client's motor command, echoed
  CHECK(apply_message(hex("02 A1 12"), reading) == 0);     // an encoder cut short
  CHECK(apply_message(hex("03 55 01 02"), reading) == 0);  // a module this reading has no place for
  CHECK(reading == Reading{});
}

TEST_CASE("a module's missed reply is held from its last answer for up to the loss limit, and no longer") {
  ReadingHold hold(2);
  Reading whole;
  whole.ir = {1, 2, 3, 4, 5, 6};
  whole.analog[0] = 700;
  whole.parts = part::kInfrared | part::kPower;
  CHECK(hold.fill(whole) == whole);
  Reading no_ir;
  no_ir.analog[0] = 690;
  no_ir.parts = part::kPower;
  for (int period = 1; period <= 2; ++period) {
    CAPTURE(period);
    const Reading held = hold.fill(no_ir);
    CHECK(held.parts == (part::kInfrared | part::kPower));
    CHECK(held.ir == whole.ir);
    CHECK(held.analog[0] == 690);  // the fresh answer, never the held one
  }
  const Reading gone = hold.fill(no_ir);
  CHECK(gone.parts == part::kPower);
  CHECK(gone.ir == Reading{}.ir);
  // A module that never answered is never made up; one that answers again is held afresh.
  CHECK((hold.fill(no_ir).parts & part::kLeft) == 0);
  CHECK(hold.fill(whole).parts == whole.parts);
  CHECK(hold.fill(no_ir).ir == whole.ir);
  hold.reset();
  CHECK(hold.fill(no_ir).parts == part::kPower);
}
