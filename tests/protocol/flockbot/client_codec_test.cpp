#include <doctest/doctest.h>

#include <string>

#include "flockbridge/protocol/flockbot/client_codec.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

namespace {

Bytes b(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<Byte>(v));
  return out;
}

Bytes command_of(const Result<PortRequest>& request) {
  REQUIRE(request);
  REQUIRE(std::holds_alternative<SendCommand>(request.value()));
  return std::get<SendCommand>(request.value()).payload;
}

}  // namespace

TEST_CASE("port 2005: the message forms of both public sources") {
  CHECK(command_of(parse_binary_request(as_bytes("DGO"))) == b({'D', 'G', 'O'}));
  CHECK(command_of(parse_binary_request(b({'R', 'T', 4, 'D', 'M', 'S', 0xF6}))) == b({'D', 'M', 'S', 0xF6}));
  CHECK(command_of(parse_binary_request(as_bytes("ST"))) == b({'D', 'S', 'T'}));
  CHECK(command_of(parse_binary_request(b({'D', 'M', 'D', 20, 0x2C, 0x01}))) == b({'D', 'M', 'D', 20, 0x2C, 0x01}));

  auto subscribe = parse_binary_request(b({'S', 'S', 0x64, 0, 0, 0}));
  REQUIRE(subscribe);
  CHECK(std::get<Subscribe>(subscribe.value()).interval_ms == 100);
  CHECK(std::holds_alternative<Unsubscribe>(parse_binary_request(as_bytes("SF")).value()));
  CHECK(std::holds_alternative<Unsubscribe>(parse_binary_request(b({'S', 'F', 0, 0, 0, 0})).value()));
}

TEST_CASE("port 2005: refusals say why") {
  CHECK(parse_binary_request({}).error().message == "empty message (length byte 0)");
  CHECK(parse_binary_request(b({'R', 'T', 5, 'D', 'M', 'S', 1})).error().message ==
        "RT message says its payload is 5 bytes but carries 4");
  CHECK(parse_binary_request(as_bytes("RT")).error().message == "RT message without an inner length byte");
  CHECK(parse_binary_request(b({'R', 'T', 4, 'D', 'M', 'S', 0x70})).error().message ==
        "move: speed must be from -100 to 100, got 112");
  CHECK(parse_binary_request(b({'S', 'S', 1})).error().message.find("4-byte interval") != std::string::npos);
  CHECK(parse_binary_request(b({'S', 'S', 0, 0, 0, 0x80})).error().message.find("negative") != std::string::npos);
  CHECK(parse_binary_request(as_bytes("STOP")).error().message == "ST (stop) is 2 bytes");
  CHECK(parse_binary_request(as_bytes("ello")).error().message == "unknown command 'ell'");
}

TEST_CASE("port 2005: what the bridge sends") {
  SensorReading r;
  r.battery = 777;
  r.odometer_left = -67;
  const Bytes sen = encode_sensor_payload(r);
  const Bytes sp = encode_binary_sensor(sen);
  REQUIRE(sp.size() == 29);
  CHECK(sp[0] == 0x1C);
  CHECK(sp[1] == 'S');
  CHECK(sp[2] == 'P');
  CHECK(Bytes(sp.begin() + 3, sp.end()) == Bytes(sen.begin() + 3, sen.end()));
  // The length byte and the 2-byte tag take the place of the 3-byte tag, so
  // every value sits at the same offset as in the SEN payload.
  CHECK(read_i16le(sp, 17) == -67);
  CHECK(read_u16le(sp, 3) == 777);

  CHECK(encode_binary_packet(as_bytes("DMC")) == b({3, 'D', 'M', 'C'}));
  CHECK(encode_binary_error("no") == b({5, 'E', 'R', 'R', 'n', 'o'}));
  CHECK(encode_binary_link("up") == b({5, 'L', 'N', 'K', 'u', 'p'}));
  CHECK(encode_binary_dropped(258) == b({7, 'D', 'R', 'P', 2, 1, 0, 0}));
  const Bytes long_error = encode_binary_error(std::string(500, 'x'));
  CHECK(long_error.size() == 1 + 3 + kMaxErrorText);
  CHECK(long_error[0] == 127);
}

