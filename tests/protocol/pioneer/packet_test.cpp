#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "support/chunking.hpp"
#include "support/hex.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::pioneer;
using flockbridge::testing::hex;

namespace {

/// "packet 0B 1B C8 00" for a good packet (type, then payload), "bad-checksum 0B ...",
/// "bad-count", "incomplete".
std::string describe(const PacketDecoder::Event& event) {
  switch (event.kind) {
    case PacketDecoder::EventKind::Packet:
    case PacketDecoder::EventKind::BadChecksum: {
      Bytes body{event.type};
      body.insert(body.end(), event.payload.begin(), event.payload.end());
      return std::string(event.kind == PacketDecoder::EventKind::Packet ? "packet " : "bad-checksum ") + to_hex(body);
    }
    case PacketDecoder::EventKind::BadCount:
      return "bad-count";
    case PacketDecoder::EventKind::Incomplete:
      return "incomplete";
  }
  return "?";
}

std::vector<std::string> decode(const Bytes& input, const flockbridge::testing::Split& split,
                                DecoderStats* stats = nullptr) {
  PacketDecoder decoder;
  std::vector<std::string> seen;
  for (auto piece : split.cut(input)) {
    decoder.feed(piece);
    while (auto event = decoder.next()) seen.push_back(describe(*event));
  }
  if (stats != nullptr) *stats = decoder.stats();
  return seen;
}

}  // namespace

TEST_CASE("AROS packets byte for byte: the SYNCs, an integer, a negative integer, a string") {
  // The bare SYNC packets every ARIA program starts with, and what they
  // look like on the wire in the robots' manuals.
  CHECK(encode_packet(command::kSync0) == hex("FA FB 03 00 00 00"));
  CHECK(encode_packet(command::kSync1) == hex("FA FB 03 01 00 01"));
  CHECK(encode_packet(command::kSync2) == hex("FA FB 03 02 00 02"));
  // ENABLE 1: 04 3B | 01 00 -> 0x043B + 0x0100.
  CHECK(encode_command({command::kEnable, 1}) == hex("FA FB 06 04 3B 01 00 05 3B"));
  // VEL -200: the magnitude after 0x1B; 0x0B1B + 0xC800.
  CHECK(encode_command({command::kVel, -200}) == hex("FA FB 06 0B 1B C8 00 D3 1B"));
  // An odd number of bytes: the last one is XORed in, not added.
  // SAY "abcd": 0x0F2B + 0x0461 + 0x6263 = 0x75EF, ^ 0x64 = 0x758B (added: 0x7653).
  CHECK(encode_command({command::kSay, std::string("abcd")}) == hex("FA FB 09 0F 2B 04 61 62 63 64 75 8B"));
  CHECK(packet_checksum(hex("00 FF 01")) == 0x00FE);
  // The sum keeps 16 bits: FF FF + 00 02 wraps to 00 01.
  CHECK(packet_checksum(hex("FF FF 00 02")) == 0x0001);
  CHECK(packet_checksum(hex("01 02")) == 0x0102);
}

TEST_CASE("AROS command arguments read back as they were written, and bad ones are named") {
  const std::vector<Command> commands{
      {command::kPulse, NoArgument{}},
      {command::kEnable, 0},
      {command::kVel, 350},
      {command::kRVel, -45},
      {command::kMove, -kMaxIntArgument},
      {command::kSay, std::string("hello")},
      {command::kConfig, RawArgument{hex("01 02 03")}},
  };
  for (const Command& original : commands) {
    CAPTURE(command_name(original.number));
    REQUIRE(check_command(original));
    const Bytes packet = encode_command(original);
    PacketDecoder decoder;
    decoder.feed(packet);
    const auto event = decoder.next();
    REQUIRE(event);
    REQUIRE(event->kind == PacketDecoder::EventKind::Packet);
    CHECK(decode_command(event->type, event->payload) == original);
  }
  CHECK_FALSE(check_command({command::kVel, 70000}));
  CHECK(check_command({command::kVel, 70000}).error().message.find("VEL: 70000 is out of range") == 0);
  CHECK_FALSE(check_command({command::kSay, std::string(kMaxPayload, 'x')}));
  // An integer marker with the wrong number of bytes, or a string whose
  // length byte lies, is kept raw rather than misread.
  CHECK(decode_command(command::kVel, hex("3B 01")).argument == Argument{RawArgument{hex("3B 01")}});
  CHECK(decode_command(command::kSay, hex("2B 05 61")).argument == Argument{RawArgument{hex("2B 05 61")}});
  CHECK(command_name(command::kEStop) == "E_STOP");
  CHECK(command_name(77) == "command 77");
}

