#include <doctest/doctest.h>

#include "flockbridge/protocol/flockbot/uno_packets.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

namespace {

SensorReading sample() {
  SensorReading r;
  r.battery = 0x0312;
  r.ir = {0x0101, 0x02BD, 0xBD03, 0x0404, 0xFFFF};
  r.l_bump = 1;
  r.h_bump = 0xBD;
  r.odometer_left = -1234;
  r.odometer_right = 32767;
  r.odometer_avg = -32768;
  r.wheel_watcher_left = -67;
  r.wheel_watcher_right = 500;
  return r;
}

}  // namespace

TEST_CASE("the sensor packet layout, byte by byte") {
  const Bytes p = encode_sensor_payload(sample());
  REQUIRE(p.size() == 29);
  CHECK(p[0] == 'S');
  CHECK(p[1] == 'E');
  CHECK(p[2] == 'N');
  CHECK(p[3] == 0x12);  // battery LSB first
  CHECK(p[4] == 0x03);
  CHECK(p[5] == 0x01);   // ir0
  CHECK(p[7] == 0xBD);   // ir1 LSB
  CHECK(p[10] == 0xBD);  // ir2 MSB
  CHECK(p[13] == 0xFF);  // ir4
  CHECK(p[14] == 0xFF);
  CHECK(p[15] == 1);     // l_bump
  CHECK(p[16] == 0xBD);  // h_bump
  CHECK(read_i16le(p, 17) == -1234);
  CHECK(read_i16le(p, 19) == 32767);
  CHECK(read_i16le(p, 21) == -32768);
  CHECK(read_i16le(p, 23) == -67);
  CHECK(read_i16le(p, 25) == 500);
  CHECK(p[27] == 0);
  CHECK(p[28] == 0);
}

TEST_CASE("a sensor packet decodes to the values it was made from") {
  auto packet = parse_uno_packet(encode_sensor_payload(sample()));
  REQUIRE(packet);
  CHECK(packet.value().kind == UnoPacketKind::Sensor);
  CHECK(packet.value().sensor == sample());
}

TEST_CASE("plausibility: what the checksum lets through, the packet table catches") {
  Bytes sensor = encode_sensor_payload(sample());
  Bytes long_sensor = sensor;
  long_sensor.push_back(0);
  CHECK(parse_uno_packet(long_sensor).error().message == "SEN packet of 30 bytes (expected 29)");
  Bytes reserved = sensor;
  reserved[28] = 0x40;
  CHECK(parse_uno_packet(reserved).error().message == "SEN packet with non-zero reserved bytes");
  CHECK(parse_uno_packet(as_bytes("ACKX")).error().message == "ACK packet of 4 bytes (expected 3)");
  CHECK_FALSE(parse_uno_packet(as_bytes("DMCC")));
  CHECK_FALSE(parse_uno_packet(as_bytes("EM")));
  CHECK_FALSE(parse_uno_packet(Bytes{'S', 0x01, 'Q', 5}));
  CHECK_FALSE(parse_uno_packet(as_bytes("NA")));
}

TEST_CASE("known short packets and the ones the bridge passes on") {
  CHECK(parse_uno_packet(as_bytes("ACK")).value().kind == UnoPacketKind::Ack);
  CHECK(parse_uno_packet(as_bytes("NAK")).value().kind == UnoPacketKind::Nak);
  CHECK(parse_uno_packet(as_bytes("EMG")).value().kind == UnoPacketKind::Emergency);
  CHECK(parse_uno_packet(as_bytes("DMC")).value().kind == UnoPacketKind::MoveComplete);
  auto future = parse_uno_packet(Bytes{'X', 'Y', 'Z', 1, 2, 3});
  REQUIRE(future);
  CHECK(future.value().kind == UnoPacketKind::Other);
}
