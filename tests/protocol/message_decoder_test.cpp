#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flockbridge/protocol/message_decoder.hpp"
#include "support/chunking.hpp"

using namespace flockbridge::protocol;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> decode_all(MessageDecoder::Framing framing, std::string_view input,
                                    const flockbridge::testing::Split& split, std::size_t max = 255,
                                    bool hello_probe = false) {
  MessageDecoder decoder(framing, max, hello_probe);
  std::vector<std::string> out;
  const SteadyTime t{};
  for (auto piece : split.cut(as_bytes(input))) {
    decoder.feed(piece, t);
    while (auto event = decoder.next()) {
      switch (event->kind) {
        case MessageDecoder::EventKind::TooLong:
          out.emplace_back("<too long>");
          break;
        case MessageDecoder::EventKind::Hello:
          out.emplace_back("<hello>");
          break;
        case MessageDecoder::EventKind::Message:
          out.emplace_back(event->body.begin(), event->body.end());
          break;
      }
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

TEST_CASE("the 2014 client's hello: five bytes with no length, at the start only, and what follows is read as usual") {
  struct Row {
    const char* what;
    std::string input;
    std::vector<std::string> events;
  };
  const std::vector<Row> table{
      {"hello, then a subscription and a command right behind it",
       std::string("hello\x06SS\x00\x00\x00\x00\x03"
                   "DGO",
                   16),
       {"<hello>", std::string("SS\x00\x00\x00\x00", 6), "DGO"}},
      {"hello alone", "hello", {"<hello>"}},
      {"a second hello is a length byte of 104 like any other", "hellohello", {"<hello>"}},
      {"a first message that merely begins with 'h' is not taken for hello",
       std::string("\x03"
                   "DGO",
                   4),
       {"DGO"}},
      {"'hel' and then something else: a length of 104", "helXo", {}},
  };
  for (const auto& row : table) {
    CAPTURE(row.what);
    for (const auto& split : flockbridge::testing::splits()) {
      CAPTURE(split.name);
      CHECK(decode_all(MessageDecoder::Framing::LengthPrefixed, row.input, split, 255, true) == row.events);
    }
  }
  // Without hello_probe (JSON lines, or the option off) nothing is special.
  for (const auto& split : flockbridge::testing::splits()) {
    CHECK(decode_all(MessageDecoder::Framing::LengthPrefixed, "hello", split).empty());
  }
}

TEST_CASE("a hello left incomplete expires like any partial message") {
  MessageDecoder decoder(MessageDecoder::Framing::LengthPrefixed, 255, true);
  const SteadyTime t0{};
  decoder.feed(as_bytes("hel"), t0);
  CHECK_FALSE(decoder.next());
  REQUIRE(decoder.partial_since());
  CHECK(decoder.expire(t0 + 2s, 2s));
  decoder.feed(as_bytes(std::string("\x02"
                                    "SF",
                                    3)),
               t0 + 3s);
  const auto event = decoder.next();
  REQUIRE(event);
  CHECK(event->kind == MessageDecoder::EventKind::Message);
}
