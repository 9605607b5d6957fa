#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flockbridge/protocol/flockbot/commands.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

namespace {

Bytes payload(std::string_view code, std::initializer_list<int> data = {}) {
  Bytes p(code.begin(), code.end());
  for (int d : data) p.push_back(static_cast<Byte>(d));
  return p;
}

std::string refusal(const Bytes& p) {
  auto checked = check_command(p);
  return checked ? std::string() : checked.error().message;
}

}  // namespace

TEST_CASE("every command's length: exact, one short and one long") {
  for (const CommandSpec& spec : command_table()) {
    CAPTURE(spec.code);
    CAPTURE(spec.name);
    Bytes exact(spec.code.begin(), spec.code.end());
    for (const FieldSpec& field : spec.fields()) {
      if (field.type == FieldType::Text) {
        exact.push_back(0);
      } else if (field.type == FieldType::U16) {
        append_u16le(exact, static_cast<std::uint16_t>(field.min));
      } else {
        exact.push_back(static_cast<Byte>(field.min));
      }
    }
    CHECK(exact.size() == spec.fixed_length());
    auto accepted = check_command(exact);
    REQUIRE(accepted);
    CHECK(accepted.value()->code == spec.code);
    Bytes longer = exact;
    longer.push_back(1);
    if (!spec.has_text() && spec.code != "DMD") CHECK_FALSE(check_command(longer));
    if (exact.size() > 3 && !spec.has_text()) {
      Bytes shorter(exact.begin(), exact.end() - 1);
      if (spec.code != "DMD" || shorter.size() < 5) CHECK_FALSE(check_command(shorter));
    }
  }
}

TEST_CASE("every numeric field's range: both ends accepted, one beyond refused") {
  for (const CommandSpec& spec : command_table()) {
    if (!spec.json_form) continue;
    std::size_t index = 0;
    for (const FieldSpec& field : spec.fields()) {
      if (field.type != FieldType::Text) {
        CAPTURE(spec.name);
        CAPTURE(field.name);
        std::vector<long long> values(spec.fields().size());
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = spec.fields()[i].min;
        values[index] = field.min;
        CHECK(build_command(spec, values));
        values[index] = field.max;
        auto at_max = build_command(spec, values);
        REQUIRE(at_max);
        CHECK(check_command(at_max.value()));  // what JSON builds, the binary check accepts
        values[index] = field.max + 1;
        CHECK_FALSE(build_command(spec, values));
        values[index] = field.min - 1;
        CHECK_FALSE(build_command(spec, values));
      }
      ++index;
    }
  }
}

TEST_CASE("binary payloads: ranges are checked on the bytes as sent") {
  CHECK(refusal(payload("DMS", {0x0A})).empty());
  CHECK(refusal(payload("DMS", {0xBD})).empty());  // -67
  CHECK(refusal(payload("DMS", {0x9C})).empty());  // -100
  CHECK(refusal(payload("DMS", {0x9B})) == "move: speed must be from -100 to 100, got -101");
  CHECK(refusal(payload("DMS", {0x65})) == "move: speed must be from -100 to 100, got 101");
  CHECK(refusal(payload("DGS", {31})) == "claw_set: pos must be from 0 to 30, got 31");
  CHECK(refusal(payload("DCS", {101})) == "camera_set: pos must be from 0 to 100, got 101");
  CHECK(refusal(payload("DLU", {0, 5})) == "lcd_cursor: row must be from 1 to 2, got 0");
  CHECK(refusal(payload("DLU", {2, 17})) == "lcd_cursor: col must be from 1 to 16, got 17");
  CHECK(refusal(payload("DRA", {50, 129, 0, 0})) == "arc: dist must be from 0 to 128, got 129");
  CHECK(refusal(payload("DRD", {50, 0x68, 0x01})) == "rotate_degrees: deg must be from 0 to 359, got 360");
  CHECK(refusal(payload("DRD", {50, 0x67, 0x01})).empty());  // 359, little-endian
  CHECK(refusal(payload("DRA", {101, 10, 0, 0})) == "arc: speed must be from 0 to 100, got 101");
}