TEST_CASE("AROS decoder table: every case whole, byte by byte and at random splits") {
  const Bytes vel = encode_command({command::kVel, -200});
  const Bytes sync2 = encode_packet(command::kSync2);
  // A payload that holds FA FB itself: the end is found by the count.
  const Bytes inner = encode_packet(0x20, hex("FA FB 03 00 00 00"));
  Bytes damaged = vel;
  damaged[5] ^= 0x01;
  struct Row {
    std::string name;
    Bytes input;
    std::vector<std::string> expected;
  };
  std::vector<Row> rows{
      {"one packet", vel, {"packet 0B 1B C8 00"}},
      {"noise, then two packets",
       [&] {
         Bytes in = hex("00 FA 13 FB FA");
         in.insert(in.end(), vel.begin(), vel.end());
         in.insert(in.end(), sync2.begin(), sync2.end());
         return in;
       }(),
       {"packet 0B 1B C8 00", "packet 02"}},
      {"a header inside a payload is not a packet", inner, {"packet 20 FA FB 03 00 00 00"}},
      {"a bad checksum, then the packet behind it",
       [&] {
         Bytes in = damaged;
         in.insert(in.end(), sync2.begin(), sync2.end());
         return in;
       }(),
       {"bad-checksum 0B 1B C9 00", "packet 02"}},
      {"a count below 3 or above 200, then a packet",
       [&] {
         Bytes in = hex("FA FB 02 FA FB C9");
         in.insert(in.end(), sync2.begin(), sync2.end());
         return in;
       }(),
       {"bad-count", "bad-count", "packet 02"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    for (const auto& split : flockbridge::testing::splits()) {
      CAPTURE(split.name);
      CHECK(decode(row.input, split) == row.expected);
    }
  }
}

TEST_CASE("a count damaged upwards cannot swallow the packets behind it") {
  const Bytes vel = encode_command({command::kVel, 100});
  const Bytes pulse = encode_packet(command::kPulse);
  Bytes input = vel;
  input[2] = 40;  // count damaged: 40 bytes are awaited
  for (int i = 0; i < 8; ++i) input.insert(input.end(), pulse.begin(), pulse.end());
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    DecoderStats stats;
    const auto seen = decode(input, split, &stats);
    // Once 40 bytes are in, the checksum fails and the hunt resumes one byte
    // after the rejected header: every PULSE is found, none is lost.
    REQUIRE(seen.size() == 9);
    CHECK(seen[0].rfind("bad-checksum", 0) == 0);
    for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] == "packet 00");
    CHECK(stats.packets == 8);
    CHECK(stats.bad_checksum == 1);
    CHECK(stats.discarded_bytes == vel.size());
  }
}

TEST_CASE("a packet whose bytes stop coming is abandoned, and what followed its header is read again") {
  PacketDecoder decoder;
  const Bytes pulse = encode_packet(command::kPulse);
  Bytes input = hex("FA FB 30 0B");  // a count of 48: more than will come
  input.insert(input.end(), pulse.begin(), pulse.end());
  decoder.feed(input);
  CHECK_FALSE(decoder.next());
  CHECK(decoder.in_packet());
  const auto abandoned = decoder.abandon();
  REQUIRE(abandoned);
  CHECK(abandoned->kind == PacketDecoder::EventKind::Incomplete);
  CHECK(abandoned->position == 0);
  const auto next = decoder.next();
  REQUIRE(next);
  CHECK(describe(*next) == "packet 00");
  CHECK_FALSE(decoder.in_packet());
  CHECK(decoder.stats().incomplete == 1);
  CHECK(decoder.stats().discarded_bytes == 4);
  // A header cut short is no packet: nothing to report, the byte is dropped.
  decoder.feed(hex("FA"));
  CHECK_FALSE(decoder.next());
  CHECK(decoder.in_packet());
  CHECK_FALSE(decoder.abandon());
  CHECK_FALSE(decoder.in_packet());
  CHECK(decoder.stats().incomplete == 1);
}

TEST_CASE("the decoder tells each event's place in the stream, across feeds and resets") {
  PacketDecoder decoder;
  decoder.feed(hex("00 00"));
  decoder.feed(encode_packet(command::kPulse));
  auto event = decoder.next();
  REQUIRE(event);
  CHECK(event->position == 2);
  decoder.feed(hex("FA FB"));
  CHECK_FALSE(decoder.next());
  decoder.reset();
  CHECK_FALSE(decoder.in_packet());
  decoder.feed(encode_packet(command::kOpen));
  event = decoder.next();
  REQUIRE(event);
  CHECK(event->position == 10);
}