TEST_CASE("port 2005: an ERR text too long for its length byte ends after a whole word, never inside one") {
  CHECK(fit_text("short enough", 20) == "short enough");
  CHECK(fit_text("the robot's emergency stop is latched", 20) == "the robot's...");
  CHECK(fit_text("not sent: only a driver may, with the PIN", 19) == "not sent: only a...");
  CHECK(fit_text("a driver; the teacher", 15) == "a driver...");  // no "driver;..."
  const std::string words =
      "not sent: the robot's emergency stop is latched (by client 4, 10.0.3.17:51234); the teacher or a driver may "
      "clear it with {\"cmd\":\"clear_emergency\"} or on the dashboard";
  const std::string fitted = fit_text(words, kMaxErrorText);
  CHECK(fitted.size() <= kMaxErrorText);
  CHECK(fitted.ends_with("..."));
  const std::string kept = fitted.substr(0, fitted.size() - 3);
  CHECK(words.starts_with(kept));
  CHECK(words[kept.size()] == ' ');  // the next character of the text began a new word
  CHECK(encode_binary_error(words)[0] <= 127);
}

TEST_CASE("port 2005: EXT asks for the bridge's own messages, and the answer says which version is in force") {
  auto on = parse_binary_request(b({'E', 'X', 'T', 1}));
  REQUIRE(on);
  CHECK(std::get<SetExtensions>(on.value()).version == 1);
  auto off = parse_binary_request(b({'E', 'X', 'T', 0}));
  REQUIRE(off);
  CHECK(std::get<SetExtensions>(off.value()).version == 0);
  CHECK(encode_binary_extensions(kExtensionsVersion) == b({4, 'E', 'X', 'T', 1}));
  // Anything else beginning with E is a command for the Uno, checked as such.
  CHECK(parse_binary_request(b({'E', 'X', 'T'})).error().message == "unknown command 'EXT'");
  CHECK(std::holds_alternative<SendCommand>(parse_binary_request(as_bytes("EMG")).value()));
}

TEST_CASE("port 2005: a degree rotation of -359 to -1 degrees turns the other way, in the Uno's documented form") {
  struct Row {
    const char* what;
    Bytes in;
    Bytes out;
  };
  const std::vector<Row> table{
      {"-90 at speed 30: speed -30, 90 degrees", b({'D', 'R', 'D', 30, 0xA6, 0xFF}), b({'D', 'R', 'D', 0xE2, 90, 0})},
      {"-359 at speed -100", b({'D', 'R', 'D', 0x9C, 0x99, 0xFE}), b({'D', 'R', 'D', 100, 0x67, 0x01})},
      {"-1 at speed 0", b({'D', 'R', 'D', 0, 0xFF, 0xFF}), b({'D', 'R', 'D', 0, 1, 0})},
      {"90 is forwarded as sent", b({'D', 'R', 'D', 30, 90, 0}), b({'D', 'R', 'D', 30, 90, 0})},
  };
  for (const auto& row : table) {
    CAPTURE(row.what);
    CHECK(command_of(parse_binary_request(row.in)) == row.out);
    Bytes wrapped = b({'R', 'T', 6});
    wrapped.insert(wrapped.end(), row.in.begin(), row.in.end());
    CHECK(command_of(parse_binary_request(wrapped)) == row.out);
  }
  CHECK(parse_binary_request(b({'D', 'R', 'D', 30, 0x98, 0xFE})).error().message ==
        "rotate_degrees: deg must be from 0 to 359, got 65176 (port 2005 also takes -359 to -1: the other way round)");
}

TEST_CASE("port 2005: what a client written for the original robots can parse") {
  SensorReading r;
  struct Row {
    const char* what;
    Bytes message;
    bool parses;
  };
  const std::vector<Row> table{
      {"SP, 28 bytes", encode_binary_sensor(encode_sensor_payload(r)), true},
      {"ACK", encode_binary_packet(as_bytes("ACK")), true},
      {"DMC", encode_binary_packet(as_bytes("DMC")), true},
      {"EMG", encode_binary_packet(as_bytes("EMG")), false},
      {"an unknown Uno packet", encode_binary_packet(as_bytes("XYZ12")), false},
      {"ERR", encode_binary_error("no"), false},
      {"LNK", encode_binary_link("up"), false},
      {"DRP", encode_binary_dropped(1), false},
      {"EXT", encode_binary_extensions(1), false},
      {"a DM packet of another length", encode_binary_packet(as_bytes("DMCX")), false},
      {"a length byte that does not match", b({4, 'A', 'C', 'K'}), false},
      {"empty", {}, false},
  };
  for (const auto& row : table) {
    CAPTURE(row.what);
    CHECK(legacy_client_parses(row.message) == row.parses);
  }
}
