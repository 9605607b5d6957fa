#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "support/chunking.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

namespace {

struct Seen {
  FrameDecoder::EventKind kind;
  Bytes payload;
  friend bool operator==(const Seen&, const Seen&) = default;
};

std::string show(const std::vector<Seen>& events) {
  std::string text;
  for (const Seen& e : events) {
    switch (e.kind) {
      case FrameDecoder::EventKind::Frame:
        text += "frame[";
        break;
      case FrameDecoder::EventKind::BadChecksum:
        text += "badsum[";
        break;
      case FrameDecoder::EventKind::BadLength:
        text += "badlen[";
        break;
      case FrameDecoder::EventKind::Incomplete:
        text += "incomplete[";
        break;
    }
    text += to_hex(e.payload) + "] ";
  }
  return text;
}

/// Feeds `input` cut as `split` says, collecting every event.
std::vector<Seen> feed_all(FrameDecoder& decoder, const Bytes& input, const flockbridge::testing::Split& split) {
  std::vector<Seen> events;
  for (auto piece : split.cut(input)) {
    decoder.feed(piece);
    while (auto event = decoder.next())
      events.push_back({event->kind, Bytes(event->payload.begin(), event->payload.end())});
  }
  return events;
}

std::vector<Seen> decode(const Bytes& input, const flockbridge::testing::Split& split,
                         FrameDecoderStats* stats = nullptr) {
  FrameDecoder decoder;
  auto events = feed_all(decoder, input, split);
  if (stats != nullptr) *stats = decoder.stats();
  return events;
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const Bytes& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

Bytes frame(std::string_view payload) {
  return encode_frame(as_bytes(payload));
}
Bytes bytes(std::string_view text) {
  return Bytes(text.begin(), text.end());
}
Seen good(std::string_view payload) {
  return {FrameDecoder::EventKind::Frame, bytes(payload)};
}
Seen good(const Bytes& payload) {
  return {FrameDecoder::EventKind::Frame, payload};
}

}  // namespace

TEST_CASE("the checksum test vector of the protocol decisions") {
  const Bytes payload{0x44, 0x4D, 0x53, 0x0A};
  CHECK(frame_checksum(payload) == 0x54);
  CHECK(encode_frame(payload) == Bytes{0xBD, 0xBD, 0xBD, 0x04, 0x44, 0x4D, 0x53, 0x0A, 0x54});
}

TEST_CASE("the source's worked example, with its 0x53 typo, is rejected and NAKable") {
  const Bytes typo{0xBD, 0xBD, 0xBD, 0x04, 0x44, 0x4D, 0x53, 0x0A, 0x53};
  FrameDecoder decoder;
  decoder.feed(typo);
  const auto event = decoder.next();
  REQUIRE(event);
  CHECK(event->kind == FrameDecoder::EventKind::BadChecksum);
  CHECK(decoder.stats().bad_checksum == 1);
}

TEST_CASE("frame decoder table: every case whole, byte by byte and at random splits") {
  const Bytes speed_minus_67{'D', 'M', 'S', 0xBD};  // 0xBD inside a payload
  const Bytes bd_sensor = [] {
    Bytes p{'S', 'E', 'N'};
    p.insert(p.end(), 24, 0xBD);
    p.insert(p.end(), {0xBD, 0xBD, 0, 0});
    return p;
  }();
  Bytes corrupted_len = frame("DGO");
  corrupted_len[3] = 0x0C;  // LEN says 12: swallows the ACK frame behind it
  const Bytes corrupted_then_good = cat({corrupted_len, frame("ACK"), frame("DMC")});
  Bytes bad_sum = frame("DGC");
  bad_sum.back() ^= 0x01;

  struct Row {
    std::string shows;
    Bytes input;
    std::vector<Seen> events;
  };
  const std::vector<Row> table{
      {"one frame", frame("ACK"), {good("ACK")}},
      {"0xBD inside a payload (speed -67)", encode_frame(speed_minus_67), {good(speed_minus_67)}},
      {"a payload full of 0xBD", encode_frame(bd_sensor), {good(bd_sensor)}},
      {"garbage between frames",
       cat({bytes("xx"), frame("ACK"), Bytes{0x00, 0xBD, 0x13, 0xBD, 0xBD, 0x7F}, frame("DMC")}),
       {good("ACK"), good("DMC")}},
      {"a corrupted LEN followed by good frames",
       corrupted_then_good,
       {{FrameDecoder::EventKind::BadChecksum,
         Bytes(corrupted_then_good.begin() + 4, corrupted_then_good.begin() + 16)},
        good("ACK"),
        good("DMC")}},
      {"LEN 0 is impossible",
       cat({Bytes{0xBD, 0xBD, 0xBD, 0x00}, frame("ACK")}),
       {{FrameDecoder::EventKind::BadLength, {}}, good("ACK")}},
      {"LEN above the maximum is corruption",
       cat({Bytes{0xBD, 0xBD, 0xBD, 0xC8, 1, 2, 3}, frame("EMG")}),
       {{FrameDecoder::EventKind::BadLength, {}}, good("EMG")}},
      {"a bad checksum, then a good frame",
       cat({bad_sum, frame("ACK")}),
       {{FrameDecoder::EventKind::BadChecksum, bytes("DGC")}, good("ACK")}},
      {"four sync bytes: the last three are the header",
       cat({Bytes{0xBD}, frame("NAK")}),
       {{FrameDecoder::EventKind::BadLength, {}}, good("NAK")}},
      {"a frame cut short at the end waits", Bytes{0xBD, 0xBD, 0xBD, 0x03, 'A'}, {}},
  };
  for (const Row& row : table) {
    for (const auto& split : flockbridge::testing::splits()) {
      CAPTURE(row.shows);
      CAPTURE(split.name);
      const auto events = decode(row.input, split);
      CHECK_MESSAGE(events == row.events, show(events));
    }
  }
}

TEST_CASE("a good frame hidden in a rejected one's LEN is found again") {
  // The corrupted LEN (0x0C) claims the whole of the next frame; the hunt
  // must restart one byte after the rejected header, not after its LEN.
  Bytes first = frame("DGO");
  first[3] = 0x0C;
  const Bytes input = cat({first, frame("DMC"), frame("ACK")});
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    FrameDecoderStats stats;
    const auto events = decode(input, split, &stats);
    REQUIRE(events.size() >= 2);
    CHECK(events[events.size() - 2] == good("DMC"));
    CHECK(events.back() == good("ACK"));
    CHECK(stats.frames == 2);
  }
}

