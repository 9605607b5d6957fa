#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flockbridge/protocol/message_decoder.hpp"
#include "support/chunking.hpp"

using namespace flockbridge::protocol;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> decode_all(MessageDecoder::Framing framing, std::string_view input,
                                    const flockbridge::testing::Split& split, std::size_t max = 255) {
  MessageDecoder decoder(framing, max);
  std::vector<std::string> out;
  const SteadyTime t{};
  for (auto piece : split.cut(as_bytes(input))) {
    decoder.feed(piece, t);
    while (auto event = decoder.next()) {
      out.push_back(event->kind == MessageDecoder::EventKind::TooLong
                        ? "<too long>"
                        : std::string(event->body.begin(), event->body.end()));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("length-prefixed messages, however the stream was cut") {
  const std::string input = std::string(
                                "\x03"
                                "DGO"
                                "\x02"
                                "SF"
                                "\x00",
                                8) +
                            std::string(
                                "\x07"
                                "RT\x04"
                                "DMS\x0A",
                                8);
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    CHECK(decode_all(MessageDecoder::Framing::LengthPrefixed, input, split) ==
          std::vector<std::string>{"DGO", "SF", "",
                                   std::string("RT\x04"
                                               "DMS\x0A",
                                               7)});
  }
}

TEST_CASE("lines: CRLF or LF, over-long lines dropped up to their end") {
  const std::string input = "{\"cmd\":\"stop\"}\r\n\n" + std::string(40, 'x') + "\n{\"a\":1}\n";
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    CHECK(decode_all(MessageDecoder::Framing::Lines, input, split, 16) ==
          std::vector<std::string>{"{\"cmd\":\"stop\"}", "", "<too long>", "{\"a\":1}"});
  }
}

TEST_CASE("a message left incomplete is discarded after the timeout, and only then") {
  MessageDecoder decoder(MessageDecoder::Framing::LengthPrefixed, 255);
  const SteadyTime t0{};
  decoder.feed(as_bytes("hello"), t0);  // the 2014 client's test: length 104, 4 bytes
  CHECK_FALSE(decoder.next());
  REQUIRE(decoder.partial_since());
  CHECK_FALSE(decoder.expire(t0 + 1999ms, 2000ms));
  CHECK(decoder.expire(t0 + 2000ms, 2000ms));
  CHECK_FALSE(decoder.partial_since());
  decoder.feed(as_bytes("\x03"
                        "DGO"),
               t0 + 2100ms);
  const auto event = decoder.next();
  REQUIRE(event);
  CHECK(std::string(event->body.begin(), event->body.end()) == "DGO");
}

TEST_CASE("the timeout counts from the first byte of the pending message") {
  MessageDecoder decoder(MessageDecoder::Framing::LengthPrefixed, 255);
  const SteadyTime t0{};
  decoder.feed(as_bytes("\x03"
                        "DG"),
               t0);
  CHECK_FALSE(decoder.next());
  // The message completes 1.5 s later, and the next one starts in the same piece.
  decoder.feed(as_bytes("O\x03"
                        "D"),
               t0 + 1500ms);
  REQUIRE(decoder.next());
  CHECK_FALSE(decoder.next());
  CHECK(*decoder.partial_since() == t0 + 1500ms);
  CHECK_FALSE(decoder.expire(t0 + 3000ms, 2000ms));
  CHECK(decoder.expire(t0 + 3500ms, 2000ms));
}