TEST_CASE("move to distance: the one-byte form and the 2014 client's two-byte form") {
  CHECK(refusal(payload("DMD", {20, 255})).empty());
  CHECK(refusal(payload("DMD", {20, 0x2C, 0x01})).empty());  // 300 cm
  CHECK(refusal(payload("DMD", {20})) == "move_distance (DMD) is 5 or 6 bytes long, got 4");
  CHECK(find_command("move_distance")->fixed_length() == 5);
}

TEST_CASE("LCD text: printable, NUL-terminated, at most 16 characters") {
  auto text = [](std::string_view t, bool nul = true) {
    Bytes p = payload("DLS");
    p.insert(p.end(), t.begin(), t.end());
    if (nul) p.push_back(0);
    return p;
  };
  CHECK(refusal(text("Hello, Flockbot!")).empty());
  CHECK(refusal(text("")).empty());
  CHECK(refusal(text("Hello", false)) == "lcd_write: text must end with a NUL byte (0x00)");
  CHECK(refusal(text("Hello, Flockbot!!")) == "lcd_write: text is 17 characters; the display shows at most 16");
  CHECK(refusal(text("bell\a")) == "lcd_write: text may hold printable ASCII only; byte 4 is 0x07");
  Bytes two_nuls = text("ab");
  two_nuls.insert(two_nuls.begin() + 4, 0);
  CHECK_FALSE(check_command(two_nuls));
  auto built = build_command(*find_command("lcd_write"), {}, "Hi");
  REQUIRE(built);
  CHECK(built.value() == Bytes{'D', 'L', 'S', 'H', 'i', 0});
}

TEST_CASE("what clients may not send") {
  CHECK(refusal({}) == "empty command");
  CHECK(refusal(payload("DM")).find("too short") != std::string::npos);
  CHECK(refusal(payload("DXY")) == "unknown command 'DXY'");
  CHECK(refusal(Bytes{0x01, 0x02, 0x03}) == "unknown command '01 02 03'");
  CHECK(refusal(payload("CFG", {0, 0xDC, 5, 0xDC, 5, 0, 1, 0, 0})).find("CFG is sent by the bridge") == 0);
  CHECK(refusal(payload("ACK")).find("belongs to the serial link") != std::string::npos);
  CHECK(refusal(payload("NAK")).find("belongs to the serial link") != std::string::npos);
  CHECK(refusal(payload("EMG")).empty());
  CHECK(is_emergency(payload("EMG")));
  CHECK_FALSE(is_emergency(payload("DST")));
}

TEST_CASE("JSON names are unique and motion commands are marked") {
  for (const CommandSpec& spec : command_table()) {
    if (!spec.json_form) continue;
    CHECK(find_command(spec.name) == &spec);
  }
  CHECK(find_command("move")->motion);
  CHECK(find_command("arc")->motion);
  CHECK_FALSE(find_command("stop")->motion);
  CHECK_FALSE(find_command("claw_open")->motion);
  CHECK(find_command("no_such_command") == nullptr);
}

TEST_CASE("which commands set the robot moving, and which stop it") {
  const auto moving = [](std::initializer_list<int> bytes) {
    Bytes p;
    for (int b : bytes) p.push_back(static_cast<Byte>(b));
    auto spec = check_command(p);
    REQUIRE(spec);
    return sets_robot_moving(*spec.value(), p);
  };
  CHECK(moving({'D', 'M', 'S', 10}));
  CHECK_FALSE(moving({'D', 'M', 'S', 0}));
  CHECK(moving({'D', 'M', 'W', 0, 0xF6}));
  CHECK_FALSE(moving({'D', 'M', 'W', 0, 0}));
  CHECK(moving({'D', 'R', 'D', 20, 90, 0}));
  CHECK_FALSE(moving({'D', 'G', 'O'}));
  CHECK_FALSE(moving({'D', 'S', 'T'}));
  CHECK(is_stop(as_bytes("DST")));
  CHECK(is_stop(as_bytes("EMG")));
  CHECK_FALSE(is_stop(as_bytes("DMS\x00")));
}