TEST_CASE("every byte of garbage is counted once, and errors are not sticky") {
  FrameDecoder decoder;
  decoder.feed(bytes("noise"));
  CHECK_FALSE(decoder.next());
  CHECK(decoder.stats().discarded_bytes == 5);
  for (int i = 0; i < 100; ++i) {
    Bytes broken = frame("ACK");
    broken.back() ^= 0xFF;
    decoder.feed(broken);
    while (decoder.next()) {
    }
  }
  decoder.feed(frame("DMC"));
  const auto event = decoder.next();
  REQUIRE(event);
  CHECK(event->kind == FrameDecoder::EventKind::Frame);
  CHECK(decoder.stats().bad_checksum == 100);
  CHECK(decoder.stats().frames == 1);
}

TEST_CASE("the maximum payload is configurable and bounded by the LEN byte") {
  FrameDecoder small(4);
  small.feed(frame("SENSOR"));
  auto event = small.next();
  REQUIRE(event);
  CHECK(event->kind == FrameDecoder::EventKind::BadLength);
  CHECK(FrameDecoder(1000).max_payload() == 255);
  CHECK(FrameDecoder(0).max_payload() == 1);
}

TEST_CASE("events say where in the stream their frame began") {
  FrameDecoder decoder;
  const Bytes first = frame("ACK");
  decoder.feed(bytes("xyz"));
  decoder.feed(first);
  auto event = decoder.next();
  REQUIRE(event);
  CHECK(event->position == 3);
  decoder.feed(frame("DMC"));
  event = decoder.next();
  REQUIRE(event);
  CHECK(event->position == 3 + first.size());
}

namespace {

/// A frame whose LEN byte was corrupted to `len` (the rest as sent).
Bytes with_len(std::string_view payload, Byte len) {
  Bytes out = frame(payload);
  out[kSyncLength] = len;
  return out;
}

std::optional<std::size_t> test_lengths(ByteView type) noexcept {
  const std::string_view tag(reinterpret_cast<const char*>(type.data()), type.size());
  if (tag == "ACK" || tag == "DMC") return 3;
  return std::nullopt;
}

}  // namespace

TEST_CASE("a known type whose LEN is not its table length is rejected once its type bytes are in") {
  const Bytes input = cat({with_len("ACK", 60), frame("DMC"), frame("ACK")});
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    FrameDecoder decoder(kDefaultMaxPayload, &test_lengths);
    const auto events = feed_all(decoder, input, split);
    CHECK(show(events) == show({{FrameDecoder::EventKind::BadLength, {}}, good("DMC"), good("ACK")}));
    CHECK(decoder.stats().bad_length == 1);
    CHECK(decoder.state() == FrameDecoder::State::Sync1);
  }
  // Without the table the same bytes hold the good frames: 60 bytes are awaited.
  FrameDecoderStats stats;
  const auto events = decode(input, flockbridge::testing::splits().front(), &stats);
  CHECK(events.empty());
}

TEST_CASE("a frame abandoned for want of bytes gives back the good frames buffered behind it") {
  const Bytes input = cat({with_len("XYZ12", 60), frame("DMC"), frame("XYZ9")});
  for (const auto& split : flockbridge::testing::splits()) {
    CAPTURE(split.name);
    FrameDecoder decoder(kDefaultMaxPayload, &test_lengths);
    std::vector<Seen> events = feed_all(decoder, input, split);
    CHECK(events.empty());
    REQUIRE(decoder.in_frame());
    const auto abandoned = decoder.abandon();
    REQUIRE(abandoned);
    CHECK(abandoned->kind == FrameDecoder::EventKind::Incomplete);
    CHECK(abandoned->position == 0);
    while (auto event = decoder.next()) {
      events.push_back({event->kind, Bytes(event->payload.begin(), event->payload.end())});
    }
    CHECK(show(events) == show({good("DMC"), good("XYZ9")}));
    CHECK(decoder.stats().incomplete == 1);
    CHECK_FALSE(decoder.in_frame());
  }
  // Nothing under way: nothing to abandon.
  FrameDecoder idle;
  CHECK_FALSE(idle.abandon());
}
