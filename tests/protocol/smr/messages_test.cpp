// SMRD's message framing and control messages, byte for byte (seed 000,
// smr.h), and the decoder whole, byte by byte and at random splits.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flockbridge/protocol/smr/messages.hpp"
#include "support/chunking.hpp"
#include "support/hex.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;
using flockbridge::testing::hex;

namespace {

/// "type body-hex" for every message of `input` cut by `split`.
std::vector<std::string> decode(const Bytes& input, const flockbridge::testing::Split& split,
                                DecoderStats* stats = nullptr) {
  MessageDecoder decoder;
  std::vector<std::string> seen;
  for (auto piece : split.cut(input)) {
    decoder.feed(piece);
    while (auto message = decoder.next()) {
      seen.push_back(std::to_string(message->type) + (message->body.empty() ? "" : " " + to_hex(message->body)));
    }
  }
  if (stats != nullptr) *stats = decoder.stats();
  return seen;
}

}  // namespace

TEST_CASE("SMRD's control messages, byte for byte") {
  CHECK(encode_ready() == hex("E1 02"));
  CHECK(encode_period_end() == hex("E1 01"));
  // START: subcommand 0, the tick and the timestamp, little-endian (as SMRD
  // wrote them on x86 and clients read them).
  CHECK(encode_period_start(0x01020304, 0xA0B0C0D0) == hex("E9 00 04 03 02 01 D0 C0 B0 A0"));
  CHECK(encode_period_start(1, 0) == hex("E9 00 01 00 00 00 00 00 00 00"));
}

TEST_CASE("a START is read back, and nothing else passes for one") {
  const Bytes start = encode_period_start(123456, 0xFFFFFFFF);
  CHECK(read_period_start(ByteView(start).subspan(1)) == PeriodStart{123456, 0xFFFFFFFF});
  CHECK_FALSE(read_period_start(hex("01")));                          // END
  CHECK_FALSE(read_period_start(hex("00 01 00 00 00 00 00 00")));     // one byte short
  CHECK_FALSE(read_period_start(hex("02 01 00 00 00 00 00 00 00")));  // another subcommand
}

TEST_CASE("the first byte is the type in its upper 3 bits and the count in its lower 5") {
  // The seed's example: an RS485 message of four bytes.
  CHECK(encode_message(MessageType::Bus, hex("10 20 30 40")) == hex("04 10 20 30 40"));
  CHECK(encode_message(MessageType::LineSerial, hex("73")) == hex("21 73"));
  CHECK(encode_message(MessageType::Simulator, hex("01")) == hex("61 01"));
  CHECK(encode_message(MessageType::Control, {}) == hex("E0"));
  const Bytes longest(31, 0x55);
  CHECK(encode_message(MessageType::Bus, longest).front() == 0x1F);
}

TEST_CASE("a period as a client receives it decodes the same however it is cut") {
  // START, a motor command echoed, the left and right motors, the line
  // sensor, the IR, the power module, an empty bus message, END.
  const Bytes period =
      hex("E9 00 2A 00 00 00 10 27 00 00 "
          "02 11 20 "
          "05 A1 12 34 00 90 "
          "05 A2 FF 00 02 70 "
          "09 17 01 02 03 04 05 06 07 08 "
          "09 88 10 20 30 40 50 60 00 00 "
          "08 19 0F 4C A5 00 02 FF 00 "
          "00 "
          "E1 01");
  const std::vector<std::string> expected{"7 00 2A 00 00 00 10 27 00 00",
                                          "0 11 20",
                                          "0 A1 12 34 00 90",
                                          "0 A2 FF 00 02 70",
                                          "0 17 01 02 03 04 05 06 07 08",
                                          "0 88 10 20 30 40 50 60 00 00",
                                          "0 19 0F 4C A5 00 02 FF 00",
                                          "0",
                                          "7 01"};
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    DecoderStats stats;
    CHECK(decode(period, split, &stats) == expected);
    CHECK(stats.messages == expected.size());
    CHECK(stats.unknown_type == 0);
    CHECK(stats.bytes == period.size());
  }
}

TEST_CASE("types that name nothing are counted, and a message cut short is abandoned") {
  MessageDecoder decoder;
  decoder.feed(hex("41 99 E1 02 C0 A3 01"));  // type 2, READY, type 6 (empty), then 3 bytes promised
  std::vector<std::uint8_t> types;
  while (auto message = decoder.next()) types.push_back(message->type);
  CHECK(types == std::vector<std::uint8_t>{2, 7, 6});
  CHECK(decoder.stats().unknown_type == 2);
  CHECK(decoder.stats().messages == 1);
  CHECK(decoder.in_message());
  decoder.abandon();
  CHECK_FALSE(decoder.in_message());
  CHECK(decoder.stats().incomplete == 1);
  // What comes next starts a new message.
  decoder.feed(hex("E1 01"));
  const auto end = decoder.next();
  REQUIRE(end);
  CHECK(end->type == 7);
  CHECK(to_hex(end->body) == "01");
}

TEST_CASE("messages are described for the log") {
  CHECK(describe(0, hex("A1 12 34")) == "[rs485: a1 12 34]");
  CHECK(describe(7, hex("01")) == "[control: 01]");
  CHECK(describe(0, {}) == "[rs485]");
}
